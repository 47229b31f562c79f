package planner

import (
	"testing"
	"time"

	cronv1 "github.com/cronjob-controller/cronjob-controller/pkg/apis/batch/v1"
)

// Forbid holds a daily run back with a 5-minute starting deadline. The miss
// happens at 10:05, and the CronJob must wake by then to count it: were the
// next wake-up tomorrow's run, missedRuns and LastRunStarted would say
// nothing of it for a day unless the blocking Job happened to finish.
func TestForbidWakesAtTheDeadlineToCountTheMiss(t *testing.T) {
	prev := at(-24 * time.Hour)
	j := runOf(prev, "")
	cj := cronJob(sched("0 10 * * *"), last(prev), active(j), concurrency(cronv1.ForbidConcurrent), deadline(300))
	p := Decide(Input{CronJob: cj, Jobs: []Job{j}, Now: at(5 * time.Second)})
	if p.RequeueAfter > 5*time.Minute {
		t.Errorf("held back with a 5m deadline, the CronJob sleeps %v: the miss at 10:05 is not counted until then", p.RequeueAfter)
	}
}
