package planner

import (
	"fmt"
	"hash/fnv"
	"slices"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	cronv1 "github.com/cronjob-controller/cronjob-controller/pkg/apis/batch/v1"
	"github.com/cronjob-controller/cronjob-controller/pkg/job"
)

// Each change of the run-now value is one request, numbered by
// status.runNowCount: a value set back to one used before starts a Job
// even when the value before it repeats too, and a request whose Job was
// made before its status was written (by this version or, unnumbered, an
// earlier one) does not start again.
func TestDecideRunNowRequests(t *testing.T) {
	// A -> B -> A handled and recorded, their Jobs kept in history.
	aba := func() []Job {
		return []Job{manualJob("", "A", 1), manualJob("A", "B", 2), manualJob("B", "A", 3)}
	}
	cases := []struct {
		name        string
		cronJob     *cronv1.CronJob
		jobs        []Job
		wantCreate  string // "" for none
		wantHandled runNowState
	}{
		{
			name:    "A, B, A, B: the fourth change starts a Job of its own though the second's is in history",
			cronJob: cronJob(last(at(-time.Hour)), runNowValue("B"), handled("A", 3)),
			jobs:    aba(), wantCreate: job.ManualName("cj", "cj-uid", "A", "B", 4), wantHandled: runNowState{"B", 4},
		},
		{
			name:    "A, B, A, B, the status write after the fourth's create lost: no second Job",
			cronJob: cronJob(last(at(-time.Hour)), runNowValue("B"), handled("A", 3)),
			jobs:    append(aba(), unrecorded(manualJob("A", "B", 4), "A", "B", 4)), wantHandled: runNowState{"B", 4},
		},
		{
			name:    "the fourth's Job found by its name alone (its finalizer taken off by hand): no second Job",
			cronJob: cronJob(last(at(-time.Hour)), runNowValue("B"), handled("A", 3)),
			jobs:    append(aba(), manualJob("A", "B", 4)), wantHandled: runNowState{"B", 4},
		},
		{
			name:    "no status written since A: the chain of unrecorded Jobs, out of order, counts four",
			cronJob: cronJob(last(at(-time.Hour)), runNowValue("B")),
			jobs: []Job{unrecorded(manualJob("A", "B", 4), "A", "B", 4), unrecorded(manualJob("", "A", 1), "", "A", 1),
				unrecorded(manualJob("B", "A", 3), "B", "A", 3), unrecorded(manualJob("A", "B", 2), "A", "B", 2)},
			wantHandled: runNowState{"B", 4},
		},
		{
			name:    "no status written since A, B, A: the fourth starts after the chain",
			cronJob: cronJob(last(at(-time.Hour)), runNowValue("B")),
			jobs: []Job{unrecorded(manualJob("", "A", 1), "", "A", 1), unrecorded(manualJob("A", "B", 2), "A", "B", 2),
				unrecorded(manualJob("B", "A", 3), "B", "A", 3)},
			wantCreate: job.ManualName("cj", "cj-uid", "A", "B", 4), wantHandled: runNowState{"B", 4},
		},
		{
			name:    "a recorded Job whose finalizer is not released yet is no request of the chain",
			cronJob: cronJob(last(at(-time.Hour)), runNowValue("B"), handled("A", 3)),
			jobs: []Job{manualJob("", "A", 1), unrecorded(manualJob("A", "B", 2), "A", "B", 2),
				unrecorded(manualJob("B", "A", 3), "B", "A", 3)},
			wantCreate: job.ManualName("cj", "cj-uid", "A", "B", 4), wantHandled: runNowState{"B", 4},
		},
		{
			name:    "upgrade: a request pending from an earlier version (unnumbered Job on the chain) does not start again",
			cronJob: cronJob(last(at(-time.Hour)), runNowValue("B"), handled("A", 0)),
			jobs:    []Job{manualJob("", "A", 0), unrecorded(manualJob("A", "B", 0), "A", "B", 0)}, wantHandled: runNowState{"B", 1},
		},
		{
			name:    "upgrade: a request pending from before run-now annotations on Jobs (finalizer only) does not start again",
			cronJob: cronJob(last(at(-time.Hour)), runNowValue("B"), handled("A", 0)),
			jobs:    []Job{manualJob("", "A", 0), holding(manualJob("A", "B", 0))}, wantHandled: runNowState{"B", 1},
		},
		{
			name:       "upgrade: an earlier version's Job of the same pair, recorded long ago, is no reason not to start",
			cronJob:    cronJob(last(at(-time.Hour)), runNowValue("B"), handled("A", 0)),
			jobs:       []Job{manualJob("", "A", 0), manualJob("A", "B", 0), manualJob("B", "A", 0)},
			wantCreate: job.ManualName("cj", "cj-uid", "A", "B", 1), wantHandled: runNowState{"B", 1},
		},
		{
			name:    "the value handled: nothing, the count kept",
			cronJob: cronJob(last(at(-time.Hour)), runNowValue("B"), handled("B", 4)),
			jobs:    append(aba(), manualJob("A", "B", 4)), wantHandled: runNowState{"B", 4},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := Decide(Input{CronJob: tc.cronJob, Jobs: tc.jobs, Now: at(-30 * time.Minute)})
			var manual []string
			for _, c := range p.Creates {
				if c.Manual {
					manual = append(manual, c.Job.Name)
					if c.Job.Annotations[cronv1.RunNowSeqAnnotation] == "" {
						t.Errorf("Job %s carries no request number", c.Job.Name)
					}
				}
			}
			var want []string
			if tc.wantCreate != "" {
				want = []string{tc.wantCreate}
			}
			if !slices.Equal(manual, want) {
				t.Errorf("manual creates %q, want %q", manual, want)
			}
			startAll(p)
			if got := (runNowState{p.Status.LastRunNow, p.Status.RunNowCount}); got != tc.wantHandled {
				t.Errorf("handled %+v, want %+v", got, tc.wantHandled)
			}
		})
	}
}

// A walk A, B, A, B, A through Decide, each Job started (or its value
// refused for good), finished and recorded: every change is one request
// with a Job name of its own, and a Job's finalizer goes once a written
// status records it and it finished.
func TestDecideRunNowBackAndForthWalk(t *testing.T) {
	cj := cronJob(last(at(-time.Hour)))
	var jobs []Job
	var names []string
	for i, v := range []string{"A", "B", "A", "B", "A"} {
		cj.Annotations = map[string]string{cronv1.RunNowAnnotation: v}
		p := Decide(Input{CronJob: cj, Jobs: jobs, Now: at(-30 * time.Minute)})
		if len(p.Creates) != 1 || !p.Creates[0].Manual {
			t.Fatalf("change %d to %s: creates %+v", i+1, v, p.Creates)
		}
		c := p.Creates[0]
		names = append(names, c.Job.Name)
		if i == 2 {
			// Refused for good is handled too: it takes its number.
			p.NotStarted(c, Rejected, "no")
		} else {
			key, after := c.Job.Annotations[cronv1.RunNowKeyAnnotation], c.Job.Annotations[cronv1.RunNowAfterAnnotation]
			j := unrecorded(&fakeJob{ObjectMeta: metav1.ObjectMeta{Name: c.Job.Name, Namespace: "default", UID: types.UID("uid-" + c.Job.Name)}, manual: true,
				finished: batchv1.JobComplete}, after, key, c.Seq)
			p.Started(c, j, true)
			jobs = append(jobs, j)
		}
		if p.Status.RunNowCount != int64(i+1) || p.Status.LastRunNow != v {
			t.Fatalf("change %d: handled %q, count %d", i+1, p.Status.LastRunNow, p.Status.RunNowCount)
		}
		written := p.Status.DeepCopy()
		cj.Status = *written
		rel, _ := Releases(cj, jobs, written, nil)
		for _, r := range rel {
			i := slices.IndexFunc(jobs, func(j Job) bool { return j.GetUID() == r.UID })
			f := jobs[i].(*fakeJob)
			f.Finalizers, f.hasRunNow = nil, false
		}
		for _, j := range jobs {
			if job.HoldsRunRecord(j) {
				t.Errorf("change %d: %s not released though the written status records it", i+1, j.GetName())
			}
		}
	}
	if distinct := slices.Compact(slices.Sorted(slices.Values(names))); len(distinct) != len(names) {
		t.Errorf("names %q repeat", names)
	}
}

// "Each distinct value starts one Job, also across controller restarts"
// (README). A -> B -> A: whether A runs a second time depends on whether its
// first Job is still in the history.
func TestRunNowRepeatDoesNotDependOnKeptJobs(t *testing.T) {
	decide := func(aJobKept bool) int {
		cj := cronJob(last(at(-time.Hour)), func(cj *cronv1.CronJob) {
			cj.Annotations = map[string]string{cronv1.RunNowAnnotation: "A"}
			cj.Status.LastRunNow = "B"
		})
		var jobs []Job
		if aJobKept {
			name := job.ManualName("cj", "cj-uid", "", "A", 0)
			jobs = append(jobs, &fakeJob{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: "uid-a"}, manual: true, finished: batchv1.JobComplete})
		}
		return len(Decide(Input{CronJob: cj, Jobs: jobs, Now: at(-30 * time.Minute)}).Creates)
	}
	kept, pruned := decide(true), decide(false)
	if kept != pruned {
		t.Errorf("run-now A->B->A: %d Jobs when A's first Job is still kept, %d when it was pruned", kept, pruned)
	}
}

// Two distinct run-now values whose FNV-32a hashes collide (as the names
// once used) get Jobs of their own.
func TestRunNowHashCollisionStartsItsOwnJob(t *testing.T) {
	a, b := fnvCollision(t)
	if job.ManualName("cj", "cj-uid", "", a, 0) == job.ManualName("cj", "cj-uid", a, b, 0) || job.ManualName("cj", "cj-uid", "", a, 0) == job.ManualName("cj", "cj-uid", "", b, 0) {
		t.Fatalf("%q and %q get the same Job name", a, b)
	}
	aJob := &fakeJob{ObjectMeta: metav1.ObjectMeta{Name: job.ManualName("cj", "cj-uid", "", a, 0), Namespace: "default", UID: "uid-a"}, manual: true, finished: batchv1.JobComplete}
	cj := cronJob(last(at(-time.Hour)), func(cj *cronv1.CronJob) {
		cj.Annotations = map[string]string{cronv1.RunNowAnnotation: b}
		cj.Status.LastRunNow = a
	})
	p := Decide(Input{CronJob: cj, Jobs: []Job{aJob}, Now: at(-30 * time.Minute)})
	if len(p.Creates) == 0 {
		t.Errorf("run-now %q (distinct from the handled %q) silently never runs: status.lastRunNow=%q, no Job, no Event %v",
			b, a, p.Status.LastRunNow, p.Events)
	}
}

// fnvCollision finds two unix-timestamp run-now values, as the README's
// `date +%s` makes them, with the same FNV-32a hash.
func fnvCollision(t *testing.T) (string, string) {
	seen := map[uint32]string{}
	for v := int64(1777000000); v < 1777000000+1<<20; v++ {
		s := fmt.Sprint(v)
		h := fnv.New32a()
		h.Write([]byte(s))
		sum := h.Sum32()
		if prev, ok := seen[sum]; ok {
			return prev, s
		}
		seen[sum] = s
	}
	t.Skip("no collision in range")
	return "", ""
}

// A new run-now value while the previous value's Job still runs: one more
// Job, whatever the policy; the same value again: none.
func TestRunNowChangeWhileActiveStartsOneJob(t *testing.T) {
	for _, pol := range []cronv1.ConcurrencyPolicy{cronv1.AllowConcurrent, cronv1.ForbidConcurrent, cronv1.ReplaceConcurrent} {
		a := &fakeJob{ObjectMeta: metav1.ObjectMeta{Name: job.ManualName("cj", "cj-uid", "", "A", 0), Namespace: "default", UID: "uid-a"}, manual: true}
		cj := cronJob(last(at(-time.Hour)), concurrency(pol), active(a), func(cj *cronv1.CronJob) {
			cj.Annotations = map[string]string{cronv1.RunNowAnnotation: "B"}
			cj.Status.LastRunNow = "A"
		})
		p := Decide(Input{CronJob: cj, Jobs: []Job{a}, Now: at(-30 * time.Minute)})
		if len(p.Creates) != 1 || !p.Creates[0].Manual || len(p.Deletes) != 0 {
			t.Errorf("%s: creates %+v deletes %+v", pol, p.Creates, p.Deletes)
		}
		startAll(p)
		cj.Status = p.Status
		b := &fakeJob{ObjectMeta: metav1.ObjectMeta{Name: job.ManualName("cj", "cj-uid", "A", "B", 1), Namespace: "default", UID: "uid-" + types.UID(job.ManualName("cj", "cj-uid", "A", "B", 1))}, manual: true}
		if p := Decide(Input{CronJob: cj, Jobs: []Job{a, b}, Now: at(-29 * time.Minute)}); len(p.Creates) != 0 {
			t.Errorf("%s: B again: creates %+v", pol, p.Creates)
		}
	}
}

// The same, after a crash: the restarted controller reads lastRunNow "" and
// annotation "b", finds the Job of "b" (named after "a"), and must not start
// "b" a second time.
func TestRunNowChangedBeforeWriteStartsNoSecondJobAfterRestart(t *testing.T) {
	cj := cronJob(last(at(0)), func(cj *cronv1.CronJob) {
		cj.Annotations = map[string]string{cronv1.RunNowAnnotation: "b"}
	})
	ja := unrecordedManual("", "a", "uid-a")
	jb := unrecordedManual("a", "b", "uid-b")
	p := Decide(Input{CronJob: cj, Jobs: []Job{ja, jb}, Now: at(time.Minute)})
	for _, c := range p.Creates {
		if c.Manual {
			t.Errorf("creates %s for run-now value b, whose Job %s exists: b runs twice", c.Job.Name, jb.Name)
		}
	}
}

// Under Replace a run-now is a request by hand, not a scheduled run: it
// replaces nothing, so the scheduled Job still running is not deleted. The
// next scheduled run replaces every active Job, the run-now one included:
// Replace means a scheduled run never overlaps an earlier Job.
func TestReplaceRunNowDeletesNoScheduledJobAndTheNextRunDeletesIt(t *testing.T) {
	nine := runOf(at(-time.Hour), "")
	cj := cronJob(last(at(-time.Hour)), concurrency(cronv1.ReplaceConcurrent), active(nine), runNowValue("now"))
	p := Decide(Input{CronJob: cj, Jobs: []Job{nine}, Now: at(-30 * time.Minute)})
	if len(p.Creates) != 1 || !p.Creates[0].Manual || len(p.Deletes) != 0 {
		t.Fatalf("run-now at 09:30: creates %q, deletes %q; want the run-now Job alone, nothing deleted",
			names(p.Creates, func(c Create) string { return c.Job.Name }), names(p.Deletes, func(d Delete) string { return d.Name }))
	}
	made := startAll(p)
	cj.Status = p.Status

	p = Decide(Input{CronJob: cj, Jobs: []Job{nine, made[0]}, Now: at(time.Second)})
	deleted := names(p.Deletes, func(d Delete) string { return string(d.Reason) + " " + d.Name })
	slices.Sort(deleted)
	want := []string{string(DeleteReplace) + " " + made[0].Name, string(DeleteReplace) + " " + nine.Name}
	slices.Sort(want)
	if !slices.Equal(deleted, want) {
		t.Errorf("10:00 under Replace deletes %q, want the 09:00 Job and the run-now Job %q", deleted, want)
	}
	if got := names(p.Creates, func(c Create) string { return c.Job.Name }); !slices.Equal(got, hours(10)) {
		t.Errorf("10:00 creates %q, want the 10:00 run alone", got)
	}
}

// A run-now value, a schedule edit and suspend seen in one sync give one
// Job: the run-now one (a request by hand runs whatever suspend says).
// The edit names 10:00 too, so were suspend overlooked the 10:00 run would
// start beside it; and once started, the same sync state again starts none.
func TestRunNowScheduleEditAndSuspendInOneSyncStartOneJob(t *testing.T) {
	cj := cronJob(last(at(-time.Hour)), seen("0 * * * *", "UTC"), sched("0 */2 * * *"), runNowValue("now"),
		func(cj *cronv1.CronJob) { cj.Spec.Suspend = new(true) })
	p := Decide(Input{CronJob: cj, Now: at(time.Second)})
	if len(p.Creates) != 1 || !p.Creates[0].Manual {
		t.Fatalf("creates %q, want exactly the run-now Job", names(p.Creates, func(c Create) string { return c.Job.Name }))
	}
	if p.Status.ResolvedSchedule != "0 */2 * * *" {
		t.Errorf("resolvedSchedule %q: the edit was not taken in the same sync", p.Status.ResolvedSchedule)
	}
	made := startAll(p)
	cj.Status = p.Status
	if p := Decide(Input{CronJob: cj, Jobs: asJobs(made), Now: at(2 * time.Second)}); len(p.Creates) != 0 {
		t.Errorf("the next sync creates %q, want nothing", names(p.Creates, func(c Create) string { return c.Job.Name }))
	}
}
