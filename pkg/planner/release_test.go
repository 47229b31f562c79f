package planner

import (
	"slices"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	cronv1 "github.com/cronjob-controller/cronjob-controller/pkg/apis/batch/v1"
	"github.com/cronjob-controller/cronjob-controller/pkg/job"
)

// A Job's run-record finalizer goes once it has finished (or is being
// deleted) and the written status records its run and no longer lists it
// active, and not before: until then the Job is the only record of its run
// or of its outcome.
func TestReleases(t *testing.T) {
	nine, ten := at(-time.Hour), at(0)
	runNow := func(value, handled string) func(*cronv1.CronJob) {
		return func(cj *cronv1.CronJob) {
			cj.Annotations = map[string]string{cronv1.RunNowAnnotation: value}
			cj.Status.LastRunNow = handled
		}
	}
	cases := []struct {
		name        string
		cronJob     *cronv1.CronJob
		written     *cronv1.CronJobStatus // nil: as cronJob.Status
		jobs        []Job
		now         time.Time
		want        []string
		wantRequeue time.Duration
	}{
		{
			name: "recorded by lastScheduleTime: the finished one released, the running one kept", cronJob: cronJob(last(ten)), now: at(time.Minute),
			jobs: []Job{holding(runOf(nine, batchv1.JobComplete)), holding(runOf(ten, ""))},
			want: []string{job.Name("cj", nine)}, wantRequeue: time.Hour - time.Minute,
		},
		{
			name: "finished, recorded, but the written status still lists it active: kept", cronJob: cronJob(last(ten)),
			written: &cronv1.CronJobStatus{LastScheduleTime: &metav1.Time{Time: ten}, Active: []corev1.ObjectReference{job.Ref(runOf(ten, ""))}},
			now:     at(time.Minute), jobs: []Job{holding(runOf(ten, batchv1.JobFailed))},
			want: nil, wantRequeue: time.Hour - time.Minute,
		},
		{
			name: "being deleted, recorded, but the written status still lists it active: kept, looked at again in a second", cronJob: cronJob(last(ten)),
			written: &cronv1.CronJobStatus{LastScheduleTime: &metav1.Time{Time: ten}, Active: []corev1.ObjectReference{job.Ref(runOf(ten, ""))}},
			now:     at(time.Minute), jobs: []Job{deleting(holding(runOf(ten, batchv1.JobFailed)))},
			want: nil, wantRequeue: time.Second,
		},
		{
			name: "decided but not written: kept", cronJob: cronJob(last(ten)), written: &cronv1.CronJobStatus{LastScheduleTime: &metav1.Time{Time: nine}},
			now: at(time.Minute), jobs: []Job{holding(runOf(nine, batchv1.JobComplete)), holding(runOf(ten, ""))},
			want: []string{job.Name("cj", nine)}, wantRequeue: time.Hour - time.Minute,
		},
		{
			name: "never written (a restart after the crash): kept, and adopted", cronJob: cronJob(last(nine)),
			now: at(time.Minute), jobs: []Job{holding(runOf(ten, batchv1.JobComplete))},
			want: nil, wantRequeue: time.Hour - time.Minute,
		},
		{
			name: "being deleted before the write: kept, looked at again in a second", cronJob: cronJob(last(ten)),
			written: &cronv1.CronJobStatus{LastScheduleTime: &metav1.Time{Time: nine}},
			now:     at(time.Minute), jobs: []Job{deleting(holding(runOf(ten, batchv1.JobComplete)))},
			want: nil, wantRequeue: time.Second,
		},
		{
			name: "being deleted after the write: released", cronJob: cronJob(last(ten)),
			now: at(time.Minute), jobs: []Job{deleting(holding(runOf(ten, batchv1.JobComplete)))},
			want: []string{job.Name("cj", ten)}, wantRequeue: time.Hour - time.Minute,
		},
		{
			name: "no finalizer: nothing to release", cronJob: cronJob(last(ten)), now: at(time.Minute),
			jobs: []Job{runOf(ten, "")}, want: nil, wantRequeue: time.Hour - time.Minute,
		},
		{
			name: "run-now not recorded yet: kept", cronJob: cronJob(last(ten), runNow("a", "")), now: at(time.Minute),
			jobs: []Job{holding(manualRun(job.ManualName("cj", "cj-uid", "", "a", 0)))}, want: nil, wantRequeue: time.Hour - time.Minute,
		},
		{
			name: "run-now recorded, running: kept", cronJob: cronJob(last(ten), runNow("a", "a"), handled("a", 1)), now: at(time.Minute),
			jobs: []Job{unrecorded(manualRun(job.ManualName("cj", "cj-uid", "", "a", 1)), "", "a", 1)}, want: nil, wantRequeue: time.Hour - time.Minute,
		},
		{
			// Only the finalizer tells the run-now chain that a Job
			// without a request number is unrecorded: it goes at once.
			name: "run-now of an earlier version (no request number) recorded, running: released", cronJob: cronJob(last(ten), runNow("a", "a")), now: at(time.Minute),
			jobs: []Job{holding(manualRun(job.ManualName("cj", "cj-uid", "", "a", 0)))},
			want: []string{job.ManualName("cj", "cj-uid", "", "a", 0)}, wantRequeue: time.Hour - time.Minute,
		},
		{
			name: "run-now recorded, finished: released", cronJob: cronJob(last(ten), runNow("a", "a")), now: at(time.Minute),
			jobs: []Job{finish(holding(manualRun(job.ManualName("cj", "cj-uid", "", "a", 0))))},
			want: []string{job.ManualName("cj", "cj-uid", "", "a", 0)}, wantRequeue: time.Hour - time.Minute,
		},
		{
			name: "CronJob being deleted: every Job released", now: at(time.Minute),
			cronJob: cronJob(last(nine), func(cj *cronv1.CronJob) { cj.DeletionTimestamp = &metav1.Time{Time: at(0)} }),
			jobs:    []Job{holding(runOf(ten, ""))}, want: []string{job.Name("cj", ten)},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := Decide(Input{CronJob: tc.cronJob, Jobs: tc.jobs, Now: tc.now, Written: tc.written})
			got := names(p.Releases, func(r Release) string { return r.Name })
			if !slices.Equal(got, tc.want) {
				t.Errorf("releases %q, want %q", got, tc.want)
			}
			for _, r := range p.Releases {
				if !slices.Contains(r.Finalizers, job.RunRecordFinalizer) || r.UID == "" {
					t.Errorf("release %+v: no finalizers or UID to patch against", r)
				}
			}
			if len(p.Creates) != 0 {
				t.Errorf("creates %v: a Job of the run exists, whatever its finalizer", p.Creates)
			}
			if p.RequeueAfter != tc.wantRequeue {
				t.Errorf("requeue after %v, want %v", p.RequeueAfter, tc.wantRequeue)
			}
		})
	}
}

func finish(j *fakeJob) *fakeJob {
	j.finished = batchv1.JobComplete
	return j
}

// A Job being deleted still records its run (nothing starts it again) but is
// neither active nor deleted again.
func TestDeletingJobRecordsItsRun(t *testing.T) {
	ten := at(0)
	j := deleting(holding(runOf(ten, "")))
	p := Decide(Input{CronJob: cronJob(last(at(-time.Hour)), concurrency(cronv1.ReplaceConcurrent), func(cj *cronv1.CronJob) {
		cj.Spec.SuccessfulJobsHistoryLimit = new(int32)
	}), Jobs: []Job{j}, Now: at(time.Hour + time.Second)})
	if len(p.Status.Active) != 0 || len(p.Deletes) != 0 {
		t.Errorf("active %v, deletes %v: a Job being deleted is neither", p.Status.Active, p.Deletes)
	}
	if p.Status.LastScheduleTime == nil || p.Status.LastScheduleTime.Time.Before(ten) {
		t.Errorf("lastScheduleTime %v: the deleting Job's run is recorded", p.Status.LastScheduleTime)
	}
	if got := names(p.Creates, func(c Create) string { return c.Job.Name }); !slices.Equal(got, []string{job.Name("cj", at(time.Hour))}) {
		t.Errorf("creates %q, want only the 11:00 run", got)
	}
}

// Run-now value "a" handled (Job ManualName("", "a") created, status
// deferred with lastRunNow "a"), then the user sets run-now to "b" before
// that status is written: the kept decision starts ManualName("a", "b").
// The API server still holds lastRunNow "". Neither Job's run is recorded,
// so Releases must let neither finalizer go (comparing against
// ManualName(written.LastRunNow="", "b") alone would release both).
func TestRunNowChangedBeforeWriteHoldsBothFinalizers(t *testing.T) {
	cj := cronJob(last(at(0)), func(cj *cronv1.CronJob) {
		cj.Annotations = map[string]string{cronv1.RunNowAnnotation: "b"}
		cj.Status.LastRunNow = "b" // as decided (deferred)
	})
	written := &cronv1.CronJobStatus{LastScheduleTime: cj.Status.LastScheduleTime.DeepCopy()} // lastRunNow ""
	jb := unrecordedManual("a", "b", "uid-b")
	// The Job of "a" still holds the finalizer too: nothing records it.
	ja := unrecordedManual("", "a", "uid-a")
	rel, _ := Releases(cj, []Job{ja, jb}, written, nil)
	if len(rel) != 0 {
		t.Errorf("released %v: the Job of run-now value b before any written status records it (written lastRunNow %q)", rel, written.LastRunNow)
	}
}
