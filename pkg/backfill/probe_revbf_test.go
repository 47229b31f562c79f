package backfill

import (
	"slices"
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

// With its CronJob gone for good (a Backfill with Jobs has an owner; a
// CronJob of the name made later is another), a Job whose create was
// never recorded is recorded at last, so its finalizer can go. With a
// schedule that names too many times (or none usable) the Job waits for
// the schedule to be usable again: recording it now could make a time of
// the fixed schedule be skipped. (Findings of the review, branch revbf.)
func TestEarlyReturnsAndUnrecordedJobs(t *testing.T) {
	dense := cronJob(hour(-1), ptr.To(hour(31)))
	dense.Spec.Schedule = "* * * * *" // was hourly: 27 times became 1620
	for _, tc := range []struct {
		name     string
		cj       *cronv1.CronJob
		recorded bool
	}{
		{"cronjob gone", nil, true},
		{"too many times", dense, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bf := backfillOf(hour(3), hour(30), 1)
			j := backfillJob(hour(3), batchv1.JobComplete)
			j.DeletionTimestamp = &metav1.Time{Time: hour(31)}
			p := Decide(Input{Backfill: bf, CronJob: tc.cj, Job: lookup(j), Own: []OwnJob{{Job: j, At: hour(3)}}, Now: hour(31)})
			if got := Recorded(&p.Status, j, hour(3)); got != tc.recorded {
				t.Errorf("the Job of %v recorded: %v, want %v (status %+v)", hour(3), got, tc.recorded, p.Status)
			}
		})
	}
}

// A Job made for a time the edited schedule no longer names is recorded
// where its time falls: the new schedule's earlier times are created
// first, none skipped.
func TestStrayJobSkipsNoTime(t *testing.T) {
	cj := cronJob(hour(-1), ptr.To(hour(10)))
	cj.Spec.Schedule = "0,30 * * * *" // was "15 * * * *" when the Job of 03:15 was made
	bf := backfillOf(hour(3), hour(5), 5)
	stray := backfillJob(hour(3).Add(15*time.Minute), batchv1.JobComplete)
	stray.UID = "stray"
	own := []OwnJob{{Job: stray, At: hour(3).Add(15 * time.Minute)}}
	p := Decide(Input{Backfill: bf, CronJob: cj, Job: lookup(stray), Own: own, Now: hour(11)})
	if got := createdTimes(p); len(got) != 1 || !got[0].Equal(hour(3)) {
		t.Fatalf("first sync creates %v, want only 03:00 (the stray at 03:15 after it waits)", got)
	}
	if p.Status.Created != 0 {
		t.Fatalf("first sync counted %d created before its create was made", p.Status.Created)
	}
	first := backfillJob(hour(3), "")
	p.Created(p.Creates[0], first)
	bf.Status = p.Status
	p = Decide(Input{Backfill: bf, CronJob: cj, Job: lookup(stray, first), Own: append(own, OwnJob{Job: first, At: hour(3)}), Now: hour(11)})
	want := []time.Time{hour(3).Add(30 * time.Minute), hour(4), hour(4).Add(30 * time.Minute)}
	if got := createdTimes(p); !slices.EqualFunc(got, want, time.Time.Equal) {
		t.Errorf("second sync creates %v, want %v", got, want)
	}
	if p.Status.Created != 2 || p.Status.Succeeded != 1 || !Recorded(&p.Status, stray, hour(3).Add(15*time.Minute)) {
		t.Errorf("status %+v: want the stray counted (created 2: 03:00 and the stray; succeeded 1) and recorded", p.Status)
	}
}
