package planner

import (
	"slices"

	"k8s.io/apimachinery/pkg/api/meta"

	cronv1 "github.com/cronjob-controller/cronjob-controller/pkg/apis/batch/v1"
)

// StaleDecision is the status a sync starts from when a decision it kept
// (deferred behind the queue, or held after a failed write) was made under
// a spec that has changed since, and written is what the API server holds.
//
// What that decision judged by the old spec is judged again by the new one:
// its runs counted as missed (a deadline, a catch-up policy) may start now.
// What it saw is kept, because seeing it again later would be wrong:
//   - when an edit was seen (the schedule in force, previous schedules and
//     the time of the change) and the runs the edit took away
//     (ScheduleChanged): noting the edit later would bar runs the new
//     schedule names between the two sightings;
//   - the run-now value handled, and how many were, with the Jobs it
//     started among the active ones;
//   - the runs it entered in the run history that the written status does
//     not hold, as running: their outcomes are entered again (and
//     spec.failurePolicy counts them, once) as this sync sees their Jobs
//     finished or gone. The streak is the written one: it holds exactly the
//     outcomes the written history holds.
//
// lastScheduleTime goes back to the written one: the Jobs the decision
// started are still this process's own writes, so the planner adopts them
// and counts the runs they passed over under the new spec's rules.
// Previous schedules that decision pruned come back, since the settled
// point moves back with it.
func StaleDecision(written, kept *cronv1.CronJobStatus) cronv1.CronJobStatus {
	st := *written.DeepCopy()
	st.ResolvedSchedule, st.ResolvedTimeZone = kept.ResolvedSchedule, kept.ResolvedTimeZone
	st.ScheduleChangeTime = kept.ScheduleChangeTime.DeepCopy()
	st.LastRunNow, st.RunNowCount = kept.LastRunNow, kept.RunNowCount
	// The Jobs it started are active as well: a run-now Job's run stays
	// recorded (above), and its outcome is entered when it leaves
	// status.active.
	for _, ref := range kept.Active {
		if activeIndex(st.Active, ref.UID) < 0 {
			st.Active = append(st.Active, ref)
		}
	}
	st.ActiveCount = int32(len(st.Active))
	for _, r := range kept.RecentRuns {
		if slices.ContainsFunc(st.RecentRuns, func(w cronv1.RunRecord) bool { return w.JobName == r.JobName }) {
			continue
		}
		r := *r.DeepCopy()
		r.Outcome, r.CompletionTime, r.Reason, r.Message = cronv1.OutcomeRunning, nil, "", ""
		st.RecentRuns = append(st.RecentRuns, r)
	}
	SortRuns(st.RecentRuns)
	// An unusable schedule is in force by its condition (see inForce).
	meta.RemoveStatusCondition(&st.Conditions, cronv1.ConditionScheduleValid)
	if c := meta.FindStatusCondition(kept.Conditions, cronv1.ConditionScheduleValid); c != nil {
		meta.SetStatusCondition(&st.Conditions, *c)
	}
	st.PreviousSchedules = slices.Clone(written.PreviousSchedules)
	for _, e := range kept.PreviousSchedules {
		if !slices.ContainsFunc(st.PreviousSchedules, func(w cronv1.PreviousSchedule) bool {
			return w.Schedule == e.Schedule && w.TimeZone == e.TimeZone && w.Until.Equal(&e.Until)
		}) {
			st.PreviousSchedules = append(st.PreviousSchedules, e)
		}
	}
	slices.SortStableFunc(st.PreviousSchedules, func(a, b cronv1.PreviousSchedule) int { return a.Until.Time.Compare(b.Until.Time) })
	for len(st.PreviousSchedules) > maxPreviousSchedules {
		// The oldest two become one that names nothing, as the cap of the
		// history does; the runs it bars were counted when it was made.
		until := st.PreviousSchedules[1].Until
		st.PreviousSchedules = append([]cronv1.PreviousSchedule{{Until: until}}, st.PreviousSchedules[2:]...)
	}
	st.MissedRuns = slices.DeleteFunc(st.MissedRuns, func(m cronv1.MissedRuns) bool { return m.Reason == cronv1.MissedScheduleChanged })
	if i := slices.IndexFunc(kept.MissedRuns, func(m cronv1.MissedRuns) bool { return m.Reason == cronv1.MissedScheduleChanged }); i >= 0 {
		st.MissedRuns = append(st.MissedRuns, *kept.MissedRuns[i].DeepCopy())
	}
	return st
}
