package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	cronv1 "github.com/cronjob-controller/cronjob-controller/pkg/apis/batch/v1"
	"github.com/cronjob-controller/cronjob-controller/pkg/job"
	"github.com/cronjob-controller/cronjob-controller/pkg/planner"
	"github.com/cronjob-controller/cronjob-controller/pkg/slim"
)

// The run-record finalizer (job.RunRecordFinalizer) keeps every Job this
// controller creates until it has finished (or is being deleted) and the
// CronJob's stored status records its run and no longer lists it active.
// This file removes it: for a CronJob's own Jobs as its plan says
// (planner.Plan.Releases), and for Jobs whose CronJob is gone, which no plan
// will ever name again.

// releaseJobs removes the finalizer from the Jobs of plan.Releases, except
// those this process released already and the cache still shows holding it.
func (c *Controller) releaseJobs(ctx context.Context, cj *cronv1.CronJob, releases []planner.Release) error {
	var errs []error
	var runs liveRuns
	for _, r := range releases {
		if ctx.Err() != nil {
			errs = append(errs, context.Cause(ctx))
			break
		}
		switch held, err := c.heldByRun(ctx, cache.MetaObjectToName(cj), r.Name, true, &runs); {
		case err != nil:
			errs = append(errs, err)
			continue
		case held:
			continue
		}
		if err := c.release(ctx, cj.Namespace, r.Name, r.UID, r.Finalizers); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// liveRuns are a namespace's CronJobRuns as the API server holds them, read
// once, when first needed.
type liveRuns struct {
	items []cronv1.CronJobRun
	read  bool
}

// heldByRun reports whether the CronJobRun whose Job is jobName (a Job of
// the CronJob under key) still holds its run-record finalizer: its stored
// status must name the Job, and its outcome once the Job has finished,
// before the finalizer goes; released earlier, the Job could go while the
// CronJobRun still looks pending, and a later sync would start it a second
// Job. One refused for good never names it, and holds nothing. A plan
// (planned) judged the CronJobRuns in the cache already; one the cache
// lacks (a standby's cache behind) the plan took for gone, and a Job whose
// CronJob is gone has no plan (its CronJobRun's status was just written,
// which the cache may not show yet): for those the API server is asked.
func (c *Controller) heldByRun(ctx context.Context, key cache.ObjectName, jobName string, planned bool, runs *liveRuns) (bool, error) {
	if c.runIndexer == nil || !job.IsRequestName(key.Name, jobName) {
		return false, nil
	}
	if planned {
		cached, err := c.runsOf(key)
		if err != nil {
			return false, err
		}
		if slices.ContainsFunc(cached, func(r *cronv1.CronJobRun) bool { return job.RequestName(key.Name, r.UID) == jobName }) {
			return false, nil
		}
	}
	if !runs.read {
		list, err := c.runs.CronJobRuns(key.Namespace).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, fmt.Errorf("reading the CronJobRuns of %s before releasing Job %s: %w", key, jobName, err)
		}
		runs.items, runs.read = list.Items, true
	}
	i := slices.IndexFunc(runs.items, func(r cronv1.CronJobRun) bool {
		return r.Spec.CronJobName == key.Name && job.RequestName(key.Name, r.UID) == jobName
	})
	if i < 0 {
		return false, nil // gone: nothing holds the Job
	}
	st := &runs.items[i].Status
	if _, done := planner.Finished(st); done && st.JobName != jobName {
		return false, nil // refused for good (its name taken, say): it never names this Job
	}
	if st.JobName != jobName {
		return st.JobName == "", nil
	}
	j, ok := c.cachedJob(cache.ObjectName{Namespace: key.Namespace, Name: jobName})
	return ok && j.Finished() != "" && st.Outcome != cronv1.OutcomeSucceeded && st.Outcome != cronv1.OutcomeFailed, nil
}

// releaseRecorded releases the finished Jobs of cj whose runs cj.Status,
// just written, records and no longer lists active.
func (c *Controller) releaseRecorded(ctx context.Context, cj *cronv1.CronJob) error {
	releases, err := c.recordedReleases(cj)
	if err != nil {
		return err
	}
	return c.releaseJobs(ctx, cj, releases)
}

// recordedReleases lists the Jobs of cj holding the run-record finalizer
// that have finished (or are being deleted) and whose runs cj.Status, just
// written, records and no longer lists active (planner.Releases).
func (c *Controller) recordedReleases(cj *cronv1.CronJob) ([]planner.Release, error) {
	jobs, err := c.jobsOwnedBy(cj)
	if err != nil {
		return nil, err
	}
	runs, err := c.runsOf(cache.MetaObjectToName(cj))
	if err != nil {
		return nil, err
	}
	releases, _ := planner.Releases(cj, jobs, &cj.Status, requestsOf(runs))
	return releases, nil
}

// release removes the finalizer from one Job and remembers it did.
func (c *Controller) release(ctx context.Context, namespace, name string, uid types.UID, finalizers []string) error {
	if c.releasedJobs.Has(uid) {
		return nil
	}
	if err := c.jobs.ReleaseFinalizer(ctx, namespace, name, uid, job.RunRecordFinalizer, finalizers); err != nil {
		if !leftForNextRun(ctx, err) {
			klog.FromContext(ctx).Error(err, "Releasing a Job's run-record finalizer failed", "job", klog.KRef(namespace, name))
		}
		return fmt.Errorf("releasing Job %s: %w", name, err)
	}
	klog.FromContext(ctx).V(4).Info("Released a Job's run-record finalizer", "job", klog.KRef(namespace, name))
	c.releasedJobs.Deleted(uid)
	return nil
}

// orphan is a Job holding the finalizer whose controlling CronJob looked
// gone.
type orphan struct {
	name       string
	uid        types.UID
	owner      types.UID
	finalizers []string
}

// orphans holds orphan Jobs by the key of their CronJob until its sync.
// It is safe for concurrent use.
type orphans struct {
	mu    sync.Mutex
	byKey map[cache.ObjectName]map[types.UID]orphan
}

func newOrphans() *orphans {
	return &orphans{byKey: map[cache.ObjectName]map[types.UID]orphan{}}
}

func (o *orphans) add(key cache.ObjectName, j orphan) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.byKey[key] == nil {
		o.byKey[key] = map[types.UID]orphan{}
	}
	o.byKey[key][j.uid] = j
}

func (o *orphans) take(key cache.ObjectName) []orphan {
	o.mu.Lock()
	defer o.mu.Unlock()
	var out []orphan
	for _, j := range o.byKey[key] {
		out = append(out, j)
	}
	delete(o.byKey, key)
	return out
}

// noteOrphan records j, seen by an event handler holding the finalizer while
// the CronJob it names as controller (owner; j's own when nil) is not in the
// cache, and queues that CronJob's key: its sync releases j if the CronJob
// is really gone. Without this, a Job the garbage collector or a user
// deletes after its CronJob would hang in Terminating.
func (c *Controller) noteOrphan(j *slim.Job, owner *metav1.OwnerReference, finalizers []string) {
	if !slices.Contains(finalizers, job.RunRecordFinalizer) || c.releasedJobs.Has(j.UID) {
		return
	}
	if owner == nil {
		if j.DeletionTimestamp == nil {
			return
		}
		if uid := job.RecordOf(j); uid != "" {
			// Detached from a CronJob that may not have recorded its run:
			// noted under that CronJob's key, whose sync releases it once
			// the run is recorded, or at once if the CronJob is gone.
			owner = &metav1.OwnerReference{Name: job.CronJobNameOf(j.Name), UID: uid}
		} else {
			// Controlled by no CronJob and made for none we can name
			// (made before Jobs said whose they were): once someone
			// deletes it, it goes. Noted under a key of its own name,
			// which no CronJob controls it by.
			owner = &metav1.OwnerReference{Name: j.Name}
		}
	}
	key := cache.ObjectName{Namespace: j.Namespace, Name: owner.Name}
	c.orphans.add(key, orphan{name: j.Name, uid: j.UID, owner: owner.UID, finalizers: finalizers})
	c.queue.Add(key)
}

// releaseOrphans releases the orphan Jobs noted under key whose CronJob is
// gone: the one under key now, if any, is another (a new UID), or no longer
// controls them. The cache saying the CronJob is gone is confirmed live
// first (after a restart the Job cache may list Jobs newer than the CronJob
// cache's list); that read happens only when orphans were noted.
func (c *Controller) releaseOrphans(ctx context.Context, key cache.ObjectName) error {
	noted := c.orphans.take(key)
	if len(noted) == 0 {
		return nil
	}
	var current types.UID
	if obj, exists, err := c.cronJobIndexer.GetByKey(key.String()); err == nil && exists {
		if m, ok := obj.(metav1.Object); ok {
			current = m.GetUID()
		}
	} else {
		live, err := c.cronJobs.Get(ctx, key.Namespace, key.Name)
		switch {
		case err == nil:
			current = live.UID
		case !apierrors.IsNotFound(err):
			for _, o := range noted {
				c.orphans.add(key, o)
			}
			return fmt.Errorf("reading CronJob %s to release its Jobs: %w", key, err)
		}
	}
	var errs []error
	var runs liveRuns
	for _, o := range noted {
		if key := o.owner; c.shards != nil && !c.owns(cmp.Or(key, o.uid)) {
			continue // its shard moved to another replica, which sees it too
		}
		if o.owner == current && current != "" {
			j, ok := c.cachedJob(cache.ObjectName{Namespace: key.Namespace, Name: o.name})
			if ok && j.UID == o.uid && job.IsControlledBy(j, string(current)) {
				continue // still its CronJob's: that one's plan releases it
			}
			if ok && j.UID == o.uid && !c.runRecorded(ctx, key, j) {
				// Detached from a CronJob that lives on, before its stored
				// status recorded the run: the finalizer is the run's only
				// record until it does.
				c.orphans.add(key, o)
				continue
			}
		}
		switch held, err := c.heldByRun(ctx, key, o.name, false, &runs); {
		case err != nil:
			c.orphans.add(key, o)
			errs = append(errs, err)
			continue
		case held:
			// Its CronJobRun's status does not name it yet: the sync of
			// the CronJob gone, following its CronJobRuns, writes that,
			// and the CronJobRun's change queues this key again.
			c.orphans.add(key, o)
			klog.FromContext(ctx).V(2).Info("Job of a gone CronJob waits for its CronJobRun's status to name it", "job", klog.KRef(key.Namespace, o.name))
			continue
		}
		if err := c.release(ctx, key.Namespace, o.name, o.uid, o.finalizers); err != nil {
			c.orphans.add(key, o)
			errs = append(errs, err)
			continue
		}
		klog.FromContext(ctx).V(2).Info("Released a Job whose CronJob is gone", "job", klog.KRef(key.Namespace, o.name))
	}
	return errors.Join(errs...)
}

// runRecorded reports whether the CronJob under key, as stored, records the
// run of j, a Job detached from it; false when that cannot be told now.
func (c *Controller) runRecorded(ctx context.Context, key cache.ObjectName, j *slim.Job) bool {
	cj, err := c.cachedCronJob(ctx, key)
	if err != nil {
		return false
	}
	jobs, err := c.jobsOwnedBy(cj)
	if err != nil {
		return false
	}
	// The other records too: a run-now chain runs through them.
	records, err := c.recordsOf(cj)
	if err != nil {
		return false
	}
	for _, r := range records {
		if r.GetUID() != j.UID {
			jobs = append(jobs, r)
		}
	}
	runs, err := c.runsOf(key)
	if err != nil {
		return false
	}
	return cj.DeletionTimestamp != nil || planner.Recorded(cj, jobs, j, requestsOf(runs))
}
