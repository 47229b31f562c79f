package job

import (
	"slices"

	corev1 "k8s.io/api/core/v1"

	cronv1 "github.com/cronjob-controller/cronjob-controller/pkg/apis/batch/v1"
)

// scheduledTimeRef is where the downward API reads the scheduled time from:
// the pod's own copy of the scheduled-at annotation.
const scheduledTimeRef = "metadata.annotations['" + cronv1.ScheduledAtAnnotation + "']"

// withScheduledTime puts the scheduled time at (RFC 3339, in the CronJob's
// zone) inside the pods of a scheduled run: as the scheduled-at annotation
// on the pod template, and as cronv1.ScheduledTimeEnv in every container
// and init container through the downward API. A pod cannot read its Job's
// annotations, so the annotation goes on the pod. A container that defines
// the variable itself in env keeps its own: the user's word wins (one from
// envFrom, which the controller cannot see, yields to ours, as env always
// wins over envFrom). The template is
// the Job's own deep copy, so the CronJob's template is not touched.
func withScheduledTime(tmpl *corev1.PodTemplateSpec, at string) {
	annotations := make(map[string]string, len(tmpl.Annotations)+1)
	for k, v := range tmpl.Annotations {
		annotations[k] = v
	}
	annotations[cronv1.ScheduledAtAnnotation] = at
	tmpl.Annotations = annotations
	for _, cs := range [][]corev1.Container{tmpl.Spec.InitContainers, tmpl.Spec.Containers} {
		for i := range cs {
			addScheduledTimeEnv(&cs[i])
		}
	}
}

func addScheduledTimeEnv(c *corev1.Container) {
	if slices.ContainsFunc(c.Env, func(e corev1.EnvVar) bool { return e.Name == cronv1.ScheduledTimeEnv }) {
		return
	}
	// First, so the container's own variables can use it as
	// $(CRONJOB_SCHEDULED_TIME): a reference sees only those before it.
	c.Env = append([]corev1.EnvVar{{
		Name: cronv1.ScheduledTimeEnv,
		ValueFrom: &corev1.EnvVarSource{
			FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: scheduledTimeRef},
		},
	}}, c.Env...)
}
