package planner

// spec.suspendUntil and spec.skipTimes: runs held on purpose. The CronJob
// runs hourly; "ten" is 10:00, a due time.

import (
	"slices"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	cronv1 "github.com/cronjob-controller/cronjob-controller/pkg/apis/batch/v1"
)

func suspendUntil(t time.Time) func(*cronv1.CronJob) {
	return func(cj *cronv1.CronJob) { cj.Spec.SuspendUntil = &metav1.Time{Time: t} }
}

func skipTimes(ts ...time.Time) func(*cronv1.CronJob) {
	return func(cj *cronv1.CronJob) {
		for _, t := range ts {
			cj.Spec.SkipTimes = append(cj.Spec.SkipTimes, metav1.Time{Time: t})
		}
	}
}

func readyReason(st cronv1.CronJobStatus) string {
	c := meta.FindStatusCondition(st.Conditions, cronv1.ConditionReady)
	if c == nil {
		return ""
	}
	return string(c.Status) + "/" + c.Reason
}

// walkHours syncs cj a few seconds after each hour from..to (10 = ten), as
// the controller would, every create succeeding; it returns the hours
// whose runs started and the plan of each hour.
func walkHours(t *testing.T, cj *cronv1.CronJob, from, to int) ([]int, map[int]*Plan) {
	t.Helper()
	var started []int
	plans := map[int]*Plan{}
	for h := from; h <= to; h++ {
		p := Decide(Input{CronJob: cj, Now: at(time.Duration(h-10)*time.Hour + 5*time.Second)})
		if len(startAll(p)) > 0 {
			started = append(started, h)
		}
		cj = cj.DeepCopy()
		cj.Status = p.Status
		cj.Status.Active = nil // each run is over within the hour
		plans[h] = p
	}
	return started, plans
}

// A suspend that ends on its own: the 10:00 and 11:00 runs are held and
// counted, never started later (not even with catch-up), and from 12:00
// the CronJob runs by itself. While it holds, Ready says so and
// nextScheduleTime is the first run after it.
func TestSuspendUntilHoldsTheRunsBeforeItThenRunsByItself(t *testing.T) {
	noon := at(2 * time.Hour)
	cj := cronJob(last(at(-time.Hour)), catchUpAll(5), suspendUntil(noon))
	started, plans := walkHours(t, cj, 10, 13)
	if !slices.Equal(started, []int{12, 13}) {
		t.Errorf("runs started at %v, want 12 and 13", started)
	}
	if got := missedFor(plans[13].Status, cronv1.MissedSuspendedUntil); got != 2 {
		t.Errorf("missed SuspendedUntil = %d, want 2 (10:00 and 11:00)", got)
	}
	if got := readyReason(plans[10].Status); got != "False/"+ReasonSuspendedUntil {
		t.Errorf("Ready while suspended = %s, want False/%s", got, ReasonSuspendedUntil)
	}
	if next := plans[10].Status.NextScheduleTime; next == nil || !next.Time.Equal(noon) {
		t.Errorf("nextScheduleTime while suspended = %v, want %v", next, noon)
	}
	if got := readyReason(plans[12].Status); got != "True/"+ReasonScheduling {
		t.Errorf("Ready after the suspension = %s, want True/%s", got, ReasonScheduling)
	}
	if d := plans[10].RequeueAfter; d <= 0 || d > time.Hour {
		t.Errorf("requeue after %v while suspended, want by the next due time", d)
	}
}

// The suspension ending between two runs wakes the controller then, so
// Ready turns True on time.
func TestSuspendUntilBetweenRunsRequeuesAtItsEnd(t *testing.T) {
	cj := cronJob(last(at(-time.Hour)), sched("0 0 * * *"), suspendUntil(at(30*time.Minute)))
	p := Decide(Input{CronJob: cj, Now: at(5 * time.Second)})
	if want := 30*time.Minute - 5*time.Second; p.RequeueAfter != want {
		t.Errorf("requeue after %v, want %v: the end of the suspension", p.RequeueAfter, want)
	}
}

// A skip holds the one run it names, given in any zone offset, with a
// Normal Event, and nextScheduleTime passes over it; a time that is not a
// run of the schedule skips nothing.
func TestSkipTimesSkipOnlyTheRunsTheyName(t *testing.T) {
	eleven := at(time.Hour).In(time.FixedZone("UTC+2", 2*3600))
	cj := cronJob(last(at(-time.Hour)), skipTimes(eleven, at(90*time.Minute)))
	started, plans := walkHours(t, cj, 10, 12)
	if !slices.Equal(started, []int{10, 12}) {
		t.Errorf("runs started at %v, want 10 and 12", started)
	}
	if next := plans[10].Status.NextScheduleTime; next == nil || !next.Time.Equal(at(2*time.Hour)) {
		t.Errorf("nextScheduleTime at 10:00 = %v, want 12:00: 11:00 is skipped", next)
	}
	if !hasEvent(plans[11], ReasonRunSkipped) || missedFor(plans[12].Status, cronv1.MissedSkipped) != 1 {
		t.Errorf("11:00: events %v, missed %v; want a %s Event and one run counted Skipped", eventsOf(plans[11]), missedOf(plans[12].Status), ReasonRunSkipped)
	}
	if got := readyReason(plans[11].Status); got != "True/"+ReasonScheduling {
		t.Errorf("Ready around a skip = %s, want True: a skip is not a suspension", got)
	}
}

// Neither holds a run-now: a person asking for a run gets it.
func TestSuspendUntilLetsARunNowStart(t *testing.T) {
	cj := cronJob(last(at(-time.Hour)), suspendUntil(at(24*time.Hour)), runNowValue("now"))
	p := Decide(Input{CronJob: cj, Now: at(5 * time.Second)})
	manual := slices.IndexFunc(p.Creates, func(c Create) bool { return c.Manual })
	if manual < 0 || len(createdTimes(p)) != 0 {
		t.Errorf("creates %v (manual at %d), want the run-now alone", createdTimes(p), manual)
	}
}

// The suspension's end on an @every CronJob: nextScheduleTime is the first
// time of its grid at or after the end.
func TestSuspendUntilOnAnEveryScheduleNamesTheGridsNextTime(t *testing.T) {
	cj := cronJob(last(at(-time.Hour)), sched("@every 25m"), suspendUntil(at(time.Hour)))
	p := Decide(Input{CronJob: cj, Now: at(5 * time.Second)})
	// The grid from 09:00: 09:25, 09:50, 10:15, 10:40, 11:05.
	if next := p.Status.NextScheduleTime; next == nil || !next.Time.Equal(at(65*time.Minute)) {
		t.Errorf("nextScheduleTime = %v, want %v", next, at(65*time.Minute))
	}
}

// A pause's trial due while suspendUntil holds waits for the first run
// after it: the held run is no run at all, so it is no trial either.
func TestATrialDueWhileSuspendedUntilIsTheFirstRunAfterIt(t *testing.T) {
	// Paused at 09:10 with a cool-down of 30m: resumeAt 09:40; 10:00 is
	// held by suspendUntil 10:30, so 11:00 is the trial.
	cj := cronJob(last(at(-time.Hour)), failurePolicy(2, 30*time.Minute, 0), failing(2, "cj-x"),
		pausedSince(at(-50*time.Minute), 1, ""), suspendUntil(at(30*time.Minute)))
	p := Decide(Input{CronJob: cj, Now: ten})
	if len(p.Creates) != 0 || missedFor(p.Status, cronv1.MissedSuspendedUntil) != 1 {
		t.Fatalf("10:00: creates %+v, missed %v; want none, 10:00 counted SuspendedUntil", p.Creates, missedOf(p.Status))
	}
	if next := p.Status.NextScheduleTime; next == nil || !next.Time.Equal(at(time.Hour)) {
		t.Errorf("nextScheduleTime = %v, want 11:00, the trial", next)
	}
	cj = cj.DeepCopy()
	cj.Status = p.Status
	p = Decide(Input{CronJob: cj, Now: at(time.Hour)})
	if len(p.Creates) != 1 || !p.Creates[0].Trial || !p.Creates[0].Time.Equal(at(time.Hour)) {
		t.Errorf("11:00: creates %+v, want the 11:00 run as the trial", p.Creates)
	}
}

// A skipped time is no run at all, so it takes no place of catchUpLimit's:
// under catchUpPolicy All with a limit of 2, the two runs owed around the
// skip (08:00 and 09:00) start, as docs/calendars.md says of an excluded
// time ("the catch-up skips it and starts the runs around it").
func TestSkipTimesTakeNoPlaceOfTheCatchUpLimit(t *testing.T) {
	cj := cronJob(last(at(-3*time.Hour)), catchUpAll(2), skipTimes(ten))
	p := Decide(Input{CronJob: cj, Now: at(5 * time.Second)})
	want := []string{"05-01T08:00:00", "05-01T09:00:00"}
	if got := createdTimes(p); !slices.Equal(got, want) {
		t.Errorf("creates %v, missed %v; want %v: 10:00 is skipped, the limit is two runs", got, missedOf(p.Status), want)
	}
}
