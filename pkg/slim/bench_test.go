package slim

import (
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	cronv1 "github.com/cronjob-controller/cronjob-controller/pkg/apis/batch/v1"
	"github.com/cronjob-controller/cronjob-controller/pkg/workload"
)

// typicalCronJob is a CronJob of the load benchmark's memory run.
func typicalCronJob() *cronv1.CronJob {
	cj := &cronv1.CronJob{ObjectMeta: metav1.ObjectMeta{Name: "cj-00001", Namespace: "team", UID: "0f5e8b9a-2b7c-4a8e-9a43-1f2d3c4b5a69", ResourceVersion: "123456", Labels: map[string]string{"team": "data"}}}
	cj.Spec.Schedule = "0 0 1 5 *"
	cj.Spec.JobTemplate = batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{Template: workload.PodTemplate()}}
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
