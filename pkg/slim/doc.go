// Package slim holds the forms in which the informer caches keep Jobs and
// CronJobs. A cache holds every Job and CronJob of the cluster for the life
// of the process, while a sync reads a handful of fields of each, so the
// caches keep those fields in structs sized for them, and a sync expands the
// one object it works on back into its API type.
//
// The API types are the wrong size for a cache: a batchv1.Job is 1.3 KB
// before any field is set, because its pod template is held by value, and a
// decoded CronJob carries its whole job template (containers, environment,
// resources, volumes), which the controller reads only when it creates a
// Job. Here a Job is its identity, owner, two annotations and three status
// fields, and a CronJob keeps its job template as protobuf bytes.
package slim
