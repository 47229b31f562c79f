// Package planner decides what one sync of a CronJob does. Decide is a pure
// function of the CronJob, the Jobs it controls and the time: it returns the
// Jobs to delete and to create, the status to write, the Events to emit and
// when to look again. The controller carries the plan out and reports each
// create's and delete's outcome back through the Plan's methods, which are
// pure too, so every decision about runs and status is made here and tested
// without a client.
//
// The rules, in the order Decide applies them:
//   - status.active becomes the unfinished Jobs the CronJob controls; a Job
//     it controls but did not list is adopted, and a scheduled Job newer than
//     lastScheduleTime moves lastScheduleTime to its time (a crash between a
//     create and its status write loses nothing);
//   - finished Jobs beyond the history limits are deleted, oldest first;
//   - a new run-now value asks for one Job, whatever suspend and the
//     concurrency policy say;
//   - a time is a run when the schedule in force names it (spec.schedule, or
//     any entry of spec.schedules), it lies in the active window
//     (spec.notBefore, spec.notAfter; see window.go), it is after the
//     last run started (the CronJob's creation before the first) and after
//     every time counted as missed, and each earlier schedule still in force
//     at that time names it
//     too (see PreviousSchedules): an edit neither starts a surprise run nor
//     loses a run both schedules agree on;
//   - under catchUpPolicy Latest (and None) the most recent run is
//     considered, under All the newest catchUpLimit within the deadline,
//     oldest first; older runs are counted as missed, each once, when they
//     can no longer start;
//   - a run a Calendar of spec.excludeCalendars excludes, or any run while
//     one of them cannot be resolved, starts nothing and is counted missed
//     (Excluded, CalendarUnresolved), never late and never owed later; it is
//     counted only once no older run is still to start (exclusions.go);
//   - a run later than its starting deadline is missed; under Forbid a run
//     waits, uncounted, while an earlier Job is active, and runs start one
//     at a time, the oldest that can (a run refused for good gives way to
//     the next in the same sync); under Replace the active Jobs are
//     deleted first.
package planner

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	cronv1 "github.com/cronjob-controller/cronjob-controller/pkg/apis/batch/v1"
	"github.com/cronjob-controller/cronjob-controller/pkg/job"
	"github.com/cronjob-controller/cronjob-controller/pkg/schedule"
)

// Event reasons. Warnings are things a user should act on.
const (
	ReasonSuccessfulCreate   = "SuccessfulCreate"
	ReasonSawCompletedJob    = "SawCompletedJob"
	ReasonSuccessfulDelete   = "SuccessfulDelete"
	ReasonMissSchedule       = "MissSchedule"
	ReasonJobAlreadyActive   = "JobAlreadyActive"
	ReasonTooManyMissedTimes = "TooManyMissedTimes"
	ReasonInvalidSchedule    = schedule.ReasonInvalidSchedule
	ReasonUnknownTimeZone    = schedule.ReasonUnknownTimeZone
	ReasonFailedCreate       = "FailedCreate"
	ReasonFailedDelete       = "FailedDelete"
	ReasonUnexpectedJob      = "UnexpectedJob"
	ReasonMissingJob         = "MissingJob"
	// ReasonExpired: spec.notAfter has passed (window.go); also the reason
	// of the Expired condition.
	ReasonExpired = "Expired"
)

// Condition reasons that are not also Event or missed-run reasons.
const (
	reasonScheduleValid = "Valid"
	reasonJobCreated    = "JobCreated"
	reasonJobRejected   = "JobRejected"
	reasonRunStarted    = "Started"
)

// NoneGrace is how late a run may start under catchUpPolicy None.
const NoneGrace = time.Minute

// defaultCatchUpLimit is catchUpLimit when the API server's default did not
// fill it in (an object from before the field existed).
const defaultCatchUpLimit = 10

// Job is what the planner reads of a Job the CronJob controls.
type Job interface {
	metav1.Object
	// Finished is the condition (Complete or Failed) that ended the Job, or
	// "" while it runs.
	Finished() batchv1.JobConditionType
	StartTime() *metav1.Time
	CompletionTime() *metav1.Time
	// FinishTime is when the Job finished: its completion time, or when
	// its Failed condition became True; nil while it runs or when unknown.
	FinishTime() *metav1.Time
	// Failure is the reason and message of a failed Job's Failed
	// condition; empty for other Jobs.
	Failure() (reason, message string)
	// ScheduledAt is the time of the run the Job is for, from its
	// scheduled-at annotation; false for a Job without one.
	ScheduledAt() (time.Time, bool)
	// Manual reports a Job started by hand (run-now).
	Manual() bool
	// RunNow is a manual Job's run-now value and the value handled before
	// it (as status.lastRunNow keeps them), and the number of its request
	// (status.runNowCount once handled; 0 on a Job made before requests
	// were numbered), while the Job holds the run-record finalizer, that
	// is, while no written status may record it.
	RunNow() (key, after string, seq int64, ok bool)
}

// Input is everything a decision depends on.
type Input struct {
	// CronJob is read, never changed.
	CronJob *cronv1.CronJob
	// Jobs are the Jobs the CronJob controls, as the controller knows them
	// (its cache, with its own recent writes).
	Jobs []Job
	// Gone holds the UIDs of Jobs in status.active, absent from Jobs, that
	// the API server said no longer exist. An active Job neither in Jobs
	// nor in Gone nor in Detached stays active: only the API server can
	// say it is gone.
	Gone map[types.UID]bool
	// Records are Jobs made for the CronJob that a user detached (removed
	// the owner reference) before its status recorded their runs: they
	// still hold the run-record finalizer. Not the CronJob's to track,
	// count, prune or delete, but each is the record of a run started, so
	// the run is neither started again nor counted missed, and the
	// finalizer goes once a written status records it.
	Records []Job
	// Detached holds the UIDs of Jobs in status.active that still exist
	// but that the CronJob no longer controls (a user removed the owner
	// reference): they are no longer its runs to track, hold back or
	// delete.
	Detached map[types.UID]bool
	// Now is the controller's clock.
	Now time.Time
	// Written is the status the API server holds, as far as the controller
	// knows, when CronJob.Status holds one decided but not written yet; nil
	// when they are the same.
	Written *cronv1.CronJobStatus
	// Calendars are the Calendars spec.excludeCalendars names, by name, as
	// the controller found them; a name absent was not found.
	Calendars map[string]*cronv1.Calendar
	// Requests are the CronJobRuns that name the CronJob (requests.go).
	Requests []Request
	// CalendarCache, when set, keeps Calendars parsed between syncs, so an
	// unchanged Calendar is not parsed again; a decision is the same with
	// it or without it (nil).
	CalendarCache *CalendarCache
}

// DeleteReason says why a Job is deleted; it doubles as a metric label.
type DeleteReason string

const (
	// DeleteHistory: a finished Job beyond the history limits. Best effort.
	DeleteHistory DeleteReason = "history"
	// DeleteReplace: an active Job under concurrencyPolicy Replace. The
	// scheduled creates wait for every such delete.
	DeleteReplace DeleteReason = "replace"
)

// Delete is a Job to delete, only if it still has this UID.
type Delete struct {
	Name   string
	UID    types.UID
	Reason DeleteReason
}

// Create is a Job to create. Scheduled creates are made in order and stop at
// the first that fails in a way a retry can mend, so a run is never skipped
// for a later one; a manual create stands on its own.
type Create struct {
	// Job is the object to create.
	Job *batchv1.Job
	// Manual marks the Job of a run-now value; otherwise it is the run
	// scheduled at Time.
	Manual bool
	Time   time.Time
	// Value is the run-now value a manual Job is for, and Seq the number
	// of its request (status.runNowCount once it is handled).
	Value string
	Seq   int64
	// Request is the CronJobRun a manual Job is for ("" for a run-now).
	Request string
	// Trial marks the run that spec.failurePolicy lets through after a
	// pause's cool-down: its outcome decides whether the pause ends.
	Trial bool
	// CatchUp marks a scheduled run started after a later scheduled time
	// has come (catchUpPolicy All making up missed runs).
	CatchUp bool
}

// trigger is how the run of c starts, as the run history says it.
func (c Create) trigger() cronv1.RunTrigger {
	switch {
	case c.Request != "":
		return cronv1.TriggerRequested
	case c.Manual:
		return cronv1.TriggerRunNow
	case c.Trial:
		return cronv1.TriggerTrial
	case c.CatchUp:
		return cronv1.TriggerCatchUp
	}
	return cronv1.TriggerScheduled
}

// What is the run a create is for, in words.
func (c Create) What() string {
	if c.Request != "" {
		return "CronJobRun " + quote(c.Request)
	}
	if c.Manual {
		return "run-now " + quote(c.Value)
	}
	return "the run of " + formatTime(c.Time)
}

// Refusal says why a create was refused for good.
type Refusal string

const (
	// NameTaken: a Job this CronJob does not control has the name.
	NameTaken Refusal = cronv1.MissedNameTaken
	// Rejected: the API server refused the Job as invalid.
	Rejected Refusal = cronv1.MissedJobRejected
)

// Event is a Kubernetes Event to emit about the CronJob.
type Event struct {
	Type, Reason, Message string
}

// Plan is the decision of one sync, and the record of carrying it out.
type Plan struct {
	// Status is the status to write: as decided, then as changed by each
	// outcome reported.
	Status cronv1.CronJobStatus
	// Deletes come first; Replace deletes before any scheduled create.
	Deletes []Delete
	// Creates come after the deletes, a manual one first. Make each only
	// if Wants it, after reporting the outcomes of those before it.
	Creates []Create
	// Events to emit, in order.
	Events []Event
	// Releases are the Jobs whose run-record finalizer may go: they have
	// finished (or are being deleted), and the status the API server holds
	// records their runs and no longer lists them active. Their own field,
	// apart from the run decisions, since they depend on the written
	// status only.
	Releases []Release
	// RequeueAfter is when to look again (0: only when something changes).
	RequeueAfter time.Duration
	// RequestRefusals are the CronJobRuns whose Job was refused for good
	// while the plan was carried out, by name.
	RequestRefusals map[string]RequestRefusal
	// NotRun are the scheduled times this plan settles as not run
	// (missed, superseded, held, refused by a schedule edit) although the
	// view cannot rule out their Jobs, where a run left out would cost a
	// run (lookupsPay), at most schedule.ManyMissed+1.
	// A run whose create's answer was lost, or whose status write was lost
	// before a restart, has a Job the caches may lack past the own-writes
	// window: the controller looks each one up on the API server and
	// decides again with those it finds, so scheduledRunCount counts every
	// run started, maxRuns lets none too many start and no second trial
	// starts (lookUpNotRun).
	NotRun []time.Time

	cj   *cronv1.CronJob
	now  time.Time
	jobs []Job
	// requests are Input.Requests.
	requests []Request
	// adoptedFrom, when set, is the settled point before a Job the status
	// did not record moved it forward: the runs in between were passed
	// over by the sync whose status write was lost.
	adoptedFrom time.Time
	// priorSched is the schedule the status said was in force before this
	// sync looked at the spec: the one an adopted run was started under.
	priorSched *schedule.Schedule
	// chain and chainFrom memoise unrecordedRunNow.
	chain     []Job
	chainFrom *runNowState
	// oneAtATime: the scheduled creates are alternatives (Forbid).
	oneAtATime bool
	// scheduledStarted: a scheduled run's Job was reported started.
	scheduledStarted bool
	// excl is what spec.excludeCalendars says (nil: it names none); held
	// are the runs it holds not counted yet (see holdRuns).
	excl *exclusions
	held []heldRun
	// records are the detached Jobs that record runs (Input.Records kept
	// by namedRecords).
	records []Job
	// finished are the runs seen finished for the first time, whose
	// outcomes spec.failurePolicy counts (failures.go).
	finished []finishedRun
	// resumedBy says how a pause ended in this sync; trialAt is the run
	// chosen as the trial.
	resumedBy string
	trialAt   time.Time
	// heldSpans are the pauses this sync ended: the runs due in them were
	// due while paused, and are held as then.
	heldSpans []heldSpan
	// pausedAtStart: the status this sync started from was paused.
	pausedAtStart bool
	// pausedInPlan: an outcome reported while the plan was carried out
	// paused scheduled runs.
	pausedInPlan bool
	// sched, base and dueNext are what planRuns computed the next run
	// from, so an outcome reported while the plan is carried out can move
	// nextScheduleTime as the next sync would (noteNext); sched is nil
	// when no run was planned.
	sched         *schedule.Schedule
	base, dueNext time.Time
}

// Wants reports whether c is still to be made, given the outcomes reported
// so far. Under Forbid the scheduled creates are alternatives, oldest first:
// once one has started, the rest wait for it to finish.
func (p *Plan) Wants(c Create) bool {
	if !c.Manual && !c.Trial && p.pausedInPlan && !slices.ContainsFunc(p.Deletes, func(d Delete) bool { return d.Reason == DeleteReplace }) {
		// An outcome reported in this plan paused scheduled runs: the
		// run stays owed, and the next sync holds it. (Under Replace the
		// running Jobs are gone already: the run decided before the pause
		// was known takes their place.)
		return false
	}
	if !c.Manual && p.maxRunsReached() {
		// The run reported before it was the last spec.maxRuns allows.
		return false
	}
	return c.Manual || !p.oneAtATime || !p.scheduledStarted
}

// Decide plans what a sync of in.CronJob does at in.Now.
func Decide(in Input) *Plan {
	cj := in.CronJob
	// Every Job that records a run of the CronJob: its own and those
	// detached before their runs were recorded.
	all := in.Jobs
	records := namedRecords(cj, in.Records)
	if len(records) > 0 {
		all = append(slices.Clip(in.Jobs), records...)
	}
	p := &Plan{Status: *cj.Status.DeepCopy(), cj: cj, now: in.Now, jobs: all, records: records, requests: in.Requests}
	p.Status.ObservedGeneration = cj.Generation
	defer p.countActive()
	defer p.noteReady()
	// A limit lowered, or a history StaleDecision merged, is cut to size.
	SortRuns(p.Status.RecentRuns)
	p.trimHistory()

	// Before adoption moves lastScheduleTime past them.
	p.countUnrecorded(all)
	settled := p.settledUntil()
	p.reconcileActive(in.Jobs, in.Gone, in.Detached)
	for _, r := range records {
		p.adoptRun(r)
	}
	if p.settledUntil().After(settled) {
		p.adoptedFrom = settled
	}
	p.observeFailures()
	written := in.Written
	if written == nil {
		written = &cj.Status
	}
	p.pruneHistory(in.Jobs, written)
	p.planReleases(all, written)
	if cj.DeletionTimestamp != nil {
		return p
	}
	p.planRunNow(all)
	p.planRequests(all)
	p.excl = p.resolveCalendars(in.Calendars, in.CalendarCache)
	p.priorSched = parseResolved(p.Status.ResolvedSchedule, p.Status.ResolvedTimeZone)
	sched := p.observeSchedule()
	if sched == nil {
		// No schedule to bound, but Expired still follows the spec's
		// notAfter and maxRuns, edited or not.
		p.noteExpired()
		return p
	}
	p.notRunBeforeWindow(sched)
	sched = p.observeWindow(sched)
	if ptr.Deref(cj.Spec.Suspend, false) {
		p.Status.NextScheduleTime = nil
		// Suspended, it starts nothing; but a run adopted now settles the
		// runs before it, which its lost status write counted.
		p.countAdopted(sched, all)
		return p
	}
	p.planRuns(sched, all)
	return p
}

// reconcileActive makes status.active the unfinished Jobs the CronJob
// controls, and records the newest run started and the newest success.
func (p *Plan) reconcileActive(jobs []Job, gone, detached map[types.UID]bool) {
	st := &p.Status
	for _, j := range jobs {
		i := activeIndex(st.Active, j.GetUID())
		finished := j.Finished()
		switch {
		case finished != "" && i >= 0:
			st.Active = slices.Delete(st.Active, i, i+1)
			p.event(corev1.EventTypeNormal, ReasonSawCompletedJob, "Saw completed job: %s, condition: %s", j.GetName(), finished)
			p.noteFinished(j)
		case finished != "" && (!p.recorded(j, &p.cj.Status) || p.awaitsOutcome(j)):
			// Finished before any status recorded its run, or its run is
			// in the history without an outcome (a decision that saw it
			// finish was lost): this is the first look at its outcome.
			p.noteFinished(j)
		case j.GetDeletionTimestamp() != nil && i >= 0:
			// Going away: it holds back no run under Forbid, and its
			// outcome will not be seen.
			st.Active = slices.Delete(st.Active, i, i+1)
			p.runGone(j.GetName())
		case finished == "" && i < 0 && j.GetDeletionTimestamp() == nil:
			st.Active = append(st.Active, job.Ref(j))
			if _, scheduled := j.ScheduledAt(); !scheduled && !j.Manual() {
				p.event(corev1.EventTypeWarning, ReasonUnexpectedJob,
					"Saw a job that the controller did not create: %s; it is tracked as active", j.GetName())
			}
		}
		if finished == "" && j.GetDeletionTimestamp() == nil {
			// A run no status recorded (its write lost) enters the
			// history as it is seen; one entered already stays as it is
			// (a cache older than its outcome shows it running).
			if at, ok := p.isRun(j); ok && !at.After(p.now) {
				p.enterRun(j, p.triggerOf(j))
			}
		}
		p.adoptRun(j)
		if done := j.CompletionTime(); finished == batchv1.JobComplete && done != nil &&
			(st.LastSuccessfulTime == nil || done.After(st.LastSuccessfulTime.Time)) {
			st.LastSuccessfulTime = done.DeepCopy()
		}
	}
	st.Active = slices.DeleteFunc(st.Active, func(ref corev1.ObjectReference) bool {
		// gone and detached name only refs the controller could not find
		// among jobs.
		if !gone[ref.UID] && !detached[ref.UID] || slices.ContainsFunc(jobs, func(j Job) bool { return j.GetUID() == ref.UID }) {
			return false
		}
		if detached[ref.UID] {
			p.event(corev1.EventTypeNormal, ReasonMissingJob, "Active job %s is no longer controlled by this CronJob; it is no longer tracked", ref.Name)
		} else {
			p.event(corev1.EventTypeNormal, ReasonMissingJob, "Active job went missing: %s", ref.Name)
		}
		p.runGone(ref.Name)
		return true
	})
	p.settleRunning(jobs)
}

// awaitsOutcome reports whether the history holds j's run without an
// outcome.
func (p *Plan) awaitsOutcome(j Job) bool {
	r := p.runRecord(j.GetName())
	return r != nil && !outcomeEntered(r)
}

// namedRecords keeps the records named as the controller names cj's runs:
// a copy of a Job under another name (made by hand from a record's YAML)
// is no record of a run, and must not silence one.
func namedRecords(cj *cronv1.CronJob, records []Job) []Job {
	var out []Job
	for _, r := range records {
		key, after, seq, manual := r.RunNow()
		at, scheduled := r.ScheduledAt()
		switch {
		case r.Manual() && manual && r.GetName() == job.ManualName(cj.Name, cj.UID, after, key, seq):
		case r.Manual() && !manual && job.IsRequestName(cj.Name, r.GetName()):
		case !r.Manual() && scheduled && r.GetName() == job.Name(cj.Name, at):
		default:
			continue
		}
		out = append(out, r)
	}
	return out
}

// adoptRun moves lastScheduleTime to the run of j, a Job made for the
// CronJob, if it is newer. Any run the CronJob made a Job for was started,
// finished or not: a status write lost to a crash must not make it due
// again. A time still to come (a Job made by hand, a clock that was ahead)
// is no run of ours yet, and must not silence the runs before it.
func (p *Plan) adoptRun(j Job) {
	st := &p.Status
	if at, ok := j.ScheduledAt(); ok && !j.Manual() && !at.After(p.now) && (st.LastScheduleTime == nil || at.After(st.LastScheduleTime.Time)) {
		st.LastScheduleTime = &metav1.Time{Time: at}
	}
}

// pruneHistory deletes the finished Jobs beyond the history limits. A Job
// whose run the written status does not record yet is kept until it does:
// deleting it first would leave no trace of the run for a controller that
// takes over before the write, and that one would start the run again.
func (p *Plan) pruneHistory(jobs []Job, written *cronv1.CronJobStatus) {
	var finished []Job
	for _, j := range jobs {
		if j.GetDeletionTimestamp() == nil && j.Finished() != "" {
			finished = append(finished, j)
		}
	}
	spec := p.cj.Spec
	// Oldest first within each kind; a Job held holds every newer one of
	// its kind, so the history never keeps an older Job than it deletes.
	held := map[batchv1.JobConditionType]bool{}
	for _, j := range job.ToPrune(finished, spec.SuccessfulJobsHistoryLimit, spec.FailedJobsHistoryLimit) {
		if at, ok := j.ScheduledAt(); ok && !j.Manual() && at.After(p.now) {
			// Not a run yet (made by hand, or by a clock that was ahead):
			// no status can record it before its time, so it waits alone
			// and holds back nothing.
			p.requeueBy(at.Add(time.Second))
			continue
		}
		if held[j.Finished()] || !p.recorded(j, written) || p.outcomeUnwritten(j, written) || p.requestHolds(j) {
			held[j.Finished()] = true
			// Look again once the status write has had time to land.
			p.requeueBy(p.now.Add(time.Second))
			continue
		}
		p.Deletes = append(p.Deletes, Delete{Name: j.GetName(), UID: j.GetUID(), Reason: DeleteHistory})
	}
}

// Release is a Job whose run-record finalizer (job.RunRecordFinalizer) to
// remove, only if it still has this UID.
type Release struct {
	Name string
	UID  types.UID
	// Finalizers are the Job's finalizers as the sync saw them, so the
	// release can remove exactly ours.
	Finalizers []string
}

// planReleases lists the Jobs whose finalizer may go (see Releases). A Job
// being deleted before its run and its outcome are recorded is looked at
// again soon, so it does not hang in Terminating longer than the status
// write takes.
func (p *Plan) planReleases(jobs []Job, written *cronv1.CronJobStatus) {
	var waiting bool
	p.Releases, waiting = releases(p, jobs, written)
	if waiting {
		p.requeueBy(p.now.Add(time.Second))
	}
	for _, j := range jobs {
		if at, ok := j.ScheduledAt(); ok && !j.Manual() && at.After(p.now) && job.HoldsRunRecord(j) {
			p.requeueBy(at.Add(time.Second))
		}
	}
}

// Releases lists the Jobs of cj holding the run-record finalizer that have
// finished (or are being deleted) and whose run the written status records
// and no longer lists active: the finalizer kept them as the only record
// of the run and of its outcome, and now the status is one of both. A
// running Job keeps it, so the status write that records a run it just
// started releases nothing, and a burst pays no release: the release
// follows the status write that sees the Job finish. (A Job released at
// the first write could go, by a TTL of 0, the moment it finishes, before
// any status saw it leave status.active.) A CronJob being deleted releases
// every Job: no run of it will ever be decided again. waiting reports a Job
// being deleted whose run or outcome is not recorded yet. requests are the
// CronJobRuns naming cj: the Job of one is held until its status records it.
func Releases(cj *cronv1.CronJob, jobs []Job, written *cronv1.CronJobStatus, requests []Request) ([]Release, bool) {
	return releases(&Plan{cj: cj, jobs: jobs, requests: requests}, jobs, written)
}

func releases(p *Plan, jobs []Job, written *cronv1.CronJobStatus) (releases []Release, waiting bool) {
	cj := p.cj
	for _, j := range jobs {
		if !job.HoldsRunRecord(j) {
			continue
		}
		if cj.DeletionTimestamp == nil && !p.releasable(j, written) {
			// Someone waits on a Job being deleted; but a Job for a time
			// still to come (a clock that was ahead) is recorded only
			// when its time comes, and looking every second until then
			// is a spin: the sync at that time releases it.
			if at, ok := j.ScheduledAt(); !ok || j.Manual() || !at.After(p.now) || p.now.IsZero() {
				waiting = waiting || j.GetDeletionTimestamp() != nil
			}
			continue
		}
		releases = append(releases, Release{Name: j.GetName(), UID: j.GetUID(), Finalizers: slices.Clone(j.GetFinalizers())})
	}
	return releases, waiting
}

// releasable reports whether the run-record finalizer may go from j: it
// has finished or is being deleted, and written records its run and no
// longer lists it active.
func (p *Plan) releasable(j Job, written *cronv1.CronJobStatus) bool {
	if !p.recorded(j, written) || p.requestHolds(j) {
		return false
	}
	if _, _, seq, _ := j.RunNow(); j.Manual() && seq == 0 && !p.isRequestJob(j) {
		// A run-now Job without a request number (an earlier version's):
		// only the finalizer tells the run-now chain that its run is not
		// recorded yet, so it goes as soon as the run is, running or not.
		return true
	}
	return (j.Finished() != "" || j.GetDeletionTimestamp() != nil) && activeIndex(written.Active, j.GetUID()) < 0
}

// Recorded reports whether cj's stored status records the run of j, a Job
// made for cj (controlled by it or detached from it since); jobs are the
// Jobs cj controls, whose run-now chain j may be on.
func Recorded(cj *cronv1.CronJob, jobs []Job, j Job, requests []Request) bool {
	p := &Plan{cj: cj, jobs: append(slices.Clip(jobs), j), requests: requests}
	if p.isRequestJob(j) && j.Finished() == "" && j.GetDeletionTimestamp() == nil {
		// A CronJobRun's status follows its Job to its end: released
		// while it runs, it could finish and go before any status saw
		// its outcome.
		return false
	}
	return p.recorded(j, &cj.Status) && !p.requestHolds(j)
}

// recorded reports whether the written status records j's run.
func (p *Plan) recorded(j Job, written *cronv1.CronJobStatus) bool {
	if p.isRequestJob(j) {
		return p.requestRecorded(j, written)
	}
	if j.Manual() {
		if _, _, _, ok := j.RunNow(); ok {
			// Unrecorded: on the chain of run-now Jobs after the value
			// the written status records.
			return !slices.ContainsFunc(p.unrecordedRunNow(written), func(c Job) bool { return c.GetUID() == j.GetUID() })
		}
		// A Job from before the run-now annotations on Jobs (named before
		// requests were numbered).
		value := p.cj.Annotations[cronv1.RunNowAnnotation]
		return value == "" || RunNowKey(value) == written.LastRunNow ||
			j.GetName() != job.ManualName(p.cj.Name, p.cj.UID, written.LastRunNow, value, 0)
	}
	at, ok := j.ScheduledAt()
	return !ok || (written.LastScheduleTime != nil && !at.After(written.LastScheduleTime.Time))
}

// planRunNow plans the Job of a run-now value not handled yet.
func (p *Plan) planRunNow(jobs []Job) {
	st := &p.Status
	if len(st.LastRunNow) > 128 {
		// Written raw by an earlier version; the schema now caps it.
		st.LastRunNow = RunNowKey(st.LastRunNow)
	}
	// Values handled since the status was last written, their Jobs made
	// (a crash, a write deferred or failed): the last of them is the
	// value handled, and the one the next Job's name follows.
	st.LastRunNow, st.RunNowCount, _ = runNowChain(jobs, st.LastRunNow, st.RunNowCount)
	value := p.cj.Annotations[cronv1.RunNowAnnotation]
	if value == "" || RunNowKey(value) == st.LastRunNow {
		return
	}
	seq := st.RunNowCount + 1
	c := Create{Job: job.NewManual(p.cj, st.LastRunNow, value, RunNowKey(value), seq), Manual: true, Value: value, Seq: seq}
	// A Job of this request named before requests were numbered, whose
	// run no written status records: it holds the run-record finalizer
	// and, made before the run-now annotations, is on no chain. A Job of
	// an earlier request with the same pair of values has had its
	// finalizer released (its run recorded), so it is not taken for this
	// one.
	legacy := job.ManualName(p.cj.Name, p.cj.UID, st.LastRunNow, value, 0)
	if slices.ContainsFunc(jobs, func(j Job) bool {
		if j.GetName() == c.Job.Name {
			return true
		}
		_, _, _, annotated := j.RunNow()
		return j.GetName() == legacy && !annotated && j.Manual() && job.HoldsRunRecord(j)
	}) {
		// Started before its status was written.
		st.LastRunNow, st.RunNowCount = RunNowKey(value), seq
		return
	}
	p.Creates = append(p.Creates, c)
}

// unrecordedRunNow is runNowChain from written's value, worked out once per
// plan: pruning and releases ask it for every run-now Job they look at.
func (p *Plan) unrecordedRunNow(written *cronv1.CronJobStatus) []Job {
	from := runNowState{written.LastRunNow, written.RunNowCount}
	if p.chainFrom == nil || *p.chainFrom != from {
		_, _, p.chain = runNowChain(p.jobs, from.last, from.count)
		p.chainFrom = &from
	}
	return p.chain
}

// runNowState is what a status says of the run-now values handled.
type runNowState struct {
	last  string
	count int64
}

// runNowChain follows the run-now Jobs that hold the run-record finalizer
// from the handled value last, count values handled: each names the value
// handled before it, so the Jobs made since a status recorded last form a
// chain from it. A Job whose request number count already covers is
// recorded (its finalizer not yet released), whatever values it names; of
// two Jobs that follow the same value (A, B, A, B: both B's follow A) the
// one of the earlier request comes first. It returns the last value of the
// chain, the count of values handled with the chain's, and the chain's
// Jobs, in order. Each Job on it is one more value handled; one with a
// request number says the count outright. Jobs made before requests were
// numbered (0) are followed by their values alone, as they were then.
func runNowChain(jobs []Job, last string, count int64) (string, int64, []Job) {
	var chain []Job
	for len(chain) < len(jobs) {
		next, nextSeq := -1, int64(0)
		for i, j := range jobs {
			key, after, seq, ok := j.RunNow()
			if ok && after == last && key != last && (seq == 0 || seq > count) && !slices.Contains(chain, j) && (next < 0 || seq < nextSeq) {
				next, nextSeq = i, seq
			}
		}
		if next < 0 {
			break
		}
		chain = append(chain, jobs[next])
		last, _, _, _ = jobs[next].RunNow()
		count = max(count+1, nextSeq)
	}
	return last, count, chain
}

// RunNowKey is what status.lastRunNow keeps of a run-now value: the value,
// or its hash when it is too long to copy into status.
func RunNowKey(value string) string {
	if len(value) <= 128 {
		return value
	}
	sum := sha256.Sum256([]byte(value))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// observeSchedule parses the schedule in the spec and records it as the one
// in force, keeping the one it replaces in PreviousSchedules. It returns
// nil when the schedule cannot be used.
func (p *Plan) observeSchedule() *schedule.Schedule {
	spec := p.cj.Spec
	resolved, sched, err := ResolveSchedule(p.cj)
	if err != nil {
		// An unusable schedule is in force too: it names no time, so fixing
		// it later starts nothing for the time before the fix.
		p.noteSchedule("", "", nil)
		p.scheduleInvalid(err)
		return nil
	}
	p.noteSchedule(resolved, ptr.Deref(spec.TimeZone, ""), sched)
	p.setCondition(cronv1.ConditionScheduleValid, metav1.ConditionTrue, reasonScheduleValid, "")
	return sched
}

// noteSchedule records resolved (in zone; sched parsed, nil for an unusable
// one) as the schedule in force. A change keeps the schedule it replaces,
// with the time it was seen replaced; the runs the old schedules owed that
// the new ones refuse are counted then, as ScheduleChanged, since nothing
// will start or count them later.
func (p *Plan) noteSchedule(resolved, zone string, sched *schedule.Schedule) {
	st := &p.Status
	prevSchedule, prevZone, known := inForce(st)
	if known && (prevSchedule != resolved || prevZone != zone) {
		base := p.settledUntil()
		owed := p.owedUnder(p.inWindow(parseResolved(prevSchedule, prevZone)), base)
		st.PreviousSchedules = append(st.PreviousSchedules, cronv1.PreviousSchedule{
			Schedule: prevSchedule, TimeZone: prevZone, Until: metav1.NewTime(p.now),
		})
		st.ScheduleChangeTime = &metav1.Time{Time: p.now}
		if owed != nil {
			var refused []time.Time
			for t, ok := owed.pop(); ok && len(refused) <= schedule.ManyMissed; t, ok = owed.pop() {
				if sched == nil || !p.allowed(sched, base, t) {
					refused = append(refused, t)
				}
			}
			p.missedOnce(cronv1.MissedScheduleChanged, refused)
		}
		p.capHistory(p.inWindow(sched), base)
	}
	st.ResolvedSchedule, st.ResolvedTimeZone = resolved, zone
}

// allowed reports whether t, after base, is a run under sched and the
// earlier schedules in status.
func (p *Plan) allowed(sched *schedule.Schedule, base, t time.Time) bool {
	c := newCandidates(sched, p.previous(base), base, schedule.Due{})
	if !c.names(sched, t) {
		return false
	}
	_, ok := c.refusal(t)
	return ok
}

// owedUnder walks the runs in (base, now] under sched and the earlier
// schedules in status, newest first; nil when there are none.
func (p *Plan) owedUnder(sched *schedule.Schedule, base time.Time) *candidates {
	return p.runsUntil(sched, base, p.now)
}

// runsUntil walks the runs in (base, until] under sched and the earlier
// schedules in status, newest first; nil when there are none.
func (p *Plan) runsUntil(sched *schedule.Schedule, base, until time.Time) *candidates {
	if sched == nil {
		return nil
	}
	due, err := sched.MostRecent(base, until)
	if err != nil || due.Time.IsZero() {
		return nil
	}
	return newCandidates(sched, p.previous(base), base, due)
}

// parseResolved parses a resolved schedule kept in status; nil for the
// empty one or one that no longer parses (a zone gone from the database).
func parseResolved(resolved, zone string) *schedule.Schedule {
	if resolved == "" {
		return nil
	}
	var z *string
	if zone != "" {
		z = &zone
	}
	s, err := schedule.ParseResolved(resolved, z)
	if err != nil {
		return nil
	}
	return s
}

// maxPreviousSchedules bounds PreviousSchedules (the schema says so too).
const maxPreviousSchedules = 5

// capHistory keeps at most maxPreviousSchedules entries. Past that the two
// oldest merge into one that names no time until the later of them was
// replaced. That takes more than five edits while no run starts; the runs
// the merge bars are counted as ScheduleChanged.
func (p *Plan) capHistory(sched *schedule.Schedule, base time.Time) {
	st := &p.Status
	for len(st.PreviousSchedules) > maxPreviousSchedules {
		until := st.PreviousSchedules[1].Until
		if barred := p.runsUntil(sched, base, until.Time); barred != nil {
			p.missedOnce(cronv1.MissedScheduleChanged, barred.newest(schedule.ManyMissed+1, nil))
		}
		st.PreviousSchedules = append([]cronv1.PreviousSchedule{{Until: until}}, st.PreviousSchedules[2:]...)
	}
}

// missedOnce counts the runs ts (newest first) as missed for reason, at
// most ManyMissed of them. It is for runs no later sync can see again, so
// it needs no guard against counting twice.
func (p *Plan) missedOnce(reason string, ts []time.Time) {
	if len(ts) == 0 {
		return
	}
	p.notRun(ts...)
	n := int64(min(len(ts), schedule.ManyMissed))
	entry := p.missedEntry(reason)
	entry.Count += n
	if ts[0].After(entry.LastTime.Time) {
		entry.LastTime = metav1.NewTime(ts[0])
	}
}

// inForce is the schedule the status says is in force, and whether the
// status says anything: a CronJob never synced has no schedule in force,
// one whose schedule was unusable has the empty one.
func inForce(st *cronv1.CronJobStatus) (resolved, zone string, known bool) {
	if st.ResolvedSchedule != "" {
		return st.ResolvedSchedule, st.ResolvedTimeZone, true
	}
	c := meta.FindStatusCondition(st.Conditions, cronv1.ConditionScheduleValid)
	return "", "", c != nil && c.Status == metav1.ConditionFalse
}

// scheduleInvalid reports a schedule or time zone that cannot be used: a
// False condition, and a Warning when that condition is news.
func (p *Plan) scheduleInvalid(err error) {
	se, ok := schedule.AsError(err)
	if !ok {
		se = &schedule.Error{Reason: schedule.ReasonInvalidSchedule, Message: err.Error()}
	}
	p.Status.NextScheduleTime = nil
	msg := Bound(se.Message)
	if p.setCondition(cronv1.ConditionScheduleValid, metav1.ConditionFalse, se.Reason, msg) {
		p.Events = append(p.Events, Event{Type: corev1.EventTypeWarning, Reason: se.Reason, Message: msg})
	}
}

// planRuns decides which scheduled runs start now, and counts the ones that
// no longer can.
func (p *Plan) planRuns(sched *schedule.Schedule, jobs []Job) {
	st, spec, now := &p.Status, p.cj.Spec, p.now
	base := p.settledUntil()
	p.countAdopted(sched, jobs)
	st.PreviousSchedules = slices.DeleteFunc(st.PreviousSchedules, func(e cronv1.PreviousSchedule) bool {
		return !e.Until.After(base)
	})
	due, err := sched.MostRecent(base, now)
	if err != nil {
		p.scheduleInvalid(&schedule.Error{Reason: schedule.ReasonInvalidSchedule,
			Message: fmt.Sprintf("schedule %s: %v", quote(ScheduleText(p.cj)), err)})
		return
	}
	if due.Next.After(lastStorable) {
		// No status can hold it (RFC 3339 has four-digit years), and no
		// controller will live to see it: as good as never.
		due.Next = time.Time{}
	}
	p.sched, p.base, p.dueNext = sched, base, due.Next
	p.noteNext()
	if !due.Next.IsZero() {
		p.requeueBy(due.Next)
	}
	if p.suspendedUntil() {
		// Ready turns True when the suspension ends, even with no run due
		// then.
		p.requeueBy(p.cj.Spec.SuspendUntil.Time)
	}
	if due.Time.IsZero() {
		return
	}

	c := newCandidates(sched, p.previous(base), base, due)
	deadline := StartingDeadline(p.cj)
	late := func(t time.Time) bool { return tooLate(deadline, t, now) }
	var runs []time.Time
	var older olderRuns
	// Replace never lets two runs overlap, so it catches up with the latest.
	if spec.CatchUpPolicy == cronv1.CatchUpAll && spec.ConcurrencyPolicy != cronv1.ReplaceConcurrent {
		limit := int(ptr.Deref(spec.CatchUpLimit, defaultCatchUpLimit))
		runs = c.newestTaking(limit, func(t time.Time) bool { return !late(t) }, p.heldOnPurpose)
		slices.Reverse(runs)
		older = c.older(late, p.olderHold())
	} else {
		// Only the most recent is considered; it may itself be too late.
		runs = c.newest(1, nil)
		older = c.older(nil, p.olderHold())
	}
	// A run-now planned in this sync holds back nothing yet: it may fail,
	// and it ignores the policy itself.
	blocked := spec.ConcurrencyPolicy == cronv1.ForbidConcurrent && len(st.Active) > 0

	// The runs behind the ones considered can no longer start.
	p.notRun(older.times...)
	for _, h := range older.heldBy {
		p.missed(h.reason, h.latest, min(h.n, schedule.ManyMissed))
	}
	if older.beyondDeadline > 0 {
		p.missed(cronv1.MissedDeadlineExceeded, older.latestBeyondDeadline, min(older.beyondDeadline, schedule.ManyMissed))
	}
	if n := older.n - older.beyondDeadline - older.held; n > 0 {
		reason := cronv1.MissedSuperseded
		if blocked {
			reason = cronv1.MissedConcurrencyForbidden
		}
		p.missed(reason, older.latestWithin, min(n, schedule.ManyMissed))
	}
	if older.n > schedule.ManyMissed {
		p.event(corev1.EventTypeWarning, ReasonTooManyMissedTimes,
			"Missed more than %d start times since %s; only the most recent are considered",
			schedule.ManyMissed, formatTime(base))
	}
	// A run a Calendar holds is never late and never owed.
	runs = p.holdRuns(runs)
	runs = p.remainingRuns(runs, spec.ConcurrencyPolicy == cronv1.ForbidConcurrent)
	if len(runs) == 0 {
		return
	}

	if last := runs[len(runs)-1]; late(last) {
		msg := fmt.Sprintf("Missed scheduled time to start a job: %s (it may start at most %v late)", formatTime(last), *deadline)
		reason := cronv1.MissedDeadlineExceeded
		if blocked {
			reason = cronv1.MissedConcurrencyForbidden
		}
		p.setCondition(cronv1.ConditionLastRunStarted, metav1.ConditionFalse, reason, msg)
		p.notRun(last)
		if p.missed(reason, last, 1) {
			p.event(corev1.EventTypeWarning, ReasonMissSchedule, "%s", msg)
		}
		return
	}

	// Runs whose Job exists already need nothing (reconcileActive recorded
	// them); only the ones after the newest of those are left.
	runs = slices.DeleteFunc(runs, func(t time.Time) bool {
		name := job.Name(p.cj.Name, t)
		return slices.ContainsFunc(jobs, func(j Job) bool { return j.GetName() == name })
	})
	if len(runs) == 0 {
		return
	}
	if blocked {
		msg := fmt.Sprintf("Not starting the run of %s: an earlier Job is still active and concurrencyPolicy is Forbid", formatTime(runs[0]))
		if p.setCondition(cronv1.ConditionLastRunStarted, metav1.ConditionFalse, cronv1.MissedConcurrencyForbidden, msg) {
			p.event(corev1.EventTypeNormal, ReasonJobAlreadyActive, "%s", msg)
		}
		if deadline != nil {
			// Wake when the run can no longer start, to count it then.
			p.requeueBy(runs[0].Add(*deadline).Add(time.Second))
		}
		return
	}
	switch spec.ConcurrencyPolicy {
	case cronv1.ForbidConcurrent:
		// Alternatives, oldest first: a run refused for good (its name
		// taken, its Job rejected) gives way to the next; the first that
		// starts holds back the rest (Wants).
		p.oneAtATime = true
	case cronv1.ReplaceConcurrent:
		for _, ref := range st.Active {
			p.Deletes = append(p.Deletes, Delete{Name: ref.Name, UID: ref.UID, Reason: DeleteReplace})
		}
	}
	for _, t := range runs {
		p.Creates = append(p.Creates, Create{Job: job.New(p.cj, t, sched.Location()), Time: t, Trial: t.Equal(p.trialAt) && !t.IsZero(),
			CatchUp: t.Before(due.Time)})
	}
}

// countAdopted counts the runs an adopted Job passed over (see
// countPassedOver), once.
func (p *Plan) countAdopted(sched *schedule.Schedule, jobs []Job) {
	if p.adoptedFrom.IsZero() {
		return
	}
	ranUnder := sched
	if p.priorSched != nil {
		// The window bounds the runs of any schedule: it is read from the
		// spec at each sync, as sched's was.
		ranUnder = p.inWindow(p.priorSched)
	}
	p.countPassedOver(ranUnder, p.adoptedFrom, p.settledUntil(), jobs)
	p.adoptedFrom = time.Time{}
}

// countPassedOver counts as superseded the runs in (from, to) with no Job:
// the sync that started the run at to passed over them, and its status
// write, which counted them, was lost. (Which of them that sync would have
// called too late is not known now; superseded they are either way.)
func (p *Plan) countPassedOver(sched *schedule.Schedule, from, to time.Time, jobs []Job) {
	due, err := sched.MostRecent(from, to.Add(-time.Nanosecond))
	if err != nil || due.Time.IsZero() {
		return
	}
	c := newCandidates(sched, p.previous(from), from, due)
	var n int64
	var latest time.Time
	for n <= schedule.ManyMissed {
		t, ok := c.pop()
		if !ok {
			break
		}
		name := job.Name(p.cj.Name, t)
		if slices.ContainsFunc(jobs, func(j Job) bool { return j.GetName() == name }) {
			continue
		}
		p.notRun(t)
		if latest.IsZero() {
			latest = t
		}
		n++
	}
	p.missed(cronv1.MissedSuperseded, latest, min(n, schedule.ManyMissed))
}

// notRun adds to NotRun the times of ts settled as not run with no Job of
// theirs in view, where a run left out would cost a run (lookupsPay).
func (p *Plan) notRun(ts ...time.Time) {
	if !p.lookupsPay() {
		return
	}
	for _, t := range ts {
		name := job.Name(p.cj.Name, t)
		if slices.ContainsFunc(p.NotRun, t.Equal) || slices.ContainsFunc(p.jobs, func(j Job) bool { return j.GetName() == name }) {
			continue
		}
		p.NotRun = append(p.NotRun, t)
	}
	// The newest, which a lost run most likely took, at most ManyMissed+1:
	// the settling paths add theirs in no order of time.
	slices.SortFunc(p.NotRun, func(a, b time.Time) int { return b.Compare(a) })
	if len(p.NotRun) > schedule.ManyMissed+1 {
		p.NotRun = p.NotRun[:schedule.ManyMissed+1]
	}
}

// notRunBeforeWindow adds to NotRun the times of sched (not bounded by the
// window) after the settled point and before spec.notBefore: no run now,
// but a run may have taken one before notBefore was moved past it, its
// status write lost, and the view lack its Job.
func (p *Plan) notRunBeforeWindow(sched *schedule.Schedule) {
	nb := timeOf(p.cj.Spec.NotBefore)
	if nb == nil || !p.lookupsPay() {
		return
	}
	base := p.settledUntil()
	until := *nb
	if p.now.Before(until) {
		until = p.now
	}
	if !until.After(base) {
		return
	}
	due, err := sched.MostRecent(base, until.Add(-time.Nanosecond))
	if err != nil || due.Time.IsZero() {
		return
	}
	c := newCandidates(sched, nil, base, due)
	var ts []time.Time
	for t, ok := c.pop(); ok && len(ts) <= schedule.ManyMissed; t, ok = c.pop() {
		ts = append(ts, t)
	}
	p.notRun(ts...)
}

// lookupsPay reports whether a run the view lacks, settled as not run,
// would cost a run rather than a count: spec.maxRuns would let one run too
// many start; Forbid or Replace would start the next run beside it; a
// pause awaiting its trial would start a second trial. Elsewhere (Allow,
// no maxRuns, no trial awaited) it costs a count of missed runs, and a
// sweep of lookups after every outage would cost more than that count.
func (p *Plan) lookupsPay() bool {
	spec := p.cj.Spec
	switch {
	case spec.MaxRuns != nil, spec.ConcurrencyPolicy == cronv1.ForbidConcurrent, spec.ConcurrencyPolicy == cronv1.ReplaceConcurrent:
		return true
	}
	fp, fs := spec.FailurePolicy, p.Status.FailureStreak
	return p.paused() && fp.ResumeAfter != nil && fs.TrialJob == ""
}

// requeueBy brings the next wake-up forward to t, if it is sooner.
func (p *Plan) requeueBy(t time.Time) {
	if d := t.Sub(p.now); d > 0 && (p.RequeueAfter == 0 || d < p.RequeueAfter) {
		p.RequeueAfter = d
	}
}

// settledUntil is the instant up to which every time is settled: the
// newest run started (the CronJob's creation before its first), or the
// newest counted as missed if later. Like the built-in controller, a
// lastScheduleTime set before the creation (by hand, to catch up) wins.
// Runs an edit took away settle nothing: an older run the new schedule
// names may still be owed.
func (p *Plan) settledUntil() time.Time {
	return SettledUntil(p.cj.CreationTimestamp.Time, &p.Status)
}

// SettledUntil is settledUntil for a CronJob created at created with
// status st (the kubectl plugin's next times start from it).
func SettledUntil(created time.Time, st *cronv1.CronJobStatus) time.Time {
	base := created
	if st.LastScheduleTime != nil {
		base = st.LastScheduleTime.Time
	}
	for _, m := range st.MissedRuns {
		if m.Reason != cronv1.MissedScheduleChanged && m.LastTime.After(base) {
			base = m.LastTime.Time
		}
	}
	return base
}

// previous parses the earlier schedules still in force; one that no longer
// parses (a zone gone from the zone database) names no time. A status
// written before previousSchedules existed has only scheduleChangeTime,
// under which no earlier time was a run: it stands for a schedule that
// names no time. (Otherwise the change time is never after base without a
// record: the newest record ends at the change time, and goes only once
// base passes it.)
func (p *Plan) previous(base time.Time) []previousSchedule {
	st := &p.Status
	if changed := st.ScheduleChangeTime; len(st.PreviousSchedules) == 0 && changed != nil && changed.After(base) {
		return []previousSchedule{{until: changed.Time}}
	}
	out := make([]previousSchedule, 0, len(st.PreviousSchedules))
	for _, e := range p.Status.PreviousSchedules {
		prev := previousSchedule{until: e.Until.Time}
		if e.Schedule != "" {
			var zone *string
			if e.TimeZone != "" {
				zone = &e.TimeZone
			}
			prev.sched, _ = schedule.ParseResolved(e.Schedule, zone)
		}
		out = append(out, prev)
	}
	return out
}

// StartingDeadline is how late a run of cj may start: its
// startingDeadlineSeconds, capped at NoneGrace under catchUpPolicy None. Nil
// means no limit.
func StartingDeadline(cj *cronv1.CronJob) *time.Duration {
	var d *time.Duration
	if s := cj.Spec.StartingDeadlineSeconds; s != nil {
		d = ptr.To(schedule.Seconds(*s))
	}
	if cj.Spec.CatchUpPolicy == cronv1.CatchUpNone && (d == nil || *d > NoneGrace) {
		d = ptr.To(NoneGrace)
	}
	return d
}

// tooLate reports whether a run scheduled at t may no longer start at now.
func tooLate(deadline *time.Duration, t, now time.Time) bool {
	return deadline != nil && t.Add(*deadline).Before(now)
}

// missed counts n runs missed for reason, the latest at t, unless runs up to
// t were counted for that reason already. It reports whether they were news.
func (p *Plan) missed(reason string, t time.Time, n int64) bool {
	if n <= 0 {
		return false
	}
	entry := p.missedEntry(reason)
	if !t.After(entry.LastTime.Time) {
		return false
	}
	entry.Count += n
	entry.LastTime = metav1.NewTime(t)
	return true
}

// missedEntry is the status.missedRuns entry for reason, added if new.
func (p *Plan) missedEntry(reason string) *cronv1.MissedRuns {
	st := &p.Status
	i := slices.IndexFunc(st.MissedRuns, func(m cronv1.MissedRuns) bool { return m.Reason == reason })
	if i < 0 {
		st.MissedRuns = append(st.MissedRuns, cronv1.MissedRuns{Reason: reason})
		i = len(st.MissedRuns) - 1
	}
	return &st.MissedRuns[i]
}

// Deleted records that d was carried out.
func (p *Plan) Deleted(d Delete) {
	p.event(corev1.EventTypeNormal, ReasonSuccessfulDelete, "Deleted job %s", d.Name)
	if i := activeIndex(p.Status.Active, d.UID); i >= 0 {
		p.Status.Active = slices.Delete(p.Status.Active, i, i+1)
	}
	// Deleted running (Replace): its outcome will never be seen.
	p.runGone(d.Name)
	p.countActive()
}

// AlreadyGone records that d found its Job gone already (or its name
// taken by another Job): it is no longer active.
func (p *Plan) AlreadyGone(d Delete) {
	if i := activeIndex(p.Status.Active, d.UID); i >= 0 {
		p.Status.Active = slices.Delete(p.Status.Active, i, i+1)
	}
	p.runGone(d.Name)
	p.countActive()
}

// DeleteFailed records that d failed.
func (p *Plan) DeleteFailed(d Delete, err error) {
	p.event(corev1.EventTypeWarning, ReasonFailedDelete, "Error deleting job %s: %s", d.Name, Bound(err.Error()))
}

// Started records that c's Job exists and is j: created now, or found
// already made for the same run.
func (p *Plan) Started(c Create, j Job, created bool) {
	st := &p.Status
	if created {
		p.event(corev1.EventTypeNormal, ReasonSuccessfulCreate, "Created job %s", j.GetName())
		p.setCondition(cronv1.ConditionJobTemplateValid, metav1.ConditionTrue, reasonJobCreated, "")
	}
	if j.Finished() == "" && j.GetDeletionTimestamp() == nil && activeIndex(st.Active, j.GetUID()) < 0 {
		st.Active = append(st.Active, job.Ref(j))
	}
	if c.Manual {
		if c.Request == "" {
			st.LastRunNow, st.RunNowCount = RunNowKey(c.Value), c.Seq
		}
	} else {
		p.scheduledStarted = true
		p.countStarted(c)
		p.setCondition(cronv1.ConditionLastRunStarted, metav1.ConditionTrue, reasonRunStarted,
			fmt.Sprintf("Job %s is the run of %s", j.GetName(), formatTime(c.Time)))
		if st.LastScheduleTime == nil || c.Time.After(st.LastScheduleTime.Time) {
			st.LastScheduleTime = &metav1.Time{Time: c.Time}
		}
		p.reportedScheduled(c)
	}
	if j.GetDeletionTimestamp() == nil {
		p.enterRun(j, c.trigger())
	}
	p.startedRun(c, j)
	p.countActive()
}

// NotStarted records that c was refused for good: the run is counted as
// missed (a run-now value as handled), and the reason shows in conditions.
func (p *Plan) NotStarted(c Create, why Refusal, detail string) {
	detail = Bound(detail)
	switch why {
	case NameTaken:
		p.event(corev1.EventTypeWarning, ReasonFailedCreate,
			"Job %s already exists and is not controlled by this CronJob; %s is not started", c.Job.Name, c.What())
	case Rejected:
		p.event(corev1.EventTypeWarning, ReasonFailedCreate, "Error creating job %s: %s", c.Job.Name, detail)
		p.setCondition(cronv1.ConditionJobTemplateValid, metav1.ConditionFalse, reasonJobRejected, detail)
	}
	if c.Request != "" {
		if p.RequestRefusals == nil {
			p.RequestRefusals = map[string]RequestRefusal{}
		}
		p.RequestRefusals[c.Request] = RequestRefusal{Why: why, Detail: detail}
		return
	}
	if c.Manual {
		p.Status.LastRunNow, p.Status.RunNowCount = RunNowKey(c.Value), c.Seq
		return
	}
	p.setCondition(cronv1.ConditionLastRunStarted, metav1.ConditionFalse, string(why),
		fmt.Sprintf("The run of %s did not start: %s", formatTime(c.Time), describeRefusal(why, c.Job.Name, detail)))
	p.missed(string(why), c.Time, 1)
	p.reportedScheduled(c)
}

func describeRefusal(why Refusal, name, detail string) string {
	if why == NameTaken {
		return fmt.Sprintf("job %s exists and is not controlled by this CronJob", name)
	}
	return detail
}

// CreateFailed records that c failed in a way a retry may mend; the run
// stays owed.
func (p *Plan) CreateFailed(c Create, err error) {
	p.event(corev1.EventTypeWarning, ReasonFailedCreate, "Error creating job %s: %s", c.Job.Name, Bound(err.Error()))
}

// event adds an Event, its message bounded.
func (p *Plan) event(eventType, reason, format string, args ...any) {
	p.Events = append(p.Events, Event{Type: eventType, Reason: reason, Message: Bound(fmt.Sprintf(format, args...))})
}

// setCondition sets a condition and reports whether it is news: its
// status, reason or message changed. A new generation alone (an edit that
// leaves the condition as it was) is recorded but is not news, so the
// Event a caller emits on news is not repeated at every edit of the spec.
func (p *Plan) setCondition(conditionType string, status metav1.ConditionStatus, reason, message string) bool {
	message = Bound(message)
	prior := meta.FindStatusCondition(p.Status.Conditions, conditionType)
	news := prior == nil || prior.Status != status || prior.Reason != reason || prior.Message != message
	meta.SetStatusCondition(&p.Status.Conditions, metav1.Condition{
		Type:               conditionType,
		Status:             status,
		Reason:             reason,
		Message:            message,
		ObservedGeneration: p.cj.Generation,
		LastTransitionTime: metav1.NewTime(p.now),
	})
	if conditionType != cronv1.ConditionReady {
		// Ready sums the others up: it follows each change, including
		// those an outcome reported after Decide makes.
		p.noteReady()
	}
	return news
}

// noteNext writes status.nextScheduleTime: the schedule's next time, or
// while paused the trial's (pausedNext).
func (p *Plan) noteNext() {
	if p.sched == nil {
		return
	}
	next := p.dueNext
	if p.maxRunsReached() {
		next = time.Time{}
	}
	if p.paused() {
		next = p.pausedNext(p.sched, p.base, next)
	}
	if !next.IsZero() && p.specHolds() {
		next = p.unheldFrom(p.sched, next)
	}
	p.Status.NextScheduleTime = timeOrNil(next)
}

func (p *Plan) countActive() { p.Status.ActiveCount = int32(len(p.Status.Active)) }

// activeIndex is the position of the Job with this UID in active, or -1.
func activeIndex(active []corev1.ObjectReference, uid types.UID) int {
	return slices.IndexFunc(active, func(r corev1.ObjectReference) bool { return r.UID == uid })
}

// lastStorable is the last instant a status can hold: the API server reads
// times as RFC 3339, whose years have four digits.
var lastStorable = time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC)

func timeOrNil(t time.Time) *metav1.Time {
	if t.IsZero() {
		return nil
	}
	return &metav1.Time{Time: t}
}

func formatTime(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// maxMessage bounds every message the controller copies into status or an
// Event, so no input makes those writes fail.
const maxMessage = 1024

// Bound cuts s to maxMessage bytes, on a rune boundary, saying so.
func Bound(s string) string {
	if len(s) <= maxMessage {
		return s
	}
	cut := maxMessage - 64
	for cut > 0 && !utf8RuneStart(s[cut]) {
		cut--
	}
	return fmt.Sprintf("%s… (%d bytes in all)", s[:cut], len(s))
}

func utf8RuneStart(b byte) bool { return b&0xC0 != 0x80 }

// quote quotes a user's string for a message, bounded.
func quote(s string) string {
	const max = 128
	if len(s) <= max {
		return fmt.Sprintf("%q", s)
	}
	cut := max
	for cut > 0 && !utf8RuneStart(s[cut]) {
		cut--
	}
	return fmt.Sprintf("%q… (%d bytes)", s[:cut], len(s))
}
