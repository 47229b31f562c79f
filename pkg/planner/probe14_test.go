package planner

import (
	"testing"
	"time"

	cronv1 "github.com/cronjob-controller/cronjob-controller/pkg/apis/batch/v1"
	"github.com/cronjob-controller/cronjob-controller/pkg/job"
)

// Run-now value "a" handled (Job ManualName("", "a") created, status
// deferred with lastRunNow "a"), then the user sets run-now to "b" before
// that status is written: the kept decision starts ManualName("a", "b").
// The API server still holds lastRunNow "". Neither Job's run is recorded,
// yet Releases lets both finalizers go (the name test compares against
// ManualName(written.LastRunNow="", "b")).
func TestProbe14RunNowChangedBeforeWriteIsNotReleased(t *testing.T) {
	cj := cronJob(last(at(0)), func(cj *cronv1.CronJob) {
		cj.Annotations = map[string]string{cronv1.RunNowAnnotation: "b"}
		cj.Status.LastRunNow = "b" // as decided (deferred)
	})
	written := &cronv1.CronJobStatus{LastScheduleTime: cj.Status.LastScheduleTime.DeepCopy()} // lastRunNow ""
	jb := holding(manualRun(job.ManualName("cj", "cj-uid", "a", "b", 0)))
	jb.UID = "uid-b"
	jb.runNowKey, jb.runNowAfter, jb.hasRunNow = "b", "a", true
	// The Job of "a" still holds the finalizer too: nothing records it.
	ja := holding(manualRun(job.ManualName("cj", "cj-uid", "", "a", 0)))
	ja.UID = "uid-a"
	ja.runNowKey, ja.runNowAfter, ja.hasRunNow = "a", "", true
	rel, _ := Releases(cj, []Job{ja, jb}, written)
	if len(rel) != 0 {
		t.Errorf("released %v: the Job of run-now value b before any written status records it (written lastRunNow %q)", rel, written.LastRunNow)
	}
}

// The same, after a crash: the restarted controller reads lastRunNow "" and
// annotation "b", finds the Job of "b" (named after "a"), and must not start
// "b" a second time.
func TestProbe14RunNowChangedBeforeWriteRestartNoSecondJob(t *testing.T) {
	cj := cronJob(last(at(0)), func(cj *cronv1.CronJob) {
		cj.Annotations = map[string]string{cronv1.RunNowAnnotation: "b"}
	})
	ja := holding(manualRun(job.ManualName("cj", "cj-uid", "", "a", 0)))
	ja.UID = "uid-a"
	ja.runNowKey, ja.runNowAfter, ja.hasRunNow = "a", "", true
	jb := holding(manualRun(job.ManualName("cj", "cj-uid", "a", "b", 0)))
	jb.UID = "uid-b"
	jb.runNowKey, jb.runNowAfter, jb.hasRunNow = "b", "a", true
	p := Decide(Input{CronJob: cj, Jobs: []Job{ja, jb}, Now: at(time.Minute)})
	for _, c := range p.Creates {
		if c.Manual {
			t.Errorf("creates %s for run-now value b, whose Job %s exists: b runs twice", c.Job.Name, jb.Name)
		}
	}
}
