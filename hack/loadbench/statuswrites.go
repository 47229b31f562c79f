package main

// The status-write benchmark (-status-writes N): what a CronJob status
// write costs the API server, for each way the write can be sent, on the
// embedded control plane: the CPU seconds kube-apiserver and etcd spend per
// write, over the writes and until the server is quiet again.
//
// Each write is what a firing writes: lastScheduleTime moves to the run, the
// run's Job joins status.active, and the LastRunStarted condition says so.
// Every way keeps the write's precondition (the resourceVersion read), so a
// write based on a stale read fails with a conflict, as UpdateStatus does:
//
//   - put: UpdateStatus, a JSON PUT of the whole CronJob;
//   - merge: a JSON merge patch of the status subresource holding the
//     changed status fields and metadata.resourceVersion;
//   - jsonpatch: a JSON patch of the status subresource, a test of
//     /metadata/resourceVersion, then the changed fields;
//   - apply: server-side apply of the status with metadata.resourceVersion.
//
// With -status-writes-cel both, the CronJobs are measured with the CRD as
// shipped, then with every x-kubernetes-validations rule taken out, to show
// what the CEL rules cost a status write. Ways take turns, round by round
// (-repeats rounds), so each meets the same server; medians are reported.
//
//	go run ./hack/loadbench -status-writes 1000 -repeats 3

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	cronv1 "github.com/cronjob-controller/cronjob-controller/pkg/apis/batch/v1"
	clientset "github.com/cronjob-controller/cronjob-controller/pkg/generated/clientset/versioned"
	"github.com/cronjob-controller/cronjob-controller/pkg/localcluster"
)

// way sends one status write of cj, read at resourceVersion cj's, setting
// the status st.
type way struct {
	name  string
	write func(ctx context.Context, c clientset.Interface, cj *cronv1.CronJob, st *cronv1.CronJobStatus) (*cronv1.CronJob, error)
}

var ways = []way{
	{"put", func(ctx context.Context, c clientset.Interface, cj *cronv1.CronJob, st *cronv1.CronJobStatus) (*cronv1.CronJob, error) {
		out := cj.DeepCopy()
		out.Status = *st
		return c.BatchV1().CronJobs(cj.Namespace).UpdateStatus(ctx, out, metav1.UpdateOptions{})
	}},
	{"merge", func(ctx context.Context, c clientset.Interface, cj *cronv1.CronJob, st *cronv1.CronJobStatus) (*cronv1.CronJob, error) {
		body, err := json.Marshal(map[string]any{
			"metadata": map[string]any{"resourceVersion": cj.ResourceVersion},
			"status":   map[string]any{"lastScheduleTime": st.LastScheduleTime, "active": st.Active, "activeCount": st.ActiveCount, "conditions": st.Conditions},
		})
		if err != nil {
			return nil, err
		}
		return c.BatchV1().CronJobs(cj.Namespace).Patch(ctx, cj.Name, types.MergePatchType, body, metav1.PatchOptions{}, "status")
	}},
	{"jsonpatch", func(ctx context.Context, c clientset.Interface, cj *cronv1.CronJob, st *cronv1.CronJobStatus) (*cronv1.CronJob, error) {
		ops := []map[string]any{
			{"op": "test", "path": "/metadata/resourceVersion", "value": cj.ResourceVersion},
			{"op": "add", "path": "/status/lastScheduleTime", "value": st.LastScheduleTime},
			{"op": "add", "path": "/status/active", "value": st.Active},
			{"op": "add", "path": "/status/activeCount", "value": st.ActiveCount},
			{"op": "add", "path": "/status/conditions", "value": st.Conditions},
		}
		body, err := json.Marshal(ops)
		if err != nil {
			return nil, err
		}
		return c.BatchV1().CronJobs(cj.Namespace).Patch(ctx, cj.Name, types.JSONPatchType, body, metav1.PatchOptions{}, "status")
	}},
	{"apply", func(ctx context.Context, c clientset.Interface, cj *cronv1.CronJob, st *cronv1.CronJobStatus) (*cronv1.CronJob, error) {
		body, err := json.Marshal(map[string]any{
			"apiVersion": cronv1.SchemeGroupVersion.String(), "kind": "CronJob",
			"metadata": map[string]any{"name": cj.Name, "namespace": cj.Namespace, "resourceVersion": cj.ResourceVersion},
			"status":   map[string]any{"lastScheduleTime": st.LastScheduleTime, "active": st.Active, "activeCount": st.ActiveCount, "conditions": st.Conditions},
		})
		if err != nil {
			return nil, err
		}
		return c.BatchV1().CronJobs(cj.Namespace).Patch(ctx, cj.Name, types.ApplyPatchType, body,
			metav1.PatchOptions{FieldManager: "statuswrites", Force: ptr.To(true)}, "status")
	}},
}

func statusWrites(n, rounds int, cel string, inFlight int) error {
	ctx := context.Background()
	p, err := startWritePlane(ctx)
	if err != nil {
		return err
	}
	defer p.stop()
	cluster, c, kube, crd := p.cluster, p.cron, p.kube, p.crd
	phases := map[string][]bool{"on": {true}, "off": {false}, "both": {true, false}}[cel]
	if phases == nil {
		return fmt.Errorf("-cel %q: want on, off or both", cel)
	}
	fmt.Printf("| CEL rules | way | API server + etcd CPU per write, ms (median of %d rounds of %d) | rounds |\n|---|---|---|---|\n", rounds, n)
	for _, withCEL := range phases {
		body := crd
		if !withCEL {
			if body, err = withoutCEL(crd); err != nil {
				return err
			}
		}
		if err := kubectlApply(cluster.Kubeconfig, body); err != nil {
			return err
		}
		ns := "statuswrites-cel-" + map[bool]string{true: "on", false: "off"}[withCEL]
		if _, err := kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
			return err
		}
		cjs, err := createStatusCronJobs(ctx, c, ns, n)
		if err != nil {
			return err
		}
		perWay := map[string][]float64{}
		for r := range rounds {
			for _, w := range ways {
				ms, err := measure(ctx, cluster, c, cjs, w, r, inFlight)
				if err != nil {
					return fmt.Errorf("%s: %w", w.name, err)
				}
				perWay[w.name] = append(perWay[w.name], ms)
				fmt.Fprintf(os.Stderr, "cel=%v round %d %s: %.3f ms/write\n", withCEL, r, w.name, ms)
			}
			// The order turns each round, so no way always follows the
			// same one.
			ways = append(ways[1:], ways[0])
		}
		names := make([]string, 0, len(perWay))
		for name := range perWay {
			names = append(names, name)
		}
		slices.Sort(names)
		for _, name := range names {
			v := slices.Sorted(slices.Values(perWay[name]))
			runs := make([]string, len(perWay[name]))
			for i, x := range perWay[name] {
				runs[i] = strconv.FormatFloat(x, 'f', 2, 64)
			}
			fmt.Printf("| %s | %s | %.2f | %s |\n", map[bool]string{true: "on", false: "off"}[withCEL], name, v[len(v)/2], strings.Join(runs, ", "))
		}
	}
	return nil
}

// writePlane is the embedded control plane of the write benchmarks, with
// an unthrottled client of the CRD, one of built-in kinds speaking
// protobuf, and the CRD as shipped (not applied yet).
type writePlane struct {
	cluster *localcluster.Cluster
	cfg     *rest.Config
	cron    clientset.Interface
	kube    kubernetes.Interface
	crd     []byte
	stop    func()
}

func startWritePlane(ctx context.Context) (*writePlane, error) {
	root, err := os.Getwd()
	if err != nil {
		return nil, err
	}
	crd, err := os.ReadFile(filepath.Join(root, "artifacts", "examples", "crd.yaml"))
	if err != nil {
		return nil, err
	}
	bins, err := localcluster.EnsureBinaries(ctx, root, filepath.Join(root, "_output", "bin"), os.Stderr)
	if err != nil {
		return nil, err
	}
	cluster, stop, err := startPlane(ctx, bins)
	if err != nil {
		return nil, err
	}
	p := &writePlane{cluster: cluster, crd: crd, stop: stop}
	if p.cfg, err = clientcmd.BuildConfigFromFlags("", cluster.Kubeconfig); err == nil {
		p.cfg.QPS, p.cfg.Burst = -1, 0
		p.cron, err = clientset.NewForConfig(p.cfg)
	}
	if err == nil {
		pcfg := *p.cfg
		pcfg.ContentType = "application/vnd.kubernetes.protobuf"
		pcfg.AcceptContentTypes = "application/vnd.kubernetes.protobuf,application/json"
		p.kube, err = kubernetes.NewForConfig(&pcfg)
	}
	if err != nil {
		stop()
		return nil, err
	}
	return p, nil
}

// withCRD applies this project's CRDs to the plane and creates the
// namespace ns, where a shape benchmark's objects go.
func (p *writePlane) withCRD(ctx context.Context, ns string) error {
	if err := kubectlApply(p.cluster.Kubeconfig, p.crd); err != nil {
		return err
	}
	_, err := p.kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
	return err
}

// measure writes each CronJob's status once the way w, firing number r, and
// returns the API server's and etcd's CPU milliseconds per write, from the
// first write until the server is quiet. Each CronJob is read again after,
// so the next write holds a current resourceVersion.
func measure(ctx context.Context, cluster *localcluster.Cluster, c clientset.Interface, cjs []*cronv1.CronJob, w way, r, inFlight int) (float64, error) {
	pids := []int{cluster.Pid("kube-apiserver"), cluster.Pid("etcd")}
	quiet(ctx, cluster)
	// What the two spend idle (leases, the garbage collector's lists) is
	// no write's: measured over 5 s before, and taken off.
	idleFrom, idleStart := cpuOf(pids...), time.Now()
	time.Sleep(5 * time.Second)
	idle := (cpuOf(pids...) - idleFrom) / time.Since(idleStart).Seconds()
	before, start := cpuOf(pids...), time.Now()
	var wg sync.WaitGroup
	var mu sync.Mutex
	var firstErr error
	sem := make(chan struct{}, inFlight)
	for i, cj := range cjs {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			st := firing(cj, r)
			got, err := w.write(ctx, c, cj, st)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				if firstErr == nil {
					firstErr = err
				}
				return
			}
			cjs[i] = got
		})
	}
	wg.Wait()
	if firstErr != nil {
		return 0, firstErr
	}
	quiet(ctx, cluster)
	spent := cpuOf(pids...) - before - idle*time.Since(start).Seconds()
	return spent * 1000 / float64(len(cjs)), nil
}

// firing is the status a firing writes: run r of cj started, its Job
// active, LastRunStarted saying so; the rest as it was.
func firing(cj *cronv1.CronJob, r int) *cronv1.CronJobStatus {
	st := cj.Status.DeepCopy()
	at := time.Date(2026, 1, 1, 0, r, 0, 0, time.UTC).Add(time.Duration(len(st.Active)) * time.Hour)
	st.LastScheduleTime = &metav1.Time{Time: at}
	name := fmt.Sprintf("%s-%d", cj.Name, at.Unix())
	st.Active = append(st.Active, corev1.ObjectReference{Kind: "Job", Namespace: cj.Namespace, Name: name, UID: types.UID(name),
		APIVersion: "batch/v1", ResourceVersion: strconv.Itoa(r + 1)})
	if len(st.Active) > 3 {
		st.Active = st.Active[len(st.Active)-3:]
	}
	st.ActiveCount = int32(len(st.Active))
	st.Conditions = []metav1.Condition{{Type: cronv1.ConditionLastRunStarted, Status: metav1.ConditionTrue, Reason: "Started",
		Message: "Job " + name + " is the run of " + at.Format(time.RFC3339), LastTransitionTime: metav1.NewTime(at), ObservedGeneration: cj.Generation}}
	return st
}

// quiet waits until the API server has served no request on cronjobs or
// jobs for 2 s.
func quiet(ctx context.Context, cluster *localcluster.Cluster) {
	var last counts
	for still := 0; still < 2; {
		time.Sleep(time.Second)
		m, err := cluster.APIServerMetrics(ctx)
		if err != nil {
			return
		}
		if now := requests(m); now == last {
			still++
		} else {
			still, last = 0, now
		}
	}
}

func createStatusCronJobs(ctx context.Context, c clientset.Interface, ns string, n int) ([]*cronv1.CronJob, error) {
	out := make([]*cronv1.CronJob, n)
	var wg sync.WaitGroup
	errs := make(chan error, n)
	sem := make(chan struct{}, 32)
	for i := range n {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			cj, err := c.BatchV1().CronJobs(ns).Create(ctx, &cronv1.CronJob{
				ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cj-%05d", i)},
				Spec: cronv1.CronJobSpec{Schedule: "0 0 1 1 *", TimeZone: ptr.To("Etc/UTC"),
					JobTemplate: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
						RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}}}}},
			}, metav1.CreateOptions{})
			if err != nil {
				errs <- err
				return
			}
			out[i] = cj
		})
	}
	wg.Wait()
	close(errs)
	return out, <-errs
}

func kubectlApply(kubeconfig string, body []byte) error {
	cmd := exec.Command("kubectl", "--kubeconfig", kubeconfig, "apply", "--server-side", "--force-conflicts", "-f", "-")
	cmd.Stdin = bytes.NewReader(body)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("kubectl apply: %v\n%s", err, out)
	}
	// The API server serves a changed schema once the CRD is Established
	// again; a few seconds more let every handler pick it up, and nothing
	// is measured meanwhile.
	for range 60 {
		out, _ := exec.Command("kubectl", "--kubeconfig", kubeconfig, "get", "crd", "cronjobs.batch.tutorial.kubebuilder.io",
			"-o", `jsonpath={.status.conditions[?(@.type=="Established")].status}`).Output()
		if string(out) == "True" {
			time.Sleep(3 * time.Second)
			return nil
		}
		time.Sleep(time.Second)
	}
	return fmt.Errorf("the CRD did not become Established")
}

// withoutCEL is the CRD with every x-kubernetes-validations list removed.
func withoutCEL(crd []byte) ([]byte, error) {
	var obj map[string]any
	if err := yaml.Unmarshal(crd, &obj); err != nil {
		return nil, err
	}
	var strip func(v any)
	strip = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			delete(v, "x-kubernetes-validations")
			for _, x := range v {
				strip(x)
			}
		case []any:
			for _, x := range v {
				strip(x)
			}
		}
	}
	strip(obj)
	return yaml.Marshal(obj)
}
