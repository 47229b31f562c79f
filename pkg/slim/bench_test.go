package slim

import (
	"fmt"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	cronv1 "github.com/cronjob-controller/cronjob-controller/pkg/apis/batch/v1"
)

// typicalCronJob has the pod template of the load benchmark's memory run:
// labels, eight environment variables, resources and a volume.
func typicalCronJob() *cronv1.CronJob {
	var env []corev1.EnvVar
	for i := range 8 {
		env = append(env, corev1.EnvVar{Name: fmt.Sprintf("SETTING_%d", i), Value: fmt.Sprintf("value-of-setting-number-%d", i)})
	}
	cj := &cronv1.CronJob{ObjectMeta: metav1.ObjectMeta{Name: "cj-00001", Namespace: "team", UID: "0f5e8b9a-2b7c-4a8e-9a43-1f2d3c4b5a69", ResourceVersion: "123456", Labels: map[string]string{"team": "data"}}}
	cj.Spec.Schedule = "0 0 1 5 *"
	cj.Spec.JobTemplate = batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{
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
	}}}
	return cj
}

// BenchmarkNewCronJob is the informer's transform of one CronJob; its
// B/op is about what the cache keeps of it.
func BenchmarkNewCronJob(b *testing.B) {
	cj := typicalCronJob()
	b.ReportAllocs()
	for b.Loop() {
		_ = NewCronJob(cj)
	}
}

// BenchmarkDeepCopyCronJob is what the cache kept of the same CronJob
// before the slim form: the decoded object, copied.
func BenchmarkDeepCopyCronJob(b *testing.B) {
	cj := typicalCronJob()
	b.ReportAllocs()
	for b.Loop() {
		_ = cj.DeepCopy()
	}
}

// BenchmarkExpandCronJob is what every sync pays to read a CronJob.
func BenchmarkExpandCronJob(b *testing.B) {
	s := NewCronJob(typicalCronJob())
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.CronJob(); err != nil {
			b.Fatal(err)
		}
	}
}
