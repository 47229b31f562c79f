//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"

	cronv1 "github.com/cronjob-controller/cronjob-controller/pkg/apis/batch/v1"
	"github.com/cronjob-controller/cronjob-controller/pkg/job"
)

// crashInterval is the schedule of the crash-window fleet.
const crashInterval = 10 * time.Second

// runLog records every Job created in a namespace, from an informer's add
// events: the Jobs of this test are deleted within seconds (TTL, by hand),
// so a listing at the end would miss most of them.
type runLog struct {
	mu sync.Mutex
	// uids are the Jobs seen per name; a name is a CronJob's run, so two
	// UIDs under one name are one scheduled time run twice.
	uids map[string]map[types.UID]bool
	// runs are the scheduled times seen per CronJob UID.
	runs  map[types.UID]map[time.Time]bool
	added chan string
}

func (l *runLog) saw(obj any) {
	j, ok := obj.(*batchv1.Job)
	if !ok {
		return
	}
	ref := metav1.GetControllerOf(j)
	at, scheduled := job.ScheduledAt(j)
	l.mu.Lock()
	if l.uids[j.Name] == nil {
		l.uids[j.Name] = map[types.UID]bool{}
	}
	l.uids[j.Name][j.UID] = true
	if ref != nil && scheduled {
		if l.runs[ref.UID] == nil {
			l.runs[ref.UID] = map[time.Time]bool{}
		}
		l.runs[ref.UID][at] = true
	}
	l.mu.Unlock()
	select {
	case l.added <- j.Name:
	default:
	}
}

func watchRuns(t *testing.T, ns string) *runLog {
	t.Helper()
	l := &runLog{uids: map[string]map[types.UID]bool{}, runs: map[types.UID]map[time.Time]bool{}, added: make(chan string, 1024)}
	factory := informers.NewSharedInformerFactoryWithOptions(env.kube, 0, informers.WithNamespace(ns))
	informer := factory.Batch().V1().Jobs().Informer()
	if _, err := informer.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: l.saw}); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	factory.Start(stop)
	t.Cleanup(func() {
		close(stop)
		factory.Shutdown()
	})
	if !cache.WaitForCacheSync(stop, informer.HasSynced) {
		t.Fatal("the Job informer did not sync")
	}
	return l
}

// count returns the scheduled times with more than one Job, and the due
// times in (first, until] of each CronJob that got no Job.
func (l *runLog) count(until time.Time) (twice, missing int, details []string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for name, uids := range l.uids {
		if len(uids) > 1 {
			twice += len(uids) - 1
			details = append(details, fmt.Sprintf("%s ran %d times", name, len(uids)))
		}
	}
	for owner, runs := range l.runs {
		times := make([]time.Time, 0, len(runs))
		for at := range runs {
			times = append(times, at)
		}
		sort.Slice(times, func(i, j int) bool { return times[i].Before(times[j]) })
		for at := times[0].Add(crashInterval); !at.After(until); at = at.Add(crashInterval) {
			if !runs[at] {
				missing++
				details = append(details, fmt.Sprintf("CronJob %s: no Job for %s", owner, at.Format(time.TimeOnly)))
			}
		}
	}
	return twice, missing, details
}

// The crash window (a Job gone before the status records its run), from outside: a fleet due every 10 s whose
// Jobs finish at once and go at once (ttlSecondsAfterFinished: 0, and half
// of them deleted by hand as soon as they appear), the controller SIGKILLed
// at random moments of the burst of creates and restarted. Its client is
// slowed so a burst lasts about two seconds: each kill lands between Jobs
// created and their statuses written. No scheduled time may get two Jobs,
// and no due time none.
func TestCrashWindow(t *testing.T) {
	n, kills := 60, 5
	if *soak {
		n, kills = 200, 20
	}
	args := []string{"-kube-api-qps=50", "-kube-api-burst=10"}
	ns := newNamespace(t)
	runs := watchRuns(t, ns)
	handDeleted := map[string]bool{}
	for i := range n {
		cj := createCronJob(t, cronJob(ns, fmt.Sprintf("crash-%03d", i), "@every 10s", func(cj *cronv1.CronJob) {
			cj.Spec.JobTemplate.Spec.TTLSecondsAfterFinished = ptr.To[int32](0)
			cj.Spec.CatchUpPolicy = cronv1.CatchUpAll
		}))
		if i%2 == 1 {
			handDeleted[string(cj.UID)] = true
		}
	}
	// A user deleting every Job of half the fleet the moment it appears.
	stopDeleting := make(chan struct{})
	var deleter sync.WaitGroup
	deleter.Go(func() {
		factory := informers.NewSharedInformerFactoryWithOptions(env.kube, 0, informers.WithNamespace(ns))
		informer := factory.Batch().V1().Jobs().Informer()
		_, _ = informer.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: func(obj any) {
			j, ok := obj.(*batchv1.Job)
			if !ok || j.DeletionTimestamp != nil {
				return
			}
			if ref := metav1.GetControllerOf(j); ref != nil && handDeleted[string(ref.UID)] {
				go func() {
					_ = env.kube.BatchV1().Jobs(ns).Delete(context.Background(), j.Name, metav1.DeleteOptions{
						PropagationPolicy: ptr.To(metav1.DeletePropagationBackground)})
				}()
			}
		}})
		factory.Start(stopDeleting)
		<-stopDeleting
		factory.Shutdown()
	})
	defer func() {
		close(stopDeleting)
		deleter.Wait()
	}()

	ctrl := startController(t, args...)
	start := time.Now()
	for i := range kills {
		// The next burst: the first Job created after a quiet moment.
		drain(runs.added)
		select {
		case <-runs.added:
		case <-time.After(3 * crashInterval):
			t.Fatalf("kill %d: no Job created for %v", i+1, 3*crashInterval)
		}
		time.Sleep(time.Duration(200+rand.IntN(1800)) * time.Millisecond) // the moment of the burst
		ctrl.kill()
		// Long enough for the Jobs to finish and go (TTL, hand deletes).
		time.Sleep(time.Duration(2000+rand.IntN(2000)) * time.Millisecond)
		ctrl = startController(t, args...)
	}
	// Running undisturbed, every CronJob catches up and runs on.
	time.Sleep(2 * crashInterval)
	until := time.Now().Add(-crashInterval)
	ctrl.stop(t)
	time.Sleep(2 * time.Second) // the last adds reach the informer

	twice, missing, details := runs.count(until)
	runs.mu.Lock()
	jobs := 0
	for _, uids := range runs.uids {
		jobs += len(uids)
	}
	runs.mu.Unlock()
	t.Logf("REPORT crash-window: cronjobs=%d kills=%d duration=%v jobs=%d twice=%d missing=%d",
		n, kills, time.Since(start).Round(time.Second), jobs, twice, missing)
	if twice > 0 || missing > 0 {
		if len(details) > 20 {
			details = details[:20]
		}
		t.Errorf("%d scheduled times ran twice, %d due times got no Job: %v", twice, missing, details)
	}
}

// drain empties c.
func drain(c chan string) {
	for {
		select {
		case <-c:
		default:
			return
		}
	}
}

// releaseAllCommand is the uninstall one-liner of docs/deploying.md: it removes the
// controller's run-record and backfill-record finalizers, and only those,
// from every Job.
const releaseAllCommand = `kubectl get jobs -A -o jsonpath='{range .items[*]}{.metadata.namespace}{" "}{.metadata.name}{" "}{.metadata.finalizers}{"\n"}{end}' \
  | grep -E 'batch.tutorial.kubebuilder.io/(run|backfill)-record' \
  | while read -r ns name _; do kubectl patch job -n "$ns" "$name" --type=strategic \
      -p '{"metadata":{"$deleteFromPrimitiveList/finalizers":["batch.tutorial.kubebuilder.io/run-record","batch.tutorial.kubebuilder.io/backfill-record"]}}'; done`

// Uninstalled before its Jobs went: the one-liner of docs/deploying.md releases them, and
// leaves every other finalizer alone.
func TestUninstallReleasesJobs(t *testing.T) {
	page, err := os.ReadFile(filepath.Join(env.root, "docs", "deploying.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(page), releaseAllCommand) {
		t.Fatalf("docs/deploying.md does not hold the uninstall one-liner the test runs:\n%s", releaseAllCommand)
	}
	ns := newNamespace(t)
	const other = "example.com/keep"
	for name, ours := range map[string]string{"left-behind": job.RunRecordFinalizer, "backfill-left-behind": job.BackfillRecordFinalizer} {
		j := &batchv1.Job{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Finalizers: []string{other, ours}},
			Spec:       *cronJob(ns, "x", "@hourly", stuck).Spec.JobTemplate.Spec.DeepCopy(),
		}
		if _, err := env.kube.BatchV1().Jobs(ns).Create(context.Background(), j, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if err := env.kube.BatchV1().Jobs(ns).Delete(context.Background(), j.Name, metav1.DeleteOptions{PropagationPolicy: ptr.To(metav1.DeletePropagationBackground)}); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command("sh", "-c", releaseAllCommand)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+env.kubeconfig)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("the one-liner failed: %v\n%s", err, out)
	}
	for _, name := range []string{"left-behind", "backfill-left-behind"} {
		got, err := env.kube.BatchV1().Jobs(ns).Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got.Finalizers, []string{other}) {
			t.Errorf("%s: finalizers after the one-liner %q, want only %q", name, got.Finalizers, other)
		}
		// Let the namespace go.
		got.Finalizers = nil
		if _, err := env.kube.BatchV1().Jobs(ns).Update(context.Background(), got, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
}
