package main

import (
	"context"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	k8sfake "k8s.io/client-go/kubernetes/fake"
	core "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2/ktesting"
	"k8s.io/utils/clock"

	"github.com/cronjob-controller/cronjob-controller/pkg/control"
	"github.com/cronjob-controller/cronjob-controller/pkg/job"
	"github.com/cronjob-controller/cronjob-controller/pkg/slim"
)

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

// A Job whose CronJob is gone is released when it is deleted (by the
// garbage collector or a user): no plan will ever name it again, and it
// would hang in Terminating.
func TestJobOfAGoneCronJobIsReleased(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := newFixture(t, at(time.Minute))
	f.cronJob = newCronJob(lastScheduled(at(0)))
	f.jobs = []*batchv1.Job{newJob(at(0), running, holdingRecord)}
	c, kubeFactory, cronFactory := f.newController(ctx)
	honourFinalizers(f.kubeclient, f.clock)
	key := cache.MetaObjectToName(f.cronJob)
	name := f.jobs[0].Name

	// The CronJob goes; the garbage collector deletes its Job.
	if err := f.client.BatchV1().CronJobs("default").Delete(ctx, "cj", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := cronFactory.Batch().V1().CronJobs().Informer().GetIndexer().Delete(mustSlimCronJob(t, f)); err != nil {
		t.Fatal(err)
	}
	c.deleteCronJob(f.cronJob)
	if err := f.kubeclient.BatchV1().Jobs("default").Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	deleting := liveJob(t, ctx, f, name)
	cacheJob(t, kubeFactory, deleting)
	c.updateJob(slim.NewJob(f.jobs[0]), slim.NewJob(deleting))
	if c.queue.Len() != 1 {
		t.Fatalf("queue length %d, want the gone CronJob's key", c.queue.Len())
	}
	if _, err := c.syncHandler(ctx, key); err != nil {
		t.Fatal(err)
	}
	if j := liveJob(t, ctx, f, name); j != nil {
		t.Errorf("the Job of a deleted CronJob hangs: %+v", j.ObjectMeta)
	}
}

// A Job that lost its controller (the CronJob deleted with orphan
// propagation) is released too; one whose CronJob is still there is not.
func TestOrphanedJobIsReleased(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := newFixture(t, at(time.Minute))
	f.cronJob = newCronJob(lastScheduled(at(0)))
	f.jobs = []*batchv1.Job{newJob(at(0), running, holdingRecord), newJob(at(-time.Hour), running, holdingRecord)}
	c, kubeFactory, _ := f.newController(ctx)
	honourFinalizers(f.kubeclient, f.clock)
	key := cache.MetaObjectToName(f.cronJob)

	orphaned := f.jobs[0].DeepCopy()
	orphaned.OwnerReferences = nil
	if _, err := f.kubeclient.BatchV1().Jobs("default").Update(ctx, orphaned, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	orphaned.ResourceVersion = "2"
	cacheJob(t, kubeFactory, orphaned)
	c.updateJob(slim.NewJob(f.jobs[0]), slim.NewJob(orphaned))
	// A handler that ran before the CronJob cache listed it.
	c.noteOrphan(slim.NewJob(f.jobs[1]), job.ControllerOf(f.jobs[1]), f.jobs[1].Finalizers)
	f.kubeclient.ClearActions()
	if err := c.releaseOrphans(ctx, key); err != nil {
		t.Fatal(err)
	}
	if j := liveJob(t, ctx, f, f.jobs[0].Name); j == nil || job.HoldsRunRecord(j) {
		t.Errorf("the orphaned Job: %+v, want it kept, released", j)
	}
	if j := liveJob(t, ctx, f, f.jobs[1].Name); j == nil || !job.HoldsRunRecord(j) {
		t.Errorf("the Job of a CronJob still there was released: %+v", j)
	}
}

func mustSlimCronJob(t *testing.T, f *fixture) any {
	t.Helper()
	obj, err := slim.FromCronJob(f.cronJob.DeepCopy())
	if err != nil {
		t.Fatal(err)
	}
	return obj
}
