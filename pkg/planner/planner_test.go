package planner

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	cronv1 "github.com/cronjob-controller/cronjob-controller/pkg/apis/batch/v1"
	"github.com/cronjob-controller/cronjob-controller/pkg/schedule"
)

func TestDecide(t *testing.T) {
	nine := runOf(at(-time.Hour), "")
	nineDone := runOf(at(-time.Hour), batchv1.JobComplete)
	cases := []struct {
		name    string
		cronJob *cronv1.CronJob
		jobs    []*fakeJob
		gone    []types.UID
		now     time.Time

		wantCreates []string
		wantDeletes []string
		wantMissed  map[string]int64
		wantActive  []string
		wantEvents  []string
		wantRequeue time.Duration
		// wantLast is lastScheduleTime; zero means unset.
		wantLast time.Time
	}{
		{name: "on time", cronJob: cronJob(last(at(-time.Hour)), seen("0 * * * *", "UTC")), jobs: []*fakeJob{nineDone}, now: at(5 * time.Second),
			wantCreates: hours(10), wantRequeue: time.Hour - 5*time.Second, wantLast: at(-time.Hour)},
		{name: "lastScheduleTime set before the creation (by hand, to catch up) wins, as in the built-in",
			cronJob: cronJob(last(at(-2*time.Hour)), func(cj *cronv1.CronJob) { cj.CreationTimestamp = metav1.NewTime(at(-time.Minute)) }), now: at(time.Second),
			wantCreates: hours(10), wantMissed: map[string]int64{cronv1.MissedSuperseded: 1}, wantRequeue: time.Hour - time.Second, wantLast: at(-2 * time.Hour)},
		{name: "not yet", cronJob: cronJob(last(at(-time.Hour))), now: at(-time.Minute),
			wantRequeue: time.Minute, wantLast: at(-time.Hour)},
		{name: "three missed: the latest starts, two superseded", cronJob: cronJob(last(at(-3 * time.Hour))), now: at(time.Second),
			wantCreates: hours(10), wantMissed: map[string]int64{cronv1.MissedSuperseded: 2}, wantRequeue: time.Hour - time.Second, wantLast: at(-3 * time.Hour)},
		{name: "past the deadline", cronJob: cronJob(last(at(-time.Hour)), deadline(10)), now: at(time.Minute),
			wantMissed: map[string]int64{cronv1.MissedDeadlineExceeded: 1}, wantEvents: []string{"Warning MissSchedule"}, wantRequeue: 59 * time.Minute, wantLast: at(-time.Hour)},
		{name: "more than a hundred missed: counted as a hundred", cronJob: cronJob(last(at(-200 * time.Hour))), now: at(time.Second),
			wantCreates: hours(10), wantMissed: map[string]int64{cronv1.MissedSuperseded: 100}, wantEvents: []string{"Warning TooManyMissedTimes"},
			wantRequeue: time.Hour - time.Second, wantLast: at(-200 * time.Hour)},
		{name: "Forbid, held back: not counted yet", cronJob: cronJob(last(at(-time.Hour)), active(nine), concurrency(cronv1.ForbidConcurrent)), jobs: []*fakeJob{nine}, now: at(time.Second),
			wantActive: hours(9), wantEvents: []string{"Normal JobAlreadyActive"}, wantRequeue: time.Hour - time.Second, wantLast: at(-time.Hour)},
		{name: "Forbid, superseded while held back: counted as forbidden",
			cronJob: cronJob(last(at(-2*time.Hour)), active(runOf(at(-2*time.Hour), "")), concurrency(cronv1.ForbidConcurrent)), jobs: []*fakeJob{runOf(at(-2*time.Hour), "")}, now: at(time.Second),
			wantActive: hours(8), wantMissed: map[string]int64{cronv1.MissedConcurrencyForbidden: 1}, wantEvents: []string{"Normal JobAlreadyActive"},
			wantRequeue: time.Hour - time.Second, wantLast: at(-2 * time.Hour)},
		{name: "Forbid, held back past its deadline: counted as forbidden", cronJob: cronJob(last(at(-time.Hour)), active(nine), concurrency(cronv1.ForbidConcurrent), deadline(60)), jobs: []*fakeJob{nine}, now: at(2 * time.Minute),
			wantActive: hours(9), wantMissed: map[string]int64{cronv1.MissedConcurrencyForbidden: 1}, wantEvents: []string{"Warning MissSchedule"}, wantRequeue: 58 * time.Minute, wantLast: at(-time.Hour)},
		{name: "Replace deletes the active Job first", cronJob: cronJob(last(at(-time.Hour)), active(nine), concurrency(cronv1.ReplaceConcurrent)), jobs: []*fakeJob{nine}, now: at(time.Second),
			wantCreates: hours(10), wantDeletes: []string{"replace " + hours(9)[0]}, wantActive: hours(9), wantRequeue: time.Hour - time.Second, wantLast: at(-time.Hour)},
		{name: "All, Replace: no two runs overlap, so the latest replaces the active Job", cronJob: cronJob(last(at(-3*time.Hour)), active(runOf(at(-3*time.Hour), "")), concurrency(cronv1.ReplaceConcurrent), catchUpAll(10)),
			jobs: []*fakeJob{runOf(at(-3*time.Hour), "")}, now: at(time.Second),
			wantCreates: hours(10), wantDeletes: []string{"replace " + hours(7)[0]}, wantMissed: map[string]int64{cronv1.MissedSuperseded: 2}, wantActive: hours(7), wantRequeue: time.Hour - time.Second, wantLast: at(-3 * time.Hour)},
		{name: "All, limit and deadline", cronJob: cronJob(last(at(-6*time.Hour)), catchUpAll(2), deadline(4*3600)), now: at(time.Second),
			wantCreates: hours(9, 10), wantMissed: map[string]int64{cronv1.MissedSuperseded: 2, cronv1.MissedDeadlineExceeded: 2}, wantRequeue: time.Hour - time.Second, wantLast: at(-6 * time.Hour)},
		{name: "suspended: nothing, no requeue", cronJob: cronJob(last(at(-time.Hour)), func(cj *cronv1.CronJob) { cj.Spec.Suspend = ptr.To(true) }), now: at(time.Second),
			wantLast: at(-time.Hour)},
		{name: "being deleted: nothing", cronJob: cronJob(last(at(-time.Hour)), func(cj *cronv1.CronJob) { cj.DeletionTimestamp = ptr.To(metav1.NewTime(ten)) }), now: at(time.Second),
			wantLast: at(-time.Hour)},
		{name: "a finished run newer than lastScheduleTime is not due again (status lost to a crash)", cronJob: cronJob(last(at(-time.Hour))), jobs: []*fakeJob{runOf(ten, batchv1.JobComplete)}, now: at(10 * time.Minute),
			wantRequeue: 50 * time.Minute, wantLast: ten},
		{name: "an unfinished run not listed is adopted", cronJob: cronJob(last(at(-time.Hour))), jobs: []*fakeJob{runOf(ten, "")}, now: at(10 * time.Minute),
			wantActive: hours(10), wantRequeue: 50 * time.Minute, wantLast: ten},
		{name: "an active Job the API server no longer has", cronJob: cronJob(last(at(-time.Hour)), active(nine)), gone: []types.UID{nine.UID}, now: at(-time.Minute),
			wantEvents: []string{"Normal MissingJob"}, wantRequeue: time.Minute, wantLast: at(-time.Hour)},
		{name: "an active Job being deleted leaves active, and holds back nothing under Forbid",
			cronJob: cronJob(last(at(-time.Hour)), active(nine), concurrency(cronv1.ForbidConcurrent)),
			jobs: []*fakeJob{func() *fakeJob {
				j := runOf(at(-time.Hour), "")
				j.DeletionTimestamp = ptr.To(metav1.NewTime(ten))
				return j
			}()}, now: at(time.Second),
			wantCreates: hours(10), wantRequeue: time.Hour - time.Second, wantLast: at(-time.Hour)},
		{name: "an active Job not cached and not known gone stays", cronJob: cronJob(last(at(-time.Hour)), active(nine)), now: at(-time.Minute),
			wantActive: hours(9), wantRequeue: time.Minute, wantLast: at(-time.Hour)},
		{name: "history beyond the limit pruned, oldest first", cronJob: cronJob(last(at(-time.Hour)), func(cj *cronv1.CronJob) { cj.Spec.SuccessfulJobsHistoryLimit = ptr.To[int32](1) }),
			jobs: []*fakeJob{runOf(at(-3*time.Hour), batchv1.JobComplete), runOf(at(-2*time.Hour), batchv1.JobComplete), nineDone}, now: at(-time.Minute),
			wantDeletes: []string{"history " + hours(7)[0], "history " + hours(8)[0]}, wantRequeue: time.Minute, wantLast: at(-time.Hour)},

		// Edits.
		{name: "edit seen late, both name 10:00", cronJob: cronJob(sched("@hourly"), last(at(-time.Hour)), seen("0 * * * *", "UTC")), now: at(5 * time.Minute),
			wantCreates: hours(10), wantRequeue: 55 * time.Minute, wantLast: at(-time.Hour)},
		{name: "edit seen late, only the new one names 10:00; the old one's 09:30 was owed", cronJob: cronJob(last(at(-time.Hour)), seen("30 * * * *", "UTC")), now: at(5 * time.Minute),
			wantMissed: map[string]int64{cronv1.MissedScheduleChanged: 1}, wantRequeue: 55 * time.Minute, wantLast: at(-time.Hour)},
		{name: "recorded edit: a time both name, before it, still owed", cronJob: cronJob(sched("0 */2 * * *"), last(at(-2*time.Hour)), seen("0 */2 * * *", "UTC"), history("0 * * * *", "UTC", at(5*time.Minute))),
			now: at(6 * time.Minute), wantCreates: hours(10), wantRequeue: 2*time.Hour - 6*time.Minute, wantLast: at(-2 * time.Hour)},
		{name: "recorded edit: a time only the new names, before it, not a run", cronJob: cronJob(sched("*/30 * * * *"), last(at(-time.Hour)), seen("*/30 * * * *", "UTC"), history("0 * * * *", "UTC", at(40*time.Minute))),
			now: at(41 * time.Minute), wantCreates: hours(10), wantMissed: nil, wantRequeue: 19 * time.Minute, wantLast: at(-time.Hour)},
		{name: "recorded unusable schedule names nothing before the fix", cronJob: cronJob(last(at(-2*time.Hour)), seen("0 * * * *", "UTC"), history("", "", at(5*time.Minute))),
			now: at(6 * time.Minute), wantRequeue: 54 * time.Minute, wantLast: at(-2 * time.Hour)},
		{name: "edits in a chain: each schedule in force at the time must name it",
			cronJob: cronJob(sched("0 */2 * * *"), last(at(-4*time.Hour)), seen("0 */2 * * *", "UTC"),
				history("0 * * * *", "UTC", at(-90*time.Minute)), history("0 8-23 * * *", "UTC", at(5*time.Minute))),
			now: at(6 * time.Minute), wantCreates: hours(10), wantMissed: map[string]int64{cronv1.MissedSuperseded: 1}, wantRequeue: 2*time.Hour - 6*time.Minute, wantLast: at(-4 * time.Hour)},
		{name: "a status from before previousSchedules: its change time still bars earlier times",
			cronJob: cronJob(sched("*/5 * * * *"), last(at(-time.Hour)), seen("*/5 * * * *", "UTC"), func(cj *cronv1.CronJob) {
				cj.Status.ScheduleChangeTime = &metav1.Time{Time: at(-30 * time.Minute)}
			}),
			now: at(-28 * time.Minute), wantRequeue: 3 * time.Minute, wantLast: at(-time.Hour)},
		{name: "@every to the same @every: owed", cronJob: cronJob(sched("@every 30m"), last(at(-30*time.Minute)), seen("@every 30m", "UTC"), history("@every 30m", "Europe/Berlin", at(time.Minute))),
			now: at(2 * time.Minute), wantCreates: hours(10), wantRequeue: 28 * time.Minute, wantLast: at(-30 * time.Minute)},
		{name: "cron to @every, both name 10:00: owed", cronJob: cronJob(sched("@every 30m"), last(at(-30*time.Minute)), seen("@every 30m", "UTC"), history("*/30 * * * *", "UTC", at(time.Minute))),
			now: at(2 * time.Minute), wantCreates: hours(10), wantRequeue: 28 * time.Minute, wantLast: at(-30 * time.Minute)},
		{name: "@every to cron, both name 10:00: owed", cronJob: cronJob(last(at(-30*time.Minute)), seen("0 * * * *", "UTC"), history("@every 30m", "UTC", at(time.Minute))),
			now: at(2 * time.Minute), wantCreates: hours(10), wantRequeue: 58 * time.Minute, wantLast: at(-30 * time.Minute)},
		{name: "@every to cron, only cron names 10:00: not a run", cronJob: cronJob(last(at(-30*time.Minute)), seen("0 * * * *", "UTC"), history("@every 45m", "UTC", at(time.Minute))),
			now: at(2 * time.Minute), wantRequeue: 58 * time.Minute, wantLast: at(-30 * time.Minute)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in := Input{CronJob: tc.cronJob, Now: tc.now}
			for _, j := range tc.jobs {
				in.Jobs = append(in.Jobs, j)
			}
			if len(tc.gone) > 0 {
				in.Gone = map[types.UID]bool{}
				for _, uid := range tc.gone {
					in.Gone[uid] = true
				}
			}
			before := tc.cronJob.DeepCopy()
			p := Decide(in)
			if !equalCronJobs(before, tc.cronJob) {
				t.Error("Decide changed its input")
			}
			if got := names(p.Creates, func(c Create) string { return c.Job.Name }); !slices.Equal(got, tc.wantCreates) {
				t.Errorf("creates %q, want %q", got, tc.wantCreates)
			}
			if got := names(p.Deletes, func(d Delete) string { return string(d.Reason) + " " + d.Name }); !slices.Equal(got, tc.wantDeletes) {
				t.Errorf("deletes %q, want %q", got, tc.wantDeletes)
			}
			if got := missedOf(p.Status); !mapsEqual(got, tc.wantMissed) {
				t.Errorf("missed %v, want %v", got, tc.wantMissed)
			}
			if got := names(p.Status.Active, func(r corev1.ObjectReference) string { return r.Name }); !slices.Equal(got, tc.wantActive) {
				t.Errorf("active %q, want %q", got, tc.wantActive)
			}
			if p.Status.ActiveCount != int32(len(p.Status.Active)) {
				t.Errorf("activeCount %d for %d active", p.Status.ActiveCount, len(p.Status.Active))
			}
			if got := names(p.Events, func(e Event) string { return e.Type + " " + e.Reason }); !slices.Equal(got, tc.wantEvents) {
				t.Errorf("events %q, want %q", got, tc.wantEvents)
			}
			if p.RequeueAfter != tc.wantRequeue {
				t.Errorf("requeue %v, want %v", p.RequeueAfter, tc.wantRequeue)
			}
			if got := p.Status.LastScheduleTime; (got == nil) != tc.wantLast.IsZero() || (got != nil && !got.Time.Equal(tc.wantLast)) {
				t.Errorf("lastScheduleTime %v, want %v", got, tc.wantLast)
			}
			if p.Status.ObservedGeneration != tc.cronJob.Generation {
				t.Errorf("observedGeneration %d, want %d", p.Status.ObservedGeneration, tc.cronJob.Generation)
			}
		})
	}
}

func equalCronJobs(a, b *cronv1.CronJob) bool { return equality.Semantic.DeepEqual(a, b) }

// The walk over candidate runs agrees with a minute-by-minute check of the
// rule, over edits between zones (DST days included) and schedules.
func TestCandidatesAgreeWithBruteForce(t *testing.T) {
	specs := []string{"0 * * * *", "*/30 * * * *", "0 */2 * * *", "30 2 * * *", "0 9 * * MON-FRI", "15,45 1-3 * * *", "0 0 * * SUN", "H * * * *"}
	zones := []string{"UTC", "Europe/Berlin", "America/New_York", "Australia/Lord_Howe"}
	// Around the spring change in New York and Berlin, and a plain week.
	windows := []time.Time{
		time.Date(2026, 3, 7, 12, 0, 0, 0, time.UTC),
		time.Date(2026, 3, 27, 12, 0, 0, 0, time.UTC),
		time.Date(2026, 10, 3, 12, 0, 0, 0, time.UTC),
	}
	checked := 0
	for wi, start := range windows {
		for i := range 40 {
			s := func(k int) (string, string) { return specs[(k*7+i*3+wi)%len(specs)], zones[(k*5+i+wi)%len(zones)] }
			curSpec, curZone := s(0)
			cj := cronJob(sched(curSpec), zone(curZone))
			base := start
			now := start.Add(60 * time.Hour)
			// Two earlier schedules, replaced 20 and 40 hours in.
			var prevs []previousSchedule
			for k, until := range []time.Time{start.Add(20 * time.Hour), start.Add(40 * time.Hour)} {
				ps, pz := s(k + 1)
				ps, err := schedule.Resolve(ps, "default/cj")
				if err != nil {
					t.Fatal(err)
				}
				cj.Status.PreviousSchedules = append(cj.Status.PreviousSchedules, cronv1.PreviousSchedule{Schedule: ps, TimeZone: pz, Until: metav1.NewTime(until)})
			}
			p := &Plan{Status: cj.Status, cj: cj, now: now}
			prevs = p.previous(base)
			cur := mustParse(t, curSpec, curZone)
			for _, pr := range prevs {
				if pr.sched == nil {
					t.Fatalf("a previous schedule did not parse: %+v", cj.Status.PreviousSchedules)
				}
			}
			due, err := cur.MostRecent(base, now)
			if err != nil {
				t.Fatal(err)
			}
			c := newCandidates(cur, prevs, base, due)
			got := c.newest(1000, nil)
			var want []time.Time
			for m := now.Truncate(time.Minute); m.After(base); m = m.Add(-time.Minute) {
				ok := cur.Names(m)
				for _, pr := range prevs {
					if !pr.until.Before(m) {
						ok = ok && pr.sched.Names(m)
					}
				}
				if ok {
					want = append(want, m)
				}
			}
			if !slices.EqualFunc(got, want, time.Time.Equal) {
				t.Errorf("%s in %s after %+v:\n walk  %v\n brute %v", curSpec, curZone, cj.Status.PreviousSchedules, got, want)
			}
			checked += len(want)
		}
	}
	if checked < 500 {
		t.Errorf("only %d runs checked: the cases are too thin", checked)
	}
}

// Outcomes change the status as the rules say.
func TestOutcomes(t *testing.T) {
	cj := cronJob(last(at(-time.Hour)), func(cj *cronv1.CronJob) {
		cj.Annotations = map[string]string{cronv1.RunNowAnnotation: strings.Repeat("x", 300)}
	})
	p := Decide(Input{CronJob: cj, Now: at(time.Second)})
	if len(p.Creates) != 2 || !p.Creates[0].Manual || p.Creates[1].Manual {
		t.Fatalf("creates %+v, want the manual Job, then the 10:00 run", p.Creates)
	}
	p.CreateFailed(p.Creates[1], errors.New(strings.Repeat("long error ", 500)))
	p.NotStarted(p.Creates[0], Rejected, strings.Repeat("bad template ", 500))
	if got := p.Status.LastRunNow; !strings.HasPrefix(got, "sha256:") || len(got) > 128 {
		t.Errorf("lastRunNow %q", got)
	}
	if c := meta.FindStatusCondition(p.Status.Conditions, cronv1.ConditionJobTemplateValid); c == nil || c.Status != metav1.ConditionFalse || len(c.Message) > maxMessage {
		t.Errorf("JobTemplateValid %+v", c)
	}
	for _, e := range p.Events {
		if len(e.Message) > maxMessage {
			t.Errorf("an Event message of %d bytes", len(e.Message))
		}
	}
	if p.Status.LastScheduleTime == nil || !p.Status.LastScheduleTime.Time.Equal(at(-time.Hour)) {
		t.Errorf("a failed create moved lastScheduleTime to %v", p.Status.LastScheduleTime)
	}
	p.Started(p.Creates[1], runOf(ten, ""), true)
	if !p.Status.LastScheduleTime.Time.Equal(ten) || len(p.Status.Active) != 1 || p.Status.ActiveCount != 1 {
		t.Errorf("after the start: %+v", p.Status)
	}
	if c := meta.FindStatusCondition(p.Status.Conditions, cronv1.ConditionLastRunStarted); c == nil || c.Status != metav1.ConditionTrue {
		t.Errorf("LastRunStarted %+v", c)
	}
	// The same value again: handled, whatever its length.
	cj.Status = p.Status
	if p := Decide(Input{CronJob: cj, Jobs: []Job{runOf(ten, "")}, Now: at(2 * time.Second)}); len(p.Creates) != 0 {
		t.Errorf("creates %+v after the value was handled", p.Creates)
	}
}

func mustParse(t *testing.T, spec, zone string) *schedule.Schedule {
	t.Helper()
	resolved, err := schedule.Resolve(spec, "default/cj")
	if err != nil {
		t.Fatal(err)
	}
	s, err := schedule.Parse(resolved, &zone)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// Job annotation oddities that must not start or lose a run: scheduled-at far
// in the past, a finished Job being deleted, an unfinished Job being deleted.
func TestOddJobsNeitherStartNorLoseARun(t *testing.T) {
	old := runOf(at(-10*365*24*time.Hour), batchv1.JobComplete)
	deleting := runOf(at(-time.Hour), batchv1.JobComplete)
	deleting.DeletionTimestamp = ptr.To(metav1.NewTime(ten))
	cj := cronJob(last(at(-time.Hour)), active(deleting))
	p := Decide(Input{CronJob: cj, Jobs: []Job{old, deleting}, Now: at(time.Second)})
	if got := createdTimes(p); !slices.Equal(got, []string{"05-01T10:00:00"}) || len(p.Status.Active) != 0 {
		t.Errorf("creates %v, active %+v", got, p.Status.Active)
	}
	for _, d := range p.Deletes {
		if d.UID == deleting.UID {
			t.Errorf("a Job being deleted is deleted again: %+v", d)
		}
	}
}

// A sync's cost is bounded: schedules that rarely agree, long outages, full
// history.
func TestWorstCaseSyncIsBounded(t *testing.T) {
	cj := cronJob(sched("* * 29 2 *"), zone("America/New_York"), catchUpAll(100), func(cj *cronv1.CronJob) {
		cj.CreationTimestamp = metav1.NewTime(at(-9 * 365 * 24 * time.Hour))
	}, seen("* * 29 2 *", "America/New_York"))
	for i, s := range []string{"0 0 29 2 *", "30 2 29 2 *", "@every 7s", "59 23 29 2 *", "* * 29 2 1"} {
		history(s, "Australia/Lord_Howe", at(time.Duration(-i)*time.Second))(cj)
	}
	start := time.Now()
	p := Decide(Input{CronJob: cj, Now: at(time.Second)})
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("one Decide took %v", d)
	} else {
		t.Logf("one Decide took %v (%d creates)", d, len(p.Creates))
	}
}
