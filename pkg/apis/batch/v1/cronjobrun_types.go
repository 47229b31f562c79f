package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// CronJobRun condition types and reasons.
const (
	// ConditionRunStarted is True once the run's Job exists (reason
	// JobCreated); False, with the reason, while it does not: Pending
	// (the controller has not started it yet), CronJobNotFound,
	// OverrideNotAllowed, NameTaken or JobRejected (the last three for
	// good: that CronJobRun never starts a Job).
	ConditionRunStarted = "Started"

	ReasonRunJobCreated         = "JobCreated"
	ReasonRunPending            = "Pending"
	ReasonRunCronJobNotFound    = "CronJobNotFound"
	ReasonRunOverrideNotAllowed = "OverrideNotAllowed"
	ReasonRunNameTaken          = "NameTaken"
	ReasonRunJobRejected        = "JobRejected"

	// CronJobRunAnnotation, on a Job started for a CronJobRun, is the
	// CronJobRun's name (its UID makes the Job's name).
	CronJobRunAnnotation = "batch.tutorial.kubebuilder.io/cronjobrun"
)

// Bounds of a CronJobRun and of spec.runOverrides.
const (
	MaxRunEnv                 = 32
	MaxRunEnvValue            = 4096
	MaxRunTTLSecondsAfterDone = 30 * 24 * 60 * 60
)

// RunOverrides says what a CronJobRun of a CronJob may change in the Job it
// starts.
type RunOverrides struct {
	// AllowedEnv names the environment variables a CronJobRun may set (in
	// every container of the Job; a name the template sets too takes the
	// CronJobRun's value). A CronJobRun setting any other name starts
	// nothing: its Started condition is False with reason
	// OverrideNotAllowed. Names as Kubernetes accepts them in a container's
	// env, letters, digits, '-', '.' and '_', not starting with a digit. At
	// most 32 names, each at most 128 characters.
	// +listType=set
	// +kubebuilder:validation:MaxItems=32
	// +kubebuilder:validation:items:MaxLength=128
	// +kubebuilder:validation:items:Pattern=`^[-._a-zA-Z][-._a-zA-Z0-9]*$`
	// +optional
	AllowedEnv []string `json:"allowedEnv,omitempty"`
}

// RunEnvVar is one environment variable a CronJobRun sets: a plain value,
// never a reference to a Secret or ConfigMap.
type RunEnvVar struct {
	// Name of the variable; the CronJob's spec.runOverrides.allowedEnv
	// must name it. Letters, digits, '-', '.' and '_', not starting with a
	// digit; at most 128 characters.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=128
	// +kubebuilder:validation:Pattern=`^[-._a-zA-Z][-._a-zA-Z0-9]*$`
	Name string `json:"name"`
	// Value of the variable; at most 4096 characters.
	// +kubebuilder:validation:MaxLength=4096
	// +optional
	Value string `json:"value"`
}

// CronJobRunSpec names the CronJob to run once, and what the run changes.
// It cannot be changed once created.
//
// +kubebuilder:validation:XValidation:rule=`self == oldSelf`,message=`a CronJobRun cannot be changed; create another`
type CronJobRunSpec struct {
	// CronJobName is the CronJob, in the CronJobRun's namespace, to run
	// once. At most 52 characters.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=52
	CronJobName string `json:"cronJobName"`

	// Env sets environment variables in every container of the run's Job,
	// each one the CronJob's spec.runOverrides.allowedEnv names. At most
	// 32 entries, names unique.
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=32
	// +optional
	Env []RunEnvVar `json:"env,omitempty"`

	// TTLSecondsAfterFinished, when set, deletes the CronJobRun that many
	// seconds after its run finished (or after it was refused). Its Job is
	// not deleted with it: the CronJob's history limits prune Jobs. From 0
	// to 2592000 (30 days).
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=2592000
	// +optional
	TTLSecondsAfterFinished *int32 `json:"ttlSecondsAfterFinished,omitempty"`
}

// CronJobRunStatus follows the run's Job.
type CronJobRunStatus struct {
	// JobName is the run's Job, once created. Once set, the CronJobRun
	// never starts another Job.
	// +optional
	JobName string `json:"jobName,omitempty"`
	// StartTime is when the Job started.
	// +optional
	StartTime *metav1.Time `json:"startTime,omitempty"`
	// CompletionTime is when the Job finished (completed or failed).
	// +optional
	CompletionTime *metav1.Time `json:"completionTime,omitempty"`
	// Outcome is what became of the run: Running, Succeeded, Failed, or
	// Unknown (its Job went away before it was seen to finish). Unset
	// before the Job exists.
	// +optional
	Outcome RunOutcome `json:"outcome,omitempty"`
	// Conditions: Started.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// CronJobRun starts one run of a CronJob, once, as the run-now annotation
// does, for whoever may create CronJobRuns: that needs no right to change
// the CronJob.
//
// +genclient
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:path=cronjobruns,singular=cronjobrun,scope=Namespaced,shortName=cjr,categories=all;tutorial
// +kubebuilder:printcolumn:name="CronJob",type=string,JSONPath=`.spec.cronJobName`
// +kubebuilder:printcolumn:name="Job",type=string,JSONPath=`.status.jobName`
// +kubebuilder:printcolumn:name="Outcome",type=string,JSONPath=`.status.outcome`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type CronJobRun struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   CronJobRunSpec   `json:"spec"`
	Status CronJobRunStatus `json:"status,omitempty"`
}

// CronJobRunList is a list of CronJobRuns.
//
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
// +kubebuilder:object:root=true
type CronJobRunList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	Items []CronJobRun `json:"items"`
}
