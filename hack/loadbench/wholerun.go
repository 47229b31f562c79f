package main

// The whole-run benchmark (-whole-run): what one run costs kube-apiserver
// and etcd from its firing until its Job is gone, when the Job really runs.
// N CronJobs (-n, 2000 by default) each fire once, at one minute
// (`M H * * *` in Etc/UTC), created at least -lead (75 s by default, at
// least 60 s) before it so the controller is idle at the minute. Their Jobs
// are not suspended: the plane's kube-controller-manager runs its Job
// controller, the scheduler binds the pods to the simulated node, kwok runs
// them (a pod whose command is `true` succeeds at once), and the history
// limits of 0 make the CronJob controller delete each Job as soon as it
// sees it finished; the garbage collector then deletes its pod. The Job
// controller's, scheduler's, kwok's and garbage collector's own costs are
// in the figures of both controllers alike.
//
// From the minute it measures the API server's and etcd's CPU until every
// Job of the firing has been created, has finished and has been deleted,
// and no request on cronjobs, jobs, pods or events has been made for three
// seconds (at most wholeRunCap), and over exactly the first two minutes
// from the firing; the writes of the window by resource and verb, from
// apiserver_request_total; the Events left in the namespace by the
// component that reported them; the missing and twice-started runs.
//
//	go run ./hack/loadbench -whole-run -n 2000 -repeats 3

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	clientset "github.com/cronjob-controller/cronjob-controller/pkg/generated/clientset/versioned"
	"github.com/cronjob-controller/cronjob-controller/pkg/localcluster"
)

// wholeRun: the run is the whole-run benchmark (-whole-run).
var wholeRun bool

// wholeRunNodePods is the simulated node's pod capacity in the whole-run
// benchmark: the largest -n, so that every pod of a firing fits on the node
// at once even if none had finished, and no pod waits for room.
var wholeRunNodePods int

const (
	wholeRunVariants = "this controller, defaults|kube-controller-manager, QPS"
	// wholeRunCap is the longest the window runs from the minute.
	wholeRunCap = 4 * time.Minute
	// wholeRunKCMQPS is the client QPS and burst of the plane's
	// kube-controller-manager (its Job controller and garbage collector),
	// high enough that its client limit is not what paces the pods.
	wholeRunKCMQPS = 500
	// wholeRunLead is -lead's default in this benchmark, and minLead its
	// least: the controller's first syncs of the new CronJobs are over well
	// before the minute.
	wholeRunLead = 75 * time.Second
	minLead      = 60 * time.Second
)

// wholeRunDefaults gives -n, -variants and -lead their defaults for this
// benchmark where the command line did not set them.
func wholeRunDefaults(counts, variants *string) error {
	set := map[string]bool{}
	flag.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if !set["n"] {
		*counts = "2000"
	}
	if !set["variants"] {
		*variants = wholeRunVariants
	}
	if !set["lead"] {
		lead = wholeRunLead
	}
	if lead < minLead {
		return fmt.Errorf("-whole-run needs -lead of at least %v, so the controller is idle at the minute", minLead)
	}
	for _, text := range strings.Split(*counts, ",") {
		n, err := strconv.Atoi(text)
		if err != nil || n < 1 {
			return fmt.Errorf("-n %q: want positive counts", *counts)
		}
		wholeRunNodePods = max(wholeRunNodePods, n, localcluster.DefaultNodePods)
	}
	return nil
}

// wholeRunPlane adds to the benchmarks' plane what runs a Job: the Job
// controller, a client limit that does not pace it, and room on the node.
func wholeRunPlane(cfg *localcluster.Config) {
	cfg.Controllers = "job," + cfg.Controllers
	cfg.ControllerManagerFlags = []string{fmt.Sprintf("--kube-api-qps=%d", wholeRunKCMQPS), fmt.Sprintf("--kube-api-burst=%d", wholeRunKCMQPS)}
	cfg.NodePods = wholeRunNodePods
}

// wholeResult is one whole run.
type wholeResult struct {
	Variant string `json:"variant"`
	N       int    `json:"n"`
	// ServerCPU2Min is the CPU seconds kube-apiserver and etcd spent in the
	// two minutes from the firing; ServerCPU from the firing to the end of
	// the window (every Job pruned and three quiet seconds, or the cap),
	// Window seconds after the minute.
	ServerCPU2Min float64 `json:"serverCPU2Min"`
	ServerCPU     float64 `json:"serverCPU"`
	Window        float64 `json:"window"`
	// ControllerCPU is the controller under test's CPU in the window,
	// PlaneKCMCPU the plane's kube-controller-manager's (the Job controller
	// and the garbage collector).
	ControllerCPU float64 `json:"controllerCPU"`
	PlaneKCMCPU   float64 `json:"planeKCMCPU"`
	// Seconds after the minute at which the watch saw the last Job of the
	// firing created, finished and deleted; NaN when some never were.
	Created  float64 `json:"-"`
	Finished float64 `json:"-"`
	Pruned   float64 `json:"-"`
	// Missing are CronJobs with no Job of the minute, Duplicates Jobs beyond
	// one for a CronJob; NotFinished and NotPruned Jobs of the firing the
	// window ended with; OtherMinute Jobs of another minute.
	Missing     int `json:"missing"`
	Duplicates  int `json:"duplicates"`
	NotFinished int `json:"notFinished"`
	NotPruned   int `json:"notPruned"`
	OtherMinute int `json:"otherMinute"`
	// Writes counts the window's writes by "resource[/subresource] VERB",
	// the node's and the components' heartbeats (nodes, leases) left out.
	Writes map[string]float64 `json:"writes"`
	// Reads counts the window's GETs and LISTs as Writes does: this
	// harness's scrapes of /metrics are no resource's, its Job watch one
	// long request.
	Reads map[string]float64 `json:"reads"`
	// Events counts the Event objects left in the namespace by "reporting
	// component reason", Occurrences the occurrences they record (an aggregated
	// Event counts each); FailedScheduling the occurrences of that reason
	// (a pod that waited for room on the node).
	Events           map[string]float64 `json:"events"`
	Occurrences      map[string]float64 `json:"occurrences"`
	FailedScheduling int                `json:"failedScheduling"`
}

// jobOfRun is what the watch saw of one Job of the firing.
type jobOfRun struct {
	owner                     string
	created, finished, pruned time.Time
}

// wholeRuns runs every controller variant repeats times for each count,
// variants taking turns run by run, and prints the tables.
func wholeRuns(ctx context.Context, cluster *localcluster.Cluster, kube kubernetes.Interface, cron clientset.Interface, variants []variant, counts string, repeats int, jsonOut string) error {
	variants = slices.DeleteFunc(slices.Clone(variants), func(v variant) bool { return v.start == nil })
	if len(variants) == 0 {
		return errors.New("-whole-run is for controllers: -variants names none")
	}
	node, err := kube.CoreV1().Nodes().Get(ctx, localcluster.NodeName, metav1.GetOptions{})
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "loadbench: the simulated node takes %d pods\n", node.Status.Allocatable.Pods().Value())
	var all []wholeResult
	defer func() {
		if jsonOut == "" || len(all) == 0 {
			return
		}
		if data, err := json.MarshalIndent(all, "", " "); err == nil {
			_ = os.WriteFile(jsonOut, data, 0o644)
		}
	}()
	for _, text := range strings.Split(counts, ",") {
		n, err := strconv.Atoi(text)
		if err != nil {
			return err
		}
		runs := make([][]wholeResult, len(variants))
		for i := range repeats {
			for j, v := range variants {
				fmt.Fprintf(os.Stderr, "loadbench: whole run, %s, N=%d, run %d of %d\n", v.name, n, i+1, repeats)
				r, err := wholeRunOnce(ctx, cluster, kube, cron, v, n)
				for tries := 1; errors.Is(err, errLate) && tries < 3; tries++ {
					fmt.Fprintln(os.Stderr, "loadbench:", err, "; again in a fresh namespace")
					r, err = wholeRunOnce(ctx, cluster, kube, cron, v, n)
				}
				if err != nil {
					return err
				}
				printWholeRun(r, i+1)
				runs[j] = append(runs[j], r)
				all = append(all, r)
			}
		}
		printWholeTables(variants, runs, n)
	}
	return nil
}

// wholeRunOnce is one whole run of v: see the file's comment.
func wholeRunOnce(ctx context.Context, cluster *localcluster.Cluster, kube kubernetes.Interface, cron clientset.Interface, v variant, n int) (wholeResult, error) {
	r := wholeResult{Variant: v.name, N: n}
	ns := fmt.Sprintf("whole-%d", time.Now().UnixNano())
	if _, err := kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		return r, err
	}
	// The namespace goes, and is gone, before the next run's starts: its
	// CronJobs', Events' and any Job's deletes are no other run's cost.
	defer deleteNamespace(kube, ns)

	proc, err := v.start(cluster.Kubeconfig)
	if err != nil {
		return r, err
	}
	defer func() {
		_ = proc.Process.Signal(syscall.SIGTERM)
		_ = proc.Wait()
	}()

	due := dueAfterLead(time.Now(), n)
	schedule := fmt.Sprintf("%d %d * * *", due.UTC().Minute(), due.UTC().Hour())
	if _, err := createCronJobsOf(ctx, kube, cron, ns, n, v.builtin, schedule, cronJobForm{
		template: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyNever,
			// Succeeds at once on the simulated node (stages/pod-exit.yaml).
			Containers: []corev1.Container{{Name: "c", Image: "busybox", Command: []string{"true"}}},
		}}}},
		successfulLimit: ptr.To[int32](0),
		failedLimit:     ptr.To[int32](0),
	}); err != nil {
		return r, err
	}
	if time.Until(due) < lead {
		return r, fmt.Errorf("creating %d CronJobs took too long to leave %v before %v: %w", n, lead, due, errLate)
	}

	w, err := watchJobs(ctx, kube, ns)
	if err != nil {
		return r, err
	}
	defer w.Stop()

	before, err := settledBy(ctx, cluster, due.Add(-2*time.Second), sameRunRequests)
	if err != nil {
		return r, err
	}
	serverCPU := func() float64 { return cpuOf(cluster.Pid("kube-apiserver"), cluster.Pid("etcd")) }
	type sample struct{ server, controller, kcm float64 }
	cpuNow := func() sample {
		return sample{server: serverCPU(), controller: cpuOf(proc.Process.Pid), kcm: cpuOf(cluster.Pid("kube-controller-manager"))}
	}
	atDue, atTwoMinutes := make(chan sample, 1), make(chan sample, 1)
	go func() {
		time.Sleep(time.Until(due))
		atDue <- cpuNow()
		time.Sleep(time.Until(due.Add(2 * time.Minute)))
		atTwoMinutes <- cpuNow()
	}()

	jobs := map[string]*jobOfRun{}
	owners := map[string]int{}
	pruned := 0
	deadline := time.After(time.Until(due.Add(wholeRunCap)))
watching:
	for len(owners) < n || pruned < len(jobs) {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				return r, errors.New("watch closed")
			}
			j, isJob := ev.Object.(*batchv1.Job)
			if !isJob {
				continue
			}
			if !forMinute(j.Name, due) {
				if ev.Type == watch.Added {
					r.OtherMinute++
				}
				continue
			}
			now := time.Now()
			seen := jobs[j.Name]
			if seen == nil {
				seen = &jobOfRun{owner: j.Name, created: now}
				if ref := metav1.GetControllerOf(j); ref != nil {
					seen.owner = string(ref.UID)
				}
				jobs[j.Name] = seen
				owners[seen.owner]++
			}
			if seen.finished.IsZero() && jobFinished(j) {
				seen.finished = now
			}
			if ev.Type == watch.Deleted && seen.pruned.IsZero() {
				seen.pruned = now
				pruned++
			}
		case <-deadline:
			break watching
		}
	}
	// The pods of the last Jobs, their Events and the controllers' last
	// status writes may follow the last delete: the window ends when the
	// API server has had none of them for three seconds.
	after, err := settledBy(ctx, cluster, due.Add(wholeRunCap), sameRunRequests)
	if err != nil {
		return r, err
	}
	end, start := cpuNow(), <-atDue
	r.Window = time.Since(due).Seconds()
	r.ServerCPU = end.server - start.server
	r.ControllerCPU = end.controller - start.controller
	r.PlaneKCMCPU = end.kcm - start.kcm
	r.ServerCPU2Min = (<-atTwoMinutes).server - start.server

	r.Created, r.Finished, r.Pruned = math.Inf(-1), math.Inf(-1), math.Inf(-1)
	for _, j := range jobs {
		r.Created = max(r.Created, j.created.Sub(due).Seconds())
		if j.finished.IsZero() {
			r.NotFinished++
			r.Finished = math.NaN()
		} else {
			r.Finished = max(r.Finished, j.finished.Sub(due).Seconds())
		}
		if j.pruned.IsZero() {
			r.NotPruned++
			r.Pruned = math.NaN()
		} else {
			r.Pruned = max(r.Pruned, j.pruned.Sub(due).Seconds())
		}
	}
	r.Missing = n - len(owners)
	for _, c := range owners {
		r.Duplicates += c - 1
	}
	if r.Missing > 0 {
		r.Created, r.Finished, r.Pruned = math.NaN(), math.NaN(), math.NaN()
	}
	inWindow := func(verbs []string) map[string]float64 {
		b, a, d := runRequests(before, verbs), runRequests(after, verbs), map[string]float64{}
		for k, v := range a {
			if v > b[k] {
				d[k] = v - b[k]
			}
		}
		return d
	}
	r.Writes, r.Reads = inWindow(writeVerbs), inWindow(readVerbs)
	r.Events, r.Occurrences, r.FailedScheduling, err = eventsBy(ctx, kube, ns)
	return r, err
}

// jobFinished reports whether j has its Complete or Failed condition.
func jobFinished(j *batchv1.Job) bool {
	for _, c := range j.Status.Conditions {
		if (c.Type == batchv1.JobComplete || c.Type == batchv1.JobFailed) && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}

// deleteNamespace deletes ns and waits until it is gone; any Job still
// holding this controller's run-record finalizer is released (the
// controller is stopped by then).
func deleteNamespace(kube kubernetes.Interface, ns string) {
	ctx := context.Background()
	_ = kube.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{})
	releaseLeftovers(kube, ns)
	for {
		if _, err := kube.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{}); err != nil {
			return
		}
		time.Sleep(time.Second)
	}
}

// eventsBy counts the Events of ns by the component that reported them and
// their reason: objects, and the occurrences they record; and the
// occurrences of FailedScheduling.
func eventsBy(ctx context.Context, kube kubernetes.Interface, ns string) (objects, occurrences map[string]float64, failedScheduling int, err error) {
	events, err := kube.CoreV1().Events(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, nil, 0, err
	}
	objects, occurrences = map[string]float64{}, map[string]float64{}
	for _, e := range events.Items {
		by := cmp.Or(e.ReportingController, e.Source.Component, "unknown") + " " + e.Reason
		times := max(int(e.Count), 1)
		if e.Series != nil {
			times = max(times, int(e.Series.Count))
		}
		objects[by]++
		occurrences[by] += float64(times)
		if e.Reason == "FailedScheduling" {
			failedScheduling += times
		}
	}
	return objects, occurrences, failedScheduling, nil
}

// runResources are the resources a run's requests touch; the window is
// quiet when none of their counters (WATCH aside) moves.
var runResources = []string{"cronjobs", "jobs", "pods", "events"}

// metricLabel matches one label of a metrics line.
var metricLabel = regexp.MustCompile(`(\w+)="([^"]*)"`)

// requestLines calls each with the labels and the value of every
// apiserver_request_total line.
func requestLines(metrics string, each func(labels map[string]string, v float64)) {
	for _, line := range strings.Split(metrics, "\n") {
		rest, ok := strings.CutPrefix(line, "apiserver_request_total{")
		if !ok {
			continue
		}
		body, value, ok := strings.Cut(rest, "} ")
		if !ok {
			continue
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(value), 64)
		if err != nil {
			continue
		}
		labels := map[string]string{}
		for _, m := range metricLabel.FindAllStringSubmatch(body, -1) {
			labels[m[1]] = m[2]
		}
		each(labels, v)
	}
}

// sameRunRequests reports whether no request on the run's resources, WATCH
// aside, was made between two scrapes.
func sameRunRequests(before, now string) bool {
	sum := func(metrics string) float64 {
		var total float64
		requestLines(metrics, func(l map[string]string, v float64) {
			if l["verb"] != "WATCH" && slices.Contains(runResources, l["resource"]) {
				total += v
			}
		})
		return total
	}
	return sum(before) == sum(now)
}

// writeVerbs are the verbs that write, readVerbs those that read (WATCH
// aside: a watch is one long request).
var (
	writeVerbs = []string{"POST", "PUT", "PATCH", "APPLY", "DELETE", "DELETECOLLECTION"}
	readVerbs  = []string{"GET", "LIST"}
)

// background are resources written whether a run goes on or not: the
// node's and the components' heartbeats, and the API server's own
// endpoints for the kubernetes Service (refused, 422, every 10 s: the
// plane's address is loopback).
var background = []string{"leases", "nodes", "endpoints", "endpointslices"}

// runWrites counts the writes by "resource[/subresource] VERB", with the
// code after it when the write was refused, background left out.
func runWrites(metrics string) map[string]float64 { return runRequests(metrics, writeVerbs) }

// runRequests counts the requests of verbs as runWrites does.
func runRequests(metrics string, verbs []string) map[string]float64 {
	out := map[string]float64{}
	requestLines(metrics, func(l map[string]string, v float64) {
		if !slices.Contains(verbs, l["verb"]) || slices.Contains(background, l["resource"]) {
			return
		}
		key := l["resource"]
		if l["subresource"] != "" {
			key += "/" + l["subresource"]
		}
		if l["group"] == "events.k8s.io" {
			key = "events.k8s.io " + key
		}
		key += " " + l["verb"]
		if !strings.HasPrefix(l["code"], "2") {
			key += " " + l["code"]
		}
		out[key] += v
	})
	return out
}

// writeOrder is the order of the writes table, the rest following by name.
var writeOrder = []string{
	"cronjobs/status PUT", "cronjobs/status PATCH", "cronjobs/status APPLY", "cronjobs PUT", "cronjobs PATCH",
	"jobs POST", "jobs PATCH", "jobs PUT", "jobs DELETE", "jobs/status PUT", "jobs/status PATCH",
	"pods POST", "pods PATCH", "pods DELETE", "pods/status PATCH", "pods/status PUT", "pods/binding POST",
	"events POST", "events PATCH", "events.k8s.io events POST", "events.k8s.io events PATCH",
}

// cronJobControllersWrite reports whether a write is the CronJob
// controller's: apiserver_request_total names no client, so this is by
// reasoning. Only the CronJob controller writes CronJobs, and Jobs
// themselves (creates, its finalizer's release, the history limits'
// deletes); the Job controller writes Jobs' status and pods, the scheduler
// pods/binding, kwok pods/status, the garbage collector pods' deletes.
// Events are every component's (their table says whose).
func cronJobControllersWrite(key string) bool {
	return strings.HasPrefix(key, "cronjobs") || (strings.HasPrefix(key, "jobs ") && !strings.HasPrefix(key, "jobs/"))
}

// cronJobControllersEvent reports whether an Events key ("component
// reason") is the CronJob controller's: both controllers report as
// cronjob-controller.
func cronJobControllersEvent(key string) bool {
	return strings.HasPrefix(key, "cronjob-controller ")
}

// writtenBy says who makes a write, by the reasoning of
// cronJobControllersWrite.
func writtenBy(key string) string {
	switch {
	case cronJobControllersWrite(key):
		return "CronJob controller"
	case strings.HasPrefix(key, "jobs/status"), strings.HasPrefix(key, "pods POST"), strings.HasPrefix(key, "pods PATCH"):
		return "Job controller"
	case strings.HasPrefix(key, "pods/binding"):
		return "scheduler"
	case strings.HasPrefix(key, "pods/status"):
		return "kwok (the node)"
	case key == "pods DELETE":
		return "garbage collector"
	case strings.HasPrefix(key, "pods DELETE"):
		// Refused: the pod was gone. kwok deletes a pod it sees
		// with a deletion timestamp too.
		return "garbage collector or kwok"
	case strings.Contains(key, "events"):
		return "all (Events table)"
	}
	return "?"
}

func printWholeRun(r wholeResult, run int) {
	var writes []string
	for _, k := range sortedKeys(r.Writes) {
		writes = append(writes, fmt.Sprintf("%s %.0f", k, r.Writes[k]))
	}
	var reads []string
	for _, k := range sortedKeys(r.Reads) {
		reads = append(reads, fmt.Sprintf("%s %.0f", k, r.Reads[k]))
	}
	var events []string
	for _, k := range sortedKeys(r.Events) {
		events = append(events, fmt.Sprintf("%s %.0f (%.0f occurrences)", k, r.Events[k], r.Occurrences[k]))
	}
	fmt.Fprintf(os.Stderr, "loadbench: whole run, %s, N=%d, run %d: API server + etcd %.2f CPU s in the first 2 min (%.2f ms/run), %.2f CPU s in the window of %.1f s (%.2f ms/run); controller %.2f, plane's kube-controller-manager %.2f CPU s; last Job created %.1f s, finished %.1f s, pruned %.1f s after the minute; missing %d, twice %d, not finished %d, not pruned %d, other minute %d, FailedScheduling %d\n  writes: %s\n  reads: %s\n  Events: %s\n",
		r.Variant, r.N, run, r.ServerCPU2Min, r.ServerCPU2Min*1000/float64(r.N), r.ServerCPU, r.Window, r.ServerCPU*1000/float64(r.N),
		r.ControllerCPU, r.PlaneKCMCPU, r.Created, r.Finished, r.Pruned, r.Missing, r.Duplicates, r.NotFinished, r.NotPruned, r.OtherMinute, r.FailedScheduling,
		strings.Join(writes, ", "), strings.Join(reads, ", "), strings.Join(events, ", "))
}

// printWholeTables prints the medians of each variant's runs at n, then the
// writes per run by resource and verb, then the Events per run by
// component.
func printWholeTables(variants []variant, runs [][]wholeResult, n int) {
	med := func(rs []wholeResult, get func(wholeResult) float64) float64 {
		var xs []float64
		for _, r := range rs {
			xs = append(xs, get(r))
		}
		// NaN (some Job never got there) sorts last, as the worst.
		slices.SortFunc(xs, func(a, b float64) int {
			switch {
			case math.IsNaN(a) && math.IsNaN(b):
				return 0
			case math.IsNaN(a):
				return 1
			case math.IsNaN(b):
				return -1
			}
			return cmp.Compare(a, b)
		})
		return middle(xs)
	}
	perRun := func(m map[string]float64, keep func(string) bool) float64 {
		var sum float64
		for k, v := range m {
			if keep(k) {
				sum += v
			}
		}
		return sum / float64(n)
	}
	fmt.Printf("\nWhole runs, N=%d, medians of %d (API server + etcd CPU per run from the firing; writes per run over the window):\n\n", n, len(runs[0]))
	fmt.Println("| variant | N | API server + etcd CPU ms/run, first 2 min | API server + etcd CPU ms/run, firing to pruned and quiet | that window | last Job created | last finished | last pruned | missing | twice | not pruned | writes/run | the CronJob controller's writes/run | its Events/run | controller CPU ms/run | Job controller + GC CPU ms/run |")
	fmt.Println("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
	for j, v := range variants {
		rs := runs[j]
		fmt.Printf("| %s | %d | %.2f | %.2f | %.0f s | %.1f s | %.1f s | %.1f s | %.0f | %.0f | %.0f | %.2f | %.2f | %.2f | %.2f | %.2f |\n", v.name, n,
			med(rs, func(r wholeResult) float64 { return r.ServerCPU2Min * 1000 / float64(n) }),
			med(rs, func(r wholeResult) float64 { return r.ServerCPU * 1000 / float64(n) }),
			med(rs, func(r wholeResult) float64 { return r.Window }),
			med(rs, func(r wholeResult) float64 { return r.Created }),
			med(rs, func(r wholeResult) float64 { return r.Finished }),
			med(rs, func(r wholeResult) float64 { return r.Pruned }),
			med(rs, func(r wholeResult) float64 { return float64(r.Missing) }),
			med(rs, func(r wholeResult) float64 { return float64(r.Duplicates) }),
			med(rs, func(r wholeResult) float64 { return float64(r.NotPruned) }),
			med(rs, func(r wholeResult) float64 { return perRun(r.Writes, func(string) bool { return true }) }),
			med(rs, func(r wholeResult) float64 { return perRun(r.Writes, cronJobControllersWrite) }),
			med(rs, func(r wholeResult) float64 { return perRun(r.Occurrences, cronJobControllersEvent) }),
			med(rs, func(r wholeResult) float64 { return r.ControllerCPU * 1000 / float64(n) }),
			med(rs, func(r wholeResult) float64 { return r.PlaneKCMCPU * 1000 / float64(n) }))
	}

	table := func(title, first string, keys []string, get func(wholeResult, string) float64, by func(string) string) {
		header, rule := "| "+first+" |", "| --- |"
		if by != nil {
			header, rule = header+" made by |", rule+" --- |"
		}
		for _, v := range variants {
			header, rule = header+" "+v.name+" |", rule+" --- |"
		}
		fmt.Printf("\n%s\n\n%s\n%s\n", title, header, rule)
		for _, k := range keys {
			row := "| " + k + " |"
			if by != nil {
				row += " " + by(k) + " |"
			}
			for j := range variants {
				row += fmt.Sprintf(" %.3f |", med(runs[j], func(r wholeResult) float64 { return get(r, k) / float64(n) }))
			}
			fmt.Println(row)
		}
	}
	var writeKeys, readKeys, eventKeys []string
	for _, rs := range runs {
		for _, r := range rs {
			writeKeys = append(writeKeys, sortedKeys(r.Writes)...)
			readKeys = append(readKeys, sortedKeys(r.Reads)...)
			eventKeys = append(eventKeys, sortedKeys(r.Events)...)
		}
	}
	writeKeys = orderWrites(writeKeys)
	slices.Sort(readKeys)
	readKeys = slices.Compact(readKeys)
	slices.Sort(eventKeys)
	eventKeys = slices.Compact(eventKeys)
	table("Writes per run by resource and verb (medians; who makes each is by reasoning: the request metrics name no client):", "write",
		writeKeys, func(r wholeResult, k string) float64 { return r.Writes[k] }, writtenBy)
	table("Reads per run by resource and verb (medians; every client's, this harness's none but its one watch):", "read",
		readKeys, func(r wholeResult, k string) float64 { return r.Reads[k] }, nil)
	table("Events per run by reporting component and reason (medians; Event objects, then the occurrences they record):", "component and reason",
		slices.Concat(eventKeys, mapEach(eventKeys, func(k string) string { return k + ", occurrences" })),
		func(r wholeResult, k string) float64 {
			if c, ok := strings.CutSuffix(k, ", occurrences"); ok {
				return r.Occurrences[c]
			}
			return r.Events[k]
		}, nil)
}

// orderWrites puts the keys in writeOrder's order, the others after it by
// name, each once.
func orderWrites(keys []string) []string {
	slices.Sort(keys)
	keys = slices.Compact(keys)
	rank := func(k string) int {
		// A refused write ("pods DELETE 404") goes with its kind.
		if base, code, ok := cutLast(k); ok {
			if _, err := strconv.Atoi(code); err == nil {
				k = base
			}
		}
		if i := slices.Index(writeOrder, k); i >= 0 {
			return i
		}
		return len(writeOrder)
	}
	slices.SortStableFunc(keys, func(a, b string) int { return cmp.Compare(rank(a), rank(b)) })
	return keys
}

// cutLast cuts s around its last space.
func cutLast(s string) (before, after string, found bool) {
	if i := strings.LastIndexByte(s, ' '); i >= 0 {
		return s[:i], s[i+1:], true
	}
	return s, "", false
}

func sortedKeys(m map[string]float64) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func mapEach(xs []string, f func(string) string) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = f(x)
	}
	return out
}
