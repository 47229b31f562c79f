// Command loadbench measures how late Jobs start when N CronJobs are all due
// the same minute, on the embedded control plane, for this controller, for
// kube-controller-manager's CronJob controller, and for a floor: a plain
// client creating the same N Jobs as fast as the API server takes them (no
// client-side limit: the physical floor), the same client creating the very
// Jobs this controller would (owned by the CronJobs, with its labels and
// annotations: the floor for those Jobs), and the plain client held to the
// controllers' client limit (QPS and burst -qps). Variants that answer one
// question run only when -variants names them: floors that also keep a
// controller's informers, more in flight, GOGC=100.
//
//	go run ./hack/loadbench -n 500,2000 -repeats 3 -qps 500
//
// Each run: a fresh namespace, N CronJobs (a schedule naming the one
// minute they are due at, in Etc/UTC; Jobs created suspended so no pods
// run) created before that minute, the
// controller (started fresh for the run), and a watch that records when each
// Job is first seen. Skew = seen − scheduled minute. It prints one Markdown
// table of medians over the repeats, and to stderr each run's figures with
// the CPU each process spent in the burst: on a machine the API server
// shares, any process's CPU lengthens it.
package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sync/errgroup"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	kubeinformers "k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
	toolswatch "k8s.io/client-go/tools/watch"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"

	cronv1 "github.com/cronjob-controller/cronjob-controller/pkg/apis/batch/v1"
	clientset "github.com/cronjob-controller/cronjob-controller/pkg/generated/clientset/versioned"
	croninformers "github.com/cronjob-controller/cronjob-controller/pkg/generated/informers/externalversions"
	"github.com/cronjob-controller/cronjob-controller/pkg/job"
	"github.com/cronjob-controller/cronjob-controller/pkg/localcluster"
)

// result is one run.
type result struct {
	Variant  string  `json:"variant"`
	N        int     `json:"n"`
	P50, P99 float64 `json:"-"`
	Max      float64 `json:"-"`
	// OutsideP99 is the p99 skew the separate watch saw (-watcher kubectl),
	// in the same run as P99, which the harness's own watch saw.
	OutsideP99   float64   `json:"outsideP99,omitempty"`
	OutsideSkews []float64 `json:"outsideSkews,omitempty"`
	// RecordedBy58 is how many statuses record the firing 58 s after the
	// minute (a controller's run; -1 if the count failed).
	RecordedBy58 int `json:"recordedBy58"`
	// BusyAtMinute: the API server still served requests on cronjobs or
	// jobs up to the minute; the firing met the controller's earlier work.
	BusyAtMinute bool    `json:"busyAtMinute"`
	Missing      int     `json:"missing"`
	Duplicates   int     `json:"duplicates"`
	CPUSeconds   float64 `json:"cpuSeconds"`
	PeakRSSMiB   float64 `json:"peakRSSMiB"`
	// The burst is from the minute until the watch has seen the last Job.
	// BurstCPU is the CPU seconds each process spent in it: "server" is
	// kube-apiserver and etcd, "controller" the controller under test,
	// "harness" this process (the measuring watch, and for a floor its
	// creates and informers), "kcm" kube-controller-manager (the garbage
	// collector); nil when Jobs were missing. ServerCPUSeconds is the
	// server's over the whole window of counted requests.
	BurstCPU         map[string]float64 `json:"burstCPU"`
	ServerCPUSeconds float64            `json:"serverCPUSeconds"`
	// RequestsPerFiring counts API requests on cronjobs and jobs (not the
	// job controller's, which is off) divided by N, from the minute before
	// the firing until the controller has gone quiet; WritesPerFiring the
	// creates, updates, patches and deletes among them. Lists counts LIST
	// requests in that window (an informer that relists shows here).
	// OtherMinute counts Jobs of another minute the watch saw (see
	// forMinute); the request counts then hold their firing too.
	// FirstStatusWrite is when, after the minute, the first update of a
	// CronJob was seen (-1: none seen, the watch failed, or a floor);
	// StatusWritesInBurst counts those seen before the last Job was (-1:
	// not known). Both compare arrivals on two watches, the Jobs' and the
	// CronJobs' metadata; a Job watch resumed in the burst delays the last
	// Job. FullHistories, for the history variant, counts the statuses
	// holding a full run history headed by the firing's run at +58 s.
	FullHistories       int       `json:"fullHistories,omitempty"`
	FirstStatusWrite    float64   `json:"firstStatusWrite"`
	StatusWritesInBurst int       `json:"statusWritesInBurst"`
	OtherMinute         int       `json:"otherMinute"`
	RequestsPerFiring   float64   `json:"requestsPerFiring"`
	WritesPerFiring     float64   `json:"writesPerFiring"`
	Lists               float64   `json:"lists"`
	Skews               []float64 `json:"skews"`
}

type variant struct {
	name string
	// start launches the controller under test and returns its process, or
	// nil for the floor.
	start func(kubeconfig string) (*exec.Cmd, error)
	// builtin: the CronJobs are batch/v1 CronJobs.
	builtin bool
	// pprofAddr, when set, serves the controller's /debug/pprof: each run
	// saves a CPU profile of the firing.
	pprofAddr string
	// floor, for a floor variant (start nil), is the plain client that
	// creates the Jobs.
	floor kubernetes.Interface
	// controllersJobs: the floor creates the Jobs this controller would
	// (pkg/job: owned by CronJobs created as for the controller, with its
	// labels and annotations), less the run-record finalizer, which nothing
	// would release; otherwise bare Jobs.
	controllersJobs bool
	// inFlight is how many creates the floor keeps in flight; 0 is
	// floorConcurrency.
	inFlight int
	// informers: beside its creates, the floor keeps a controller's
	// informers, of Jobs (protobuf) and of CronJobs (created as for the
	// controller) over all namespaces, so the API server serves it the
	// watches a controller costs it.
	informers bool
	// optIn, when set, is a word an element of -variants must contain for
	// the variant to run: variants that answer one question stay out of
	// make bench.
	optIn string
	// history: before the minute, each CronJob's status is given a full
	// run history (status.recentRuns at its default length, runs whose
	// Jobs are gone), as a CronJob that has run for a while carries it, so
	// every status write of the firing carries it too.
	history bool
}

// profileDir is where CPU profiles of the firings go (-profile).
var profileDir string

// profileSeconds is how long each firing is profiled (-profile-seconds).
var profileSeconds int

// apiserverFeatureGates is the control plane's kube-apiserver --feature-gates.
var apiserverFeatureGates string

// profileAPIServer: with -profile, the API server is profiled over each
// firing too (-profile-apiserver). Off by default: the profile's own CPU
// lengthens the burst it measures.
var profileAPIServer bool

// wide is the concurrency of the wide variants (-wide): whether the API
// server takes more creates at once than the default 20 in flight.
var wide int

// controllerFlags are extra flags for this controller in the load runs
// (-controller-flags), such as -v=4 to see its conflicts and retries.
var controllerFlags []string

// sustainedMinutes, when positive, makes the run the sustained one
// (sustained.go) instead of the load runs.
var sustainedMinutes int

// controllerEnv is added to the environment of the controllers under test
// (-controller-env), e.g. GOGC=100 for the memory benchmark.
var controllerEnv []string

func main() {
	ns := flag.String("n", "500,2000", "comma-separated CronJob counts")
	repeats := flag.Int("repeats", 3, "runs per variant and count; medians are reported")
	qps := flag.Int("qps", 500, "client QPS of the \"at equal QPS\" variants and of the floor")
	only := flag.String("variants", "", "|-separated substrings of the variant names to run (default all but the opt-in ones); the wide variants run only when an element says \"wide\", those with informers when one says \"informers\", the GOGC=100 one when one says \"gogc\"")
	jsonOut := flag.String("json", "", "write every run's figures here")
	memory := flag.String("memory", "", "CRONJOBS,JOBS: measure this controller's memory with that many objects cached (after the load runs)")
	flag.Func("controller-env", "space-separated KEY=VALUE added to the environment of the controllers under test, in the load and memory runs (the harness's own GOGC and GOMEMLIMIT are not passed on), e.g. GOGC=100", func(v string) error {
		controllerEnv = strings.Fields(v)
		return nil
	})
	flag.Func("controller-flags", "space-separated extra flags for this controller in the load runs, e.g. -v=4", func(v string) error {
		controllerFlags = strings.Fields(v)
		return nil
	})
	flag.StringVar(&profileDir, "profile", "", "save a CPU profile of this controller over each firing, and a heap profile in the memory benchmark, in this directory")
	flag.BoolVar(&runRecordFinalizers, "memory-finalizers", false, "in the memory benchmark, create the Jobs holding the run-record finalizer, so the controller's first syncs also release every one (by default they are created without it, as before Jobs had it)")
	flag.IntVar(&wide, "wide", 60, "the in-flight creates of the \"floor, wide\" variant and the -workers of the \"this controller, wide\" one")
	flag.BoolVar(&profileAPIServer, "profile-apiserver", false, "with -profile, also save a CPU profile of the API server over each firing, for every variant (its cost lengthens the burst)")
	flag.StringVar(&watcher, "watcher", watcher, "who sees the Jobs for the skew: harness (its own watch) or kubectl (a separate `kubectl get jobs --watch`, as a user measures)")
	flag.DurationVar(&lead, "lead", 0, "create the CronJobs at least this long before their minute (e.g. 75s, so the controller is idle by then); by default in the minute before it")
	flag.IntVar(&profileSeconds, "profile-seconds", 10, "how long each firing's CPU profile runs, from a second before the due minute")
	flag.IntVar(&sustainedMinutes, "sustained", 0, "instead of the load runs: the sustained run (sustained.go), N CronJobs (-n) due every minute for this many minutes, for each controller variant")
	statusN := flag.Int("status-writes", 0, "instead of the load runs: the status-write benchmark (statuswrites.go) on this many CronJobs, -repeats rounds")
	statusCEL := flag.String("status-writes-cel", "both", "the status-write benchmark's CRD: its CEL rules on, off, or both")
	flag.StringVar(&apiserverFeatureGates, "apiserver-feature-gates", "", "kube-apiserver's --feature-gates on the benchmarks' control plane, e.g. CBORServingAndStorage=true")
	flag.BoolVar(&wholeRun, "whole-run", false, "instead of the load runs: the whole-run benchmark (wholerun.go), what a run costs kube-apiserver and etcd from its firing until its Job, run to completion on the simulated node, is pruned; -n defaults to 2000, -variants to '"+wholeRunVariants+"', -lead to 75s")
	shapesN := flag.Int("status-shapes", 0, "instead of the load runs: the status-shape benchmark (statusshapes.go) on this many CronJobs of each shape, -repeats rounds")
	jobShapesN := flag.Int("job-shapes", 0, "instead of the load runs: the Job-shape benchmark (jobshapes.go), this many Job creates of each shape, -repeats rounds")
	flag.Parse()
	if wholeRun {
		if err := wholeRunDefaults(ns, only); err != nil {
			fmt.Fprintln(os.Stderr, "loadbench:", err)
			os.Exit(2)
		}
	}
	if *jobShapesN > 0 {
		if err := jobShapes(*jobShapesN, *repeats); err != nil {
			fmt.Fprintln(os.Stderr, "loadbench:", err)
			os.Exit(1)
		}
		return
	}
	if *shapesN > 0 {
		if err := statusShapes(*shapesN, *repeats); err != nil {
			fmt.Fprintln(os.Stderr, "loadbench:", err)
			os.Exit(1)
		}
		return
	}
	if *statusN > 0 {
		if err := statusWrites(*statusN, *repeats, *statusCEL, floorConcurrency); err != nil {
			fmt.Fprintln(os.Stderr, "loadbench:", err)
			os.Exit(1)
		}
		return
	}
	if wide < 1 {
		fmt.Fprintln(os.Stderr, "loadbench: -wide must be at least 1")
		os.Exit(2)
	}
	if profileAPIServer && profileDir == "" {
		fmt.Fprintln(os.Stderr, "loadbench: -profile-apiserver needs -profile DIR")
		os.Exit(2)
	}
	if profileDir != "" {
		if err := os.MkdirAll(profileDir, 0o755); err != nil {
			fmt.Fprintln(os.Stderr, "loadbench:", err)
			os.Exit(2)
		}
	}
	if err := run(*ns, *repeats, *qps, *only, *jsonOut, *memory); err != nil {
		fmt.Fprintln(os.Stderr, "loadbench:", err)
		os.Exit(1)
	}
}

func run(counts string, repeats, qps int, only, jsonOut, memory string) error {
	ctx := context.Background()
	root, err := os.Getwd()
	if err != nil {
		return err
	}
	bin := filepath.Join(root, "_output", "bin")
	bins, err := localcluster.EnsureBinaries(ctx, root, bin, os.Stderr)
	if err != nil {
		return err
	}
	ours := filepath.Join(bin, "cronjob-controller")
	build := exec.Command("go", "build", "-o", ours, ".")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		return err
	}
	cluster, stop, err := startPlane(ctx, bins)
	if err != nil {
		return err
	}
	defer stop()
	if out, err := exec.Command("kubectl", "--kubeconfig", cluster.Kubeconfig, "apply", "-f", filepath.Join(root, "artifacts", "examples", "crd.yaml")).CombinedOutput(); err != nil {
		return fmt.Errorf("applying the CRD: %v\n%s", err, out)
	}

	q := strconv.Itoa(qps)
	metricsFlags := []string{"-metrics-bind-address=0", "-health-probe-bind-address=0"}
	var pprofAddr string
	if profileDir != "" {
		pprofAddr = freePort()
		metricsFlags = []string{"-metrics-bind-address=" + pprofAddr, "-health-probe-bind-address=0", "-profiling"}
	}
	metricsFlags = append(metricsFlags, controllerFlags...)
	variants := []variant{
		{name: "this controller, defaults", pprofAddr: pprofAddr, start: func(kc string) (*exec.Cmd, error) {
			return startProcess(ours, append([]string{"-kubeconfig", kc}, metricsFlags...)...)
		}},
		{name: fmt.Sprintf("this controller, wide: -workers=%d", wide), optIn: "wide", pprofAddr: pprofAddr, start: func(kc string) (*exec.Cmd, error) {
			return startProcess(ours, append([]string{"-kubeconfig", kc, fmt.Sprintf("-workers=%d", wide)}, metricsFlags...)...)
		}},
		{name: "this controller, history: a full run history", optIn: "history", history: true, pprofAddr: pprofAddr, start: func(kc string) (*exec.Cmd, error) {
			return startProcess(ours, append([]string{"-kubeconfig", kc}, metricsFlags...)...)
		}},
		{name: "this controller, gogc: GOGC=100", optIn: "gogc", pprofAddr: pprofAddr, start: func(kc string) (*exec.Cmd, error) {
			return startProcessWith([]string{"GOGC=100"}, ours, append([]string{"-kubeconfig", kc}, metricsFlags...)...)
		}},
		{name: "this controller, QPS " + q, pprofAddr: pprofAddr, start: func(kc string) (*exec.Cmd, error) {
			return startProcess(ours, append([]string{"-kubeconfig", kc, "-kube-api-qps=" + q, "-kube-api-burst=" + q}, metricsFlags...)...)
		}},
		{name: "kube-controller-manager, defaults (QPS 20)", builtin: true, start: func(kc string) (*exec.Cmd, error) {
			return startKCM(bins.ControllerManager, kc)
		}},
		{name: "kube-controller-manager, QPS " + q, builtin: true, start: func(kc string) (*exec.Cmd, error) {
			return startKCM(bins.ControllerManager, kc, "--kube-api-qps="+q, "--kube-api-burst="+q)
		}},
		{name: "floor: plain client, no client limit"},
		{name: "floor: plain client, the controller's Jobs, no client limit", controllersJobs: true},
		{name: fmt.Sprintf("floor, wide: plain client, %d in flight, no client limit", wide), inFlight: wide, optIn: "wide"},
		{name: "floor: plain client, with a controller's informers, no client limit", informers: true, optIn: "informers"},
		{name: "floor: plain client, the controller's Jobs and informers, no client limit", controllersJobs: true, informers: true, optIn: "informers"},
		{name: "floor: plain client, QPS " + q},
	}
	// The wide variants answer one question (is 20 in flight enough?), those
	// with informers another (what do a controller's watches cost the API
	// server?), the GOGC=100 one a third (what does GOGC=50 cost a burst?);
	// they run only when an element of -variants names them.
	var keep []string
	if only != "" {
		keep = strings.Split(only, "|")
	}
	variants = slices.DeleteFunc(variants, func(v variant) bool {
		if v.optIn != "" && !slices.ContainsFunc(keep, func(k string) bool { return strings.Contains(k, v.optIn) }) {
			return true
		}
		return keep != nil && !slices.ContainsFunc(keep, func(k string) bool { return strings.Contains(v.name, k) })
	})
	if counts != "" && len(variants) == 0 {
		return fmt.Errorf("-variants %q names no variant", only)
	}

	cfg, err := clientcmd.BuildConfigFromFlags("", cluster.Kubeconfig)
	if err != nil {
		return err
	}
	// The floors speak protobuf, like the controllers for Jobs. The
	// physical one has no client-side limit (a negative QPS: no rate
	// limiter), so only the API server paces it; the other is limited like
	// the controllers' "at equal QPS" variants.
	floorCfg := rest.CopyConfig(cfg)
	floorCfg.ContentType = "application/vnd.kubernetes.protobuf"
	floorCfg.QPS, floorCfg.Burst = -1, 0
	unlimitedFloor := kubernetes.NewForConfigOrDie(floorCfg)
	floorCfg = rest.CopyConfig(floorCfg)
	floorCfg.QPS, floorCfg.Burst = float32(qps), qps
	limitedFloor := kubernetes.NewForConfigOrDie(floorCfg)
	for i := range variants {
		switch {
		case variants[i].start != nil:
		case strings.Contains(variants[i].name, "no client limit"):
			variants[i].floor = unlimitedFloor
		default:
			variants[i].floor = limitedFloor
		}
	}
	cfg.QPS, cfg.Burst = 5000, 5000
	kube := kubernetes.NewForConfigOrDie(cfg)
	cron := clientset.NewForConfigOrDie(cfg)

	// The CRD is usable once the API server serves it.
	for {
		if _, err := cron.BatchV1().CronJobs("").List(ctx, metav1.ListOptions{Limit: 1}); err == nil {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}

	if sustainedMinutes > 0 {
		var ns []int
		for _, nText := range strings.Split(counts, ",") {
			n, err := strconv.Atoi(nText)
			if err != nil {
				return fmt.Errorf("-n %q: %w", counts, err)
			}
			ns = append(ns, n)
		}
		return sustainedRuns(ctx, cluster, kube, cron, variants, ns, sustainedMinutes)
	}
	if wholeRun {
		return wholeRuns(ctx, cluster, kube, cron, variants, counts, repeats, jsonOut)
	}

	var all []result
	defer func() {
		if jsonOut == "" || len(all) == 0 {
			return
		}
		if data, err := json.MarshalIndent(all, "", " "); err == nil {
			_ = os.WriteFile(jsonOut, data, 0o644)
		}
	}()
	if counts != "" {
		outside := ""
		if watcher == "kubectl" {
			outside = " p99 skew, kubectl's watch |"
		}
		fmt.Println("| variant | N | p50 skew | p99 skew |" + outside + " max skew | missing | duplicates | CPU s | CPU ms/firing | API server + etcd CPU ms/firing | peak RSS MiB | requests/firing | writes/firing | LISTs |")
		fmt.Println("| --- | --- | --- | --- |" + strings.Repeat(" --- |", strings.Count(outside, "|")) + " --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
	}
	for _, nText := range strings.Split(counts, ",") {
		if nText == "" {
			continue
		}
		n, err := strconv.Atoi(nText)
		if err != nil {
			return err
		}
		// The variants take turns, run by run, so that each meets an API
		// server and etcd that hold as much as the others' do.
		runs := make([][]result, len(variants))
		for i := range repeats {
			for j, v := range variants {
				fmt.Fprintf(os.Stderr, "loadbench: %s, N=%d, run %d of %d\n", v.name, n, i+1, repeats)
				r, err := runOnce(ctx, cluster, kube, cron, v, n)
				for tries := 1; errors.Is(err, errLate) && tries < 3; tries++ {
					fmt.Fprintln(os.Stderr, "loadbench:", err, "; again in a fresh namespace")
					r, err = runOnce(ctx, cluster, kube, cron, v, n)
				}
				if err != nil {
					return err
				}
				burst := "burst CPU not kept (Jobs missing)"
				if r.BurstCPU != nil {
					burst = fmt.Sprintf("in the burst: server %.1f, controller %.1f, harness %.1f, kcm %.1f, outside watch %.1f CPU s",
						r.BurstCPU["server"], r.BurstCPU["controller"], r.BurstCPU["harness"], r.BurstCPU["kcm"], r.BurstCPU["watcher"])
				}
				outside := ""
				if watcher == "kubectl" {
					outside = fmt.Sprintf(" (kubectl's watch: p99 %.2f s, %d Jobs)", r.OutsideP99, len(r.OutsideSkews))
				}
				writes := ""
				if v.start != nil {
					writes = fmt.Sprintf("; first status write seen at %.2f s, %d before the last Job", r.FirstStatusWrite, r.StatusWritesInBurst)
				}
				if v.history {
					writes += fmt.Sprintf("; %d statuses with a full run history headed by the firing's run", r.FullHistories)
				}
				fmt.Fprintf(os.Stderr, "loadbench: %s, N=%d, run %d: p50 %.2f s, p99 %.2f s%s, max %.2f s, CPU %.1f s; %s; server over the window %.1f CPU s; statuses recording the firing by +58 s: %d; busy at the minute: %v%s\n",
					v.name, n, i+1, r.P50, r.P99, outside, r.Max, r.CPUSeconds, burst, r.ServerCPUSeconds, r.RecordedBy58, r.BusyAtMinute, writes)
				runs[j] = append(runs[j], r)
				all = append(all, r)
			}
		}
		for j, v := range variants {
			m := medians(runs[j])
			// Per firing: the controller's CPU and the server's, over the
			// window of counted requests (the creates, the statuses, the
			// releases and the watch echoes, until the server is quiet).
			outside := ""
			if watcher == "kubectl" {
				outside = fmt.Sprintf(" %.2f s |", m.OutsideP99)
			}
			fmt.Printf("| %s | %d | %.2f s | %.2f s |%s %.2f s | %d | %d | %.1f | %.2f | %.2f | %.0f | %.2f | %.2f | %.0f |\n",
				v.name, n, m.P50, m.P99, outside, m.Max, m.Missing, m.Duplicates, m.CPUSeconds, m.CPUSeconds*1000/float64(n), m.ServerCPUSeconds*1000/float64(n),
				m.PeakRSSMiB, m.RequestsPerFiring, m.WritesPerFiring, m.Lists)
		}
	}
	if memory == "" {
		return nil
	}
	var nCron, nJobs int
	if _, err := fmt.Sscanf(memory, "%d,%d", &nCron, &nJobs); err != nil {
		return fmt.Errorf("-memory %q: want CRONJOBS,JOBS", memory)
	}
	m, err := memoryBench(ctx, cluster, kube, cron, ours, nCron, nJobs)
	if err != nil {
		return err
	}
	fmt.Println()
	if m.Finalizers {
		fmt.Println("The Jobs held the run-record finalizer: the first syncs released each (-memory-finalizers).")
	}
	fmt.Println("| CronJobs | Jobs | RSS empty MiB | RSS after sync MiB | peak RSS MiB | RSS after a minute idle MiB | heap in use MiB (empty) | live heap MiB | bytes/object (RSS) | bytes/object (heap) | ready and quiet after | idle CPU |")
	fmt.Println("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
	fmt.Printf("| %d | %d | %.0f | %.0f | %.0f | %.0f | %.0f (%.0f) | %.0f | %.0f | %.0f | %.0f s | %.2f %% |\n", m.CronJobs, m.Jobs, m.EmptyRSSMiB, m.RSSMiB, m.PeakMiB,
		m.IdleRSSMiB, m.HeapInuseMiB, m.EmptyHeapMiB, m.LiveHeapMiB, m.BytesPerObject, m.HeapPerObject, m.SyncSeconds, m.IdleCPUPercent)
	return nil
}

// startPlane starts the embedded control plane the benchmarks run on. It
// has no job controller: nothing but the controller under test writes Jobs,
// so the API server's counters are its requests. The whole-run benchmark's
// plane has one (wholeRunPlane), since its Jobs run. stop stops it and
// removes its files.
func startPlane(ctx context.Context, bins localcluster.Binaries) (cluster *localcluster.Cluster, stop func(), err error) {
	dir, err := os.MkdirTemp("", "loadbench-")
	if err != nil {
		return nil, nil, err
	}
	cfg := localcluster.Config{Binaries: bins, Dir: dir, Progress: os.Stderr, Controllers: "garbagecollector,nodelifecycle,namespace,serviceaccount",
		FeatureGates: apiserverFeatureGates}
	if wholeRun {
		wholeRunPlane(&cfg)
	}
	cluster, err = localcluster.Start(ctx, cfg)
	if err != nil {
		os.RemoveAll(dir)
		return nil, nil, err
	}
	return cluster, func() { cluster.Stop(); os.RemoveAll(dir) }, nil
}

// startProcess starts the controller under test, its output in
// _output/loadbench-<name>-<start time>.log: a file of its own, so that the
// log of a run that went wrong is still there after the runs that follow.
func startProcess(path string, args ...string) (*exec.Cmd, error) {
	return startProcessWith(nil, path, args...)
}

// startProcessWith starts path with this process's environment less GOGC
// and GOMEMLIMIT (so that a controller's "defaults" are its own garbage
// collector settings, whatever the harness runs with), then -controller-env,
// then env: exec keeps the last value of a key.
func startProcessWith(env []string, path string, args ...string) (*exec.Cmd, error) {
	log, err := os.Create(filepath.Join("_output", fmt.Sprintf("loadbench-%s-%d.log", filepath.Base(path), time.Now().UnixNano())))
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(path, args...)
	inherited := slices.DeleteFunc(os.Environ(), func(kv string) bool {
		return strings.HasPrefix(kv, "GOGC=") || strings.HasPrefix(kv, "GOMEMLIMIT=")
	})
	cmd.Env = slices.Concat(inherited, controllerEnv, env)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	return cmd, nil
}

func startKCM(path, kubeconfig string, extra ...string) (*exec.Cmd, error) {
	args := append([]string{"--kubeconfig=" + kubeconfig, "--controllers=cronjob", "--leader-elect=false",
		"--bind-address=127.0.0.1", "--secure-port=0", "--v=0"}, extra...)
	return startProcess(path, args...)
}

// errLate says the CronJobs were not all created in time for the minute
// they were to be due in; the run is tried again.
var errLate = errors.New("late")

// runOnce is one run of one variant: see the package comment.
func runOnce(ctx context.Context, cluster *localcluster.Cluster, kube kubernetes.Interface, cron clientset.Interface, v variant, n int) (result, error) {
	r := result{Variant: v.name, N: n}
	ns := fmt.Sprintf("bench-%d", time.Now().UnixNano())
	if _, err := kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		return r, err
	}
	defer func() {
		_ = kube.CoreV1().Namespaces().Delete(context.Background(), ns, metav1.DeleteOptions{})
		// The controller is stopped by now; its Jobs, suspended and so never
		// finished, still hold the run-record finalizer (released when a
		// Job finishes), and would hold the namespace forever.
		releaseLeftovers(kube, ns)
		for {
			if _, err := kube.CoreV1().Namespaces().Get(context.Background(), ns, metav1.GetOptions{}); apierrors.IsNotFound(err) {
				return
			}
			time.Sleep(time.Second)
		}
	}()

	var proc *exec.Cmd
	if v.start != nil {
		var err error
		if proc, err = v.start(cluster.Kubeconfig); err != nil {
			return r, err
		}
		defer func() {
			_ = proc.Process.Signal(syscall.SIGTERM)
			_ = proc.Wait()
		}()
	}

	// Create the CronJobs early enough in a minute that all exist well
	// before the minute they are due at; more CronJobs take longer, and
	// from 10,000 on they are given another minute. Their schedule names
	// that minute alone, so none fires at a minute on the way.
	var due time.Time
	if v.history && lead <= 0 {
		// The histories take as long again as the creates: the minute
		// before the due one leaves no room for them.
		return r, fmt.Errorf("the variant %q needs -lead", v.name)
	}
	if lead > 0 {
		from := time.Now()
		if v.history {
			// The histories are written after the creates, and take as long.
			from = from.Add(createTime(n))
		}
		due = dueAfterLead(from, n)
	} else {
		for time.Now().Second() > latestStartSecond(n) {
			time.Sleep(200 * time.Millisecond)
		}
		due = time.Now().Truncate(time.Minute).Add(time.Duration(1+n/10000) * time.Minute)
	}
	var cronJobs []*cronv1.CronJob
	if v.start != nil || v.controllersJobs || v.informers {
		var err error
		// A schedule that names the due minute alone.
		schedule := fmt.Sprintf("%d %d * * *", due.UTC().Minute(), due.UTC().Hour())
		if cronJobs, err = createCronJobs(ctx, kube, cron, ns, n, v.builtin, schedule); err != nil {
			return r, err
		}
		if v.history {
			if err := fillRunHistories(ctx, cron, cronJobs, due); err != nil {
				return r, err
			}
		}
	}
	var floorJobs []*batchv1.Job
	if v.controllersJobs {
		for _, cj := range cronJobs {
			j := job.New(cj, due, time.UTC)
			j.Finalizers = slices.DeleteFunc(j.Finalizers, func(f string) bool { return f == job.RunRecordFinalizer })
			floorJobs = append(floorJobs, j)
		}
	}
	late := func() error {
		if time.Until(due) < max(lead, 10*time.Second) {
			return fmt.Errorf("creating %d CronJobs took too long to be due at %v: %w", n, due, errLate)
		}
		return nil
	}
	if err := late(); err != nil {
		return r, err
	}
	// Synced before the window of counted requests opens, as a
	// controller's informers are, and early enough to leave the margin
	// again: a sync that ends late would start the creates late.
	if v.informers {
		syncCtx, cancel := context.WithDeadline(ctx, due.Add(-10*time.Second))
		stop, err := watchLikeAController(ctx, syncCtx, v.floor, cron)
		cancel()
		if err != nil {
			return r, err
		}
		defer stop()
	}
	if err := late(); err != nil {
		return r, err
	}

	w, err := watchJobs(ctx, kube, ns)
	if err != nil {
		return r, err
	}
	defer w.Stop()
	var updates *updateWatch
	if v.start != nil {
		if updates, err = watchUpdates(ctx, cluster.Kubeconfig, ns, v.builtin); err != nil {
			return r, err
		}
		defer updates.stop()
	}
	var outside *outsideWatch
	if watcher == "kubectl" {
		if outside, err = watchFromOutside(ctx, cluster.Kubeconfig, ns); err != nil {
			return r, err
		}
		defer outside.stop()
	}
	// The window of counted requests opens once the first syncs of the new
	// CronJobs (and any garbage collection after the previous run) are
	// over, so it holds the firing alone.
	before, err := settled(ctx, cluster, due.Add(-2*time.Second))
	if err != nil {
		return r, err
	}
	// settled gives up a second before its deadline: a return that late
	// means the requests never stopped, so the controller was still busy
	// (its first syncs of the new CronJobs) when the minute came.
	r.BusyAtMinute = time.Until(due) < 3500*time.Millisecond
	cpuBefore := cpuSeconds(proc)
	serverCPU := func() float64 { return cpuOf(cluster.Pid("kube-apiserver"), cluster.Pid("etcd")) }
	serverBefore := serverCPU()
	// The skew is made in the burst, from the minute to the last Job; the
	// window's tail holds the status writes, which the Jobs do not wait for.
	cpuNow := func() map[string]float64 {
		return map[string]float64{
			"server":     serverCPU(),
			"controller": cpuSeconds(proc),
			"harness":    cpuOf(os.Getpid()),
			"kcm":        cpuOf(cluster.Pid("kube-controller-manager")),
			"watcher":    cpuOf(outsidePid(outside)),
		}
	}
	atDue := make(chan map[string]float64, 1)
	go func() {
		time.Sleep(time.Until(due))
		atDue <- cpuNow()
	}()
	if profileDir != "" {
		// The API server over the same window, for every variant, on
		// request: what each costs it is the other half of the firing.
		var profiling sync.WaitGroup
		defer profiling.Wait()
		name := fmt.Sprintf("n%d-%d.pb.gz", n, due.Unix())
		variantName := strings.NewReplacer(" ", "", ",", "-", ":", "", "'", "").Replace(v.name)
		if v.pprofAddr != "" {
			profiling.Go(func() {
				time.Sleep(time.Until(due.Add(-time.Second)))
				file := filepath.Join(profileDir, "cpu-"+variantName+"-"+name)
				if err := saveProfile("http://"+v.pprofAddr+"/debug/pprof/profile?seconds="+strconv.Itoa(profileSeconds), file); err != nil {
					fmt.Fprintln(os.Stderr, "loadbench: profile:", err)
				}
			})
		}
		if profileAPIServer {
			profiling.Go(func() {
				time.Sleep(time.Until(due.Add(-time.Second)))
				data, err := kube.CoreV1().RESTClient().Get().AbsPath("/debug/pprof/profile").
					Param("seconds", strconv.Itoa(profileSeconds)).Timeout(time.Duration(profileSeconds+30) * time.Second).DoRaw(ctx)
				if err == nil {
					err = os.WriteFile(filepath.Join(profileDir, "apiserver-"+variantName+"-"+name), data, 0o644)
				}
				if err != nil {
					fmt.Fprintln(os.Stderr, "loadbench: API server profile:", err)
				}
			})
		}
	}
	if v.start == nil {
		go floor(ctx, v.floor, ns, n, due, floorJobs, cmp.Or(v.inFlight, floorConcurrency))
	}
	// How many statuses record the minute 58 s into it, as the sustained
	// run counts them: a firing's status writes may follow its Jobs, but
	// not into the next minute.
	recordedBy58, fullBy58 := make(chan int, 1), make(chan int, 1)
	if v.start != nil {
		go func() {
			time.Sleep(time.Until(due.Add(58 * time.Second)))
			recorded, full, err := statusesAt(ctx, kube, cron, ns, v.builtin, due)
			if err != nil {
				recorded, full = -1, -1
			}
			recordedBy58 <- recorded
			fullBy58 <- full
		}()
	}

	seen := map[string]time.Time{}
	owners := map[string]int{}
	deadline := time.After(time.Until(due) + 2*time.Minute)
collect:
	for len(seen) < n {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				return r, fmt.Errorf("watch closed")
			}
			j, isJob := ev.Object.(*batchv1.Job)
			if !isJob || ev.Type != watch.Added {
				continue
			}
			if !forMinute(j.Name, due) {
				// A Job of another minute: the CronJobs' schedule names
				// the due minute alone, so a fault. Not this firing.
				r.OtherMinute++
				continue
			}
			if _, dup := seen[j.Name]; !dup {
				seen[j.Name] = time.Now()
				owner := j.Name
				if ref := metav1.GetControllerOf(j); ref != nil {
					owner = string(ref.UID)
				}
				owners[owner]++
			}
		case <-deadline:
			break collect
		}
	}
	// The burst ends with the last Job; a run that missed some (a CronJob
	// without its Job) has no end to measure to, and keeps no burst CPU.
	burstEnd, burstStart := cpuNow(), <-atDue
	if len(owners) == n {
		r.BurstCPU = map[string]float64{}
		for k, v := range burstEnd {
			r.BurstCPU[k] = v - burstStart[k]
		}
	}
	// Status writes may follow the Jobs: count until no request on
	// cronjobs or jobs has been made for three seconds, but stop before the
	// next minute, when every CronJob is due again: other components' reads
	// can keep the API server from ever going quiet, and the window must
	// not take in the next firing (nor the controller be stopped in it).
	next := due.Add(time.Minute)
	for !next.After(time.Now().Add(time.Second)) {
		next = next.Add(time.Minute)
	}
	after, err := settled(ctx, cluster, next.Add(-time.Second))
	if err != nil {
		return r, err
	}
	if v.start != nil {
		r.RecordedBy58, r.FullHistories = <-recordedBy58, <-fullBy58
	}
	r.CPUSeconds = cpuSeconds(proc) - cpuBefore
	r.ServerCPUSeconds = serverCPU() - serverBefore
	r.PeakRSSMiB = peakRSSMiB(proc)
	r.Missing = n - len(owners)
	for _, c := range owners {
		r.Duplicates += c - 1
	}
	if outside != nil {
		// The separate watch may trail the harness's: it gets a little
		// longer to see as many.
		for _, at := range outside.wait(len(seen), func(name string) bool { return forMinute(name, due) }, time.Now().Add(30*time.Second)) {
			r.OutsideSkews = append(r.OutsideSkews, at.Sub(due).Seconds())
		}
		slices.Sort(r.OutsideSkews)
		r.OutsideP99 = quantile(r.OutsideSkews, 0.99)
	}
	var lastSeen time.Time
	for _, at := range seen {
		r.Skews = append(r.Skews, at.Sub(due).Seconds())
		if at.After(lastSeen) {
			lastSeen = at
		}
	}
	r.FirstStatusWrite, r.StatusWritesInBurst = -1, -1
	if updates != nil {
		// Without every Job seen there is no last Job to count up to.
		inBurst, _, ok := updates.between(due, lastSeen)
		if ok && len(seen) == n {
			r.StatusWritesInBurst = inBurst
		}
		if _, first, ok := updates.between(due, time.Now()); ok && !first.IsZero() {
			r.FirstStatusWrite = first.Sub(due).Seconds()
		}
	}
	slices.Sort(r.Skews)
	r.P50, r.P99, r.Max = quantile(r.Skews, 0.5), quantile(r.Skews, 0.99), quantile(r.Skews, 1)
	if r.OtherMinute > 0 {
		fmt.Fprintf(os.Stderr, "loadbench: %d Jobs of another minute seen (their CronJobs' schedule names the due minute alone, so this is a fault to look into); not counted\n", r.OtherMinute)
	}
	b, a := requests(before), requests(after)
	r.RequestsPerFiring = (a.all - b.all) / float64(n)
	r.WritesPerFiring = (a.writes - b.writes) / float64(n)
	r.Lists = a.lists - b.lists
	return r, nil
}

// watchJobs watches the Jobs of ns (all namespaces for "") from now on; a
// watch the API server ends is resumed from the last version seen, so no
// Job goes unseen.
func watchJobs(ctx context.Context, kube kubernetes.Interface, ns string) (*toolswatch.RetryWatcher, error) {
	list, err := kube.BatchV1().Jobs(ns).List(ctx, metav1.ListOptions{Limit: 1})
	if err != nil {
		return nil, err
	}
	return resumeFrom(ctx, list.ResourceVersion, kube.BatchV1().Jobs(ns).Watch)
}

// resumeFrom watches with w from resourceVersion rv on, resuming from the
// last version seen whenever the API server ends the watch.
func resumeFrom(ctx context.Context, rv string, w func(context.Context, metav1.ListOptions) (watch.Interface, error)) (*toolswatch.RetryWatcher, error) {
	return toolswatch.NewRetryWatcherWithContext(ctx, rv, &cache.ListWatch{WatchFuncWithContext: w})
}

// watchLikeAController starts informers of Jobs through kube and of
// CronJobs through cron, over all namespaces, so that the API server serves
// the watches this controller costs it (its Backfill and Calendar informers,
// idle in a firing, are left out); their handlers only count the events.
// Unlike this controller's, they cache whole objects, so the harness's CPU
// for them is likely more than this controller's (not measured). It waits
// for them to sync until syncCtx ends, and returns what stops them.
func watchLikeAController(ctx, syncCtx context.Context, kube kubernetes.Interface, cron clientset.Interface) (func(), error) {
	ctx, cancel := context.WithCancel(ctx)
	jobs := kubeinformers.NewSharedInformerFactory(kube, 0)
	cronJobs := croninformers.NewSharedInformerFactory(cron, 0)
	var events atomic.Int64
	count := cache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { events.Add(1) },
		UpdateFunc: func(_, _ any) { events.Add(1) },
		DeleteFunc: func(any) { events.Add(1) },
	}
	for _, inf := range []cache.SharedIndexInformer{jobs.Batch().V1().Jobs().Informer(), cronJobs.Batch().V1().CronJobs().Informer()} {
		if _, err := inf.AddEventHandler(count); err != nil {
			cancel()
			return nil, err
		}
	}
	jobs.Start(ctx.Done())
	cronJobs.Start(ctx.Done())
	stop := func() {
		cancel()
		jobs.Shutdown()
		cronJobs.Shutdown()
		fmt.Fprintf(os.Stderr, "loadbench: the floor's informers handled %d events\n", events.Load())
	}
	for _, synced := range []map[reflect.Type]bool{jobs.WaitForCacheSync(syncCtx.Done()), cronJobs.WaitForCacheSync(syncCtx.Done())} {
		for typ, ok := range synced {
			if !ok {
				stop()
				return nil, fmt.Errorf("informer of %v did not sync 10 s before the minute: %w", typ, errLate)
			}
		}
	}
	return stop, nil
}

// releaseLeftovers removes the finalizers of the Jobs left in ns, the
// harness's cleanup once no controller runs there.
func releaseLeftovers(kube kubernetes.Interface, ns string) {
	ctx := context.Background()
	jobs, err := kube.BatchV1().Jobs(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return
	}
	left := 0
	for _, j := range jobs.Items {
		if len(j.Finalizers) == 0 {
			continue
		}
		left++
		_, _ = kube.BatchV1().Jobs(ns).Patch(ctx, j.Name, types.JSONPatchType, []byte(`[{"op":"remove","path":"/metadata/finalizers"}]`), metav1.PatchOptions{})
	}
	if left > 0 {
		fmt.Fprintf(os.Stderr, "loadbench: %d Jobs held a finalizer when the controller stopped (running Jobs keep the run-record finalizer); released\n", left)
	}
}

// createCronJobs creates n CronJobs on schedule whose Jobs are created
// suspended (no pod runs), and returns those of this controller's kind as
// created (none for builtin).
func createCronJobs(ctx context.Context, kube kubernetes.Interface, cron clientset.Interface, ns string, n int, builtin bool, schedule string) ([]*cronv1.CronJob, error) {
	return createCronJobsOf(ctx, kube, cron, ns, n, builtin, schedule, cronJobForm{template: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{
		Suspend: ptr.To(true),
		Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyNever,
			Containers:    []corev1.Container{{Name: "c", Image: "busybox"}},
		}},
	}}})
}

// cronJobForm is what the CronJobs' Jobs are and how many finished Jobs
// each CronJob keeps (nil: the kind's default).
type cronJobForm struct {
	template                     batchv1.JobTemplateSpec
	successfulLimit, failedLimit *int32
}

// createCronJobsOf creates n CronJobs on schedule, of form, and returns
// those of this controller's kind as created (none for builtin).
func createCronJobsOf(ctx context.Context, kube kubernetes.Interface, cron clientset.Interface, ns string, n int, builtin bool, schedule string, form cronJobForm) ([]*cronv1.CronJob, error) {
	utc := "Etc/UTC"
	tmpl := form.template
	var wg sync.WaitGroup
	var mu sync.Mutex
	var created []*cronv1.CronJob
	errs := make(chan error, n)
	sem := make(chan struct{}, 64)
	for i := range n {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			name := fmt.Sprintf("cj-%05d", i)
			var err error
			if builtin {
				_, err = kube.BatchV1().CronJobs(ns).Create(ctx, &batchv1.CronJob{
					ObjectMeta: metav1.ObjectMeta{Name: name},
					Spec: batchv1.CronJobSpec{Schedule: schedule, TimeZone: ptr.To(utc), JobTemplate: tmpl,
						SuccessfulJobsHistoryLimit: form.successfulLimit, FailedJobsHistoryLimit: form.failedLimit},
				}, metav1.CreateOptions{})
			} else {
				var made *cronv1.CronJob
				made, err = cron.BatchV1().CronJobs(ns).Create(ctx, &cronv1.CronJob{
					ObjectMeta: metav1.ObjectMeta{Name: name},
					Spec: cronv1.CronJobSpec{Schedule: schedule, TimeZone: ptr.To(utc), JobTemplate: tmpl,
						SuccessfulJobsHistoryLimit: form.successfulLimit, FailedJobsHistoryLimit: form.failedLimit},
				}, metav1.CreateOptions{})
				if err == nil {
					mu.Lock()
					created = append(created, made)
					mu.Unlock()
				}
			}
			if err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	return created, <-errs
}

// saveProfile downloads a pprof profile into file.
func saveProfile(url, file string) error {
	f, err := os.Create(file)
	if err != nil {
		return err
	}
	if err := fetch(url, f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// fetch copies the body of a GET of url to w.
func fetch(url string, w io.Writer) error {
	resp, err := http.Get(url)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s", url, resp.Status)
	}
	_, err = io.Copy(w, resp.Body)
	return err
}

// forMinute reports whether a Job's name marks it as the run of the minute
// due: this controller and the floor end it in the Unix seconds of the
// scheduled time, kube-controller-manager in the minutes.
func forMinute(name string, due time.Time) bool {
	return strings.HasSuffix(name, fmt.Sprintf("-%d", due.Unix())) || strings.HasSuffix(name, fmt.Sprintf("-%d", due.Unix()/60))
}

// latestStartSecond is the last second of a minute at which a run may
// start creating n CronJobs to have them all in place by the minute's end.
func latestStartSecond(n int) int {
	return max(45-n/250, 5)
}

// settled waits until the request counters on cronjobs and jobs stop
// moving for three seconds (or until deadline) and returns the metrics then.
func settled(ctx context.Context, cluster *localcluster.Cluster, deadline time.Time) (string, error) {
	return settledBy(ctx, cluster, deadline, func(a, b string) bool { return requests(a) == requests(b) })
}

// settledBy waits until same holds of the metrics a second apart three
// times in a row (or until deadline) and returns the metrics then.
func settledBy(ctx context.Context, cluster *localcluster.Cluster, deadline time.Time, same func(before, now string) bool) (string, error) {
	last, err := cluster.APIServerMetrics(ctx)
	if err != nil {
		return "", err
	}
	quiet := 0
	for quiet < 3 && time.Until(deadline) > time.Second {
		time.Sleep(time.Second)
		now, err := cluster.APIServerMetrics(ctx)
		if err != nil {
			return "", err
		}
		if same(last, now) {
			quiet++
		} else {
			quiet = 0
		}
		last = now
	}
	return last, nil
}

// floorConcurrency is how many creates the floor keeps in flight: as many
// as this controller's default workers.
const floorConcurrency = 20

// floor creates n Jobs at due as fast as the API server and kube's client
// limits (none, or QPS and burst -qps) allow: jobs when given, else bare
// ones.
func floor(ctx context.Context, kube kubernetes.Interface, ns string, n int, due time.Time, jobs []*batchv1.Job, inFlight int) {
	// Connect before the minute, as a controller's informers have.
	_, _ = kube.BatchV1().Jobs(ns).List(ctx, metav1.ListOptions{Limit: 1})
	time.Sleep(time.Until(due))
	var wg sync.WaitGroup
	sem := make(chan struct{}, inFlight)
	for i := range n {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			if jobs != nil {
				_, _ = kube.BatchV1().Jobs(ns).Create(ctx, jobs[i], metav1.CreateOptions{})
				return
			}
			_, _ = kube.BatchV1().Jobs(ns).Create(ctx, &batchv1.Job{
				ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("floor-%05d-%d", i, due.Unix())},
				Spec: batchv1.JobSpec{Suspend: ptr.To(true), Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
					RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{Name: "c", Image: "busybox"}},
				}}},
			}, metav1.CreateOptions{})
		})
	}
	wg.Wait()
}

// counts are API requests on cronjobs and jobs, WATCH excepted.
type counts struct{ all, writes, lists float64 }

// requests sums apiserver_request_total over cronjobs and jobs.
func requests(metrics string) counts {
	var total counts
	for _, line := range strings.Split(metrics, "\n") {
		if !strings.HasPrefix(line, "apiserver_request_total{") {
			continue
		}
		if !strings.Contains(line, `resource="cronjobs"`) && !strings.Contains(line, `resource="jobs"`) {
			continue
		}
		if strings.Contains(line, `verb="WATCH"`) {
			continue
		}
		fields := strings.Fields(line)
		v, err := strconv.ParseFloat(fields[len(fields)-1], 64)
		if err != nil {
			continue
		}
		total.all += v
		switch {
		case strings.Contains(line, `verb="LIST"`):
			total.lists += v
		case strings.Contains(line, `verb="POST"`), strings.Contains(line, `verb="PUT"`),
			strings.Contains(line, `verb="PATCH"`), strings.Contains(line, `verb="DELETE"`):
			total.writes += v
		}
	}
	return total
}

func cpuSeconds(p *exec.Cmd) float64 {
	if p == nil {
		return 0
	}
	return cpuOf(p.Process.Pid)
}

// cpuOf sums the CPU seconds the processes pids have spent (0 for a pid of
// 0 or a process gone).
func cpuOf(pids ...int) float64 {
	var sum float64
	for _, pid := range pids {
		if pid == 0 {
			continue
		}
		data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			continue
		}
		fields := strings.Fields(string(data)[strings.LastIndexByte(string(data), ')')+2:])
		utime, _ := strconv.ParseFloat(fields[11], 64)
		stime, _ := strconv.ParseFloat(fields[12], 64)
		sum += (utime + stime) / 100 // USER_HZ
	}
	return sum
}

func peakRSSMiB(p *exec.Cmd) float64 {
	if p == nil {
		return 0
	}
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", p.Process.Pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, _ := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 64)
			return kb / 1024
		}
	}
	return 0
}

func quantile(sorted []float64, q float64) float64 {
	if len(sorted) == 0 {
		return math.NaN()
	}
	i := int(math.Ceil(q*float64(len(sorted)))) - 1
	return sorted[max(i, 0)]
}

// middle is the median of sorted xs: of an even count, the mean of the two
// in the middle (of two runs, not the larger).
func middle(xs []float64) float64 {
	if len(xs)%2 == 0 {
		return (xs[len(xs)/2-1] + xs[len(xs)/2]) / 2
	}
	return xs[len(xs)/2]
}

// medians takes the median of each figure over the runs.
func medians(runs []result) result {
	med := func(get func(result) float64) float64 {
		var xs []float64
		for _, r := range runs {
			xs = append(xs, get(r))
		}
		slices.Sort(xs)
		return middle(xs)
	}
	return result{
		P50:               med(func(r result) float64 { return r.P50 }),
		P99:               med(func(r result) float64 { return r.P99 }),
		OutsideP99:        med(func(r result) float64 { return r.OutsideP99 }),
		Max:               med(func(r result) float64 { return r.Max }),
		Missing:           int(med(func(r result) float64 { return float64(r.Missing) })),
		Duplicates:        int(med(func(r result) float64 { return float64(r.Duplicates) })),
		CPUSeconds:        med(func(r result) float64 { return r.CPUSeconds }),
		PeakRSSMiB:        med(func(r result) float64 { return r.PeakRSSMiB }),
		RequestsPerFiring: med(func(r result) float64 { return r.RequestsPerFiring }),
		WritesPerFiring:   med(func(r result) float64 { return r.WritesPerFiring }),
		Lists:             med(func(r result) float64 { return r.Lists }),
		ServerCPUSeconds:  med(func(r result) float64 { return r.ServerCPUSeconds }),
	}
}

// fillRunHistories gives each CronJob a full run history of daily runs
// before due, their Jobs gone, as the controller keeps it once a CronJob
// has run that often; the controller's own first status writes may come
// between, hence the retries on conflict.
func fillRunHistories(ctx context.Context, cron clientset.Interface, cronJobs []*cronv1.CronJob, due time.Time) error {
	var g errgroup.Group
	g.SetLimit(64)
	for _, cj := range cronJobs {
		client := cron.BatchV1().CronJobs(cj.Namespace)
		g.Go(func() error {
			return retry.RetryOnConflict(retry.DefaultRetry, func() error {
				got, err := client.Get(ctx, cj.Name, metav1.GetOptions{})
				if err != nil {
					return err
				}
				got.Status.RecentRuns = nil
				for i := range cronv1.DefaultRunHistoryLimit {
					at := due.AddDate(0, 0, -1-i)
					got.Status.RecentRuns = append(got.Status.RecentRuns, scheduledRun(fmt.Sprintf("%s-%d", cj.Name, at.Unix()), at, true))
				}
				got.Status.LastSuccessfulTime = got.Status.RecentRuns[0].CompletionTime
				_, err = client.UpdateStatus(ctx, got, metav1.UpdateOptions{})
				return err
			})
		})
	}
	return g.Wait()
}
