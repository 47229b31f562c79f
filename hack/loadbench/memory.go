package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	cronv1 "github.com/cronjob-controller/cronjob-controller/pkg/apis/batch/v1"
	clientset "github.com/cronjob-controller/cronjob-controller/pkg/generated/clientset/versioned"
	"github.com/cronjob-controller/cronjob-controller/pkg/job"
	"github.com/cronjob-controller/cronjob-controller/pkg/localcluster"
	"github.com/cronjob-controller/cronjob-controller/pkg/workload"
)

// runRecordFinalizers makes the memory benchmark's Jobs carry the
// run-record finalizer. Off by default, so the figures compare with those
// measured before Jobs had it: the CronJobs' statuses start empty either
// way, and the first syncs write 10,000 of them to adopt the Jobs. With it
// on, they also release every Job, a write each, which is what a takeover
// meets after a crash in a burst (the statuses were deferred, the Jobs
// still hold it): three times the writes of the start, and their garbage.
var runRecordFinalizers bool

// memoryResult is what the memory benchmark reports for one controller
// process: its resident memory once its caches hold the objects and its
// first syncs are done, against the same process on an empty cluster.
type memoryResult struct {
	CronJobs, Jobs  int
	EmptyRSSMiB     float64
	RSSMiB, PeakMiB float64
	HeapInuseMiB    float64
	EmptyHeapMiB    float64
	// LiveHeapMiB is the heap still reachable after a forced GC: what the
	// caches and the rest of the process really hold.
	LiveHeapMiB float64
	// IdleRSSMiB is the RSS again after the idle minute, once the runtime
	// has returned to the OS what the initial sync no longer needs.
	IdleRSSMiB     float64
	BytesPerObject float64 // RSS growth over the empty process, per cached object
	HeapPerObject  float64 // heap growth, per cached object
	// Finalizers: the Jobs were created holding the run-record finalizer
	// (-memory-finalizers), so the first syncs released each.
	Finalizers  bool
	SyncSeconds float64 // from start until the controller went quiet
	// IdleCPUPercent is the controller's CPU use over a minute after that,
	// with nothing due, in percent of one core.
	IdleCPUPercent float64
}

// memoryBench creates nCron CronJobs (nothing due for a year) and nJobs
// Jobs they control, each with a realistic pod template, then measures
// this controller with them all in its caches.
func memoryBench(ctx context.Context, cluster *localcluster.Cluster, kube kubernetes.Interface, cron clientset.Interface, ours string, nCron, nJobs int) (memoryResult, error) {
	r := memoryResult{CronJobs: nCron, Jobs: nJobs, Finalizers: runRecordFinalizers}
	empty, err := measureController(ctx, cluster, ours, 0)
	if err != nil {
		return r, err
	}
	r.EmptyRSSMiB, r.EmptyHeapMiB = empty.rss, empty.heap

	ns := fmt.Sprintf("mem-%d", time.Now().Unix())
	if _, err := kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		return r, err
	}
	defer func() { _ = kube.CoreV1().Namespaces().Delete(context.Background(), ns, metav1.DeleteOptions{}) }()
	start := time.Now()
	if err := createOwnedObjects(ctx, kube, cron, ns, nCron, nJobs); err != nil {
		return r, err
	}
	fmt.Fprintf(os.Stderr, "loadbench: created %d CronJobs and %d Jobs in %v\n", nCron, nJobs, time.Since(start).Round(time.Second))

	full, err := measureController(ctx, cluster, ours, time.Minute)
	if err != nil {
		return r, err
	}
	r.RSSMiB, r.PeakMiB, r.HeapInuseMiB, r.SyncSeconds = full.rss, full.peak, full.heap, full.settle.Seconds()
	r.LiveHeapMiB, r.IdleRSSMiB = full.live, full.idleRSS
	r.IdleCPUPercent = full.idleCPU
	objects := float64(nCron + nJobs)
	r.BytesPerObject = (full.rss - empty.rss) * (1 << 20) / objects
	r.HeapPerObject = (full.heap - empty.heap) * (1 << 20) / objects
	return r, nil
}

type processMemory struct {
	rss, peak, heap float64 // MiB
	live, idleRSS   float64 // MiB
	settle          time.Duration
	idleCPU         float64 // percent of a core over the idle window
}

// measureController starts the controller, waits until its caches have
// synced and it has stopped making requests, reads its memory and then its
// CPU use over idle, and stops it.
func measureController(ctx context.Context, cluster *localcluster.Cluster, ours string, idle time.Duration) (processMemory, error) {
	var m processMemory
	metricsAddr, healthAddr := freePort(), freePort()
	start := time.Now()
	// -profiling serves the heap profile that forces the GC for the live heap.
	args := []string{"-kubeconfig", cluster.Kubeconfig, "-metrics-bind-address=" + metricsAddr, "-health-probe-bind-address=" + healthAddr, "-profiling"}
	proc, err := startProcess(ours, args...)
	if err != nil {
		return m, err
	}
	defer func() {
		_ = proc.Process.Signal(syscall.SIGTERM)
		_ = proc.Wait()
	}()
	for !ok("http://" + healthAddr + "/readyz") {
		if time.Since(start) > 5*time.Minute {
			return m, fmt.Errorf("controller not ready after 5 minutes")
		}
		time.Sleep(200 * time.Millisecond)
	}
	if _, err := settled(ctx, cluster, time.Now().Add(5*time.Minute)); err != nil {
		return m, err
	}
	m.settle = time.Since(start)
	m.rss, m.peak = procMemMiB(proc, "VmRSS:"), procMemMiB(proc, "VmHWM:")
	m.heap = scrape("http://"+metricsAddr+"/metrics", "go_memstats_heap_inuse_bytes") / (1 << 20)
	// The profile is taken after a GC (gc=1), so the heap allocated
	// right after it is the live heap; it is kept only with -profile.
	heapURL := "http://" + metricsAddr + "/debug/pprof/heap?gc=1"
	if profileDir != "" {
		err = saveProfile(heapURL, filepath.Join(profileDir, fmt.Sprintf("heap-%d.pb.gz", time.Now().Unix())))
	} else {
		err = fetch(heapURL, io.Discard)
	}
	if err != nil {
		return m, fmt.Errorf("heap profile: %w", err)
	}
	m.live = scrape("http://"+metricsAddr+"/metrics", "go_memstats_heap_alloc_bytes") / (1 << 20)
	if idle > 0 {
		before := cpuSeconds(proc)
		time.Sleep(idle)
		m.idleCPU = (cpuSeconds(proc) - before) / idle.Seconds() * 100
		m.idleRSS = procMemMiB(proc, "VmRSS:")
	}
	return m, nil
}

func freePort() string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	defer l.Close()
	return l.Addr().String()
}

func ok(url string) bool {
	resp, err := http.Get(url)
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// scrape returns the value of an unlabelled metric, or 0.
func scrape(url, name string) float64 {
	resp, err := http.Get(url)
	if err != nil {
		return 0
	}
	defer resp.Body.Close()
	var sb strings.Builder
	buf := make([]byte, 64<<10)
	for {
		n, err := resp.Body.Read(buf)
		sb.Write(buf[:n])
		if err != nil {
			break
		}
	}
	for _, line := range strings.Split(sb.String(), "\n") {
		if rest, ok := strings.CutPrefix(line, name+" "); ok {
			v, _ := strconv.ParseFloat(strings.TrimSpace(rest), 64)
			return v
		}
	}
	return 0
}

func procMemMiB(p *exec.Cmd, field string) float64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", p.Process.Pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, field); ok {
			kb, _ := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 64)
			return kb / 1024
		}
	}
	return 0
}

// createOwnedObjects creates nCron CronJobs and nJobs Jobs spread over
// them, each Job as this controller would have made it for a past run
// (suspended, so no pods and no job controller are involved).
func createOwnedObjects(ctx context.Context, kube kubernetes.Interface, cron clientset.Interface, ns string, nCron, nJobs int) error {
	tmpl := batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{Suspend: ptr.To(true), Template: workload.PodTemplate()}}
	cronJobs := make([]*cronv1.CronJob, nCron)
	if err := parallel(nCron, func(i int) error {
		cj, err := cron.BatchV1().CronJobs(ns).Create(ctx, &cronv1.CronJob{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cj-%05d", i), Labels: map[string]string{"team": "data"}},
			// Due once a year, on a day that is not today: nothing runs.
			Spec: cronv1.CronJobSpec{Schedule: yearlyNotToday(), JobTemplate: tmpl},
		}, metav1.CreateOptions{})
		cronJobs[i] = cj
		return err
	}); err != nil {
		return err
	}
	past := time.Now().Add(-24 * time.Hour).Truncate(time.Hour)
	return parallel(nJobs, func(i int) error {
		cj := cronJobs[i%nCron]
		j := job.New(cj, past.Add(-time.Duration(i/nCron)*time.Hour), time.UTC)
		if !runRecordFinalizers {
			j.Finalizers = nil
		}
		_, err := kube.BatchV1().Jobs(ns).Create(ctx, j, metav1.CreateOptions{})
		return err
	})
}

// yearlyNotToday is a schedule due once a year, far from today.
func yearlyNotToday() string {
	month := (int(time.Now().Month())+5)%12 + 1
	return fmt.Sprintf("0 0 1 %d *", month)
}

func parallel(n int, f func(int) error) error { return parallelN(n, 64, f) }

// parallelN calls f(0) … f(n-1), inFlight at a time, and returns one of
// their errors.
func parallelN(n, inFlight int, f func(int) error) error {
	var wg sync.WaitGroup
	errs := make(chan error, n)
	sem := make(chan struct{}, inFlight)
	for i := range n {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			if err := f(i); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	return <-errs
}
