//go:build e2e

// Package e2e drives the controller the way users do, against a real API
// server: the embedded local control plane (pkg/localcluster), real kubectl,
// and the controller binary run with -kubeconfig.
package e2e

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"

	cronv1 "github.com/cronjob-controller/cronjob-controller/pkg/apis/batch/v1"
	"github.com/cronjob-controller/cronjob-controller/pkg/control"
	clientset "github.com/cronjob-controller/cronjob-controller/pkg/generated/clientset/versioned"
	"github.com/cronjob-controller/cronjob-controller/pkg/job"
	"github.com/cronjob-controller/cronjob-controller/pkg/localcluster"
)

// env is what every test shares: one control plane for the whole run.
var env struct {
	root       string
	kubeconfig string
	controller string // path of the controller binary
	kube       kubernetes.Interface
	cron       clientset.Interface
	cluster    *localcluster.Cluster
}

func TestMain(m *testing.M) {
	code, err := setUp(m)
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		code = 1
	}
	os.Exit(code)
}

// apiserverFeatureGates are kube-apiserver's --feature-gates for the run.
var apiserverFeatureGates = flag.String("apiserver.feature-gates", "", "kube-apiserver --feature-gates for this run, e.g. ShardedListAndWatch=true")

func setUp(m *testing.M) (int, error) {
	flag.Parse()
	ctx := context.Background()
	wd, err := os.Getwd()
	if err != nil {
		return 1, err
	}
	env.root = filepath.Join(wd, "..", "..")
	bins, err := localcluster.EnsureBinaries(ctx, env.root, filepath.Join(env.root, "_output", "bin"), os.Stderr)
	if err != nil {
		return 1, err
	}
	tmp, err := os.MkdirTemp("", "cronjob-e2e-")
	if err != nil {
		return 1, err
	}
	defer os.RemoveAll(tmp)

	env.controller = filepath.Join(tmp, "cronjob-controller")
	build := exec.Command("go", "build", "-o", env.controller, ".")
	build.Dir = env.root
	if out, err := build.CombinedOutput(); err != nil {
		return 1, fmt.Errorf("building the controller: %v\n%s", err, out)
	}

	// kube-controller-manager's own CronJob controller runs too, as the
	// reference the differential test compares this controller with. It
	// acts only on batch/v1 CronJobs, which no other test creates; and it
	// looks at a Job only through the batch/v1 CronJob of the Job's
	// namespace named in its controller reference, so the Jobs of our
	// CronJobs never reach it. clusterrole-aggregation folds the aggregated
	// user roles of artifacts/deploy into admin, edit and view, as in any
	// cluster.
	cluster, err := localcluster.Start(ctx, localcluster.Config{
		Binaries:     bins,
		Dir:          filepath.Join(tmp, "cluster"),
		Controllers:  localcluster.DefaultControllers + ",cronjob,clusterrole-aggregation",
		FeatureGates: *apiserverFeatureGates,
	})
	if err != nil {
		return 1, err
	}
	defer cluster.Stop()
	env.cluster = cluster
	env.kubeconfig = cluster.Kubeconfig
	cfg, err := clientcmd.BuildConfigFromFlags("", env.kubeconfig)
	if err != nil {
		return 1, err
	}
	cfg.QPS, cfg.Burst = 100, 200
	if env.kube, err = kubernetes.NewForConfig(cfg); err != nil {
		return 1, err
	}
	if env.cron, err = clientset.NewForConfig(cfg); err != nil {
		return 1, err
	}
	if out, err := kubectl("apply", "-f", filepath.Join(env.root, "artifacts", "examples", "crd.yaml")); err != nil {
		return 1, fmt.Errorf("applying the CRD: %v\n%s", err, out)
	}
	// The CRD is usable once the API server serves it.
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		_, err := env.cron.BatchV1().CronJobs(metav1.NamespaceAll).List(ctx, metav1.ListOptions{Limit: 1})
		return err == nil, nil
	})
	if err != nil {
		return 1, fmt.Errorf("waiting for the CRD to be served: %w", err)
	}
	return m.Run(), nil
}

// kubectl runs the real kubectl against the test cluster.
func kubectl(args ...string) (string, error) {
	cmd := exec.Command("kubectl", append([]string{"--kubeconfig", env.kubeconfig}, args...)...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.String(), err
}

// kubectlApply pipes a manifest into `kubectl apply -f -` (client-side).
func kubectlApply(manifest string) (string, error) {
	cmd := exec.Command("kubectl", "--kubeconfig", env.kubeconfig, "apply", "-f", "-")
	cmd.Stdin = strings.NewReader(manifest)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.String(), err
}

// controllerProcess is one run of the controller binary.
type controllerProcess struct {
	cmd  *exec.Cmd
	done chan struct{}
	err  error
	log  string
}

// startController runs the controller binary with -kubeconfig until the test
// ends (or stop/kill is called).
func startController(t *testing.T, args ...string) *controllerProcess {
	t.Helper()
	return startControllerWith(t, env.kubeconfig, args...)
}

// startControllerWith runs the controller with the given kubeconfig.
func startControllerWith(t *testing.T, kubeconfig string, args ...string) *controllerProcess {
	t.Helper()
	return startControllerCmd(t, exec.Command(env.controller, controllerArgs(kubeconfig, args...)...))
}

// controllerArgs are the arguments the tests run the controller with.
func controllerArgs(kubeconfig string, args ...string) []string {
	// Several controllers may run at once: no fixed ports unless asked for.
	base := []string{"-kubeconfig", kubeconfig, "-v=2", "-metrics-bind-address=0", "-health-probe-bind-address=0"}
	return append(base, args...)
}

// startControllerCmd starts a command that runs the controller, as
// startControllerWith does.
func startControllerCmd(t *testing.T, cmd *exec.Cmd) *controllerProcess {
	t.Helper()
	logFile, err := os.CreateTemp(t.TempDir(), "controller-*.log")
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &controllerProcess{cmd: cmd, done: make(chan struct{}), log: logFile.Name()}
	go func() {
		p.err = cmd.Wait()
		logFile.Close()
		close(p.done)
	}()
	t.Cleanup(func() {
		p.stop(t)
		if t.Failed() {
			if data, err := os.ReadFile(p.log); err == nil {
				t.Logf("controller log (last 4 KiB):\n%s", tail(data, 4096))
			}
		}
	})
	return p
}

// stop sends SIGTERM and expects a clean exit.
func (p *controllerProcess) stop(t *testing.T) {
	t.Helper()
	select {
	case <-p.done:
		return
	default:
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
		if p.err != nil {
			t.Errorf("controller exited with %v after SIGTERM, want exit 0", p.err)
		}
	case <-time.After(30 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.done
		t.Error("controller did not stop within 30 s of SIGTERM")
	}
}

// kill ends the controller with SIGKILL, as a crash would.
func (p *controllerProcess) kill() {
	_ = p.cmd.Process.Kill()
	<-p.done
}

func tail(b []byte, n int) []byte {
	if len(b) > n {
		return b[len(b)-n:]
	}
	return b
}

// newNamespace makes a namespace for one test and deletes it afterwards.
func newNamespace(t *testing.T) string {
	t.Helper()
	return newNamespaceFor(t, "")
}

// newNamespaceFor is newNamespace for a test that needs several: role goes
// into the name, so a look at the cluster tells them apart.
func newNamespaceFor(t *testing.T, role string) string {
	t.Helper()
	name := strings.ToLower(strings.NewReplacer("/", "-", "_", "-", " ", "-").Replace(t.Name()))
	// 50 characters and a 6-character suffix stay within the 63 of a name.
	limit := 50
	if role != "" {
		limit -= len(role) + 1
	}
	if len(name) > limit {
		name = name[:limit]
	}
	if role != "" {
		name = strings.Trim(name, "-") + "-" + role
	}
	name = strings.Trim(name, "-") + fmt.Sprintf("-%d", time.Now().UnixNano()%100000)
	_, err := env.kube.CoreV1().Namespaces().Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = env.kube.CoreV1().Namespaces().Delete(context.Background(), name, metav1.DeleteOptions{})
		// The controller has stopped by now (its cleanup ran first): what
		// README's uninstall note says to do, or Jobs it left holding the
		// run-record finalizer keep the namespace terminating.
		releaseJobs(t, name)
		// The next test starts on a quiet cluster.
		err := wait.PollUntilContextTimeout(context.Background(), 250*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
			_, err := env.kube.CoreV1().Namespaces().Get(ctx, name, metav1.GetOptions{})
			return apierrors.IsNotFound(err), nil
		})
		if err != nil {
			t.Logf("namespace %s still terminating: %v", name, err)
		}
	})
	return name
}

// cronJob is a CronJob whose pods complete at once on the kwok node.
func cronJob(namespace, name, schedule string, opts ...func(*cronv1.CronJob)) *cronv1.CronJob {
	cj := &cronv1.CronJob{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
		Spec: cronv1.CronJobSpec{
			Schedule: schedule,
			JobTemplate: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{
				BackoffLimit: ptr.To[int32](0),
				Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
					RestartPolicy: corev1.RestartPolicyNever,
					Containers:    []corev1.Container{{Name: "hello", Image: "busybox", Args: []string{"/bin/sh", "-c", "date"}}},
				}},
			}},
		},
	}
	for _, o := range opts {
		o(cj)
	}
	return cj
}

// stuck makes the Jobs' pods unschedulable, so the Jobs stay active.
func stuck(cj *cronv1.CronJob) {
	cj.Spec.JobTemplate.Spec.Template.Spec.NodeSelector = map[string]string{"no-such-node": "true"}
}

func createCronJob(t *testing.T, cj *cronv1.CronJob) *cronv1.CronJob {
	t.Helper()
	created, err := env.cron.BatchV1().CronJobs(cj.Namespace).Create(context.Background(), cj, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return created
}

func getCronJob(t *testing.T, namespace, name string) *cronv1.CronJob {
	t.Helper()
	cj, err := env.cron.BatchV1().CronJobs(namespace).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return cj
}

func listJobs(t *testing.T, namespace string) []batchv1.Job {
	t.Helper()
	jobs, err := env.kube.BatchV1().Jobs(namespace).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return jobs.Items
}

// eventually polls cond until it holds or the bound passes, then fails with
// what cond last said.
func eventually(t *testing.T, timeout time.Duration, what string, cond func() (bool, string)) {
	t.Helper()
	var last string
	err := wait.PollUntilContextTimeout(context.Background(), 200*time.Millisecond, timeout, true, func(context.Context) (bool, error) {
		ok, state := cond()
		last = state
		return ok, nil
	})
	if err != nil {
		t.Fatalf("waiting %v for %s: %v; last seen: %s", timeout, what, err, last)
	}
}

// events returns the reasons of the Events about a CronJob.
func events(t *testing.T, namespace, name string) []corev1.Event {
	t.Helper()
	list, err := env.kube.CoreV1().Events(namespace).List(context.Background(), metav1.ListOptions{
		FieldSelector: "involvedObject.name=" + name + ",involvedObject.kind=CronJob",
	})
	if err != nil {
		t.Fatal(err)
	}
	return list.Items
}

func hasEvent(t *testing.T, namespace, name, eventType, reason string) (bool, string) {
	var seen []string
	for _, e := range events(t, namespace, name) {
		if e.Type == eventType && e.Reason == reason {
			return true, ""
		}
		seen = append(seen, e.Type+" "+e.Reason)
	}
	return false, fmt.Sprintf("events %q", seen)
}

// eventHappens waits for an Event of eventType and reason about name: Events
// go to the API server on their own time, and in a burst after its Job
// creates (the controller's events.go), so none is there at once.
func eventHappens(t *testing.T, namespace, name, eventType, reason string) (bool, string) {
	t.Helper()
	var seen string
	deadline := time.Now().Add(30 * time.Second)
	for {
		ok, s := hasEvent(t, namespace, name, eventType, reason)
		if ok {
			return true, ""
		}
		seen = s
		if time.Now().After(deadline) {
			return false, seen
		}
		time.Sleep(200 * time.Millisecond) // polls the API server's Events
	}
}

// releaseJobs removes the controller's run-record finalizer from every Job
// of namespace, as after uninstalling the controller.
func releaseJobs(t *testing.T, namespace string) int {
	t.Helper()
	jobs, err := env.kube.BatchV1().Jobs(namespace).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Logf("listing Jobs to release: %v", err)
		return 0
	}
	n := 0
	for _, j := range jobs.Items {
		if !job.HoldsRunRecord(&j) {
			continue
		}
		if err := control.NewJobs(env.kube).ReleaseFinalizer(context.Background(), namespace, j.Name, j.UID, job.RunRecordFinalizer, j.Finalizers); err != nil {
			t.Logf("releasing Job %s/%s: %v", namespace, j.Name, err)
			continue
		}
		n++
	}
	return n
}
