package plugin

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	cronv1 "github.com/cronjob-controller/cronjob-controller/pkg/apis/batch/v1"
)

func TestHistoryListsTheCronJobsJobsNewestFirst(t *testing.T) {
	cj := newCronJob("nightly", "*/5 * * * *", func(cj *cronv1.CronJob) { cj.Spec.TimeZone = ptr.To("Europe/Berlin") })
	other := newCronJob("other", "*/5 * * * *")
	at := func(m int) time.Time { return time.Date(2026, 11, 23, 12, m, 0, 0, time.UTC) }
	jobs := []*batchv1.Job{
		jobOf(cj, "nightly-old", at(40), scheduledAt(at(40)), started(at(40).Add(time.Second)), ended(batchv1.JobComplete, at(41).Add(31*time.Second))),
		jobOf(cj, "nightly-failed", at(50), scheduledAt(at(50)), started(at(50)), ended(batchv1.JobFailed, at(52))),
		jobOf(cj, "nightly-mabc", at(55), manual, started(at(55)), ended(batchv1.JobComplete, at(55).Add(4*time.Second))),
		jobOf(cj, "nightly-rabc", at(56), manual, func(j *batchv1.Job) { j.Annotations[cronv1.CronJobRunAnnotation] = "by-hand" }, started(at(56))),
		// Two runs created in the same second (catchUpPolicy All).
		jobOf(cj, "nightly-a", at(60), scheduledAt(at(55)), started(at(60))),
		jobOf(cj, "nightly-b", at(60), scheduledAt(at(60))),
		jobOf(other, "other-1", at(61), scheduledAt(at(60))),
	}
	// A Job of the same name in another namespace, and one with no
	// controller, are not the CronJob's.
	foreign := jobOf(cj, "nightly-elsewhere", at(62), scheduledAt(at(60)))
	foreign.Namespace = "team-b"
	orphan := jobOf(cj, "nightly-orphan", at(62), scheduledAt(at(60)))
	orphan.OwnerReferences = nil
	jobs = append(jobs, foreign, orphan)
	f := newFakes([]*cronv1.CronJob{cj, other}, jobs...)
	f.clock.SetTime(at(64).Add(30 * time.Second))

	var out bytes.Buffer
	if err := History(context.Background(), f.clients(), &out, "nightly"); err != nil {
		t.Fatal(err)
	}
	want := `NAME             RUN         SCHEDULED                     OUTCOME    DURATION   AGE
nightly-b        scheduled   Mon 2026-11-23 14:00:00 CET   Running    -          4m30s
nightly-a        scheduled   Mon 2026-11-23 13:55:00 CET   Running    4m30s      4m30s
nightly-rabc     requested   -                             Running    8m30s      8m30s
nightly-mabc     run-now     -                             Complete   4s         9m30s
nightly-failed   scheduled   Mon 2026-11-23 13:50:00 CET   Failed     2m         14m
nightly-old      scheduled   Mon 2026-11-23 13:40:00 CET   Complete   90s        24m
`
	if out.String() != want {
		t.Errorf("printed\n%s\nwant\n%s", out.String(), want)
	}
}

func TestHistoryOfACronJobWithoutJobs(t *testing.T) {
	cj := newCronJob("nightly", "0 2 * * *")
	// A Job of an earlier CronJob of the same name: another UID.
	earlier := newCronJob("nightly", "0 2 * * *", func(cj *cronv1.CronJob) { cj.UID = "uid-before" })
	f := newFakes([]*cronv1.CronJob{cj}, jobOf(earlier, "nightly-1", t0, scheduledAt(t0)))
	var out bytes.Buffer
	if err := History(context.Background(), f.clients(), &out, "nightly"); err != nil {
		t.Fatal(err)
	}
	if want := "No Jobs of " + Resource + "/nightly in namespace team-a.\n"; out.String() != want {
		t.Errorf("printed %q, want %q", out.String(), want)
	}
}

func TestHistoryOfEntries(t *testing.T) {
	cj := newCronJob("nightly", "0 2 * * *")
	start := t0.Add(-time.Hour)
	f := newFakes([]*cronv1.CronJob{cj},
		jobOf(cj, "by-hand", start, started(start)),
		// Failed without a condition time: no duration to tell.
		jobOf(cj, "failed", start.Add(-time.Minute), scheduledAt(start), started(start), func(j *batchv1.Job) {
			j.Status.Conditions = []batchv1.JobCondition{{Type: batchv1.JobFailed, Status: "True"}}
		}),
	)
	entries, err := HistoryOf(context.Background(), f.clients(), cj)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 2 {
		t.Fatalf("entries %+v", entries)
	}
	if e := entries[0]; e.Name != "by-hand" || e.Kind != KindOther || e.Outcome != OutcomeRunning || e.Duration != time.Hour || !e.Started {
		t.Errorf("a Job the controller did not create, running an hour: %+v", e)
	}
	if e := entries[1]; e.Outcome != OutcomeFailed || e.Started || !e.Scheduled.Equal(start.Truncate(time.Second)) {
		t.Errorf("a failed Job with no end time: %+v", e)
	}
}

func TestHistoryShowsTheFailureStreakAndThePause(t *testing.T) {
	pausedAt := &metav1.Time{Time: t0.Add(-10 * time.Minute)}
	streak := func(s cronv1.FailureStreak) func(*cronv1.CronJob) {
		return func(cj *cronv1.CronJob) {
			cj.Spec.FailurePolicy = &cronv1.FailurePolicy{PauseAfter: 3, ResumeAfter: &metav1.Duration{Duration: 5 * time.Minute}}
			cj.Status.FailureStreak = &s
		}
	}
	for _, tc := range []struct {
		name string
		opts []func(*cronv1.CronJob)
		want string
	}{
		{"no policy", nil, ""},
		{"policy, not synced yet", []func(*cronv1.CronJob){func(cj *cronv1.CronJob) {
			cj.Spec.FailurePolicy = &cronv1.FailurePolicy{PauseAfter: 3}
		}}, "Failed in a row: 0 (pauseAfter 3)\nPaused: no\n"},
		{"failing", []func(*cronv1.CronJob){streak(cronv1.FailureStreak{Count: 2, LastFailedJob: "nightly-2"})},
			"Failed in a row: 2 (pauseAfter 3), last failed Job nightly-2\nPaused: no\n"},
		{"paused until resumed", []func(*cronv1.CronJob){streak(cronv1.FailureStreak{Count: 3, LastFailedJob: "nightly-3", PausedAt: pausedAt, Pauses: 1}),
			func(cj *cronv1.CronJob) { cj.Spec.FailurePolicy.ResumeAfter = nil }},
			"Failed in a row: 3 (pauseAfter 3), last failed Job nightly-3\n" +
				"Paused: since Mon 2026-11-23 12:54:30 UTC (10m ago); until resumed (kubectl cronjob resume nightly) or a run-now succeeds\n"},
		{"paused, a trial to come", []func(*cronv1.CronJob){streak(cronv1.FailureStreak{Count: 3, LastFailedJob: "nightly-3", PausedAt: pausedAt, Pauses: 1,
			ResumeAt: &metav1.Time{Time: t0.Add(-5 * time.Minute).Add(10 * time.Minute)}})},
			"Failed in a row: 3 (pauseAfter 3), last failed Job nightly-3\n" +
				"Paused: since Mon 2026-11-23 12:54:30 UTC (10m ago); the first run due at or after Mon 2026-11-23 13:09:30 UTC (in 5m) is a trial\n"},
		{"paused again, the trial due", []func(*cronv1.CronJob){streak(cronv1.FailureStreak{Count: 4, LastFailedJob: "nightly-4", PausedAt: pausedAt, Pauses: 2,
			ResumeAt: &metav1.Time{Time: pausedAt.Add(10 * time.Minute)}})},
			"Failed in a row: 4 (pauseAfter 3), last failed Job nightly-4\n" +
				"Paused: since Mon 2026-11-23 12:54:30 UTC (10m ago), again after a failed trial; the first run due at or after Mon 2026-11-23 13:04:30 UTC (due) is a trial\n"},
		// The fourth pause: 5m x 2^3 after pausedAt.
		{"paused after three failed trials", []func(*cronv1.CronJob){streak(cronv1.FailureStreak{Count: 6, LastFailedJob: "nightly-6", PausedAt: pausedAt, Pauses: 4,
			ResumeAt: &metav1.Time{Time: pausedAt.Add(40 * time.Minute)}})},
			"Failed in a row: 6 (pauseAfter 3), last failed Job nightly-6\n" +
				"Paused: since Mon 2026-11-23 12:54:30 UTC (10m ago), again after 3 failed trials; the first run due at or after Mon 2026-11-23 13:34:30 UTC (in 30m) is a trial\n"},
		{"trial running, in the CronJob's zone", []func(*cronv1.CronJob){streak(cronv1.FailureStreak{Count: 3, LastFailedJob: "nightly-3", PausedAt: pausedAt, Pauses: 1,
			ResumeAt: &metav1.Time{Time: t0.Add(-5 * time.Minute)}, TrialJob: "nightly-5"}),
			func(cj *cronv1.CronJob) { cj.Spec.TimeZone = ptr.To("Europe/Berlin") }},
			"Failed in a row: 3 (pauseAfter 3), last failed Job nightly-3\n" +
				"Paused: since Mon 2026-11-23 13:54:30 CET (10m ago); trial run nightly-5 running: its success ends the pause, its failure pauses again for longer\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakes([]*cronv1.CronJob{newCronJob("nightly", "0 2 * * *", tc.opts...)})
			var out bytes.Buffer
			if err := History(context.Background(), f.clients(), &out, "nightly"); err != nil {
				t.Fatal(err)
			}
			if want := tc.want + "No Jobs of " + Resource + "/nightly in namespace team-a.\n"; out.String() != want {
				t.Errorf("printed\n%s\nwant\n%s", out.String(), want)
			}
		})
	}
}

// The streak comes before the Jobs, whose table is as without a policy.
func TestHistoryShowsTheStreakAboveTheJobs(t *testing.T) {
	cj := newCronJob("nightly", "*/5 * * * *", func(cj *cronv1.CronJob) {
		cj.Spec.FailurePolicy = &cronv1.FailurePolicy{PauseAfter: 1}
		cj.Status.FailureStreak = &cronv1.FailureStreak{Count: 1, LastFailedJob: "nightly-failed", PausedAt: &metav1.Time{Time: t0.Add(-2 * time.Minute)}, Pauses: 1}
	})
	f := newFakes([]*cronv1.CronJob{cj}, jobOf(cj, "nightly-failed", t0.Add(-4*time.Minute), scheduledAt(t0.Add(-4*time.Minute).Truncate(time.Minute)),
		started(t0.Add(-4*time.Minute)), ended(batchv1.JobFailed, t0.Add(-2*time.Minute))))
	var out bytes.Buffer
	if err := History(context.Background(), f.clients(), &out, "nightly"); err != nil {
		t.Fatal(err)
	}
	want := `Failed in a row: 1 (pauseAfter 1), last failed Job nightly-failed
Paused: since Mon 2026-11-23 13:02:30 UTC (2m ago); until resumed (kubectl cronjob resume nightly) or a run-now succeeds
NAME             RUN         SCHEDULED                     OUTCOME   DURATION   AGE
nightly-failed   scheduled   Mon 2026-11-23 13:00:00 UTC   Failed    2m         4m
`
	if out.String() != want {
		t.Errorf("printed\n%s\nwant\n%s", out.String(), want)
	}
}

// The runs status.recentRuns records are listed beside the Jobs still
// there: a run whose Job is gone is marked so, and keeps its outcome and
// why it failed; a Job still there takes from the record how its run
// started. The last failure's time heads the list.
func TestHistoryListsRecordedRunsWhoseJobsAreGone(t *testing.T) {
	at := func(m int) time.Time { return time.Date(2026, 11, 23, 12, m, 0, 0, time.UTC) }
	mt := func(m int) *metav1.Time { return &metav1.Time{Time: at(m)} }
	cj := newCronJob("nightly", "*/10 * * * *", func(cj *cronv1.CronJob) {
		cj.Status.LastFailureTime = mt(22)
		cj.Status.RecentRuns = []cronv1.RunRecord{
			{JobName: "nightly-30", Trigger: cronv1.TriggerTrial, ScheduledTime: mt(30), StartTime: mt(30), Outcome: cronv1.OutcomeRunning},
			{JobName: "nightly-20", Trigger: cronv1.TriggerScheduled, ScheduledTime: mt(20), StartTime: mt(20), CompletionTime: mt(22),
				Outcome: cronv1.OutcomeFailed, Reason: "BackoffLimitExceeded"},
			{JobName: "nightly-10", Trigger: cronv1.TriggerCatchUp, ScheduledTime: mt(10), StartTime: mt(11), Outcome: cronv1.OutcomeUnknown},
		}
	})
	f := newFakes([]*cronv1.CronJob{cj}, jobOf(cj, "nightly-30", at(30), scheduledAt(at(30)), started(at(30))))
	f.clock.SetTime(at(32))
	var out bytes.Buffer
	if err := History(context.Background(), f.clients(), &out, "nightly"); err != nil {
		t.Fatal(err)
	}
	want := `Last failure: Mon 2026-11-23 12:22:00 UTC (10m ago)
NAME                RUN         SCHEDULED                     OUTCOME                         DURATION   AGE
nightly-30          trial       Mon 2026-11-23 12:30:00 UTC   Running                         2m         2m
nightly-20 (gone)   scheduled   Mon 2026-11-23 12:20:00 UTC   Failed (BackoffLimitExceeded)   2m         12m
nightly-10 (gone)   catch-up    Mon 2026-11-23 12:10:00 UTC   Unknown                         -          21m
`
	if out.String() != want {
		t.Errorf("printed\n%s\nwant\n%s", out.String(), want)
	}
}

// history -o yaml prints a List: the CronJob first (its run history in
// status.recentRuns, the runs whose Jobs are gone among them), then the
// Jobs it controls, newest first, as the table orders them; no Job of
// another CronJob.
func TestHistoryPrintsYAML(t *testing.T) {
	kubeconfig(t, ns)
	at := func(m int) time.Time { return time.Date(2026, 11, 23, 12, m, 0, 0, time.UTC) }
	mt := func(m int) *metav1.Time { return &metav1.Time{Time: at(m)} }
	cj := newCronJob("nightly", "*/10 * * * *", func(cj *cronv1.CronJob) {
		cj.Status.RecentRuns = []cronv1.RunRecord{
			{JobName: "nightly-30", Trigger: cronv1.TriggerScheduled, ScheduledTime: mt(30), StartTime: mt(30), Outcome: cronv1.OutcomeRunning},
			{JobName: "nightly-20", Trigger: cronv1.TriggerScheduled, ScheduledTime: mt(20), StartTime: mt(20), CompletionTime: mt(22),
				Outcome: cronv1.OutcomeFailed, Reason: "BackoffLimitExceeded"},
		}
	})
	other := newCronJob("other", "0 * * * *")
	f := newFakes([]*cronv1.CronJob{cj, other},
		jobOf(cj, "nightly-10", at(10), scheduledAt(at(10)), started(at(10)), ended(batchv1.JobComplete, at(11))),
		jobOf(cj, "nightly-30", at(30), scheduledAt(at(30)), started(at(30))),
		jobOf(other, "other-1", at(31)))
	f.clock.SetTime(at(32))
	code, stdout, stderr, _ := f.cli(t, "history", "nightly", "-o", "yaml")
	if code != 0 || stderr != "" {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	var list struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
		Items      []struct {
			APIVersion string            `json:"apiVersion"`
			Kind       string            `json:"kind"`
			Metadata   metav1.ObjectMeta `json:"metadata"`
			Status     struct {
				RecentRuns []cronv1.RunRecord `json:"recentRuns"`
			} `json:"status"`
		} `json:"items"`
	}
	// JSON would parse as YAML too: YAML's block style starts with the key.
	if err := yaml.Unmarshal([]byte(stdout), &list); err != nil || !strings.HasPrefix(stdout, "apiVersion: v1\n") {
		t.Fatalf("not YAML of a List (%v):\n%s", err, stdout)
	}
	var got []string
	for _, it := range list.Items {
		got = append(got, it.APIVersion+" "+it.Kind+" "+it.Metadata.Name)
	}
	want := []string{"batch.tutorial.kubebuilder.io/v1 CronJob nightly", "batch/v1 Job nightly-30", "batch/v1 Job nightly-10"}
	if list.APIVersion != "v1" || list.Kind != "List" || strings.Join(got, ", ") != strings.Join(want, ", ") {
		t.Errorf("printed %s %s of %q, want v1 List of %q:\n%s", list.APIVersion, list.Kind, got, want, stdout)
	}
	if len(list.Items) > 0 {
		if runs := list.Items[0].Status.RecentRuns; len(runs) != 2 || runs[1].JobName != "nightly-20" || runs[1].Reason != "BackoffLimitExceeded" {
			t.Errorf("the CronJob's recentRuns are %+v, want the two recorded runs", runs)
		}
	}
	// JSON is the same List.
	_, stdout, _, _ = f.cli(t, "history", "nightly", "-o", "json")
	var fromJSON corev1.List
	if err := json.Unmarshal([]byte(stdout), &fromJSON); err != nil || fromJSON.Kind != "List" || len(fromJSON.Items) != 3 {
		t.Errorf("history -o json: %v, kind %q, %d items:\n%s", err, fromJSON.Kind, len(fromJSON.Items), stdout)
	}
}
