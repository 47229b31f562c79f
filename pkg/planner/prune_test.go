package planner

// Pruning the Job history (successfulJobsHistoryLimit,
// failedJobsHistoryLimit): oldest first, never a Job whose run the written
// status does not record yet.

import (
	"slices"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	cronv1 "github.com/cronjob-controller/cronjob-controller/pkg/apis/batch/v1"
)

// History is pruned oldest first. A Job whose run the written status does
// not record yet is held (deleting it could start its run again after a
// crash), and so is every newer Job of its kind: the history never keeps an
// older Job while deleting a newer one. (Model seed 1795428039.)
func TestPruneHoldsNewerJobsBehindAnUnrecordedOne(t *testing.T) {
	eight := runOf(at(-2*time.Hour), batchv1.JobComplete)
	manual := &fakeJob{ObjectMeta: metav1.ObjectMeta{Name: "cj-manual", Namespace: "default", UID: "uid-manual"},
		manual: true, started: &metav1.Time{Time: at(-time.Hour)}, finished: batchv1.JobComplete}
	tenJob := runOf(ten, batchv1.JobComplete)
	cj := cronJob(last(at(-3 * time.Hour)))
	cj.Spec.SuccessfulJobsHistoryLimit = ptr.To[int32](1)
	written := cj.Status.DeepCopy()
	cj.Status.LastScheduleTime = &metav1.Time{Time: tenJob.scheduled} // decided, not written yet
	p := Decide(Input{CronJob: cj, Jobs: []Job{eight, manual, tenJob}, Now: at(time.Minute), Written: written})
	if got := names(p.Deletes, func(d Delete) string { return d.Name }); len(got) != 0 {
		t.Errorf("deleted %q while the older %s waits for its run to be recorded", got, eight.Name)
	}
	written.LastScheduleTime = &metav1.Time{Time: tenJob.scheduled}
	p = Decide(Input{CronJob: cj, Jobs: []Job{eight, manual, tenJob}, Now: at(time.Minute), Written: written})
	if got, want := names(p.Deletes, func(d Delete) string { return d.Name }), []string{eight.Name, manual.Name}; !slices.Equal(got, want) {
		t.Errorf("once recorded, deleted %q, want %q", got, want)
	}
}

// A finished Job of ours whose scheduled-at lies in the future (a leader
// whose clock was ahead - reconcileActive's own comment names the case - or
// a Job made by hand) is not "recorded" until that time comes, and must not
// hold every newer succeeded Job from deletion meanwhile: with the time a
// year away, successfulJobsHistoryLimit 1 would keep every Job for a year,
// and every sync would ask to be woken again in one second.
func TestPruneDoesNotWaitForAFutureScheduledJob(t *testing.T) {
	future := &fakeJob{ObjectMeta: metav1.ObjectMeta{Name: "cj-ahead", Namespace: "default", UID: "uid-ahead"},
		scheduled: at(365 * 24 * time.Hour), started: &metav1.Time{Time: at(-5 * time.Hour)},
		complete: &metav1.Time{Time: at(-5*time.Hour + time.Minute)}, finished: batchv1.JobComplete}
	jobs := []Job{future}
	for h := 6; h <= 9; h++ {
		jobs = append(jobs, runOf(at(time.Duration(h-10)*time.Hour), batchv1.JobComplete))
	}
	cj := cronJob(last(at(-time.Hour)), seen("0 * * * *", "UTC"), func(cj *cronv1.CronJob) {
		cj.Spec.SuccessfulJobsHistoryLimit = ptr.To[int32](1)
	})
	p := Decide(Input{CronJob: cj, Jobs: jobs, Now: at(-30 * time.Minute)})
	got := names(p.Deletes, func(d Delete) string { return d.Name })
	want := hours(6, 7, 8) // recorded, older than the newest kept
	for _, w := range want {
		found := false
		for _, g := range got {
			found = found || g == w
		}
		if !found {
			t.Errorf("deletes %q, want at least %q: they are recorded, and a Job whose run lies a year ahead holds them forever (requeue %v)",
				got, want, p.RequeueAfter)
			break
		}
	}
}

// History limits of 0 delete every finished Job, but not one whose run the
// stored status does not record yet, nor do they release its run-record
// finalizer: the Job is then the run's only record, and a controller that
// takes over before the status write lands would start the run again. Once
// the stored status records the runs, they go.
func TestZeroHistoryLimitsKeepAJobWhoseRunIsNotRecorded(t *testing.T) {
	nine := holding(runOf(at(-time.Hour), batchv1.JobComplete))
	tenJob := holding(runOf(ten, batchv1.JobFailed))
	manual := unrecorded(manualJob("", "a", 1), "", "a", 1)
	jobs := []Job{nine, tenJob, manual}
	cj := cronJob(last(at(-time.Hour)), func(cj *cronv1.CronJob) {
		cj.Spec.SuccessfulJobsHistoryLimit, cj.Spec.FailedJobsHistoryLimit = ptr.To[int32](0), ptr.To[int32](0)
	})
	// Stored: 09:00 recorded. Decided, not stored yet: 10:00 and run-now "a".
	written := cj.Status.DeepCopy()
	cj.Status.LastScheduleTime = &metav1.Time{Time: ten}
	cj.Status.LastRunNow, cj.Status.RunNowCount = "a", 1
	cj.Annotations = map[string]string{cronv1.RunNowAnnotation: "a"}

	p := Decide(Input{CronJob: cj, Jobs: jobs, Now: at(time.Minute), Written: written})
	for _, j := range []*fakeJob{tenJob, manual} {
		if slices.ContainsFunc(p.Deletes, func(d Delete) bool { return d.UID == j.UID }) {
			t.Errorf("deletes %s before the stored status records its run", j.Name)
		}
		if slices.ContainsFunc(p.Releases, func(r Release) bool { return r.UID == j.UID }) {
			t.Errorf("releases %s before the stored status records its run", j.Name)
		}
	}
	if !slices.ContainsFunc(p.Deletes, func(d Delete) bool { return d.UID == nine.UID }) {
		t.Errorf("deletes %q: the recorded 09:00 Job is beyond the limit of 0", names(p.Deletes, func(d Delete) string { return d.Name }))
	}

	// Stored at last: every finished Job goes, its finalizer released.
	p = Decide(Input{CronJob: cj, Jobs: jobs, Now: at(2 * time.Minute), Written: cj.Status.DeepCopy()})
	for _, j := range jobs {
		if !slices.ContainsFunc(p.Deletes, func(d Delete) bool { return d.UID == j.GetUID() }) ||
			!slices.ContainsFunc(p.Releases, func(r Release) bool { return r.UID == j.GetUID() }) {
			t.Errorf("once recorded, deletes %q and releases %q, want %s among both", names(p.Deletes, func(d Delete) string { return d.Name }),
				names(p.Releases, func(r Release) string { return r.Name }), j.GetName())
		}
	}
}
