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
