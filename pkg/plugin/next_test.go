package plugin

import (
	"bytes"
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	cronv1 "github.com/cronjob-controller/cronjob-controller/pkg/apis/batch/v1"
)

func TestNextTimesStartWhereTheControllerSaysTheNextRunIs(t *testing.T) {
	for _, tc := range []struct {
		name string
		cj   *cronv1.CronJob
	}{
		{"hashed, in a zone", newCronJob("report", "H H * * *", func(cj *cronv1.CronJob) { cj.Spec.TimeZone = ptr.To("Asia/Kolkata") })},
		{"local zone", newCronJob("report", "0 9 * * 1-5")},
		{"@every counts from the last run", newCronJob("poll", "@every 90m", func(cj *cronv1.CronJob) {
			cj.Status.LastScheduleTime = &metav1.Time{Time: t0.Add(-50*time.Minute - 7*time.Second)}
		})},
		{"@every counts from creation before its first run", newCronJob("poll", "@every 7m")},
		{"@every counts from a later missed run", newCronJob("poll", "@every 25m", func(cj *cronv1.CronJob) {
			cj.Status.LastScheduleTime = &metav1.Time{Time: t0.Add(-3 * time.Hour)}
			cj.Status.MissedRuns = []cronv1.MissedRuns{
				{Reason: cronv1.MissedDeadlineExceeded, Count: 4, LastTime: metav1.NewTime(t0.Add(-13 * time.Minute))},
				{Reason: cronv1.MissedScheduleChanged, Count: 1, LastTime: metav1.NewTime(t0.Add(-2 * time.Minute))},
			}
		})},
		{"across a daylight saving change", newCronJob("dst", "30 2 * * *", func(cj *cronv1.CronJob) { cj.Spec.TimeZone = ptr.To("America/New_York") })},
		{"several schedules, H among them", newCronJob("union", "", func(cj *cronv1.CronJob) {
			cj.Spec.Schedules = []cronv1.ScheduleEntry{"0 9 * * 1-5", "H 17 * * 5", "0 9 * * *"}
			cj.Spec.TimeZone = ptr.To("Europe/Berlin")
		})},
		{"calendar forms across daylight saving", newCronJob("calendar", "30 2 LW * SUN#2", func(cj *cronv1.CronJob) { cj.Spec.TimeZone = ptr.To("America/New_York") })},
		{"a window that opens later", newCronJob("later", "0 * * * *", func(cj *cronv1.CronJob) {
			cj.Spec.NotBefore = &metav1.Time{Time: time.Date(2028, 1, 1, 0, 30, 0, 0, time.UTC)}
			cj.Spec.NotAfter = &metav1.Time{Time: time.Date(2029, 1, 1, 0, 0, 0, 0, time.UTC)}
		})},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, now := range []time.Time{t0, time.Date(2027, 3, 13, 12, 0, 0, 0, time.UTC)} {
				sched, _, times, err := NextTimes(tc.cj, now, 5)
				if err != nil {
					t.Fatal(err)
				}
				want := decide(tc.cj, now).Status.NextScheduleTime
				if want == nil || len(times) != 5 || !times[0].Equal(want.Time) {
					t.Fatalf("at %v: times %v, the controller's next %v", now, times, want)
				}
				for i := 1; i < len(times); i++ {
					if !times[i].After(times[i-1]) || !sched.Next(times[i-1]).Equal(times[i]) {
						t.Errorf("times %v: %v does not follow %v", times, times[i], times[i-1])
					}
				}
			}
		})
	}
}

func TestNextPrintsTheZoneAndUTC(t *testing.T) {
	cj := newCronJob("report", "H 6 * * *", func(cj *cronv1.CronJob) { cj.Spec.TimeZone = ptr.To("Asia/Kolkata") })
	f := newFakes([]*cronv1.CronJob{cj})
	var out bytes.Buffer
	if err := Next(context.Background(), f.clients(), &out, "report", 3); err != nil {
		t.Fatal(err)
	}
	// H resolves to minute 49 for team-a/report; 06:49 IST is 01:19 UTC,
	// and t0 is 18:34 IST.
	want := `schedule "H 6 * * *" (resolved "49 6 * * *") in Asia/Kolkata
Asia/Kolkata                  UTC
Tue 2026-11-24 06:49:00 IST   2026-11-24T01:19:00Z
Wed 2026-11-25 06:49:00 IST   2026-11-25T01:19:00Z
Thu 2026-11-26 06:49:00 IST   2026-11-26T01:19:00Z
`
	if out.String() != want {
		t.Errorf("printed\n%s\nwant\n%s", out.String(), want)
	}
}

// L, W and # show as the controller reads them: the last weekday of the
// month, the first Monday, in the CronJob's zone.
func TestNextShowsCalendarForms(t *testing.T) {
	cj := newCronJob("close", "0 18 LW * MON#1", func(cj *cronv1.CronJob) { cj.Spec.TimeZone = ptr.To("Europe/Berlin") })
	f := newFakes([]*cronv1.CronJob{cj})
	var out bytes.Buffer
	if err := Next(context.Background(), f.clients(), &out, "close", 5); err != nil {
		t.Fatal(err)
	}
	// Both day fields restricted: either names a day, as in every cron.
	// 31 January 2027 is a Sunday: the last weekday is Friday the 29th.
	want := `schedule "0 18 LW * MON#1" in Europe/Berlin
Europe/Berlin                 UTC
Mon 2026-11-30 18:00:00 CET   2026-11-30T17:00:00Z
Mon 2026-12-07 18:00:00 CET   2026-12-07T17:00:00Z
Thu 2026-12-31 18:00:00 CET   2026-12-31T17:00:00Z
Mon 2027-01-04 18:00:00 CET   2027-01-04T17:00:00Z
Fri 2027-01-29 18:00:00 CET   2027-01-29T17:00:00Z
`
	if out.String() != want {
		t.Errorf("printed\n%s\nwant\n%s", out.String(), want)
	}
}

func TestNextSaysWhatTheTimesDoNotShow(t *testing.T) {
	for _, tc := range []struct {
		name   string
		cj     *cronv1.CronJob
		want   string
		absent string
	}{
		{"suspended", newCronJob("nightly", "0 2 * * *", func(cj *cronv1.CronJob) {
			cj.Spec.TimeZone = ptr.To("UTC")
			cj.Spec.Suspend = ptr.To(true)
		}), "suspended: none of these starts until kubectl cronjob resume nightly", ""},
		{"zone unset", newCronJob("nightly", "0 2 * * *"), `in the controller's local time zone (spec.timeZone is unset); shown in this machine's`, ""},
		{"status disagrees", newCronJob("nightly", "0 2 * * *", func(cj *cronv1.CronJob) {
			cj.Spec.TimeZone = ptr.To("UTC")
			cj.Status.ObservedGeneration = 1
			cj.Status.NextScheduleTime = &metav1.Time{Time: time.Date(2026, 11, 23, 2, 0, 0, 0, time.UTC)}
		}), "status.nextScheduleTime says 2026-11-23T02:00:00Z", ""},
		{"status agrees", newCronJob("nightly", "0 2 * * *", func(cj *cronv1.CronJob) {
			cj.Spec.TimeZone = ptr.To("UTC")
			cj.Status.ObservedGeneration = 1
			cj.Status.NextScheduleTime = &metav1.Time{Time: time.Date(2026, 11, 24, 2, 0, 0, 0, time.UTC)}
		}), "Tue 2026-11-24 02:00:00 UTC   2026-11-24T02:00:00Z", "status.nextScheduleTime"},
		{"status of an older spec", newCronJob("nightly", "0 2 * * *", func(cj *cronv1.CronJob) {
			cj.Spec.TimeZone = ptr.To("UTC")
			cj.Generation = 2
			cj.Status.ObservedGeneration = 1
			cj.Status.NextScheduleTime = &metav1.Time{Time: time.Date(2026, 11, 23, 2, 0, 0, 0, time.UTC)}
		}), "2026-11-24T02:00:00Z", "status.nextScheduleTime"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakes([]*cronv1.CronJob{tc.cj})
			var out bytes.Buffer
			if err := Next(context.Background(), f.clients(), &out, "nightly", 2); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(out.String(), tc.want) {
				t.Errorf("output lacks %q:\n%s", tc.want, out.String())
			}
			if tc.absent != "" && strings.Contains(out.String(), tc.absent) {
				t.Errorf("output has %q:\n%s", tc.absent, out.String())
			}
		})
	}
}

func TestNextRefusesWhatTheControllerRefuses(t *testing.T) {
	for _, tc := range []struct {
		cj   *cronv1.CronJob
		want string
	}{
		{newCronJob("bad", "every day at noon"), `schedule "every day at noon"`},
		{newCronJob("bad", "TZ=UTC 0 * * * *"), "use spec.timeZone instead"},
		{newCronJob("bad", "0 * * * *", func(cj *cronv1.CronJob) { cj.Spec.TimeZone = ptr.To("Mars/Olympus") }), `unknown time zone "Mars/Olympus"`},
		{newCronJob("bad", "0 0 30 2 *"), "never fires"},
	} {
		f := newFakes([]*cronv1.CronJob{tc.cj})
		var out bytes.Buffer
		err := Next(context.Background(), f.clients(), &out, "bad", 5)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("schedule %q: error %v, want one containing %q", tc.cj.Spec.Schedule, err, tc.want)
		}
		if cond := decide(tc.cj, t0).Status.Conditions; len(cond) == 0 || !strings.Contains(err.Error(), cond[0].Message) {
			t.Errorf("schedule %q: error %v does not carry the controller's message %+v", tc.cj.Spec.Schedule, err, cond)
		}
	}
	f := newFakes([]*cronv1.CronJob{newCronJob("ok", "@hourly")})
	if err := Next(context.Background(), f.clients(), &bytes.Buffer{}, "ok", 0); err == nil {
		t.Error("a count of 0 was accepted")
	}
}

func TestNextSaysExpired(t *testing.T) {
	cj := newCronJob("old", "0 * * * *", func(cj *cronv1.CronJob) {
		cj.Spec.NotAfter = &metav1.Time{Time: t0.Add(-time.Hour)}
	})
	f := newFakes([]*cronv1.CronJob{cj})
	var out bytes.Buffer
	if err := Next(context.Background(), f.clients(), &out, "old", 3); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "expired: spec.notAfter") || !strings.Contains(out.String(), "no further runs") {
		t.Errorf("output:\n%s", out.String())
	}
}

// With spec.maxRuns, next shows no more times than runs are left, the
// first the controller's next time; with none left, none, and why.
func TestNextShowsNoMoreTimesThanMaxRunsLeaves(t *testing.T) {
	cj := newCronJob("twice", "0 * * * *", func(cj *cronv1.CronJob) {
		cj.Spec.TimeZone = ptr.To("UTC")
		cj.Spec.MaxRuns = ptr.To[int64](3)
		cj.Status.ScheduledRunCount = 1
		cj.Status.LastScheduleTime = &metav1.Time{Time: t0.Truncate(time.Hour)}
	})
	_, _, times, err := NextTimes(cj, t0, 5)
	if err != nil {
		t.Fatal(err)
	}
	want := decide(cj, t0).Status.NextScheduleTime
	if len(times) != 2 || want == nil || !times[0].Equal(want.Time) {
		t.Errorf("times %v, want 2 from the controller's next %v", times, want)
	}
	cj.Status.ScheduledRunCount = 3
	f := newFakes([]*cronv1.CronJob{cj})
	var out bytes.Buffer
	if err := Next(context.Background(), f.clients(), &out, "twice", 3); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "expired: spec.maxRuns (3) scheduled runs have started") || !strings.Contains(out.String(), "no further runs") {
		t.Errorf("output:\n%s", out.String())
	}
}

func TestNextSaysWhichRunsAPauseHoldsAndWhichIsTheTrial(t *testing.T) {
	policy := func(resumeAfter time.Duration, s cronv1.FailureStreak) func(*cronv1.CronJob) {
		return func(cj *cronv1.CronJob) {
			cj.Spec.TimeZone = ptr.To("UTC")
			cj.Spec.FailurePolicy = &cronv1.FailurePolicy{PauseAfter: 3}
			if resumeAfter > 0 {
				cj.Spec.FailurePolicy.ResumeAfter = &metav1.Duration{Duration: resumeAfter}
			}
			cj.Status.FailureStreak = &s
		}
	}
	pausedAt := &metav1.Time{Time: t0.Add(-30 * time.Second)} // 13:04:00
	at := func(m int) time.Time { return time.Date(2026, 11, 23, 13, m, 0, 0, time.UTC) }
	for _, tc := range []struct {
		name string
		opts []func(*cronv1.CronJob)
		want string
	}{
		{"paused until resumed", []func(*cronv1.CronJob){policy(0, cronv1.FailureStreak{Count: 3, PausedAt: pausedAt, Pauses: 1})},
			`UTC                           UTC
Mon 2026-11-23 13:05:00 UTC   2026-11-23T13:05:00Z   paused
Mon 2026-11-23 13:06:00 UTC   2026-11-23T13:06:00Z   paused
Mon 2026-11-23 13:07:00 UTC   2026-11-23T13:07:00Z   paused
paused after 3 failed runs in a row: none of these starts until kubectl cronjob resume minutely, or a run-now succeeds
`},
		// resumeAt 13:06:00 (2m after the pause): the run due then is the trial.
		{"a trial at resumeAt", []func(*cronv1.CronJob){policy(2*time.Minute, cronv1.FailureStreak{Count: 3, PausedAt: pausedAt, Pauses: 1,
			ResumeAt: &metav1.Time{Time: at(6)}})},
			`UTC                           UTC
Mon 2026-11-23 13:05:00 UTC   2026-11-23T13:05:00Z   paused
Mon 2026-11-23 13:06:00 UTC   2026-11-23T13:06:00Z   trial
Mon 2026-11-23 13:07:00 UTC   2026-11-23T13:07:00Z
paused after 3 failed runs in a row: runs due before 2026-11-23T13:06:00Z do not start (status.missedRuns counts them under Paused); the first due then or later, 2026-11-23T13:06:00Z, is a trial run, and its success ends the pause
`},
		// resumeAt between two due times, and past the times listed.
		{"a trial after the times listed", []func(*cronv1.CronJob){policy(2*time.Minute, cronv1.FailureStreak{Count: 4, PausedAt: pausedAt, Pauses: 2,
			ResumeAt: &metav1.Time{Time: at(9).Add(30 * time.Second)}})},
			`UTC                           UTC
Mon 2026-11-23 13:05:00 UTC   2026-11-23T13:05:00Z   paused
Mon 2026-11-23 13:06:00 UTC   2026-11-23T13:06:00Z   paused
Mon 2026-11-23 13:07:00 UTC   2026-11-23T13:07:00Z   paused
paused after 4 failed runs in a row: runs due before 2026-11-23T13:09:30Z do not start (status.missedRuns counts them under Paused); the first due then or later, 2026-11-23T13:10:00Z, is a trial run, and its success ends the pause
`},
		{"a trial running", []func(*cronv1.CronJob){policy(2*time.Minute, cronv1.FailureStreak{Count: 3, PausedAt: pausedAt, Pauses: 1,
			ResumeAt: &metav1.Time{Time: at(4)}, TrialJob: "minutely-1795439040"})},
			`UTC                           UTC
Mon 2026-11-23 13:05:00 UTC   2026-11-23T13:05:00Z   paused
Mon 2026-11-23 13:06:00 UTC   2026-11-23T13:06:00Z   paused
Mon 2026-11-23 13:07:00 UTC   2026-11-23T13:07:00Z   paused
paused after 3 failed runs in a row: trial run minutely-1795439040 is running, and no run starts before its outcome: its success ends the pause, its failure pauses again for longer
`},
		// Failures below the limit change nothing.
		{"failing, not paused", []func(*cronv1.CronJob){policy(2*time.Minute, cronv1.FailureStreak{Count: 2})},
			`UTC                           UTC
Mon 2026-11-23 13:05:00 UTC   2026-11-23T13:05:00Z
Mon 2026-11-23 13:06:00 UTC   2026-11-23T13:06:00Z
Mon 2026-11-23 13:07:00 UTC   2026-11-23T13:07:00Z
`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakes([]*cronv1.CronJob{newCronJob("minutely", "* * * * *", tc.opts...)})
			var out bytes.Buffer
			if err := Next(context.Background(), f.clients(), &out, "minutely", 3); err != nil {
				t.Fatal(err)
			}
			if want := "schedule \"* * * * *\" in UTC\n" + tc.want; out.String() != want {
				t.Errorf("printed\n%s\nwant\n%s", out.String(), want)
			}
		})
	}
}

// While paused, status.nextScheduleTime is the trial's time, which the
// plugin agrees with; without a trial to come it is unset.
func TestNextWhilePausedAgreesWithTheTrialsTime(t *testing.T) {
	trialAt := time.Date(2026, 11, 23, 13, 10, 0, 0, time.UTC)
	for _, tc := range []struct {
		name     string
		next     time.Time
		disagree bool
	}{
		{"the trial's time", trialAt, false},
		{"the first time due", time.Date(2026, 11, 23, 13, 5, 0, 0, time.UTC), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cj := newCronJob("minutely", "* * * * *", func(cj *cronv1.CronJob) {
				cj.Spec.TimeZone = ptr.To("UTC")
				cj.Spec.FailurePolicy = &cronv1.FailurePolicy{PauseAfter: 3, ResumeAfter: &metav1.Duration{Duration: 5 * time.Minute}}
				cj.Status.FailureStreak = &cronv1.FailureStreak{Count: 3, PausedAt: &metav1.Time{Time: trialAt.Add(-5 * time.Minute)}, Pauses: 1,
					ResumeAt: &metav1.Time{Time: trialAt}}
				cj.Status.ObservedGeneration = 1
				cj.Status.NextScheduleTime = &metav1.Time{Time: tc.next}
			})
			f := newFakes([]*cronv1.CronJob{cj})
			var out bytes.Buffer
			if err := Next(context.Background(), f.clients(), &out, "minutely", 2); err != nil {
				t.Fatal(err)
			}
			if got := strings.Contains(out.String(), "status.nextScheduleTime says"); got != tc.disagree {
				t.Errorf("says the status disagrees: %v, want %v:\n%s", got, tc.disagree, out.String())
			}
		})
	}
}

// next -o json prints the schedule, its zone and the same times the table
// shows, in UTC; while paused, which of them is the trial.
func TestNextPrintsJSON(t *testing.T) {
	kubeconfig(t, ns)
	at := func(m int) time.Time { return time.Date(2026, 11, 23, 13, m, 0, 0, time.UTC) }
	f := newFakes([]*cronv1.CronJob{
		newCronJob("report", "H 6 * * 1-5", func(cj *cronv1.CronJob) { cj.Spec.TimeZone = ptr.To("Europe/Berlin") }),
		newCronJob("minutely", "* * * * *", func(cj *cronv1.CronJob) {
			cj.Spec.TimeZone = ptr.To("UTC")
			cj.Spec.FailurePolicy = &cronv1.FailurePolicy{PauseAfter: 3}
			cj.Status.FailureStreak = &cronv1.FailureStreak{Count: 3, PausedAt: &metav1.Time{Time: t0.Add(-30 * time.Second)}, Pauses: 1,
				ResumeAt: &metav1.Time{Time: at(6)}}
		}),
	})
	decode := func(args ...string) NextRuns {
		t.Helper()
		code, stdout, stderr, _ := f.cli(t, args...)
		var runs NextRuns
		if err := json.Unmarshal([]byte(stdout), &runs); code != 0 || stderr != "" || err != nil {
			t.Fatalf("%q: exit %d, stderr %q, %v in\n%s", args, code, stderr, err, stdout)
		}
		return runs
	}
	report := decode("next", "report", "-c", "2", "-o", "json")
	cj := f.cronJob(t, "report")
	_, resolved, times, err := NextTimes(cj, t0, 2)
	if err != nil {
		t.Fatal(err)
	}
	want := NextRuns{Namespace: ns, Name: "report", Schedule: "H 6 * * 1-5", ResolvedSchedule: resolved, TimeZone: "Europe/Berlin",
		Times: []string{times[0].UTC().Format(time.RFC3339), times[1].UTC().Format(time.RFC3339)}}
	if !reflect.DeepEqual(report, want) {
		t.Errorf("next -o json is %+v, want %+v", report, want)
	}
	paused := decode("next", "minutely", "-c", "3", "-o", "json")
	if !paused.Paused || paused.Trial != "2026-11-23T13:06:00Z" || strings.Join(paused.Times, " ") != "2026-11-23T13:05:00Z 2026-11-23T13:06:00Z 2026-11-23T13:07:00Z" {
		t.Errorf("next -o json of a paused CronJob is %+v, want paused with the trial at 13:06", paused)
	}
	// yaml carries the same fields.
	if _, stdout, _, _ := f.cli(t, "next", "minutely", "-c", "3", "-o", "yaml"); !strings.Contains(stdout, "\ntrial: \"2026-11-23T13:06:00Z\"\n") || !strings.HasPrefix(stdout, "name: minutely\n") {
		t.Errorf("next -o yaml printed\n%s", stdout)
	}
}

// next marks the times the spec holds: suspended before spec.suspendUntil,
// skipped for an entry of spec.skipTimes; the first time left unmarked is
// the controller's next run, and -o json says the same.
func TestNextMarksSkippedAndSuspendedTimes(t *testing.T) {
	kubeconfig(t, ns)
	cj := newCronJob("hourly", "0 * * * *", inZone("UTC"), suspendedUntil(utcAt(15, 30)), skipping(utcAt(17, 0), utcAt(12, 0)), func(cj *cronv1.CronJob) {
		cj.Status.ObservedGeneration = 1
		cj.Status.NextScheduleTime = &metav1.Time{Time: utcAt(16, 0)}
	})
	if next := decide(cj, t0).Status.NextScheduleTime; next == nil || !next.Time.Equal(utcAt(16, 0)) {
		t.Fatalf("the controller's next run is %v, not 16:00", next)
	}
	f := newFakes([]*cronv1.CronJob{cj})
	var out bytes.Buffer
	if err := Next(context.Background(), f.clients(), &out, "hourly", 5); err != nil {
		t.Fatal(err)
	}
	want := `schedule "0 * * * *" in UTC
UTC                           UTC
Mon 2026-11-23 14:00:00 UTC   2026-11-23T14:00:00Z   suspended
Mon 2026-11-23 15:00:00 UTC   2026-11-23T15:00:00Z   suspended
Mon 2026-11-23 16:00:00 UTC   2026-11-23T16:00:00Z
Mon 2026-11-23 17:00:00 UTC   2026-11-23T17:00:00Z   skipped
Mon 2026-11-23 18:00:00 UTC   2026-11-23T18:00:00Z
suspended until Mon 2026-11-23 15:30:00 UTC (2026-11-23T15:30:00Z) by spec.suspendUntil: runs due before it do not start (status.missedRuns counts them under SuspendedUntil); the first run then is Mon 2026-11-23 16:00:00 UTC (2026-11-23T16:00:00Z)
skipped: spec.skipTimes skips 1 run to come (status.missedRuns counts them under Skipped as they pass); kubectl cronjob skip hourly --clear removes every skip
`
	if out.String() != want {
		t.Errorf("printed\n%s\nwant\n%s", out.String(), want)
	}
	code, stdout, stderr, _ := f.cli(t, "next", "hourly", "-o", "json")
	var runs NextRuns
	if err := json.Unmarshal([]byte(stdout), &runs); code != 0 || stderr != "" || err != nil {
		t.Fatalf("next -o json: exit %d, stderr %q, %v", code, stderr, err)
	}
	wantHeld := map[string]string{"2026-11-23T14:00:00Z": "suspended", "2026-11-23T15:00:00Z": "suspended", "2026-11-23T17:00:00Z": "skipped"}
	if runs.SuspendedUntil != "2026-11-23T15:30:00Z" || !reflect.DeepEqual(runs.Held, wantHeld) {
		t.Errorf("next -o json: suspendedUntil %q, held %v; want 2026-11-23T15:30:00Z and %v", runs.SuspendedUntil, runs.Held, wantHeld)
	}
	// The status naming a held time is the controller's disagreement.
	cj.Status.NextScheduleTime = &metav1.Time{Time: utcAt(14, 0)}
	f = newFakes([]*cronv1.CronJob{cj})
	out.Reset()
	if err := Next(context.Background(), f.clients(), &out, "hourly", 2); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "status.nextScheduleTime says 2026-11-23T14:00:00Z") {
		t.Errorf("next does not say the status disagrees:\n%s", out.String())
	}
}

// A held time is never a pause's trial: the trial is the first time at or
// after resumeAt that the spec does not hold, as the controller picks it.
func TestNextTrialPassesASkippedTime(t *testing.T) {
	cj := newCronJob("minutely", "* * * * *", inZone("UTC"), skipping(utcAt(13, 6)), func(cj *cronv1.CronJob) {
		cj.Spec.FailurePolicy = &cronv1.FailurePolicy{PauseAfter: 3, ResumeAfter: &metav1.Duration{Duration: 2 * time.Minute}}
		cj.Status.FailureStreak = &cronv1.FailureStreak{Count: 3, PausedAt: &metav1.Time{Time: utcAt(13, 4)}, Pauses: 1, ResumeAt: &metav1.Time{Time: utcAt(13, 6)}}
	})
	if next := decide(cj, t0).Status.NextScheduleTime; next == nil || !next.Time.Equal(utcAt(13, 7)) {
		t.Fatalf("the controller's trial is %v, not 13:07", next)
	}
	f := newFakes([]*cronv1.CronJob{cj})
	var out bytes.Buffer
	if err := Next(context.Background(), f.clients(), &out, "minutely", 3); err != nil {
		t.Fatal(err)
	}
	want := `Mon 2026-11-23 13:05:00 UTC   2026-11-23T13:05:00Z   paused
Mon 2026-11-23 13:06:00 UTC   2026-11-23T13:06:00Z   skipped
Mon 2026-11-23 13:07:00 UTC   2026-11-23T13:07:00Z   trial
`
	if !strings.Contains(out.String(), want) || !strings.Contains(out.String(), "the first due then or later, 2026-11-23T13:07:00Z, is a trial run") {
		t.Errorf("printed\n%s\nwant it to hold\n%s", out.String(), want)
	}
}

// An entry of spec.skipTimes that is not one of the schedule's times skips
// nothing, and next says so.
func TestNextSaysASkipThatNamesNoRunSkipsNothing(t *testing.T) {
	f := newFakes([]*cronv1.CronJob{newCronJob("hourly", "0 * * * *", inZone("UTC"), skipping(utcAt(14, 30), utcAt(15, 0)))})
	var out bytes.Buffer
	if err := Next(context.Background(), f.clients(), &out, "hourly", 3); err != nil {
		t.Fatal(err)
	}
	want := "skipped: spec.skipTimes skips 1 run to come (status.missedRuns counts them under Skipped as they pass); 1 of its times names no run of the schedule and skips nothing; kubectl cronjob skip hourly --clear removes every skip\n"
	if !strings.HasSuffix(out.String(), want) || strings.Count(out.String(), "skipped\n") != 1 {
		t.Errorf("printed\n%s\nwant it to end\n%s", out.String(), want)
	}
}
