package main

// spec.maxRuns in the model walk. Some CronJobs (drawn from a random
// source of their own, so the walks of every seed are those from before
// maxRuns) get maxRuns 1, 2, 3 or 5 at creation, and users edit it now and
// then (maxRunsMove): raise it, lower it to the count of runs started or
// below, remove it, or set it on a CronJob that had none. A CronJob that
// has or had maxRuns never has a failurePolicy, Calendars, suspendUntil or
// skipTimes (whose own invariants know nothing of the limit), in any
// generation. The oracle then holds, besides I1-I10:
//
// I11.exceeded: a scheduled Job for a new time (one no earlier Job of the
// CronJob was for) is made only while fewer scheduled runs have started
// (distinct scheduled times among the Jobs the store made for the
// CronJob) than the maxRuns of the spec generation it was made from: the
// generation the sync read, since a cache behind an edit is no fault.
//
// I11.count: every status the store takes counts, in scheduledRunCount,
// exactly the scheduled runs started at or before its lastScheduleTime,
// whatever syncs, faults, restarts and stale caches led to it.
//
// I3 with the limit, read from the spec in the store (docs/features.md,
// Run limits): once the runs started reach maxRuns, the schedule ends at
// the last run started, and no later time is due (none required to start,
// none expected counted missed); before, a sync is required to start the
// oldest of its missing due runs up to the runs left, so started ==
// min(maxRuns, due). Lowering maxRuns to the count or below ends the
// schedule at once; raising it or removing it ends the cut, and the times
// since the last run are owed under the catch-up policy, as after moving
// notAfter later: checkDue requires them from the last run on, as it
// does any due run. A window of checkMissed spans one generation, so one
// maxRuns: how many of the times a raise makes owed are counted missed,
// too old to start, is not compared.

import (
	"fmt"
	"slices"
	"time"

	"k8s.io/utils/ptr"

	cronv1 "github.com/cronjob-controller/cronjob-controller/pkg/apis/batch/v1"
)

// maybeMaxRuns gives a new CronJob's spec a maxRuns now and then.
func (w *modelWalk) maybeMaxRuns(spec *cronv1.CronJobSpec) {
	if w.maxRunsRng.Float64() < 0.15 && spec.FailurePolicy == nil && len(spec.ExcludeCalendars) == 0 {
		spec.MaxRuns = ptr.To(pick(w.maxRunsRng, []int64{1, 2, 3, 5}))
	}
}

// maxRunsOf is spec.maxRuns of x's generation gen, 0 when unset.
func (x *modelCJ) maxRunsOf(gen int64) int64 {
	return ptr.Deref(x.specs[gen].MaxRuns, 0)
}

// everMaxRuns says whether some generation of x sets maxRuns: then no
// move gives it a failurePolicy or Calendars.
func (x *modelCJ) everMaxRuns() bool {
	for _, s := range x.specs {
		if s.MaxRuns != nil {
			return true
		}
	}
	return false
}

// maxRunsEditable says whether maxRunsMove may edit x: no generation of
// it has a failurePolicy, Calendars or holds.
func (x *modelCJ) maxRunsEditable() bool {
	for _, s := range x.specs {
		if s.FailurePolicy != nil || len(s.ExcludeCalendars) > 0 || s.SuspendUntil != nil || len(s.SkipTimes) > 0 {
			return false
		}
	}
	return true
}

// maxRunsMove is, now and then, a user's edit of spec.maxRuns of x:
// raised, lowered to the count of runs started or below it, removed, or
// set where it was unset. Drawn from maxRunsRng alone, and only for
// CronJobs it may edit. It reports whether it moved.
func (w *modelWalk) maxRunsMove(x *modelCJ) bool {
	if !x.maxRunsEditable() {
		return false
	}
	p := 0.015
	if x.everMaxRuns() {
		p = 0.08
	}
	if w.maxRunsRng.Float64() >= p {
		return false
	}
	rng := w.maxRunsRng
	cur := x.maxRunsOf(w.lastGen(x))
	started := int64(len(x.scheduledTimes(len(x.jobs))))
	var to *int64
	var kind string
	switch r := rng.Intn(6); {
	case cur == 0:
		to, kind = ptr.To(max(1, started+rng.Int63n(3)-1)), "set where unset"
	case r < 2:
		to, kind = ptr.To(cur+1+rng.Int63n(3)), "raised"
	case r < 3:
		to, kind = ptr.To(max(1, started)), "lowered to the count"
	case r < 4:
		to, kind = ptr.To(max(1, started-1-rng.Int63n(2))), "lowered below the count"
	default:
		kind = "removed"
	}
	if to != nil && *to <= started {
		w.stat("maxRuns edits to the count of runs started or below")
	}
	if cur > 0 && started >= cur && (to == nil || *to > started) {
		// The cut ends: the times since the last run are owed again.
		x.uncut = x.maxRunsEnd(w.lastGen(x))
		w.stat("maxRuns edits ending a cut")
	}
	w.stat("maxRuns edits: " + kind)
	w.editSpecBy(x, func(s *cronv1.CronJobSpec) { s.MaxRuns = to }, func() string {
		return fmt.Sprintf("maxRuns %s -> %s (%s; %d scheduled runs started)", modelDeref(ptrIf(cur)), modelDeref(to), kind, started)
	})
	if rng.Intn(2) == 0 {
		w.syncStep(x)
	}
	return true
}

// ptrIf is nil for 0, else a pointer to v.
func ptrIf(v int64) *int64 {
	if v == 0 {
		return nil
	}
	return &v
}

// scheduledTimes are the distinct scheduled times of x's first n Jobs,
// oldest first.
func (x *modelCJ) scheduledTimes(n int) []time.Time {
	var ts []time.Time
	for _, j := range x.jobs[:n] {
		if !j.manual && !j.scheduled.IsZero() && !slices.ContainsFunc(ts, j.scheduled.Equal) {
			ts = append(ts, j.scheduled)
		}
	}
	slices.SortFunc(ts, time.Time.Compare)
	return ts
}

// maxRunsEnd is where maxRuns of generation gen ends x's schedule once the
// runs started reach it: the last run started (no later time is a run);
// zero while runs remain or without maxRuns.
func (x *modelCJ) maxRunsEnd(gen int64) time.Time {
	m := x.maxRunsOf(gen)
	if ts := x.scheduledTimes(len(x.jobs)); m > 0 && int64(len(ts)) >= m {
		return ts[len(ts)-1]
	}
	return time.Time{}
}

// checkMaxRunsCreated is I11.exceeded, for the Job x.jobs[i] just made.
func (w *modelWalk) checkMaxRunsCreated(x *modelCJ, i int) {
	rec := x.jobs[i]
	if rec.manual || rec.scheduled.IsZero() {
		return
	}
	before := x.scheduledTimes(i)
	if slices.ContainsFunc(before, rec.scheduled.Equal) {
		return // no new run: I1's finding
	}
	if _, ok := x.specs[rec.gen]; !ok {
		return
	}
	m := x.maxRunsOf(rec.gen)
	if m == 0 {
		return
	}
	w.checked("I11 Jobs of a CronJob with maxRuns checked")
	if n := int64(len(before)); n >= m {
		w.violate("I11.exceeded", "%s: Job %s starts a run at %s, made from generation %d (maxRuns %d) when %d scheduled runs had started",
			x.name, rec.name, modelFmtTime(rec.scheduled), rec.gen, m, n)
	}
}

// noteMaxRunsRequired counts, for coverage, a due run checkDue required of
// x, with prev the last run before the sync.
func (w *modelWalk) noteMaxRunsRequired(x *modelCJ, prev time.Time) {
	if x.maxRunsOf(w.lastGen(x)) > 0 {
		w.checked("I3 due run of a CronJob with maxRuns required to have started")
	}
	if !x.uncut.IsZero() && x.uncut.Equal(prev) {
		w.checked("I3 due run after a maxRuns edit ended a cut, required to have started")
	}
}

// checkRunCount is I11.count, on every status of x the store takes.
func (w *modelWalk) checkRunCount(x *modelCJ, st *cronv1.CronJobStatus) {
	var want int64
	for _, t := range x.scheduledTimes(len(x.jobs)) {
		if st.LastScheduleTime != nil && !t.After(st.LastScheduleTime.Time) {
			want++
		}
	}
	w.checked("I11 scheduledRunCount compared")
	if st.ScheduledRunCount != want {
		lst := "unset"
		if st.LastScheduleTime != nil {
			lst = modelFmtTime(st.LastScheduleTime.Time)
		}
		w.violate("I11.count", "%s: status.scheduledRunCount %d, want %d: the scheduled runs started at or before lastScheduleTime %s",
			x.name, st.ScheduledRunCount, want, lst)
	}
}

// maxRunsRequired is what of missing (due runs not started, newest first)
// maxRuns still requires to have started: the oldest, up to the runs left
// (newest first still).
func (w *modelWalk) maxRunsRequired(x *modelCJ, missing []time.Time) []time.Time {
	m := x.maxRunsOf(w.lastGen(x))
	if m == 0 || len(missing) == 0 {
		return missing
	}
	left := max(m-int64(len(x.scheduledTimes(len(x.jobs)))), 0)
	if int64(len(missing)) <= left {
		return missing
	}
	w.stat("I3 due runs beyond maxRuns not required")
	if left == 0 {
		w.stat("I3 nothing required: maxRuns reached")
	}
	required := slices.SortedFunc(slices.Values(missing), time.Time.Compare)[:left]
	slices.Reverse(required)
	return required
}

// maxRunsCut reports whether maxRuns of generation gen, reached, makes t
// no run.
func (x *modelCJ) maxRunsCut(gen int64, t time.Time) bool {
	end := x.maxRunsEnd(gen)
	return !end.IsZero() && t.After(end)
}
