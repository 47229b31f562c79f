package backfill

// spec.rerunPolicy: what a Backfill does with a time of its range that has
// already run.

import (
	"slices"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	cronv1 "github.com/cronjob-controller/cronjob-controller/pkg/apis/batch/v1"
	"github.com/cronjob-controller/cronjob-controller/pkg/job"
)

// ranBefore is a CronJob past hour(5) whose 01:00 and 02:00 Jobs were
// pruned, its run history recording 01:00 succeeded and 02:00 failed; its
// 03:00 Job failed and is kept, its 04:00 Job still runs. 00:00 ran too,
// but neither a Job nor the history (runHistoryLimit) keeps it.
func ranBefore() (*cronv1.CronJob, func(string) (Job, bool)) {
	last := hour(5)
	cj := cronJob(hour(-1), &last)
	cj.Status.RecentRuns = []cronv1.RunRecord{
		{JobName: job.Name("cj", hour(4)), Trigger: cronv1.TriggerScheduled, ScheduledTime: &metav1.Time{Time: hour(4)}, Outcome: cronv1.OutcomeRunning},
		{JobName: job.Name("cj", hour(3)), Trigger: cronv1.TriggerScheduled, ScheduledTime: &metav1.Time{Time: hour(3)}, Outcome: cronv1.OutcomeFailed},
		{JobName: job.Name("cj", hour(2)), Trigger: cronv1.TriggerScheduled, ScheduledTime: &metav1.Time{Time: hour(2)}, Outcome: cronv1.OutcomeFailed},
		{JobName: job.Name("cj", hour(1)), Trigger: cronv1.TriggerScheduled, ScheduledTime: &metav1.Time{Time: hour(1)}, Outcome: cronv1.OutcomeSucceeded},
	}
	failed := scheduledJob(hour(3))
	failed.finished = batchv1.JobFailed
	return cj, lookup(failed, scheduledJob(hour(4)))
}

func withPolicy(bf *cronv1.Backfill, policy cronv1.RerunPolicy) *cronv1.Backfill {
	bf.Spec.RerunPolicy = policy
	return bf
}

func createdNames(p *Plan) []string {
	var names []string
	for _, c := range p.Creates {
		names = append(names, c.Job.Name)
	}
	return names
}

// makeAll reports every planned create made, as the controller would.
func makeAll(p *Plan) {
	for i, c := range slices.Clone(p.Creates) {
		made := c.Job.DeepCopy()
		made.UID = types.UID("made-" + string(rune('a'+i)))
		p.Created(c, made)
	}
}

// Under the default policy a time the CronJob ran is not run again once
// its Job is pruned: the run history says it ran. Only the time nothing
// shows ran (00:00) is created, named as the scheduled run.
func TestAPrunedRunTheHistoryRecordsIsNotRunAgain(t *testing.T) {
	cj, jobs := ranBefore()
	for _, policy := range []cronv1.RerunPolicy{"", cronv1.RerunNever} {
		bf := withPolicy(backfillOf(hour(0), hour(5), 10), policy)
		p := Decide(Input{Backfill: bf, CronJob: cj, Job: jobs, Now: hour(6)})
		if got, want := createdNames(p), []string{job.Name("cj", hour(0))}; !slices.Equal(got, want) {
			t.Fatalf("policy %q creates %v, want %v", policy, got, want)
		}
		makeAll(p)
		// The times after a create are handled by the next sync, so that
		// lastHandledTime moves past them in order.
		bf.Status = p.Status
		p = Decide(Input{Backfill: bf, CronJob: cj, Job: jobs, Now: hour(6)})
		if len(p.Creates) != 0 {
			t.Fatalf("policy %q: the next sync creates %v", policy, createdNames(p))
		}
		if st := p.Status; st.Created != 1 || st.Skipped != 4 || st.Rerun != 0 || !st.LastHandledTime.Time.Equal(hour(4)) {
			t.Errorf("policy %q: status %+v, want 1 created, 4 skipped", policy, st)
		}
		var alreadyRun []string
		for _, e := range p.Events {
			if e.Reason == ReasonAlreadyRun {
				alreadyRun = append(alreadyRun, e.Message)
			}
		}
		if len(alreadyRun) != 2 || !strings.Contains(alreadyRun[0], "job "+job.Name("cj", hour(1))+", Succeeded") || !strings.Contains(alreadyRun[0], "rerunPolicy is Never") {
			t.Errorf("policy %q: AlreadyRun events %q, want one for each pruned run naming its Job and outcome", policy, alreadyRun)
		}
		settle(t, Input{Backfill: bf, CronJob: cj, Job: jobs, Now: hour(6)}, p)
	}
}

// IfFailed runs again the times whose run failed, as the run history
// records it (02:00, Job pruned) or as the Job shows it (03:00), each in a
// Job named for the Backfill; the succeeded run is skipped; the running one
// is waited for, and skipped once it succeeds.
func TestIfFailedRunsAgainOnlyTheFailedTimes(t *testing.T) {
	cj, jobs := ranBefore()
	bf := withPolicy(backfillOf(hour(0), hour(5), 10), cronv1.RerunIfFailed)
	var got []string
	var p *Plan
	for range 3 { // a sync stops at a skip after a create
		p = Decide(Input{Backfill: bf, CronJob: cj, Job: jobs, Now: hour(6)})
		got = append(got, createdNames(p)...)
		for _, c := range p.Creates {
			if at, _ := job.ScheduledAt(c.Job); !at.Equal(c.Time) {
				t.Errorf("Job %s is annotated for %v, want %v", c.Job.Name, at, c.Time)
			}
		}
		makeAll(p)
		bf.Status = p.Status
	}
	want := []string{job.Name("cj", hour(0)), job.RerunName("cj", bf.UID, hour(2)), job.RerunName("cj", bf.UID, hour(3))}
	if !slices.Equal(got, want) {
		t.Fatalf("creates %v, want %v", got, want)
	}
	if st := p.Status; st.Created != 3 || st.Rerun != 2 || st.Skipped != 1 || !st.LastHandledTime.Time.Equal(hour(3)) {
		t.Errorf("status %+v, want 3 created (2 of them run again), 1 skipped, handled to 03:00", st)
	}

	// 04:00 still runs: nothing more until it has finished. It succeeds:
	// skipped.
	bf.Status = p.Status
	p = Decide(Input{Backfill: bf, CronJob: cj, Job: jobs, Now: hour(6)})
	if len(p.Creates) != 0 || !p.Status.LastHandledTime.Time.Equal(hour(3)) {
		t.Fatalf("creates %v, handled to %v while 04:00's run still runs", createdNames(p), p.Status.LastHandledTime)
	}
	four := scheduledJob(hour(4))
	four.finished = batchv1.JobComplete
	p = Decide(Input{Backfill: bf, CronJob: cj, Job: lookup(four), Now: hour(7)})
	if len(p.Creates) != 0 || p.Status.Skipped != 2 || !p.Status.LastHandledTime.Time.Equal(hour(4)) {
		t.Errorf("after 04:00 succeeded: creates %v, status %+v; want it skipped", createdNames(p), p.Status)
	}
}

// Always runs every time again, each once its earlier run has finished;
// while one still runs and nothing else is to do, the condition says so.
func TestAlwaysRunsEveryTimeAgainOnceItsRunHasFinished(t *testing.T) {
	cj, jobs := ranBefore()
	bf := withPolicy(backfillOf(hour(0), hour(5), 10), cronv1.RerunAlways)
	p := Decide(Input{Backfill: bf, CronJob: cj, Job: jobs, Now: hour(6)})
	want := []string{job.Name("cj", hour(0)), job.RerunName("cj", bf.UID, hour(1)), job.RerunName("cj", bf.UID, hour(2)), job.RerunName("cj", bf.UID, hour(3))}
	if got := createdNames(p); !slices.Equal(got, want) {
		t.Fatalf("creates %v, want %v", got, want)
	}
	makeAll(p)
	bf.Status = p.Status
	for i := range bf.Status.Active {
		bf.Status.Active[i].Name = "done" // finished and counted
	}
	bf.Status.Active = nil

	p = Decide(Input{Backfill: bf, CronJob: cj, Job: jobs, Now: hour(6)})
	c := meta.FindStatusCondition(p.Status.Conditions, cronv1.ConditionBackfillComplete)
	if len(p.Creates) != 0 || c == nil || c.Reason != ReasonWaitingForRun || !strings.Contains(c.Message, job.Name("cj", hour(4))) {
		t.Fatalf("creates %v, condition %+v; want none, WaitingForEarlierRun naming 04:00's Job", createdNames(p), c)
	}
	four := scheduledJob(hour(4))
	four.finished = batchv1.JobComplete
	p = Decide(Input{Backfill: bf, CronJob: cj, Job: lookup(four), Now: hour(7)})
	if got, want := createdNames(p), []string{job.RerunName("cj", bf.UID, hour(4))}; !slices.Equal(got, want) {
		t.Errorf("after 04:00 finished: creates %v, want %v", got, want)
	}
}

// A run again made by a sync whose status write was lost is found by its
// name: counted as created and run again, never made a second time.
func TestARunAgainIsMadeOnceThroughALostStatusWrite(t *testing.T) {
	cj, jobs := ranBefore()
	bf := withPolicy(backfillOf(hour(2), hour(3), 10), cronv1.RerunIfFailed)
	p := Decide(Input{Backfill: bf, CronJob: cj, Job: jobs, Now: hour(6)})
	if len(p.Creates) != 1 {
		t.Fatalf("creates %v, want 02:00 run again", createdNames(p))
	}
	made := &testJob{ObjectMeta: *p.Creates[0].Job.ObjectMeta.DeepCopy()}
	made.UID = "rerun-02"
	// The status write is lost: the next sync sees the Job, not the status.
	again := Decide(Input{Backfill: bf, CronJob: cj, Job: lookup(made), Now: hour(6)})
	if len(again.Creates) != 0 {
		t.Fatalf("the run again is made a second time: %v", createdNames(again))
	}
	if st := again.Status; st.Created != 1 || st.Rerun != 1 || len(st.Active) != 1 || !st.LastHandledTime.Time.Equal(hour(2)) {
		t.Errorf("status %+v, want the Job counted as created, run again and active", st)
	}
}

// Two Backfills running one time again get a Job each, and one Backfill
// never two: the name is a lock per Backfill and time.
func TestEachBackfillRunsATimeAgainUnderItsOwnName(t *testing.T) {
	a, b := job.RerunName("cj", "bf-a", hour(2)), job.RerunName("cj", "bf-b", hour(2))
	if a == b || a != job.RerunName("cj", "bf-a", hour(2)) || a == job.RerunName("cj", "bf-a", hour(3)) {
		t.Errorf("names %q, %q: want one per Backfill and time, the same each time", a, b)
	}
	if a == job.Name("cj", hour(2)) || job.CronJobNameOf(a) != "cj" {
		t.Errorf("name %q: want it apart from the scheduled run's and naming the CronJob", a)
	}
	long := strings.Repeat("c", 52)
	if n := job.RerunName(long, "bf-a", time.Date(2286, 1, 1, 0, 0, 0, 0, time.UTC)); len(n) > 63 {
		t.Errorf("name %q is %d characters, more than a Job name may be", n, len(n))
	}
}

// The create of a time's first run meets a run of the time the cache did
// not show (AlreadyExists; with -shards the cache may never show it).
// Under IfFailed a run that succeeded is skipped there and then, one that
// failed is run again right after, before the later times; one still
// running leaves the time to a later sync and stops the sync's later
// creates. None is skipped as under Never.
func TestIfFailedJudgesARunItsCreateMet(t *testing.T) {
	last := hour(5)
	cj := cronJob(hour(-1), &last)
	for _, tc := range []struct {
		finished batchv1.JobConditionType
		handled  bool
		creates  []string // the plan's creates after the first
		skipped  int32
	}{
		{batchv1.JobComplete, true, []string{job.Name("cj", hour(5))}, 1},
		{batchv1.JobFailed, true, []string{job.RerunName("cj", "bf-uid", hour(4)), job.Name("cj", hour(5))}, 0},
		{"", false, []string{job.Name("cj", hour(5))}, 0},
	} {
		bf := withPolicy(backfillOf(hour(4), hour(6), 10), cronv1.RerunIfFailed)
		p := Decide(Input{Backfill: bf, CronJob: cj, Job: lookup(), Now: hour(6)})
		if len(p.Creates) != 2 {
			t.Fatalf("creates %v, want 04:00 and 05:00", createdNames(p))
		}
		met := scheduledJob(hour(4))
		met.finished = tc.finished
		if got := p.Exists(p.Creates[0], met); got != tc.handled {
			t.Errorf("a run %q met: the sync goes on: %v, want %v", tc.finished, got, tc.handled)
		}
		if got := createdNames(p)[1:]; !slices.Equal(got, tc.creates) {
			t.Errorf("a run %q met: creates after it %v, want %v", tc.finished, got, tc.creates)
		}
		if st := p.Status; st.Skipped != tc.skipped || st.Created != 0 {
			t.Errorf("a run %q met: status %+v, want %d skipped", tc.finished, st, tc.skipped)
		}
		if again := p.Creates[1]; tc.finished == batchv1.JobFailed {
			if at, _ := job.ScheduledAt(again.Job); !at.Equal(hour(4)) || !again.Time.Equal(hour(4)) || metav1.GetControllerOf(again.Job).UID != bf.UID {
				t.Errorf("the run again %+v is not the Backfill's Job of 04:00", again.Job.ObjectMeta)
			}
		}
	}
}
