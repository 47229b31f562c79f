package main

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	core "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2/ktesting"
	"k8s.io/utils/ptr"

	cronv1 "github.com/cronjob-controller/cronjob-controller/pkg/apis/batch/v1"
	"github.com/cronjob-controller/cronjob-controller/pkg/planner"
	"github.com/cronjob-controller/cronjob-controller/pkg/slim"
)

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
// releases again. (A TTL: the Jobs hold the finalizer; the 09:00 one has
// finished, and the 10:00 sync's status write sees it finish.)
func TestSlowReleaseNeverHoldsTheNextRun(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := newFixture(t, at(time.Second))
	nine := newJob(at(-time.Hour), succeeded, holdingRecord, func(j *batchv1.Job) { j.Spec.TTLSecondsAfterFinished = ptr.To[int32](60) })
	f.cronJob = newCronJob(withTTL(60), lastScheduled(at(-time.Hour)), activeJobs(nine))
	f.jobs = []*batchv1.Job{nine}
	c, kubeFactory, _ := f.newController(ctx)
	key := cache.MetaObjectToName(f.cronJob)
	jobs := c.jobs
	stalled := &stalledReleases{Jobs: jobs, entered: make(held, 4)}
	c.jobs = stalled

	// 11:00, the next run, comes due while the release is held.
	if name := syncHeldUntilNextRun(t, ctx, f, c, key, stalled.entered, time.Hour-time.Second, "release", nil); name != nine.Name {
		t.Fatalf("released %s, want the finished Job %s", name, nine.Name)
	}
	if st := f.writtenStatus(); st == nil || len(st.Status.Active) != 1 || st.Status.Active[0].Name != jobName(topOfHour) {
		t.Fatalf("status written %+v, want the 10:00 run recorded and 09:00 seen finished before the release", st)
	}

	// The next sync starts the 11:00 run, then releases the finished Job;
	// the running ones keep theirs.
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
	want := []string{"create jobs default/" + jobName(at(time.Hour)), "patch jobs default/" + nine.Name}
	if !slices.Equal(writes, want) {
		t.Errorf("writes %q, want %q: the run first, then the release", writes, want)
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

// The status write, the one record of the runs just started, must not be
// starved by the best-effort bookkeeping (history deletes, plan.Releases)
// that shares the sync's bound: when a history delete or the release of a
// Job recorded earlier is held until the next run, the write must still
// land. A request held every time (a slow admission webhook on Job DELETE
// or PATCH, APF throttling) would otherwise leave the status unwritten sync
// after sync: runs recorded only in c.deferred, their Jobs never released
// (finalizers wait for a stored status), the history never pruned.
func TestHeldBookkeepingNeverStarvesTheStatusWrite(t *testing.T) {
	for _, tc := range []struct {
		name  string
		opts  []func(*cronv1.CronJob)
		old   *batchv1.Job
		stall func(c *Controller) <-chan string
	}{
		{
			name: "history delete held",
			opts: []func(*cronv1.CronJob){func(cj *cronv1.CronJob) { cj.Spec.SuccessfulJobsHistoryLimit = ptr.To[int32](0) }},
			old:  newJob(at(-time.Hour), succeeded),
			stall: func(c *Controller) <-chan string {
				s := &stalledDeletes{Jobs: c.jobs, entered: make(held, 4)}
				c.jobs = s
				return s.entered
			},
		},
		{
			// Failed (no completion time: listed active), its run
			// recorded: the status write that sees it finish lets the
			// finalizer go.
			name: "release of a recorded Job held",
			old:  newJob(at(-time.Hour), failed, holdingRecord),
			stall: func(c *Controller) <-chan string {
				s := &stalledReleases{Jobs: c.jobs, entered: make(held, 4)}
				c.jobs = s
				return s.entered
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, ctx := ktesting.NewTestContext(t)
			opts := append([]func(*cronv1.CronJob){lastScheduled(at(-time.Hour))}, tc.opts...)
			if tc.old.Status.CompletionTime == nil {
				opts = append(opts, activeJobs(tc.old))
			}
			cj := newCronJob(opts...)
			f := newFixture(t, at(5*time.Second))
			f.cronJob = cj
			f.jobs = []*batchv1.Job{tc.old}
			c, kubeFactory, _ := f.newController(ctx)
			entered := tc.stall(c)
			c.cronJobs = &ctxStatus{CronJobs: c.cronJobs}
			key := cache.MetaObjectToName(cj)

			for i, next := range []time.Time{at(time.Hour), at(2 * time.Hour)} {
				done := syncInBackground(ctx, c, key)
				// The first request held: the old Job's, or (releases
				// go in no set order) that of a Job this sync recorded.
				if name := awaitEntered(t, entered, "held request"); name != tc.old.Name && !strings.HasPrefix(name, "cj-") {
					t.Fatalf("sync %d: held request for %s, want one of the CronJob's Jobs", i, name)
				}
				f.clock.SetTime(next)
				if r := awaitSync(t, done, "the held request was not cut"); r.err != nil {
					t.Fatalf("sync %d: %v", i, r.err)
				}
				for len(entered) > 0 { // requests made after the cut, with an ended context
					<-entered
				}
				// The informer sees the Job the sync created.
				name := jobName(next.Add(-time.Hour))
				created, err := f.kubeclient.BatchV1().Jobs("default").Get(ctx, name, metav1.GetOptions{})
				if err != nil {
					t.Fatalf("sync %d created no %s: %v", i, name, err)
				}
				cacheJob(t, kubeFactory, created)
			}
			st := f.writtenStatus()
			if st == nil || st.Status.LastScheduleTime == nil || st.Status.LastScheduleTime.Time.Before(at(0)) {
				t.Errorf("after two syncs whose bookkeeping was held, the stored status %v records neither the 10:00 nor the 11:00 run: "+
					"the status write waits behind best-effort bookkeeping and is cut with it", st)
			}
		})
	}
}

// On error the CronJob is also queued for plan.RequeueAfter, which is not
// only the next run: the planner asks to look again in 1 s while a
// finished Job's run is not yet in the stored status (pruneHistory,
// planReleases). A status write that keeps failing is exactly that case;
// the failing sync must keep its per-item backoff (up to 10 s) rather than
// be retried every second past it and past the queue's global bucket (10/s
// for all CronJobs): with N such CronJobs, N failing syncs a second
// against an API server already in trouble. The next run is an hour away
// here; nothing is due.
func TestFailedSyncKeepsItsBackoffWhenNoRunIsDue(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := newFixture(t, at(10*time.Minute))
	f.cronJob = newCronJob(lastScheduled(at(-time.Hour)), func(cj *cronv1.CronJob) { cj.Spec.SuccessfulJobsHistoryLimit = ptr.To[int32](0) })
	f.jobs = []*batchv1.Job{newJob(at(0), succeeded)}
	c, _, _ := f.newController(ctx)
	refused := &refusedStatus{CronJobs: c.cronJobs}
	c.cronJobs = refused
	key := cache.MetaObjectToName(f.cronJob)
	limiter := newRateLimiter()
	for range 12 { // earlier failures in a row: the next retry backs off 10 s
		limiter.When(key)
	}
	c.queue.ShutDown()
	spy := &requeueSpy{TypedRateLimitingInterface: workqueue.NewTypedRateLimitingQueueWithConfig(limiter,
		workqueue.TypedRateLimitingQueueConfig[cache.ObjectName]{Clock: f.clock})}
	c.queue = spy
	t.Cleanup(spy.ShutDown)

	spy.Add(key)
	c.processNextWorkItem(ctx)
	if refused.refused == 0 || spy.rateLimited == 0 {
		t.Fatalf("refused %d, rate-limited %d: the case tests nothing", refused.refused, spy.rateLimited)
	}
	for _, d := range spy.after {
		if d < 10*time.Second {
			t.Errorf("a failed sync with no run due for %v is queued again after %v, ahead of its 10 s backoff",
				time.Hour-10*time.Minute, d)
		}
	}
}

// A status write that landed but whose answer the bound cut: the next sync
// starts the next run once, the write it makes from a stale cache
// conflicts and is retried, and once the cache shows the landed write the
// status converges with each run started once and the superseded 09:00
// run counted once.
func TestCutStatusWriteThatLandedConverges(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := newFixture(t, at(time.Second))
	f.cronJob = newCronJob(lastScheduled(at(-2 * time.Hour)))
	c, kubeFactory, cronFactory := f.newController(ctx)
	key := cache.MetaObjectToName(f.cronJob)
	landedWriteCutByTheNextRun(t, ctx, f, c, key)
	created, err := f.kubeclient.BatchV1().Jobs("default").Get(ctx, jobName(topOfHour), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cacheJob(t, kubeFactory, created)

	// The cache still shows the CronJob before the landed write.
	_, err = c.syncHandler(ctx, key)
	if err != nil && !apierrors.IsConflict(err) {
		t.Fatalf("second sync: %v", err)
	}
	// The watch delivers the landed write (and any later one).
	stored, err := f.client.BatchV1().CronJobs("default").Get(ctx, "cj", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cacheCronJob(t, cronFactory, stored)
	for _, name := range []string{jobName(at(time.Hour))} {
		if j, err := f.kubeclient.BatchV1().Jobs("default").Get(ctx, name, metav1.GetOptions{}); err == nil {
			cacheJob(t, kubeFactory, j)
		}
	}
	if _, err := c.syncHandler(ctx, key); err != nil {
		t.Fatalf("third sync: %v", err)
	}
	stored, err = f.client.BatchV1().CronJobs("default").Get(ctx, "cj", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var creates []string
	for _, w := range describe(f.kubeclient.Actions(), true) {
		if len(w) > 6 && w[:6] == "create" {
			creates = append(creates, w)
		}
	}
	if want := []string{"create jobs default/" + jobName(topOfHour), "create jobs default/" + jobName(at(time.Hour))}; !slices.Equal(creates, want) {
		t.Errorf("creates %q, want each run once %q", creates, want)
	}
	if lst := stored.Status.LastScheduleTime; lst == nil || !lst.Equal(&metav1.Time{Time: at(time.Hour)}) {
		t.Errorf("stored lastScheduleTime %v, want 11:00", lst)
	}
	var missed int64
	for _, m := range stored.Status.MissedRuns {
		missed += m.Count
	}
	if missed != 1 {
		t.Errorf("stored missedRuns %+v, want the 09:00 run counted once", stored.Status.MissedRuns)
	}
}

// For every CronJob not being deleted, the status a sync decides says the
// next run is after the decision (or says none): the bookkeeping bound is
// never a stale time in the past, so the status write is not cut every
// time. (A CronJob being deleted keeps its stale time:
// TestDeletingCronJobReleaseCutIsRetried.)
func TestNextScheduleTimeIsAheadOfTheDecision(t *testing.T) {
	now := at(3*time.Hour + 30*time.Second)
	active := newJob(at(3*time.Hour), running)
	for _, tc := range []struct {
		name string
		cj   *cronv1.CronJob
		jobs []*batchv1.Job
	}{
		{"catch up all, many missed", newCronJob(withSchedule("* * * * *"), lastScheduled(at(-48*time.Hour)), catchUp(cronv1.CatchUpAll, ptr.To[int32](5))), nil},
		{"forbid with an active Job", newCronJob(policy(cronv1.ForbidConcurrent), lastScheduled(at(3*time.Hour)), activeJobs(active)), []*batchv1.Job{active}},
		{"starting deadline passed", newCronJob(deadline(10), lastScheduled(at(time.Hour))), nil},
		{"suspended", newCronJob(lastScheduled(at(time.Hour)), func(cj *cronv1.CronJob) { cj.Spec.Suspend = ptr.To(true) }), nil},
		{"time zone", newCronJob(lastScheduled(at(time.Hour)), func(cj *cronv1.CronJob) { cj.Spec.TimeZone = ptr.To("America/St_Johns") }), nil},
		{"run-now", newCronJob(lastScheduled(at(3*time.Hour)), func(cj *cronv1.CronJob) {
			cj.Annotations = map[string]string{cronv1.RunNowAnnotation: "now"}
		}), nil},
		{"H schedule", newCronJob(withSchedule("H * * * *"), lastScheduled(at(time.Hour))), nil},
		{"every 5s", newCronJob(withSchedule("@every 5s"), lastScheduled(at(time.Hour))), nil},
		{"notAfter passed", newCronJob(lastScheduled(at(time.Hour)), func(cj *cronv1.CronJob) { cj.Spec.NotAfter = &metav1.Time{Time: at(2 * time.Hour)} }), nil},
		{"stale next time in status", newCronJob(lastScheduled(at(time.Hour)), func(cj *cronv1.CronJob) { cj.Status.NextScheduleTime = &metav1.Time{Time: at(2 * time.Hour)} }), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var jobs []planner.Job
			for _, j := range tc.jobs {
				jobs = append(jobs, slim.NewJob(j))
			}
			p := planner.Decide(planner.Input{CronJob: tc.cj, Jobs: jobs, Now: now})
			if next := p.Status.NextScheduleTime; next != nil && !next.After(now) {
				t.Errorf("nextScheduleTime %v is not after the decision at %v: the bookkeeping bound would be stale", next, now)
			}
		})
	}
}

// The same when the sync fails at its lookups of the times it settles as
// not run (lookUpNotRun): a Forbid CronJob with a 5 s starting deadline,
// whose 09:00 and 10:00 runs passed while the controller was away, syncs
// at 10:59:58 and a read of their Jobs fails (the API server answers 500,
// once). The 11:00 run is due in 2 s: the CronJob must be queued for it,
// not left to the retry's 10 s backoff, past which the run is beyond its
// deadline and counted missed.
func TestASyncFailingAtItsLookupsStillWakesForTheNextRun(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := newFixture(t, at(time.Hour-2*time.Second)) // 10:59:58
	f.cronJob = newCronJob(lastScheduled(at(-2*time.Hour)), policy(cronv1.ForbidConcurrent), deadline(5))
	f.jobs = []*batchv1.Job{newJob(at(-2*time.Hour), succeeded)}
	c, _, _ := f.newController(ctx)
	key := cache.MetaObjectToName(f.cronJob)
	faults := injectFaults(f)
	faults["get jobs"] = true
	limiter := newRateLimiter()
	for range 12 { // earlier failures in a row: the next retry backs off 10 s
		limiter.When(key)
	}
	c.queue.ShutDown()
	c.queue = workqueue.NewTypedRateLimitingQueueWithConfig(limiter,
		workqueue.TypedRateLimitingQueueConfig[cache.ObjectName]{Clock: f.clock})
	t.Cleanup(c.queue.ShutDown)

	c.queue.Add(key)
	c.processNextWorkItem(ctx)
	if !slices.ContainsFunc(f.kubeclient.Actions(), func(a core.Action) bool { return a.GetVerb() == "get" }) {
		t.Fatal("no Job was looked up; the case tests nothing")
	}
	clear(faults)
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
		t.Errorf("at 11:00 the CronJob is not queued: its run waits for the retry's 10 s backoff, past its 5 s deadline")
	}
}
