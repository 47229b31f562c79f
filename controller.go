package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"golang.org/x/time/rate"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	batchinformers "k8s.io/client-go/informers/batch/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	cronv1 "github.com/cronjob-controller/cronjob-controller/pkg/apis/batch/v1"
	"github.com/cronjob-controller/cronjob-controller/pkg/control"
	clientset "github.com/cronjob-controller/cronjob-controller/pkg/generated/clientset/versioned"
	cronscheme "github.com/cronjob-controller/cronjob-controller/pkg/generated/clientset/versioned/scheme"
	clientsetv1 "github.com/cronjob-controller/cronjob-controller/pkg/generated/clientset/versioned/typed/batch/v1"
	informers "github.com/cronjob-controller/cronjob-controller/pkg/generated/informers/externalversions/batch/v1"
	"github.com/cronjob-controller/cronjob-controller/pkg/job"
	"github.com/cronjob-controller/cronjob-controller/pkg/liveness"
	"github.com/cronjob-controller/cronjob-controller/pkg/metrics"
	"github.com/cronjob-controller/cronjob-controller/pkg/ownwrites"
	"github.com/cronjob-controller/cronjob-controller/pkg/planner"
	"github.com/cronjob-controller/cronjob-controller/pkg/shard"
	"github.com/cronjob-controller/cronjob-controller/pkg/slim"
)

// controllerAgentName names this controller in Events and logs.
const controllerAgentName = "cronjob-controller"

// jobsByControllerUID indexes Jobs by the UID of the CronJob that controls
// them, so a sync finds its Jobs without scanning a namespace.
const jobsByControllerUID = "jobsByControllerUID"

// jobsByRecordOf indexes the Jobs a user detached from a CronJob before its
// status recorded their runs by that CronJob's UID: they are still the
// records of its runs (planner.Input.Records).
const jobsByRecordOf = "jobsByRecordOf"

// eventLogVerbosity is the -v at which each Event is also logged (as the
// built-in CronJob controller does): the Events are on the API server, and
// at -v=0 the line was 3 % of a firing's CPU (docs/benchmarks.md).
const eventLogVerbosity = 3

// syncTimeout bounds one sync, so shutdown waits at most this long for the
// item a worker holds.
const syncTimeout = time.Minute

// ownWritesTTL bounds how long a write of ours stands in for the cache. An
// informer normally catches up within a second; past this the cache (or a
// live read) is trusted again.
const ownWritesTTL = time.Minute

// Controller turns CronJobs into Jobs on schedule.
type Controller struct {
	// jobs creates, reads and deletes Jobs on the API server.
	jobs control.Jobs
	// cronJobs writes CronJob status.
	cronJobs control.CronJobs

	// jobIndexer is the shared informer's cache of Jobs, in their slim
	// form; it finds the Jobs of a CronJob by its UID (jobsByControllerUID).
	jobIndexer cache.Indexer
	// cronJobIndexer is the shared informer's cache of CronJobs, in their
	// slim form. (The generated listers would assert the API types.)
	cronJobIndexer cache.Indexer
	// cachesSynced report whether both informers have listed once.
	cachesSynced []cache.InformerSynced
	// createdJobs and writtenCronJobs are this process's writes the caches
	// may not show yet, so a sync reads its own writes.
	createdJobs     *ownwrites.Store[*slim.Job]
	writtenCronJobs *ownwrites.Store[*slim.CronJob]
	// deletedJobs are the Jobs this process deleted that the cache may
	// still show.
	deletedJobs *ownwrites.Deletes
	// failedCreates are Jobs whose create failed in a way that does not
	// say whether the API server applied it; a sync looks them up.
	failedCreates *ownwrites.Attempts
	// absentJobs are the Jobs a lookup of a time settled as not run found
	// absent (lookUpNotRun).
	absentJobs *ownwrites.Absences
	// releasedJobs are the Jobs whose run-record finalizer this process
	// removed that the cache may still show holding it.
	releasedJobs *ownwrites.Deletes
	// orphans are Jobs holding the run-record finalizer whose controlling
	// CronJob looked gone to an event handler, by the key of that CronJob:
	// its sync releases them, or they would hang in Terminating.
	orphans *orphans
	// deferred holds statuses decided but not stored: by syncs that
	// started a Job while other CronJobs waited in the queue, or whose
	// write failed or was cut; see syncHandler.
	deferred *ownwrites.Pending[deferredStatus]
	// heldEvents are the Events held in a burst, and those of a CronJob
	// queued behind its held ones; see events.go.
	heldEvents *heldEvents

	// queue holds the CronJobs to sync; a CronJob waits in it (AddAfter)
	// until its next scheduled time, so nothing polls.
	queue workqueue.TypedRateLimitingInterface[cache.ObjectName]
	// recorder emits Kubernetes Events about CronJobs.
	recorder record.EventRecorder
	// broadcaster is the recorder's, when the controller made it itself.
	broadcaster record.EventBroadcaster
	// clock is "now" for every scheduling decision.
	clock clock.WithTickerAndDelayedExecution

	// cronJobInformer, calendarInformer (nil: none) and calendarIndexer
	// serve exclusion Calendars; see calendars.go.
	cronJobInformer  cache.SharedIndexInformer
	calendarInformer informers.CalendarInformer
	calendarIndexer  cache.Indexer
	// runInformer (nil: none) and runIndexer serve CronJobRuns; runs
	// writes their status and deletes them (cronjobruns.go).
	runInformer informers.CronJobRunInformer
	runIndexer  cache.Indexer
	runs        clientsetv1.BatchV1Interface
	// calendarCache keeps the Calendars syncs read parsed, one version
	// each, until they change or go.
	calendarCache *planner.CalendarCache

	// shards, when set, are the shards this replica works: a sync runs only
	// while its CronJob's shard is held, and ends when the hold does.
	shards *shard.Set
	// leaseGrace bounds a sync once the workers' context ends
	// (syncContext); 0: the sync finishes, up to syncTimeout.
	leaseGrace time.Duration
	// fence, under leader election, is until when the Lease is surely
	// ours: no sync starts past it, and none writes past it and the grace.
	fence *leaseValidity

	// cachesPrepared says the informers were prepared (prepareCaches)
	// before they started, by the process; else NewController does it.
	cachesPrepared bool
	// handlers are this controller's event handlers on the shared
	// informers, taken off by Detach when its term ends.
	handlers attachments
	// probe learns of every sync under way, so /healthz can tell a stuck
	// worker; nil: none.
	probe *liveness.Probe
}

// Option changes how NewController builds a Controller.
type Option func(*Controller)

// WithEventRecorder makes the controller emit Events through r instead of a
// broadcaster of its own on the kube clientset.
func WithEventRecorder(r record.EventRecorder) Option {
	return func(c *Controller) { c.recorder = r }
}

// WithLeaseGrace bounds how long a sync may go on once the workers'
// context ends (see syncContext): under leader election, less than the
// lease duration minus the renew deadline.
func WithLeaseGrace(d time.Duration) Option {
	return func(c *Controller) { c.leaseGrace = d }
}

// WithLeaseFence fences the syncs by the Lease's validity (leaseValidity).
func WithLeaseFence(f *leaseValidity) Option {
	return func(c *Controller) { c.fence = f }
}

// WithPreparedCaches builds the controller on informers prepared with
// prepareCaches (and started, perhaps long ago): a term after the first of
// a replica that lost its Lease and won it back.
func WithPreparedCaches() Option {
	return func(c *Controller) { c.cachesPrepared = true }
}

// WithProbe reports each sync under way to p (see pkg/liveness).
func WithProbe(p *liveness.Probe) Option {
	return func(c *Controller) { c.probe = p }
}

// WithShards makes the controller work only the CronJobs of the shards s
// holds. The informers must be fed through shard.Filters of s.
func WithShards(s *shard.Set) Option {
	return func(c *Controller) { c.shards = s }
}

// NewController wires the event handlers and the Job index into the given
// informers. Call it before the informer factories start, or on informers
// prepared before they started (WithPreparedCaches); Detach takes the
// handlers off again.
func NewController(
	ctx context.Context,
	kubeclientset kubernetes.Interface,
	cronclientset clientset.Interface,
	jobInformer batchinformers.JobInformer,
	cronJobInformer informers.CronJobInformer,
	clk clock.WithTickerAndDelayedExecution,
	opts ...Option,
) (_ *Controller, err error) {
	logger := klog.FromContext(ctx)
	utilruntime.Must(cronscheme.AddToScheme(scheme.Scheme))

	c := &Controller{
		jobs:            control.NewJobs(kubeclientset),
		cronJobs:        control.NewCronJobs(cronclientset),
		runs:            cronclientset.BatchV1(),
		jobIndexer:      jobInformer.Informer().GetIndexer(),
		cronJobIndexer:  cronJobInformer.Informer().GetIndexer(),
		cronJobInformer: cronJobInformer.Informer(),
		cachesSynced:    []cache.InformerSynced{jobInformer.Informer().HasSynced, cronJobInformer.Informer().HasSynced},
		clock:           clk,
		createdJobs: ownwrites.New(clk, ownWritesTTL, func(j *slim.Job) types.UID {
			if ref := job.ControllerOf(j); ref != nil {
				return ref.UID
			}
			return ""
		}),
		writtenCronJobs: ownwrites.NewVersioned[*slim.CronJob](clk, ownWritesTTL, nil),
		deletedJobs:     ownwrites.NewDeletes(clk, ownWritesTTL),
		failedCreates:   ownwrites.NewAttempts(clk, ownWritesTTL),
		absentJobs:      ownwrites.NewAbsences(clk, ownWritesTTL),
		releasedJobs:    ownwrites.NewDeletes(clk, ownWritesTTL),
		orphans:         newOrphans(),
		calendarCache:   planner.NewCalendarCache(),
		deferred:        ownwrites.NewPending[deferredStatus](),
		heldEvents:      newHeldEvents(clk),
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(
			newRateLimiter(),
			workqueue.TypedRateLimitingQueueConfig[cache.ObjectName]{Name: "cronjob", Clock: clk},
		),
	}
	for _, o := range opts {
		o(c)
	}
	if c.recorder == nil {
		c.broadcaster = newEventBroadcaster(ctx)
		c.broadcaster.StartStructuredLogging(eventLogVerbosity)
		c.broadcaster.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: kubeclientset.CoreV1().Events("")})
		c.recorder = c.broadcaster.NewRecorder(scheme.Scheme, corev1.EventSource{Component: controllerAgentName})
	}

	// A controller that could not be wired leaves nothing running.
	defer func() {
		if err != nil {
			c.queue.ShutDown()
			_ = c.handlers.detach()
			if c.broadcaster != nil {
				c.broadcaster.Shutdown()
			}
		}
	}()
	if !c.cachesPrepared {
		if err := prepareCaches(jobInformer.Informer(), cronJobInformer.Informer()); err != nil {
			return nil, err
		}
	}
	if err := c.watchCalendars(); err != nil {
		return nil, err
	}
	if err := c.watchRuns(); err != nil {
		return nil, err
	}
	if err := c.handlers.add(cronJobInformer.Informer(), cache.ResourceEventHandlerFuncs{
		AddFunc:    c.enqueueCronJob,
		UpdateFunc: c.updateCronJob,
		DeleteFunc: c.deleteCronJob,
	}); err != nil {
		return nil, fmt.Errorf("adding CronJob handlers: %w", err)
	}
	if err := c.handlers.add(jobInformer.Informer(), cache.ResourceEventHandlerFuncs{
		AddFunc:    c.addJob,
		UpdateFunc: c.updateJob,
		DeleteFunc: c.deleteJob,
	}); err != nil {
		return nil, fmt.Errorf("adding Job handlers: %w", err)
	}
	logger.V(4).Info("Event handlers set up")
	return c, nil
}

// newRateLimiter paces retries after errors: per CronJob, exponential from
// 5 ms to 10 s; overall, 10 per second with bursts of 100. The per-item cap is
// far below client-go's default of 1000 s, so a CronJob catches up within
// seconds once the API server is back, while the overall bucket keeps an
// outage from turning into a hot loop.
func newRateLimiter() workqueue.TypedRateLimiter[cache.ObjectName] {
	return workqueue.NewTypedMaxOfRateLimiter(
		workqueue.NewTypedItemExponentialFailureRateLimiter[cache.ObjectName](5*time.Millisecond, 10*time.Second),
		&workqueue.TypedBucketRateLimiter[cache.ObjectName]{Limiter: rate.NewLimiter(rate.Limit(10), 100)},
	)
}

// indexByControllerUID keys a Job (in any form) by the UID of its
// controlling CronJob.
func indexByControllerUID(obj any) ([]string, error) {
	j, ok := obj.(metav1.Object)
	if !ok {
		return nil, nil
	}
	if ref := job.ControllerOf(j); ref != nil {
		return []string{string(ref.UID)}, nil
	}
	return nil, nil
}

// indexByRecordOf keys a Job detached from its CronJob before its run was
// recorded by the UID of that CronJob (job.RecordOf).
func indexByRecordOf(obj any) ([]string, error) {
	if j, ok := obj.(metav1.Object); ok {
		if uid := job.RecordOf(j); uid != "" {
			return []string{string(uid)}, nil
		}
	}
	return nil, nil
}

// Detach takes the controller's event handlers off the shared informers,
// once Run has returned: the informers go on, for the next term's
// controller.
func (c *Controller) Detach() error {
	return c.handlers.detach()
}

// HasSynced reports whether the informer caches have listed once, which
// makes the controller ready (also as a standby without the lease).
func (c *Controller) HasSynced() bool {
	for _, synced := range c.cachesSynced {
		if !synced() {
			return false
		}
	}
	return true
}

// Run waits for the caches, runs workers until ctx is cancelled, and returns
// once every worker has finished the item it held.
func (c *Controller) Run(ctx context.Context, workers int) error {
	defer utilruntime.HandleCrash()
	// On every way out: what no worker took would stay counted in the
	// queue's depth after the term.
	defer func() { c.queue.ShutDown(); drain(c.queue) }()
	if c.broadcaster != nil {
		defer c.broadcaster.Shutdown()
	}
	logger := klog.FromContext(ctx)

	logger.Info("Starting CronJob controller")
	// A term ended (a signal, a lost Lease) before its first sync is no
	// failure: nothing was done, and the next term or process starts over.
	if !cache.WaitForNamedCacheSyncWithContext(ctx, c.cachesSynced...) {
		logger.Info("Stopped before the caches synced")
		return nil
	}
	if err := c.catchUpWithAPIServer(ctx); err != nil {
		if ctx.Err() != nil {
			logger.Info("Stopped before the caches were checked against the API server")
			return nil
		}
		return fmt.Errorf("checking the caches against the API server: %w", err)
	}

	logger.Info("Starting workers", "count", workers)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() { c.runWorker(ctx) })
	}
	wg.Go(func() { c.feedHeldEvents(ctx) })
	// The last writes, the workers' items and the flush, are bounded as
	// one sync is: under leader election by the lease grace from the
	// moment ctx ends (the Lease may be lost).
	lastWrites, cancel := graceContext(ctx, c.leaseGrace, c.fence, c.clock)
	defer cancel()
	<-ctx.Done()
	logger.Info("Shutting down: waiting for workers to finish their items")
	c.queue.ShutDown()
	wg.Wait()
	c.flushDeferred(lastWrites)
	logger.Info("Workers stopped")
	return nil
}

// runWorker processes queue items until the queue shuts down or ctx ends.
func (c *Controller) runWorker(ctx context.Context) {
	for c.processNextWorkItem(ctx) {
	}
}

// processNextWorkItem syncs one CronJob and schedules its next wake-up:
// at its next run time on success, rate-limited after an error.
func (c *Controller) processNextWorkItem(ctx context.Context) bool {
	key, shutdown := c.queue.Get()
	if shutdown {
		return false
	}
	defer c.queue.Done(key)
	defer func() {
		if c.queue.Len() == 0 {
			c.heldEvents.drained() // the burst is over, on every way out
		}
	}()
	if ctx.Err() != nil {
		return false
	}

	// The item in hand is finished even when shutdown begins meanwhile (so
	// a Job is rarely created without its status recorded), within the
	// lease grace under leader election.
	if fenced(c.fence, c.clock) {
		// The Lease may be another's by now (a process thawed after a
		// freeze): no sync starts before a renewal says it is ours. The
		// next term starts over from its own queue if it is not.
		c.queue.AddAfter(key, shardNotReadyRetry)
		return true
	}
	syncCtx, cancel := syncContext(ctx, c.leaseGrace, c.fence, c.clock)
	defer cancel()
	defer c.probe.SyncStarted()()
	if c.shards != nil {
		held, done, ok := c.holdShard(syncCtx, key)
		if !ok {
			return true
		}
		defer done()
		syncCtx = held
	}
	syncCtx = klog.NewContext(syncCtx, klog.LoggerWithValues(klog.FromContext(ctx), "cronjob", key))

	start := time.Now()
	requeueAfter, err := c.syncHandler(syncCtx, key)
	metrics.SyncDuration.Observe(time.Since(start).Seconds())
	if err != nil {
		metrics.SyncErrors.Inc()
	}
	switch {
	case apierrors.IsConflict(err):
		// The cache was behind our own last status write; the retry sees it.
		klog.FromContext(syncCtx).V(4).Info("Status write conflicted; retrying", "err", err)
		c.queue.AddRateLimited(key)
	case err != nil && !retryable(err):
		// Dropped on purpose, and said once: a retry cannot mend it.
		klog.FromContext(syncCtx).Info("Sync failed; not retrying", "err", err)
		c.queue.Forget(key)
	case err != nil:
		utilruntime.HandleErrorWithContext(syncCtx, err, "Sync failed; retrying", "cronjob", key)
		c.queue.AddRateLimited(key)
	default:
		c.queue.Forget(key)
	}
	// On error too: a retry's backoff grows with each failure in a row, and
	// the next run must not wait for it.
	if requeueAfter > 0 {
		c.queue.AddAfter(key, requeueAfter)
	}
	return true
}

// holdShard holds the shard of the CronJob under key for one sync, whose
// context then ends when the hold does: past it, another replica may hold
// the shard. A CronJob of another replica's shard is dropped from the queue
// (its cache entry is on its way out); one of a shard whose caches are
// still filling waits its turn again. A key not in the cache is synced
// unheld: that sync only finds the CronJob gone, and releases only orphans
// of held shards (releaseOrphans).
func (c *Controller) holdShard(ctx context.Context, key cache.ObjectName) (context.Context, func(), bool) {
	obj, exists, err := c.cronJobIndexer.GetByKey(key.String())
	m, ok := obj.(metav1.Object)
	if err != nil || !exists || !ok {
		return ctx, func() {}, true
	}
	return holdForSync(ctx, c.shards, m.GetUID(), c.queue, key)
}

// owns reports whether this replica works the object with shard key uid.
func (c *Controller) owns(uid types.UID) bool {
	return c.shards == nil || c.shards.Owns(uid)
}

// enqueueCronJob queues a CronJob (or its tombstone) for a sync now.
func (c *Controller) enqueueCronJob(obj any) {
	key, err := cache.DeletionHandlingObjectToName(obj)
	if err != nil {
		utilruntime.HandleError(err)
		return
	}
	c.queue.Add(key)
}

// updateCronJob queues a CronJob that really changed. Periodic resyncs,
// which change nothing, and the echo of this process's own status write,
// which the sync that wrote it has accounted for (it queued the CronJob for
// its next run already), are skipped: after a burst of due CronJobs, each
// echo would otherwise be a sync that finds nothing to do.
func (c *Controller) updateCronJob(oldObj, newObj any) {
	oldCJ, ok1 := oldObj.(metav1.Object)
	newCJ, ok2 := newObj.(metav1.Object)
	if !ok1 || !ok2 {
		utilruntime.HandleError(fmt.Errorf("unexpected objects in the CronJob update handler: %T, %T", oldObj, newObj))
		return
	}
	own := c.writtenCronJobs.Seen(newCJ)
	if own || oldCJ.GetResourceVersion() == newCJ.GetResourceVersion() {
		return
	}
	c.enqueueCronJob(newCJ)
}

// deleteCronJob forgets what this process holds for a deleted CronJob and
// queues it, so its sync sees it gone.
func (c *Controller) deleteCronJob(obj any) {
	key, err := cache.DeletionHandlingObjectToName(obj)
	if err != nil {
		utilruntime.HandleError(err)
		return
	}
	if tombstone, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tombstone.Obj
	}
	if cj, ok := obj.(metav1.Object); ok && !c.owns(cj.GetUID()) {
		// Not deleted: its shard left this replica, and the cache with it.
		return
	}
	// Only what was written for this very CronJob: one created again under
	// its name may have been read live already (see ForgetUID).
	var uid types.UID
	if cj, ok := obj.(metav1.Object); ok {
		uid = cj.GetUID()
		// Its Jobs hold the run-record finalizer; nothing else releases it.
		jobs, _ := c.jobIndexer.ByIndex(jobsByControllerUID, string(cj.GetUID()))
		for _, o := range jobs {
			if j, ok := o.(*slim.Job); ok {
				c.noteOrphan(j, job.ControllerOf(j), j.Finalizers)
			}
		}
	}
	c.writtenCronJobs.ForgetUID(key, uid)
	c.queue.Add(key)
}

// addJob queues the owner of a new Job, unless the Job is the one this
// process created, as it created it: the sync that created it has recorded
// it. A Job that arrives already being deleted (seen first after a relist)
// counts as deleted.
func (c *Controller) addJob(obj any) {
	j, err := slimJob(obj)
	if err != nil {
		utilruntime.HandleError(err)
		return
	}
	if j.DeletionTimestamp != nil {
		c.deleteJob(j)
		// Already being deleted when first seen (a restart, a relist): if
		// its CronJob is gone, nothing else would release it.
		if !c.enqueueOwner(j) {
			c.noteOrphan(j, job.ControllerOf(j), j.Finalizers)
		}
		return
	}
	if c.createdJobs.Seen(j) {
		return
	}
	if !c.enqueueOwner(j) {
		c.noteOrphan(j, job.ControllerOf(j), j.Finalizers)
	}
}

// updateJob queues the owner of a changed Job, and its former owner when
// the controller reference changed.
func (c *Controller) updateJob(oldObj, newObj any) {
	oldJob, err := slimJob(oldObj)
	if err != nil {
		utilruntime.HandleError(err)
		return
	}
	newJob, err := slimJob(newObj)
	if err != nil {
		utilruntime.HandleError(err)
		return
	}
	c.createdJobs.Seen(newJob)
	if oldJob.ResourceVersion == newJob.ResourceVersion {
		return
	}
	if !job.HoldsRunRecord(newJob) {
		c.releasedJobs.Forget(newJob.UID)
	}
	oldRef, newRef := job.ControllerOf(oldJob), job.ControllerOf(newJob)
	if oldRef != nil && (newRef == nil || oldRef.UID != newRef.UID) {
		c.enqueueOwner(oldJob)
		// No longer its Job (orphaned by the garbage collector, or edited):
		// nothing else would release it. The cache form of a Job no CronJob
		// controls keeps no finalizers, so the old form's say.
		c.noteOrphan(newJob, oldRef, oldJob.Finalizers)
	}
	if !c.enqueueOwner(newJob) {
		c.noteOrphan(newJob, newRef, newJob.Finalizers)
	}
}

// deleteJob queues the owner of a deleted Job, unwrapping tombstones left
// when the watch missed the delete.
func (c *Controller) deleteJob(obj any) {
	if tombstone, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tombstone.Obj
	}
	j, err := slimJob(obj)
	if err != nil {
		utilruntime.HandleError(err)
		return
	}
	c.createdJobs.Forget(cache.MetaObjectToName(j))
	c.deletedJobs.Forget(j.UID)
	c.releasedJobs.Forget(j.UID)
	if !c.enqueueOwner(j) {
		c.enqueueRunOfGone(j)
	}
}

// enqueueRunOfGone queues the key of j's CronJob, gone, if j is the Job of
// a CronJobRun: the sync of a CronJob gone follows its CronJobRuns, and
// the Job's going is what turns a run not seen to finish Unknown. No other
// event would queue that key again.
func (c *Controller) enqueueRunOfGone(j *slim.Job) {
	if ref := job.ControllerOf(j); c.runInformer != nil && ref != nil && job.IsRequestName(ref.Name, j.Name) {
		c.queue.Add(cache.ObjectName{Namespace: j.Namespace, Name: ref.Name})
	}
}

// slimJob returns the cache form of a Job given to an event handler. The
// informer's transform makes every Job a *slim.Job; a *batchv1.Job (from a
// cache fed some other way) is converted rather than crashing the handler.
func slimJob(obj any) (*slim.Job, error) {
	switch j := obj.(type) {
	case *slim.Job:
		return j, nil
	case *batchv1.Job:
		return slim.NewJob(j), nil
	case *metav1.PartialObjectMetadata:
		// A sharded cache's delete of a Job whose shard left this replica.
		return &slim.Job{ObjectMeta: *j.ObjectMeta.DeepCopy()}, nil
	default:
		return nil, fmt.Errorf("unexpected object in a Job event handler: %T", obj)
	}
}

// enqueueOwner queues the CronJob controlling j, if that CronJob (same name
// and UID) is in the cache, and reports whether it was.
func (c *Controller) enqueueOwner(j *slim.Job) bool {
	ref := job.ControllerOf(j)
	if ref == nil {
		return false
	}
	key := cache.ObjectName{Namespace: j.Namespace, Name: ref.Name}
	obj, exists, err := c.cronJobIndexer.GetByKey(key.String())
	if err != nil || !exists {
		return false
	}
	if cj, ok := obj.(metav1.Object); !ok || cj.GetUID() != ref.UID {
		return false
	}
	c.queue.Add(key)
	return true
}

// cachedCronJob returns the CronJob under key as the cache holds it, or as
// this process last wrote it if the cache does not show that yet, expanded
// into a copy the caller owns; or a NotFound error. A cache still older than
// a write of ours once that write stopped standing in for it (a watch hung
// past ownWritesTTL) is not trusted: the CronJob is read live. Deciding from
// a status older than our own would start again a run whose Job is gone.
func (c *Controller) cachedCronJob(ctx context.Context, key cache.ObjectName) (*cronv1.CronJob, error) {
	obj, exists, err := c.cronJobIndexer.GetByKey(key.String())
	if err != nil {
		return nil, err
	}
	if !exists {
		return nil, apierrors.NewNotFound(cronv1.Resource("cronjobs"), key.Name)
	}
	cached, ok := obj.(*slim.CronJob)
	if !ok {
		return nil, fmt.Errorf("the CronJob cache holds %T under %s", obj, key)
	}
	fresh := c.writtenCronJobs.Fresher(cached)
	if fresh != cached || !c.writtenCronJobs.Behind(cached) {
		return fresh.CronJob()
	}
	klog.FromContext(ctx).V(2).Info("CronJob cache is older than this process's last status write; reading it live",
		"cached", cached.ResourceVersion)
	live, err := c.cronJobs.Get(ctx, key.Namespace, key.Name)
	if err != nil {
		return nil, err
	}
	// Until the cache catches up, the live copy stands in for it.
	c.writtenCronJobs.Wrote(slim.NewCronJob(live.DeepCopy()))
	return live, nil
}

// cachedJob returns the Job under key in the cache.
func (c *Controller) cachedJob(key cache.ObjectName) (*slim.Job, bool) {
	obj, exists, err := c.jobIndexer.GetByKey(key.String())
	if err != nil || !exists {
		return nil, false
	}
	j, ok := obj.(*slim.Job)
	return j, ok
}

// syncHandler brings one CronJob up to date: it gathers the sync's view of
// the CronJob and its Jobs, asks the planner what to do, carries that out,
// and writes the status once if it changed. It returns how long until the
// CronJob must be looked at again (0: only on a change).
//
// A sync that started a Job while other CronJobs wait in the queue does not
// write the status yet: it keeps it in c.deferred and queues the CronJob
// again, behind them. When many CronJobs are due at once, every Job is
// created before any status is written, so no Job waits behind another
// CronJob's status write; the next sync starts from the status it finds kept.
//
// Only the runs wait for nothing: what follows them (the status write,
// releasing finalizers, pruning the history) ends when the next run comes
// due (untilNextRun), and the next sync takes it up again after starting
// that run.
func (c *Controller) syncHandler(ctx context.Context, key cache.ObjectName) (time.Duration, error) {
	v, err := c.view(ctx, key)
	if apierrors.IsNotFound(err) {
		klog.FromContext(ctx).V(4).Info("CronJob is gone")
		c.deferred.Take(key, "")
		runs, runsErr := c.runsOf(key)
		if runsErr == nil {
			runs, runsErr = c.runsOfGone(ctx, key, runs)
		}
		var runsWake time.Duration
		if runsErr == nil {
			runsWake, runsErr = c.followRuns(ctx, runs, nil, nil, nil)
		}
		return runsWake, errors.Join(c.releaseOrphans(ctx, key), runsErr)
	}
	if err != nil {
		return 0, errors.Join(c.releaseOrphans(ctx, key), err)
	}
	plan, err := c.decide(ctx, v)
	if err != nil {
		c.giveBack(key, v)
		// As any failed sync: retried with backoff, and queued for the
		// next run besides, which must not wait for the backoff.
		return dueIn(c.clock, nextRun(v.cronJob, plan, v.input.Now)), err
	}
	// The plan's wait counts from the moment it was decided; the requests
	// that follow may take seconds (client-go waits out a 429's Retry-After
	// inside the call), and the next run must not wake that much later.
	wake := func() time.Duration {
		if plan.RequeueAfter <= 0 {
			return plan.RequeueAfter // no wake-up planned
		}
		return max(plan.RequeueAfter-c.clock.Since(v.input.Now), time.Nanosecond)
	}
	started, met, applyErr := c.apply(ctx, v.cronJob, plan)
	burst := started && c.queue.Len() > 0 && !c.queue.ShuttingDown() && !namesNewTrial(&v.written, &plan.Status) &&
		!countsLimitedRun(v.cronJob, &v.written, &plan.Status)
	// Last, with the Events of the pruning.
	defer c.report(v.cronJob, plan, burst)

	next := nextRun(v.cronJob, plan, v.input.Now)
	tidyCtx, cancel := untilNextRun(ctx, c.clock, next)
	defer cancel()
	// A failed sync is retried with backoff, and queued for its next run
	// besides (processNextWorkItem), but not for the plan's other wake-ups
	// (looking again in a second), which would beat the backoff. One a
	// retry cannot mend keeps them all.
	failed := func(err error) (time.Duration, error) {
		if !retryable(err) {
			return wake(), err
		}
		return dueIn(c.clock, next), err
	}

	cj := v.cronJob
	cj.Status = plan.Status
	releases := plan.Releases
	switch {
	case equality.Semantic.DeepEqual(v.written, cj.Status):
		// Stored already, perhaps by a write whose answer was lost: the
		// metric still owes what that write counted.
		countMissed(cj.Status.MissedRuns, v.counted)
	case burst:
		klog.FromContext(ctx).V(4).Info("Status write deferred behind the queue", "queued", c.queue.Len())
		c.keep(key, cj, v.counted)
		c.queue.Add(key)
	default:
		// The status write first: it records the runs just started, and
		// waits for no pruning.
		err := c.writeStatus(tidyCtx, cj, v.counted)
		switch {
		case err == nil:
			// The status just stored may be the one that sees Jobs
			// finish (or go) whose runs it records: their finalizers go
			// now, not at some later sync. (The Jobs this sync started
			// run on: theirs stay.)
			var listErr error
			releases, listErr = c.recordedReleases(cj)
			applyErr = errors.Join(applyErr, listErr)
		case apierrors.IsNotFound(err):
			return 0, applyErr
		default:
			// Keep what was decided (Jobs started, misses counted): the
			// retry starts from it rather than deciding it again.
			c.keep(key, cj, v.counted)
			if leftForNextRun(tidyCtx, err) {
				klog.FromContext(ctx).V(2).Info("Status write left for the next sync: the next run is due", "err", err)
			} else {
				applyErr = errors.Join(applyErr, fmt.Errorf("updating status of %s: %w", key, err))
			}
		}
	}
	// The CronJobRuns last: their writes wait for no run, and hold up none.
	// They follow the Jobs of the sync's view, with those its creates met.
	jobs := slices.Concat(v.input.Jobs, met, v.input.Records)
	runsWake, runsErr := c.followRuns(tidyCtx, v.runs, cj, jobs, plan.RequestRefusals)
	if err := errors.Join(applyErr, c.tidy(tidyCtx, key, cj, plan, releases), leftOrFailed(tidyCtx, runsErr)); err != nil {
		d, err := failed(err)
		return sooner(d, runsWake), err
	}
	return sooner(wake(), runsWake), nil
}

// decide plans the sync of v. Where the plan settles times as not run
// whose Jobs the view may lack (planner.Plan.NotRun), it looks them up and
// decides again with those it finds; a lookup that fails fails the sync,
// and the plan returned then is the first one, for its next run.
func (c *Controller) decide(ctx context.Context, v *syncView) (*planner.Plan, error) {
	plan := planner.Decide(v.input)
	if len(plan.NotRun) == 0 {
		return plan, nil
	}
	found, records, err := c.lookUpNotRun(ctx, v.cronJob, plan.NotRun)
	if err != nil || len(found)+len(records) == 0 {
		return plan, err
	}
	v.input.Jobs = append(slices.Clip(v.input.Jobs), found...)
	v.input.Records = append(slices.Clip(v.input.Records), records...)
	return planner.Decide(v.input), nil
}

// dueIn is how soon to wake for next, a run's time (zero: no wake-up).
func dueIn(clk clock.PassiveClock, next time.Time) time.Duration {
	if next.IsZero() {
		return 0
	}
	return max(next.Sub(clk.Now()), time.Nanosecond)
}

// namesNewTrial reports whether decided names a trial run written does not.
// Its status write is never deferred: deferred, a crash would lose the only
// record of which run is the trial, and a controller whose Job cache missed
// the trial's create (a hung watch) would start a second one. A trial is
// rare, so the write costs nothing a burst would notice.
func namesNewTrial(written, decided *cronv1.CronJobStatus) bool {
	fs := decided.FailureStreak
	return fs != nil && fs.TrialJob != "" && (written.FailureStreak == nil || written.FailureStreak.TrialJob != fs.TrialJob)
}

// countsLimitedRun reports whether decided counts a scheduled run written
// does not, on a CronJob with spec.maxRuns. Its status write is never
// deferred, for the trial's reason: deferred, a crash would leave the run's
// Job as its only record, and a controller whose Job cache missed that
// Job's create (a hung watch) would count one run too few and start one
// more than maxRuns.
func countsLimitedRun(cj *cronv1.CronJob, written, decided *cronv1.CronJobStatus) bool {
	return cj.Spec.MaxRuns != nil && decided.ScheduledRunCount != written.ScheduledRunCount
}

// nextRun is when cj's next scheduled run is due, as plan decided at now;
// zero when none is planned (a CronJob being deleted keeps a stale time in
// its status).
func nextRun(cj *cronv1.CronJob, plan *planner.Plan, now time.Time) time.Time {
	next := plan.Status.NextScheduleTime
	if cj.DeletionTimestamp != nil || next == nil || !next.After(now) {
		return time.Time{}
	}
	return next.Time
}

// tidy does what a sync's plan asks after its runs are started and its
// status is written: it releases the finalizers of recorded runs and the
// Jobs of a CronJob gone under key, then prunes the history (a pruned Job
// released first goes at once, not through Terminating). It runs under
// untilNextRun's context; what that cuts short is left for the next sync,
// without error.
func (c *Controller) tidy(ctx context.Context, key cache.ObjectName, cj *cronv1.CronJob, plan *planner.Plan, releases []planner.Release) error {
	err := errors.Join(c.releaseJobs(ctx, cj, releases), c.releaseOrphans(ctx, key))
	for _, d := range plan.Deletes {
		if d.Reason == planner.DeleteReplace || ctx.Err() != nil {
			continue
		}
		c.deleteOwnedJob(ctx, cj, d, plan) // best effort: no error
	}
	return leftOrFailed(ctx, err)
}

// syncView is what one sync knows: the CronJob, with the status this
// process last decided for it, and the planner's input built from it.
type syncView struct {
	// cronJob is a private copy the sync may change.
	cronJob *cronv1.CronJob
	// written is the status the API server holds, as far as this process
	// knows: a sync writes only when its decision differs from it.
	written cronv1.CronJobStatus
	// counted are the missed runs the missed-run metric has counted for
	// the CronJob: written's, or those a kept decision was counted against.
	counted []cronv1.MissedRuns
	// runs are the CronJobRuns naming the CronJob (the input's Requests).
	runs  []*cronv1.CronJobRun
	input planner.Input
	// taken is the kept decision the view started from, if any: a sync
	// that fails before it decides puts it back (giveBack).
	taken *deferredStatus
}

// giveBack keeps again the decision v took, for a sync that failed before
// deciding: that decision is still the one to write.
func (c *Controller) giveBack(key cache.ObjectName, v *syncView) {
	if v.taken != nil {
		c.deferred.Put(key, v.cronJob.UID, *v.taken)
	}
}

// deferredStatus is a status decided but not stored yet, with the missed
// runs the metric had counted when it was decided. A write whose answer
// was lost (cut, timed out) may have landed, and the cache then shows its
// counts as written: the metric still owes them, and counts from counted.
type deferredStatus struct {
	status  *cronv1.CronJobStatus
	counted []cronv1.MissedRuns
	// hold is the hold of the CronJob's shard it was decided under (see
	// holdOf); a decision outlives no move of its shard.
	hold uint64
}

// under is the status a sync of cj starts from, given written, the status
// the API server holds: the kept decision, or, when the spec changed after
// it (stale), what of it a new spec does not judge again (see
// planner.StaleDecision), its run history within the new spec's limit.
func (d deferredStatus) under(cj *cronv1.CronJob, written *cronv1.CronJobStatus) (st cronv1.CronJobStatus, stale bool) {
	if d.status.ObservedGeneration == cj.Generation {
		return *d.status, false
	}
	st = planner.StaleDecision(written, d.status)
	st.RecentRuns = planner.TrimRuns(st.RecentRuns, &cj.Spec)
	return st, true
}

// holdOf names this replica's hold of the shard of the CronJob with uid:
// the generation the shard was acquired at, 0 without -shards, and false
// when the shard is not held.
func (c *Controller) holdOf(uid types.UID) (uint64, bool) {
	if c.shards == nil {
		return 0, true
	}
	return c.shards.Acquired(uid)
}

// keep keeps the status decided for cj, to be written by a later sync.
func (c *Controller) keep(key cache.ObjectName, cj *cronv1.CronJob, counted []cronv1.MissedRuns) {
	hold, _ := c.holdOf(cj.UID)
	c.deferred.Put(key, cj.UID, deferredStatus{cj.Status.DeepCopy(), counted, hold})
}

// current reports whether a kept decision still stands for this replica:
// its shard has been held since it was made. A shard that moved away and
// back may have had its runs started and recorded by another replica, and
// the old decision would start them again; the sync decides afresh, from
// the status and the Jobs, as after a restart.
func (c *Controller) current(d deferredStatus, uid types.UID) bool {
	hold, held := c.holdOf(uid)
	return held && hold == d.hold
}

// view gathers the one view of state a sync decides from. Three sources
// meet here and nowhere else: the informer caches, this process's own
// writes the caches do not show yet (created and deleted Jobs, written
// statuses), and statuses decided but deferred. An active Job the view
// cannot find is looked up live: only the API server can say it is gone.
func (c *Controller) view(ctx context.Context, key cache.ObjectName) (*syncView, error) {
	cj, err := c.cachedCronJob(ctx, key) // a copy of its own: the sync changes it
	if err != nil {
		return nil, err
	}
	// The Jobs first: their lookups read only the UID, and a failed one
	// must leave a kept decision where it is.
	jobs, err := c.jobsOwnedBy(cj)
	if err != nil {
		return nil, err
	}
	if jobs, err = c.resolveFailedCreates(ctx, cj, jobs); err != nil {
		return nil, err
	}
	v := &syncView{cronJob: cj, written: *cj.Status.DeepCopy()}
	v.counted = v.written.MissedRuns
	if d, ok := c.deferred.Take(key, cj.UID); ok && !c.current(d, cj.UID) {
		klog.FromContext(ctx).V(2).Info("Dropped a deferred status decided before the CronJob's shard moved; deciding again")
	} else if ok {
		v.taken = &d
		v.counted = d.counted
		var stale bool
		if cj.Status, stale = d.under(cj, &v.written); stale {
			klog.FromContext(ctx).V(2).Info("Deferred status was decided under an older spec; deciding again", "generation", cj.Generation)
		}
	}
	records, err := c.recordsOf(cj)
	if err != nil {
		return nil, err
	}
	runs, err := c.runsOf(key)
	if err != nil {
		return nil, err
	}
	v.runs = runs
	v.input = planner.Input{CronJob: cj, Jobs: jobs, Records: records, Now: c.clock.Now(), Written: &v.written, Calendars: c.calendarsOf(cj), CalendarCache: c.calendarCache,
		Requests: requestsOf(runs)}
	for _, ref := range cj.Status.Active {
		if slices.ContainsFunc(jobs, func(j planner.Job) bool { return j.GetUID() == ref.UID }) {
			continue
		}
		if cached, ok := c.cachedJob(cache.ObjectName{Namespace: ref.Namespace, Name: ref.Name}); ok && cached.UID == ref.UID && !job.IsControlledBy(cached, string(cj.UID)) {
			// The cache shows it, outside the CronJob's index: detached.
			v.input.Detached = addUID(v.input.Detached, ref.UID)
			continue
		}
		live, err := c.jobs.Get(ctx, ref.Namespace, ref.Name)
		switch {
		case apierrors.IsNotFound(err) || (err == nil && live.UID != ref.UID):
			v.input.Gone = addUID(v.input.Gone, ref.UID)
		case err == nil && !job.IsControlledBy(live, string(cj.UID)):
			v.input.Detached = addUID(v.input.Detached, ref.UID)
		case err == nil:
			// Still the CronJob's, and the cache behind: the API server's
			// copy stands in for it, finished or not.
			v.input.Jobs = append(v.input.Jobs, slim.NewJob(live))
		default:
			// Undecidable now; the Job stays active and the sync goes on,
			// so one unreadable Job does not hold back the CronJob.
			klog.FromContext(ctx).V(2).Info("Checking an active Job failed; it stays active", "job", klog.KRef(ref.Namespace, ref.Name), "err", err)
		}
	}
	return v, nil
}

// addUID adds uid to set, made if nil.
func addUID(set map[types.UID]bool, uid types.UID) map[types.UID]bool {
	if set == nil {
		set = map[types.UID]bool{}
	}
	set[uid] = true
	return set
}

// resolveFailedCreates looks up the Jobs of cj whose create failed without
// saying whether it was applied, and adds those that exist to jobs: a run
// whose response was lost started, and must not be counted as missed or
// started again under a name the cache does not show yet. A lookup that
// fails fails the sync: deciding without knowing could count a started run
// as missed. (The entry expires with the own-writes window, by when the
// cache is the answer.)
func (c *Controller) resolveFailedCreates(ctx context.Context, cj *cronv1.CronJob, jobs []planner.Job) ([]planner.Job, error) {
	for _, key := range c.failedCreates.Of(cj.UID) {
		if slices.ContainsFunc(jobs, func(j planner.Job) bool { return j.GetName() == key.Name }) {
			c.failedCreates.Forget(key)
			continue
		}
		live, err := c.jobs.Get(ctx, key.Namespace, key.Name)
		switch {
		case err == nil:
			c.failedCreates.Forget(key)
			if mine := slim.NewJob(live); job.IsControlledBy(mine, string(cj.UID)) {
				c.createdJobs.Wrote(mine)
				jobs = append(jobs, mine)
			}
		case apierrors.IsNotFound(err):
			c.failedCreates.Forget(key)
		default:
			return nil, fmt.Errorf("looking up Job %s, whose create failed: %w", key.Name, err)
		}
	}
	return jobs, nil
}

// lookUpNotRun reads from the API server the Jobs of the times a plan
// settles as not run (planner.Plan.NotRun) and returns those that exist
// and record runs of cj: its own Jobs, and those detached from it before
// its status recorded them (records). Such a Job is a run that started,
// which the view lacked; like a lost create's Job, each is remembered as
// an own write for the window, so the syncs after this one see it too.
// The Jobs found absent are remembered for the window as well (absentJobs),
// so a retry reads only what is still unknown. A lookup that fails fails
// the sync: settling a started run as not run would let maxRuns start one
// run too many, Forbid or Replace a run beside it, or a pause a second
// trial.
func (c *Controller) lookUpNotRun(ctx context.Context, cj *cronv1.CronJob, times []time.Time) (jobs, records []planner.Job, _ error) {
	var errs []error
	for _, t := range times {
		key := cache.ObjectName{Namespace: cj.Namespace, Name: job.Name(cj.Name, t)}
		if c.absentJobs.Known(key) {
			continue
		}
		live, err := c.jobs.Get(ctx, key.Namespace, key.Name)
		switch {
		case apierrors.IsNotFound(err):
			c.absentJobs.Absent(key)
			continue
		case err != nil:
			errs = append(errs, fmt.Errorf("looking up Job %s before counting its run as not started: %w", key.Name, err))
			continue
		}
		found := slim.NewJob(live)
		switch {
		case job.IsControlledBy(found, string(cj.UID)):
			c.createdJobs.Wrote(found)
			jobs = append(jobs, found)
		case job.RecordOf(found) == cj.UID:
			records = append(records, found)
		default:
			continue
		}
		klog.FromContext(ctx).V(2).Info("Found a run's Job the caches lack", "job", klog.KObj(found))
	}
	return jobs, records, errors.Join(errs...)
}

// jobsOwnedBy returns the Jobs controlled by cj: those in the UID index and
// those this process created that the cache does not show yet, each as the
// deletes of this process leave it (afterDeletes). They are the caches'
// objects, shared: read them, never change them.
func (c *Controller) jobsOwnedBy(cj *cronv1.CronJob) ([]planner.Job, error) {
	objs, err := c.jobIndexer.ByIndex(jobsByControllerUID, string(cj.UID))
	if err != nil {
		return nil, fmt.Errorf("listing Jobs of %s: %w", klog.KObj(cj), err)
	}
	jobs := make([]planner.Job, 0, len(objs))
	cached := make(map[types.UID]bool, len(objs))
	for _, o := range objs {
		if j, ok := o.(*slim.Job); ok {
			cached[j.UID] = true
			if j, ok := c.afterDeletes(j); ok {
				jobs = append(jobs, j)
			}
		}
	}
	for _, j := range c.createdJobs.OwnedBy(cj.UID) {
		if cached[j.UID] {
			continue // the cache's form, newer or as new
		}
		if j, ok := c.afterDeletes(j); ok {
			jobs = append(jobs, j)
		}
	}
	return jobs, nil
}

// afterDeletes is j as the API server holds it after this process's
// deletes, which the cache may not show yet: a Job it deleted that is shown
// live is gone (ok false) if nothing held it (it lacked the run-record
// finalizer, or this process released that since), and else being deleted.
// The finalizer keeps that one until a stored status records its run, and
// so must the view: a sync that starts from the stored status (a deferred
// decision made again after a spec edit, or dropped) counts the runs it
// does not record from their Jobs, a Job that Replace deleted among them.
func (c *Controller) afterDeletes(j *slim.Job) (*slim.Job, bool) {
	if j.DeletionTimestamp != nil {
		return j, true
	}
	at, deleted := c.deletedJobs.At(j.UID)
	switch {
	case !deleted:
		return j, true
	case !job.HoldsRunRecord(j) || c.releasedJobs.Has(j.UID):
		return nil, false
	}
	return j.Deleting(at), true
}

// recordsOf returns the Jobs a user detached from cj before its status
// recorded their runs (planner.Input.Records): the cache's objects, shared.
func (c *Controller) recordsOf(cj *cronv1.CronJob) ([]planner.Job, error) {
	objs, err := c.jobIndexer.ByIndex(jobsByRecordOf, string(cj.UID))
	if err != nil {
		return nil, fmt.Errorf("listing detached Jobs of %s: %w", klog.KObj(cj), err)
	}
	var records []planner.Job
	for _, o := range objs {
		if r, ok := o.(*slim.Job); ok {
			records = append(records, r)
		}
	}
	return records, nil
}

// apply starts the runs of plan for cj and reports each outcome back into
// it. Replace deletes go first, and one that fails holds back the scheduled
// creates. Scheduled creates go in order and stop at the first failure a
// retry may mend, so no run is skipped for a later one; a run-now create
// stands on its own. The rest of the plan is tidy's, after the creates, so
// no run waits behind it. started says a Job was created; the error joins
// the failures worth a retry, and a permanent one (noRetry) only when
// nothing else failed. met are the Jobs of cj its creates made or found.
func (c *Controller) apply(ctx context.Context, cj *cronv1.CronJob, plan *planner.Plan) (started bool, met []planner.Job, _ error) {
	var errs []error
	var scheduledBlocked bool
	for _, d := range plan.Deletes {
		if d.Reason != planner.DeleteReplace {
			continue // the history is pruned after the runs start (tidy)
		}
		if err := c.deleteOwnedJob(ctx, cj, d, plan); err != nil {
			errs = append(errs, err)
			scheduledBlocked = true
		}
	}
	for _, create := range plan.Creates {
		if (!create.Manual && scheduledBlocked) || !plan.Wants(create) {
			continue
		}
		if create.Request != "" {
			pending, err := c.requestPending(ctx, cj, create)
			if err != nil {
				plan.CreateFailed(create, err)
				errs = append(errs, err)
			}
			if !pending {
				continue
			}
		}
		j, created, err := c.createJob(ctx, cj, create, plan)
		started = started || created
		if j != nil {
			met = append(met, j)
		}
		if err != nil {
			errs = append(errs, err)
			scheduledBlocked = scheduledBlocked || !create.Manual
		}
	}
	return started, met, errors.Join(errs...)
}

// createJob creates the Job of one planned run and reports the outcome to
// plan. The Job's name is the run's lock: a Job of that name that cj
// controls means the run started already, anyone else's means it never can.
// met is the run's Job, made now (created) or found made; nil if none.
func (c *Controller) createJob(ctx context.Context, cj *cronv1.CronJob, create planner.Create, plan *planner.Plan) (met *slim.Job, created bool, _ error) {
	want := create.Job
	// The cache first: a Job there means no call at all, and a foreign one
	// no retry storm.
	key := cache.MetaObjectToName(want)
	if existing, ok := c.cachedJob(key); ok {
		return c.existingJob(ctx, cj, create, existing, plan), false, nil
	}
	if mine, ok := c.createdJobs.Get(key); ok {
		return c.existingJob(ctx, cj, create, mine, plan), false, nil
	}
	c.absentJobs.Forget(key) // found absent before, it may exist after this
	j, err := c.jobs.Create(ctx, want)
	switch {
	case err == nil:
		mine := slim.NewJob(j)
		c.createdJobs.Wrote(mine)
		metrics.JobsCreated.Inc()
		if !create.Manual {
			// The API server's creationTimestamp has whole seconds; the clock
			// at the create's return resolves the sub-second skew.
			metrics.JobCreationSkew.Observe(c.clock.Since(create.Time).Seconds())
		}
		klog.FromContext(ctx).V(2).Info("Created Job", "job", klog.KObj(j), "for", create.What())
		plan.Started(create, mine, true)
		return mine, true, nil
	case apierrors.IsAlreadyExists(err):
		live, getErr := c.jobs.Get(ctx, want.Namespace, want.Name)
		if getErr != nil {
			plan.CreateFailed(create, err)
			return nil, false, fmt.Errorf("reading existing Job %s: %w", want.Name, getErr)
		}
		return c.existingJob(ctx, cj, create, slim.NewJob(live), plan), false, nil
	case apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause) || apierrors.IsNotFound(err):
		// The namespace is going or gone, and the CronJob with it: retrying
		// only adds load until its delete event arrives.
		return nil, false, noRetry{fmt.Errorf("creating Job %s: %w", want.Name, err)}
	case apierrors.IsInvalid(err) || apierrors.IsBadRequest(err):
		// The template is at fault; only a new run or a new spec can help.
		plan.NotStarted(create, planner.Rejected, err.Error())
		return nil, false, nil
	default:
		c.failedCreates.Failed(key, cj.UID)
		plan.CreateFailed(create, err)
		return nil, false, fmt.Errorf("creating Job %s for %s: %w", want.Name, create.What(), err)
	}
}

// existingJob handles a Job that already holds the name of a planned run,
// and returns it if it is the run's (cj controls it), else nil.
func (c *Controller) existingJob(ctx context.Context, cj *cronv1.CronJob, create planner.Create, existing *slim.Job, plan *planner.Plan) *slim.Job {
	if !job.IsControlledBy(existing, string(cj.UID)) {
		plan.NotStarted(create, planner.NameTaken, "")
		return nil
	}
	klog.FromContext(ctx).V(2).Info("Job exists already", "job", klog.KObj(existing), "for", create.What())
	plan.Started(create, existing, false)
	return existing
}

// deleteOwnedJob deletes one Job of cj (only if it still has the planned UID)
// and reports the outcome to plan. A Job already gone is not an error.
func (c *Controller) deleteOwnedJob(ctx context.Context, cj *cronv1.CronJob, d planner.Delete, plan *planner.Plan) error {
	if d.Reason == planner.DeleteReplace {
		// A running Job, read live first, as the built-in does: a user
		// may have detached it since the cache saw it, and a Job the
		// CronJob no longer controls is not its to delete.
		live, err := c.jobs.Get(ctx, cj.Namespace, d.Name)
		switch {
		case err == nil && live.UID == d.UID && !job.IsControlledBy(live, string(cj.UID)):
			klog.FromContext(ctx).V(2).Info("Not replacing a Job the CronJob no longer controls", "job", klog.KRef(cj.Namespace, d.Name))
			plan.AlreadyGone(d)
			return nil
		case err != nil && !apierrors.IsNotFound(err):
			plan.DeleteFailed(d, err)
			return fmt.Errorf("reading Job %s to replace it: %w", d.Name, err)
		}
	}
	err := c.jobs.Delete(ctx, cj.Namespace, d.Name, d.UID)
	switch {
	case err == nil:
		c.deletedJob(cj.Namespace, d)
		metrics.JobsDeleted.WithLabelValues(string(d.Reason)).Inc()
		plan.Deleted(d)
		return nil
	case apierrors.IsNotFound(err) || apierrors.IsConflict(err):
		// Gone already, or the name now belongs to another Job.
		c.forgetJob(cj.Namespace, d)
		plan.AlreadyGone(d)
		return nil
	case leftForNextRun(ctx, err):
		return nil // pruning waits for the next sync; nothing failed
	default:
		klog.FromContext(ctx).Error(err, "Deleting Job failed", "job", klog.KRef(cj.Namespace, d.Name), "reason", d.Reason)
		plan.DeleteFailed(d, err)
		if d.Reason == planner.DeleteHistory {
			// Best effort: the next sync tries again.
			return nil
		}
		return fmt.Errorf("deleting Job %s (%s): %w", d.Name, d.Reason, err)
	}
}

// forgetJob drops a Job found gone from this process's own writes, and
// hides it from syncs until the cache drops it too.
func (c *Controller) forgetJob(namespace string, d planner.Delete) {
	c.createdJobs.Forget(cache.ObjectName{Namespace: namespace, Name: d.Name})
	c.deletedJobs.Deleted(d.UID)
}

// deletedJob notes that this process deleted d's Job. One it created that
// the cache does not show yet stays among its own writes while the
// run-record finalizer holds it, being deleted (see afterDeletes): a create
// of its name meets it, as the API server would.
func (c *Controller) deletedJob(namespace string, d planner.Delete) {
	key := cache.ObjectName{Namespace: namespace, Name: d.Name}
	c.deletedJobs.Deleted(d.UID)
	if mine, ok := c.createdJobs.Get(key); ok && mine.UID == d.UID {
		if mine, ok := c.afterDeletes(mine); ok {
			c.createdJobs.Wrote(mine)
			return
		}
	}
	c.createdJobs.Forget(key)
}

// writeStatus writes cj's status and remembers the result until the cache
// shows it. The missed-run metric grows here, by what the write adds to
// counted (the missed runs counted already, see deferredStatus), so it
// counts what the status counts: a decision never written (made again after
// an edit, lost in a crash) counts nothing.
func (c *Controller) writeStatus(ctx context.Context, cj *cronv1.CronJob, counted []cronv1.MissedRuns) error {
	updated, err := c.cronJobs.UpdateStatus(ctx, cj)
	if err != nil {
		return err
	}
	c.writtenCronJobs.Wrote(slim.NewCronJob(updated))
	countMissed(cj.Status.MissedRuns, counted)
	return nil
}

// countMissed grows the missed-run metric by what stored counts beyond
// counted, the missed runs it has counted already.
func countMissed(stored, counted []cronv1.MissedRuns) {
	for _, m := range stored {
		before := int64(0)
		if i := slices.IndexFunc(counted, func(w cronv1.MissedRuns) bool { return w.Reason == m.Reason }); i >= 0 {
			before = counted[i].Count
		}
		if m.Count > before {
			metrics.MissedSchedules.WithLabelValues(m.Reason).Add(float64(m.Count - before))
		}
	}
}

// flushDeferred writes the statuses still deferred when the workers stop,
// so a clean shutdown leaves every Job it created recorded. (After a crash,
// or past the lease grace, the next leader reads those runs off the Jobs'
// scheduled-at annotations.) ctx must still be live: Run's ends with the
// lease grace.
func (c *Controller) flushDeferred(ctx context.Context) {
	c.flushHeldEvents(ctx) // handed over at once; the broadcaster may drop some of a large burst
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	for key, d := range c.deferred.Drain() {
		cj, err := c.cachedCronJob(ctx, key)
		if err != nil || cj.UID != d.UID || !c.current(d.Value, cj.UID) {
			continue
		}
		// A decision an edit overtook is written as a sync would take it
		// up: what it judged by the old spec is left for the next leader
		// to judge by the new one.
		cj.Status, _ = d.Value.under(cj, &cj.Status)
		if err := c.writeStatus(ctx, cj, d.Value.counted); err != nil {
			klog.FromContext(ctx).Error(err, "Writing a deferred status at shutdown failed", "cronjob", key)
			continue
		}
		// Recorded now: leave no finalizer for the next leader to release.
		if err := c.releaseRecorded(ctx, cj); err != nil {
			klog.FromContext(ctx).Error(err, "Releasing Jobs at shutdown failed", "cronjob", key)
		}
	}
}

// noRetry is a failure a retry cannot mend. The worker logs it once and
// does not requeue the CronJob for it.
type noRetry struct{ err error }

func (e noRetry) Error() string { return e.err.Error() }
func (e noRetry) Unwrap() error { return e.err }

// retryable reports whether err holds a failure a retry may mend: any
// error but a noRetry (errors.Join of several counts if any is retryable).
func retryable(err error) bool {
	if err == nil {
		return false
	}
	if joined, ok := err.(interface{ Unwrap() []error }); ok {
		return slices.ContainsFunc(joined.Unwrap(), retryable)
	}
	var nr noRetry
	return !errors.As(err, &nr)
}
