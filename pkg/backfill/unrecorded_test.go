package backfill

// A Job the Backfill created whose status write was lost is still recorded
// by a later sync (counted, and its backfill-record finalizer let go), and
// still counts as the Backfill's: it is the only record of its time.

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

// A sync plans 03:00, 04:00 and 05:00 (maxConcurrent 3; the Job cache does
// not show the CronJob's own Job of 04:00 yet). 03:00 is created, 04:00's
// name is taken by the CronJob's run (skipped), 05:00 is created; the
// status write is lost. The next sync adopts 03:00 and 05:00 from their
// Jobs and moves lastHandledTime past 04:00; no run is dropped (04:00 ran as
// the CronJob's), and status.skipped, which the README says counts such a
// time, must count 04:00 too, or the Completed message would say "3 times:
// 2 created ..., 0 skipped".
func TestAdoptionKeepsTheSkippedCount(t *testing.T) {
	cj := cronJob(hour(-1), ptr.To(hour(10)))
	bf := backfillOf(hour(3), hour(6), 3)
	s4 := scheduledJob(hour(4))
	p := Decide(Input{Backfill: bf, CronJob: cj, Job: lookup(), Now: hour(11)})
	if got := createdTimes(p); len(got) != 3 {
		t.Fatalf("planned %v, want 03:00, 04:00, 05:00", got)
	}
	j3, j5 := backfillJob(hour(3), ""), backfillJob(hour(5), "")
	j3.UID, j5.UID = types.UID("b-03"), types.UID("b-05")
	p.Created(p.Creates[0], j3)
	p.Exists(p.Creates[1], s4)
	p.Created(p.Creates[2], j5)
	if p.Status.Skipped != 1 {
		t.Fatalf("the first sync counts %d skipped", p.Status.Skipped)
	}
	// Its status write is lost: the next sync starts from the old status.
	j3.finished, j5.finished = batchv1.JobComplete, batchv1.JobComplete
	p = Decide(Input{Backfill: bf, CronJob: cj, Job: lookup(j3, s4, j5),
		Own: []OwnJob{{Job: j3, At: hour(3)}, {Job: j5, At: hour(5)}}, Now: hour(11)})
	st := p.Status
	if st.Created+st.Skipped != st.Total {
		t.Errorf("status counts %d created + %d skipped of %d times: the 04:00 skip is lost", st.Created, st.Skipped, st.Total)
	}
}

// A suspended Backfill still records a Job of its own that an earlier
// sync created but whose status write was lost, so the Job's finalizer
// can go once that status is stored (else, deleted, it would hang while
// the Backfill stays suspended).
func TestSuspendedBackfillRecordsAnUnrecordedJob(t *testing.T) {
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
// names that time, yet the Job must be recorded once the range is done:
// were lastHandledTime to stay before it, Recorded would never hold and,
// deleted (TTL), the Job would stay in Terminating while the Backfill lives.
func TestScheduleEditStillRecordsAnUnrecordedJob(t *testing.T) {
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

// With its CronJob gone for good (a Backfill with Jobs has an owner; a
// CronJob of the name made later is another), a Job whose create was
// never recorded is recorded at last, so its finalizer can go. With a
// schedule that names too many times (or none usable) the Job waits for
// the schedule to be usable again: recording it now could make a time of
// the fixed schedule be skipped.
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

// A Backfill deleted in the foreground creates nothing more, yet it still
// records the stray (see strayJob) beyond the 03:00 it no longer creates:
// the garbage collector has deleted the stray, whose backfill-record
// finalizer waits for a status that records it, and the Backfill waits
// (foregroundDeletion) for the Job. Were the walk to stop at 03:00, both
// would stay in Terminating forever.
func TestForegroundDeleteRecordsAStray(t *testing.T) {
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

// A stray (see strayJob) still running counts toward maxConcurrent though
// status.active does not list it: creating 03:00 beside it would make two
// Jobs of a Backfill with maxConcurrent 1.
func TestRunningStrayCountsTowardMaxConcurrent(t *testing.T) {
	cj := cronJob(hour(-1), ptr.To(hour(10)))
	bf := backfillOf(hour(3), hour(6), 1)
	stray := strayJob(hour(3).Add(30*time.Minute), "")
	p := Decide(Input{Backfill: bf, CronJob: cj, Job: lookup(stray),
		Own: []OwnJob{{Job: stray, At: hour(3).Add(30 * time.Minute)}}, Now: hour(11)})
	if len(p.Creates) != 0 {
		t.Errorf("with maxConcurrent 1 and the stray of 03:30 running, the sync creates %v", createdTimes(p))
	}
}
