package job

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	cronv1 "github.com/cronjob-controller/cronjob-controller/pkg/apis/batch/v1"
)

func templated() *cronv1.CronJob {
	cj := &cronv1.CronJob{ObjectMeta: metav1.ObjectMeta{Name: "cj", Namespace: "ns", UID: "uid"}}
	spec := &cj.Spec.JobTemplate.Spec.Template
	spec.Annotations = map[string]string{"mine": "kept"}
	spec.Spec.InitContainers = []corev1.Container{{Name: "init", Env: []corev1.EnvVar{{Name: "A", Value: "a"}}}}
	spec.Spec.Containers = []corev1.Container{
		{Name: "plain"},
		{Name: "own", Env: []corev1.EnvVar{{Name: cronv1.ScheduledTimeEnv, Value: "mine"}}},
	}
	return cj
}

// fromDownwardAPI says whether e reads the pod's scheduled-at annotation.
func fromDownwardAPI(e corev1.EnvVar) bool {
	return e.Name == cronv1.ScheduledTimeEnv && e.ValueFrom != nil && e.ValueFrom.FieldRef != nil &&
		e.ValueFrom.FieldRef.FieldPath == "metadata.annotations['batch.tutorial.kubebuilder.io/scheduled-at']"
}

func TestScheduledTimeInsideThePod(t *testing.T) {
	cj := templated()
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 5, 1, 8, 0, 0, 0, time.UTC)
	j := New(cj, at, berlin)
	pod := j.Spec.Template
	if got := pod.Annotations[cronv1.ScheduledAtAnnotation]; got != "2026-05-01T10:00:00+02:00" {
		t.Errorf("pod annotation %q, want RFC 3339 in the CronJob's zone", got)
	}
	if pod.Annotations["mine"] != "kept" {
		t.Error("the template's own pod annotation was lost")
	}
	if got := j.Annotations[cronv1.ScheduledAtAnnotation]; got != pod.Annotations[cronv1.ScheduledAtAnnotation] {
		t.Errorf("Job annotation %q differs from the pod's", got)
	}
	init := pod.Spec.InitContainers[0].Env
	if len(init) != 2 || !fromDownwardAPI(init[0]) || init[1].Name != "A" {
		t.Errorf("init container env %+v: want the variable first, then its own", init)
	}
	if env := pod.Spec.Containers[0].Env; len(env) != 1 || !fromDownwardAPI(env[0]) {
		t.Errorf("container env %+v", env)
	}
	if env := pod.Spec.Containers[1].Env; len(env) != 1 || env[0].Value != "mine" {
		t.Errorf("a container defining the variable keeps its own: %+v", env)
	}
	// The CronJob's template is the user's: untouched.
	if want := templated(); len(cj.Spec.JobTemplate.Spec.Template.Spec.Containers[0].Env) != 0 ||
		len(cj.Spec.JobTemplate.Spec.Template.Annotations) != len(want.Spec.JobTemplate.Spec.Template.Annotations) ||
		len(cj.Spec.JobTemplate.Spec.Template.Spec.InitContainers[0].Env) != 1 {
		t.Error("New changed the CronJob's template")
	}
}

func TestUTCWhenNoZone(t *testing.T) {
	j := New(templated(), time.Date(2026, 5, 1, 8, 0, 0, 0, time.UTC), time.UTC)
	if got := j.Spec.Template.Annotations[cronv1.ScheduledAtAnnotation]; got != "2026-05-01T08:00:00Z" {
		t.Errorf("%q", got)
	}
}

// A run started by hand has no scheduled time: no annotation, no variable.
func TestManualJobHasNoScheduledTime(t *testing.T) {
	j := NewManual(templated(), "", "now", "now", 1)
	if _, ok := j.Spec.Template.Annotations[cronv1.ScheduledAtAnnotation]; ok {
		t.Error("a manual Job's pod has a scheduled time")
	}
	if env := j.Spec.Template.Spec.Containers[0].Env; len(env) != 0 {
		t.Errorf("a manual Job's container has %+v", env)
	}
}
