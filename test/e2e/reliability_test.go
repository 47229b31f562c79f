//go:build e2e

package e2e

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	cronv1 "github.com/cronjob-controller/cronjob-controller/pkg/apis/batch/v1"
	"github.com/cronjob-controller/cronjob-controller/pkg/job"
)

// soak selects the long variants of the fault tests (make soak).
var soak = flag.Bool("soak", false, "run the long variants of the fault tests")

// fleetInterval is the schedule of the fleets in the fault tests.
const fleetInterval = 5 * time.Second

// fleet creates n CronJobs firing every fleetInterval whose Jobs are created
// suspended: they count as runs but start no pods, so hundreds of them fit
// on a small machine.
func fleet(t *testing.T, ns string, n int) []*cronv1.CronJob {
	t.Helper()
	return fleetOf(t, ns, n, "@every 5s", func(cj *cronv1.CronJob) {
		cj.Spec.JobTemplate.Spec.Suspend = ptr.To(true)
	})
}

// fleetOf creates n CronJobs fleet-NNN on schedule, each changed by opts.
func fleetOf(t *testing.T, ns string, n int, schedule string, opts ...func(*cronv1.CronJob)) []*cronv1.CronJob {
	t.Helper()
	var out []*cronv1.CronJob
	var mu sync.Mutex
	var wg sync.WaitGroup
	sem := make(chan struct{}, 20)
	for i := range n {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			cj := cronJob(ns, fmt.Sprintf("fleet-%04d", i), schedule, opts...)
			created, err := env.cron.BatchV1().CronJobs(ns).Create(context.Background(), cj, metav1.CreateOptions{})
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			out = append(out, created)
			mu.Unlock()
		})
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	return out
}

// runsByCronJob maps each CronJob's UID to the scheduled times of its Jobs,
// sorted, and counts the Jobs that share a scheduled time with another.
func runsByCronJob(t *testing.T, ns string) (map[string][]time.Time, int) {
	t.Helper()
	byOwner := map[string][]batchv1.Job{}
	for _, j := range listJobs(t, ns) {
		if ref := metav1.GetControllerOf(&j); ref != nil {
			byOwner[string(ref.UID)] = append(byOwner[string(ref.UID)], j)
		}
	}
	out := map[string][]time.Time{}
	duplicates := 0
	for uid, jobs := range byOwner {
		times := scheduledTimes(t, jobs)
		for i := 1; i < len(times); i++ {
			if times[i].Equal(times[i-1]) {
				duplicates++
			}
		}
		out[uid] = times
	}
	return out, duplicates
}

// everyRunAfter waits until each CronJob of the fleet has a Job scheduled
// after t, and returns when the last one appeared.
func everyRunAfter(t *testing.T, ns string, cronJobs []*cronv1.CronJob, after time.Time, timeout time.Duration) time.Time {
	t.Helper()
	eventually(t, timeout, fmt.Sprintf("a run after %s for every CronJob", after.Format(time.TimeOnly)), func() (bool, string) {
		runs, _ := runsByCronJob(t, ns)
		behind := 0
		for _, cj := range cronJobs {
			times := runs[string(cj.UID)]
			if len(times) == 0 || !times[len(times)-1].After(after) {
				behind++
			}
		}
		return behind == 0, fmt.Sprintf("%d of %d behind", behind, len(cronJobs))
	})
	return time.Now()
}

// checkGrid fails for every run lost between a CronJob's first and last
// Job: with a short outage, the most recent missed run starts on return, so
// consecutive runs are exactly one interval apart.
func checkGrid(t *testing.T, runs map[string][]time.Time) (total, lost int) {
	t.Helper()
	for uid, times := range runs {
		total += len(times)
		for i := 1; i < len(times); i++ {
			if gap := times[i].Sub(times[i-1]); gap > fleetInterval {
				lost += int(gap/fleetInterval) - 1
				t.Errorf("CronJob %s: no run between %v and %v", uid, times[i-1].Format(time.TimeOnly), times[i].Format(time.TimeOnly))
			}
		}
	}
	return total, lost
}

// The controller is SIGKILLed and restarted over and over while a fleet of
// CronJobs fires: no run gets two Jobs, and none is lost.
func TestSurvivesRepeatedKills(t *testing.T) {
	n, kills := 200, 10
	if *soak {
		n, kills = 500, 40
	}
	ns := newNamespace(t)
	cronJobs := fleet(t, ns, n)
	ctrl := startController(t)
	everyRunAfter(t, ns, cronJobs, time.Now(), 60*time.Second)

	var worstRecovery time.Duration
	for i := range kills {
		// The fault schedule itself: a random stretch of normal running.
		time.Sleep(time.Duration(1000+rand.IntN(3000)) * time.Millisecond)
		ctrl.kill()
		restarted := time.Now()
		ctrl = startController(t)
		// Every CronJob gets its run due at the restart (or the next one).
		done := everyRunAfter(t, ns, cronJobs, restarted.Add(-fleetInterval), 60*time.Second)
		worstRecovery = max(worstRecovery, done.Sub(restarted))
		t.Logf("kill %d: every CronJob caught up %v after the restart", i+1, done.Sub(restarted).Round(10*time.Millisecond))
	}
	everyRunAfter(t, ns, cronJobs, time.Now(), 60*time.Second)

	runs, duplicates := runsByCronJob(t, ns)
	total, lost := checkGrid(t, runs)
	if duplicates > 0 {
		t.Errorf("%d duplicate Jobs", duplicates)
	}
	t.Logf("REPORT repeated-kills: cronjobs=%d kills=%d jobs=%d duplicates=%d lost=%d worst-recovery=%v",
		n, kills, total, duplicates, lost, worstRecovery.Round(10*time.Millisecond))
}

// The API server goes away for 30 s: the controller keeps running, its
// informers recover without a restart, it catches up, and it retries at a
// bounded pace meanwhile.
func TestSurvivesAPIServerOutage(t *testing.T) {
	outage := 30 * time.Second
	testOutage(t, "kube-apiserver", outage, 50)
}

// etcd restarted under load: same promise.
func TestSurvivesEtcdRestart(t *testing.T) {
	testOutage(t, "etcd", 5*time.Second, 50)
}

func testOutage(t *testing.T, component string, outage time.Duration, n int) {
	ns := newNamespace(t)
	cronJobs := fleet(t, ns, n)
	metricsAddr := freeAddr(t)
	ctrl := startController(t, "-metrics-bind-address="+metricsAddr)
	everyRunAfter(t, ns, cronJobs, time.Now(), 60*time.Second)

	// Failed syncs are the retries: workqueue_retries_total also counts
	// every CronJob's wake-up for its next run (AddAfter).
	retriesBefore := metricValue(t, metricsAddr, `cronjob_controller_sync_errors_total`)
	if err := env.cluster.StopComponent(component); err != nil {
		t.Fatal(err)
	}
	stopped := time.Now()
	// The outage itself.
	time.Sleep(outage)
	select {
	case <-ctrl.done:
		t.Fatalf("the controller exited during the %s outage: %v", component, ctrl.err)
	default:
	}
	retries := metricValue(t, metricsAddr, `cronjob_controller_sync_errors_total`) - retriesBefore
	if err := env.cluster.StartComponent(context.Background(), component); err != nil {
		t.Fatal(err)
	}
	back := time.Now()
	done := everyRunAfter(t, ns, cronJobs, back.Add(-fleetInterval), 90*time.Second)
	everyRunAfter(t, ns, cronJobs, time.Now(), 60*time.Second)

	runs, duplicates := runsByCronJob(t, ns)
	if duplicates > 0 {
		t.Errorf("%d duplicate Jobs", duplicates)
	}
	// Runs due while the API server was away can only start on its return,
	// the most recent one per CronJob; no other run may be missing.
	total := 0
	for uid, times := range runs {
		total += len(times)
		for i := 1; i < len(times); i++ {
			gap := times[i].Sub(times[i-1])
			if gap > fleetInterval && !(times[i-1].Before(back) && times[i].After(stopped)) {
				t.Errorf("CronJob %s: no run between %v and %v, outside the outage", uid, times[i-1].Format(time.TimeOnly), times[i].Format(time.TimeOnly))
			}
		}
	}
	// Bounded, not a hot loop: the overall bucket lets 10 retries a second
	// through after a burst of 100, each CronJob has at most one retry
	// pending, and each still wakes at its own schedule times and fails once.
	if limit := 100 + 10*outage.Seconds() + float64(n) + float64(n)*outage.Seconds()/fleetInterval.Seconds(); retries > limit {
		t.Errorf("%v retries during a %v outage, more than the bound %v", retries, outage, limit)
	}
	t.Logf("REPORT %s-outage: outage=%v cronjobs=%d jobs=%d duplicates=%d retries-during-outage=%v recovery=%v",
		component, outage, n, total, duplicates, retries, done.Sub(back).Round(10*time.Millisecond))
}

// metricValue reads one sample from the controller's /metrics.
func metricValue(t *testing.T, addr, series string) float64 {
	t.Helper()
	code, body := httpGet("http://" + addr + "/metrics")
	if code != 200 {
		t.Fatalf("/metrics answered %d", code)
	}
	for _, line := range strings.Split(body, "\n") {
		if rest, ok := strings.CutPrefix(line, series+" "); ok {
			var v float64
			if _, err := fmt.Sscan(rest, &v); err != nil {
				t.Fatal(err)
			}
			return v
		}
	}
	return 0
}

// Edge cases with a defined outcome.
func TestHandEditedJobs(t *testing.T) {
	ns := newNamespace(t)
	startController(t)

	// A Job deleted by hand while active leaves status.active; later runs go on.
	active := createCronJob(t, cronJob(ns, "deleted-by-hand", "@every 3s", stuck, func(cj *cronv1.CronJob) {
		cj.Spec.ConcurrencyPolicy = cronv1.ForbidConcurrent
	}))
	first := firstActive(t, ns, active.Name)
	if err := env.kube.BatchV1().Jobs(ns).Delete(context.Background(), first, metav1.DeleteOptions{PropagationPolicy: ptr.To(metav1.DeletePropagationBackground)}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 20*time.Second, "a new run once the deleted Job left status.active", func() (bool, string) {
		cur := getCronJob(t, ns, active.Name)
		return len(cur.Status.Active) == 1 && cur.Status.Active[0].Name != first, fmt.Sprint(cur.Status.Active)
	})

	// A Job created by hand under a name the controller will use: the run is
	// not started, a Warning says why, and the foreign Job is left alone.
	squatted := createCronJob(t, cronJob(ns, "squatted", "0 0 1 1 *", func(cj *cronv1.CronJob) {
		cj.Spec.TimeZone = ptr.To("UTC")
		cj.Spec.Suspend = ptr.To(true)
	}))
	newYear := time.Date(time.Now().UTC().Year(), 1, 1, 0, 0, 0, 0, time.UTC)
	foreign := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: job.Name(squatted.Name, newYear), Namespace: ns},
		Spec:       *cronJob(ns, "x", "@hourly", stuck).Spec.JobTemplate.Spec.DeepCopy(),
	}
	if _, err := env.kube.BatchV1().Jobs(ns).Create(context.Background(), foreign, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	resumeAsIfLastRan(t, ns, squatted.Name, metav1.NewTime(newYear.AddDate(-1, 0, 0)))
	eventually(t, 20*time.Second, "a FailedCreate warning", func() (bool, string) {
		return hasEvent(t, ns, squatted.Name, corev1.EventTypeWarning, "FailedCreate")
	})
	j, err := env.kube.BatchV1().Jobs(ns).Get(context.Background(), foreign.Name, metav1.GetOptions{})
	if err != nil || metav1.GetControllerOf(j) != nil {
		t.Errorf("the foreign Job was touched: %v %+v", err, j)
	}
	if cur := getCronJob(t, ns, squatted.Name); len(cur.Status.Active) != 0 {
		t.Errorf("the foreign Job is listed active: %v", cur.Status.Active)
	}
}
