package planner

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	cronv1 "github.com/cronjob-controller/cronjob-controller/pkg/apis/batch/v1"
	"github.com/cronjob-controller/cronjob-controller/pkg/schedule"
)

// Event and condition reasons of spec.failurePolicy, the breaker across
// runs: it opens (pauses scheduled runs) after pauseAfter runs in a row
// failed, lets one trial run through once a cool-down has passed, and
// closes when a run succeeds or someone resumes the CronJob.
const (
	// ReasonPaused (Warning): scheduled runs pause, after a streak or after
	// a failed trial. Once per opening.
	ReasonPaused = "Paused"
	// ReasonTrialRun (Normal): the cool-down has passed and a run starts
	// as the trial.
	ReasonTrialRun = "TrialRun"
	// ReasonResumed (Normal): a success or a resume by hand ended a pause.
	ReasonResumed = "Resumed"

	// Reasons of the Paused condition besides ReasonResumed.
	ReasonFailureStreak      = "FailureStreak"
	ReasonTrialRunning       = "TrialRunning"
	ReasonFailuresBelowLimit = "FailuresBelowLimit"
)

// finishedRun is a run whose Job a sync sees finished with no outcome in
// the run history: its outcome is entered, and counted, once, now.
type finishedRun struct {
	job Job
	// done orders the outcomes: when the Job finished, else when its run
	// started (the scheduled time, or a run-now Job's creation), so the
	// order is the Jobs' own, not that of the syncs that saw them.
	done time.Time
}

// noteFinished keeps j, a Job of cj seen finished, for observeFailures if
// its outcome is not in the run history yet. Only runs have outcomes: a
// scheduled or run-now Job the controller made; and not a run whose time
// is still to come (a clock that was ahead): it is no run yet, and is
// entered once its time has come.
func (p *Plan) noteFinished(j Job) {
	at, ok := p.isRun(j)
	if !ok || (!j.Manual() && at.After(p.now)) {
		return
	}
	if r := p.runRecord(j.GetName()); r != nil && outcomeEntered(r) {
		// Entered already: the cache that shows it again is older than
		// the status that entered it.
		return
	}
	if done := j.FinishTime(); done != nil {
		at = done.Time
	}
	p.finished = append(p.finished, finishedRun{job: j, done: at})
}

// enterOutcomes enters the outcomes noted in this sync in the order the
// Jobs finished, calling counted for each one newly entered.
func (p *Plan) enterOutcomes(counted func(Job)) {
	slices.SortStableFunc(p.finished, func(a, b finishedRun) int {
		if c := a.done.Compare(b.done); c != 0 {
			return c
		}
		return strings.Compare(a.job.GetName(), b.job.GetName())
	})
	for _, r := range p.finished {
		if p.enterOutcome(r.job) && counted != nil {
			counted(r.job)
		}
	}
	p.finished = nil
}

// observeFailures counts the outcomes seen in this sync and moves the
// breaker: it runs after reconcileActive, before any run is planned.
func (p *Plan) observeFailures() {
	policy := p.cj.Spec.FailurePolicy
	st := &p.Status
	if policy == nil {
		// Without a policy there is nothing to pause: the state goes, so
		// a policy set again starts afresh. The history takes the
		// outcomes all the same.
		st.FailureStreak = nil
		meta.RemoveStatusCondition(&st.Conditions, cronv1.ConditionPaused)
		p.enterOutcomes(nil)
		return
	}
	if st.FailureStreak == nil {
		// A resume asked before the policy was set (or again) is no
		// request of this streak's.
		st.FailureStreak = &cronv1.FailureStreak{LastResume: RunNowKey(p.cj.Annotations[cronv1.ResumeAnnotation])}
	}
	fs := st.FailureStreak
	wasPaused := fs.PausedAt != nil
	p.pausedAtStart = wasPaused
	if fs.TrialJob != "" && !slices.ContainsFunc(st.Active, func(ref corev1.ObjectReference) bool { return ref.Name == fs.TrialJob }) &&
		!slices.ContainsFunc(p.jobs, func(j Job) bool { return j.GetName() == fs.TrialJob && p.outcomeAwaited(j) }) {
		// Gone, going or detached before its outcome was seen: no
		// verdict. Let go of it before adoptTrial, or a trial started
		// after it whose record a crash or a lost answer left unnamed
		// would go unnamed and a second one start.
		fs.TrialJob = ""
	}
	p.adoptTrial()
	pauseAfter := max(policy.PauseAfter, 1) // below 1 only past the schema

	// A resume first: were its status lost, the next sync would handle it
	// again, and after the outcomes of the runs it let start.
	p.handleResume()
	// Only outcomes newly entered in the run history count: whatever
	// shows a Job again later finds its outcome there.
	p.enterOutcomes(func(j Job) {
		p.countOutcome(j)
		// One outcome at a time, as syncs one by one would have: a
		// failure that pauses and a later success that resumes both show
		// (their Events), and pausedAt is the failure's own time.
		if fs.PausedAt == nil && fs.Count >= pauseAfter {
			p.pause(fmt.Sprintf("%d runs in a row failed, the latest Job %s", fs.Count, fs.LastFailedJob), p.finishedAt(j))
		}
	})
	if fs.TrialJob != "" && !slices.ContainsFunc(st.Active, func(ref corev1.ObjectReference) bool { return ref.Name == fs.TrialJob }) {
		// Gone (or detached) before its outcome was seen: no verdict, so
		// the next due run is a new trial.
		fs.TrialJob = ""
	}
	if fs.PausedAt == nil && fs.Count >= pauseAfter {
		// pauseAfter lowered to the count.
		p.pause(fmt.Sprintf("%d runs in a row failed, the latest Job %s", fs.Count, fs.LastFailedJob), p.now)
	}
	p.noteBreaker(wasPaused)
}

// finishedAt is when j finished, as far as the sync can tell: its finish
// time, unless unknown or after now (a clock ahead), then now.
func (p *Plan) finishedAt(j Job) time.Time {
	if done := j.FinishTime(); done != nil && !done.Time.After(p.now) {
		return done.Time
	}
	return p.now
}

// adoptTrial names the trial Job when the status this sync starts from
// does not: the run history holds a trial of this pause still running (a
// decision that named it was judged again under an edited policy), or a
// crash between the trial's create and its status write lost both, and
// then, once the cool-down has passed, the only scheduled run that can
// have started is the trial.
func (p *Plan) adoptTrial() {
	fs := p.Status.FailureStreak
	if fs.PausedAt == nil || fs.TrialJob != "" {
		return
	}
	for _, r := range p.Status.RecentRuns {
		if r.Trigger == cronv1.TriggerTrial && r.Outcome == cronv1.OutcomeRunning && r.StartTime != nil && !r.StartTime.Before(fs.PausedAt) &&
			slices.ContainsFunc(p.jobs, func(j Job) bool { return j.GetName() == r.JobName && p.outcomeAwaited(j) }) {
			fs.TrialJob = r.JobName
			return
		}
	}
	resumeAt := p.resumeAt()
	if resumeAt.IsZero() {
		return
	}
	from := resumeAt
	if stored := fs.ResumeAt; stored != nil && stored.Time.Before(resumeAt) && !stored.Before(fs.PausedAt) {
		// The status this sync starts from was written under a shorter
		// cool-down: resumeAfter was lengthened since. A sync under the
		// policy it was written with may have started the trial from it
		// and lost the write that named it (a conflict with that very
		// edit), and its run is due at or after the cool-down it saw.
		from = stored.Time
	}
	for _, j := range p.jobs {
		// A time still to come too: a replica whose clock was ahead made
		// it, and it is the trial all the same.
		if at, ok := j.ScheduledAt(); ok && !j.Manual() && !at.Before(from) && p.outcomeAwaited(j) {
			fs.TrialJob = j.GetName()
			if r := p.runRecord(j.GetName()); r == nil || r.Trigger != cronv1.TriggerTrial {
				// Started by a sync that did not know of the pause (its
				// status lost, or older than the pause's), or under the
				// shorter cool-down: it is the trial all the same, and
				// says so once.
				how := "started before this pause was known"
				if at.Before(resumeAt) {
					how = "started before resumeAfter was lengthened"
				}
				p.event(corev1.EventTypeNormal, ReasonTrialRun, "Job %s, %s, is the trial run; its success resumes scheduled runs", j.GetName(), how)
				if r != nil {
					r.Trigger = cronv1.TriggerTrial
				}
			}
			return
		}
	}
}

// controls reports whether j is one of the CronJob's Jobs rather than a
// detached record.
func (p *Plan) controls(j Job) bool {
	return !slices.ContainsFunc(p.records, func(r Job) bool { return r.GetUID() == j.GetUID() })
}

// outcomeAwaited reports whether j, a Job the sync sees, is one of the
// CronJob's whose outcome may still come: controlled, and not going away
// (deleted, held by a finalizer), whose outcome reconcileActive gives up
// on. Only such a Job can be the trial: one going away gives no verdict,
// even if it shows finished later (a status written to a Job being
// deleted), and taken for the trial it would hide the trial started after
// it. A trial's failure seen before its deletion was counted then.
func (p *Plan) outcomeAwaited(j Job) bool {
	return p.controls(j) && j.GetDeletionTimestamp() == nil
}

// countOutcome applies the outcome of one finished run.
func (p *Plan) countOutcome(j Job) {
	fs := p.Status.FailureStreak
	switch j.Finished() {
	case batchv1.JobFailed:
		if p.succeededAfter(j) {
			// In finish order a success the history holds came after it
			// (seen first: the syncs saw them out of order) and began the
			// streak afresh: it adds nothing.
			return
		}
		if fs.Count < math.MaxInt32 {
			fs.Count++
		}
		fs.LastFailedJob = j.GetName()
		if fs.PausedAt != nil && fs.TrialJob == j.GetName() {
			fs.TrialJob = ""
			if fs.Pauses < math.MaxInt32 {
				fs.Pauses++
			}
			p.reopen(fmt.Sprintf("the trial run's Job %s failed", j.GetName()), p.finishedAt(j))
		}
	case batchv1.JobComplete:
		if fs.PausedAt != nil {
			if done := j.FinishTime(); done != nil && done.Before(fs.PausedAt) {
				// In finish order it came before the failure that
				// opened the pause: seen only now (a stale cache brought
				// it back), it ends nothing.
				return
			}
			p.resume(fmt.Sprintf("Job %s succeeded", j.GetName()), p.finishedAt(j))
		}
		fs.Count, fs.LastFailedJob = 0, ""
	}
}

// succeededAfter reports whether the run history holds a success that
// finished after the failed Job j. Times are to the second: within one,
// the order is unknown, and the failure counts.
func (p *Plan) succeededAfter(j Job) bool {
	done := p.finishedAt(j)
	return slices.ContainsFunc(p.Status.RecentRuns, func(r cronv1.RunRecord) bool {
		return r.Outcome == cronv1.OutcomeSucceeded && r.JobName != j.GetName() && r.CompletionTime != nil && r.CompletionTime.Time.After(done)
	})
}

// handleResume ends a pause for a new value of the resume annotation.
func (p *Plan) handleResume() {
	fs := p.Status.FailureStreak
	value := p.cj.Annotations[cronv1.ResumeAnnotation]
	if value == "" || RunNowKey(value) == fs.LastResume {
		return
	}
	fs.LastResume = RunNowKey(value)
	if fs.PausedAt != nil {
		p.resume(fmt.Sprintf("resumed by hand (annotation %s=%s)", cronv1.ResumeAnnotation, quote(value)), p.now)
	}
	fs.Count, fs.LastFailedJob = 0, ""
}

// pause opens the breaker as of at (the failure that opened it).
func (p *Plan) pause(why string, at time.Time) {
	fs := p.Status.FailureStreak
	fs.PausedAt, fs.Pauses, fs.TrialJob = &metav1.Time{Time: at}, 1, ""
	p.event(corev1.EventTypeWarning, ReasonPaused, "Pausing scheduled runs: %s; %s", why, p.untilWhen())
}

// reopen opens the breaker again as of at, after a failed trial, the
// cool-down doubled (Pauses was counted up).
func (p *Plan) reopen(why string, at time.Time) {
	fs := p.Status.FailureStreak
	fs.PausedAt = &metav1.Time{Time: at}
	p.event(corev1.EventTypeWarning, ReasonPaused, "Pausing scheduled runs again: %s; %s", why, p.untilWhen())
}

// resume closes the breaker as of at: runs due from the pause until then
// were due while paused, and stay held (heldSpans).
func (p *Plan) resume(why string, at time.Time) {
	fs := p.Status.FailureStreak
	if p.pausedAtStart && len(p.heldSpans) == 0 {
		// The pause the sync started in: the runs due in it stay held.
		// (One that opens and closes among this sync's outcomes holds
		// none: the controller did not know of it while they came due.)
		p.heldSpans = append(p.heldSpans, heldSpan{from: fs.PausedAt.Time, until: at})
	}
	fs.PausedAt, fs.Pauses, fs.TrialJob, fs.ResumeAt = nil, 0, "", nil
	p.resumedBy = why
	p.event(corev1.EventTypeNormal, ReasonResumed, "Resuming scheduled runs: %s", why)
}

// untilWhen says how a pause ends.
func (p *Plan) untilWhen() string {
	if at := p.resumeAt(); !at.IsZero() {
		return fmt.Sprintf("the first run due at or after %s (a cool-down of %v) starts as a trial", formatTime(at), p.coolDown())
	}
	return "until a run succeeds or the CronJob is resumed (kubectl cronjob resume " + p.cj.Name + ")"
}

// noteBreaker writes resumeAt and the Paused condition.
func (p *Plan) noteBreaker(wasPaused bool) {
	st := &p.Status
	fs := st.FailureStreak
	fs.ResumeAt = timeOrNil(p.resumeAt())
	policy := p.cj.Spec.FailurePolicy
	switch {
	case fs.PausedAt != nil && fs.TrialJob != "":
		since := ""
		if r := p.runRecord(fs.TrialJob); r != nil && r.StartTime != nil {
			// No bound of the controller's on a trial (the Job's
			// activeDeadlineSeconds is one): say since when it runs.
			since = ", running since " + formatTime(r.StartTime.Time)
		}
		p.setCondition(cronv1.ConditionPaused, metav1.ConditionTrue, ReasonTrialRunning,
			fmt.Sprintf("Job %s is the trial run%s after a cool-down of %v: its success resumes scheduled runs, its failure pauses them again", fs.TrialJob, since, p.coolDown()))
	case fs.PausedAt != nil:
		p.setCondition(cronv1.ConditionPaused, metav1.ConditionTrue, ReasonFailureStreak,
			fmt.Sprintf("Scheduled runs are paused: %d runs in a row failed, the latest Job %s; %s", fs.Count, fs.LastFailedJob, p.untilWhen()))
	case p.resumedBy != "":
		p.setCondition(cronv1.ConditionPaused, metav1.ConditionFalse, ReasonResumed, "Scheduled runs resumed: "+p.resumedBy)
	default:
		prior := meta.FindStatusCondition(st.Conditions, cronv1.ConditionPaused)
		if wasPaused || fs.Count > 0 || prior == nil || prior.Status != metav1.ConditionFalse {
			p.setCondition(cronv1.ConditionPaused, metav1.ConditionFalse, ReasonFailuresBelowLimit,
				fmt.Sprintf("%d of %d runs in a row failed", fs.Count, max(policy.PauseAfter, 1)))
		} else {
			// Keep saying how the last pause ended until a run fails.
			p.setCondition(cronv1.ConditionPaused, metav1.ConditionFalse, prior.Reason, prior.Message)
		}
	}
}

// holding reports whether a pause holds any run of this sync: it is
// paused, or a pause ended in it.
func (p *Plan) holding() bool { return p.paused() || len(p.heldSpans) > 0 }

// heldSpan is a pause a sync ended: from its start until the success or
// resume that ended it.
type heldSpan struct{ from, until time.Time }

// heldBack reports whether a run due at t fell in a pause this sync ended.
func (p *Plan) heldBack(t time.Time) bool {
	return slices.ContainsFunc(p.heldSpans, func(h heldSpan) bool { return !t.Before(h.from) && t.Before(h.until) })
}

// paused reports whether scheduled runs are paused now.
func (p *Plan) paused() bool {
	return p.cj.Spec.FailurePolicy != nil && p.Status.FailureStreak != nil && p.Status.FailureStreak.PausedAt != nil
}

// trialDue reports whether the cool-down has passed with no trial running:
// the first run due at or after resumeAt may start.
func (p *Plan) trialDue() (time.Time, bool) {
	if !p.paused() || p.Status.FailureStreak.TrialJob != "" {
		return time.Time{}, false
	}
	at := p.resumeAt()
	return at, !at.IsZero() && !p.now.Before(at)
}

// coolDown is the pause's cool-down: resumeAfter doubled for each failed
// trial, at most maxResumeAfter (24h when unset, never below resumeAfter);
// 0 without resumeAfter.
func (p *Plan) coolDown() time.Duration {
	policy := p.cj.Spec.FailurePolicy
	if policy == nil || policy.ResumeAfter == nil || policy.ResumeAfter.Duration <= 0 {
		return 0
	}
	first := policy.ResumeAfter.Duration
	limit := cronv1.DefaultMaxResumeAfter
	if policy.MaxResumeAfter != nil && policy.MaxResumeAfter.Duration > 0 {
		limit = policy.MaxResumeAfter.Duration
	}
	limit = max(limit, first)
	d := first
	for n := int32(1); n < p.Status.FailureStreak.Pauses && d < limit; n++ {
		if d > limit/2 {
			// Doubling would pass the cap (or overflow, for a cap stored
			// past the schema's year).
			return limit
		}
		d *= 2
	}
	return d
}

// resumeAt is when the cool-down ends, zero when it never does (not
// paused, or no resumeAfter).
func (p *Plan) resumeAt() time.Time {
	fs := p.Status.FailureStreak
	d := p.coolDown()
	if fs == nil || fs.PausedAt == nil || d == 0 {
		return time.Time{}
	}
	at := fs.PausedAt.Add(d)
	if at.After(lastStorable) || at.Before(fs.PausedAt.Time) {
		// A cool-down stored past the schema's year that no status can
		// hold: as good as never, a pause until resumed.
		return time.Time{}
	}
	return at
}

// pauseHold is the hold reason of a run due at t while paused, "" for the
// trial: the first run at or after resumeAt holdRuns asks about (oldest
// first), once per plan.
func (p *Plan) pauseHold(t time.Time) string {
	if !p.paused() {
		if p.heldBack(t) {
			return cronv1.MissedPaused
		}
		return ""
	}
	if at, ok := p.trialDue(); ok && p.trialAt.IsZero() && !t.Before(at) {
		p.trialAt = t
		return ""
	}
	return cronv1.MissedPaused
}

// pausedNext is status.nextScheduleTime while paused, next being the
// schedule's next time: the earliest the trial can start, or none without
// resumeAfter or while a trial runs.
func (p *Plan) pausedNext(sched *schedule.Schedule, base, next time.Time) time.Time {
	at := p.resumeAt()
	if at.IsZero() || p.Status.FailureStreak.TrialJob != "" || next.IsZero() {
		return time.Time{}
	}
	if !next.Before(at) {
		return next
	}
	// The first time at or after at: the one after the last before it.
	from := sched.Before(at, base)
	if from.IsZero() {
		from = base
	}
	return sched.Next(from)
}

// outcomeUnwritten reports whether spec.failurePolicy counts j's outcome
// and the written status has not seen it yet (it still lists j active):
// deleting j first, a crash before the write would lose the outcome.
func (p *Plan) outcomeUnwritten(j Job, written *cronv1.CronJobStatus) bool {
	return p.cj.Spec.FailurePolicy != nil && activeIndex(written.Active, j.GetUID()) >= 0
}

// startedRun notes, for spec.failurePolicy, a run whose Job c found or
// made: the trial's Job is named, and a Job found finished already (made
// by a sync whose status write was lost, and missed by the cache) has its
// outcome counted now, the only look the status gets at it.
func (p *Plan) startedRun(c Create, j Job) {
	entered := j.Finished() != "" && j.GetDeletionTimestamp() == nil && p.enterOutcome(j)
	fs := p.Status.FailureStreak
	if p.cj.Spec.FailurePolicy == nil || fs == nil {
		return
	}
	wasPaused := fs.PausedAt != nil
	if c.Trial && fs.PausedAt != nil && fs.TrialJob == "" {
		fs.TrialJob = j.GetName()
		p.event(corev1.EventTypeNormal, ReasonTrialRun, "Cool-down of %v over: Job %s is the trial run; its success resumes scheduled runs", p.coolDown(), j.GetName())
	}
	if entered {
		p.countOutcome(j)
		if fs.PausedAt == nil && fs.Count >= max(p.cj.Spec.FailurePolicy.PauseAfter, 1) {
			p.pause(fmt.Sprintf("%d runs in a row failed, the latest Job %s", fs.Count, fs.LastFailedJob), p.finishedAt(j))
		}
		p.pausedInPlan = fs.PausedAt != nil
	}
	// The next time was planned before the trial was chosen, or before
	// this outcome moved the breaker: say what the next sync will.
	p.noteNext()
	p.noteBreaker(wasPaused)
}
