//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"
	sigsyaml "sigs.k8s.io/yaml"

	cronv1 "github.com/cronjob-controller/cronjob-controller/pkg/apis/batch/v1"
)

const deployNamespace = "cronjob-controller-system"

// The shipped kustomization renders the CRDs, the namespace, the RBAC (the
// controller's and its users' aggregated roles), the Deployment, its metrics
// Service and PodDisruptionBudget, with the image its images entry names; kubectl apply -k
// installs them; the Deployment's pod passes the namespace's restricted pod
// security; and a controller holding only the shipped roles does its whole
// job and nothing more.
func TestDeployManifestsAndLeastPrivilege(t *testing.T) {
	deploy := filepath.Join(env.root, "artifacts", "deploy")
	rendered, err := renderKustomization(deploy)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, o := range rendered {
		got = append(got, o.GetKind()+" "+o.GetNamespace()+"/"+o.GetName())
	}
	sort.Strings(got)
	want := []string{
		"ClusterRole /cronjob-controller",
		"ClusterRole /cronjob-controller-edit",
		"ClusterRole /cronjob-controller-view",
		"ClusterRoleBinding /cronjob-controller",
		"CustomResourceDefinition /backfills.batch.tutorial.kubebuilder.io",
		"CustomResourceDefinition /calendars.batch.tutorial.kubebuilder.io",
		"CustomResourceDefinition /cronjobruns.batch.tutorial.kubebuilder.io",
		"CustomResourceDefinition /cronjobs.batch.tutorial.kubebuilder.io",
		"Deployment " + deployNamespace + "/cronjob-controller",
		"Namespace /" + deployNamespace,
		"PodDisruptionBudget " + deployNamespace + "/cronjob-controller",
		"Role " + deployNamespace + "/cronjob-controller-leader-election",
		"RoleBinding " + deployNamespace + "/cronjob-controller-leader-election",
		"Service " + deployNamespace + "/cronjob-controller-metrics",
		"ServiceAccount " + deployNamespace + "/cronjob-controller",
	}
	if !slices.Equal(got, want) {
		t.Errorf("kubectl kustomize artifacts/deploy renders\n  %q\nwant\n  %q", got, want)
	}
	checkImageSetInOnePlace(t)

	if out, err := kubectl("apply", "-k", deploy); err != nil {
		t.Fatalf("kubectl apply -k artifacts/deploy: %v\n%s", err, out)
	}
	// kube-controller-manager runs no Deployment controller here: the
	// Deployment stays without pods, and goes when the test ends.
	t.Cleanup(func() {
		_ = env.kube.AppsV1().Deployments(deployNamespace).Delete(context.Background(), "cronjob-controller", metav1.DeleteOptions{})
	})
	checkPodSecurity(t)

	sa := "system:serviceaccount:" + deployNamespace + ":cronjob-controller"
	for _, check := range []struct {
		verb, resource, namespace, want string
		sub                             []string
	}{
		{"create", "jobs.batch", "default", "yes", nil},
		{"delete", "jobs.batch", "default", "yes", nil},
		{"patch", "jobs.batch", "default", "yes", nil},
		{"update", "jobs.batch", "default", "no", nil},
		{"update", "cronjobs.batch.tutorial.kubebuilder.io", "default", "yes", []string{"--subresource=status"}},
		{"update", "cronjobs.batch.tutorial.kubebuilder.io", "default", "yes", []string{"--subresource=finalizers"}},
		{"update", "cronjobs.batch.tutorial.kubebuilder.io", "default", "no", nil},
		{"update", "backfills.batch.tutorial.kubebuilder.io", "default", "yes", nil},
		{"update", "backfills.batch.tutorial.kubebuilder.io", "default", "yes", []string{"--subresource=status"}},
		{"update", "backfills.batch.tutorial.kubebuilder.io", "default", "yes", []string{"--subresource=finalizers"}},
		{"delete", "backfills.batch.tutorial.kubebuilder.io", "default", "no", nil},
		{"watch", "cronjobruns.batch.tutorial.kubebuilder.io", "default", "yes", nil},
		{"get", "cronjobruns.batch.tutorial.kubebuilder.io", "default", "yes", nil},
		{"update", "cronjobruns.batch.tutorial.kubebuilder.io", "default", "yes", []string{"--subresource=status"}},
		{"delete", "cronjobruns.batch.tutorial.kubebuilder.io", "default", "yes", nil},
		{"update", "cronjobruns.batch.tutorial.kubebuilder.io", "default", "no", nil},
		{"create", "cronjobruns.batch.tutorial.kubebuilder.io", "default", "no", nil},
		{"watch", "calendars.batch.tutorial.kubebuilder.io", "", "yes", nil},
		{"update", "calendars.batch.tutorial.kubebuilder.io", "", "no", nil},
		{"delete", "pods", "default", "no", nil},
		{"get", "secrets", "default", "no", nil},
		{"update", "leases.coordination.k8s.io", deployNamespace, "yes", nil},
		{"update", "leases.coordination.k8s.io", "kube-system", "no", nil},
	} {
		args := []string{"auth", "can-i", check.verb, check.resource, "--as", sa}
		if check.namespace != "" { // "": cluster-scoped
			args = append(args, "-n", check.namespace)
		}
		out, _ := kubectl(append(args, check.sub...)...)
		// The answer is the last line; a warning may come before it.
		lines := strings.Split(strings.TrimSpace(out), "\n")
		if got := strings.TrimSpace(lines[len(lines)-1]); got != check.want {
			t.Errorf("can the controller %s %s in %s? %q, want %q", check.verb, check.resource, check.namespace, got, check.want)
		}
	}

	kubeconfig := serviceAccountKubeconfig(t, deployNamespace, "cronjob-controller")
	saConfig, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	saClient := kubernetes.NewForConfigOrDie(saConfig)
	if _, err := saClient.CoreV1().Secrets("default").List(context.Background(), metav1.ListOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("reading Secrets with the controller's token: %v, want Forbidden", err)
	}
	if err := saClient.CoreV1().Pods("default").DeleteCollection(context.Background(), metav1.DeleteOptions{}, metav1.ListOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("deleting Pods with the controller's token: %v, want Forbidden", err)
	}
	ns := newNamespace(t)
	startControllerWith(t, kubeconfig, "-leader-elect", "-leader-elect-namespace="+deployNamespace,
		"-leader-elect-id=least-privilege-test")
	cj := createCronJob(t, cronJob(ns, "rbac", "@every 2s", func(cj *cronv1.CronJob) {
		cj.Spec.SuccessfulJobsHistoryLimit = ptr.To[int32](1)
	}))
	eventually(t, 60*time.Second, "Jobs created, pruned, status written", func() (bool, string) {
		cur := getCronJob(t, ns, cj.Name)
		pruned, _ := hasEvent(t, ns, cj.Name, corev1.EventTypeNormal, "SuccessfulDelete")
		return pruned && cur.Status.LastSuccessfulTime != nil,
			fmt.Sprintf("pruned %v, status %+v", pruned, cur.Status)
	})
	// A CronJobRun: its Job started, its status written, and, finished, it
	// is deleted at once by its TTL of 0.
	if _, err := env.cron.BatchV1().CronJobRuns(ns).Create(context.Background(), &cronv1.CronJobRun{
		ObjectMeta: metav1.ObjectMeta{Name: "by-hand", Namespace: ns},
		Spec:       cronv1.CronJobRunSpec{CronJobName: cj.Name, TTLSecondsAfterFinished: ptr.To[int32](0)},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 60*time.Second, "the CronJobRun run and gone after its TTL", func() (bool, string) {
		r, err := env.cron.BatchV1().CronJobRuns(ns).Get(context.Background(), "by-hand", metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return true, ""
		}
		return false, fmt.Sprintf("%+v %v", r.Status, err)
	})
	if ok, state := hasEvent(t, ns, cj.Name, corev1.EventTypeNormal, "SuccessfulCreate"); !ok {
		t.Errorf("no Job created: %s", state)
	}
	lease, err := env.kube.CoordinationV1().Leases(deployNamespace).Get(context.Background(), "least-privilege-test", metav1.GetOptions{})
	if err != nil || ptr.Deref(lease.Spec.HolderIdentity, "") == "" {
		t.Errorf("the Lease was not taken: %v %+v", err, lease)
	}
}

// renderKustomization is kubectl kustomize of dir, as objects.
func renderKustomization(dir string) ([]*unstructured.Unstructured, error) {
	cmd := exec.Command("kubectl", "kustomize", dir)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("kubectl kustomize %s: %v\n%s", dir, err, stderr.String())
	}
	var objs []*unstructured.Unstructured
	dec := yaml.NewYAMLOrJSONDecoder(&stdout, 4096)
	for {
		o := &unstructured.Unstructured{}
		if err := dec.Decode(&o.Object); errors.Is(err, io.EOF) {
			return objs, nil
		} else if err != nil {
			return nil, fmt.Errorf("kubectl kustomize %s: %w", dir, err)
		}
		if len(o.Object) > 0 {
			objs = append(objs, o)
		}
	}
}

// checkImageSetInOnePlace: the kustomization's images entry alone decides
// the Deployment's image. A copy of artifacts/ whose entry names another
// image renders every container with that image.
func checkImageSetInOnePlace(t *testing.T) {
	t.Helper()
	copied := filepath.Join(t.TempDir(), "artifacts")
	if err := os.CopyFS(copied, os.DirFS(filepath.Join(env.root, "artifacts"))); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(copied, "deploy", "kustomization.yaml")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var k map[string]any
	if err := sigsyaml.Unmarshal(data, &k); err != nil {
		t.Fatal(err)
	}
	images, _ := k["images"].([]any)
	if len(images) != 1 {
		t.Fatalf("the kustomization's images: %v, want one entry", k["images"])
	}
	entry, _ := images[0].(map[string]any)
	shipped := fmt.Sprintf("%v:%v", entry["newName"], entry["newTag"])
	const other = "registry.example.com/team/cronjob-controller:v9.9.9"
	entry["newName"], entry["newTag"] = "registry.example.com/team/cronjob-controller", "v9.9.9"
	edited, err := sigsyaml.Marshal(k)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, edited, 0o644); err != nil {
		t.Fatal(err)
	}
	for dir, image := range map[string]string{
		filepath.Join(env.root, "artifacts", "deploy"): shipped,
		filepath.Dir(path): other,
	} {
		objs, err := renderKustomization(dir)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, o := range objs {
			if o.GetKind() != "Deployment" {
				continue
			}
			containers, _, _ := unstructured.NestedSlice(o.Object, "spec", "template", "spec", "containers")
			for _, c := range containers {
				n++
				if got := c.(map[string]any)["image"]; got != image {
					t.Errorf("%s: container image %v, want %s", dir, got, image)
				}
			}
		}
		if n == 0 {
			t.Errorf("%s: no Deployment container", dir)
		}
	}
}

// checkPodSecurity: the Deployment's pod is admitted in its namespace,
// which enforces the restricted pod security standard, and the same pod
// keeping all its capabilities is not (so the admission is in force here).
func checkPodSecurity(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	dep, err := env.kube.AppsV1().Deployments(deployNamespace).Get(ctx, "cronjob-controller", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "cronjob-controller-", Labels: dep.Spec.Template.Labels},
		Spec:       dep.Spec.Template.Spec,
	}
	dryRun := metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}
	if _, err := env.kube.CoreV1().Pods(deployNamespace).Create(ctx, pod, dryRun); err != nil {
		t.Errorf("the Deployment's pod, dry run in %s: %v", deployNamespace, err)
	}
	capable := pod.DeepCopy()
	capable.Spec.Containers[0].SecurityContext.Capabilities = nil
	if _, err := env.kube.CoreV1().Pods(deployNamespace).Create(ctx, capable, dryRun); !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "restricted") {
		t.Errorf("the pod with its capabilities, dry run in %s: %v, want Forbidden by the restricted pod security", deployNamespace, err)
	}
}

// serviceAccountKubeconfig writes a kubeconfig holding a TokenRequest token
// of the ServiceAccount.
func serviceAccountKubeconfig(t *testing.T, namespace, name string) string {
	t.Helper()
	tr, err := env.kube.CoreV1().ServiceAccounts(namespace).CreateToken(context.Background(), name, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](3600)},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("TokenRequest: %v", err)
	}
	cfg, err := clientcmd.LoadFromFile(env.kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	for _, auth := range cfg.AuthInfos {
		auth.Token = tr.Status.Token
	}
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
	return path
}

// Two replicas, a burst of due CronJobs, the leader killed mid-burst: the
// standby takes over, no run gets two Jobs and none is lost.
func TestLeaderFailover(t *testing.T) {
	ns := newNamespace(t)
	electionArgs := []string{"-leader-elect", "-leader-elect-namespace=" + ns, "-leader-elect-id=failover",
		"-leader-elect-lease-duration=3s", "-leader-elect-renew-deadline=2s", "-leader-elect-retry-period=500ms"}
	a := startController(t, electionArgs...)
	leader := a
	eventually(t, 30*time.Second, "a leader", func() (bool, string) { return a.logged("Acquired the Lease"), "" })
	b := startController(t, electionArgs...)
	eventually(t, 30*time.Second, "the standby's caches", func() (bool, string) { return b.logged("Caches are synced") || b.logged("Waiting to acquire"), "" })

	const count = 30
	const interval = 5 * time.Second
	var cronJobs []*cronv1.CronJob
	for i := range count {
		cronJobs = append(cronJobs, createCronJob(t, cronJob(ns, fmt.Sprintf("burst-%02d", i), "@every 5s", func(cj *cronv1.CronJob) {
			cj.Spec.SuccessfulJobsHistoryLimit = ptr.To[int32](100)
		})))
	}
	eventually(t, 60*time.Second, "every CronJob's second run", func() (bool, string) {
		n := 0
		for _, cj := range cronJobs {
			if len(jobsOf(t, ns, cj)) >= 2 {
				n++
			}
		}
		return n == count, fmt.Sprintf("%d of %d", n, count)
	})

	leader.kill()
	killedAt := time.Now()
	eventually(t, 30*time.Second, "the standby to take over", func() (bool, string) { return b.logged("Acquired the Lease"), "" })
	takeover := time.Since(killedAt)
	t.Logf("standby took over %v after the leader was killed (lease duration 3s, retry period 500ms)", takeover.Round(10*time.Millisecond))

	eventually(t, 60*time.Second, "two runs after the takeover", func() (bool, string) {
		n := 0
		for _, cj := range cronJobs {
			times := scheduledTimes(t, jobsOf(t, ns, cj))
			if len(times) > 0 && times[len(times)-1].After(killedAt.Add(interval)) {
				n++
			}
		}
		return n == count, fmt.Sprintf("%d of %d", n, count)
	})
	for _, cj := range cronJobs {
		times := scheduledTimes(t, jobsOf(t, ns, cj))
		for i := 1; i < len(times); i++ {
			gap := times[i].Sub(times[i-1])
			switch {
			case gap == 0:
				t.Errorf("%s: two Jobs for the run of %v", cj.Name, times[i])
			case gap != interval:
				t.Errorf("%s: runs %v and %v are %v apart: a run was lost", cj.Name, times[i-1], times[i], gap)
			}
		}
	}
}

// /healthz, /readyz and /metrics answer, and the metrics tell what happened.
func TestMetricsAndHealthEndpoints(t *testing.T) {
	ns := newNamespace(t)
	metricsAddr, healthAddr := freeAddr(t), freeAddr(t)
	startController(t, "-metrics-bind-address="+metricsAddr, "-health-probe-bind-address="+healthAddr,
		"-leader-elect", "-leader-elect-namespace="+ns)
	eventually(t, 30*time.Second, "/readyz", func() (bool, string) {
		code, body := httpGet("http://" + healthAddr + "/readyz")
		return code == http.StatusOK, fmt.Sprint(code, body)
	})
	if code, _ := httpGet("http://" + healthAddr + "/healthz"); code != http.StatusOK {
		t.Errorf("/healthz answered %d", code)
	}
	cj := createCronJob(t, cronJob(ns, "metered", "@every 2s"))
	eventually(t, 30*time.Second, "a Job", func() (bool, string) { return len(jobsOf(t, ns, cj)) >= 1, "" })

	var body string
	eventually(t, 10*time.Second, "metrics of the Job", func() (bool, string) {
		_, body = httpGet("http://" + metricsAddr + "/metrics")
		return strings.Contains(body, "cronjob_controller_jobs_created_total "), body
	})
	for _, want := range []string{
		`cronjob_controller_job_creation_skew_seconds_bucket{le="0.05"}`,
		`cronjob_controller_sync_duration_seconds_count`,
		`workqueue_depth{name="cronjob"}`,
		`workqueue_adds_total{name="cronjob"}`,
		`workqueue_retries_total{name="cronjob"}`,
		`rest_client_requests_total{code="201",host="127.0.0.1:`,
		`rest_client_request_duration_seconds_bucket{host=`,
		`leader_election_master_status{name="cronjob-controller"} 1`,
		`process_resident_memory_bytes`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	if strings.Contains(body, "cronjob_controller_jobs_created_total 0\n") {
		t.Error("jobs_created_total is 0 after a Job was created")
	}
}

func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

func httpGet(url string) (int, string) {
	resp, err := (&http.Client{Timeout: 2 * time.Second}).Get(url)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// logged reports whether the controller's log holds s.
func (p *controllerProcess) logged(s string) bool {
	data, err := os.ReadFile(p.log)
	return err == nil && strings.Contains(string(data), s)
}
