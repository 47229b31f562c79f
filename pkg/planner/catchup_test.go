package planner

import (
	"fmt"
	"testing"
	"time"
)

// Catch-up All with a create failing retryably in the middle: the runs
// before it start, none after it, and the retry starts the rest, each once.
func TestCatchUpAllRetryStartsEachRunOnce(t *testing.T) {
	for _, limit := range []int32{1, 3, 100} {
		t.Run(fmt.Sprint(limit), func(t *testing.T) {
			cj := cronJob(last(at(-6*time.Hour)), catchUpAll(limit), seen("0 * * * *", "UTC"))
			p := Decide(Input{CronJob: cj, Now: at(time.Second)})
			var jobs []*fakeJob
			startedAt := map[string]int{}
			for i, c := range p.Creates {
				if i == 1 {
					p.CreateFailed(c, fmt.Errorf("etcd is sad"))
					break
				}
				j := runOf(c.Time, "")
				p.Started(c, j, true)
				jobs = append(jobs, j)
				startedAt[j.Name]++
			}
			cj.Status = p.Status
			for step := 0; step < 3; step++ {
				p = Decide(Input{CronJob: cj, Jobs: asJobs(jobs), Now: at(time.Duration(2+step) * time.Second)})
				for _, made := range startAll(p) {
					jobs = append(jobs, made)
					startedAt[made.Name]++
				}
				cj.Status = p.Status
			}
			want := int(min(limit, 6))
			if len(startedAt) != want {
				t.Errorf("started %v, want %d runs", startedAt, want)
			}
			for n, k := range startedAt {
				if k != 1 {
					t.Errorf("%s started %d times", n, k)
				}
			}
			if !cj.Status.LastScheduleTime.Time.Equal(ten) {
				t.Errorf("lastScheduleTime %v", cj.Status.LastScheduleTime)
			}
		})
	}
}

// An @every edit seen after centuries of missed runs (lastScheduleTime set
// by hand to catch up from 1700: longer than a duration holds) starts the
// most recent run both grids name, as it does after decades: 10:00 lies
// on the 1h and the 2h grid from the settled point. Whether the old
// schedule names a time is grid arithmetic over the span from the settled
// point, and that span must not saturate.
func TestEveryEditAfterCenturiesStartsTheRunBothGridsName(t *testing.T) {
	for _, base := range []time.Time{
		time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(1700, 1, 1, 0, 0, 0, 0, time.UTC),
	} {
		cj := cronJob(last(base), sched("@every 2h"), seen("@every 1h", "UTC"))
		p := Decide(Input{CronJob: cj, Now: at(30 * time.Minute)})
		if got := createdTimes(p); len(got) != 1 || !p.Creates[0].Time.Equal(ten) {
			t.Errorf("settled at %v: creates %v, missed %v; want the 10:00 run, which both grids name", base, got, missedOf(p.Status))
		}
	}
}
