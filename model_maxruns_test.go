package main

// spec.maxRuns in the model walk. Some CronJobs (drawn from a random
// source of their own, so the walks of every seed are those from before
// maxRuns) get maxRuns 1, 2, 3 or 5 at creation, never edited, and neither
// a failurePolicy nor Calendars (whose own invariants know nothing of the
// limit). The oracle then holds, besides I1-I10:
//
// I11.exceeded: never more scheduled runs started (distinct scheduled
// times among the Jobs the store made for the CronJob) than maxRuns.
//
// I11.count: every status the store takes counts, in scheduledRunCount,
// exactly the scheduled runs started at or before its lastScheduleTime,
// whatever syncs, faults, restarts and stale caches led to it.
//
// I3 with the limit: once maxRuns runs have started, no later time is due
// (none required to start, none expected counted missed); before, a sync
// is required to start the oldest of its missing due runs up to the runs
// left, so started == min(maxRuns, due).

import (
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

// maxRuns is x's spec.maxRuns, 0 when unset (it is never edited).
func (x *modelCJ) maxRuns() int64 {
	for _, s := range x.specs {
		return ptr.Deref(s.MaxRuns, 0)
	}
	return 0
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

// maxRunsEnd is the time of x's last run maxRuns allows once it has
// started (no later time is a run), zero before.
func (x *modelCJ) maxRunsEnd() time.Time {
	m := x.maxRuns()
	if ts := x.scheduledTimes(len(x.jobs)); m > 0 && int64(len(ts)) >= m {
		return ts[m-1]
	}
	return time.Time{}
}

// checkMaxRunsCreated is I11.exceeded, after each Job x gets.
func (w *modelWalk) checkMaxRunsCreated(x *modelCJ) {
	m := x.maxRuns()
	if m == 0 {
		return
	}
	w.checked("I11 Jobs of a CronJob with maxRuns checked")
	if n := int64(len(x.scheduledTimes(len(x.jobs)))); n > m {
		w.violate("I11.exceeded", "%s: %d scheduled runs started, maxRuns %d", x.name, n, m)
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
	m := x.maxRuns()
	if m == 0 || len(missing) == 0 {
		return missing
	}
	left := max(m-int64(len(x.scheduledTimes(len(x.jobs)))), 0)
	if int64(len(missing)) <= left {
		return missing
	}
	w.stat("I3 due runs beyond maxRuns not required")
	required := slices.SortedFunc(slices.Values(missing), time.Time.Compare)[:left]
	slices.Reverse(required)
	return required
}

// maxRunsCut reports whether maxRuns, reached, makes t no run.
func (x *modelCJ) maxRunsCut(t time.Time) bool {
	end := x.maxRunsEnd()
	return !end.IsZero() && t.After(end)
}
