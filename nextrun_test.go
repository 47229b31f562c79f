package main

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2/ktesting"
	"k8s.io/utils/ptr"

	cronv1 "github.com/cronjob-controller/cronjob-controller/pkg/apis/batch/v1"
	"github.com/cronjob-controller/cronjob-controller/pkg/control"
)

// A request the API server keeps answering 429 holds its caller for as many
// Retry-Afters as it meets: client-go waits each one out inside the call,
// until the context ends. These stand-ins hold a request that way.

// held records each request it holds, by name, then holds it until its
// context ends.
type held chan string

func (h held) hold(ctx context.Context, name string) error {
	h <- name
	<-ctx.Done()
	return fmt.Errorf("client rate limiter Wait returned an error: %w", ctx.Err())
}

// stalledReleases holds every finalizer release.
type stalledReleases struct {
	control.Jobs
	entered held
}

func (s *stalledReleases) ReleaseFinalizer(ctx context.Context, _, name string, _ types.UID, _ string, _ []string) error {
	return s.entered.hold(ctx, name)
}

// stalledDeletes holds every Job delete.
type stalledDeletes struct {
	control.Jobs
	entered held
}

func (s *stalledDeletes) Delete(ctx context.Context, _, name string, _ types.UID) error {
	return s.entered.hold(ctx, name)
}

// stalledStatus holds every status write.
type stalledStatus struct {
	control.CronJobs
	entered held
}

func (s *stalledStatus) UpdateStatus(ctx context.Context, cj *cronv1.CronJob) (*cronv1.CronJob, error) {
	return nil, s.entered.hold(ctx, cj.Name)
}

type syncResult struct {
	requeue time.Duration
	err     error
}

// syncInBackground runs one sync of the fixture's CronJob.
func syncInBackground(ctx context.Context, c *Controller, key cache.ObjectName) <-chan syncResult {
	done := make(chan syncResult, 1)
	go func() {
		requeue, err := c.syncHandler(ctx, key)
		done <- syncResult{requeue, err}
	}()
	return done
}

// awaitEntered waits for a stalled request to be made.
func awaitEntered(t *testing.T, entered <-chan string, what string) string {
	t.Helper()
	select {
	case name := <-entered:
		return name
	case <-time.After(wait.ForeverTestTimeout):
		t.Fatalf("no %s was made", what)
		return ""
	}
}

// awaitSync waits for a sync to return.
func awaitSync(t *testing.T, done <-chan syncResult, why string) syncResult {
	t.Helper()
	select {
	case r := <-done:
		return r
	case <-time.After(wait.ForeverTestTimeout):
		t.Fatalf("the sync has not returned: %s", why)
		return syncResult{}
	}
}

// syncHeldUntilNextRun syncs key while the API server holds one of its
// requests (entered), runs whileHeld (if any), moves the clock by toNextRun
// to the next run, and expects the sync to give the held request up at
// once, with no error, asking to come back at once. It returns the name the
// held request was for.
func syncHeldUntilNextRun(t *testing.T, ctx context.Context, f *fixture, c *Controller, key cache.ObjectName,
	entered held, toNextRun time.Duration, what string, whileHeld func()) string {
	t.Helper()
	done := syncInBackground(ctx, c, key)
	name := awaitEntered(t, entered, what)
	if whileHeld != nil {
		whileHeld()
	}
	f.clock.Step(toNextRun)
	r := awaitSync(t, done, "a "+what+" the API server holds holds the worker past the next run")
	if r.err != nil {
		t.Errorf("sync error %v, want none: the %s is left for the next sync", r.err, what)
	}
	if r.requeue <= 0 || r.requeue > time.Millisecond {
		t.Errorf("requeue after %v, want at once: the next run is due", r.requeue)
	}
	return name
}

// The finalizer release of a recorded run is bookkeeping: when the API
// server holds it (429 after 429), it must not hold the CronJob's worker
// past the next run, or that run starts late and, on a short schedule, is
// superseded by the one after. The sync gives the release up when the next
// run is due, with no error; the next sync starts that run first and then
// releases again.
func TestSlowReleaseNeverHoldsTheNextRun(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := newFixture(t, at(time.Second))
	f.cronJob = newCronJob()
	c, kubeFactory, _ := f.newController(ctx)
	key := cache.MetaObjectToName(f.cronJob)
	jobs := c.jobs
	stalled := &stalledReleases{Jobs: jobs, entered: make(held, 4)}
	c.jobs = stalled

	// 11:00, the next run, comes due while the release is held.
	if name := syncHeldUntilNextRun(t, ctx, f, c, key, stalled.entered, time.Hour-time.Second, "release", nil); name != jobName(topOfHour) {
		t.Fatalf("released %s, want the new Job %s", name, jobName(topOfHour))
	}
	if st := f.writtenStatus(); st == nil || len(st.Status.Active) != 1 {
		t.Fatalf("status written %+v, want the 10:00 run recorded before the release", st)
	}

	// The next sync starts the 11:00 run, then releases both Jobs.
	c.jobs = jobs
	created, err := f.kubeclient.BatchV1().Jobs("default").Get(ctx, jobName(topOfHour), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cacheJob(t, kubeFactory, created)
	f.kubeclient.ClearActions()
	if _, err := c.syncHandler(ctx, key); err != nil {
		t.Fatal(err)
	}
	writes := describe(f.kubeclient.Actions(), true)
	want := []string{"create jobs default/" + jobName(at(time.Hour)), "patch jobs default/" + jobName(topOfHour), "patch jobs default/" + jobName(at(time.Hour))}
	if !slices.Equal(writes, want) {
		t.Errorf("writes %q, want %q: the run first, then the releases", writes, want)
	}
}

// The status write records a run that has started already (its Job carries
// the run's time): when the API server holds it, the decided status is
// kept for the next sync, which comes when the next run is due.
func TestSlowStatusWriteNeverHoldsTheNextRun(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := newFixture(t, at(time.Second))
	f.cronJob = newCronJob()
	c, _, _ := f.newController(ctx)
	key := cache.MetaObjectToName(f.cronJob)
	cronJobs := c.cronJobs
	stalled := &stalledStatus{CronJobs: cronJobs, entered: make(held, 4)}
	c.cronJobs = stalled

	syncHeldUntilNextRun(t, ctx, f, c, key, stalled.entered, time.Hour-time.Second, "status write", nil)

	c.cronJobs = cronJobs
	if _, err := c.syncHandler(ctx, key); err != nil {
		t.Fatal(err)
	}
	st := f.writtenStatus()
	if st == nil {
		t.Fatal("no status written by the next sync")
	}
	var active []string
	for _, a := range st.Status.Active {
		active = append(active, a.Name)
	}
	if want := []string{jobName(topOfHour), jobName(at(time.Hour))}; !slices.Equal(active, want) {
		t.Errorf("active %q, want both runs %q: the kept status and the new run", active, want)
	}
}

// Pruning the history is bookkeeping too, and comes after the run is
// started (as kube-controller-manager does): a delete the API server holds
// neither delays the due run's create nor holds the worker past the next
// run.
func TestSlowHistoryDeleteNeverHoldsARun(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	cj := newCronJob(lastScheduled(at(-time.Hour)), func(cj *cronv1.CronJob) { cj.Spec.SuccessfulJobsHistoryLimit = ptr.To[int32](0) })
	f := newFixture(t, at(5*time.Second))
	f.cronJob = cj
	old := newJob(at(-time.Hour), succeeded)
	f.jobs = []*batchv1.Job{old}
	c, _, _ := f.newController(ctx)
	stalled := &stalledDeletes{Jobs: c.jobs, entered: make(held, 4)}
	c.jobs = stalled

	createdFirst := func() {
		if writes := describe(f.kubeclient.Actions(), true); !slices.Contains(writes, "create jobs default/"+jobName(topOfHour)) {
			t.Errorf("writes %q while the history delete is held, want the 10:00 run created first", writes)
		}
	}
	if name := syncHeldUntilNextRun(t, ctx, f, c, cache.MetaObjectToName(cj), stalled.entered, time.Hour-5*time.Second, "history delete", createdFirst); name != old.Name {
		t.Errorf("deleted %s, want %s", name, old.Name)
	}
}

// A sync that fails (here a release the API server refuses) is retried
// with backoff, which grows with each failure in a row up to 10 s; the
// next run must not wait for it: the CronJob is queued for its next run
// on error too.
func TestFailedSyncStillWakesForTheNextRun(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := newFixture(t, at(time.Hour-2*time.Second)) // 10:59:58
	f.cronJob = newCronJob(lastScheduled(at(0)))
	f.jobs = []*batchv1.Job{newJob(at(0), succeeded, holdingRecord)}
	c, _, _ := f.newController(ctx)
	key := cache.MetaObjectToName(f.cronJob)
	refused := 0
	c.jobs = &refusedReleases{Jobs: c.jobs, refused: &refused}
	// Earlier failures in a row: the next retry backs off 10 s.
	limiter := newRateLimiter()
	for range 12 {
		limiter.When(key)
	}
	c.queue.ShutDown()
	c.queue = workqueue.NewTypedRateLimitingQueueWithConfig(limiter,
		workqueue.TypedRateLimitingQueueConfig[cache.ObjectName]{Clock: f.clock})
	t.Cleanup(c.queue.ShutDown)

	c.queue.Add(key)
	c.processNextWorkItem(ctx)
	if refused == 0 {
		t.Fatal("no release was refused; the case tests nothing")
	}
	f.clock.Step(2 * time.Second) // 11:00
	got := make(chan cache.ObjectName, 1)
	go func() {
		k, _ := c.queue.Get()
		got <- k
	}()
	select {
	case k := <-got:
		if k != key {
			t.Errorf("queued %v, want %v", k, key)
		}
	case <-time.After(wait.ForeverTestTimeout):
		c.queue.ShutDown()
		t.Errorf("at 11:00 the CronJob is not queued: its run waits for the retry's backoff")
	}
}

// refusedReleases refuses every finalizer release.
type refusedReleases struct {
	control.Jobs
	refused *int
}

func (r *refusedReleases) ReleaseFinalizer(context.Context, string, string, types.UID, string, []string) error {
	*r.refused++
	return apierrors.NewInternalError(fmt.Errorf("etcd is sad"))
}
