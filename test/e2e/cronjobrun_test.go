//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"

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
	// kubectl get cjr: the CronJob, the Job, the outcome, the age.
	out, err := kubectl("get", "cjr", "-n", ns, "by-hand")
	if err != nil {
		t.Fatalf("kubectl get cjr: %v\n%s", err, out)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 2 || !slices.Equal(strings.Fields(lines[0]), []string{"NAME", "CRONJOB", "JOB", "OUTCOME", "AGE"}) ||
		!slices.Equal(strings.Fields(lines[1])[:4], []string{"by-hand", "report", name, "Succeeded"}) {
		t.Errorf("kubectl get cjr printed\n%s", out)
	}
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

// What the schema can say about a CronJobRun and spec.runOverrides it says
// at apply: bad env names, too many or too long values, a missing or too
// long CronJob name, a TTL out of bounds, the same name twice.
func TestCELRefusesABadCronJobRunOrRunOverrides(t *testing.T) {
	ns := newNamespace(t)
	ctx := context.Background()
	dry := metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}
	vars := func(n int) []cronv1.RunEnvVar {
		var out []cronv1.RunEnvVar
		for i := range n {
			out = append(out, cronv1.RunEnvVar{Name: fmt.Sprintf("V%d", i), Value: "x"})
		}
		return out
	}
	for _, tc := range []struct {
		name  string
		spec  cronv1.CronJobRunSpec
		valid bool
	}{
		{"valid, at the bounds", cronv1.CronJobRunSpec{CronJobName: strings.Repeat("c", 52), Env: append(vars(31), cronv1.RunEnvVar{Name: "LONG", Value: strings.Repeat("v", 4096)}),
			TTLSecondsAfterFinished: ptr.To[int32](2592000)}, true},
		{"no CronJob name", cronv1.CronJobRunSpec{}, false},
		{"a CronJob name of 53", cronv1.CronJobRunSpec{CronJobName: strings.Repeat("c", 53)}, false},
		{"33 env vars", cronv1.CronJobRunSpec{CronJobName: "c", Env: vars(33)}, false},
		{"an env name starting with a digit", cronv1.CronJobRunSpec{CronJobName: "c", Env: []cronv1.RunEnvVar{{Name: "1X"}}}, false},
		{"an env name with a space", cronv1.CronJobRunSpec{CronJobName: "c", Env: []cronv1.RunEnvVar{{Name: "A B"}}}, false},
		{"a value of 4097", cronv1.CronJobRunSpec{CronJobName: "c", Env: []cronv1.RunEnvVar{{Name: "A", Value: strings.Repeat("v", 4097)}}}, false},
		{"one name twice", cronv1.CronJobRunSpec{CronJobName: "c", Env: []cronv1.RunEnvVar{{Name: "A"}, {Name: "A"}}}, false},
		{"a TTL below 0", cronv1.CronJobRunSpec{CronJobName: "c", TTLSecondsAfterFinished: ptr.To[int32](-1)}, false},
		{"a TTL above 30 days", cronv1.CronJobRunSpec{CronJobName: "c", TTLSecondsAfterFinished: ptr.To[int32](2592001)}, false},
	} {
		_, err := createRun(ctx, ns, tc.spec, dry)
		if tc.valid && err != nil || !tc.valid && !apierrors.IsInvalid(err) {
			t.Errorf("%s: %v, want valid: %v", tc.name, err, tc.valid)
		}
	}
	names := func(n int) []string {
		var out []string
		for i := range n {
			out = append(out, fmt.Sprintf("V%d", i))
		}
		return out
	}
	for _, tc := range []struct {
		name    string
		allowed []string
		valid   bool
	}{
		{"32 names", names(32), true},
		{"33 names", names(33), false},
		{"a bad name", []string{"GOOD", "NOT GOOD"}, false},
		{"a name of 129", []string{strings.Repeat("N", 129)}, false},
	} {
		cj := cronJob(ns, "overrides", "0 0 1 1 *", func(cj *cronv1.CronJob) { cj.Spec.RunOverrides = &cronv1.RunOverrides{AllowedEnv: tc.allowed} })
		_, err := env.cron.BatchV1().CronJobs(ns).Create(ctx, cj, dry)
		if tc.valid && err != nil || !tc.valid && !apierrors.IsInvalid(err) {
			t.Errorf("allowedEnv %s: %v, want valid: %v", tc.name, err, tc.valid)
		}
	}
}

// createRun creates a CronJobRun of spec in ns.
func createRun(ctx context.Context, ns string, spec cronv1.CronJobRunSpec, opts metav1.CreateOptions) (*cronv1.CronJobRun, error) {
	return env.cron.BatchV1().CronJobRuns(ns).Create(ctx, &cronv1.CronJobRun{ObjectMeta: metav1.ObjectMeta{Name: "r", Namespace: ns}, Spec: spec}, opts)
}

// Sharded: three replicas share the shards; a CronJobRun of each of twelve
// CronJobs starts one Job, which the CronJobRun follows to Succeeded. Every
// replica sees every CronJobRun, but only the one holding its CronJob's
// shard acts on it: no status of any CronJobRun ever says the CronJob is
// not found or the run's outcome Unknown, and none is deleted.
func TestShardedReplicasStartEachCronJobRunOnce(t *testing.T) {
	ns := newNamespace(t)
	ctx := context.Background()
	for range 3 {
		startController(t, "-shards="+strconv.Itoa(testShards), "-leader-elect-namespace="+ns, "-leader-elect-id=runs",
			"-leader-elect-lease-duration=6s", "-leader-elect-renew-deadline=4s", "-leader-elect-retry-period=1s")
	}
	balancedAmong(t, ns, 3)
	// Once a year: no scheduled run during the test; no pods to run.
	cronJobs := fleetOf(t, ns, 12, "0 0 1 1 *", func(cj *cronv1.CronJob) {
		cj.Spec.JobTemplate.Spec.Completions = ptr.To[int32](0)
	})
	w, err := env.cron.BatchV1().CronJobRuns(ns).Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	for _, cj := range cronJobs {
		run := &cronv1.CronJobRun{ObjectMeta: metav1.ObjectMeta{Name: "run-" + cj.Name, Namespace: ns}, Spec: cronv1.CronJobRunSpec{CronJobName: cj.Name}}
		if _, err := env.cron.BatchV1().CronJobRuns(ns).Create(ctx, run, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	succeeded := map[string]bool{}
	deadline := time.After(2 * time.Minute)
	for len(succeeded) < len(cronJobs) {
		select {
		case <-deadline:
			t.Fatalf("%d of %d CronJobRuns succeeded within 2 minutes", len(succeeded), len(cronJobs))
		case ev, ok := <-w.ResultChan():
			if !ok {
				t.Fatal("the CronJobRun watch ended")
			}
			r, isRun := ev.Object.(*cronv1.CronJobRun)
			if !isRun {
				continue
			}
			if ev.Type == watch.Deleted {
				t.Errorf("CronJobRun %s deleted", r.Name)
			}
			c := meta.FindStatusCondition(r.Status.Conditions, cronv1.ConditionRunStarted)
			if r.Status.Outcome == cronv1.OutcomeUnknown || c != nil && c.Reason == cronv1.ReasonRunCronJobNotFound {
				t.Errorf("CronJobRun %s of %s: outcome %q, condition %+v: a replica not holding the CronJob's shard acted on it",
					r.Name, r.Spec.CronJobName, r.Status.Outcome, c)
			}
			if r.Status.Outcome == cronv1.OutcomeSucceeded && r.Status.JobName == job.RequestName(r.Spec.CronJobName, r.UID) {
				succeeded[r.Name] = true
			}
		}
	}
	if jobs := listJobs(t, ns); len(jobs) != len(cronJobs) {
		t.Errorf("%d Jobs, want one per CronJobRun (%d)", len(jobs), len(cronJobs))
	}
}
