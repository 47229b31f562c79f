package job

import (
	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	cronv1 "github.com/cronjob-controller/cronjob-controller/pkg/apis/batch/v1"
)

// StripForCache is the Job informer's transform: it keeps only what the
// controller reads of a Job (identity, owner, our annotations, deletion,
// the finished conditions and the start and completion times) and drops the
// rest, above all the pod template and managedFields, which are most of a
// Job's size. Jobs the controller does not own keep only their identity and
// owner, enough to see that a name is taken.
func StripForCache(obj any) (any, error) {
	j, ok := obj.(*batchv1.Job)
	if !ok {
		return obj, nil // tombstones and anything else pass through
	}
	stripped := &batchv1.Job{
		TypeMeta: j.TypeMeta,
		ObjectMeta: metav1.ObjectMeta{
			Name:              j.Name,
			Namespace:         j.Namespace,
			UID:               j.UID,
			ResourceVersion:   j.ResourceVersion,
			CreationTimestamp: j.CreationTimestamp,
			DeletionTimestamp: j.DeletionTimestamp,
			OwnerReferences:   j.OwnerReferences,
		},
	}
	if ControllerOf(j) == nil {
		return stripped, nil
	}
	for _, key := range []string{cronv1.ScheduledAtAnnotation, cronv1.InstantiateAnnotation} {
		if v, ok := j.Annotations[key]; ok {
			if stripped.Annotations == nil {
				stripped.Annotations = map[string]string{}
			}
			stripped.Annotations[key] = v
		}
	}
	stripped.Status.StartTime = j.Status.StartTime
	stripped.Status.CompletionTime = j.Status.CompletionTime
	for _, c := range j.Status.Conditions {
		if c.Type == batchv1.JobComplete || c.Type == batchv1.JobFailed {
			stripped.Status.Conditions = append(stripped.Status.Conditions, batchv1.JobCondition{Type: c.Type, Status: c.Status})
		}
	}
	return stripped, nil
}
