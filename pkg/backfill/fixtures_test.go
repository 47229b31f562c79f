package backfill

// The package's shared test fixtures: a clock of whole hours, a CronJob and
// a Backfill, Jobs of either as the decision reads them, and settle, the
// next sync on a decided status.

import (
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	cronv1 "github.com/cronjob-controller/cronjob-controller/pkg/apis/batch/v1"
	"github.com/cronjob-controller/cronjob-controller/pkg/job"
)

var t0 = time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)

func hour(n int) time.Time { return t0.Add(time.Duration(n) * time.Hour) }

// testJob is a Job as the decision reads it.
type testJob struct {
	metav1.ObjectMeta
	finished batchv1.JobConditionType
}

func (j *testJob) Finished() batchv1.JobConditionType { return j.finished }

func cronJob(created time.Time, lastSchedule *time.Time) *cronv1.CronJob {
	cj := &cronv1.CronJob{
		ObjectMeta: metav1.ObjectMeta{Name: "cj", Namespace: "ns", UID: "cj-uid", CreationTimestamp: metav1.NewTime(created)},
		Spec:       cronv1.CronJobSpec{Schedule: "0 * * * *", TimeZone: ptr.To("UTC")},
	}
	if lastSchedule != nil {
		cj.Status.LastScheduleTime = &metav1.Time{Time: *lastSchedule}
	}
	return cj
}

func backfillOf(start, end time.Time, max int32) *cronv1.Backfill {
	return &cronv1.Backfill{
		ObjectMeta: metav1.ObjectMeta{Name: "bf", Namespace: "ns", UID: "bf-uid",
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "batch.tutorial.kubebuilder.io/v1", Kind: "CronJob", Name: "cj", UID: "cj-uid"}}},
		Spec: cronv1.BackfillSpec{CronJobName: "cj", Start: metav1.NewTime(start), End: metav1.NewTime(end), MaxConcurrent: ptr.To(max)},
	}
}

// scheduledJob is the CronJob's own Job of t; backfillJob a Job of bf.
func scheduledJob(t time.Time) *testJob {
	return &testJob{ObjectMeta: metav1.ObjectMeta{Name: job.Name("cj", t), UID: types.UID("s-" + t.Format("15")),
		OwnerReferences: []metav1.OwnerReference{{Kind: "CronJob", UID: "cj-uid", Controller: ptr.To(true)}}}}
}

func backfillJob(t time.Time, finished batchv1.JobConditionType) *testJob {
	return &testJob{ObjectMeta: metav1.ObjectMeta{Name: job.Name("cj", t), UID: types.UID("b-" + t.Format("15")),
		OwnerReferences: []metav1.OwnerReference{{Kind: "Backfill", UID: "bf-uid", Controller: ptr.To(true)}}}, finished: finished}
}

// strayJob is a stray: a Job of the Backfill made for a time of the
// CronJob's old schedule ("30 * * * *", 03:30) whose status write was lost;
// the schedule is now "0 * * * *", so 03:00 is a named time before it that
// has no Job.
func strayJob(at time.Time, finished batchv1.JobConditionType) *testJob {
	j := backfillJob(at, finished)
	j.UID = types.UID("stray-" + at.Format("1504"))
	return j
}

// doneBackfillJob is a finished Job of bf at t, its UID told apart to the
// minute.
func doneBackfillJob(at time.Time) *testJob {
	j := backfillJob(at, batchv1.JobComplete)
	j.UID = types.UID("b-" + at.Format("1504"))
	return j
}

func lookup(jobs ...*testJob) func(string) (Job, bool) {
	return func(name string) (Job, bool) {
		for _, j := range jobs {
			if j.Name == name {
				return j, true
			}
		}
		return nil, false
	}
}

func createdTimes(p *Plan) []time.Time {
	var ts []time.Time
	for _, c := range p.Creates {
		ts = append(ts, c.Time)
	}
	return ts
}

// settle runs Decide again on the status it decided, as the next sync
// would once that status is stored, and reports whether that sync would
// do anything: create, emit an Event, or write a different status (whose
// echo would queue yet another sync).
func settle(t *testing.T, in Input, p *Plan) {
	t.Helper()
	bf := in.Backfill.DeepCopy()
	bf.Status = p.Status
	in.Backfill = bf
	again := Decide(in)
	if len(again.Creates) != 0 || len(again.Events) != 0 || !equality.Semantic.DeepEqual(again.Status, p.Status) {
		t.Errorf("the next sync is not idle: creates %v, events %+v, status %+v after %+v", createdTimes(again), again.Events, again.Status, p.Status)
	}
}
