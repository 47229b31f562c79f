package planner

// Schedule edits and the schedule history (status.previousSchedules): a run
// is a time every schedule in force from then until it starts names; an
// edit records the schedule it replaces, and what an edit takes away is
// counted, never dropped.

import (
	"fmt"
	"slices"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	cronv1 "github.com/cronjob-controller/cronjob-controller/pkg/apis/batch/v1"
	"github.com/cronjob-controller/cronjob-controller/pkg/job"
)

// An edit is recorded once, with the schedule it replaces; the record goes
// once every time before it is settled.
func TestScheduleHistory(t *testing.T) {
	cj := cronJob(sched("@hourly"), last(at(-time.Hour)), seen("0 * * * *", "UTC"))
	p := Decide(Input{CronJob: cj, Now: at(5 * time.Minute)})
	want := []cronv1.PreviousSchedule{{Schedule: "0 * * * *", TimeZone: "UTC", Until: metav1.NewTime(at(5 * time.Minute))}}
	if !slices.EqualFunc(p.Status.PreviousSchedules, want, func(a, b cronv1.PreviousSchedule) bool {
		return a.Schedule == b.Schedule && a.TimeZone == b.TimeZone && a.Until.Equal(&b.Until)
	}) || p.Status.ResolvedSchedule != "@hourly" || p.Status.ScheduleChangeTime == nil {
		t.Fatalf("after the edit: previous %+v, resolved %q", p.Status.PreviousSchedules, p.Status.ResolvedSchedule)
	}
	p.Started(p.Creates[0], runOf(ten, ""), true)

	// Times up to 10:05 still depend on the record; the 11:00 run settles
	// them all.
	cj.Status = p.Status
	p = Decide(Input{CronJob: cj, Jobs: []Job{runOf(ten, "")}, Now: at(6 * time.Minute)})
	if len(p.Status.PreviousSchedules) != 1 || len(p.Creates) != 0 {
		t.Errorf("after the 10:00 run: previous %+v, creates %d", p.Status.PreviousSchedules, len(p.Creates))
	}
	cj.Status = p.Status
	p = Decide(Input{CronJob: cj, Jobs: []Job{runOf(ten, "")}, Now: at(time.Hour + time.Second)})
	p.Started(p.Creates[0], runOf(at(time.Hour), ""), true)
	cj.Status = p.Status
	p = Decide(Input{CronJob: cj, Jobs: []Job{runOf(ten, ""), runOf(at(time.Hour), "")}, Now: at(time.Hour + 2*time.Second)})
	if len(p.Status.PreviousSchedules) != 0 {
		t.Errorf("after the 11:00 run: previous %+v", p.Status.PreviousSchedules)
	}
}

// More than five edits while no run settles: the oldest merge into one that
// names nothing, so nothing before it is invented.
func TestScheduleHistoryIsCapped(t *testing.T) {
	cj := cronJob(last(at(-24 * time.Hour)))
	for i := range 8 {
		cj.Spec.Schedule = fmt.Sprintf("%d * * * *", i)
		p := Decide(Input{CronJob: cj, Now: at(time.Duration(i) * time.Second)})
		cj.Status = p.Status
	}
	h := cj.Status.PreviousSchedules
	if len(h) != maxPreviousSchedules || h[0].Schedule != "" || !h[0].Until.Time.Equal(at(3*time.Second)) || h[len(h)-1].Schedule != "6 * * * *" {
		t.Errorf("previous schedules %+v", h)
	}
}

// The candidate walk is bounded by maxWalk steps of the schedule in force.
// A run both the old and the new schedule name, owed after an edit seen late,
// must still start, or at the least be counted missed: it must not vanish.
func TestEditSeenLateStartsOrCountsTheOwedRun(t *testing.T) {
	cases := []struct {
		name     string
		cur, old string
		last     time.Time
		now      time.Time
		owed     time.Time
	}{
		// The controller is down 09:59-10:17; the user edits the hourly
		// schedule to @every 1s meanwhile. 10:00 is named by both.
		{"hourly to @every 1s, seen 17 minutes late", "@every 1s", "0 * * * *", at(-time.Hour), at(17 * time.Minute), ten},
		// A daily midnight job edited to every minute while the controller
		// is down; it comes back at 17:00.
		{"daily to every minute, seen 17 hours late", "* * * * *", "0 0 * * *", at(-34 * time.Hour), at(7 * time.Hour), at(-10 * time.Hour)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cj := cronJob(sched(tc.cur), last(tc.last), seen(tc.old, "UTC"))
			p := Decide(Input{CronJob: cj, Now: tc.now})
			want := job.Name("cj", tc.owed)
			started := slices.ContainsFunc(p.Creates, func(c Create) bool { return c.Job.Name == want })
			if !started && totalMissed(p.Status) == 0 {
				t.Errorf("the run of %s, named by both schedules and owed, neither starts nor is counted: creates %v, missed %+v",
					tc.owed.UTC().Format(time.RFC3339), createdTimes(p), p.Status.MissedRuns)
			}
			// And it stays lost: the next run settles everything before it.
			cj.Status = p.Status
			startAll(p)
			later := Decide(Input{CronJob: cj, Now: tc.now.Add(time.Minute)})
			if !started && !slices.ContainsFunc(later.Creates, func(c Create) bool { return c.Job.Name == want }) && totalMissed(later.Status) == 0 {
				t.Errorf("a minute later it is still neither started nor counted: creates %v", createdTimes(later))
			}
		})
	}
}

// Forbid holds 10:00 back while 09:00 runs. Six edits meanwhile, every one of
// them naming 10:00 (a GitOps tool flapping between spellings of "hourly"):
// when 09:00 finishes, 10:00 must start, or at least be counted missed.
func TestHistoryCapKeepsTheHeldBackRun(t *testing.T) {
	nine := runOf(at(-time.Hour), "")
	cj := cronJob(last(at(-time.Hour)), active(nine), concurrency(cronv1.ForbidConcurrent), seen("0 * * * *", "UTC"))
	p := Decide(Input{CronJob: cj, Jobs: []Job{nine}, Now: at(5 * time.Second)})
	if len(p.Creates) != 0 {
		t.Fatalf("creates %v while 09:00 runs under Forbid", createdTimes(p))
	}
	cj.Status = p.Status
	spellings := []string{"@hourly", "0 */1 * * *", "0 0-23 * * *", "0 * * * *", "@hourly", "0 */1 * * *"}
	for i, s := range spellings {
		cj.Spec.Schedule = s
		p = Decide(Input{CronJob: cj, Jobs: []Job{nine}, Now: at(time.Duration(i+1) * time.Minute)})
		cj.Status = p.Status
	}
	nineDone := runOf(at(-time.Hour), batchv1.JobComplete)
	p = Decide(Input{CronJob: cj, Jobs: []Job{nineDone}, Now: at(20 * time.Minute)})
	if len(p.Creates) == 0 && totalMissed(p.Status) == 0 {
		t.Errorf("after six edits that all name 10:00, the held-back 10:00 run neither starts nor is counted when 09:00 finishes; previous schedules %+v",
			p.Status.PreviousSchedules)
	}
}

// Forbid holds 10:00 back; the user edits the schedule to :30 at 10:05. 10:00
// can no longer start (the new schedule does not name it): it must be
// counted as missed once, not vanish.
func TestEditCountsTheHeldBackRunItDrops(t *testing.T) {
	nine := runOf(at(-time.Hour), "")
	cj := cronJob(last(at(-time.Hour)), active(nine), concurrency(cronv1.ForbidConcurrent), seen("0 * * * *", "UTC"))
	p := Decide(Input{CronJob: cj, Jobs: []Job{nine}, Now: at(5 * time.Second)})
	cj.Status = p.Status
	if c := meta.FindStatusCondition(cj.Status.Conditions, cronv1.ConditionLastRunStarted); c == nil || c.Status != metav1.ConditionFalse {
		t.Fatalf("10:00 not held back: %+v", c)
	}
	cj.Spec.Schedule = "30 * * * *"
	p = Decide(Input{CronJob: cj, Jobs: []Job{nine}, Now: at(5 * time.Minute)})
	cj.Status = p.Status
	// 09:00 finishes at 10:10; then 10:30 comes and starts.
	nineDone := runOf(at(-time.Hour), batchv1.JobComplete)
	p = Decide(Input{CronJob: cj, Jobs: []Job{nineDone}, Now: at(10 * time.Minute)})
	cj.Status = p.Status
	p = Decide(Input{CronJob: cj, Jobs: []Job{nineDone}, Now: at(30*time.Minute + time.Second)})
	startAll(p)
	if got := createdTimes(p); !slices.Equal(got, []string{"05-01T10:30:00"}) {
		t.Errorf("at 10:30 created %q", got)
	}
	if totalMissed(p.Status) == 0 {
		t.Errorf("the held-back 10:00 run was dropped by the edit without being counted: missedRuns %+v, LastRunStarted %+v",
			p.Status.MissedRuns, meta.FindStatusCondition(p.Status.Conditions, cronv1.ConditionLastRunStarted))
	}
}

// An edit back to the original schedule, and an edit while suspended, are
// recorded and decide as the rule says.
func TestEditBackAndWhileSuspendedFollowTheRule(t *testing.T) {
	// 0 * -> 30 * (10:10) -> 0 * (10:20), seen at those times, last 09:00,
	// the controller never ran 10:00 (it was down until 10:10).
	cj := cronJob(last(at(-time.Hour)), seen("0 * * * *", "UTC"), sched("30 * * * *"))
	p := Decide(Input{CronJob: cj, Now: at(10 * time.Minute)})
	if len(p.Creates) != 0 {
		t.Errorf("10:10, after 0->30: creates %v", createdTimes(p))
	}
	cj.Status = p.Status
	cj.Spec.Schedule = "0 * * * *"
	p = Decide(Input{CronJob: cj, Now: at(20 * time.Minute)})
	if len(p.Creates) != 0 {
		t.Errorf("10:20, back to 0: creates %v (10:00 was not named by 30 * in force 10:10-10:20)", createdTimes(p))
	}
	cj.Status = p.Status
	p = Decide(Input{CronJob: cj, Now: at(time.Hour + time.Second)})
	if got := createdTimes(p); !slices.Equal(got, []string{"05-01T11:00:00"}) {
		t.Errorf("11:00: creates %v", got)
	}

	// Suspended at 09:00; edited at 09:30 to :45; resumed at 10:50.
	cj = cronJob(last(at(-time.Hour)), seen("0 * * * *", "UTC"), func(cj *cronv1.CronJob) { cj.Spec.Suspend = ptr.To(true) })
	cj.Spec.Schedule = "45 * * * *"
	p = Decide(Input{CronJob: cj, Now: at(-30 * time.Minute)})
	if len(p.Status.PreviousSchedules) != 1 || p.Status.NextScheduleTime != nil {
		t.Errorf("edit while suspended: previous %+v next %v", p.Status.PreviousSchedules, p.Status.NextScheduleTime)
	}
	cj.Status = p.Status
	cj.Spec.Suspend = ptr.To(false)
	p = Decide(Input{CronJob: cj, Now: at(50 * time.Minute)})
	if got := createdTimes(p); !slices.Equal(got, []string{"05-01T10:45:00"}) {
		t.Errorf("resume at 10:50: creates %v, want 10:45", got)
	}
}
