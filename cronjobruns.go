package main

// CronJobRuns: requests for one run of a CronJob (pkg/planner/requests.go).
// The CronJob's sync reads the CronJobRuns naming it from their informer's
// cache, by an index on spec.cronJobName, and plans their Jobs with its own
// runs. After its creates and its own status write it brings each
// CronJobRun's status up to date from its Job (planner.RunStatus), and
// deletes those past their spec.ttlSecondsAfterFinished: a CronJobRun's
// writes never hold up a run. A CronJobRun added, changed or deleted queues
// its CronJob; a Job's change queues its CronJob already.

import (
	"context"
	"errors"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"

	cronv1 "github.com/cronjob-controller/cronjob-controller/pkg/apis/batch/v1"
	informers "github.com/cronjob-controller/cronjob-controller/pkg/generated/informers/externalversions/batch/v1"
	"github.com/cronjob-controller/cronjob-controller/pkg/job"
	"github.com/cronjob-controller/cronjob-controller/pkg/planner"
	"github.com/cronjob-controller/cronjob-controller/pkg/slim"
)

// runsByCronJob indexes CronJobRuns by namespace/spec.cronJobName.
const runsByCronJob = "runsByCronJob"

func indexRunByCronJob(obj any) ([]string, error) {
	if r, ok := obj.(*cronv1.CronJobRun); ok {
		return []string{r.Namespace + "/" + r.Spec.CronJobName}, nil
	}
	return nil, nil
}

// prepareRunCaches adds the CronJobRun index, once, before the informer
// starts.
func prepareRunCaches(runs cache.SharedIndexInformer) error {
	if _, ok := runs.GetIndexer().GetIndexers()[runsByCronJob]; ok {
		return nil
	}
	if err := runs.AddIndexers(cache.Indexers{runsByCronJob: indexRunByCronJob}); err != nil {
		return fmt.Errorf("adding the CronJobRun index: %w", err)
	}
	return nil
}

// WithCronJobRuns makes the controller start the runs CronJobRuns ask for.
// Without it CronJobRuns start nothing.
func WithCronJobRuns(informer informers.CronJobRunInformer) Option {
	return func(c *Controller) { c.runInformer = informer }
}

// watchRuns wires the CronJobRun informer, if any.
func (c *Controller) watchRuns() error {
	if c.runInformer == nil {
		return nil
	}
	informer := c.runInformer.Informer()
	if err := prepareRunCaches(informer); err != nil {
		return err
	}
	c.runIndexer = informer.GetIndexer()
	c.cachesSynced = append(c.cachesSynced, informer.HasSynced)
	err := c.handlers.add(informer, cache.ResourceEventHandlerFuncs{
		AddFunc: c.runChanged,
		UpdateFunc: func(oldObj, newObj any) {
			o, ok1 := oldObj.(metav1.Object)
			n, ok2 := newObj.(metav1.Object)
			if ok1 && ok2 && o.GetResourceVersion() == n.GetResourceVersion() {
				return
			}
			c.runChanged(newObj)
		},
		DeleteFunc: c.runChanged,
	})
	if err != nil {
		return fmt.Errorf("adding CronJobRun handlers: %w", err)
	}
	return nil
}

// runChanged queues the CronJob a CronJobRun names.
func (c *Controller) runChanged(obj any) {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	if r, ok := obj.(*cronv1.CronJobRun); ok {
		c.queue.Add(cache.ObjectName{Namespace: r.Namespace, Name: r.Spec.CronJobName})
	}
}

// runsOf returns the CronJobRuns naming the CronJob under key: the cache's
// objects, shared.
func (c *Controller) runsOf(key cache.ObjectName) ([]*cronv1.CronJobRun, error) {
	if c.runIndexer == nil {
		return nil, nil
	}
	objs, err := c.runIndexer.ByIndex(runsByCronJob, key.String())
	if err != nil {
		return nil, fmt.Errorf("listing CronJobRuns of %s: %w", key, err)
	}
	var runs []*cronv1.CronJobRun
	for _, o := range objs {
		if r, ok := o.(*cronv1.CronJobRun); ok && r.DeletionTimestamp == nil {
			runs = append(runs, r)
		}
	}
	return runs, nil
}

// runsOfGone returns runs (naming the CronJob under key, which the cache
// lacks) if the CronJob is gone, for this sync to follow. Unsharded the
// cache says so. Sharded, the cache holds only the held shards' CronJobs:
// one it lacks may be another replica's, whose sync follows its runs, so
// the API server is asked; once it says the CronJob is gone, any replica
// syncing the key follows them (the one that held the CronJob's shard sees
// its delete, and its Jobs'), reading their Jobs live (jobOfGone).
func (c *Controller) runsOfGone(ctx context.Context, key cache.ObjectName, runs []*cronv1.CronJobRun) ([]*cronv1.CronJobRun, error) {
	if c.shards == nil || len(runs) == 0 {
		return runs, nil
	}
	switch _, err := c.cronJobs.Get(ctx, key.Namespace, key.Name); {
	case err == nil:
		return nil, nil
	case !apierrors.IsNotFound(err):
		return nil, fmt.Errorf("looking up CronJob %s, named by CronJobRuns: %w", key, err)
	}
	return runs, nil
}

// requestsOf is what the planner reads of runs.
func requestsOf(runs []*cronv1.CronJobRun) []planner.Request {
	var out []planner.Request
	for _, r := range runs {
		out = append(out, planner.RequestOf(r))
	}
	return out
}

// followRuns writes the status of each of runs (the CronJobRuns naming the
// CronJob cj, as the sync read them; cj nil when it is gone) from its Job,
// and deletes those past their TTL; wake is when the next TTL ends (0:
// none). jobs are what the sync knows of cj's Jobs: those of its view (a
// Job it deleted among them while the run-record finalizer holds it), those
// its creates met, and the records detached from cj; of two with one name
// the later stands. So a CronJobRun's Job that exists is recorded as its
// run, deleted or not, before its finalizer can go. refusals are the
// plan's (nil without one). A failed write is retried by the next sync,
// which the error, the write's own event or the Job's next change brings.
func (c *Controller) followRuns(ctx context.Context, runs []*cronv1.CronJobRun, cj *cronv1.CronJob, jobs []planner.Job, refusals map[string]planner.RequestRefusal) (wake time.Duration, _ error) {
	if len(runs) == 0 {
		return 0, nil
	}
	byName := make(map[string]planner.Job, len(jobs))
	for _, j := range jobs {
		byName[j.GetName()] = j
	}
	now := c.clock.Now()
	var errs []error
	for _, r := range runs {
		var j planner.Job
		if cj != nil {
			j = byName[job.RequestName(cj.Name, r.UID)]
		} else if found, err := c.jobOfGone(ctx, r); err != nil {
			errs = append(errs, err)
			continue
		} else if found != nil {
			// The CronJob is gone, its Job not yet: the name, made from
			// this CronJobRun's UID, is its Job's. Recorded now, it is
			// not started again by a CronJob created under the name.
			j = found
		}
		var refused *planner.RequestRefusal
		if why, ok := refusals[r.Name]; ok {
			refused = &why
		}
		st, events := planner.RunStatus(r, cj, j, refused, now)
		if !equality.Semantic.DeepEqual(st, r.Status) {
			updated := r.DeepCopy()
			updated.Status = st
			if _, err := c.runs.CronJobRuns(r.Namespace).UpdateStatus(ctx, updated, metav1.UpdateOptions{}); err != nil {
				if !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
					errs = append(errs, fmt.Errorf("updating status of CronJobRun %s: %w", klog.KObj(r), err))
				}
				continue
			}
			for _, e := range events {
				c.recorder.Event(updated, e.Type, e.Reason, e.Message)
			}
			r = updated
		}
		d, err := c.expireRun(ctx, r, now)
		errs = append(errs, err)
		if d > 0 && (wake == 0 || d < wake) {
			wake = d
		}
	}
	return wake, errors.Join(errs...)
}

// jobOfGone is the Job of r, whose CronJob is gone, if it exists: the
// cache's, or, sharded, the API server's, since the Job is in the shard of
// the CronJob that made it, which another replica may hold.
func (c *Controller) jobOfGone(ctx context.Context, r *cronv1.CronJobRun) (*slim.Job, error) {
	name := job.RequestName(r.Spec.CronJobName, r.UID)
	if cached, ok := c.cachedJob(cache.ObjectName{Namespace: r.Namespace, Name: name}); ok || c.shards == nil {
		return cached, nil
	}
	live, err := c.jobs.Get(ctx, r.Namespace, name)
	switch {
	case apierrors.IsNotFound(err):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("looking up Job %s of CronJobRun %s: %w", name, klog.KObj(r), err)
	}
	return slim.NewJob(live), nil
}

// expireRun deletes r once its TTL after finishing has passed (only if it
// is still the object of that UID); until then it says how long is left.
func (c *Controller) expireRun(ctx context.Context, r *cronv1.CronJobRun, now time.Time) (time.Duration, error) {
	at, ok := planner.ExpiresAt(r)
	switch {
	case !ok:
		return 0, nil
	case at.After(now):
		return at.Sub(now), nil
	}
	err := c.runs.CronJobRuns(r.Namespace).Delete(ctx, r.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: ptr.To(r.UID)}})
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		return 0, fmt.Errorf("deleting CronJobRun %s after its TTL: %w", klog.KObj(r), err)
	}
	klog.FromContext(ctx).V(2).Info("Deleted a finished CronJobRun after its TTL", "cronJobRun", klog.KObj(r))
	return 0, nil
}

// requestPending reads the CronJobRun of create live, before its Job is
// made: a cache behind the API server (a hung watch, a standby taking over)
// may show it before the status write that names its Job, a Job pruned
// since, and the request would start again. A request is rare; one read
// each is its lock's other half. false: it is gone, handled already, or no
// longer the CronJobRun the Job's name was made for.
func (c *Controller) requestPending(ctx context.Context, cj *cronv1.CronJob, create planner.Create) (bool, error) {
	live, err := c.runs.CronJobRuns(cj.Namespace).Get(ctx, create.Request, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("reading CronJobRun %s before starting its Job: %w", klog.KRef(cj.Namespace, create.Request), err)
	}
	if job.RequestName(cj.Name, live.UID) != create.Job.Name || live.DeletionTimestamp != nil || planner.Handled(live) {
		klog.FromContext(ctx).V(2).Info("CronJobRun handled already; its cache was behind", "cronJobRun", klog.KObj(live), "job", live.Status.JobName)
		return false, nil
	}
	if existing, ok := c.cachedJob(cache.MetaObjectToName(create.Job)); ok && c.deletedJobs.Has(existing.UID) {
		// Its Job exists and this process is deleting it (Replace): the
		// run started; the CronJobRun's status is still to say so.
		return false, nil
	}
	return true, nil
}

// sooner is the earlier of two wake-ups, 0 meaning none.
func sooner(a, b time.Duration) time.Duration {
	if a <= 0 || (b > 0 && b < a) {
		return b
	}
	return a
}
