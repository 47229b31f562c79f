package v1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Backfill labels, annotations and condition types.
const (
	// BackfillLabel, on a Job a Backfill created, is the Backfill's name, so
	// `kubectl get jobs -l batch.tutorial.kubebuilder.io/backfill=NAME`
	// lists them. The API server refuses a Backfill name longer than a
	// label value may be (63); the Jobs of one stored before that rule
	// carry no such label.
	BackfillLabel = "batch.tutorial.kubebuilder.io/backfill"

	// ConditionBackfillComplete is True once every time of the range has a
	// Job (created or found) and none of the Jobs created is still active;
	// False, with the reason, while it is not.
	ConditionBackfillComplete = "Complete"
)

// MaxBackfillTimes caps how many times one Backfill may cover: a range
// naming more is refused (Complete False, reason TooManyTimes) before any
// Job is made, so a `* * * * *` schedule over ten years cannot flood the
// cluster with Jobs.
const MaxBackfillTimes = 1000

// RerunPolicy says what a Backfill does with a time of its range the
// CronJob (or another Backfill) has already run.
// +kubebuilder:validation:Enum=Never;IfFailed;Always
type RerunPolicy string

const (
	// RerunNever creates only the times never run: a time whose name a
	// Job holds, or whose run the CronJob's run history records, is
	// skipped.
	RerunNever RerunPolicy = "Never"
	// RerunIfFailed also runs again the times whose run failed.
	RerunIfFailed RerunPolicy = "IfFailed"
	// RerunAlways runs every time of the range, those already run again.
	RerunAlways RerunPolicy = "Always"
)

// BackfillSpec names a CronJob and the time range whose runs to create.
//
// +kubebuilder:validation:XValidation:rule=`self.start < self.end`,message=`spec.start must be before spec.end`
type BackfillSpec struct {
	// CronJobName is the CronJob, in the Backfill's namespace, whose
	// schedule, time zone and Job template make the Jobs. The Backfill
	// becomes owned by it: deleting the CronJob deletes the Backfill and
	// the Jobs it created. It cannot be changed.
	// At most 52 characters.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=52
	// +kubebuilder:validation:XValidation:rule=`self == oldSelf`,message=`cannot be changed`
	CronJobName string `json:"cronJobName"`

	// Start is the beginning of the range, included: the first time of the
	// CronJob's schedule at or after it is the first backfilled. It cannot
	// be changed.
	// +kubebuilder:validation:XValidation:rule=`self == oldSelf`,message=`cannot be changed`
	Start metav1.Time `json:"start"`

	// End is the end of the range, excluded. A time of the range is
	// backfilled only once the CronJob itself is past it (its last started
	// or missed run, or its creation), so the Backfill never races the
	// CronJob for a time: a range reaching into the future completes after
	// the CronJob has passed its end. At most 1000 times per Backfill. It
	// cannot be changed.
	// +kubebuilder:validation:XValidation:rule=`self == oldSelf`,message=`cannot be changed`
	End metav1.Time `json:"end"`

	// MaxConcurrent is how many Jobs of this Backfill may be active at once;
	// the next time's Job is created when one finishes.
	// From 1 to 100; 1 when unset.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100
	// +kubebuilder:default=1
	// +optional
	MaxConcurrent *int32 `json:"maxConcurrent,omitempty"`

	// RerunPolicy says what becomes of a time of the range that has already
	// run: Never runs only the times never run (a time whose Job still
	// exists, or whose run the CronJob's run history records, is skipped);
	// IfFailed also runs again the times whose run failed; Always runs
	// every time of the range again. A time run again gets a Job of its
	// own, named for this Backfill, once its earlier run has finished. A
	// time whose Job is gone and which the CronJob's run history no longer
	// holds cannot be told from one never run, and is created. It cannot
	// be changed.
	// Never when unset.
	// +kubebuilder:default=Never
	// +kubebuilder:validation:XValidation:rule=`self == oldSelf`,message=`cannot be changed`
	// +optional
	RerunPolicy RerunPolicy `json:"rerunPolicy,omitempty"`

	// Suspend pauses the Backfill: no new Job is created while it is true;
	// Jobs already created run on.
	// False when unset.
	// +kubebuilder:default=false
	// +optional
	Suspend *bool `json:"suspend,omitempty"`
}

// BackfillStatus is the progress of a Backfill.
type BackfillStatus struct {
	// Total is how many times the CronJob's schedule names in the range.
	// +optional
	Total int32 `json:"total"`
	// Created is how many Jobs this Backfill created.
	// +optional
	Created int32 `json:"created"`
	// Skipped is how many times of the range got no Job from this one:
	// they had already run (a Job of the CronJob or of another Backfill
	// holds the time's name, or the CronJob's run history records its run)
	// and the rerun policy does not run them again, or the API server
	// refused their Job.
	// +optional
	Skipped int32 `json:"skipped"`
	// Rerun is how many of the created Jobs ran again a time that had
	// already run (rerunPolicy IfFailed or Always).
	// +optional
	Rerun int32 `json:"rerun,omitempty"`
	// Succeeded is how many of the created Jobs completed.
	// +optional
	Succeeded int32 `json:"succeeded"`
	// Failed is how many of the created Jobs failed, or were deleted before
	// they finished.
	// +optional
	Failed int32 `json:"failed"`
	// LastHandledTime is the newest time of the range handled (its Job
	// created, or skipped); the times up to it are never looked at again.
	// +optional
	LastHandledTime *metav1.Time `json:"lastHandledTime,omitempty"`
	// Active holds references to the created Jobs not finished yet.
	// +listType=atomic
	// +optional
	Active []corev1.ObjectReference `json:"active,omitempty"`
	// ObservedGeneration is the spec generation this status was computed
	// from.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// Conditions: Complete.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// Backfill creates the Jobs a CronJob's schedule names in a past time range,
// oldest first, named as the CronJob's scheduled runs are, so that no
// scheduled time ever gets two Jobs.
//
// +genclient
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:path=backfills,singular=backfill,scope=Namespaced,shortName=bf,categories=all;tutorial
// +kubebuilder:printcolumn:name="CronJob",type=string,JSONPath=`.spec.cronJobName`
// +kubebuilder:printcolumn:name="Suspend",type=boolean,JSONPath=`.spec.suspend`
// +kubebuilder:printcolumn:name="Total",type=integer,JSONPath=`.status.total`
// +kubebuilder:printcolumn:name="Created",type=integer,JSONPath=`.status.created`
// +kubebuilder:printcolumn:name="Skipped",type=integer,JSONPath=`.status.skipped`
// +kubebuilder:printcolumn:name="Rerun Policy",type=string,JSONPath=`.spec.rerunPolicy`,priority=1
// +kubebuilder:printcolumn:name="Rerun",type=integer,JSONPath=`.status.rerun`,priority=1
// +kubebuilder:printcolumn:name="Succeeded",type=integer,JSONPath=`.status.succeeded`
// +kubebuilder:printcolumn:name="Failed",type=integer,JSONPath=`.status.failed`
// +kubebuilder:printcolumn:name="Complete",type=string,JSONPath=`.status.conditions[?(@.type=="Complete")].status`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:validation:XValidation:rule="size(self.metadata.name) <= 63",fieldPath=".metadata.name",message="must be no more than 63 characters: every Job the Backfill creates carries its name as a label value"
type Backfill struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   BackfillSpec   `json:"spec"`
	Status BackfillStatus `json:"status,omitempty"`
}

// BackfillList is a list of Backfills.
//
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
// +kubebuilder:object:root=true
type BackfillList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	Items []Backfill `json:"items"`
}
