package planner

import (
	"slices"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	cronv1 "github.com/cronjob-controller/cronjob-controller/pkg/apis/batch/v1"
	"github.com/cronjob-controller/cronjob-controller/pkg/job"
)

// manualJob is the Job of request seq (0: named before requests were
// numbered), value key after the value handled before it, finished.
func manualJob(after, key string, seq int64) *fakeJob {
	name := job.ManualName("cj", "cj-uid", after, key, seq)
	return &fakeJob{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID("uid-" + name)},
		manual: true, started: &metav1.Time{Time: at(-time.Hour)}, complete: &metav1.Time{Time: at(-time.Hour + time.Minute)},
		finished: batchv1.JobComplete}
}

// unrecorded gives j the run-record finalizer and its run-now annotations,
// as a Job has them until a written status records its run; seq 0 is a Job
// made before requests were numbered.
func unrecorded(j *fakeJob, after, key string, seq int64) *fakeJob {
	holding(j)
	j.runNowKey, j.runNowAfter, j.runNowSeq, j.hasRunNow = key, after, seq, true
	return j
}

func handled(last string, count int64) func(*cronv1.CronJob) {
	return func(cj *cronv1.CronJob) { cj.Status.LastRunNow, cj.Status.RunNowCount = last, count }
}

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

func runNowValue(v string) func(*cronv1.CronJob) {
	return func(cj *cronv1.CronJob) { cj.Annotations = map[string]string{cronv1.RunNowAnnotation: v} }
}

// A walk A, B, A, B, A through Decide, each Job started (or its value
// refused for good) and recorded: every change is one request with a Job
// name of its own, and a Job's finalizer goes once a written status
// records it.
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
			j := unrecorded(&fakeJob{ObjectMeta: metav1.ObjectMeta{Name: c.Job.Name, Namespace: "default", UID: types.UID("uid-" + c.Job.Name)}, manual: true},
				after, key, c.Seq)
			p.Started(c, j, true)
			jobs = append(jobs, j)
		}
		if p.Status.RunNowCount != int64(i+1) || p.Status.LastRunNow != v {
			t.Fatalf("change %d: handled %q, count %d", i+1, p.Status.LastRunNow, p.Status.RunNowCount)
		}
		written := p.Status.DeepCopy()
		cj.Status = *written
		rel, _ := Releases(cj, jobs, written)
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
