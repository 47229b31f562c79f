package planner

import (
	"math"
	"time"

	cronv1 "github.com/cronjob-controller/cronjob-controller/pkg/apis/batch/v1"
	"github.com/cronjob-controller/cronjob-controller/pkg/schedule"
)

// ReasonSuspendedUntil is the Ready condition's reason while
// spec.suspendUntil holds the scheduled runs.
const ReasonSuspendedUntil = "SuspendedUntil"

// specHolds reports whether the spec holds any time on purpose:
// spec.suspendUntil or spec.skipTimes is set.
func (p *Plan) specHolds() bool {
	return p.cj.Spec.SuspendUntil != nil || len(p.cj.Spec.SkipTimes) > 0
}

// specHold is SpecHold of the CronJob's spec.
func (p *Plan) specHold(t time.Time) string { return SpecHold(&p.cj.Spec, t) }

// SpecHold is the hold reason of a run due at t that spec holds on
// purpose, "" for none: due before spec.suspendUntil, or named by
// spec.skipTimes. Like a Calendar's exclusion, such a time is no run at
// all: never late, never owed later, and no trial of a pause. The kubectl
// plugin marks the times it lists by it.
func SpecHold(spec *cronv1.CronJobSpec, t time.Time) string {
	if su := spec.SuspendUntil; su != nil && t.Before(su.Time) {
		return cronv1.MissedSuspendedUntil
	}
	for _, s := range spec.SkipTimes {
		if s.Time.Equal(t) {
			return cronv1.MissedSkipped
		}
	}
	return ""
}

// suspendedUntil reports whether spec.suspendUntil is still ahead.
func (p *Plan) suspendedUntil() bool {
	su := p.cj.Spec.SuspendUntil
	return su != nil && p.now.Before(su.Time)
}

// unheldFrom is UnheldFrom of the CronJob's spec.
func (p *Plan) unheldFrom(sched *schedule.Schedule, next time.Time) time.Time {
	return UnheldFrom(&p.cj.Spec, sched, next)
}

// UnheldFrom is next, or the first time of sched after it that spec does
// not hold (SpecHold): what status.nextScheduleTime shows. Each step passes
// a skip or the suspension, so it ends within len(skipTimes)+2 steps.
func UnheldFrom(spec *cronv1.CronJobSpec, sched *schedule.Schedule, next time.Time) time.Time {
	for range len(spec.SkipTimes) + 2 {
		switch SpecHold(spec, next) {
		case "":
			return next
		case cronv1.MissedSuspendedUntil:
			until := spec.SuspendUntil.Time
			if every, ok := sched.Every(); ok {
				// @every's times are a grid from its base, not the
				// schedule's own: step along it past the suspension.
				d := until.Sub(next)
				if d > math.MaxInt64-every {
					return time.Time{} // past any storable time
				}
				next = next.Add(every * ((d + every - 1) / every))
			} else {
				next = sched.Next(until.Add(-time.Nanosecond))
			}
		default:
			next = sched.Next(next)
		}
		if next.IsZero() || next.After(lastStorable) {
			return time.Time{}
		}
	}
	return next
}
