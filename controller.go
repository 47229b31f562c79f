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
	"k8s.io/apimachinery/pkg/api/meta"
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
	"k8s.io/utils/ptr"

	cronv1 "github.com/cronjob-controller/cronjob-controller/pkg/apis/batch/v1"
	"github.com/cronjob-controller/cronjob-controller/pkg/control"
	clientset "github.com/cronjob-controller/cronjob-controller/pkg/generated/clientset/versioned"
	cronscheme "github.com/cronjob-controller/cronjob-controller/pkg/generated/clientset/versioned/scheme"
	informers "github.com/cronjob-controller/cronjob-controller/pkg/generated/informers/externalversions/batch/v1"
	"github.com/cronjob-controller/cronjob-controller/pkg/job"
	"github.com/cronjob-controller/cronjob-controller/pkg/metrics"
	"github.com/cronjob-controller/cronjob-controller/pkg/ownwrites"
	"github.com/cronjob-controller/cronjob-controller/pkg/schedule"
	"github.com/cronjob-controller/cronjob-controller/pkg/slim"
)

// controllerAgentName names this controller in Events and logs.
const controllerAgentName = "cronjob-controller"

// jobsByControllerUID indexes Jobs by the UID of the CronJob that controls
// them, so a sync finds its Jobs without scanning a namespace.
const jobsByControllerUID = "jobsByControllerUID"

// Event reasons. Warnings are things a user should act on.
const (
	ReasonSuccessfulCreate   = "SuccessfulCreate"
	ReasonSawCompletedJob    = "SawCompletedJob"
	ReasonSuccessfulDelete   = "SuccessfulDelete"
	ReasonMissSchedule       = "MissSchedule"
	ReasonJobAlreadyActive   = "JobAlreadyActive"
	ReasonTooManyMissedTimes = "TooManyMissedTimes"
	ReasonInvalidSchedule    = schedule.ReasonInvalidSchedule
	ReasonUnknownTimeZone    = schedule.ReasonUnknownTimeZone
	ReasonFailedCreate       = "FailedCreate"
	ReasonFailedDelete       = "FailedDelete"
	ReasonUnexpectedJob      = "UnexpectedJob"
	ReasonMissingJob         = "MissingJob"
)

// Condition reasons that are not also Event reasons.
const (
	reasonScheduleValid = "Valid"
	reasonJobCreated    = "JobCreated"
	reasonJobRejected   = "JobRejected"
	reasonRunStarted    = "Started"
)

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
	// deferred holds statuses computed by syncs that started a Job while
	// other CronJobs waited in the queue; see syncHandler.
	deferred *deferredStatuses

	// queue holds the CronJobs to sync; a CronJob waits in it (AddAfter)
	// until its next scheduled time, so nothing polls.
	queue workqueue.TypedRateLimitingInterface[cache.ObjectName]
	// recorder emits Kubernetes Events about CronJobs.
	recorder record.EventRecorder
	// broadcaster is the recorder's, when the controller made it itself.
	broadcaster record.EventBroadcaster
	// clock is "now" for every scheduling decision.
	clock clock.WithTicker
}

// Option changes how NewController builds a Controller.
type Option func(*Controller)

// WithEventRecorder makes the controller emit Events through r instead of a
// broadcaster of its own on the kube clientset.
func WithEventRecorder(r record.EventRecorder) Option {
	return func(c *Controller) { c.recorder = r }
}

// NewController wires the event handlers and the Job index into the given
// informers. Call it before the informer factories start.
func NewController(
	ctx context.Context,
	kubeclientset kubernetes.Interface,
	cronclientset clientset.Interface,
	jobInformer batchinformers.JobInformer,
	cronJobInformer informers.CronJobInformer,
	clk clock.WithTicker,
	opts ...Option,
) (*Controller, error) {
	logger := klog.FromContext(ctx)
	utilruntime.Must(cronscheme.AddToScheme(scheme.Scheme))

	c := &Controller{
		jobs:           control.NewJobs(kubeclientset),
		cronJobs:       control.NewCronJobs(cronclientset),
		jobIndexer:     jobInformer.Informer().GetIndexer(),
		cronJobIndexer: cronJobInformer.Informer().GetIndexer(),
		cachesSynced:   []cache.InformerSynced{jobInformer.Informer().HasSynced, cronJobInformer.Informer().HasSynced},
		clock:          clk,
		createdJobs: ownwrites.New(clk, ownWritesTTL, func(j *slim.Job) types.UID {
			if ref := job.ControllerOf(j); ref != nil {
				return ref.UID
			}
			return ""
		}),
		writtenCronJobs: ownwrites.New[*slim.CronJob](clk, ownWritesTTL, nil),
		deferred:        newDeferredStatuses(),
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(
			newRateLimiter(),
			workqueue.TypedRateLimitingQueueConfig[cache.ObjectName]{Name: "cronjob", Clock: clk},
		),
	}
	for _, o := range opts {
		o(c)
	}
	if c.recorder == nil {
		c.broadcaster = record.NewBroadcaster(record.WithContext(ctx))
		c.broadcaster.StartStructuredLogging(0)
		c.broadcaster.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: kubeclientset.CoreV1().Events("")})
		c.recorder = c.broadcaster.NewRecorder(scheme.Scheme, corev1.EventSource{Component: controllerAgentName})
	}

	// The caches hold every Job and CronJob of the cluster for the life of
	// the process: keep them in their slim forms.
	if err := jobInformer.Informer().SetTransform(slim.FromJob); err != nil {
		return nil, fmt.Errorf("setting the Job transform: %w", err)
	}
	if err := cronJobInformer.Informer().SetTransform(slim.FromCronJob); err != nil {
		return nil, fmt.Errorf("setting the CronJob transform: %w", err)
	}
	if err := jobInformer.Informer().AddIndexers(cache.Indexers{jobsByControllerUID: indexByControllerUID}); err != nil {
		return nil, fmt.Errorf("adding the Job index: %w", err)
	}
	if _, err := cronJobInformer.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.enqueueCronJob,
		UpdateFunc: c.updateCronJob,
		DeleteFunc: c.deleteCronJob,
	}); err != nil {
		return nil, fmt.Errorf("adding CronJob handlers: %w", err)
	}
	if _, err := jobInformer.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
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
	defer c.queue.ShutDown()
	if c.broadcaster != nil {
		defer c.broadcaster.Shutdown()
	}
	logger := klog.FromContext(ctx)

	logger.Info("Starting CronJob controller")
	if !cache.WaitForNamedCacheSyncWithContext(ctx, c.cachesSynced...) {
		return errors.New("caches did not sync before shutdown")
	}

	logger.Info("Starting workers", "count", workers)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() { c.runWorker(ctx) })
	}
	<-ctx.Done()
	logger.Info("Shutting down: waiting for workers to finish their items")
	c.queue.ShutDown()
	wg.Wait()
	c.flushDeferred(ctx)
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
	if ctx.Err() != nil {
		return false
	}

	// The item in hand is finished even when shutdown begins meanwhile, so a
	// Job is never created without its status being recorded.
	syncCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), syncTimeout)
	defer cancel()
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
	case err != nil:
		utilruntime.HandleErrorWithContext(syncCtx, err, "Sync failed; retrying", "cronjob", key)
		c.queue.AddRateLimited(key)
	default:
		c.queue.Forget(key)
		if requeueAfter > 0 {
			c.queue.AddAfter(key, requeueAfter)
		}
	}
	return true
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
	c.writtenCronJobs.Forget(key)
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
		return
	}
	if c.createdJobs.Seen(j) {
		return
	}
	c.enqueueOwner(j)
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
	oldRef, newRef := job.ControllerOf(oldJob), job.ControllerOf(newJob)
	if oldRef != nil && (newRef == nil || oldRef.UID != newRef.UID) {
		c.enqueueOwner(oldJob)
	}
	c.enqueueOwner(newJob)
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
	c.enqueueOwner(j)
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
	default:
		return nil, fmt.Errorf("unexpected object in a Job event handler: %T", obj)
	}
}

// enqueueOwner queues the CronJob controlling j, if that CronJob (same name
// and UID) is in the cache.
func (c *Controller) enqueueOwner(j *slim.Job) {
	ref := job.ControllerOf(j)
	if ref == nil {
		return
	}
	key := cache.ObjectName{Namespace: j.Namespace, Name: ref.Name}
	obj, exists, err := c.cronJobIndexer.GetByKey(key.String())
	if err != nil || !exists {
		return
	}
	if cj, ok := obj.(metav1.Object); !ok || cj.GetUID() != ref.UID {
		return
	}
	c.queue.Add(key)
}

// cachedCronJob returns the CronJob under key as the cache holds it, or as
// this process last wrote it if the cache does not show that yet, expanded
// into a copy the caller owns; or a NotFound error.
func (c *Controller) cachedCronJob(key cache.ObjectName) (*cronv1.CronJob, error) {
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
	return c.writtenCronJobs.Fresher(cached).CronJob()
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

// syncHandler brings one CronJob up to date: it reconciles its Jobs, starts
// the run that is due, and writes the status once if it changed. It returns
// how long until the CronJob must be looked at again (0: only on a change).
//
// A sync that started a Job while other CronJobs wait in the queue does not
// write the status yet: it keeps it in c.deferred and queues the CronJob
// again, behind them. When many CronJobs are due at once, every Job is
// created before any status is written, so no Job waits behind another
// CronJob's status write; the next sync writes the status it finds kept.
func (c *Controller) syncHandler(ctx context.Context, key cache.ObjectName) (time.Duration, error) {
	cj, err := c.cachedCronJob(key) // a copy of its own: the sync changes it
	if apierrors.IsNotFound(err) {
		klog.FromContext(ctx).V(4).Info("CronJob is gone")
		c.deferred.take(key, "")
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	before := cj.Status.DeepCopy()
	jobs, err := c.jobsOwnedBy(cj)
	if err != nil {
		return 0, err
	}
	if status, ok := c.deferred.take(key, cj.UID); ok {
		cj.Status = *status
	}
	requeueAfter, started, syncErr := c.syncCronJob(ctx, cj, jobs, c.clock.Now())

	cj.Status.ActiveCount = int32(len(cj.Status.Active))
	cj.Status.ObservedGeneration = cj.Generation
	if equality.Semantic.DeepEqual(*before, cj.Status) {
		return requeueAfter, syncErr
	}
	if started && c.queue.Len() > 0 && !c.queue.ShuttingDown() {
		klog.FromContext(ctx).V(4).Info("Status write deferred behind the queue", "queued", c.queue.Len())
		c.deferred.put(key, cj.UID, &cj.Status)
		c.queue.Add(key)
		return requeueAfter, syncErr
	}
	if err := c.writeStatus(ctx, cj); err != nil {
		if apierrors.IsNotFound(err) {
			return 0, syncErr
		}
		// Keep what was decided (counted misses, conditions): the retry
		// starts from it rather than deciding it again.
		c.deferred.put(key, cj.UID, &cj.Status)
		return 0, errors.Join(syncErr, fmt.Errorf("updating status of %s: %w", key, err))
	}
	return requeueAfter, syncErr
}

// writeStatus writes cj's status and remembers the result until the cache
// shows it.
func (c *Controller) writeStatus(ctx context.Context, cj *cronv1.CronJob) error {
	updated, err := c.cronJobs.UpdateStatus(ctx, cj)
	if err != nil {
		return err
	}
	c.writtenCronJobs.Wrote(slim.NewCronJob(updated))
	return nil
}

// flushDeferred writes the statuses still deferred when the workers stop,
// so a clean shutdown leaves every Job it created recorded. (After a crash
// the next leader adopts those Jobs from their scheduled-at annotation.)
func (c *Controller) flushDeferred(ctx context.Context) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	for key, d := range c.deferred.drain() {
		cj, err := c.cachedCronJob(key)
		if err != nil || cj.UID != d.uid {
			continue
		}
		cj.Status = *d.status
		if err := c.writeStatus(ctx, cj); err != nil {
			klog.FromContext(ctx).Error(err, "Writing a deferred status at shutdown failed", "cronjob", key)
		}
	}
}

// jobsOwnedBy returns the Jobs controlled by cj: those in the UID index,
// and those this process created that the cache does not show yet. They are
// the caches' objects, shared: read them, never change them.
func (c *Controller) jobsOwnedBy(cj *cronv1.CronJob) ([]*slim.Job, error) {
	objs, err := c.jobIndexer.ByIndex(jobsByControllerUID, string(cj.UID))
	if err != nil {
		return nil, fmt.Errorf("listing Jobs of %s: %w", klog.KObj(cj), err)
	}
	jobs := make([]*slim.Job, 0, len(objs))
	for _, o := range objs {
		if j, ok := o.(*slim.Job); ok {
			jobs = append(jobs, j)
		}
	}
	for _, j := range c.createdJobs.OwnedBy(cj.UID) {
		if !slices.ContainsFunc(jobs, func(cached *slim.Job) bool { return cached.UID == j.UID }) {
			jobs = append(jobs, j)
		}
	}
	return jobs, nil
}

// syncCronJob does the work of a sync on cj, a private copy whose status it
// updates in place. jobs are the Jobs cj controls.
// started says whether it created the Job of a scheduled run.
func (c *Controller) syncCronJob(ctx context.Context, cj *cronv1.CronJob, jobs []*slim.Job, now time.Time) (_ time.Duration, started bool, _ error) {
	logger := klog.FromContext(ctx)
	if err := c.reconcileActive(ctx, cj, jobs); err != nil {
		return 0, false, err
	}
	c.pruneHistory(ctx, cj, jobs)

	if cj.DeletionTimestamp != nil {
		return 0, false, nil
	}
	if value := cj.Annotations[cronv1.RunNowAnnotation]; value != "" && value != cj.Status.LastRunNow {
		if retry, err := c.runNow(ctx, cj, value); err != nil && retry {
			return 0, false, err
		}
	}
	resolved, err := schedule.Resolve(cj.Spec.Schedule, cj.Namespace+"/"+cj.Name)
	if err != nil {
		c.scheduleInvalid(ctx, cj, err, now)
		return 0, false, nil
	}
	sched, err := schedule.Parse(resolved, cj.Spec.TimeZone)
	if err != nil {
		c.scheduleInvalid(ctx, cj, err, now)
		return 0, false, nil
	}
	c.setCondition(cj, cronv1.ConditionScheduleValid, metav1.ConditionTrue, reasonScheduleValid, "", now)
	observeSchedule(cj, resolved, now)

	if cj.Spec.Suspend != nil && *cj.Spec.Suspend {
		logger.V(4).Info("Suspended: no run started")
		cj.Status.NextScheduleTime = nil
		return 0, false, nil
	}

	due, err := sched.MostRecent(schedule.Earliest(cj), now)
	if err != nil {
		c.scheduleInvalid(ctx, cj, &schedule.Error{Reason: schedule.ReasonInvalidSchedule, Message: fmt.Sprintf("schedule %q: %v", cj.Spec.Schedule, err)}, now)
		return 0, false, nil
	}
	cj.Status.NextScheduleTime = timeOrNil(due.Next)
	requeueAfter := untilNext(due, now)
	if due.Time.IsZero() {
		logger.V(4).Info("Nothing due", "next", due.Next)
		return requeueAfter, false, nil
	}
	// The run to consider: the most recent due time, or under catchUpPolicy
	// All the oldest missed one still to start.
	run, catchingUp := due.Time, false
	if cj.Spec.CatchUpPolicy == cronv1.CatchUpAll {
		if oldest := c.oldestToCatchUp(cj, sched, now); !oldest.IsZero() && oldest.Before(due.Time) {
			run, catchingUp = oldest, true
		}
	}
	// Older due times than the one considered are superseded by it; those
	// counted already, for any reason, are not counted again.
	from := schedule.Earliest(cj)
	if accounted := lastAccounted(cj); accounted.After(from) {
		from = accounted
	}
	if older, err := sched.MostRecent(from, run.Add(-time.Nanosecond)); err == nil {
		if recordMissed(cj, cronv1.MissedSuperseded, run, int64(min(older.Missed, schedule.ManyMissed))) && due.TooMany() {
			c.recorder.Eventf(cj, corev1.EventTypeWarning, ReasonTooManyMissedTimes,
				"Missed more than %d start times since %s; only %s is considered",
				schedule.ManyMissed, schedule.Earliest(cj).UTC().Format(time.RFC3339), run.UTC().Format(time.RFC3339))
		}
	}
	if schedule.TooLate(cj, run, now) {
		logger.V(4).Info("Missed the starting deadline", "scheduledTime", run)
		msg := fmt.Sprintf("Missed scheduled time to start a job: %s (it may start at most %v late)",
			run.UTC().Format(time.RFC3339), *schedule.StartingDeadline(cj))
		c.setCondition(cj, cronv1.ConditionLastRunStarted, metav1.ConditionFalse, cronv1.MissedDeadlineExceeded, msg, now)
		if recordMissed(cj, cronv1.MissedDeadlineExceeded, run, 1) {
			c.recorder.Event(cj, corev1.EventTypeWarning, ReasonMissSchedule, msg)
		}
		return requeueAfter, false, nil
	}
	name := job.Name(cj.Name, run)
	if slices.ContainsFunc(cj.Status.Active, func(r corev1.ObjectReference) bool { return r.Name == name }) {
		return requeueAfter, false, nil
	}
	if cj.Spec.ConcurrencyPolicy == cronv1.ForbidConcurrent && len(cj.Status.Active) > 0 {
		logger.V(4).Info("Forbid: an earlier Job is still active", "scheduledTime", run)
		msg := fmt.Sprintf("Not starting the run of %s: an earlier Job is still active and concurrencyPolicy is Forbid", run.UTC().Format(time.RFC3339))
		c.setCondition(cj, cronv1.ConditionLastRunStarted, metav1.ConditionFalse, cronv1.MissedConcurrencyForbidden, msg, now)
		if recordMissed(cj, cronv1.MissedConcurrencyForbidden, run, 1) {
			c.recorder.Event(cj, corev1.EventTypeNormal, ReasonJobAlreadyActive, msg)
		}
		return requeueAfter, false, nil
	}
	if cj.Spec.ConcurrencyPolicy == cronv1.ReplaceConcurrent {
		if err := c.deleteActive(ctx, cj); err != nil {
			return 0, false, err
		}
	}
	retry, err := c.startJob(ctx, cj, run, sched.Location())
	if err != nil && retry {
		return 0, false, err
	}
	if catchingUp && err == nil {
		// Come straight back for the next missed run.
		return catchUpPause, true, nil
	}
	return requeueAfter, err == nil, nil
}

// catchUpPause is the wait between starting one missed run and the next
// under catchUpPolicy All.
const catchUpPause = 10 * time.Millisecond

// oldestToCatchUp is, under catchUpPolicy All, the oldest missed run still
// within the starting deadline among the newest catchUpLimit.
func (c *Controller) oldestToCatchUp(cj *cronv1.CronJob, sched *schedule.Schedule, now time.Time) time.Time {
	from := schedule.Earliest(cj)
	if d := schedule.StartingDeadline(cj); d != nil {
		if low := now.Add(-*d).Add(-time.Nanosecond); low.After(from) {
			from = low
		}
	}
	oldest, err := sched.OldestOfNewest(from, now, int(ptr.Deref(cj.Spec.CatchUpLimit, 10)))
	if err != nil {
		return time.Time{}
	}
	return oldest
}

// observeSchedule records the schedule in use, and when it changed: the
// times the new schedule names before the change are not missed runs.
func observeSchedule(cj *cronv1.CronJob, resolved string, now time.Time) {
	zone := ptr.Deref(cj.Spec.TimeZone, "")
	if cj.Status.ResolvedSchedule != "" && (cj.Status.ResolvedSchedule != resolved || cj.Status.ResolvedTimeZone != zone) {
		cj.Status.ScheduleChangeTime = &metav1.Time{Time: now}
	}
	cj.Status.ResolvedSchedule, cj.Status.ResolvedTimeZone = resolved, zone
}

// runNow starts the Job asked for by the run-now annotation's value. It
// ignores suspend and concurrencyPolicy, like `kubectl create job --from`
// does for the built-in CronJob; the Job then counts as active. A value is
// handled once, also when its Job cannot be made.
func (c *Controller) runNow(ctx context.Context, cj *cronv1.CronJob, value string) (retry bool, err error) {
	j, retry, err := c.createJob(ctx, cj, job.NewManual(cj, value), fmt.Sprintf("run-now %q", value))
	if err != nil {
		if !retry {
			cj.Status.LastRunNow = value
		}
		return retry, err
	}
	if activeIndex(cj, string(j.UID)) < 0 && j.Finished() == "" {
		cj.Status.Active = append(cj.Status.Active, job.Ref(j))
	}
	cj.Status.LastRunNow = value
	return false, nil
}

// reconcileActive makes status.active the set of unfinished Jobs cj
// controls, and records the newest successful completion.
func (c *Controller) reconcileActive(ctx context.Context, cj *cronv1.CronJob, jobs []*slim.Job) error {
	logger := klog.FromContext(ctx)
	seen := make(map[string]bool, len(jobs))
	for _, j := range jobs {
		seen[string(j.UID)] = true
		i := activeIndex(cj, string(j.UID))
		finished := j.Finished()
		switch {
		case finished != "" && i >= 0:
			cj.Status.Active = slices.Delete(cj.Status.Active, i, i+1)
			c.recorder.Eventf(cj, corev1.EventTypeNormal, ReasonSawCompletedJob, "Saw completed job: %s, condition: %s", j.Name, finished)
		case finished == "" && i < 0 && j.DeletionTimestamp == nil:
			c.adopt(ctx, cj, j)
		}
		if done := j.CompletionTime(); finished == batchv1.JobComplete && done != nil &&
			(cj.Status.LastSuccessfulTime == nil || done.After(cj.Status.LastSuccessfulTime.Time)) {
			cj.Status.LastSuccessfulTime = done.DeepCopy()
		}
	}

	// A Job in status.active but not in the cache may be newer than the
	// cache: only the API server can say it is gone.
	for i := 0; i < len(cj.Status.Active); i++ {
		ref := cj.Status.Active[i]
		if seen[string(ref.UID)] {
			continue
		}
		live, err := c.jobs.Get(ctx, ref.Namespace, ref.Name)
		switch {
		case apierrors.IsNotFound(err) || (err == nil && live.UID != ref.UID):
			logger.V(2).Info("Active Job is gone", "job", klog.KRef(ref.Namespace, ref.Name))
			c.recorder.Eventf(cj, corev1.EventTypeNormal, ReasonMissingJob, "Active job went missing: %s", ref.Name)
			cj.Status.Active = slices.Delete(cj.Status.Active, i, i+1)
			i--
		case err != nil:
			return fmt.Errorf("checking active Job %s: %w", ref.Name, err)
		}
	}
	return nil
}

// adopt records in status an unfinished Job that cj controls but that its
// status does not list, as after a crash between creating a Job and writing
// the status. A Job the controller did not make is also reported.
func (c *Controller) adopt(ctx context.Context, cj *cronv1.CronJob, j *slim.Job) {
	cj.Status.Active = append(cj.Status.Active, job.Ref(j))
	if j.Manual() {
		return
	}
	at, ok := j.ScheduledAt()
	if !ok {
		klog.FromContext(ctx).Info("Unexpected Job controlled by this CronJob", "job", klog.KObj(j))
		c.recorder.Eventf(cj, corev1.EventTypeWarning, ReasonUnexpectedJob,
			"Saw a job that the controller did not create: %s; it is tracked as active", j.Name)
		return
	}
	if cj.Status.LastScheduleTime == nil || at.After(cj.Status.LastScheduleTime.Time) {
		c.recordStarted(cj, j, at)
	}
}

// pruneHistory deletes the finished Jobs beyond the history limits. It is
// best effort: a failed delete is reported and tried again next sync.
func (c *Controller) pruneHistory(ctx context.Context, cj *cronv1.CronJob, jobs []*slim.Job) {
	var finished []*slim.Job
	for _, j := range jobs {
		if j.DeletionTimestamp == nil && j.Finished() != "" {
			finished = append(finished, j)
		}
	}
	for _, j := range job.ToPrune(finished, cj.Spec.SuccessfulJobsHistoryLimit, cj.Spec.FailedJobsHistoryLimit) {
		_ = c.deleteOwnedJob(ctx, cj, j.Name, string(j.UID), "history")
	}
}

// deleteActive deletes every active Job of cj, for concurrencyPolicy Replace.
func (c *Controller) deleteActive(ctx context.Context, cj *cronv1.CronJob) error {
	for len(cj.Status.Active) > 0 {
		ref := cj.Status.Active[0]
		if err := c.deleteOwnedJob(ctx, cj, ref.Name, string(ref.UID), "replace"); err != nil {
			return fmt.Errorf("replacing active Job %s: %w", ref.Name, err)
		}
		cj.Status.Active = cj.Status.Active[1:]
	}
	return nil
}

// deleteOwnedJob deletes one Job of cj (only if it still has this UID) for
// reason (history or replace) and reports the outcome as an Event. A Job
// already gone is not an error.
func (c *Controller) deleteOwnedJob(ctx context.Context, cj *cronv1.CronJob, name, uid, reason string) error {
	err := c.jobs.Delete(ctx, cj.Namespace, name, types.UID(uid))
	if err == nil || apierrors.IsNotFound(err) {
		c.createdJobs.Forget(cache.ObjectName{Namespace: cj.Namespace, Name: name})
	}
	switch {
	case err == nil:
		metrics.JobsDeleted.WithLabelValues(reason).Inc()
		c.recorder.Eventf(cj, corev1.EventTypeNormal, ReasonSuccessfulDelete, "Deleted job %s", name)
		return nil
	case apierrors.IsNotFound(err) || apierrors.IsConflict(err):
		// Gone already, or the name now belongs to another Job.
		return nil
	default:
		klog.FromContext(ctx).Error(err, "Deleting Job failed", "job", klog.KRef(cj.Namespace, name))
		c.recorder.Eventf(cj, corev1.EventTypeWarning, ReasonFailedDelete, "Error deleting job %s: %v", name, err)
		return err
	}
}

// startJob creates the Job for the run of cj at scheduled and records it in
// status. When it fails, retry says whether trying again can help.
func (c *Controller) startJob(ctx context.Context, cj *cronv1.CronJob, scheduled time.Time, loc *time.Location) (retry bool, err error) {
	j, retry, err := c.createJob(ctx, cj, job.New(cj, scheduled, loc), "the run of "+scheduled.UTC().Format(time.RFC3339))
	if err != nil {
		return retry, err
	}
	c.recordStarted(cj, j, scheduled)
	return false, nil
}

// createJob creates want, a Job of cj for what (a run, in words), and
// returns the Job of that name that cj controls: the new one, or one made
// before (its name is the lock of its run). Failures become Events and, for
// a template the API rejects, a False JobTemplateValid condition; retry says
// whether trying again can help.
func (c *Controller) createJob(ctx context.Context, cj *cronv1.CronJob, want *batchv1.Job, what string) (_ *slim.Job, retry bool, _ error) {
	// The cache first: a Job of ours already there means no call at all, and
	// a foreign one no retry storm.
	key := cache.MetaObjectToName(want)
	if existing, ok := c.cachedJob(key); ok {
		return c.existingJob(ctx, cj, existing, what)
	}
	if mine, ok := c.createdJobs.Get(key); ok {
		return c.existingJob(ctx, cj, mine, what)
	}
	created, err := c.jobs.Create(ctx, want)
	switch {
	case err == nil:
		mine := slim.NewJob(created)
		c.createdJobs.Wrote(mine)
		metrics.JobsCreated.Inc()
		if at, ok := job.ScheduledAt(created); ok {
			// The API server's creationTimestamp has whole seconds; the clock
			// at the create's return resolves the sub-second skew.
			metrics.JobCreationSkew.Observe(c.clock.Since(at).Seconds())
		}
		klog.FromContext(ctx).V(2).Info("Created Job", "job", klog.KObj(created), "for", what)
		c.recorder.Eventf(cj, corev1.EventTypeNormal, ReasonSuccessfulCreate, "Created job %s", created.Name)
		c.setCondition(cj, cronv1.ConditionJobTemplateValid, metav1.ConditionTrue, reasonJobCreated, "", c.clock.Now())
		return mine, false, nil
	case apierrors.IsAlreadyExists(err):
		live, getErr := c.jobs.Get(ctx, want.Namespace, want.Name)
		if getErr != nil {
			return nil, true, fmt.Errorf("reading existing Job %s: %w", want.Name, getErr)
		}
		return c.existingJob(ctx, cj, slim.NewJob(live), what)
	case apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause) || apierrors.IsNotFound(err):
		// The namespace is going or gone, and the CronJob with it: retrying
		// only adds load until its delete event arrives.
		return nil, false, fmt.Errorf("creating Job %s: %w", want.Name, err)
	case apierrors.IsInvalid(err) || apierrors.IsBadRequest(err):
		// The template is at fault; only a new run or a new spec can help.
		c.recorder.Eventf(cj, corev1.EventTypeWarning, ReasonFailedCreate, "Error creating job %s: %v", want.Name, err)
		c.setCondition(cj, cronv1.ConditionJobTemplateValid, metav1.ConditionFalse, reasonJobRejected, err.Error(), c.clock.Now())
		return nil, false, err
	default:
		c.recorder.Eventf(cj, corev1.EventTypeWarning, ReasonFailedCreate, "Error creating job %s: %v", want.Name, err)
		return nil, true, fmt.Errorf("creating Job %s: %w", want.Name, err)
	}
}

// existingJob handles a Job that already holds the name wanted for what:
// ours means it started already; anyone else's blocks it for good.
func (c *Controller) existingJob(ctx context.Context, cj *cronv1.CronJob, existing *slim.Job, what string) (*slim.Job, bool, error) {
	if !job.IsControlledBy(existing, string(cj.UID)) {
		c.recorder.Eventf(cj, corev1.EventTypeWarning, ReasonFailedCreate,
			"Job %s already exists and is not controlled by this CronJob; %s is not started", existing.Name, what)
		return nil, false, fmt.Errorf("job %s exists and belongs to someone else", existing.Name)
	}
	klog.FromContext(ctx).V(2).Info("Job exists already", "job", klog.KObj(existing), "for", what)
	return existing, false, nil
}

// recordStarted notes in status that j is the run of cj at scheduled.
func (c *Controller) recordStarted(cj *cronv1.CronJob, j *slim.Job, scheduled time.Time) {
	c.setCondition(cj, cronv1.ConditionLastRunStarted, metav1.ConditionTrue, reasonRunStarted,
		fmt.Sprintf("Job %s is the run of %s", j.Name, scheduled.UTC().Format(time.RFC3339)), c.clock.Now())
	if activeIndex(cj, string(j.UID)) < 0 && j.Finished() == "" {
		cj.Status.Active = append(cj.Status.Active, job.Ref(j))
	}
	if cj.Status.LastScheduleTime == nil || scheduled.After(cj.Status.LastScheduleTime.Time) {
		cj.Status.LastScheduleTime = &metav1.Time{Time: scheduled}
	}
}

// scheduleInvalid reports a schedule or time zone that cannot be used: a
// False condition, and a Warning when that condition is news.
func (c *Controller) scheduleInvalid(ctx context.Context, cj *cronv1.CronJob, err error, now time.Time) {
	se, ok := schedule.AsError(err)
	if !ok {
		se = &schedule.Error{Reason: schedule.ReasonInvalidSchedule, Message: err.Error()}
	}
	klog.FromContext(ctx).V(2).Info("Schedule cannot be used", "reason", se.Reason, "err", se.Message)
	cj.Status.NextScheduleTime = nil
	if c.setCondition(cj, cronv1.ConditionScheduleValid, metav1.ConditionFalse, se.Reason, se.Message, now) {
		c.recorder.Event(cj, corev1.EventTypeWarning, se.Reason, se.Message)
	}
}

// setCondition sets a condition and reports whether it changed.
func (c *Controller) setCondition(cj *cronv1.CronJob, conditionType string, status metav1.ConditionStatus, reason, message string, now time.Time) bool {
	return meta.SetStatusCondition(&cj.Status.Conditions, metav1.Condition{
		Type:               conditionType,
		Status:             status,
		Reason:             reason,
		Message:            message,
		ObservedGeneration: cj.Generation,
		LastTransitionTime: metav1.NewTime(now),
	})
}

// recordMissed counts n runs of cj missed for reason at scheduled time t,
// in status and in the metric. Runs already counted (t not after the last
// time recorded for that reason) are not counted again; it reports whether
// these were news, so each miss is announced once.
func recordMissed(cj *cronv1.CronJob, reason string, t time.Time, n int64) bool {
	if n <= 0 {
		return false
	}
	i := slices.IndexFunc(cj.Status.MissedRuns, func(m cronv1.MissedRuns) bool { return m.Reason == reason })
	if i < 0 {
		cj.Status.MissedRuns = append(cj.Status.MissedRuns, cronv1.MissedRuns{Reason: reason})
		i = len(cj.Status.MissedRuns) - 1
	}
	entry := &cj.Status.MissedRuns[i]
	if !t.After(entry.LastTime.Time) {
		return false
	}
	entry.Count += n
	entry.LastTime = metav1.NewTime(t)
	metrics.MissedSchedules.WithLabelValues(reason).Add(float64(n))
	return true
}

// lastAccounted is the latest scheduled time already counted as missed,
// for any reason.
func lastAccounted(cj *cronv1.CronJob) time.Time {
	var latest time.Time
	for _, m := range cj.Status.MissedRuns {
		if m.LastTime.After(latest) {
			latest = m.LastTime.Time
		}
	}
	return latest
}

// activeIndex is the position of the Job with this UID in status.active, or -1.
func activeIndex(cj *cronv1.CronJob, uid string) int {
	return slices.IndexFunc(cj.Status.Active, func(r corev1.ObjectReference) bool { return string(r.UID) == uid })
}

// untilNext is how long to sleep before the next run, 0 when none comes.
func untilNext(due schedule.Due, now time.Time) time.Duration {
	if due.Next.IsZero() {
		return 0
	}
	return due.Next.Sub(now)
}

func timeOrNil(t time.Time) *metav1.Time {
	if t.IsZero() {
		return nil
	}
	return &metav1.Time{Time: t}
}

// deferredStatuses holds, per CronJob, a status a sync decided but did not
// write yet, with the UID of the CronJob it belongs to.
type deferredStatuses struct {
	mu      sync.Mutex
	entries map[cache.ObjectName]deferredStatus
}

type deferredStatus struct {
	uid    types.UID
	status *cronv1.CronJobStatus
}

func newDeferredStatuses() *deferredStatuses {
	return &deferredStatuses{entries: map[cache.ObjectName]deferredStatus{}}
}

// put keeps status for the CronJob key with this UID.
func (d *deferredStatuses) put(key cache.ObjectName, uid types.UID, status *cronv1.CronJobStatus) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.entries[key] = deferredStatus{uid: uid, status: status.DeepCopy()}
}

// take removes and returns the status kept for key if it belongs to the
// CronJob with this UID; one kept for an earlier CronJob of the same name
// is dropped.
func (d *deferredStatuses) take(key cache.ObjectName, uid types.UID) (*cronv1.CronJobStatus, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	e, ok := d.entries[key]
	delete(d.entries, key)
	if !ok || e.uid != uid {
		return nil, false
	}
	return e.status, true
}

// drain removes and returns everything kept.
func (d *deferredStatuses) drain() map[cache.ObjectName]deferredStatus {
	d.mu.Lock()
	defer d.mu.Unlock()
	out := d.entries
	d.entries = map[cache.ObjectName]deferredStatus{}
	return out
}
