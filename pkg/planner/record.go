package planner

// The run history, status.recentRuns: the record of every run the CronJob
// starts, newest first, which outlives the runs' Jobs. A run is entered
// once, keyed by its Job, when its Job is started or first seen; its
// outcome is entered once, when a sync first sees the Job finished (or
// gone: Unknown). Whatever shows the Job again later (a cache older than
// the status, a decision kept and judged again, a restart) finds the
// outcome entered and enters nothing. spec.failurePolicy's streak counts
// only outcomes newly entered here (failures.go).
//
// The bound: a full history drops its oldest entries, running or not, so
// every entry dropped is no newer than every entry kept. A Job absent from
// a full history and no newer than its oldest entry may have been entered
// and dropped since, so its outcome is not entered: at worst one failure
// uncounted (one pause fewer), never one counted twice. (Dropping finished
// entries first would keep an older running one, and a finished entry
// dropped before it would then look new.) A history that is not full may
// have been full under a smaller runHistoryLimit: a Job whose run the
// status records, absent from it and no newer than its oldest entry, is
// beyond it too.

import (
	"slices"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	cronv1 "github.com/cronjob-controller/cronjob-controller/pkg/apis/batch/v1"
)

// maxRunMessage is as much of a failed Job's message as a run record keeps.
const maxRunMessage = 256

// runHistoryLimit is how many runs status.recentRuns keeps.
func (p *Plan) runHistoryLimit() int {
	n := int(ptr.Deref(p.cj.Spec.RunHistoryLimit, cronv1.DefaultRunHistoryLimit))
	return min(max(n, 1), cronv1.MaxRunHistoryLimit)
}

// runTime orders the history: a scheduled run's time, a run-now's start.
func runTime(r *cronv1.RunRecord) time.Time {
	switch {
	case r.ScheduledTime != nil:
		return r.ScheduledTime.Time
	case r.StartTime != nil:
		return r.StartTime.Time
	}
	return time.Time{}
}

// SortRuns orders a run history newest first (ties by Job name).
func SortRuns(runs []cronv1.RunRecord) {
	slices.SortStableFunc(runs, func(a, b cronv1.RunRecord) int {
		if c := runTime(&b).Compare(runTime(&a)); c != 0 {
			return c
		}
		return strings.Compare(b.JobName, a.JobName)
	})
}

// outcomeEntered reports whether r's run has its outcome in the record:
// Succeeded or Failed, never entered again. (Unknown may still become
// one of them, once, if the Job is seen finished after all.)
func outcomeEntered(r *cronv1.RunRecord) bool {
	return r.Outcome == cronv1.OutcomeSucceeded || r.Outcome == cronv1.OutcomeFailed
}

// runRecord is the entry of the run of the Job named name, nil if none.
func (p *Plan) runRecord(name string) *cronv1.RunRecord {
	for i := range p.Status.RecentRuns {
		if p.Status.RecentRuns[i].JobName == name {
			return &p.Status.RecentRuns[i]
		}
	}
	return nil
}

// isRun reports whether j is a run of the CronJob's, and when it is due in
// the history's order: a run-now Job's creation, a scheduled run's time.
// A Job the controller did not make is no run.
func (p *Plan) isRun(j Job) (time.Time, bool) {
	if j.Manual() {
		if c := j.GetCreationTimestamp(); !c.IsZero() {
			return c.Time, true
		}
		return p.now, true
	}
	return j.ScheduledAt()
}

// beyondHistory reports whether the run of j, due at t and absent from the
// history, may have been entered and dropped since: it is no newer than
// the oldest entry a full history keeps, or than the oldest entry of the
// history this sync started from when that status records the run. (A
// runHistoryLimit raised since leaves that history short of full, and a
// run it dropped, brought back by a stale cache, must not look new.)
func (p *Plan) beyondHistory(j Job, t time.Time) bool {
	rr := p.Status.RecentRuns
	if len(rr) >= p.runHistoryLimit() && !t.After(runTime(&rr[len(rr)-1])) {
		return true
	}
	from := p.cj.Status.RecentRuns
	if len(from) == 0 || !p.recordedBefore(j) {
		return false
	}
	oldest := runTime(&from[0])
	for i := range from {
		oldest = minTime(oldest, runTime(&from[i]))
	}
	return !t.After(oldest)
}

// recordedBefore reports whether the status this sync started from records
// the run of j, a Job the sync found (a Job it makes now is no run of that
// status's, though a run-now Job's name alone cannot tell).
func (p *Plan) recordedBefore(j Job) bool {
	if j.Manual() && !slices.ContainsFunc(p.jobs, func(o Job) bool { return o.GetUID() == j.GetUID() }) {
		return false
	}
	return p.recorded(j, &p.cj.Status)
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

// enterRun enters the run of j, started by trigger, unless the history
// holds it already (then it returns that entry, untouched but for a
// trial's trigger) or it is beyond the history; nil then.
func (p *Plan) enterRun(j Job, trigger cronv1.RunTrigger) *cronv1.RunRecord {
	if r := p.runRecord(j.GetName()); r != nil {
		if trigger == cronv1.TriggerTrial {
			r.Trigger = trigger
		}
		return r
	}
	t, ok := p.isRun(j)
	if !ok || p.beyondHistory(j, t) {
		return nil
	}
	r := cronv1.RunRecord{JobName: j.GetName(), Trigger: trigger, Outcome: cronv1.OutcomeRunning}
	if !j.Manual() {
		r.ScheduledTime = &metav1.Time{Time: t}
	}
	if c := j.GetCreationTimestamp(); !c.IsZero() {
		r.StartTime = c.DeepCopy()
	} else {
		r.StartTime = &metav1.Time{Time: p.now}
	}
	p.Status.RecentRuns = append(p.Status.RecentRuns, r)
	SortRuns(p.Status.RecentRuns)
	p.trimHistory()
	return p.runRecord(j.GetName())
}

// triggerOf is how the run of j started, as far as j says.
func (p *Plan) triggerOf(j Job) cronv1.RunTrigger {
	switch fs := p.Status.FailureStreak; {
	case p.isRequestJob(j):
		return cronv1.TriggerRequested
	case j.Manual():
		return cronv1.TriggerRunNow
	case fs != nil && fs.TrialJob == j.GetName():
		return cronv1.TriggerTrial
	}
	return cronv1.TriggerScheduled
}

// enterOutcome enters the outcome of j, a finished run, and reports
// whether it is new: false when the history has it already, or when the
// run is beyond the history. Beyond it, two outcomes count all the same,
// kept nowhere: the trial still awaited (status.failureStreak.trialJob
// names a trial until its outcome counts, so the streak has not counted
// it), and a success no failure the history holds finished after (left
// out, the streak would go on past it and pause once too often). Counted
// again, when a cache older than the status brings it back, that success
// also wipes the failures counted after it that the history no longer
// holds (pushed out by runs still running): a pause later, the bound's
// one pause fewer, never one too many.
func (p *Plan) enterOutcome(j Job) bool {
	r := p.runRecord(j.GetName())
	if r == nil {
		r = p.enterRun(j, p.triggerOf(j))
	}
	switch fs := p.Status.FailureStreak; {
	case r == nil && (fs != nil && fs.TrialJob == j.GetName() || j.Finished() == batchv1.JobComplete && !p.failedAfter(j)):
		r = &cronv1.RunRecord{} // counted, kept nowhere
	case r == nil || outcomeEntered(r):
		return false
	}
	done := p.finishedAt(j)
	r.CompletionTime = &metav1.Time{Time: done}
	switch j.Finished() {
	case batchv1.JobFailed:
		r.Outcome = cronv1.OutcomeFailed
		reason, message := j.Failure()
		r.Reason, r.Message = cutBytes(reason, 128), cutBytes(message, maxRunMessage)
		if st := &p.Status; st.LastFailureTime == nil || done.After(st.LastFailureTime.Time) {
			st.LastFailureTime = &metav1.Time{Time: done}
		}
	default:
		r.Outcome = cronv1.OutcomeSucceeded
	}
	return true
}

// failedAfter reports whether the history holds a failure that finished
// after j did.
func (p *Plan) failedAfter(j Job) bool {
	done := p.finishedAt(j)
	return slices.ContainsFunc(p.Status.RecentRuns, func(r cronv1.RunRecord) bool {
		return r.Outcome == cronv1.OutcomeFailed && r.CompletionTime != nil && r.CompletionTime.Time.After(done)
	})
}

// runGone notes that the Job named name went away (deleted, or detached
// from the CronJob) before its outcome was seen.
func (p *Plan) runGone(name string) {
	if r := p.runRecord(name); r != nil && r.Outcome == cronv1.OutcomeRunning {
		r.Outcome = cronv1.OutcomeUnknown
	}
}

// settleRunning marks Unknown the running entries whose Job neither the
// sync sees nor status.active lists: seen finished by a decision this sync
// no longer starts from (StaleDecision), and gone since.
func (p *Plan) settleRunning(jobs []Job) {
	for i := range p.Status.RecentRuns {
		r := &p.Status.RecentRuns[i]
		if r.Outcome != cronv1.OutcomeRunning ||
			slices.ContainsFunc(jobs, func(j Job) bool { return j.GetName() == r.JobName }) ||
			slices.ContainsFunc(p.Status.Active, func(ref corev1.ObjectReference) bool { return ref.Name == r.JobName }) {
			continue
		}
		r.Outcome = cronv1.OutcomeUnknown
	}
}

// trimHistory keeps the history within spec.runHistoryLimit.
func (p *Plan) trimHistory() {
	p.Status.RecentRuns = trimRuns(p.Status.RecentRuns, p.runHistoryLimit())
}

// TrimRuns cuts runs, a history sorted newest first (SortRuns), to the
// limit spec asks: the oldest entries go.
func TrimRuns(runs []cronv1.RunRecord, spec *cronv1.CronJobSpec) []cronv1.RunRecord {
	return trimRuns(runs, (&Plan{cj: &cronv1.CronJob{Spec: *spec}}).runHistoryLimit())
}

func trimRuns(rr []cronv1.RunRecord, limit int) []cronv1.RunRecord {
	if len(rr) > limit {
		rr = rr[:limit:limit]
	}
	return rr
}

// cutBytes cuts s to at most n bytes, on a rune boundary.
func cutBytes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
