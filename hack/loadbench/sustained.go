package main

// The sustained run (-sustained MINUTES): N CronJobs due every minute, their
// Jobs never finishing (created suspended: no pods, no pruning), for
// MINUTES minutes in a row, one controller at a time. Per minute it reports
// the Jobs created within the minute, the statuses that record the minute's
// run before the next minute, the Jobs still holding this controller's
// run-record finalizer then, the CronJobs with no Job for the minute and
// those with two, the p99 skew and what kube-apiserver and etcd spent in
// the minute. A controller sustains N when every minute has all N Jobs and
// all N statuses in time, none missing and none twice.
//
//	go run ./hack/loadbench -n 10000 -sustained 5 -variants 'this controller, defaults|kube-controller-manager, QPS'

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"

	cronv1 "github.com/cronjob-controller/cronjob-controller/pkg/apis/batch/v1"
	clientset "github.com/cronjob-controller/cronjob-controller/pkg/generated/clientset/versioned"
	"github.com/cronjob-controller/cronjob-controller/pkg/job"
	"github.com/cronjob-controller/cronjob-controller/pkg/localcluster"
)

// minuteFigures is one minute of a sustained run.
type minuteFigures struct {
	minute                        time.Time
	created, recorded, finalizers int
	missing, duplicates           int
	p99                           float64
	serverCPU                     float64
}

// sustained runs v with n CronJobs due every minute for minutes minutes and
// prints one row per minute.
func sustained(ctx context.Context, cluster *localcluster.Cluster, kube kubernetes.Interface, cron clientset.Interface, v variant, n, minutes int) (sustains bool, err error) {
	if v.start == nil {
		return false, fmt.Errorf("%s: the sustained run is for controllers", v.name)
	}
	ns := fmt.Sprintf("sustained-%d", time.Now().UnixNano())
	if _, err := kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		return false, err
	}
	defer func() {
		_ = kube.CoreV1().Namespaces().Delete(context.Background(), ns, metav1.DeleteOptions{})
		releaseLeftovers(kube, ns)
	}()
	if _, err := createCronJobs(ctx, kube, cron, ns, n, v.builtin, "* * * * *"); err != nil {
		return false, err
	}

	// Every Job of the namespace, first seen when, and whose.
	type seenJob struct {
		at    time.Time
		owner string
	}
	var mu sync.Mutex
	seen := map[string]seenJob{}
	w, err := watchJobs(ctx, kube, ns)
	if err != nil {
		return false, err
	}
	defer w.Stop()
	go func() {
		for ev := range w.ResultChan() {
			j, ok := ev.Object.(*batchv1.Job)
			if !ok || ev.Type != watch.Added {
				continue
			}
			owner := j.Name
			if ref := metav1.GetControllerOf(j); ref != nil {
				owner = string(ref.UID)
			}
			mu.Lock()
			if _, dup := seen[j.Name]; !dup {
				seen[j.Name] = seenJob{at: time.Now(), owner: owner}
			}
			mu.Unlock()
		}
	}()

	proc, err := v.start(cluster.Kubeconfig)
	if err != nil {
		return false, err
	}
	defer func() {
		_ = proc.Process.Signal(syscall.SIGTERM)
		_ = proc.Wait()
	}()
	serverCPU := func() float64 { return cpuOf(cluster.Pid("kube-apiserver"), cluster.Pid("etcd")) }

	// The first minute counted is the first the controller has synced
	// every CronJob for: it starts at least 30 s before it.
	first := time.Now().Add(30 * time.Second).Truncate(time.Minute).Add(time.Minute)
	time.Sleep(time.Until(first))
	sustains = true
	fmt.Printf("\n%s, N=%d, due every minute for %d minutes:\n\n", v.name, n, minutes)
	fmt.Println("| minute | Jobs created within it | statuses recording it by +58 s | Jobs holding the run-record finalizer at +58 s | missing | twice | p99 skew | API server + etcd CPU s |")
	fmt.Println("| --- | --- | --- | --- | --- | --- | --- | --- |")
	for m := range minutes {
		minute := first.Add(time.Duration(m) * time.Minute)
		cpuFrom := serverCPU()
		time.Sleep(time.Until(minute.Add(58 * time.Second)))
		f := minuteFigures{minute: minute, serverCPU: serverCPU() - cpuFrom}
		f.recorded, f.finalizers, err = recordedAndHeld(ctx, kube, cron, ns, v.builtin, minute)
		if err != nil {
			return false, err
		}
		time.Sleep(time.Until(minute.Add(time.Minute)))
		mu.Lock()
		owners := map[string]int{}
		var skews []float64
		for name, s := range seen {
			if !forMinute(name, minute) {
				continue
			}
			owners[s.owner]++
			if s.at.Before(minute.Add(time.Minute)) {
				f.created++
			}
			skews = append(skews, s.at.Sub(minute).Seconds())
		}
		mu.Unlock()
		f.missing = n - len(owners)
		for _, c := range owners {
			f.duplicates += c - 1
		}
		slices.Sort(skews)
		if len(skews) > 0 {
			f.p99 = quantile(skews, 0.99)
		}
		fmt.Printf("| %s | %d | %d | %d | %d | %d | %.2f s | %.1f |\n", minute.UTC().Format("15:04"), f.created, f.recorded, f.finalizers, f.missing, f.duplicates, f.p99, f.serverCPU)
		if f.created != n || f.recorded != n || f.missing != 0 || f.duplicates != 0 {
			sustains = false
		}
	}
	fmt.Printf("\nsustained: %v\n", sustains)
	return sustains, nil
}

// recordedAndHeld counts the CronJobs of ns whose status records the run of
// minute (lastScheduleTime at or after it), and the Jobs holding the
// run-record finalizer, from the API server's watch cache.
func recordedAndHeld(ctx context.Context, kube kubernetes.Interface, cron clientset.Interface, ns string, builtin bool, minute time.Time) (recorded, held int, err error) {
	if recorded, _, err = statusesAt(ctx, kube, cron, ns, builtin, minute); err != nil {
		return 0, 0, err
	}
	jobs, err := kube.BatchV1().Jobs(ns).List(ctx, metav1.ListOptions{ResourceVersion: "0"})
	if err != nil {
		return 0, 0, err
	}
	for _, j := range jobs.Items {
		if slices.Contains(j.Finalizers, job.RunRecordFinalizer) {
			held++
		}
	}
	return recorded, held, nil
}

// statusesAt lists the namespace's CronJobs once and counts those whose
// status records minute (lastScheduleTime at or after it) and, of this
// controller's kind, those whose run history is full (spec.runHistoryLimit's
// default) and headed by the run of minute.
func statusesAt(ctx context.Context, kube kubernetes.Interface, cron clientset.Interface, ns string, builtin bool, minute time.Time) (recorded, fullHistory int, err error) {
	cached := metav1.ListOptions{ResourceVersion: "0"}
	if builtin {
		cjs, err := kube.BatchV1().CronJobs(ns).List(ctx, cached)
		if err != nil {
			return 0, 0, err
		}
		for _, cj := range cjs.Items {
			if t := cj.Status.LastScheduleTime; t != nil && !t.Time.Before(minute) {
				recorded++
			}
		}
		return recorded, 0, nil
	}
	cjs, err := cron.BatchV1().CronJobs(ns).List(ctx, cached)
	if err != nil {
		return 0, 0, err
	}
	for _, cj := range cjs.Items {
		if t := cj.Status.LastScheduleTime; t != nil && !t.Time.Before(minute) {
			recorded++
		}
		if rr := cj.Status.RecentRuns; len(rr) == cronv1.DefaultRunHistoryLimit && rr[0].ScheduledTime != nil && rr[0].ScheduledTime.Time.Equal(minute) {
			fullHistory++
		}
	}
	return recorded, fullHistory, nil
}

// sustainedRuns runs the sustained run for every variant that is a
// controller and every N, and says for each the N it sustained.
func sustainedRuns(ctx context.Context, cluster *localcluster.Cluster, kube kubernetes.Interface, cron clientset.Interface, variants []variant, counts []int, minutes int) error {
	var summary []string
	for _, v := range variants {
		if v.start == nil {
			continue
		}
		for _, n := range counts {
			fmt.Fprintf(os.Stderr, "loadbench: sustained, %s, N=%d, %d minutes\n", v.name, n, minutes)
			ok, err := sustained(ctx, cluster, kube, cron, v, n, minutes)
			if err != nil {
				return err
			}
			summary = append(summary, fmt.Sprintf("| %s | %d | %v |", v.name, n, ok))
		}
	}
	fmt.Printf("\n| variant | N | sustained %d minutes |\n| --- | --- | --- |\n%s\n", minutes, strings.Join(summary, "\n"))
	return nil
}
