// Package v1 is version v1 of the batch.tutorial.kubebuilder.io API: the CronJob
// custom resource that this controller reconciles into batch/v1 Jobs.
//
// +k8s:deepcopy-gen=package
// +groupName=batch.tutorial.kubebuilder.io
// +kubebuilder:object:generate=false
package v1
