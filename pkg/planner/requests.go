package planner

// Runs on request: a CronJobRun names a CronJob and asks for one run of it.
// The CronJob's sync plans the Job of each CronJobRun not handled yet, named
// by job.RequestName from the CronJobRun's UID, so the name is the lock: one
// Job per CronJobRun whoever creates it, through lost answers, restarts and
// failovers. A request counts as a run-now does: it starts whatever suspend,
// the concurrency policy and a failure pause say, and its Job is active,
// counted, pruned and recorded in the run history (trigger Requested) like
// any run of the CronJob.
//
// What says a CronJobRun was handled is its own stored status (its Job's
// name, or a refusal for good), written from the Job (RunStatus). Until that
// status names the Job and, once the Job has finished, its outcome, the
// Job is the only record that the request was started: it keeps the
// run-record finalizer and is not pruned, so no TTL, delete or history limit
// can make the request look new again.

import (
	"slices"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	cronv1 "github.com/cronjob-controller/cronjob-controller/pkg/apis/batch/v1"
	"github.com/cronjob-controller/cronjob-controller/pkg/job"
)

// Event reasons about CronJobRuns.
const (
	ReasonOverrideNotAllowed = cronv1.ReasonRunOverrideNotAllowed
	ReasonRunStarted         = "RunStarted"
	ReasonRunFinished        = "RunFinished"
)

// Request is what the planner reads of a CronJobRun naming the CronJob.
type Request struct {
	Name    string
	UID     types.UID
	Created time.Time
	Env     []cronv1.RunEnvVar
	// Status is the CronJobRun's status as stored.
	Status cronv1.CronJobRunStatus
}

// RequestOf reads a CronJobRun.
func RequestOf(r *cronv1.CronJobRun) Request {
	return Request{Name: r.Name, UID: r.UID, Created: r.CreationTimestamp.Time, Env: r.Spec.Env, Status: r.Status}
}

// Handled reports whether the status of the CronJobRun r says it never
// starts a Job again: it names its Job, or refuses it for good.
func Handled(r *cronv1.CronJobRun) bool {
	return (&Request{Status: r.Status}).handled()
}

// handled reports whether the stored status of r says it never starts a
// Job again: it names its Job, or refuses it for good.
func (r *Request) handled() bool {
	if r.Status.JobName != "" {
		return true
	}
	c := meta.FindStatusCondition(r.Status.Conditions, cronv1.ConditionRunStarted)
	return c != nil && c.Status == metav1.ConditionFalse && refusedForGood(c.Reason)
}

func refusedForGood(reason string) bool {
	switch reason {
	case cronv1.ReasonRunOverrideNotAllowed, cronv1.ReasonRunNameTaken, cronv1.ReasonRunJobRejected:
		return true
	}
	return false
}

// DisallowedEnv lists the names of env that cj's spec.runOverrides.allowedEnv
// does not name.
func DisallowedEnv(cj *cronv1.CronJob, env []cronv1.RunEnvVar) []string {
	var allowed []string
	if o := cj.Spec.RunOverrides; o != nil {
		allowed = o.AllowedEnv
	}
	var out []string
	for _, e := range env {
		if !slices.Contains(allowed, e.Name) {
			out = append(out, e.Name)
		}
	}
	return out
}

// isRequestJob reports whether j is named as the Job of a CronJobRun of
// the CronJob.
func (p *Plan) isRequestJob(j Job) bool {
	return j.Manual() && job.IsRequestName(p.cj.Name, j.GetName())
}

// requestHolds reports whether a CronJobRun's stored status does not yet
// record what j, its Job, says: its name, or, once j has finished, its
// outcome. A CronJobRun that is gone holds nothing.
func (p *Plan) requestHolds(j Job) bool {
	if !p.isRequestJob(j) {
		return false
	}
	for i := range p.requests {
		r := &p.requests[i]
		if job.RequestName(p.cj.Name, r.UID) != j.GetName() {
			continue
		}
		if r.Status.JobName != j.GetName() {
			return true
		}
		return j.Finished() != "" && r.Status.Outcome != cronv1.OutcomeSucceeded && r.Status.Outcome != cronv1.OutcomeFailed
	}
	return false
}

// requestRecorded reports whether the run of j, a CronJobRun's Job, is
// recorded: written lists it active, or its history holds it, or the run is
// beyond a full history; or the CronJobRun's own status records it (its
// name, and its outcome once finished) or the CronJobRun is gone. That last
// keeps it recorded once it has been: a run dropped from a history left
// short of full (a limit raised) must not look new, and its outcome count
// again. The CronJobRun's status is written after the CronJob's in the sync
// that sees the Job finish, so at worst (that CronJob status write lost) an
// outcome goes uncounted, never counted twice.
func (p *Plan) requestRecorded(j Job, written *cronv1.CronJobStatus) bool {
	if activeIndex(written.Active, j.GetUID()) >= 0 ||
		slices.ContainsFunc(written.RecentRuns, func(r cronv1.RunRecord) bool { return r.JobName == j.GetName() }) {
		return true
	}
	rr := written.RecentRuns
	if t, _ := p.isRun(j); len(rr) >= p.runHistoryLimit() && !t.After(runTime(&rr[len(rr)-1])) {
		return true
	}
	return !p.requestHolds(j)
}

// planRequests plans the Job of each CronJobRun not handled yet, oldest
// first. One whose Job exists already (made by a sync whose status write
// was lost) needs none; one asking for an env the CronJob does not allow
// gets none (RunStatus refuses it).
func (p *Plan) planRequests(jobs []Job) {
	rs := slices.Clone(p.requests)
	slices.SortStableFunc(rs, func(a, b Request) int {
		if c := a.Created.Compare(b.Created); c != 0 {
			return c
		}
		return strings.Compare(a.Name, b.Name)
	})
	for _, r := range rs {
		if r.handled() || len(DisallowedEnv(p.cj, r.Env)) > 0 {
			continue
		}
		name := job.RequestName(p.cj.Name, r.UID)
		if slices.ContainsFunc(jobs, func(j Job) bool { return j.GetName() == name }) {
			continue
		}
		p.Creates = append(p.Creates, Create{
			Job:     job.NewRequested(p.cj, r.Name, r.UID, r.Env),
			Manual:  true,
			Request: r.Name,
		})
	}
}

// RequestRefusal is a CronJobRun's Job refused for good while the plan was
// carried out.
type RequestRefusal struct {
	Why    Refusal
	Detail string
}

// RunStatus is the status of the CronJobRun r of cj (nil: no such CronJob)
// at now, given its Job j (nil: none found) and a refusal of its create in
// this sync (nil: none). It follows the Job; a status naming a Job keeps
// it, and a refusal for good stays. The events are about the CronJobRun,
// for news only.
func RunStatus(r *cronv1.CronJobRun, cj *cronv1.CronJob, j Job, refused *RequestRefusal, now time.Time) (cronv1.CronJobRunStatus, []Event) {
	st := *r.Status.DeepCopy()
	var events []Event
	set := func(status metav1.ConditionStatus, reason, message string) {
		message = Bound(message)
		prior := meta.FindStatusCondition(st.Conditions, cronv1.ConditionRunStarted)
		if prior != nil && prior.Status == status && prior.Reason == reason && prior.Message == message {
			return
		}
		meta.SetStatusCondition(&st.Conditions, metav1.Condition{
			Type: cronv1.ConditionRunStarted, Status: status, Reason: reason, Message: message,
			ObservedGeneration: r.Generation, LastTransitionTime: metav1.Time{Time: now},
		})
		switch {
		case status == metav1.ConditionTrue:
			events = append(events, Event{corev1.EventTypeNormal, ReasonRunStarted, message})
		case refusedForGood(reason):
			events = append(events, Event{corev1.EventTypeWarning, reason, message})
		}
	}
	handled := (&Request{Status: st}).handled()
	switch {
	case j != nil:
		st.JobName = j.GetName()
		set(metav1.ConditionTrue, cronv1.ReasonRunJobCreated, "Job "+j.GetName()+" is the run")
		if t := j.StartTime(); t != nil {
			st.StartTime = t.DeepCopy()
		}
		wasDone := st.Outcome == cronv1.OutcomeSucceeded || st.Outcome == cronv1.OutcomeFailed
		switch j.Finished() {
		case batchv1.JobComplete:
			st.Outcome = cronv1.OutcomeSucceeded
		case batchv1.JobFailed:
			st.Outcome = cronv1.OutcomeFailed
		default:
			if !wasDone {
				st.Outcome = cronv1.OutcomeRunning
			}
		}
		if j.Finished() != "" && st.CompletionTime == nil {
			// Unknown (a Job whose Failed condition has no time): when
			// it was seen finished.
			st.CompletionTime = &metav1.Time{Time: now}
			if done := j.FinishTime(); done != nil {
				st.CompletionTime = done.DeepCopy()
			}
		}
		if !wasDone && j.Finished() != "" {
			events = append(events, Event{corev1.EventTypeNormal, ReasonRunFinished, "Job " + j.GetName() + " " + strings.ToLower(string(st.Outcome))})
		}
	case st.JobName != "":
		// Its Job is gone (pruned, deleted): the outcome seen stays, a run
		// not seen to finish is Unknown.
		if st.Outcome == cronv1.OutcomeRunning || st.Outcome == "" {
			st.Outcome = cronv1.OutcomeUnknown
		}
	case handled:
	case refused != nil && refused.Why == NameTaken:
		set(metav1.ConditionFalse, cronv1.ReasonRunNameTaken, "Job "+job.RequestName(r.Spec.CronJobName, r.UID)+" exists and is not controlled by CronJob "+r.Spec.CronJobName+"; this CronJobRun starts nothing")
	case refused != nil:
		set(metav1.ConditionFalse, cronv1.ReasonRunJobRejected, "The API server refused the Job: "+refused.Detail)
	case cj == nil:
		set(metav1.ConditionFalse, cronv1.ReasonRunCronJobNotFound, "CronJob "+r.Spec.CronJobName+" not found; the run starts when it exists")
	default:
		if bad := DisallowedEnv(cj, r.Spec.Env); len(bad) > 0 {
			set(metav1.ConditionFalse, cronv1.ReasonRunOverrideNotAllowed,
				"CronJob "+cj.Name+" does not allow setting env "+strings.Join(bad, ", ")+" (spec.runOverrides.allowedEnv); this CronJobRun starts nothing")
		} else {
			set(metav1.ConditionFalse, cronv1.ReasonRunPending, "Waiting for the controller to start the run")
		}
	}
	return st, events
}

// Finished reports when the CronJobRun whose status is st was done with:
// its run finished (or went) or it was refused for good; false while it is
// not.
func Finished(st *cronv1.CronJobRunStatus) (time.Time, bool) {
	switch st.Outcome {
	case cronv1.OutcomeSucceeded, cronv1.OutcomeFailed, cronv1.OutcomeUnknown:
		if st.CompletionTime != nil {
			return st.CompletionTime.Time, true
		}
	}
	c := meta.FindStatusCondition(st.Conditions, cronv1.ConditionRunStarted)
	switch {
	case c == nil:
		return time.Time{}, false
	case st.Outcome == cronv1.OutcomeUnknown || c.Status == metav1.ConditionFalse && refusedForGood(c.Reason):
		return c.LastTransitionTime.Time, true
	}
	return time.Time{}, false
}

// ExpiresAt is when the CronJobRun r goes by its spec.ttlSecondsAfterFinished;
// false while it has no TTL or is not finished.
func ExpiresAt(r *cronv1.CronJobRun) (time.Time, bool) {
	done, ok := Finished(&r.Status)
	if !ok || r.Spec.TTLSecondsAfterFinished == nil {
		return time.Time{}, false
	}
	return done.Add(time.Duration(*r.Spec.TTLSecondsAfterFinished) * time.Second), true
}
