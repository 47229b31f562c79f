package planner

import (
	"math"
	"testing"
	"time"

	cronv1 "github.com/cronjob-controller/cronjob-controller/pkg/apis/batch/v1"
)

// A deadline longer than a Go duration holds (about 292 years) means "no
// deadline", not a negative one: the due run starts and nothing is counted
// missed. The schema refuses more than cronv1.MaxStartingDeadlineSeconds; an
// object stored before that bound still must not lose its runs.
func TestHugeStartingDeadlineStartsTheRun(t *testing.T) {
	for _, s := range []int64{cronv1.MaxStartingDeadlineSeconds, 10_000_000_000, math.MaxInt64} {
		for _, policy := range []cronv1.CatchUpPolicy{cronv1.CatchUpLatest, cronv1.CatchUpAll, cronv1.CatchUpNone} {
			cj := cronJob(last(at(-time.Hour)), seen("0 * * * *", "UTC"), deadline(s), func(cj *cronv1.CronJob) { cj.Spec.CatchUpPolicy = policy })
			p := Decide(Input{CronJob: cj, Now: at(5 * time.Second)})
			if got := names(p.Creates, func(c Create) string { return c.Job.Name }); len(got) != 1 || got[0] != hours(10)[0] {
				t.Errorf("deadline %d s, %s: creates %v, want the run of 10:00", s, policy, got)
			}
			if m := missedOf(p.Status); len(m) != 0 {
				t.Errorf("deadline %d s, %s: missed %v, want none", s, policy, m)
			}
			if d := StartingDeadline(cj); d == nil || *d < 0 {
				t.Errorf("deadline %d s, %s: StartingDeadline %v, want a positive duration", s, policy, d)
			}
		}
	}
}

// A negative deadline (refused by the schema; possible in an object stored
// without it) is no deadline shorter than zero: runs are late at once, as
// with 0, and the arithmetic does not wrap.
func TestNegativeStartingDeadlineIsZero(t *testing.T) {
	cj := cronJob(last(at(-time.Hour)), seen("0 * * * *", "UTC"), deadline(math.MinInt64))
	if d := StartingDeadline(cj); d == nil || *d != 0 {
		t.Fatalf("StartingDeadline %v, want 0", d)
	}
	p := Decide(Input{CronJob: cj, Now: at(0)})
	if len(p.Creates) != 1 {
		t.Errorf("a run due exactly now with deadline 0: creates %d, want 1", len(p.Creates))
	}
}
