package main

// spec.suspendUntil and spec.skipTimes in the model walk. Some CronJobs
// (drawn from a random source of their own, so the walks of every seed are
// those from before these fields) get at creation a suspendUntil up to
// three hours ahead, skipTimes naming some of their next due times, or
// both; never with a failurePolicy, Calendars or maxRuns, whose own
// invariants know nothing of these holds. Users then move the suspension
// and name new skips now and then (holdMove); edits of other fields carry
// them through. The oracle then holds, besides I1-I11:
//
// I12.held-run-started: no scheduled Job for a time the spec generation it
// was made from holds.
//
// I12.held-miscounted: a count under SuspendedUntil or Skipped names a
// time some generation of the CronJob holds.
//
// I3 with holds: a time some generation may hold is no run any decision
// must start (calMayHold), and its count is tolerated either way.

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	cronv1 "github.com/cronjob-controller/cronjob-controller/pkg/apis/batch/v1"
	"github.com/cronjob-controller/cronjob-controller/pkg/planner"
)

// maybeHolds gives a new CronJob's spec a suspendUntil or skipTimes now and
// then.
func (w *modelWalk) maybeHolds(name string, spec *cronv1.CronJobSpec) {
	if w.holdsRng.Float64() >= 0.15 || spec.FailurePolicy != nil || len(spec.ExcludeCalendars) > 0 || spec.MaxRuns != nil {
		return
	}
	now := w.now()
	kind := w.holdsRng.Intn(3)
	if kind != 1 {
		spec.SuspendUntil = &metav1.Time{Time: now.Add(time.Duration(w.holdsRng.Intn(180*60)) * time.Second).Truncate(time.Second)}
	}
	if kind == 0 {
		return
	}
	_, sched, err := planner.ResolveSchedule(&cronv1.CronJob{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: metav1.NamespaceDefault}, Spec: *spec})
	if err != nil {
		return
	}
	t := now
	for range 6 {
		if t = sched.Next(t); t.IsZero() {
			break
		}
		if w.holdsRng.Intn(2) == 0 {
			spec.SkipTimes = append(spec.SkipTimes, metav1.Time{Time: t})
		}
	}
}

// specMayHold reports whether some generation of x holds its run at t.
func (x *modelCJ) specMayHold(t time.Time) bool {
	for _, s := range x.specs {
		if planner.SpecHold(&s, t) != "" {
			return true
		}
	}
	return false
}

// checkHeldStart is I12.held-run-started, for each Job x gets.
func (w *modelWalk) checkHeldStart(x *modelCJ, rec *modelJobRec) {
	spec, ok := x.specs[rec.gen]
	if !ok || rec.manual || (spec.SuspendUntil == nil && len(spec.SkipTimes) == 0) {
		return
	}
	w.checked("I12 scheduled Jobs of CronJobs with suspendUntil or skipTimes, checked")
	if why := planner.SpecHold(&spec, rec.scheduled); why != "" {
		w.violate("I12.held-run-started", "Job %s is for %s, which generation %d holds (%s)", rec.name, modelFmtTime(rec.scheduled), rec.gen, why)
	}
}

// checkHeldCount is I12.held-miscounted, for one missedRuns entry.
func (w *modelWalk) checkHeldCount(x *modelCJ, m cronv1.MissedRuns) {
	w.checked("I12 counts under SuspendedUntil or Skipped, checked")
	if !x.specMayHold(m.LastTime.Time) {
		w.violate("I12.held-miscounted", "%s counts %s under %s, a time no generation holds", x.name, modelFmtTime(m.LastTime.Time), m.Reason)
	}
}

// holdMove is, now and then, a user's edit of the holds of x, a CronJob
// that has them: the suspension moved (later, sooner, or away) or the
// skips named anew. Drawn from holdsRng alone, and only for such CronJobs,
// so walks without them are those from before. It reports whether it
// moved.
func (w *modelWalk) holdMove(x *modelCJ) bool {
	spec := x.specs[w.lastGen(x)]
	if (spec.SuspendUntil == nil && len(spec.SkipTimes) == 0) || w.holdsRng.Float64() >= 0.08 {
		return false
	}
	_, sched, err := planner.ResolveSchedule(&cronv1.CronJob{
		ObjectMeta: metav1.ObjectMeta{Name: x.name, Namespace: metav1.NamespaceDefault}, Spec: spec})
	now := w.now()
	var what string
	w.editSpecBy(x, func(s *cronv1.CronJobSpec) {
		switch r := w.holdsRng.Intn(4); {
		case r == 0:
			s.SuspendUntil, what = nil, "suspendUntil cleared"
		case r == 1 || err != nil:
			s.SuspendUntil = &metav1.Time{Time: now.Add(time.Duration(w.holdsRng.Intn(180*60)) * time.Second).Truncate(time.Second)}
			what = "suspendUntil " + modelFmtTime(s.SuspendUntil.Time)
		default:
			s.SkipTimes, what = nil, "skipTimes"
			for t, i := now, 0; i < 6; i++ {
				if t = sched.Next(t); t.IsZero() {
					break
				}
				if w.holdsRng.Intn(2) == 0 {
					s.SkipTimes = append(s.SkipTimes, metav1.Time{Time: t})
					what += " " + modelFmtTime(t)
				}
			}
		}
		// A hold cleared entirely keeps the CronJob among those moved.
		if s.SuspendUntil == nil && len(s.SkipTimes) == 0 {
			s.SkipTimes, what = []metav1.Time{{Time: now.Add(-time.Hour).Truncate(time.Second)}}, what+"; skipTimes only a past time"
		}
	}, func() string { return what })
	if w.holdsRng.Intn(2) == 0 {
		w.syncStep(x)
	}
	return true
}
