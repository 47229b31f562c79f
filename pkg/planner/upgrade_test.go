package planner

// Statuses written by the previous controller version decide as they did:
// an upgrade neither starts a run again nor turns a time into a run.

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	cronv1 "github.com/cronjob-controller/cronjob-controller/pkg/apis/batch/v1"
)

// A status written by the previous controller version: it recorded an edit
// as resolvedSchedule + scheduleChangeTime, and counted no time the new
// schedule names before scheduleChangeTime. Upgrading must not turn those
// times into runs.
func TestUpgradeFromScheduleChangeTimeStartsNoEarlierRun(t *testing.T) {
	for _, policy := range []cronv1.CatchUpPolicy{cronv1.CatchUpLatest, cronv1.CatchUpAll} {
		t.Run(string(policy), func(t *testing.T) {
			// Old controller: hourly, last ran 09:00; at 09:30 it saw the
			// edit to */5 and wrote resolvedSchedule=*/5, scheduleChangeTime
			// 09:30. Its next run would be 09:35.
			cj := cronJob(sched("*/5 * * * *"), last(at(-time.Hour)), seen("*/5 * * * *", "UTC"), func(cj *cronv1.CronJob) {
				cj.Status.ScheduleChangeTime = &metav1.Time{Time: at(-30 * time.Minute)}
				cj.Spec.CatchUpPolicy = policy
			})
			// The new controller takes over at 09:31.
			p := Decide(Input{CronJob: cj, Now: at(-29 * time.Minute)})
			if got := createdTimes(p); len(got) != 0 {
				t.Errorf("upgrade started %q: times before the edit the old controller saw (scheduleChangeTime 09:30)", got)
			}
			if n := totalMissed(p.Status); n != 0 {
				t.Errorf("upgrade counted %d missed runs for times that were never runs", n)
			}
		})
	}
}

// The previous version stored status.lastRunNow as the raw value, of any
// length; this one compares with RunNowKey, the hash past 128 bytes. The same
// value, already handled, must not run again after the upgrade (its Job may
// be long pruned).
func TestUpgradeKeepsALongRunNowValueHandled(t *testing.T) {
	value := strings.Repeat("v", 200)
	cj := cronJob(last(at(-time.Hour)), func(cj *cronv1.CronJob) {
		cj.Annotations = map[string]string{cronv1.RunNowAnnotation: value}
		cj.Status.LastRunNow = value // as 72e6024 wrote it
	})
	p := Decide(Input{CronJob: cj, Now: at(-30 * time.Minute)})
	if len(p.Creates) != 0 {
		t.Errorf("the already-handled run-now value runs again after the upgrade: creates %q", names(p.Creates, func(c Create) string { return c.Job.Name }))
	}
}
