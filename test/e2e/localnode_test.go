//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/cronjob-controller/cronjob-controller/pkg/localcluster"
)

// The embedded node (kwok, with pkg/localcluster/stages) ends a Job's pod
// as its spec says a real node would for what our examples and users need:
// an `exit N` ending the command line fails it with that code, `sleep N`
// takes N seconds, so backoffLimit and activeDeadlineSeconds play out; any
// other command succeeds. Nothing runs in a container there, and `kubectl
// logs` says so in one line.
func TestEmbeddedNodeEndsPodsAsTheirSpecSays(t *testing.T) {
	ns := newNamespace(t)
	ctx := context.Background()
	type want struct {
		condition batchv1.JobConditionType
		reason    string
		exitCode  int32 // of the last pod
		pods      int
		atLeast   time.Duration // from the Job's creation to its end
	}
	cases := map[string]struct {
		command []string
		tweak   func(*batchv1.JobSpec)
		want    want
	}{
		"succeeds":       {[]string{"/bin/sh", "-c", "date"}, nil, want{batchv1.JobComplete, "", 0, 1, 0}},
		"exit-3":         {[]string{"/bin/sh", "-c", "date; exit 3"}, nil, want{batchv1.JobFailed, "BackoffLimitExceeded", 3, 1, 0}},
		"false":          {[]string{"false"}, nil, want{batchv1.JobFailed, "BackoffLimitExceeded", 1, 1, 0}},
		"sleeps-then-ok": {[]string{"/bin/sh", "-c", "sleep 4; echo done"}, nil, want{batchv1.JobComplete, "", 0, 1, 4 * time.Second}},
		"retries": {[]string{"/bin/sh", "-c", "exit 1"}, func(s *batchv1.JobSpec) { s.BackoffLimit = ptr.To[int32](2) },
			want{batchv1.JobFailed, "BackoffLimitExceeded", 1, 3, 0}},
		"deadline": {[]string{"/bin/sh", "-c", "sleep 600"}, func(s *batchv1.JobSpec) { s.ActiveDeadlineSeconds = ptr.To[int64](3) },
			want{batchv1.JobFailed, "DeadlineExceeded", -1, 1, 3 * time.Second}},
	}
	for name, tc := range cases {
		spec := batchv1.JobSpec{
			BackoffLimit: ptr.To[int32](0),
			Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				RestartPolicy: corev1.RestartPolicyNever,
				Containers:    []corev1.Container{{Name: "c", Image: "busybox", Command: tc.command}},
			}},
		}
		if tc.tweak != nil {
			tc.tweak(&spec)
		}
		if _, err := env.kube.BatchV1().Jobs(ns).Create(ctx, &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: spec}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for name, tc := range cases {
		var ended *batchv1.JobCondition
		var j *batchv1.Job
		eventually(t, 90*time.Second, name+" ended", func() (bool, string) {
			var err error
			if j, err = env.kube.BatchV1().Jobs(ns).Get(ctx, name, metav1.GetOptions{}); err != nil {
				return false, err.Error()
			}
			for i, c := range j.Status.Conditions {
				if (c.Type == batchv1.JobComplete || c.Type == batchv1.JobFailed) && c.Status == corev1.ConditionTrue {
					ended = &j.Status.Conditions[i]
					return true, ""
				}
			}
			return false, fmt.Sprintf("%+v", j.Status)
		})
		if ended.Type != tc.want.condition || (tc.want.reason != "" && ended.Reason != tc.want.reason) {
			t.Errorf("%s: ended %s (%s), want %s (%s)", name, ended.Type, ended.Reason, tc.want.condition, tc.want.reason)
		}
		if took := ended.LastTransitionTime.Sub(j.CreationTimestamp.Time); took < tc.want.atLeast-time.Second {
			t.Errorf("%s: ended %v after its creation, want at least %v", name, took, tc.want.atLeast)
		}
		if got := int(j.Status.Failed + j.Status.Succeeded); got != tc.want.pods && tc.want.exitCode >= 0 {
			t.Errorf("%s: %d pods ended, want %d", name, got, tc.want.pods)
		}
		if tc.want.exitCode < 0 {
			continue // its pod was deleted, not ended
		}
		// kubectl says first which pod of several it shows.
		if out, err := kubectl("logs", "-n", ns, "job/"+name); err != nil || !strings.HasSuffix(strings.TrimSpace(out), "\n"+localcluster.PodLog) && strings.TrimSpace(out) != localcluster.PodLog {
			t.Errorf("%s: kubectl logs: %v\n%s", name, err, out)
		}
		pods, err := env.kube.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "batch.kubernetes.io/job-name=" + name})
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range pods.Items {
			for _, s := range p.Status.ContainerStatuses {
				if s.State.Terminated == nil || s.State.Terminated.ExitCode != tc.want.exitCode {
					t.Errorf("%s: pod %s container %s: %+v, want exit code %d", name, p.Name, s.Name, s.State, tc.want.exitCode)
				}
			}
		}
	}
}
