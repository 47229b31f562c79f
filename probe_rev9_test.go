package main

// Review 9 probes of 02a99f6 (a sync's bookkeeping ends when the next run is
// due). The three FINDINGs failed on 02a99f6 and pass since the fix that
// followed; those marked "held up" found nothing and stay as guards.

import (
	"context"
	"fmt"
	"slices"
	"strings"
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
	testingclock "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	cronv1 "github.com/cronjob-controller/cronjob-controller/pkg/apis/batch/v1"
	"github.com/cronjob-controller/cronjob-controller/pkg/control"
	"github.com/cronjob-controller/cronjob-controller/pkg/planner"
	"github.com/cronjob-controller/cronjob-controller/pkg/slim"
)

// ctxStatus fails a status write made with an ended context, as client-go
// does (its rate limiter's Wait, then the HTTP request, see ctx first); the
// fake clientset ignores the context.
type ctxStatus struct {
	control.CronJobs
}

func (s *ctxStatus) UpdateStatus(ctx context.Context, cj *cronv1.CronJob) (*cronv1.CronJob, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("client rate limiter Wait returned an error: %w", err)
	}
	return s.CronJobs.UpdateStatus(ctx, cj)
}

// throttledReleases answers every finalizer release 429 with Retry-After
// 3 s, which client-go waits out inside the call unless its context ends
// first; then it gives up.
type throttledReleases struct {
	control.Jobs
	clock   *testingclock.FakeClock
	entered chan string
}

func (s *throttledReleases) ReleaseFinalizer(ctx context.Context, namespace, name string, _ types.UID, _ string, _ []string) error {
	retryAfter := s.clock.NewTimer(3 * time.Second)
	defer retryAfter.Stop()
	s.entered <- name
	select {
	case <-ctx.Done():
		return fmt.Errorf("client rate limiter Wait returned an error: %w", ctx.Err())
	case <-retryAfter.C():
		return apierrors.NewTooManyRequests("the server is busy", 3)
	}
}

// FINDING 1. A CronJob being deleted (foreground deletion, or any finalizer)
// is decided without planRuns: plan.Status.NextScheduleTime is the stale one
// from its last status, past once its next run's time has gone by. The
// bookkeeping is then bounded to minTidyTime (1 s), and a release cut there
// is "left for the next sync" with no error, while the plan of a CronJob
// being deleted asks for no wake-up (RequeueAfter 0): (0, nil) makes
// processNextWorkItem Forget the key and queue nothing. No next sync comes
// (nothing changes, informers have no resync), so the Job hangs in
// Terminating holding the run-record finalizer, and the CronJob with it
// under foreground deletion. Before 02a99f6 the release waited out its
// 429s, and a failure was retried.
func TestProbeRev9DeletingCronJobReleaseCutIsRetried(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	// 11:05: the garbage collector deletes the Jobs of a CronJob deleted in
	// the foreground; its status still says the next run is at 11:00.
	f := newFixture(t, at(time.Hour+5*time.Minute))
	j := newJob(at(0), running, holdingRecord, func(j *batchv1.Job) {
		j.DeletionTimestamp = &metav1.Time{Time: at(time.Hour + 4*time.Minute)}
	})
	f.cronJob = newCronJob(lastScheduled(at(0)), activeJobs(j), func(cj *cronv1.CronJob) {
		cj.DeletionTimestamp = &metav1.Time{Time: at(time.Hour + 4*time.Minute)}
		cj.Finalizers = []string{metav1.FinalizerDeleteDependents}
		cj.Status.NextScheduleTime = &metav1.Time{Time: at(time.Hour)}
	})
	f.jobs = []*batchv1.Job{j}
	c, _, _ := f.newController(ctx)
	stalled := &throttledReleases{Jobs: c.jobs, clock: f.clock, entered: make(held, 4)}
	c.jobs = stalled
	c.cronJobs = &ctxStatus{CronJobs: c.cronJobs}

	done := syncInBackground(ctx, c, cache.MetaObjectToName(f.cronJob))
	if name := awaitEntered(t, stalled.entered, "release"); name != j.Name {
		t.Fatalf("released %s, want %s", name, j.Name)
	}
	// The API server answers every release 429, Retry-After 3 s: more than
	// minTidyTime.
	f.clock.Step(3 * time.Second)
	var r syncResult
	for waiting := true; waiting; {
		select {
		case r = <-done:
			waiting = false
		case <-stalled.entered: // a release after the first, throttled too
			f.clock.Step(3 * time.Second)
		case <-time.After(wait.ForeverTestTimeout):
			t.Fatal("the sync has not returned")
		}
	}
	// Either the release is not cut (it fails, and the failure is
	// retried), or something wakes the CronJob again.
	if r.err == nil && r.requeue <= 0 {
		t.Errorf("sync of a CronJob being deleted returned (%v, nil) after its release was cut: "+
			"processNextWorkItem forgets the key, no sync ever releases %s, which hangs in Terminating", r.requeue, j.Name)
	}
}

// FINDING 2. The status write, the one record of the runs just started,
// comes after the best-effort bookkeeping (history deletes, plan.Releases)
// and shares its bound: when a history delete or the release of a Job
// recorded earlier is held until the next run, the write is made with an
// ended context and never lands. A request held every time (a slow
// admission webhook on Job DELETE or PATCH, APF throttling) leaves the
// status unwritten sync after sync: runs recorded only in c.deferred, their
// Jobs never released (finalizers wait for a stored status), the history
// never pruned. Before 02a99f6 the runs were late, but recorded.
func TestProbeRev9HeldBookkeepingNeverStarvesTheStatusWrite(t *testing.T) {
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
			name: "release of a recorded Job held",
			old:  newJob(at(-time.Hour), running, holdingRecord),
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

// refusedStatus refuses every status write, as an API server in trouble.
type refusedStatus struct {
	control.CronJobs
	refused int
}

func (r *refusedStatus) UpdateStatus(context.Context, *cronv1.CronJob) (*cronv1.CronJob, error) {
	r.refused++
	return nil, apierrors.NewInternalError(fmt.Errorf("etcd is sad"))
}

// FINDING 3. On error the CronJob is now also queued for plan.RequeueAfter,
// which is not only the next run: the planner asks to look again in 1 s
// while a finished Job's run is not yet in the stored status (pruneHistory,
// planReleases). A status write that keeps failing is exactly that case, so
// the failing sync is retried every second, past both the per-item backoff
// (up to 10 s) and the queue's global bucket (10/s for all CronJobs): with
// N such CronJobs, N failing syncs a second against an API server already
// in trouble. The next run is an hour away here; nothing is due.
func TestProbeRev9FailedSyncKeepsItsBackoffWhenNoRunIsDue(t *testing.T) {
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

// lostAnswerStatus applies a status write on the server, then holds its
// answer until the context ends: the write landed, the sync never knew.
type lostAnswerStatus struct {
	control.CronJobs
	entered chan string
	lose    bool
}

func (s *lostAnswerStatus) UpdateStatus(ctx context.Context, cj *cronv1.CronJob) (*cronv1.CronJob, error) {
	updated, err := s.CronJobs.UpdateStatus(ctx, cj)
	if err != nil || !s.lose {
		return updated, err
	}
	s.entered <- cj.Name
	<-ctx.Done()
	return nil, fmt.Errorf("client rate limiter Wait returned an error: %w", ctx.Err())
}

// HELD UP. A status write that landed but whose answer the bound cut: the
// next sync starts the next run once, the write it makes from a stale cache
// conflicts and is retried, and once the cache shows the landed write the
// status converges with each run started once and the superseded 09:00 run
// counted once.
func TestProbeRev9CutStatusWriteThatLandedConverges(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := newFixture(t, at(time.Second))
	f.cronJob = newCronJob(lastScheduled(at(-2 * time.Hour)))
	c, kubeFactory, cronFactory := f.newController(ctx)
	lost := &lostAnswerStatus{CronJobs: c.cronJobs, entered: make(chan string, 1), lose: true}
	c.cronJobs = lost
	key := cache.MetaObjectToName(f.cronJob)

	done := syncInBackground(ctx, c, key)
	awaitEntered(t, lost.entered, "status write")
	f.clock.SetTime(at(time.Hour))
	if r := awaitSync(t, done, "the status write was not cut"); r.err != nil {
		t.Fatalf("first sync: %v", r.err)
	}
	lost.lose = false
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

// HELD UP. For every CronJob not being deleted, the status a sync decides
// says the next run is after the decision (or says none): the bound is
// never a stale time in the past, so the status write is not cut every
// time. (A CronJob being deleted keeps its stale time: finding 1.)
func TestProbeRev9NextScheduleTimeIsAheadOfTheDecision(t *testing.T) {
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
