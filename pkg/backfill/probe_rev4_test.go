package backfill

import (
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

// Review rev4. A stray is a Job of the Backfill made for a time of the
// CronJob's old schedule ("30 * * * *", 03:30) whose status write was lost;
// the schedule is now "0 * * * *", so 03:00 is a named time before it that
// has no Job.

func strayJob(at time.Time, finished batchv1.JobConditionType) *testJob {
	j := backfillJob(at, finished)
	j.UID = types.UID("stray-" + at.Format("1504"))
	return j
}

// A Backfill deleted in the foreground creates nothing more, so its walk
// stops at 03:00 and never reaches the stray: the garbage collector has
// deleted the stray, whose backfill-record finalizer waits for a status
// that records it, and the Backfill waits (foregroundDeletion) for the Job.
// Both stay in Terminating forever.
func TestProbeRev4ForegroundDeleteStrandsAStray(t *testing.T) {
	cj := cronJob(hour(-1), ptr.To(hour(10)))
	bf := backfillOf(hour(3), hour(6), 1)
	bf.DeletionTimestamp = &metav1.Time{Time: hour(11)}
	bf.Finalizers = []string{metav1.FinalizerDeleteDependents}
	stray := strayJob(hour(3).Add(30*time.Minute), batchv1.JobComplete)
	stray.DeletionTimestamp = &metav1.Time{Time: hour(11)}
	st := bf.Status
	for range 5 {
		cur := bf.DeepCopy()
		cur.Status = st
		p := Decide(Input{Backfill: cur, CronJob: cj, Job: lookup(stray),
			Own: []OwnJob{{Job: stray, At: hour(3).Add(30 * time.Minute)}}, Now: hour(11)})
		if len(p.Creates) != 0 {
			t.Fatalf("a Backfill being deleted creates %v", createdTimes(p))
		}
		st = p.Status
	}
	if !Recorded(&st, stray, hour(3).Add(30*time.Minute)) {
		t.Errorf("the stray Job of 03:30 is never recorded (lastHandledTime %v): its finalizer never goes, so the foreground delete never ends", st.LastHandledTime)
	}
}

// The stray is still running, but it is not in status.active, so the walk
// creates 03:00 beside it: two Jobs of a Backfill with maxConcurrent 1.
func TestProbeRev4StrayIgnoresMaxConcurrent(t *testing.T) {
	cj := cronJob(hour(-1), ptr.To(hour(10)))
	bf := backfillOf(hour(3), hour(6), 1)
	stray := strayJob(hour(3).Add(30*time.Minute), "")
	p := Decide(Input{Backfill: bf, CronJob: cj, Job: lookup(stray),
		Own: []OwnJob{{Job: stray, At: hour(3).Add(30 * time.Minute)}}, Now: hour(11)})
	if len(p.Creates) != 0 {
		t.Errorf("with maxConcurrent 1 and the stray of 03:30 running, the sync creates %v", createdTimes(p))
	}
}
