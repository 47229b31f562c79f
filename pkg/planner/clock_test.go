package planner

// Clocks: now exactly on a scheduled time, sub-second times, a clock that
// steps back, and daylight-saving changes: each run starts once.

import (
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	cronv1 "github.com/cronjob-controller/cronjob-controller/pkg/apis/batch/v1"
)

// Odd clocks: now exactly on a scheduled time, sub-second now, a clock that
// steps back after a run.
func TestOddClocksStartEachRunOnce(t *testing.T) {
	cj := cronJob(last(at(-time.Hour)), seen("0 * * * *", "UTC"))
	p := Decide(Input{CronJob: cj, Now: ten})
	if got := createdTimes(p); !slices.Equal(got, []string{"05-01T10:00:00"}) {
		t.Errorf("now == 10:00: creates %v", got)
	}
	startAll(p)
	cj.Status = p.Status
	for _, now := range []time.Time{ten.Add(-time.Nanosecond), ten.Add(-time.Hour), ten.Add(999 * time.Millisecond)} {
		q := Decide(Input{CronJob: cj, Jobs: []Job{runOf(ten, "")}, Now: now})
		if len(q.Creates) != 0 || q.RequeueAfter <= 0 {
			t.Errorf("now %v after the 10:00 run: creates %v requeue %v", now, createdTimes(q), q.RequeueAfter)
		}
		if !q.Status.LastScheduleTime.Time.Equal(ten) {
			t.Errorf("now %v: lastScheduleTime went to %v", now, q.Status.LastScheduleTime)
		}
	}
	// @every from a sub-second creation.
	cj = cronJob(sched("@every 10s"), func(cj *cronv1.CronJob) { cj.CreationTimestamp = metav1.NewTime(ten.Add(300 * time.Millisecond)) })
	p = Decide(Input{CronJob: cj, Now: ten.Add(10*time.Second + 500*time.Millisecond)})
	if got := createdTimes(p); !slices.Equal(got, []string{"05-01T10:00:10"}) {
		t.Errorf("@every 10s: creates %v", got)
	}
	startAll(p)
	cj.Status = p.Status
	p = Decide(Input{CronJob: cj, Jobs: []Job{runOf(ten.Add(10*time.Second), "")}, Now: ten.Add(10*time.Second + 900*time.Millisecond)})
	if len(p.Creates) != 0 || p.RequeueAfter <= 0 {
		t.Errorf("@every 10s again: creates %v requeue %v", createdTimes(p), p.RequeueAfter)
	}
}

// A daily "45 1 * * *" in Australia/Lord_Howe, synced on time at every
// wake-up the plan asks for, across the spring change of 2026-10-04 (02:00
// +10:30 -> 02:30 +11): one run per local day.
func TestLordHoweSpringRunsOncePerDay(t *testing.T) {
	loc, err := time.LoadLocation("Australia/Lord_Howe")
	if err != nil {
		t.Fatal(err)
	}
	for _, spec := range []string{"45 1 * * *", "30 1 * * *"} {
		t.Run(spec, func(t *testing.T) {
			start := time.Date(2026, 10, 2, 12, 0, 0, 0, loc)
			cj := cronJob(sched(spec), zone("Australia/Lord_Howe"), func(cj *cronv1.CronJob) { cj.CreationTimestamp = metav1.NewTime(start) })
			now := start
			var jobs []*fakeJob
			perDay := map[string][]string{}
			for range 10 {
				p := Decide(Input{CronJob: cj, Jobs: asJobs(jobs), Now: now})
				for _, j := range startAll(p) {
					jobs = append(jobs, j)
					day := j.scheduled.In(loc).Format("2006-01-02")
					perDay[day] = append(perDay[day], j.scheduled.In(loc).Format("15:04 -0700"))
				}
				cj.Status = p.Status
				if p.RequeueAfter <= 0 {
					t.Fatal("no wake-up")
				}
				now = now.Add(p.RequeueAfter)
			}
			for day, runs := range perDay {
				if len(runs) != 1 {
					t.Errorf("%s: %d runs on %s: %v", spec, len(runs), day, runs)
				}
			}
		})
	}
}
