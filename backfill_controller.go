package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	batchinformers "k8s.io/client-go/informers/batch/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	cronv1 "github.com/cronjob-controller/cronjob-controller/pkg/apis/batch/v1"
	"github.com/cronjob-controller/cronjob-controller/pkg/backfill"
	"github.com/cronjob-controller/cronjob-controller/pkg/control"
	clientset "github.com/cronjob-controller/cronjob-controller/pkg/generated/clientset/versioned"
	informers "github.com/cronjob-controller/cronjob-controller/pkg/generated/informers/externalversions/batch/v1"
	listers "github.com/cronjob-controller/cronjob-controller/pkg/generated/listers/batch/v1"
	"github.com/cronjob-controller/cronjob-controller/pkg/job"
	"github.com/cronjob-controller/cronjob-controller/pkg/liveness"
	"github.com/cronjob-controller/cronjob-controller/pkg/ownwrites"
	"github.com/cronjob-controller/cronjob-controller/pkg/shard"
	"github.com/cronjob-controller/cronjob-controller/pkg/slim"
)

// backfillsByCronJob indexes Backfills by namespace/spec.cronJobName, so a
// change of a CronJob wakes the Backfills that name it.
const backfillsByCronJob = "backfillsByCronJob"

// jobsByBackfill indexes Jobs by namespace/name of the Backfill controlling
// them, so the Jobs of a Backfill that is gone, whose UID no one knows
// any more, can still be found and released.
const jobsByBackfill = "jobsByBackfill"

// BackfillController creates the Jobs of Backfills (see pkg/backfill for the
// rules). It shares the Job and CronJob informers, and the leader Lease,
// with the CronJob controller.
type BackfillController struct {
	// jobs creates and reads Jobs on the API server.
	jobs control.Jobs
	// client writes Backfills (owner reference, status).
	client clientset.Interface
	// backfills, backfillIndexer: the Backfill informer's cache.
	backfills       listers.BackfillLister
	backfillIndexer cache.Indexer
	// jobIndexer and cronJobIndexer are the shared caches, in slim forms
	// (set by NewController, which must be called first).
	jobIndexer     cache.Indexer
	cronJobIndexer cache.Indexer
	// cachesSynced report whether the three informers have listed once.
	cachesSynced []cache.InformerSynced
	// queue holds the keys of Backfills to sync.
	queue workqueue.TypedRateLimitingInterface[cache.ObjectName]
	// recorder emits Events about Backfills.
	recorder record.EventRecorder
	// clock is the time decisions are made at.
	clock clock.WithDelayedExecution
	// released are the Jobs whose finalizer this process removed, until
	// the Job cache shows it gone: a sync before that does not patch them
	// again.
	released *ownwrites.Deletes
	// leaseGrace bounds a sync once the workers' context ends (syncContext).
	leaseGrace time.Duration
	// shards, with -shards, are the shards this replica works: a Backfill
	// is worked by the replica holding its shard (its UID's, which its
	// Jobs share), and its CronJob, in a shard of its own, may be in no
	// cache here (see cronJob).
	shards *shard.Set
	// cachesPrepared, handlers and probe are the CronJob controller's
	// (WithPreparedCaches, Detach, WithProbe).
	cachesPrepared bool
	handlers       attachments
	probe          *liveness.Probe
	fence          *leaseValidity
}

// BackfillOption configures a BackfillController.
type BackfillOption func(*BackfillController)

// WithBackfillLeaseGrace is WithLeaseGrace for the Backfill controller.
func WithBackfillLeaseGrace(d time.Duration) BackfillOption {
	return func(c *BackfillController) { c.leaseGrace = d }
}

// WithBackfillPreparedCaches is WithPreparedCaches for the Backfill
// controller (prepareBackfillCaches).
func WithBackfillPreparedCaches() BackfillOption {
	return func(c *BackfillController) { c.cachesPrepared = true }
}

// WithBackfillLeaseFence is WithLeaseFence for the Backfill controller.
func WithBackfillLeaseFence(f *leaseValidity) BackfillOption {
	return func(c *BackfillController) { c.fence = f }
}

// WithBackfillProbe is WithProbe for the Backfill controller.
func WithBackfillProbe(p *liveness.Probe) BackfillOption {
	return func(c *BackfillController) { c.probe = p }
}

// Detach takes the controller's event handlers off the shared informers,
// once Run has returned.
func (c *BackfillController) Detach() error {
	return c.handlers.detach()
}

// WithBackfillShards makes the controller work only the Backfills of the
// shards set holds, as the CronJob controller's WithShards does.
func WithBackfillShards(set *shard.Set) BackfillOption {
	return func(c *BackfillController) { c.shards = set }
}

// shardedPoll is how often, with -shards, a Backfill not complete is synced
// again: its CronJob's status, which decides how far it may go, changes on
// another replica, whose events do not reach this one.
const shardedPoll = 30 * time.Second

// NewBackfillController wires its handlers and index into the informers.
// Call it after NewController (which sets the slim transforms) and before
// the informer factories start.
func NewBackfillController(
	ctx context.Context,
	jobs control.Jobs,
	client clientset.Interface,
	jobInformer batchinformers.JobInformer,
	cronJobInformer informers.CronJobInformer,
	backfillInformer informers.BackfillInformer,
	recorder record.EventRecorder,
	clk clock.WithTickerAndDelayedExecution,
	opts ...BackfillOption,
) (_ *BackfillController, err error) {
	c := &BackfillController{
		jobs:            jobs,
		client:          client,
		backfills:       backfillInformer.Lister(),
		backfillIndexer: backfillInformer.Informer().GetIndexer(),
		jobIndexer:      jobInformer.Informer().GetIndexer(),
		cronJobIndexer:  cronJobInformer.Informer().GetIndexer(),
		cachesSynced: []cache.InformerSynced{jobInformer.Informer().HasSynced,
			cronJobInformer.Informer().HasSynced, backfillInformer.Informer().HasSynced},
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(newRateLimiter(),
			workqueue.TypedRateLimitingQueueConfig[cache.ObjectName]{Name: "backfill", Clock: clk}),
		recorder: recorder,
		clock:    clk,
		released: ownwrites.NewDeletes(clk, ownWritesTTL),
	}
	for _, opt := range opts {
		opt(c)
	}
	// A controller that could not be wired leaves nothing running.
	defer func() {
		if err != nil {
			c.queue.ShutDown()
			_ = c.handlers.detach()
		}
	}()
	if !c.cachesPrepared {
		if err := prepareBackfillCaches(jobInformer.Informer(), backfillInformer.Informer()); err != nil {
			return nil, err
		}
	}
	if err := c.handlers.add(backfillInformer.Informer(), cache.ResourceEventHandlerFuncs{
		AddFunc:    c.enqueue,
		UpdateFunc: func(_, obj any) { c.enqueue(obj) },
		DeleteFunc: c.enqueue,
	}); err != nil {
		return nil, fmt.Errorf("adding Backfill handlers: %w", err)
	}
	if err := c.handlers.add(cronJobInformer.Informer(), cache.ResourceEventHandlerFuncs{
		AddFunc:    c.enqueueFor,
		UpdateFunc: func(_, obj any) { c.enqueueFor(obj) },
		DeleteFunc: c.enqueueFor,
	}); err != nil {
		return nil, fmt.Errorf("adding CronJob handlers for Backfills: %w", err)
	}
	if err := c.handlers.add(jobInformer.Informer(), cache.ResourceEventHandlerFuncs{
		AddFunc: c.enqueueController,
		UpdateFunc: func(old, obj any) {
			if j, ok := obj.(metav1.Object); ok && !slices.Contains(j.GetFinalizers(), backfill.Finalizer) {
				c.released.Forget(j.GetUID())
			}
			c.enqueueController(obj)
			c.enqueueWaiting(old, obj)
		},
		DeleteFunc: func(obj any) {
			if tombstone, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = tombstone.Obj
			}
			if j, ok := obj.(metav1.Object); ok {
				c.released.Forget(j.GetUID())
			}
			c.enqueueController(obj)
			c.enqueueWaiting(nil, obj)
		},
	}); err != nil {
		return nil, fmt.Errorf("adding Job handlers for Backfills: %w", err)
	}
	return c, nil
}

// indexByCronJobName is the backfillsByCronJob index function.
func indexByCronJobName(obj any) ([]string, error) {
	bf, ok := obj.(*cronv1.Backfill)
	if !ok {
		return nil, nil
	}
	return []string{bf.Namespace + "/" + bf.Spec.CronJobName}, nil
}

// indexByBackfill is the jobsByBackfill index function. A Job holding
// backfill.Finalizer that nothing controls (its Backfill was deleted with
// --cascade=orphan, or its owner reference edited away) is indexed under
// the Backfill its label names, or the namespace's uncontrolled key.
func indexByBackfill(obj any) ([]string, error) {
	j, ok := obj.(metav1.Object)
	if !ok {
		return nil, nil
	}
	if ref := backfillOf(j); ref != nil {
		return []string{j.GetNamespace() + "/" + ref.Name}, nil
	}
	if uncontrolled(j) {
		return []string{uncontrolledKeyOf(j).String()}, nil
	}
	return nil, nil
}

// uncontrolledKeyOf is the key an uncontrolled Job is released under: its
// Backfill's, which must record it first if it still exists, else the
// namespace's uncontrolled key.
func uncontrolledKeyOf(j metav1.Object) cache.ObjectName {
	name := j.GetLabels()[cronv1.BackfillLabel]
	if sj, ok := j.(*slim.Job); ok {
		name = sj.Backfill()
	}
	return cache.ObjectName{Namespace: j.GetNamespace(), Name: name}
}

// uncontrolled reports a Job a Backfill made that nothing controls any
// more. No Backfill will record it: once deleted, it may go.
func uncontrolled(j metav1.Object) bool {
	return metav1.GetControllerOfNoCopy(j) == nil && slices.Contains(j.GetFinalizers(), backfill.Finalizer)
}

// uncontrolledKey is the queue key under which a namespace's uncontrolled
// Jobs are released; no Backfill has an empty name.
func uncontrolledKey(namespace string) cache.ObjectName {
	return cache.ObjectName{Namespace: namespace}
}

// backfillOf returns the reference to the Backfill controlling j, if one
// does.
func backfillOf(j metav1.Object) *metav1.OwnerReference {
	ref := metav1.GetControllerOfNoCopy(j)
	if ref == nil || ref.Kind != "Backfill" || ref.APIVersion != cronv1.SchemeGroupVersion.String() {
		return nil
	}
	return ref
}

// HasSynced reports whether the caches have listed once.
func (c *BackfillController) HasSynced() bool {
	for _, synced := range c.cachesSynced {
		if !synced() {
			return false
		}
	}
	return true
}

// enqueue queues a Backfill (or its tombstone).
func (c *BackfillController) enqueue(obj any) {
	key, err := cache.DeletionHandlingObjectToName(obj)
	if err != nil {
		utilruntime.HandleError(err)
		return
	}
	c.queue.Add(key)
}

// enqueueFor queues the Backfills that name a CronJob (or its tombstone):
// its status moved the point up to which they may create Jobs, or it is gone.
func (c *BackfillController) enqueueFor(obj any) {
	if tombstone, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tombstone.Obj
	}
	cj, ok := obj.(metav1.Object)
	if !ok {
		return
	}
	objs, err := c.backfillIndexer.ByIndex(backfillsByCronJob, cj.GetNamespace()+"/"+cj.GetName())
	if err != nil {
		utilruntime.HandleError(err)
		return
	}
	for _, o := range objs {
		c.enqueue(o)
	}
}

// enqueueController queues the Backfill controlling a Job (or its
// tombstone), if one does.
func (c *BackfillController) enqueueController(obj any) {
	if tombstone, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tombstone.Obj
	}
	j, ok := obj.(metav1.Object)
	if !ok {
		return
	}
	ref := backfillOf(j)
	if ref == nil {
		if uncontrolled(j) && j.GetDeletionTimestamp() != nil {
			c.queue.Add(uncontrolledKeyOf(j))
		}
		return
	}
	c.queue.Add(cache.ObjectName{Namespace: j.GetNamespace(), Name: ref.Name})
}

// enqueueWaiting queues the Backfills of the CronJob whose time a Job
// (or its tombstone) is the first run of, once that Job has finished or
// is going away: a Backfill may wait for it (WaitingForEarlierRun) to run
// the time again, and the end of a Job another Backfill, or anyone, made
// changes nothing of the CronJob's that would wake it. old is nil for a
// delete.
func (c *BackfillController) enqueueWaiting(old, obj any) {
	if tombstone, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tombstone.Obj
	}
	j, ok := obj.(*slim.Job)
	if !ok {
		return
	}
	if prev, ok := old.(*slim.Job); ok && (prev.Finished() != "" || j.Finished() == "") &&
		(prev.DeletionTimestamp != nil || j.DeletionTimestamp == nil) {
		return // neither finished nor going away just now
	}
	at, ok := j.ScheduledAt()
	cronJob := job.CronJobNameOf(j.Name)
	if !ok || job.Name(cronJob, at) != j.Name {
		return // not a time's first run, the only run a Backfill waits for
	}
	c.enqueueFor(&metav1.ObjectMeta{Namespace: j.Namespace, Name: cronJob})
}

// Run waits for the caches, runs workers until ctx is cancelled, and returns
// once every worker has finished the item it held.
func (c *BackfillController) Run(ctx context.Context, workers int) error {
	defer utilruntime.HandleCrash()
	defer func() { c.queue.ShutDown(); drain(c.queue) }()
	logger := klog.FromContext(ctx)
	logger.Info("Starting Backfill controller")
	if !cache.WaitForNamedCacheSyncWithContext(ctx, c.cachesSynced...) {
		logger.Info("Backfill controller stopped before the caches synced")
		return nil
	}
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for c.processNextWorkItem(ctx) {
			}
		})
	}
	<-ctx.Done()
	c.queue.ShutDown()
	wg.Wait()
	logger.Info("Backfill workers stopped")
	return nil
}

// processNextWorkItem syncs one Backfill; an error retries it rate-limited.
func (c *BackfillController) processNextWorkItem(ctx context.Context) bool {
	key, shutdown := c.queue.Get()
	if shutdown {
		return false
	}
	defer c.queue.Done(key)
	if ctx.Err() != nil {
		return false
	}
	if fenced(c.fence, c.clock) {
		c.queue.AddAfter(key, shardNotReadyRetry) // as the CronJob controller does
		return true
	}
	syncCtx, cancel := syncContext(ctx, c.leaseGrace, c.fence, c.clock)
	defer cancel()
	defer c.probe.SyncStarted()()
	syncCtx = klog.NewContext(syncCtx, klog.LoggerWithValues(klog.FromContext(ctx), "backfill", key))
	syncCtx, done, ok := c.holdShard(syncCtx, key)
	if !ok {
		return true
	}
	defer done()
	if err := c.syncBackfill(syncCtx, key); err != nil {
		if apierrors.IsConflict(err) {
			klog.FromContext(syncCtx).V(4).Info("Backfill write conflicted; retrying", "err", err)
		} else {
			utilruntime.HandleErrorWithContext(syncCtx, err, "Backfill sync failed; retrying", "backfill", key)
		}
		c.queue.AddRateLimited(key)
		return true
	}
	c.queue.Forget(key)
	if c.shards != nil {
		if bf, err := c.backfills.Backfills(key.Namespace).Get(key.Name); err == nil &&
			!meta.IsStatusConditionTrue(bf.Status.Conditions, cronv1.ConditionBackfillComplete) {
			c.queue.AddAfter(key, shardedPoll)
		}
	}
	return true
}

// holdShard holds, with -shards, the shard of the Backfill under key for
// one sync, whose context then ends when the hold does. A Backfill of
// another replica's shard is dropped from the queue; one of a shard whose
// caches are still filling waits its turn again. A key not in the cache is
// synced unheld: that sync only releases the Jobs of a Backfill gone.
func (c *BackfillController) holdShard(ctx context.Context, key cache.ObjectName) (context.Context, func(), bool) {
	if c.shards == nil {
		return ctx, func() {}, true
	}
	bf, err := c.backfills.Backfills(key.Namespace).Get(key.Name)
	if err != nil {
		return ctx, func() {}, true
	}
	return holdForSync(ctx, c.shards, bf.UID, c.queue, key)
}

// syncBackfill gathers a Backfill's view (its CronJob, the Jobs holding the
// names of its times), asks backfill.Decide, and carries the plan out: the
// owner reference first, then the creates in order, then one status write,
// then the release of the Jobs that status records.
//
// A plan that creates is made again from the Backfill and its CronJob read
// live: the cache may not show this process's last status write yet (or,
// after a takeover, the old leader's), and a time that write recorded,
// whose Job is already gone, would be created again; nor may it show the
// CronJob's run history recording a run whose Job was pruned since. Jobs
// whose time is not yet recorded cannot be gone: they hold
// backfill.Finalizer, and a CronJob's Jobs its run-record finalizer.
func (c *BackfillController) syncBackfill(ctx context.Context, key cache.ObjectName) error {
	logger := klog.FromContext(ctx)
	if key == uncontrolledKey(key.Namespace) {
		return c.releaseUncontrolled(ctx, key)
	}
	cached, err := c.backfills.Backfills(key.Namespace).Get(key.Name)
	if apierrors.IsNotFound(err) {
		return c.releaseOrphans(ctx, key, "")
	}
	if err != nil {
		return err
	}
	bf := cached.DeepCopy()
	cj, err := c.cronJob(ctx, key.Namespace, bf.Spec.CronJobName)
	if err != nil {
		return err
	}
	plan, err := c.decide(ctx, bf, cj)
	if err != nil {
		return err
	}
	if len(plan.Creates) > 0 {
		live, err := c.client.BatchV1().Backfills(key.Namespace).Get(ctx, key.Name, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			return nil // its delete event queues it again
		case err != nil:
			return fmt.Errorf("reading backfill %s before creating its Jobs: %w", key, err)
		case live.UID != bf.UID:
			return nil // the cache is about to show the new one, which queues it
		}
		bf = live
		// The CronJob too: its run history says which times already ran
		// once their Jobs are gone, and a cache older than the status that
		// recorded a run whose Job has since been pruned would show that
		// time as never run.
		liveCJ, err := c.client.BatchV1().CronJobs(key.Namespace).Get(ctx, bf.Spec.CronJobName, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			return nil // its delete event queues the Backfill again
		case err != nil:
			return fmt.Errorf("reading cronjob %s/%s before creating Jobs of backfill %s: %w", key.Namespace, bf.Spec.CronJobName, key, err)
		}
		cj = liveCJ
		if plan, err = c.decide(ctx, bf, cj); err != nil {
			return err
		}
	}

	if plan.Owner != nil {
		bf.OwnerReferences = append(bf.OwnerReferences, *plan.Owner)
		updated, err := c.client.BatchV1().Backfills(bf.Namespace).Update(ctx, bf, metav1.UpdateOptions{})
		if err != nil {
			return fmt.Errorf("adding CronJob %s as owner of backfill %s: %w", cj.Name, key, err)
		}
		bf = updated
	}
	var createErr error
	// By index: a create that meets a run of its time may plan the run
	// again right after it (Plan.Exists).
	for i := 0; i < len(plan.Creates); i++ {
		more, err := c.create(ctx, plan.Creates[i], plan)
		if createErr = err; err != nil || !more {
			break
		}
	}
	for _, e := range plan.Events {
		c.recorder.Event(bf, e.Type, e.Reason, e.Message)
	}
	if !equality.Semantic.DeepEqual(bf.Status, plan.Status) {
		bf.Status = plan.Status
		written, err := c.client.BatchV1().Backfills(bf.Namespace).UpdateStatus(ctx, bf, metav1.UpdateOptions{})
		if err != nil {
			return errors.Join(createErr, fmt.Errorf("writing status of backfill %s: %w", key, err))
		}
		logger.V(2).Info("Backfill status written", "created", plan.Status.Created, "skipped", plan.Status.Skipped,
			"active", len(plan.Status.Active))
		bf = written
	}
	// bf.Status is stored now: as written, or as read (from the cache or
	// live), and a stored status is never undone.
	return errors.Join(createErr, c.releaseRecorded(ctx, bf))
}

// decide asks backfill.Decide about bf (and cj, nil when there is none),
// first asking the API server about the active Jobs the cache lacks, and
// with the Jobs of bf that hold the finalizer.
func (c *BackfillController) decide(ctx context.Context, bf *cronv1.Backfill, cj *cronv1.CronJob) (*backfill.Plan, error) {
	gone, err := c.goneJobs(ctx, bf)
	if err != nil {
		return nil, err
	}
	var own []backfill.OwnJob
	for _, j := range c.holding(cache.MetaObjectToName(bf)) {
		if ref := backfillOf(j); ref != nil && ref.UID == bf.UID {
			at, _ := j.ScheduledAt()
			own = append(own, backfill.OwnJob{Job: j, At: at})
		}
	}
	return backfill.Decide(backfill.Input{Backfill: bf, CronJob: cj, Job: c.job(bf.Namespace), Gone: gone, Own: own,
		Now: c.clock.Now()}), nil
}

// releaseRecorded removes backfill.Finalizer from the Jobs of bf that
// bf.Status, as stored, records; and from Jobs of an earlier Backfill of
// the same name (see releaseOrphans).
func (c *BackfillController) releaseRecorded(ctx context.Context, bf *cronv1.Backfill) error {
	var errs []error
	orphans := false
	for _, j := range c.holding(cache.MetaObjectToName(bf)) {
		ref := backfillOf(j)
		if ref != nil && ref.UID != bf.UID {
			orphans = true
			continue
		}
		// Its own, or one its label names that nothing controls any more:
		// either goes once the status records it.
		at, _ := j.ScheduledAt()
		if backfill.Recorded(&bf.Status, j, at) {
			errs = append(errs, c.release(ctx, j))
		}
	}
	if orphans {
		errs = append(errs, c.releaseOrphans(ctx, cache.MetaObjectToName(bf), bf.UID))
	}
	return errors.Join(errs...)
}

// releaseOrphans removes backfill.Finalizer from the Jobs under key whose
// Backfill is gone: no status will ever record them, and without this a
// Job the garbage collector deletes with its Backfill would hang in
// Terminating. The Job cache can be ahead of the Backfill cache (a Job of
// a Backfill the cache does not show yet), so the Backfill is read live
// first; current is the UID of the one the cache shows, if any.
func (c *BackfillController) releaseOrphans(ctx context.Context, key cache.ObjectName, current types.UID) error {
	var candidates []*slim.Job
	for _, j := range c.holding(key) {
		if ref := backfillOf(j); ref == nil || ref.UID != current {
			candidates = append(candidates, j)
		}
	}
	if len(candidates) == 0 {
		return nil
	}
	live, err := c.client.BatchV1().Backfills(key.Namespace).Get(ctx, key.Name, metav1.GetOptions{})
	var liveUID types.UID
	switch {
	case apierrors.IsNotFound(err):
	case err != nil:
		return fmt.Errorf("reading backfill %s to release the Jobs of one gone: %w", key, err)
	default:
		liveUID = live.UID
	}
	var errs []error
	for _, j := range candidates {
		ref := backfillOf(j)
		switch {
		case ref == nil && liveUID != "":
			// Nothing controls it, and the Backfill its label names
			// lives: it goes once that Backfill's status records it.
			if at, _ := j.ScheduledAt(); backfill.Recorded(&live.Status, j, at) {
				errs = append(errs, c.release(ctx, j))
			}
		case ref == nil:
			if j.DeletionTimestamp != nil {
				errs = append(errs, c.release(ctx, j))
			}
		case ref.UID != liveUID:
			errs = append(errs, c.release(ctx, j))
		}
	}
	if liveUID != "" && liveUID != current {
		// The cache lags the live Backfill; its events will queue it.
		klog.FromContext(ctx).V(4).Info("Backfill cache lags the API server", "cached", current, "live", liveUID)
	}
	return errors.Join(errs...)
}

// releaseUncontrolled releases the namespace's Jobs of key that a Backfill
// made, that nothing controls, and that are being deleted.
func (c *BackfillController) releaseUncontrolled(ctx context.Context, key cache.ObjectName) error {
	var errs []error
	for _, j := range c.holding(key) {
		if j.DeletionTimestamp != nil && uncontrolled(j) {
			errs = append(errs, c.release(ctx, j))
		}
	}
	return errors.Join(errs...)
}

// holding returns the cached Jobs controlled by a Backfill under key (any
// UID) that hold backfill.Finalizer.
func (c *BackfillController) holding(key cache.ObjectName) []*slim.Job {
	objs, err := c.jobIndexer.ByIndex(jobsByBackfill, key.String())
	if err != nil {
		utilruntime.HandleError(err)
		return nil
	}
	var out []*slim.Job
	for _, o := range objs {
		if j, ok := o.(*slim.Job); ok && slices.Contains(j.Finalizers, backfill.Finalizer) && !c.released.Has(j.UID) {
			out = append(out, j)
		}
	}
	return out
}

// release removes backfill.Finalizer from j.
func (c *BackfillController) release(ctx context.Context, j *slim.Job) error {
	if err := c.jobs.ReleaseFinalizer(ctx, j.Namespace, j.Name, j.UID, backfill.Finalizer, j.Finalizers); err != nil {
		return fmt.Errorf("releasing backfill Job %s: %w", j.Name, err)
	}
	klog.FromContext(ctx).V(4).Info("Released a backfill Job's finalizer", "job", klog.KObj(j))
	c.released.Deleted(j.UID)
	return nil
}

// create makes one Job of the plan and reports the outcome to it; more
// is false when the plan's later creates must wait (Plan.Exists). A name
// already taken is read live, to tell a Job of this Backfill (made before a
// lost status write) from another's.
func (c *BackfillController) create(ctx context.Context, create backfill.Create, plan *backfill.Plan) (more bool, err error) {
	made, err := c.jobs.Create(ctx, create.Job)
	switch {
	case err == nil:
		klog.FromContext(ctx).V(2).Info("Created backfill Job", "job", klog.KObj(made), "scheduledAt", create.Time)
		plan.Created(create, made)
		return true, nil
	case apierrors.IsAlreadyExists(err):
		live, getErr := c.jobs.Get(ctx, create.Job.Namespace, create.Job.Name)
		if getErr != nil {
			return false, fmt.Errorf("reading job %s, whose name is taken: %w", create.Job.Name, getErr)
		}
		return plan.Exists(create, slim.NewJob(live)), nil
	case apierrors.IsInvalid(err) || apierrors.IsBadRequest(err):
		// The template is at fault: no retry can help.
		plan.Rejected(create, err)
		return true, nil
	default:
		plan.CreateFailed(create, err)
		return false, fmt.Errorf("creating job %s: %w", create.Job.Name, err)
	}
}

// cronJob returns the named CronJob from the cache, nil when there is none.
// With -shards it is in the cache only if this replica holds its shard;
// otherwise it is read live.
func (c *BackfillController) cronJob(ctx context.Context, namespace, name string) (*cronv1.CronJob, error) {
	obj, exists, err := c.cronJobIndexer.GetByKey(namespace + "/" + name)
	if err != nil {
		return nil, err
	}
	if !exists && c.shards != nil {
		live, err := c.client.BatchV1().CronJobs(namespace).Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return live, err
	}
	if !exists {
		return nil, nil
	}
	switch cj := obj.(type) {
	case *slim.CronJob:
		return cj.CronJob()
	case *cronv1.CronJob:
		return cj.DeepCopy(), nil
	default:
		return nil, fmt.Errorf("the CronJob cache holds %T under %s/%s", obj, namespace, name)
	}
}

// job looks Jobs up by name in the cache.
func (c *BackfillController) job(namespace string) func(string) (backfill.Job, bool) {
	return func(name string) (backfill.Job, bool) {
		obj, exists, err := c.jobIndexer.GetByKey(namespace + "/" + name)
		if err != nil || !exists {
			return nil, false
		}
		switch j := obj.(type) {
		case *slim.Job:
			return j, true
		case *batchv1.Job:
			return slim.NewJob(j), true
		}
		return nil, false
	}
}

// goneJobs asks the API server about the active Jobs the cache lacks (or
// holds under another UID): only it can say one is gone, and a Job just
// created may not be cached yet.
func (c *BackfillController) goneJobs(ctx context.Context, bf *cronv1.Backfill) (map[types.UID]bool, error) {
	gone := map[types.UID]bool{}
	lookup := c.job(bf.Namespace)
	for _, ref := range bf.Status.Active {
		if j, ok := lookup(ref.Name); ok && j.GetUID() == ref.UID {
			continue
		}
		live, err := c.jobs.Get(ctx, bf.Namespace, ref.Name)
		switch {
		case apierrors.IsNotFound(err):
			gone[ref.UID] = true
		case err != nil:
			return nil, fmt.Errorf("reading active job %s: %w", ref.Name, err)
		case live.UID != ref.UID:
			gone[ref.UID] = true
		}
	}
	return gone, nil
}
