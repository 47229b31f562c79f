// Package workload holds the objects the benchmarks measure with, so that
// the Go benchmarks and the load benchmark (hack/loadbench) describe the
// same CronJobs.
package workload

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// PodTemplate is a pod template of the size real CronJobs carry: a few
// labels, eight environment variables, resources, a volume.
func PodTemplate() corev1.PodTemplateSpec {
	var env []corev1.EnvVar
	for i := range 8 {
		env = append(env, corev1.EnvVar{Name: fmt.Sprintf("SETTING_%d", i), Value: fmt.Sprintf("value-of-setting-number-%d", i)})
	}
	return corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "report", "team": "data", "tier": "batch"}},
		Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyNever,
			Containers: []corev1.Container{{
				Name: "report", Image: "registry.example.com/team/report:v1.2.3",
				Command: []string{"/bin/report", "--since=24h", "--output=/data/out.json"},
				Env:     env,
				Resources: corev1.ResourceRequirements{
					Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("128Mi")},
					Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("256Mi")},
				},
				VolumeMounts: []corev1.VolumeMount{{Name: "data", MountPath: "/data"}},
			}},
			Volumes: []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}},
		},
	}
}
