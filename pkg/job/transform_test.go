package job

import (
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	cronv1 "github.com/cronjob-controller/cronjob-controller/pkg/apis/batch/v1"
)

func TestStripForCacheKeepsWhatTheSyncReads(t *testing.T) {
	cj := &cronv1.CronJob{ObjectMeta: metav1.ObjectMeta{Name: "cj", Namespace: "ns", UID: "cj-uid"}}
	cj.Spec.JobTemplate.Annotations = map[string]string{"big": "x"}
	cj.Spec.JobTemplate.Spec.Template.Spec.Containers = []corev1.Container{{Name: "c", Image: "busybox"}}
	at := time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)
	j := New(cj, at, time.UTC)
	j.UID, j.ResourceVersion = "job-uid", "42"
	j.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "kube-controller-manager"}}
	j.Status.StartTime = &metav1.Time{Time: at}
	j.Status.CompletionTime = &metav1.Time{Time: at.Add(time.Minute)}
	j.Status.Conditions = []batchv1.JobCondition{
		{Type: batchv1.JobSuccessCriteriaMet, Status: corev1.ConditionTrue, Message: "long"},
		{Type: batchv1.JobComplete, Status: corev1.ConditionTrue, Message: "long"},
	}

	out, err := StripForCache(j)
	if err != nil {
		t.Fatal(err)
	}
	s := out.(*batchv1.Job)
	if s.Name != j.Name || s.UID != j.UID || s.ResourceVersion != "42" || !IsControlledBy(s, "cj-uid") {
		t.Errorf("identity or owner lost: %+v", s.ObjectMeta)
	}
	if got, ok := ScheduledAt(s); !ok || !got.Equal(at) {
		t.Errorf("scheduled-at lost: %v", s.Annotations)
	}
	if Finished(s) != batchv1.JobComplete || !s.Status.StartTime.Equal(j.Status.StartTime) || !s.Status.CompletionTime.Equal(j.Status.CompletionTime) {
		t.Errorf("status the sync reads lost: %+v", s.Status)
	}
	if len(s.Spec.Template.Spec.Containers) != 0 || s.ManagedFields != nil || s.Annotations["big"] != "" || len(s.Status.Conditions) != 1 {
		t.Errorf("kept what the sync never reads: %+v", s)
	}

	foreign := j.DeepCopy()
	foreign.OwnerReferences = nil
	out, _ = StripForCache(foreign)
	if s := out.(*batchv1.Job); s.Name != j.Name || s.Annotations != nil || s.Status.StartTime != nil {
		t.Errorf("a foreign Job keeps more than its identity: %+v", s)
	}
	if out, _ := StripForCache("tombstone"); out != "tombstone" {
		t.Error("non-Jobs must pass through")
	}
}
