package slim

import (
	"fmt"
	"slices"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	cronv1 "github.com/cronjob-controller/cronjob-controller/pkg/apis/batch/v1"
)

// CronJob is what the cache keeps of a CronJob: all of it but managedFields,
// with the job template encoded as protobuf. Decoded, a typical template is
// several kilobytes of structs, maps and strings; encoded, a few hundred
// bytes, and it is decoded only for the sync that expands the CronJob.
type CronJob struct {
	metav1.ObjectMeta
	spec     cronJobSpec
	template []byte // batchv1.JobTemplateSpec, protobuf
	// unencoded is the template itself when it could not be encoded (no
	// template the API server accepts fails to), so that nothing is lost.
	unencoded *batchv1.JobTemplateSpec
	status    cronv1.CronJobStatus
}

// cronJobSpec is cronv1.CronJobSpec without its job template. The round-trip
// test of this package fails when a field added to the spec is not carried.
type cronJobSpec struct {
	schedule                   string
	schedules                  []cronv1.ScheduleEntry
	notBefore, notAfter        *metav1.Time
	timeZone                   *string
	startingDeadlineSeconds    *int64
	concurrencyPolicy          cronv1.ConcurrencyPolicy
	catchUpPolicy              cronv1.CatchUpPolicy
	catchUpLimit               *int32
	suspend                    *bool
	suspendUntil               *metav1.Time
	skipTimes                  []metav1.Time
	successfulJobsHistoryLimit *int32
	failedJobsHistoryLimit     *int32
	excludeCalendars           []string
	failurePolicy              *cronv1.FailurePolicy
	runHistoryLimit            *int32
	maxRuns                    *int64
	runOverrides               *cronv1.RunOverrides
}

// FromCronJob is the CronJob informer's transform: a *cronv1.CronJob
// becomes a *CronJob, anything else (a tombstone, a *CronJob already)
// passes through.
func FromCronJob(obj any) (any, error) {
	if cj, ok := obj.(*cronv1.CronJob); ok {
		return NewCronJob(cj), nil
	}
	return obj, nil
}

// encodeTemplate is a variable so that a test can make it fail.
var encodeTemplate = func(t *batchv1.JobTemplateSpec) ([]byte, error) { return t.Marshal() }

// NewCronJob returns the cache form of cj. It shares no memory with cj that
// cj's owner could change later.
func NewCronJob(cj *cronv1.CronJob) *CronJob {
	s := &CronJob{
		ObjectMeta: *cj.ObjectMeta.DeepCopy(),
		status:     *cj.Status.DeepCopy(),
	}
	if template, err := encodeTemplate(&cj.Spec.JobTemplate); err == nil {
		s.template = template
	} else {
		s.unencoded = cj.Spec.JobTemplate.DeepCopy()
	}
	s.ManagedFields = nil
	spec := &cj.Spec
	s.spec = cronJobSpec{
		schedule:                   spec.Schedule,
		schedules:                  slices.Clone(spec.Schedules),
		notBefore:                  spec.NotBefore.DeepCopy(),
		notAfter:                   spec.NotAfter.DeepCopy(),
		timeZone:                   ptr(spec.TimeZone),
		startingDeadlineSeconds:    ptr(spec.StartingDeadlineSeconds),
		concurrencyPolicy:          spec.ConcurrencyPolicy,
		catchUpPolicy:              spec.CatchUpPolicy,
		catchUpLimit:               ptr(spec.CatchUpLimit),
		suspend:                    ptr(spec.Suspend),
		suspendUntil:               spec.SuspendUntil.DeepCopy(),
		skipTimes:                  slices.Clone(spec.SkipTimes),
		successfulJobsHistoryLimit: ptr(spec.SuccessfulJobsHistoryLimit),
		failedJobsHistoryLimit:     ptr(spec.FailedJobsHistoryLimit),
		excludeCalendars:           slices.Clone(spec.ExcludeCalendars),
		failurePolicy:              spec.FailurePolicy.DeepCopy(),
		runHistoryLimit:            ptr(spec.RunHistoryLimit),
		maxRuns:                    ptr(spec.MaxRuns),
		runOverrides:               spec.RunOverrides.DeepCopy(),
	}
	return s
}

// CronJob returns a new cronv1.CronJob holding what the cache kept, job
// template included; the caller owns it.
func (s *CronJob) CronJob() (*cronv1.CronJob, error) {
	var template batchv1.JobTemplateSpec
	if s.unencoded != nil {
		s.unencoded.DeepCopyInto(&template)
	} else if err := template.Unmarshal(s.template); err != nil {
		return nil, fmt.Errorf("decoding the cached job template of %s/%s: %w", s.Namespace, s.Name, err)
	}
	cj := &cronv1.CronJob{
		ObjectMeta: *s.ObjectMeta.DeepCopy(),
		Spec: cronv1.CronJobSpec{
			Schedule:                   s.spec.schedule,
			Schedules:                  slices.Clone(s.spec.schedules),
			NotBefore:                  s.spec.notBefore.DeepCopy(),
			NotAfter:                   s.spec.notAfter.DeepCopy(),
			TimeZone:                   ptr(s.spec.timeZone),
			StartingDeadlineSeconds:    ptr(s.spec.startingDeadlineSeconds),
			ConcurrencyPolicy:          s.spec.concurrencyPolicy,
			CatchUpPolicy:              s.spec.catchUpPolicy,
			CatchUpLimit:               ptr(s.spec.catchUpLimit),
			Suspend:                    ptr(s.spec.suspend),
			SuspendUntil:               s.spec.suspendUntil.DeepCopy(),
			SkipTimes:                  slices.Clone(s.spec.skipTimes),
			JobTemplate:                template,
			SuccessfulJobsHistoryLimit: ptr(s.spec.successfulJobsHistoryLimit),
			FailedJobsHistoryLimit:     ptr(s.spec.failedJobsHistoryLimit),
			ExcludeCalendars:           slices.Clone(s.spec.excludeCalendars),
			FailurePolicy:              s.spec.failurePolicy.DeepCopy(),
			RunHistoryLimit:            ptr(s.spec.runHistoryLimit),
			MaxRuns:                    ptr(s.spec.maxRuns),
			RunOverrides:               s.spec.runOverrides.DeepCopy(),
		},
		Status: *s.status.DeepCopy(),
	}
	return cj, nil
}

// Status is the cached status, shared with the cache: read it, never
// change it.
func (s *CronJob) Status() *cronv1.CronJobStatus { return &s.status }

// ExcludeCalendars is spec.excludeCalendars, shared with the cache: read
// it, never change it.
func (s *CronJob) ExcludeCalendars() []string { return s.spec.excludeCalendars }

// HasFailurePolicy reports whether spec.failurePolicy is set.
func (s *CronJob) HasFailurePolicy() bool { return s.spec.failurePolicy != nil }

// Suspended reports spec.suspend.
func (s *CronJob) Suspended() bool { return s.spec.suspend != nil && *s.spec.suspend }

// ptr copies what p points at, so the cache and a sync never share it.
func ptr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}
