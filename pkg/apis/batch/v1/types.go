package v1

import (
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ConcurrencyPolicy says what to do when a run is due while an earlier Job
// of the same CronJob is still active.
//
// +kubebuilder:validation:Enum=Allow;Forbid;Replace
type ConcurrencyPolicy string

const (
	// AllowConcurrent lets Jobs of one CronJob run side by side.
	AllowConcurrent ConcurrencyPolicy = "Allow"
	// ForbidConcurrent skips a due run while an earlier Job is still active.
	ForbidConcurrent ConcurrencyPolicy = "Forbid"
	// ReplaceConcurrent deletes the active Jobs and starts the due run.
	ReplaceConcurrent ConcurrencyPolicy = "Replace"
)

// CatchUpPolicy says which missed runs start when a CronJob could not run
// on time (the controller was down, or the runs were refused).
//
// +kubebuilder:validation:Enum=Latest;All;None
type CatchUpPolicy string

const (
	// CatchUpLatest starts only the most recent missed run: the built-in
	// CronJob's behaviour.
	CatchUpLatest CatchUpPolicy = "Latest"
	// CatchUpAll starts every missed run still within
	// startingDeadlineSeconds, oldest first, at most catchUpLimit of them.
	CatchUpAll CatchUpPolicy = "All"
	// CatchUpNone never starts a missed run: a run starts only if the
	// controller handles it within a minute of its time (or within
	// startingDeadlineSeconds, when that is shorter).
	CatchUpNone CatchUpPolicy = "None"
)

// Annotations and condition types this API defines.
const (
	// RunNowAnnotation on a CronJob asks for one Job at once. Each distinct
	// value runs once; status.lastRunNow records the last value handled.
	RunNowAnnotation = "batch.tutorial.kubebuilder.io/run-now"

	// InstantiateAnnotation marks a Job started by hand (value "manual").
	InstantiateAnnotation = "batch.tutorial.kubebuilder.io/instantiate"

	// ScheduledAtAnnotation records, on every Job the controller creates, the
	// scheduled time it was created for (RFC 3339, in the CronJob's time zone).
	ScheduledAtAnnotation = "batch.tutorial.kubebuilder.io/scheduled-at"

	// ConditionScheduleValid is True while the schedule and time zone can be
	// used, and False with the parser's message when they cannot.
	ConditionScheduleValid = "ScheduleValid"

	// ConditionLastRunStarted is True when the most recent due run started,
	// and False, with the reason from status.missedRuns, when it did not.
	ConditionLastRunStarted = "LastRunStarted"

	// ConditionJobTemplateValid is False, with the API server's message,
	// when the last Job made from the template was rejected as invalid, and
	// True once a Job was created from it.
	ConditionJobTemplateValid = "JobTemplateValid"
)

// CronJobSpec is what the user asks for: a Job template and when to run it.
type CronJobSpec struct {
	// Schedule in cron format: five fields, a descriptor such as @hourly, or
	// @every <duration>. Time zones go in timeZone, not in the schedule.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=1024
	Schedule string `json:"schedule"`

	// TimeZone is the IANA name of the zone the schedule is read in. When
	// unset, the controller's local time zone is used.
	// +optional
	TimeZone *string `json:"timeZone,omitempty"`

	// StartingDeadlineSeconds is how late, in seconds, a run may still start.
	// A run that could not start within it counts as missed.
	// +kubebuilder:validation:Minimum=0
	// +optional
	StartingDeadlineSeconds *int64 `json:"startingDeadlineSeconds,omitempty"`

	// ConcurrencyPolicy says what to do with a due run while an earlier Job
	// is still active: Allow (default), Forbid or Replace.
	// +kubebuilder:default=Allow
	// +optional
	ConcurrencyPolicy ConcurrencyPolicy `json:"concurrencyPolicy,omitempty"`

	// CatchUpPolicy says which missed runs start: Latest (default, only the
	// most recent), All (each one still within startingDeadlineSeconds,
	// oldest first, at most catchUpLimit), or None.
	// +kubebuilder:default=Latest
	// +optional
	CatchUpPolicy CatchUpPolicy `json:"catchUpPolicy,omitempty"`

	// CatchUpLimit caps how many missed runs catchUpPolicy All starts: the
	// most recent ones.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100
	// +kubebuilder:default=10
	// +optional
	CatchUpLimit *int32 `json:"catchUpLimit,omitempty"`

	// Suspend stops new runs; Jobs already started are left alone.
	// +kubebuilder:default=false
	// +optional
	Suspend *bool `json:"suspend,omitempty"`

	// JobTemplate is the Job created for every run.
	JobTemplate batchv1.JobTemplateSpec `json:"jobTemplate"`

	// SuccessfulJobsHistoryLimit is how many completed Jobs to keep.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:default=3
	// +optional
	SuccessfulJobsHistoryLimit *int32 `json:"successfulJobsHistoryLimit,omitempty"`

	// FailedJobsHistoryLimit is how many failed Jobs to keep.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:default=1
	// +optional
	FailedJobsHistoryLimit *int32 `json:"failedJobsHistoryLimit,omitempty"`
}

// CronJobStatus is what the controller observed and did.
type CronJobStatus struct {
	// Active holds references to the Jobs of this CronJob that have not finished.
	// +listType=atomic
	// +optional
	Active []corev1.ObjectReference `json:"active,omitempty"`

	// ActiveCount is len(active), kept so kubectl can print it as a column.
	// +optional
	ActiveCount int32 `json:"activeCount"`

	// LastScheduleTime is the scheduled time of the most recent run that was started.
	// +optional
	LastScheduleTime *metav1.Time `json:"lastScheduleTime,omitempty"`

	// LastSuccessfulTime is when the most recent successful Job completed.
	// +optional
	LastSuccessfulTime *metav1.Time `json:"lastSuccessfulTime,omitempty"`

	// NextScheduleTime is the next time a run is due, unset when suspended or
	// when the schedule cannot be used.
	// +optional
	NextScheduleTime *metav1.Time `json:"nextScheduleTime,omitempty"`

	// ObservedGeneration is the spec generation this status was computed from.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// ResolvedSchedule is the schedule in use: spec.schedule with every H
	// replaced by this CronJob's hashed value.
	// +optional
	ResolvedSchedule string `json:"resolvedSchedule,omitempty"`

	// ResolvedTimeZone is the spec.timeZone the resolved schedule is read
	// in; empty for the controller's local time.
	// +optional
	ResolvedTimeZone string `json:"resolvedTimeZone,omitempty"`

	// ScheduleChangeTime is when the controller last saw the schedule or
	// time zone change.
	// +optional
	ScheduleChangeTime *metav1.Time `json:"scheduleChangeTime,omitempty"`

	// PreviousSchedules are the schedules in force before the current one
	// that may still decide whether an unstarted time is a run, oldest
	// first. A time before an edit was seen is a run only if the schedules
	// on both sides of the edit name it, so an edit never starts a surprise
	// run and never loses a run both schedules agree on. An entry is
	// dropped once no unstarted time depends on it.
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=5
	// +optional
	PreviousSchedules []PreviousSchedule `json:"previousSchedules,omitempty"`

	// LastRunNow is the last value of the run-now annotation handled
	// (started, or refused for good). A value longer than 128 characters is
	// kept as "sha256:" and its hash.
	// +kubebuilder:validation:MaxLength=128
	// +optional
	LastRunNow string `json:"lastRunNow,omitempty"`

	// MissedRuns counts the scheduled runs that did not start, per reason,
	// with the scheduled time of the latest.
	// +listType=map
	// +listMapKey=reason
	// +optional
	MissedRuns []MissedRuns `json:"missedRuns,omitempty"`

	// Conditions describe the state of this CronJob, among them ScheduleValid.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// Reasons a scheduled run did not start, in status.missedRuns.
const (
	// MissedDeadlineExceeded: the run could not start within
	// startingDeadlineSeconds (for example, the controller was down).
	MissedDeadlineExceeded = "DeadlineExceeded"
	// MissedConcurrencyForbidden: an earlier Job was active under Forbid.
	MissedConcurrencyForbidden = "ConcurrencyForbidden"
	// MissedSuperseded: several runs were missed and only the most recent
	// was considered. Past 100 at once they are counted as 100.
	MissedSuperseded = "Superseded"
	// MissedNameTaken: a Job this CronJob does not control holds the name
	// of the run's Job.
	MissedNameTaken = "NameTaken"
	// MissedJobRejected: the API server refused the run's Job as invalid.
	MissedJobRejected = "JobRejected"
	// MissedScheduleChanged: the run was owed when the controller saw the
	// schedule change, and the new schedule does not name it.
	MissedScheduleChanged = "ScheduleChanged"
)

// PreviousSchedule is a schedule that was in force until the controller saw
// it replaced.
type PreviousSchedule struct {
	// Schedule is the resolved schedule (every H replaced); empty when the
	// schedule could not be used, which names no time.
	// +optional
	Schedule string `json:"schedule,omitempty"`
	// TimeZone is the spec.timeZone it was read in; empty for the
	// controller's local time.
	// +optional
	TimeZone string `json:"timeZone,omitempty"`
	// Until is when the controller saw it replaced.
	Until metav1.Time `json:"until"`
}

// MissedRuns counts the runs of a CronJob missed for one reason.
type MissedRuns struct {
	// Reason is DeadlineExceeded, ConcurrencyForbidden, Superseded,
	// NameTaken, JobRejected or ScheduleChanged.
	Reason string `json:"reason"`
	// Count is how many runs were missed for this reason.
	Count int64 `json:"count"`
	// LastTime is the scheduled time of the latest such run.
	LastTime metav1.Time `json:"lastTime"`
}

// CronJob runs a Job on a schedule.
//
// +genclient
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:path=cronjobs,singular=cronjob,scope=Namespaced
// +kubebuilder:printcolumn:name="Schedule",type=string,JSONPath=`.spec.schedule`
// +kubebuilder:printcolumn:name="Timezone",type=string,JSONPath=`.spec.timeZone`
// +kubebuilder:printcolumn:name="Suspend",type=boolean,JSONPath=`.spec.suspend`
// +kubebuilder:printcolumn:name="Active",type=integer,JSONPath=`.status.activeCount`
// +kubebuilder:printcolumn:name="Last Schedule",type=date,JSONPath=`.status.lastScheduleTime`
// +kubebuilder:printcolumn:name="Next Schedule",type=string,JSONPath=`.status.nextScheduleTime`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:validation:XValidation:rule="size(self.metadata.name) <= 52",message="metadata.name must be no more than 52 characters: the controller appends 11 characters to make Job names"
type CronJob struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   CronJobSpec   `json:"spec"`
	Status CronJobStatus `json:"status,omitempty"`
}

// CronJobList is a list of CronJobs.
//
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
// +kubebuilder:object:root=true
type CronJobList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	Items []CronJob `json:"items"`
}
