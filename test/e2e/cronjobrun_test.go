//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/clientcmd"

	cronv1 "github.com/cronjob-controller/cronjob-controller/pkg/apis/batch/v1"
	clientset "github.com/cronjob-controller/cronjob-controller/pkg/generated/clientset/versioned"
	"github.com/cronjob-controller/cronjob-controller/pkg/job"
)

// A user bound to artifacts/examples/cronjobrun-starter-role.yaml (create
// and get on cronjobruns, nothing else) starts a run of a CronJob, with an
// env var the CronJob allows, and follows it to its end; that user cannot
// change the CronJob (no update, no patch: not even its run-now
// annotation), nor delete the CronJobRun. A CronJobRun setting an env var
// the CronJob does not allow is accepted by the API server and refused by
// the controller, which starts nothing; and a CronJobRun's spec cannot be
// changed.
func TestAUserWhoMayOnlyCreateCronJobRunsStartsARunButCannotChangeTheCronJob(t *testing.T) {
	ns := newNamespace(t)
	ctx := context.Background()
	startController(t)
	if out, err := kubectl("apply", "-n", ns, "-f", filepath.Join(env.root, "artifacts", "examples", "cronjobrun-starter-role.yaml")); err != nil {
		t.Fatalf("applying the example Role: %v\n%s", err, out)
	}
	user := fmt.Sprintf("run-starter-%d", time.Now().UnixNano()%100000)
	rb := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "run-starter", Namespace: ns},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "cronjobrun-starter"},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: user}},
	}
	if _, err := env.kube.RbacV1().RoleBindings(ns).Create(ctx, rb, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// Once a year: no scheduled run during the test.
	createCronJob(t, cronJob(ns, "report", "0 0 1 1 *", func(cj *cronv1.CronJob) {
		cj.Spec.RunOverrides = &cronv1.RunOverrides{AllowedEnv: []string{"GREETING"}}
	}))

	cfg, err := clientcmd.BuildConfigFromFlags("", env.kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Impersonate.UserName = user
	as, err := clientset.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}

	// The user may not change the CronJob, nor ask for a run the old way.
	if _, err := as.BatchV1().CronJobs(ns).Patch(ctx, "report", types.MergePatchType,
		[]byte(`{"metadata":{"annotations":{"`+cronv1.RunNowAnnotation+`":"now"}}}`), metav1.PatchOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("the user patching the CronJob: %v, want Forbidden", err)
	}
	cj := getCronJob(t, ns, "report")
	cj.Spec.JobTemplate.Spec.Template.Spec.Containers[0].Image = "evil"
	if _, err := as.BatchV1().CronJobs(ns).Update(ctx, cj, metav1.UpdateOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("the user updating the CronJob: %v, want Forbidden", err)
	}

	// But may start a run, with an env var the CronJob allows.
	run, err := as.BatchV1().CronJobRuns(ns).Create(ctx, &cronv1.CronJobRun{
		ObjectMeta: metav1.ObjectMeta{Name: "by-hand", Namespace: ns},
		Spec:       cronv1.CronJobRunSpec{CronJobName: "report", Env: []cronv1.RunEnvVar{{Name: "GREETING", Value: "hello"}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("the user creating a CronJobRun: %v", err)
	}
	name := job.RequestName("report", run.UID)
	eventually(t, time.Minute, "the CronJobRun followed its Job to the end", func() (bool, string) {
		r, err := as.BatchV1().CronJobRuns(ns).Get(ctx, "by-hand", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		return r.Status.JobName == name && r.Status.Outcome == cronv1.OutcomeSucceeded && r.Status.CompletionTime != nil, fmt.Sprintf("%+v", r.Status)
	})
	jobs := listJobs(t, ns)
	if len(jobs) != 1 || jobs[0].Name != name {
		t.Fatalf("Jobs %v, want one, %s", jobs, name)
	}
	if env := jobs[0].Spec.Template.Spec.Containers[0].Env; !slices.Contains(env, corev1.EnvVar{Name: "GREETING", Value: "hello"}) {
		t.Errorf("the Job's env %v, want GREETING=hello", env)
	}
	if img := jobs[0].Spec.Template.Spec.Containers[0].Image; img != "busybox" {
		t.Errorf("the Job's image %q, want the template's", img)
	}
	eventually(t, 30*time.Second, "the run in the CronJob's history as Requested", func() (bool, string) {
		st := getCronJob(t, ns, "report").Status
		return slices.ContainsFunc(st.RecentRuns, func(r cronv1.RunRecord) bool {
			return r.JobName == name && r.Trigger == cronv1.TriggerRequested && r.Outcome == cronv1.OutcomeSucceeded
		}), fmt.Sprintf("%+v", st.RecentRuns)
	})
	if err := as.BatchV1().CronJobRuns(ns).Delete(ctx, "by-hand", metav1.DeleteOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("the user deleting the CronJobRun: %v, want Forbidden", err)
	}

	// An env var the CronJob does not allow: accepted at apply (the API
	// server cannot look at the CronJob), refused by the controller.
	if _, err := as.BatchV1().CronJobRuns(ns).Create(ctx, &cronv1.CronJobRun{
		ObjectMeta: metav1.ObjectMeta{Name: "not-allowed", Namespace: ns},
		Spec:       cronv1.CronJobRunSpec{CronJobName: "report", Env: []cronv1.RunEnvVar{{Name: "LD_PRELOAD", Value: "/tmp/x.so"}}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, time.Minute, "the CronJobRun refused", func() (bool, string) {
		r, err := as.BatchV1().CronJobRuns(ns).Get(ctx, "not-allowed", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		c := meta.FindStatusCondition(r.Status.Conditions, cronv1.ConditionRunStarted)
		return c != nil && c.Status == metav1.ConditionFalse && c.Reason == cronv1.ReasonRunOverrideNotAllowed, fmt.Sprintf("%+v", r.Status)
	})
	if jobs := listJobs(t, ns); len(jobs) != 1 {
		t.Errorf("Jobs %d, want still one", len(jobs))
	}
	eventually(t, 30*time.Second, "a Warning Event on the refused CronJobRun", func() (bool, string) {
		list, err := env.kube.CoreV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=not-allowed,involvedObject.kind=CronJobRun"})
		if err != nil {
			return false, err.Error()
		}
		return slices.ContainsFunc(list.Items, func(e corev1.Event) bool {
			return e.Type == corev1.EventTypeWarning && e.Reason == cronv1.ReasonRunOverrideNotAllowed
		}), fmt.Sprintf("%d events", len(list.Items))
	})

	// A CronJobRun cannot be changed, not even by an admin.
	r, err := env.cron.BatchV1().CronJobRuns(ns).Get(ctx, "by-hand", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	r.Spec.Env[0].Value = "changed"
	if _, err := env.cron.BatchV1().CronJobRuns(ns).Update(ctx, r, metav1.UpdateOptions{}); !apierrors.IsInvalid(err) {
		t.Errorf("changing a CronJobRun's spec: %v, want Invalid", err)
	}
}
