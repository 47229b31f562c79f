package slim

import (
	"slices"
	"strconv"
	"time"
	"unicode/utf8"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	cronv1 "github.com/cronjob-controller/cronjob-controller/pkg/apis/batch/v1"
	"github.com/cronjob-controller/cronjob-controller/pkg/job"
)

// Job is what the cache keeps of a Job, and what a sync reads of one: its
// identity and owner references (in ObjectMeta, which also makes it a
// metav1.Object for keys, indexes and event handlers), the two annotations
// this controller sets (read once), how it finished, and when it started and
// completed. A Job this controller does not own keeps its identity and
// owners only, enough to see that a name is taken. ObjectMeta holds the
// finalizers only while one of this controller's is among them, and no
// annotations, labels or managedFields.
type Job struct {
	metav1.ObjectMeta
	// scheduledAt is the scheduled-at annotation read once, zero when it is
	// missing or unreadable; manual says the instantiate annotation is
	// job.Manual.
	scheduledAt time.Time
	manual      bool
	// backfill is the Backfill label of a Job holding the backfill-record
	// finalizer: the Backfill that made it, also once nothing controls it.
	backfill string
	// runNowKey, runNowAfter and runNowSeq are a manual Job's run-now
	// annotations, kept while it holds the run-record finalizer; hasRunNow
	// says they were there. runNowSeq is 0 on a Job made before requests
	// were numbered (or with an unreadable number).
	runNowKey, runNowAfter   string
	runNowSeq                int64
	hasRunNow                bool
	finished                 batchv1.JobConditionType
	startTime, completedTime *metav1.Time
	// failedTime is when the Failed condition became True; failedReason
	// and failedMessage are that condition's, the message cut to
	// maxFailedMessage bytes (the run history keeps no more).
	failedTime                  *metav1.Time
	failedReason, failedMessage string
	// recordOf is the CronJob a Job detached from it was made for, while
	// it holds the run-record finalizer (job.RecordOf).
	recordOf types.UID
}

// RecordOf is the UID of the CronJob a detached Job holding the run-record
// finalizer was made for; use job.RecordOf, which also checks the rest.
func (s *Job) RecordOf() types.UID { return s.recordOf }

// FromJob is the Job informer's transform: a *batchv1.Job becomes a *Job,
// anything else (a tombstone, a *Job already) passes through.
func FromJob(obj any) (any, error) {
	if j, ok := obj.(*batchv1.Job); ok {
		return NewJob(j), nil
	}
	return obj, nil
}

// NewJob returns the cache form of j. It shares no memory with j that j's
// owner could change later.
func NewJob(j *batchv1.Job) *Job {
	s := &Job{ObjectMeta: metav1.ObjectMeta{
		Name:              j.Name,
		Namespace:         j.Namespace,
		UID:               j.UID,
		ResourceVersion:   j.ResourceVersion,
		CreationTimestamp: j.CreationTimestamp,
		DeletionTimestamp: j.DeletionTimestamp.DeepCopy(),
		OwnerReferences:   copyRefs(j.OwnerReferences),
	}}
	if job.HoldsRunRecord(j) {
		// Kept whole: releasing the finalizer patches it out by position.
		s.Finalizers = slices.Clone(j.Finalizers)
	}
	if job.ControllerOf(j) == nil {
		if ref := metav1.GetControllerOfNoCopy(j); ref != nil && ref.Kind == "Backfill" &&
			ref.APIVersion == cronv1.SchemeGroupVersion.String() {
			// A Backfill's Job: it reads whether the Job finished.
			s.finished = job.Finished(j)
		}
		if slices.Contains(j.Finalizers, job.BackfillRecordFinalizer) {
			// Made by a Backfill (controlled by it, or by nothing once
			// orphaned): to release the finalizer, the time it was made for
			// and the Backfill's name.
			s.Finalizers = slices.Clone(j.Finalizers)
			s.scheduledAt, _ = job.ScheduledAt(j)
			s.backfill = j.Labels[cronv1.BackfillLabel]
		}
		if !job.HoldsRunRecord(j) {
			return s
		}
		// Detached from its CronJob before its run was recorded: which run
		// it is, and whose, say when the finalizer may go (once that
		// CronJob's stored status records it).
		s.recordOf = types.UID(j.Annotations[cronv1.CronJobUIDAnnotation])
	}
	s.scheduledAt, _ = job.ScheduledAt(j)
	s.manual = j.Annotations[cronv1.InstantiateAnnotation] == job.Manual
	if s.manual && job.HoldsRunRecord(j) {
		s.runNowKey, s.hasRunNow = j.Annotations[cronv1.RunNowKeyAnnotation]
		s.runNowAfter = j.Annotations[cronv1.RunNowAfterAnnotation]
		if n, err := strconv.ParseInt(j.Annotations[cronv1.RunNowSeqAnnotation], 10, 64); err == nil && n > 0 {
			s.runNowSeq = n
		}
	}
	s.finished = job.Finished(j)
	s.startTime = j.Status.StartTime.DeepCopy()
	s.completedTime = j.Status.CompletionTime.DeepCopy()
	if s.finished == batchv1.JobFailed {
		for _, c := range j.Status.Conditions {
			if c.Type != batchv1.JobFailed || c.Status != corev1.ConditionTrue {
				continue
			}
			if !c.LastTransitionTime.IsZero() {
				s.failedTime = c.LastTransitionTime.DeepCopy()
			}
			s.failedReason, s.failedMessage = c.Reason, cut(c.Message, maxFailedMessage)
		}
	}
	return s
}

// Finished returns the condition type (Complete or Failed) that ended the
// Job, or "" while it runs.
func (s *Job) Finished() batchv1.JobConditionType { return s.finished }

// StartTime is the Job's status.startTime; do not change what it points at.
func (s *Job) StartTime() *metav1.Time { return s.startTime }

// CompletionTime is the Job's status.completionTime; do not change what it
// points at.
func (s *Job) CompletionTime() *metav1.Time { return s.completedTime }

// FinishTime is when the Job finished: status.completionTime, or when its
// Failed condition became True; nil while it runs or when unknown. Do not
// change what it points at.
func (s *Job) FinishTime() *metav1.Time {
	if s.finished == batchv1.JobFailed {
		return s.failedTime
	}
	return s.completedTime
}

// Failure is the reason and message of a failed Job's Failed condition,
// the message cut to maxFailedMessage bytes; empty for other Jobs.
func (s *Job) Failure() (reason, message string) { return s.failedReason, s.failedMessage }

// maxFailedMessage is as much of a failed Job's message as the cache
// keeps: what a run record holds (RunRecord.Message).
const maxFailedMessage = 256

// cut cuts s to at most n bytes, on a rune boundary.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// ScheduledAt is the time the Job ran for, from its scheduled-at
// annotation, like job.ScheduledAt: false when that is missing or unreadable.
func (s *Job) ScheduledAt() (time.Time, bool) { return s.scheduledAt, !s.scheduledAt.IsZero() }

// RunNow is a manual Job's run-now value and the value handled before it,
// as status.lastRunNow keeps them, and the number of its request (0 when
// it has none), while the Job holds the run-record finalizer; false
// otherwise.
func (s *Job) RunNow() (key, after string, seq int64, ok bool) {
	return s.runNowKey, s.runNowAfter, s.runNowSeq, s.hasRunNow
}

// Deleting returns s as the API server holds it once deleted at t while a
// finalizer keeps it: being deleted. The copy shares the rest of s; read
// it, never change it.
func (s *Job) Deleting(t time.Time) *Job {
	d := *s
	d.DeletionTimestamp = &metav1.Time{Time: t}
	return &d
}

// Manual reports whether the Job was started by hand (run-now).
func (s *Job) Manual() bool { return s.manual }

// Backfill is the name of the Backfill that made a Job holding the
// backfill-record finalizer, from its label; "" for other Jobs.
func (s *Job) Backfill() string { return s.backfill }

func copyRefs(refs []metav1.OwnerReference) []metav1.OwnerReference {
	if refs == nil {
		return nil
	}
	out := make([]metav1.OwnerReference, len(refs))
	for i := range refs {
		refs[i].DeepCopyInto(&out[i])
	}
	return out
}
