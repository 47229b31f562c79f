package planner

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	cronv1 "github.com/cronjob-controller/cronjob-controller/pkg/apis/batch/v1"
	"github.com/cronjob-controller/cronjob-controller/pkg/schedule"
)

// The active window, spec.notBefore and spec.notAfter, bounds the scheduled
// times, not when their Jobs start: a time inside it that is owed when the
// window closes (the controller was down) still starts, within the
// starting deadline, as any owed run. A time outside it is no run: it
// starts nothing and is not counted missed, and catch-up never reaches back
// before notBefore. The bounds are read from the spec at each sync, as
// suspend is: moving notAfter later makes the times since the old one runs
// again, owed under the catch-up policy as after a resume.
//
// Past notAfter the condition Expired is True (an Event says so once),
// status.nextScheduleTime is unset, and no wake-up is planned for the
// schedule. A run-now value still starts its Job: it asks for one run by
// hand, as kubectl create job --from does, whatever the schedule says.

// reasonNotAfterAhead is the reason of a False Expired condition.
const reasonNotAfterAhead = "NotAfterAhead"

// observeWindow sets the Expired condition from spec.notAfter and
// spec.maxRuns and returns sched bounded to the window.
func (p *Plan) observeWindow(sched *schedule.Schedule) *schedule.Schedule {
	p.noteExpired()
	return p.inWindow(sched)
}

// noteExpired sets the Expired condition: True once spec.maxRuns runs have
// started (that stops the CronJob first, whatever notAfter says later) or
// once spec.notAfter has passed, with an Event once per message; False
// while either is set and still ahead; absent when neither is set.
func (p *Plan) noteExpired() {
	spec := p.cj.Spec
	var reason, msg string
	switch {
	case p.maxRunsReached():
		reason, msg = ReasonMaxRunsReached, p.maxRunsMessage()
	case spec.NotAfter != nil && p.now.After(spec.NotAfter.Time):
		reason, msg = ReasonExpired, "spec.notAfter "+formatTime(spec.NotAfter.Time)+" has passed: no scheduled run starts any more"
	case spec.NotAfter != nil:
		p.setCondition(cronv1.ConditionExpired, metav1.ConditionFalse, reasonNotAfterAhead,
			"scheduled runs end at spec.notAfter "+formatTime(spec.NotAfter.Time))
		// Wake once the window has closed, to say so.
		p.requeueBy(spec.NotAfter.Add(time.Second))
		return
	case spec.MaxRuns != nil:
		p.setCondition(cronv1.ConditionExpired, metav1.ConditionFalse, reasonRunsRemaining, p.maxRunsMessage())
		return
	default:
		meta.RemoveStatusCondition(&p.Status.Conditions, cronv1.ConditionExpired)
		return
	}
	// Once per message: a new generation alone says nothing new.
	prev := meta.FindStatusCondition(p.Status.Conditions, cronv1.ConditionExpired)
	news := prev == nil || prev.Status != metav1.ConditionTrue || prev.Message != msg
	p.setCondition(cronv1.ConditionExpired, metav1.ConditionTrue, reason, msg)
	if news {
		p.event(corev1.EventTypeNormal, reason, "%s", msg)
	}
}

// inWindow returns sched (nil or not) bounded to the spec's window, which
// spec.maxRuns reached ends at the last run started (maxruns.go). Every
// schedule a sync walks is, the one in force and the earlier ones alike:
// a time outside the window is no run under any of them.
func (p *Plan) inWindow(sched *schedule.Schedule) *schedule.Schedule {
	spec := p.cj.Spec
	end := timeOf(spec.NotAfter)
	if last := p.runsEnd(); last != nil && (end == nil || last.Before(*end)) {
		end = timeOf(&metav1.Time{Time: *last})
	}
	if sched == nil || (spec.NotBefore == nil && end == nil) {
		return sched
	}
	return sched.Within(timeOf(spec.NotBefore), end)
}

// timeOf is a window bound as a schedule takes it. The first instant of
// year 1 is Go's zero time, which a schedule reads as no bound: as a bound
// it stands a nanosecond later, where nothing is scheduled either, so a
// window that ended then has ended.
func timeOf(t *metav1.Time) *time.Time {
	if t == nil {
		return nil
	}
	if t.IsZero() {
		return ptr.To(t.Add(time.Nanosecond))
	}
	return &t.Time
}
