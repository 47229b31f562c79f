// Package backfill decides what one sync of a Backfill does. Decide is a
// pure function of the Backfill, its CronJob, the Jobs that hold the names
// of the range's times and the clock; the controller carries the plan out
// and reports each create's outcome back through the Plan's methods.
//
// The rules:
//   - a time already run (a Job holds its name, or the CronJob's run
//     history records its run) is skipped, or run again under
//     spec.rerunPolicy IfFailed (its run failed) or Always, once its run
//     has finished;
//   - a time never run gets a Job named as the CronJob's scheduled run
//     (job.Name), one run again a Job named for the Backfill
//     (job.RerunName): each name is a lock, so a time never run never gets
//     two Jobs, and a Backfill runs a time again at most once;
//   - a time is backfilled only once the CronJob is past it
//     (planner.SettledUntil: its last started or missed run, or its
//     creation). The CronJob's planner never starts such a time, so the
//     two never race for one; later times, the future ones among them,
//     wait until the CronJob has passed them (run: skipped; missed:
//     backfilled). A time outside the CronJob's notBefore/notAfter window
//     waits too: were it backfilled, a later widening of the window would
//     make the CronJob owe it again, and once the Backfill's Job is gone
//     nothing would stop a second run;
//   - the Jobs are controlled by the Backfill, not the CronJob: the
//     CronJob's concurrency policy, history limits and status ignore them.
//     The Backfill's status (lastHandledTime, the counts) is their record,
//     so each carries Finalizer, not the CronJob's run-record finalizer,
//     until a stored status records it (Recorded): a Job deleted (by its
//     TTL) before then stays, and its time is not created again;
//   - times are handled oldest first, at most maxConcurrent Jobs active;
//   - a range naming more than cronv1.MaxBackfillTimes times is refused;
//   - a missing CronJob (or one being deleted, or a new one of the same
//     name) stops the Backfill; the Backfill is owned by its CronJob, so
//     the garbage collector removes it, and its Jobs, with the CronJob.
package backfill

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/utils/ptr"

	cronv1 "github.com/cronjob-controller/cronjob-controller/pkg/apis/batch/v1"
	"github.com/cronjob-controller/cronjob-controller/pkg/job"
	"github.com/cronjob-controller/cronjob-controller/pkg/planner"
	"github.com/cronjob-controller/cronjob-controller/pkg/schedule"
)

// Event and condition reasons.
const (
	ReasonSuccessfulCreate  = "SuccessfulCreate"
	ReasonJobExists         = "JobExists"
	ReasonFailedCreate      = "FailedCreate"
	ReasonJobRejected       = "JobRejected"
	ReasonCompleted         = "Completed"
	ReasonCronJobNotFound   = "CronJobNotFound"
	ReasonInvalidSchedule   = "InvalidSchedule"
	ReasonTooManyTimes      = "TooManyTimes"
	ReasonSuspended         = "Suspended"
	ReasonDeleting          = "Deleting"
	ReasonWaitingForCronJob = "WaitingForCronJob"
	ReasonRunning           = "Running"
	ReasonAlreadyRun        = "AlreadyRun"
	ReasonWaitingForRun     = "WaitingForEarlierRun"
)

// Finalizer keeps a Backfill's Job until the Backfill's stored status
// records it. Without it a Job that finished and was deleted before the
// status write recording it was stored (the write failed, or a sync read
// a cache older than that write) would leave no trace of its run, and the
// time would be created again.
const Finalizer = job.BackfillRecordFinalizer

var backfillKind = cronv1.SchemeGroupVersion.WithKind("Backfill")
var cronJobKind = cronv1.SchemeGroupVersion.WithKind("CronJob")

// Job is what the decision reads of a Job.
type Job interface {
	metav1.Object
	Finished() batchv1.JobConditionType
}

// Input is everything a decision depends on.
type Input struct {
	// Backfill is read, never changed.
	Backfill *cronv1.Backfill
	// CronJob is the one spec.cronJobName names; nil when there is none.
	CronJob *cronv1.CronJob
	// Job returns the Job of that name in the Backfill's namespace, as the
	// controller knows it.
	Job func(name string) (Job, bool)
	// Gone holds the UIDs of Jobs in status.active the API server said no
	// longer exist.
	Gone map[types.UID]bool
	// Own are the Jobs the Backfill controls that hold Finalizer, with the
	// times they were made for, as the controller knows them.
	Own []OwnJob
	// Now is the controller's clock.
	Now time.Time
}

// OwnJob is a Job of the Backfill and the time it was made for.
type OwnJob struct {
	Job Job
	At  time.Time
}

// Create is a Job to create, for the run scheduled at Time.
type Create struct {
	Job  *batchv1.Job
	Time time.Time
}

// Event is a Kubernetes Event to emit about the Backfill.
type Event struct {
	Type, Reason, Message string
}

// Plan is the decision of one sync, and the record of carrying it out.
type Plan struct {
	// Status is the status to write.
	Status cronv1.BackfillStatus
	// Owner, when set, is the reference to the CronJob to add to the
	// Backfill's ownerReferences before anything is created.
	Owner *metav1.OwnerReference
	// Creates are made in order; the first that fails ends the sync's
	// creates, so times are handled oldest first.
	Creates []Create
	// Events to emit, in order.
	Events []Event

	bf   *cronv1.Backfill
	now  time.Time
	last time.Time // the newest time of the range; zero for none
	// waiting says why the walk stopped at a time whose earlier run is
	// still running; "" when it did not.
	waiting string
}

// Decide plans what a sync of in.Backfill does at in.Now.
func Decide(in Input) *Plan {
	bf := in.Backfill
	p := &Plan{Status: *bf.Status.DeepCopy(), bf: bf, now: in.Now}
	p.Status.ObservedGeneration = bf.Generation
	p.reconcileActive(in)

	cj := in.CronJob
	if cj == nil || cj.DeletionTimestamp != nil || ownerGone(bf, cj) {
		// For good: a Backfill with Jobs has an owner, and a CronJob of
		// that name made later is another. Its unrecorded Jobs can be
		// recorded at last.
		p.adoptUnrecorded(in.Own, nil)
		p.incomplete(ReasonCronJobNotFound, fmt.Sprintf("CronJob %s does not exist: the Backfill creates nothing", bf.Spec.CronJobName))
		return p
	}
	if !ownedBy(bf, cj) {
		p.Owner = metav1.NewControllerRef(cj, cronJobKind)
		// Not the controller: a CronJob controls Jobs, not Backfills.
		p.Owner.Controller = nil
		p.Owner.BlockOwnerDeletion = nil
	}
	sched, err := parse(cj)
	if err != nil {
		p.incomplete(ReasonInvalidSchedule, err.Error())
		return p
	}
	times, ok := Times(sched, bf.Spec.Start.Time, bf.Spec.End.Time, cronv1.MaxBackfillTimes)
	if !ok {
		p.Status.Total = 0
		p.incomplete(ReasonTooManyTimes, fmt.Sprintf("the schedule names more than %d times in [%s, %s): split the range",
			cronv1.MaxBackfillTimes, formatTime(bf.Spec.Start.Time), formatTime(bf.Spec.End.Time)))
		return p
	}
	p.Status.Total = int32(len(times))
	if len(times) > 0 {
		p.last = times[len(times)-1]
	}
	if bf.DeletionTimestamp != nil {
		// Being deleted, it creates nothing more: every Job it made is
		// recorded now, so its finalizer can go and the delete finish.
		p.adoptUnrecorded(in.Own, nil)
	}
	p.walk(in, cj, sched, times)
	p.conclude(cj)
	return p
}

// parse reads the CronJob's schedule as the CronJob's planner does: H
// resolved with the CronJob's own seed, in its time zone.
func parse(cj *cronv1.CronJob) (*schedule.Schedule, error) {
	_, sched, err := planner.ResolveSchedule(cj) // spec.schedule or the union of spec.schedules
	return sched, err
}

// Times returns the times sched names in [start, end), oldest first, and
// false when there are more than limit. An @every schedule names no time of
// its own (a CronJob's grid starts at its creation): here its times are
// start, to the second, and every interval after it.
func Times(sched *schedule.Schedule, start, end time.Time, limit int) ([]time.Time, bool) {
	next := sched.Next
	first := sched.Next(start.Add(-time.Nanosecond))
	if every, ok := sched.Every(); ok {
		next = func(t time.Time) time.Time { return t.Add(every) }
		first = start.Truncate(time.Second)
		if first.Before(start) {
			first = first.Add(time.Second)
		}
	}
	var times []time.Time
	for t := first; !t.IsZero() && t.Before(end); t = next(t) {
		if len(times) == limit {
			return nil, false
		}
		times = append(times, t)
	}
	return times, true
}

// reconcileActive counts the created Jobs that finished, or went away
// before they did, and drops them from status.active.
func (p *Plan) reconcileActive(in Input) {
	st := &p.Status
	kept := st.Active[:0:0]
	for _, ref := range st.Active {
		j, found := in.Job(ref.Name)
		switch {
		case found && j.GetUID() == ref.UID && j.Finished() == batchv1.JobComplete:
			st.Succeeded++
		case found && j.GetUID() == ref.UID && j.Finished() == batchv1.JobFailed:
			st.Failed++
		case found && j.GetUID() == ref.UID && j.GetDeletionTimestamp() != nil,
			(!found || j.GetUID() != ref.UID) && in.Gone[ref.UID]:
			st.Failed++
		default:
			kept = append(kept, ref)
		}
	}
	st.Active = kept
}

// unrecorded returns the Backfill's own Jobs past lastHandledTime, oldest
// first: made by a sync whose status write was lost (or whose process
// died), not recorded yet.
func (p *Plan) unrecorded(own []OwnJob) []OwnJob {
	var out []OwnJob
	for _, o := range own {
		st := &p.Status
		if !o.At.IsZero() && (st.LastHandledTime == nil || o.At.After(st.LastHandledTime.Time)) && !activeHas(st.Active, o.Job.GetUID()) {
			out = append(out, o)
		}
	}
	slices.SortFunc(out, func(a, b OwnJob) int { return a.At.Compare(b.At) })
	return out
}

// adoptUnrecorded records, in time order, the unrecorded Jobs of own whose
// times are not among times: a sync creates the times after
// lastHandledTime in order and stops at the first it cannot create, so
// those Jobs follow lastHandledTime and recording them skips no time of
// the schedule they were made under.
func (p *Plan) adoptUnrecorded(own []OwnJob, times map[time.Time]bool) {
	for _, o := range p.unrecorded(own) {
		if !times[o.At] {
			p.exists(o.At, o.Job, true)
		}
	}
}

// walk handles the times after lastHandledTime, oldest first, as judge
// decides each: a time already run is skipped (or run again, by the
// policy); a Job of this Backfill's, made before a status write was lost,
// is counted as created; the others are created while the CronJob is past
// them and maxConcurrent allows. A time
// with a Job after a planned create waits for the next sync, so
// lastHandledTime only ever moves past times whose outcome is known.
func (p *Plan) walk(in Input, cj *cronv1.CronJob, sched *schedule.Schedule, times []time.Time) {
	st := &p.Status
	settled := planner.SettledUntil(cj.CreationTimestamp.Time, &cj.Status)
	policy := rerunPolicy(p.bf)
	// At least one: a value below it (refused by the schema, stored past
	// it) would hold every time back forever.
	limit := max(int(ptr.Deref(p.bf.Spec.MaxConcurrent, 1)), 1)
	// A Backfill being deleted (in the foreground: it waits for its Jobs)
	// creates nothing more; its Jobs are still counted and released.
	suspended := ptr.Deref(p.bf.Spec.Suspend, false) || p.bf.DeletionTimestamp != nil
	// A Job of the Backfill made for a time the schedule no longer names
	// (it was edited after a lost status write) is recorded where its time
	// falls among the others, so it neither hangs nor makes a time of the
	// schedule be skipped.
	named := make(map[time.Time]bool, len(times))
	for _, t := range times {
		named[t] = true
	}
	strays := map[time.Time]Job{}
	for _, o := range p.unrecorded(in.Own) {
		if !named[o.At] {
			strays[o.At] = o.Job
			times = append(times, o.At)
		}
	}
	if len(strays) > 0 {
		times = slices.SortedFunc(slices.Values(times), time.Time.Compare)
	}
	for _, t := range times {
		if st.LastHandledTime != nil && !t.After(st.LastHandledTime.Time) {
			continue
		}
		if j, ok := strays[t]; ok {
			if len(p.Creates) > 0 {
				return
			}
			p.exists(t, j, true)
			continue
		}
		v := p.judge(in, cj, policy, t)
		if v.create == "" && len(p.Creates) > 0 {
			// Handled only after the planned creates are made, so
			// lastHandledTime moves past times in order.
			return
		}
		switch {
		case v.exists != nil:
			p.exists(t, v.exists, ours(v.exists, p.bf))
			continue
		case v.wait:
			p.waiting = waitingFor(t, v.earlier)
			return
		case v.create == "":
			p.alreadyRun(t, v.earlier, v.outcome, policy)
			continue
		}
		if suspended || len(st.Active)+len(p.Creates)+runningAfter(strays, t) >= limit || t.After(settled) || t.After(in.Now) {
			return
		}
		p.Creates = append(p.Creates, Create{Job: p.newJob(cj, sched, t, v.create), Time: t})
	}
}

// verdict is what becomes of one time of the range.
type verdict struct {
	// exists is a Job that holds the time for this Backfill's purpose: its
	// own (made before a status write was lost), or, under Never, any Job
	// of the time's name.
	exists Job
	// earlier is the name of the time's run before this Backfill, and
	// outcome that run's outcome; "" when the time never ran.
	earlier string
	outcome cronv1.RunOutcome
	// wait: the earlier run is still running and is to run again once it
	// has finished.
	wait bool
	// create is the name of the Job to create; "" for none.
	create string
}

// judge decides the time t under policy. A run again is named for this
// Backfill (job.RerunName), a first run as the scheduled run
// (job.Name), so each is a lock: a Backfill's own Job is found again by its
// name after a lost status write, and a time never run never gets two Jobs.
func (p *Plan) judge(in Input, cj *cronv1.CronJob, policy cronv1.RerunPolicy, t time.Time) verdict {
	name := job.Name(cj.Name, t)
	if policy != cronv1.RerunNever {
		if j, found := in.Job(job.RerunName(cj.Name, p.bf.UID, t)); found {
			return verdict{exists: j}
		}
	}
	earlier, found := in.Job(name)
	if found && (policy == cronv1.RerunNever || ours(earlier, p.bf)) {
		return verdict{exists: earlier}
	}
	v := verdict{earlier: name, outcome: ranAs(cj, name, earlier, found)}
	if v.outcome == "" {
		v.create = name
		return v
	}
	var again bool
	if v.wait, again = runAgain(policy, v.outcome); again {
		v.create = job.RerunName(cj.Name, p.bf.UID, t)
	}
	return v
}

// waitingFor is the Complete condition's message while the time t waits
// for its earlier run, the Job name, to finish.
func waitingFor(t time.Time, name string) string {
	return fmt.Sprintf("the run of %s (job %s) is still running: it runs again once that run has finished", formatTime(t), name)
}

// runAgain is what policy does with a time whose earlier run had outcome:
// wait for that run to finish, run the time again, or neither (skip it as
// already run). Run again only once the earlier run is over: two runs of
// one time at once would race for what the time's run writes.
func runAgain(policy cronv1.RerunPolicy, outcome cronv1.RunOutcome) (wait, again bool) {
	switch {
	case policy == cronv1.RerunNever:
		return false, false
	case outcome == cronv1.OutcomeRunning:
		return true, false
	default:
		return false, policy == cronv1.RerunAlways || outcome == cronv1.OutcomeFailed
	}
}

// ranAs is the outcome of the run the time of the Job name has already
// had: as its Job shows it while the Job exists, else as the CronJob's run
// history records it; "" when nothing shows the time ran.
func ranAs(cj *cronv1.CronJob, name string, earlier Job, found bool) cronv1.RunOutcome {
	if found {
		switch {
		case earlier.Finished() == batchv1.JobComplete:
			return cronv1.OutcomeSucceeded
		case earlier.Finished() == batchv1.JobFailed:
			return cronv1.OutcomeFailed
		case earlier.GetDeletionTimestamp() != nil:
			return cronv1.OutcomeUnknown
		}
		return cronv1.OutcomeRunning
	}
	for _, r := range cj.Status.RecentRuns {
		if r.JobName == name {
			if r.Outcome == "" {
				return cronv1.OutcomeUnknown
			}
			return r.Outcome
		}
	}
	return ""
}

// alreadyRun records a time skipped because it ran (its Job is gone, or
// finished under a policy that does not run it again).
func (p *Plan) alreadyRun(t time.Time, name string, outcome cronv1.RunOutcome, policy cronv1.RerunPolicy) {
	st := &p.Status
	st.LastHandledTime = &metav1.Time{Time: t}
	st.Skipped++
	p.event(corev1.EventTypeNormal, ReasonAlreadyRun, "Skipped %s: it already ran (job %s, %s) and spec.rerunPolicy is %s", formatTime(t), name, outcome, policy)
}

// runningAfter counts the strays after t still running: not recorded yet
// (so not in status.active), they run all the same and count against
// maxConcurrent.
func runningAfter(strays map[time.Time]Job, t time.Time) int {
	n := 0
	for at, j := range strays {
		if at.After(t) && j.Finished() == "" && j.GetDeletionTimestamp() == nil {
			n++
		}
	}
	return n
}

// newJob is the CronJob's Job for t, as its planner would make it, but
// controlled by the Backfill and holding Finalizer instead of the
// CronJob's run-record finalizer.
func (p *Plan) newJob(cj *cronv1.CronJob, sched *schedule.Schedule, t time.Time, name string) *batchv1.Job {
	j := job.New(cj, t, sched.Location())
	j.Name = name
	j.OwnerReferences = []metav1.OwnerReference{*metav1.NewControllerRef(p.bf, backfillKind)}
	j.Finalizers = []string{Finalizer}
	if j.Labels == nil {
		j.Labels = map[string]string{}
	}
	if len(validation.IsValidLabelValue(p.bf.Name)) == 0 {
		j.Labels[cronv1.BackfillLabel] = p.bf.Name
	}
	return j
}

// exists records a time whose Job already exists: skipped, or this
// Backfill's own (counted as created).
func (p *Plan) exists(t time.Time, j Job, ours bool) {
	st := &p.Status
	st.LastHandledTime = &metav1.Time{Time: t}
	if !ours {
		st.Skipped++
		p.event(corev1.EventTypeNormal, ReasonJobExists, "Skipped %s: job %s exists", formatTime(t), j.GetName())
		return
	}
	st.Created++
	if !isScheduledName(j.GetName(), t) {
		st.Rerun++
	}
	switch {
	case j.Finished() == batchv1.JobComplete:
		st.Succeeded++
	case j.Finished() == batchv1.JobFailed || j.GetDeletionTimestamp() != nil:
		st.Failed++
	case j.GetUID() != "" && !activeHas(st.Active, j.GetUID()):
		st.Active = append(st.Active, job.Ref(j))
	}
}

// Created reports c's Job made, as j.
func (p *Plan) Created(c Create, j metav1.Object) {
	p.Status.Created++
	if !isScheduledName(c.Job.Name, c.Time) {
		p.Status.Rerun++
	}
	p.Status.LastHandledTime = &metav1.Time{Time: c.Time}
	p.Status.Active = append(p.Status.Active, job.Ref(j))
	p.event(corev1.EventTypeNormal, ReasonSuccessfulCreate, "Created job %s for %s", j.GetName(), formatTime(c.Time))
	if meta.FindStatusCondition(p.Status.Conditions, cronv1.ConditionJobTemplateValid) != nil {
		p.templateValid(metav1.ConditionTrue, ReasonSuccessfulCreate, "")
	}
	p.conclude(nil)
}

// Exists reports that c's name was taken when it was created: by j, or by
// an unknown Job when j is nil (it could not be read). When c was the
// time's first run and j a run of the time not this Backfill's, the time
// has run after all, and is judged by j, read live (with -shards the Job
// cache may never show a Job another replica's shard controls): skipped,
// or run again, its Job planned right after c; or, j still running, left
// unhandled, and Exists reports false: the sync makes no later create, or
// lastHandledTime would move past the time. A later sync judges it again.
func (p *Plan) Exists(c Create, j Job) bool {
	policy := rerunPolicy(p.bf)
	switch {
	case j == nil:
		p.Status.LastHandledTime = &metav1.Time{Time: c.Time}
		p.Status.Skipped++
		p.event(corev1.EventTypeNormal, ReasonJobExists, "Skipped %s: job %s exists", formatTime(c.Time), c.Job.Name)
	case ours(j, p.bf) || policy == cronv1.RerunNever || !isScheduledName(c.Job.Name, c.Time):
		p.exists(c.Time, j, ours(j, p.bf))
	default:
		outcome := ranAs(nil, c.Job.Name, j, true)
		switch wait, again := runAgain(policy, outcome); {
		case wait:
			if len(p.Status.Active) == 0 {
				p.incomplete(ReasonWaitingForRun, waitingFor(c.Time, c.Job.Name))
			}
			return false
		case again:
			again := Create{Job: c.Job.DeepCopy(), Time: c.Time}
			again.Job.Name = job.RerunName(p.bf.Spec.CronJobName, p.bf.UID, c.Time)
			at := slices.IndexFunc(p.Creates, func(o Create) bool { return o.Job.Name == c.Job.Name })
			p.Creates = slices.Insert(p.Creates, at+1, again)
		default:
			p.alreadyRun(c.Time, c.Job.Name, outcome, policy)
		}
	}
	p.conclude(nil)
	return true
}

// Rejected reports c's Job refused by the API server as invalid. A retry
// meets the same answer, and only a new spec can mend it: the time is
// skipped and counted, as a CronJob counts a rejected run, and the
// JobTemplateValid condition says why.
func (p *Plan) Rejected(c Create, err error) {
	st := &p.Status
	st.LastHandledTime = &metav1.Time{Time: c.Time}
	st.Skipped++
	msg := planner.Bound(err.Error())
	p.event(corev1.EventTypeWarning, ReasonFailedCreate, "Skipped %s: job %s was rejected: %s", formatTime(c.Time), c.Job.Name, msg)
	p.templateValid(metav1.ConditionFalse, ReasonJobRejected, msg)
	p.conclude(nil)
}

// templateValid sets the JobTemplateValid condition.
func (p *Plan) templateValid(status metav1.ConditionStatus, reason, message string) {
	meta.SetStatusCondition(&p.Status.Conditions, metav1.Condition{
		Type: cronv1.ConditionJobTemplateValid, Status: status, Reason: reason, Message: message,
		ObservedGeneration: p.bf.Generation, LastTransitionTime: metav1.NewTime(p.now),
	})
}

// CreateFailed reports c's create failed; later creates are not made.
func (p *Plan) CreateFailed(c Create, err error) {
	p.event(corev1.EventTypeWarning, ReasonFailedCreate, "Error creating job for %s: %v", formatTime(c.Time), err)
}

// conclude sets the Complete condition from the progress. cj is nil when
// called for an outcome: the reason for waiting stays as decided.
func (p *Plan) conclude(cj *cronv1.CronJob) {
	st := &p.Status
	done := p.last.IsZero() || (st.LastHandledTime != nil && !st.LastHandledTime.Time.Before(p.last))
	switch {
	case done && len(st.Active) == 0:
		msg := fmt.Sprintf("%d times: %d created (%d succeeded, %d failed), %d skipped", st.Total, st.Created, st.Succeeded, st.Failed, st.Skipped)
		if p.setCondition(metav1.ConditionTrue, ReasonCompleted, msg) {
			p.event(corev1.EventTypeNormal, ReasonCompleted, "Backfill complete: %s", msg)
		}
	case cj == nil:
	case p.bf.DeletionTimestamp != nil && !done:
		p.incomplete(ReasonDeleting, "the Backfill is being deleted: no Job is created")
	case ptr.Deref(p.bf.Spec.Suspend, false) && !done:
		p.incomplete(ReasonSuspended, "spec.suspend is true: no Job is created")
	case !done && len(p.Creates) == 0 && len(st.Active) == 0 && p.waiting != "":
		p.incomplete(ReasonWaitingForRun, p.waiting)
	case !done && len(p.Creates) == 0 && len(st.Active) == 0:
		msg := fmt.Sprintf("waiting for CronJob %s to pass the next time of the range (it is settled until %s)",
			cj.Name, formatTime(planner.SettledUntil(cj.CreationTimestamp.Time, &cj.Status)))
		if na := cj.Spec.NotAfter; na != nil && p.now.After(na.Time) {
			msg += fmt.Sprintf("; its spec.notAfter %s has passed, so it passes no later time until notAfter is moved", formatTime(na.Time))
		}
		p.incomplete(ReasonWaitingForCronJob, msg)
	default:
		p.incomplete(ReasonRunning, "")
	}
}

func (p *Plan) incomplete(reason, message string) {
	p.setCondition(metav1.ConditionFalse, reason, message)
}

// setCondition reports whether the condition's status changed.
func (p *Plan) setCondition(status metav1.ConditionStatus, reason, message string) bool {
	old := meta.FindStatusCondition(p.Status.Conditions, cronv1.ConditionBackfillComplete)
	changed := old == nil || old.Status != status
	meta.SetStatusCondition(&p.Status.Conditions, metav1.Condition{
		Type: cronv1.ConditionBackfillComplete, Status: status, Reason: reason, Message: message,
		ObservedGeneration: p.bf.Generation, LastTransitionTime: metav1.NewTime(p.now),
	})
	return changed
}

func (p *Plan) event(eventType, reason, format string, args ...any) {
	p.Events = append(p.Events, Event{Type: eventType, Reason: reason, Message: fmt.Sprintf(format, args...)})
}

// ownedBy reports whether bf already names cj (this very object) as owner.
func ownedBy(bf *cronv1.Backfill, cj *cronv1.CronJob) bool {
	for _, ref := range bf.OwnerReferences {
		if ref.UID == cj.UID {
			return true
		}
	}
	return false
}

// ownerGone reports bf owned by an earlier CronJob of cj's name: that one
// is gone (the garbage collector is about to remove bf), and a new CronJob
// of the same name is not the one the Backfill was for.
func ownerGone(bf *cronv1.Backfill, cj *cronv1.CronJob) bool {
	for _, ref := range bf.OwnerReferences {
		if ref.Kind == cronJobKind.Kind && ref.APIVersion == cronJobKind.GroupVersion().String() && ref.UID != cj.UID {
			return true
		}
	}
	return false
}

// ours reports whether j is controlled by the Backfill bf.
func ours(j metav1.Object, bf *cronv1.Backfill) bool {
	ref := metav1.GetControllerOfNoCopy(j)
	return ref != nil && ref.Kind == backfillKind.Kind && ref.UID == bf.UID
}

// Recorded reports whether st, a status of the Backfill as the API server
// stored it, records the outcome of j, a Job the Backfill controls that was
// made for the time at: the walk has passed that time and j is no longer
// active (it was counted as it finished or went away). Only then may j's
// Finalizer go. Statuses only move forward, so a stored one that records j
// is never undone.
func Recorded(st *cronv1.BackfillStatus, j metav1.Object, at time.Time) bool {
	if at.IsZero() {
		// Not a time of the range (its annotation was removed): no run
		// depends on it.
		return true
	}
	return st.LastHandledTime != nil && !at.After(st.LastHandledTime.Time) && !activeHas(st.Active, j.GetUID())
}

func activeHas(active []corev1.ObjectReference, uid types.UID) bool {
	for _, ref := range active {
		if ref.UID == uid {
			return true
		}
	}
	return false
}

// rerunPolicy is bf's policy; one stored before the field existed reads
// as Never, its default, which is what Backfills did before it.
func rerunPolicy(bf *cronv1.Backfill) cronv1.RerunPolicy {
	if bf.Spec.RerunPolicy == "" {
		return cronv1.RerunNever
	}
	return bf.Spec.RerunPolicy
}

// isScheduledName reports whether name is the scheduled run's name for t
// (job.Name), not a run again's (job.RerunName).
func isScheduledName(name string, t time.Time) bool {
	return strings.HasSuffix(name, "-"+strconv.FormatInt(t.Unix(), 10))
}

func formatTime(t time.Time) string { return t.UTC().Format(time.RFC3339) }
