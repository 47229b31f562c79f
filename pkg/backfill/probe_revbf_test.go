package backfill

import (
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	cronv1 "github.com/cronjob-controller/cronjob-controller/pkg/apis/batch/v1"
)

// A suspended Backfill still records a Job of its own that an earlier
// sync created but whose status write was lost, so the Job's finalizer
// can go once that status is stored (else, deleted, it would hang while
// the Backfill stays suspended).
func TestProbeSuspendedBackfillRecordsAnUnrecordedJob(t *testing.T) {
	cj := cronJob(hour(-1), ptr.To(hour(10)))
	bf := backfillOf(hour(3), hour(6), 1)
	bf.Spec.Suspend = ptr.To(true)
	j := backfillJob(hour(3), batchv1.JobComplete)
	j.DeletionTimestamp = &metav1.Time{Time: hour(11)}
	p := Decide(Input{Backfill: bf, CronJob: cj, Job: lookup(j), Now: hour(11)})
	if len(p.Creates) != 0 {
		t.Fatalf("a suspended Backfill creates %v", createdTimes(p))
	}
	if !Recorded(&p.Status, j, hour(3)) || p.Status.Created != 1 || p.Status.Succeeded != 1 {
		t.Errorf("status %+v does not record the Job of %v", p.Status, hour(3))
	}
}

// The CronJob's schedule is edited after a sync created the Job for a time
// of the old schedule and lost its status write. The new schedule never
// names that time, so no walk records the Job; once the range is done,
// lastHandledTime stays before it and Recorded never holds: deleted (TTL),
// the Job stays in Terminating while the Backfill lives.
func TestProbeScheduleEditStrandsAnUnrecordedJob(t *testing.T) {
	cj := cronJob(hour(-1), ptr.To(hour(10)))
	cj.Spec.Schedule = "30 * * * *" // was "0 * * * *" when the Job for 05:00 was made
	bf := backfillOf(hour(3), hour(6), 1)
	j := backfillJob(hour(5), batchv1.JobComplete)
	j.DeletionTimestamp = &metav1.Time{Time: hour(11)}
	st := bf.Status
	for range 5 { // every later sync, the Jobs of 03:30 and 04:30 long done
		p := Decide(Input{Backfill: &cronv1.Backfill{ObjectMeta: bf.ObjectMeta, Spec: bf.Spec, Status: st}, CronJob: cj,
			Job: lookup(j, doneBackfillJob(hour(3).Add(30*time.Minute)), doneBackfillJob(hour(4).Add(30*time.Minute))),
			Own: []OwnJob{{Job: j, At: hour(5)}}, Now: hour(11)})
		st = p.Status
	}
	if !Recorded(&st, j, hour(5)) {
		t.Errorf("the Job of %v is never recorded (lastHandledTime %v, active %v): its finalizer never goes", hour(5), st.LastHandledTime, st.Active)
	}
}

func doneBackfillJob(at time.Time) *testJob {
	j := backfillJob(at, batchv1.JobComplete)
	j.UID = types.UID("b-" + at.Format("1504"))
	return j
}

// Decide's early returns (CronJobNotFound, InvalidSchedule, TooManyTimes)
// skip the walk, the only place that records a Job of the Backfill that
// is not in status.active (its create's status write was lost, or the
// process died before it). Such a Job is never recorded, so never
// released: deleted (TTL), it hangs in Terminating while the Backfill
// stays (a CronJob deleted with --cascade=orphan, or edited to a schedule
// naming more than 1000 times in the range).
func TestProbeEarlyReturnsNeverRecordAnUnrecordedJob(t *testing.T) {
	dense := cronJob(hour(-1), ptr.To(hour(31)))
	dense.Spec.Schedule = "* * * * *" // was hourly: 27 times became 1620
	for name, cj := range map[string]*cronv1.CronJob{"cronjob gone": nil, "too many times": dense} {
		t.Run(name, func(t *testing.T) {
			bf := backfillOf(hour(3), hour(30), 1)
			j := backfillJob(hour(3), batchv1.JobComplete)
			j.DeletionTimestamp = &metav1.Time{Time: hour(31)}
			p := Decide(Input{Backfill: bf, CronJob: cj, Job: lookup(j), Own: []OwnJob{{Job: j, At: hour(3)}}, Now: hour(31)})
			if !Recorded(&p.Status, j, hour(3)) {
				t.Errorf("the Job of %v is not recorded (status %+v): its finalizer never goes", hour(3), p.Status)
			}
		})
	}
}
