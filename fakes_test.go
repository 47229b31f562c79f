package main

// The package's shared test helpers and fakes: restarts on the same API
// state, fake API servers that refuse, lose or hold requests, and spies on
// the queue and the clock. The fixture itself (newFixture, newCronJob,
// newJob) is in controller_test.go; the Backfill fixture in
// backfill_controller_test.go.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	kubeinformers "k8s.io/client-go/informers"
	k8sfake "k8s.io/client-go/kubernetes/fake"
	core "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2/ktesting"
	"k8s.io/utils/clock"
	testingclock "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	cronv1 "github.com/cronjob-controller/cronjob-controller/pkg/apis/batch/v1"
	"github.com/cronjob-controller/cronjob-controller/pkg/control"
	informers "github.com/cronjob-controller/cronjob-controller/pkg/generated/informers/externalversions"
	"github.com/cronjob-controller/cronjob-controller/pkg/job"
	"github.com/cronjob-controller/cronjob-controller/pkg/metrics"
	"github.com/cronjob-controller/cronjob-controller/pkg/slim"
)

// restart builds a new Controller on the fixture's API state, as a new
// process (or the next leader) would: empty own-writes, no deferred
// statuses, caches listed from the API server.
func restart(t testing.TB, ctx context.Context, f *fixture) (*Controller, kubeinformers.SharedInformerFactory, informers.SharedInformerFactory) {
	t.Helper()
	return restartWith(t, ctx, f, nil)
}

// restartWith is restart with more of the controller's informers: with
// returns the options that add them and fills their caches.
func restartWith(t testing.TB, ctx context.Context, f *fixture,
	with func(informers.SharedInformerFactory) (Option, func())) (*Controller, kubeinformers.SharedInformerFactory, informers.SharedInformerFactory) {
	t.Helper()
	kubeFactory := kubeinformers.NewSharedInformerFactory(f.kubeclient, 0)
	cronFactory := informers.NewSharedInformerFactory(f.client, 0)
	opts := []Option{WithEventRecorder(f.recorder)}
	fill := func() {}
	if with != nil {
		var opt Option
		opt, fill = with(cronFactory)
		opts = append(opts, opt)
	}
	c, err := NewController(ctx, f.kubeclient, f.client,
		kubeFactory.Batch().V1().Jobs(), cronFactory.Batch().V1().CronJobs(), f.clock, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.queue.ShutDown)
	jobs, err := f.kubeclient.BatchV1().Jobs("").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range jobs.Items {
		cacheJob(t, kubeFactory, &jobs.Items[i])
	}
	cj, err := f.client.BatchV1().CronJobs("default").Get(ctx, "cj", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cacheCronJob(t, cronFactory, cj)
	fill()
	f.kubeclient.ClearActions()
	f.client.ClearActions()
	return c, kubeFactory, cronFactory
}

// finishJob marks a Job on the API server (and in a cache) complete.
func finishJob(t *testing.T, ctx context.Context, f *fixture, kubeFactory kubeinformers.SharedInformerFactory, name string) {
	t.Helper()
	finishJobAs(t, ctx, f, kubeFactory, name, batchv1.JobComplete)
}

// finishJobAs marks a Job on the API server (and in a cache) finished with
// the condition end (JobComplete or JobFailed).
func finishJobAs(t *testing.T, ctx context.Context, f *fixture, kubeFactory kubeinformers.SharedInformerFactory, name string, end batchv1.JobConditionType) {
	t.Helper()
	j, err := f.kubeclient.BatchV1().Jobs("default").Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	now := metav1.NewTime(f.clock.Now())
	j.Status.StartTime = &now
	if end == batchv1.JobComplete {
		j.Status.CompletionTime = &now
	}
	j.Status.Conditions = []batchv1.JobCondition{{Type: end, Status: corev1.ConditionTrue}}
	if _, err := f.kubeclient.BatchV1().Jobs("default").UpdateStatus(ctx, j, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if kubeFactory != nil {
		cacheJob(t, kubeFactory, j)
	}
}

// createLog counts, across all of a fixture's recorded actions so far, the
// create requests (successful or not) per Job name.
type createLog map[string]int

func (l createLog) add(f *fixture) {
	for _, n := range created(f) {
		l[n]++
	}
}

// missedCount is the count status.missedRuns holds for reason.
func missedCount(st cronv1.CronJobStatus, reason string) int64 {
	for _, m := range st.MissedRuns {
		if m.Reason == reason {
			return m.Count
		}
	}
	return 0
}

// drainQueue empties the queue without syncing what it held.
func drainQueue(c *Controller) {
	for c.queue.Len() > 0 {
		k, _ := c.queue.Get()
		c.queue.Done(k)
	}
}

// conflictOnStatus makes every CronJob update (the status write among them)
// answer a conflict, until stop is called.
func conflictOnStatus(f *fixture) (stop func()) {
	stopped := false
	f.client.PrependReactor("update", "cronjobs", func(core.Action) (bool, runtime.Object, error) {
		if stopped {
			return false, nil, nil
		}
		return true, nil, apierrors.NewConflict(cronv1.Resource("cronjobs"), "cj", errors.New("stale"))
	})
	return func() { stopped = true }
}

// syncWantConflict syncs key and stops the test unless the sync reports
// the conflict of its status write.
func syncWantConflict(t *testing.T, ctx context.Context, c *Controller, key cache.ObjectName, what string) {
	t.Helper()
	if _, err := c.syncHandler(ctx, key); !apierrors.IsConflict(err) {
		t.Fatalf("%s: want the conflict, got %v", what, err)
	}
}

// cacheEdit caches a copy of cj changed by edit and one generation on, as
// the informer shows a user's edit of the spec, and returns the copy.
func cacheEdit(t testing.TB, cronFactory informers.SharedInformerFactory, cj *cronv1.CronJob, edit func(*cronv1.CronJob)) *cronv1.CronJob {
	t.Helper()
	edited := cj.DeepCopy()
	edited.Generation++
	edit(edited)
	cacheCronJob(t, cronFactory, edited)
	return edited
}

// missedMetric reads cronjob_missed_schedules_total{reason}.
func missedMetric(t *testing.T, reason string) float64 {
	t.Helper()
	var m dto.Metric
	if err := metrics.MissedSchedules.WithLabelValues(reason).(prometheus.Metric).Write(&m); err != nil {
		t.Fatal(err)
	}
	return m.GetCounter().GetValue()
}

// wantMissedMetricGrewAsStatus fails the test unless the missed-run metric
// for reason grew, since it read before, by what st counts for reason.
func wantMissedMetricGrewAsStatus(t *testing.T, reason string, before float64, st cronv1.CronJobStatus) {
	t.Helper()
	inStatus := missedCount(st, reason)
	if grew := missedMetric(t, reason) - before; grew != float64(inStatus) {
		t.Errorf("missed_schedules_total{reason=%s} grew by %v, status.missedRuns says %d", reason, grew, inStatus)
	}
}

// drainSyncs runs the queued syncs (and those they queue) a few rounds.
func drainSyncs(t *testing.T, ctx context.Context, c *Controller) {
	t.Helper()
	for i := 0; i < 10 && c.queue.Len() > 0; i++ {
		key, _ := c.queue.Get()
		if _, err := c.syncHandler(ctx, key); err != nil {
			t.Logf("sync %v: %v", key, err)
		}
		c.queue.Done(key)
	}
}

// getSpy says when a worker first asks the queue for a key.
type getSpy struct {
	workqueue.TypedRateLimitingInterface[cache.ObjectName]
	started chan struct{}
}

func (s *getSpy) Get() (cache.ObjectName, bool) {
	select {
	case s.started <- struct{}{}:
	default:
	}
	return s.TypedRateLimitingInterface.Get()
}

// clockTimerSpy says the duration of each timer made on its clock.
type clockTimerSpy struct {
	*testingclock.FakeClock
	made chan time.Duration
}

func (s *clockTimerSpy) NewTimer(d time.Duration) clock.Timer {
	t := s.FakeClock.NewTimer(d)
	select {
	case s.made <- d:
	default:
	}
	return t
}

// blockingStatus hands each UpdateStatus's context to the test and waits
// for the test's go-ahead.
type blockingStatus struct {
	control.CronJobs
	called chan context.Context
	goOn   chan struct{}
}

func (b *blockingStatus) UpdateStatus(ctx context.Context, cj *cronv1.CronJob) (*cronv1.CronJob, error) {
	b.called <- ctx
	<-b.goOn
	return b.CronJobs.UpdateStatus(ctx, cj)
}

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

// refusedStatus refuses every status write, as an API server in trouble.
type refusedStatus struct {
	control.CronJobs
	refused int
}

func (r *refusedStatus) UpdateStatus(context.Context, *cronv1.CronJob) (*cronv1.CronJob, error) {
	r.refused++
	return nil, apierrors.NewInternalError(fmt.Errorf("etcd is sad"))
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

// injectFaults makes the named calls ("verb resource[/sub]") answer 500.
func injectFaults(f *fixture) map[string]bool {
	faults := map[string]bool{}
	injected := func(a core.Action) (bool, runtime.Object, error) {
		what := a.GetVerb() + " " + a.GetResource().Resource
		if a.GetSubresource() != "" {
			what += "/" + a.GetSubresource()
		}
		if faults[what] {
			return true, nil, apierrors.NewInternalError(errors.New("injected: " + what))
		}
		return false, nil, nil
	}
	f.client.PrependReactor("*", "*", injected)
	f.kubeclient.PrependReactor("*", "*", injected)
	return faults
}

// landedTimeout stores the status, then answers a timeout: the write landed,
// its answer lost.
type landedTimeout struct {
	control.CronJobs
	lose bool
}

func (s *landedTimeout) UpdateStatus(ctx context.Context, cj *cronv1.CronJob) (*cronv1.CronJob, error) {
	updated, err := s.CronJobs.UpdateStatus(ctx, cj)
	if err != nil || !s.lose {
		return updated, err
	}
	return nil, apierrors.NewTimeoutError("injected: answer lost", 1)
}

// inForce says the controller last saw resolved (in zone) as the schedule.
func inForce(resolved, zone string) func(*cronv1.CronJob) {
	return func(cj *cronv1.CronJob) {
		cj.Status.ResolvedSchedule, cj.Status.ResolvedTimeZone = resolved, zone
		cj.Status.Conditions = append(cj.Status.Conditions, metav1.Condition{
			Type: cronv1.ConditionScheduleValid, Status: metav1.ConditionTrue, Reason: "Valid",
			LastTransitionTime: metav1.NewTime(at(-2 * time.Hour)),
		})
	}
}

// created lists the Jobs a fixture's client was asked to create.
func created(f *fixture) []string {
	var out []string
	for _, a := range f.kubeclient.Actions() {
		if c, ok := a.(core.CreateAction); ok && a.GetResource().Resource == "jobs" {
			out = append(out, c.GetObject().(metav1.Object).GetName())
		}
	}
	return out
}

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

// syncResult is what a sync run by syncInBackground returned.
type syncResult struct {
	requeue time.Duration
	err     error
}

// syncInBackground runs one sync of key in a goroutine of its own.
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

// refusedReleases refuses every finalizer release.
type refusedReleases struct {
	control.Jobs
	refused *int
}

func (r *refusedReleases) ReleaseFinalizer(context.Context, string, string, types.UID, string, []string) error {
	*r.refused++
	return apierrors.NewInternalError(fmt.Errorf("etcd is sad"))
}

// jobsResource is the Jobs' resource, as the fake's tracker names it.
var jobsResource = batchv1.SchemeGroupVersion.WithResource("jobs")

// honourFinalizers makes a fake clientset treat Job finalizers as the API
// server does (the fake's tracker removes an object at once): deleting a
// Job that has finalizers only sets its deletionTimestamp, and a patch or
// update that leaves a Job being deleted without finalizers removes it.
func honourFinalizers(client *k8sfake.Clientset, clk clock.PassiveClock) {
	tracker := client.Tracker()
	client.PrependReactor("delete", "jobs", func(a core.Action) (bool, runtime.Object, error) {
		d := a.(core.DeleteAction)
		obj, err := tracker.Get(jobsResource, d.GetNamespace(), d.GetName())
		if err != nil {
			return false, nil, nil
		}
		j := obj.(*batchv1.Job)
		if p := d.GetDeleteOptions().Preconditions; p != nil && p.UID != nil && *p.UID != j.UID {
			return true, nil, apierrors.NewConflict(jobsResource.GroupResource(), j.Name, errFailedPrecondition)
		}
		if len(j.Finalizers) == 0 {
			return false, nil, nil
		}
		if j.DeletionTimestamp == nil {
			j.DeletionTimestamp = &metav1.Time{Time: clk.Now().Truncate(time.Second)}
			if err := tracker.Update(jobsResource, j, j.Namespace); err != nil {
				return true, nil, err
			}
		}
		return true, nil, nil
	})
	removeWhenReleased := func(a core.Action) (bool, runtime.Object, error) {
		handled, obj, err := core.ObjectReaction(tracker)(a)
		if err != nil || !handled {
			return handled, obj, err
		}
		if j, ok := obj.(*batchv1.Job); ok && j.DeletionTimestamp != nil && len(j.Finalizers) == 0 {
			if err := tracker.Delete(jobsResource, j.Namespace, j.Name); err != nil {
				return true, nil, err
			}
		}
		return true, obj, nil
	}
	client.PrependReactor("patch", "jobs", removeWhenReleased)
	client.PrependReactor("update", "jobs", removeWhenReleased)
}

// errFailedPrecondition is the fake API server's answer to a delete whose
// UID precondition fails.
var errFailedPrecondition = errorString("precondition failed: UID")

type errorString string

func (e errorString) Error() string { return string(e) }

// liveJob reads a Job from the fake API server; nil when it is gone.
func liveJob(t *testing.T, ctx context.Context, f *fixture, name string) *batchv1.Job {
	t.Helper()
	j, err := f.kubeclient.BatchV1().Jobs("default").Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return j
}

// The fake honours finalizers the way the tests below rely on.
func TestHonourFinalizers(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := newFixture(t, at(0))
	f.jobs = []*batchv1.Job{newJob(at(-time.Hour), succeeded, holdingRecord)}
	f.newController(ctx)
	honourFinalizers(f.kubeclient, f.clock)
	name := f.jobs[0].Name
	if err := f.kubeclient.BatchV1().Jobs("default").Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if j := liveJob(t, ctx, f, name); j == nil || j.DeletionTimestamp == nil {
		t.Fatalf("a Job with a finalizer, deleted: %+v, want it kept, being deleted", j)
	}
	if err := control.NewJobs(f.kubeclient).ReleaseFinalizer(ctx, "default", name, "wrong-uid", job.RunRecordFinalizer, []string{job.RunRecordFinalizer}); err != nil {
		t.Fatal(err)
	}
	if liveJob(t, ctx, f, name) == nil {
		t.Fatal("a release for another UID removed the Job")
	}
	if err := control.NewJobs(f.kubeclient).ReleaseFinalizer(ctx, "default", name, f.jobs[0].UID, job.RunRecordFinalizer, []string{"stale", job.RunRecordFinalizer}); err != nil {
		t.Fatal(err)
	}
	if j := liveJob(t, ctx, f, name); j != nil {
		t.Errorf("released (from a stale view of its finalizers), the deleted Job stays: %+v", j.ObjectMeta)
	}
}

// requeueSpy records how the controller queues a key again: after a
// delay, or through the rate limiter (which backs off per key and, over
// all keys, lets 10 a second through after a burst of 100).
type requeueSpy struct {
	workqueue.TypedRateLimitingInterface[cache.ObjectName]
	after       []time.Duration
	rateLimited int
}

func (s *requeueSpy) AddAfter(key cache.ObjectName, d time.Duration) {
	s.after = append(s.after, d)
	s.TypedRateLimitingInterface.AddAfter(key, d)
}

func (s *requeueSpy) AddRateLimited(key cache.ObjectName) {
	s.rateLimited++
	s.TypedRateLimitingInterface.AddRateLimited(key)
}

// failJobRead makes the Job read under name fail while *failing.
func failJobRead(f *fixture, name string) *bool {
	failing := true
	f.kubeclient.PrependReactor("get", "jobs", func(a core.Action) (bool, runtime.Object, error) {
		if failing && a.(core.GetAction).GetName() == name {
			return true, nil, apierrors.NewInternalError(errors.New("injected: get " + name))
		}
		return false, nil, nil
	})
	return &failing
}

// failJobCreates makes the fake API server refuse the create of a Job with
// the error refuse returns for the Job's name; nil lets the create through.
func failJobCreates(f *fixture, refuse func(name string) error) {
	f.kubeclient.PrependReactor("create", "jobs", func(a core.Action) (bool, runtime.Object, error) {
		if err := refuse(a.(core.CreateAction).GetObject().(metav1.Object).GetName()); err != nil {
			return true, nil, err
		}
		return false, nil, nil
	})
}

// failJobCreateOf refuses the create of the Job called name with err.
func failJobCreateOf(f *fixture, name string, err error) {
	failJobCreates(f, func(n string) error {
		if n == name {
			return err
		}
		return nil
	})
}

// failAllJobCreates refuses every Job create with err.
func failAllJobCreates(f *fixture, err error) {
	failJobCreates(f, func(string) error { return err })
}

// applyJobCreatesThenFail makes the fake API server, while *on is true,
// store each Job it is asked to create (changed by edit first) and then
// answer the create with answer: the Job exists, the controller was told it
// does not.
func applyJobCreatesThenFail(f *fixture, on *bool, edit func(*batchv1.Job), answer error) {
	f.kubeclient.PrependReactor("create", "jobs", func(a core.Action) (bool, runtime.Object, error) {
		if !*on {
			return false, nil, nil
		}
		j := a.(core.CreateAction).GetObject().(*batchv1.Job).DeepCopy()
		edit(j)
		if err := f.kubeclient.Tracker().Create(jobsResource, j, j.Namespace); err != nil {
			return true, nil, err
		}
		return true, nil, answer
	})
}

// loseJobCreateAnswers, while *lose is true, applies each Job create and
// then drops the connection before the answer, as a lost response does.
func loseJobCreateAnswers(f *fixture, lose *bool) {
	applyJobCreatesThenFail(f, lose, func(j *batchv1.Job) {
		j.UID = types.UID("uid-" + j.Name)
		j.CreationTimestamp = metav1.NewTime(f.clock.Now())
	}, errors.New("http2: client connection lost"))
}

// syncWantStatus syncs key, which must succeed and write a status, and
// returns the status written.
func syncWantStatus(t *testing.T, ctx context.Context, f *fixture, c *Controller, key cache.ObjectName) *cronv1.CronJob {
	t.Helper()
	if _, err := c.syncHandler(ctx, key); err != nil {
		t.Fatal(err)
	}
	w := f.writtenStatus()
	if w == nil {
		t.Fatal("no status written")
	}
	return w
}

// wantNotCreated fails the test when the fixture's client was asked to
// create the Job called name; why says what that would mean.
func wantNotCreated(t *testing.T, f *fixture, name, why string) {
	t.Helper()
	if slices.Contains(created(f), name) {
		t.Errorf("create jobs default/%s: %s", name, why)
	}
}

// withRunningJob gives f a CronJob under policy p whose 09:00 run's Job is
// still running, and returns that Job.
func withRunningJob(f *fixture, p cronv1.ConcurrencyPolicy) *batchv1.Job {
	running9 := newJob(at(-time.Hour), running)
	f.cronJob = newCronJob(lastScheduled(at(-time.Hour)), activeJobs(running9), policy(p))
	f.jobs = []*batchv1.Job{running9}
	return running9
}

// landedWriteCutByTheNextRun makes the next sync of key, at 10:00:01, write
// a status that lands on the API server but whose answer is held until the
// 11:00 run is due and the sync's bound cuts it; later writes are answered
// as usual.
func landedWriteCutByTheNextRun(t *testing.T, ctx context.Context, f *fixture, c *Controller, key cache.ObjectName) {
	t.Helper()
	lost := &lostAnswerStatus{CronJobs: c.cronJobs, entered: make(chan string, 1), lose: true}
	c.cronJobs = lost
	done := syncInBackground(ctx, c, key)
	awaitEntered(t, lost.entered, "status write")
	f.clock.SetTime(at(time.Hour))
	if r := awaitSync(t, done, "the status write was not cut"); r.err != nil {
		t.Fatalf("first sync: %v", r.err)
	}
	lost.lose = false
}

// lostCreateFixture is a CronJob at 10:00:02 with a 10 s starting deadline
// whose Job creates, while *lose is true, are applied and answered with a
// dropped connection.
func lostCreateFixture(t *testing.T) (ctx context.Context, f *fixture, c *Controller, cronFactory informers.SharedInformerFactory, lose *bool) {
	t.Helper()
	_, ctx = ktesting.NewTestContext(t)
	f = newFixture(t, at(2*time.Second))
	f.cronJob = newCronJob(lastScheduled(at(-time.Hour)), deadline(10))
	c, _, cronFactory = f.newController(ctx)
	lose = ptr.To(true)
	loseJobCreateAnswers(f, lose)
	return ctx, f, c, cronFactory, lose
}

// setRunNow sets the run-now annotation of the fixture's CronJob to value
// on the API server (as resourceVersion 5) and in the cache, and returns
// the CronJob edited.
func setRunNow(t *testing.T, ctx context.Context, f *fixture, cronFactory informers.SharedInformerFactory, value string) *cronv1.CronJob {
	t.Helper()
	edited := f.cronJob.DeepCopy()
	edited.Annotations[cronv1.RunNowAnnotation] = value
	edited.ResourceVersion = "5"
	if _, err := f.client.BatchV1().CronJobs("default").Update(ctx, edited, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	cacheCronJob(t, cronFactory, edited)
	return edited
}

// syncInABurst syncs key while another CronJob waits in the queue, as in a
// burst: the sync leaves its status write and Events for later.
func syncInABurst(t *testing.T, ctx context.Context, c *Controller, key cache.ObjectName) {
	t.Helper()
	c.queue.Add(cache.ObjectName{Namespace: "default", Name: "other"})
	if _, err := c.syncHandler(ctx, key); err != nil {
		t.Fatal(err)
	}
}

// runNowAThenB gives f a CronJob whose run-now requests "a" and then "b"
// were both started while no stored status recorded either: a's Job and
// b's, b following a on the run-now chain.
func runNowAThenB(f *fixture) (ja, jb *batchv1.Job) {
	f.cronJob = newCronJob(lastScheduled(at(0)), func(cj *cronv1.CronJob) {
		cj.Annotations = map[string]string{cronv1.RunNowAnnotation: "b"}
	})
	ja = job.NewManual(f.cronJob, "", "a", "a", 1)
	ja.UID = "uid-a"
	jb = job.NewManual(f.cronJob, "a", "b", "b", 2)
	jb.UID = "uid-b"
	return ja, jb
}

// uncacheJob removes j from the Job cache of kubeFactory: the cache of a
// next leader, or behind a hung watch, that never got j's create.
func uncacheJob(t testing.TB, kubeFactory kubeinformers.SharedInformerFactory, j *batchv1.Job) {
	t.Helper()
	if err := kubeFactory.Batch().V1().Jobs().Informer().GetIndexer().Delete(slim.NewJob(j)); err != nil {
		t.Fatal(err)
	}
}

// syncLosingStatus syncs key, whose status write is refused (a conflict,
// as an edit makes), and returns the Job name as the API server holds it:
// the run started, its status lost.
func syncLosingStatus(t *testing.T, ctx context.Context, f *fixture, c *Controller, key cache.ObjectName, what, name string) *batchv1.Job {
	t.Helper()
	stop := conflictOnStatus(f)
	defer stop()
	syncWantConflict(t, ctx, c, key, what)
	return liveJob(t, ctx, f, name)
}
