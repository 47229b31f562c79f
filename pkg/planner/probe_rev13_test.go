package planner

// Review 13 probes: the active window and the counts of runs passed over
// or refused by an edit. The edit and history ones failed before the
// earlier schedules were bounded by the window (Plan.inWindow).

import (
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	cronv1 "github.com/cronjob-controller/cronjob-controller/pkg/apis/batch/v1"
)

// A: a schedule edit counts as ScheduleChanged the old schedule's owed
// times that the new one refuses; times before notBefore are no runs.
func TestProbeRev13EditCountsTimesBeforeNotBefore(t *testing.T) {
	cj := cronJob(sched("30 * * * *"), seen("0 * * * *", "UTC"), last(at(-3*time.Hour)), notBefore(at(-30*time.Minute)))
	p := Decide(Input{CronJob: cj, Now: at(5 * time.Minute)})
	// Owed by the old schedule in the window: 10:00 only (08:00, 09:00 before 09:30).
	if got := missedOf(p.Status); got[cronv1.MissedScheduleChanged] > 1 {
		t.Errorf("missed %v, want at most ScheduleChanged:1 (08:00, 09:00 are before notBefore 09:30)", got)
	}
}

// A': notBefore in the future, never a run yet: an edit counts nothing.
func TestProbeRev13EditBeforeWindowOpensCountsNothing(t *testing.T) {
	cj := cronJob(sched("30 * * * *"), seen("0 * * * *", "UTC"), notBefore(at(2*time.Hour)))
	p := Decide(Input{CronJob: cj, Now: at(5 * time.Minute)})
	if got := missedOf(p.Status); len(got) != 0 {
		t.Errorf("missed %v, want none: the window opens at 12:00", got)
	}
}

// A”: after notAfter: an edit counts nothing past notAfter.
func TestProbeRev13EditAfterWindowClosedCountsNothing(t *testing.T) {
	cj := cronJob(sched("30 * * * *"), seen("0 * * * *", "UTC"), last(at(-3*time.Hour)), notAfter(at(-150*time.Minute)))
	p := Decide(Input{CronJob: cj, Now: at(5 * time.Minute)})
	if got := missedOf(p.Status); len(got) != 0 {
		t.Errorf("missed %v, want none: 08:00-10:00 are after notAfter 07:30", got)
	}
}

// B: more than five edits with the window not yet open: the merge counts
// barred runs outside the window.
func TestProbeRev13CapHistoryBeforeWindow(t *testing.T) {
	cj := cronJob(last(at(-24*time.Hour)), notBefore(at(48*time.Hour)))
	for i := range 8 {
		cj.Spec.Schedule = fmt.Sprintf("%d * * * *", i)
		p := Decide(Input{CronJob: cj, Now: at(time.Duration(i) * time.Second)})
		cj.Status = p.Status
	}
	if got := missedOf(cj.Status); len(got) != 0 {
		t.Errorf("missed %v, want none: the window opens in two days", got)
	}
}

// D: @every prior schedule, bounded by notBefore.
func TestProbeRev13AdoptEveryWithinWindow(t *testing.T) {
	// status: @every 20m in force, last 09:00; the lost sync at 10:00 under
	// notBefore 09:30 started 10:00 (grid 09:20, 09:40, 10:00) passing over 09:40.
	cj := cronJob(sched("@every 20m"), seen("@every 20m", "UTC"), last(at(-time.Hour)), notBefore(at(-30*time.Minute)))
	p := Decide(Input{CronJob: cj, Jobs: []Job{runOf(ten, "")}, Now: at(time.Minute)})
	if got := missedOf(p.Status)[cronv1.MissedSuperseded]; got != 1 {
		t.Errorf("missed %v, want Superseded:1 (09:40 only; 09:20 before 09:30)", missedOf(p.Status))
	}
	// notAfter variant: notAfter 09:30: 09:20 counted, 09:40 not.
	cj = cronJob(sched("@every 20m"), seen("@every 20m", "UTC"), last(at(-time.Hour)), notAfter(at(-30*time.Minute)))
	p = Decide(Input{CronJob: cj, Jobs: []Job{runOf(ten, "")}, Now: at(time.Minute)})
	if got := missedOf(p.Status)[cronv1.MissedSuperseded]; got != 1 {
		t.Errorf("notAfter: missed %v, want Superseded:1 (09:20 only)", missedOf(p.Status))
	}
}

// D2: @every prior, cron current (edit seen in the adopting sync), window.
func TestProbeRev13AdoptEveryPriorCronNowWithWindow(t *testing.T) {
	cj := cronJob(sched("0 * * * *"), seen("@every 20m", "UTC"), last(at(-time.Hour)), notBefore(at(-30*time.Minute)))
	p := Decide(Input{CronJob: cj, Jobs: []Job{runOf(ten, "")}, Now: at(time.Minute)})
	if got := missedOf(p.Status); got[cronv1.MissedSuperseded] != 1 || len(got) != 1 {
		t.Errorf("missed %v, want Superseded:1 (09:40 only)", got)
	}
}

// E: previous schedule in status (edit seen earlier) + window + adoption.
func TestProbeRev13AdoptWithHistoryAndWindow(t *testing.T) {
	// 0 * * * * until 08:30, then */30 * * * * in force; last 07:00; lost sync at 10:00 started 10:00.
	// Runs: 08:00 (both name it; before until), 09:00, 09:30 (after until). notBefore 08:45.
	cj := cronJob(sched("*/30 * * * *"), seen("*/30 * * * *", "UTC"), history("0 * * * *", "UTC", at(-90*time.Minute)),
		last(at(-3*time.Hour)), notBefore(at(-75*time.Minute)))
	p := Decide(Input{CronJob: cj, Jobs: []Job{runOf(ten, "")}, Now: at(time.Minute)})
	if got := missedOf(p.Status); got[cronv1.MissedSuperseded] != 2 || len(got) != 1 {
		t.Errorf("missed %v, want Superseded:2 (09:00, 09:30)", got)
	}
}

var _ = metav1.Now
