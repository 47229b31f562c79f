package main

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	core "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2/ktesting"
	"k8s.io/utils/ptr"

	cronv1 "github.com/cronjob-controller/cronjob-controller/pkg/apis/batch/v1"
	informers "github.com/cronjob-controller/cronjob-controller/pkg/generated/informers/externalversions"
	"github.com/cronjob-controller/cronjob-controller/pkg/shard"
)

// Review 12 probes: deferred statuses (c.deferred) and the promise that
// every due run starts exactly once. The two shard-move probes failed
// before a kept decision carried the hold of its shard
// (deferredStatus.hold, Controller.current); the new-UID one held up.

const rev12Shards = 4

// rev12Replica is replica A at 10:00:01, holding the shard (i of set) of
// an hourly CronJob that keeps no history.
func rev12Replica(t *testing.T) (context.Context, *fixture, *Controller, informers.SharedInformerFactory, *shard.Set, int, cache.ObjectName) {
	t.Helper()
	_, ctx := ktesting.NewTestContext(t)
	f := newFixture(t, at(time.Second))
	f.cronJob = newCronJob(func(cj *cronv1.CronJob) {
		cj.Spec.SuccessfulJobsHistoryLimit = ptr.To[int32](0)
		cj.ResourceVersion = "1"
	})
	c, _, cronFactory := f.newController(ctx)
	set := shard.NewSet(rev12Shards, f.clock)
	i := shard.OfUID(f.cronJob.UID, rev12Shards)
	set.Acquire(i, f.clock.Now().Add(15*time.Second))
	c.shards = set
	return ctx, f, c, cronFactory, set, i, cache.MetaObjectToName(f.cronJob)
}

// rev12Recorded is the status another replica (B) leaves after holding the
// shard from 10:00 to 14:30: it recorded A's 10:00 Job and ran 11:00 to
// 14:00, each Job since finished and pruned (history limit 0).
func rev12Recorded(t *testing.T, ctx context.Context, f *fixture, cronFactory informers.SharedInformerFactory) {
	t.Helper()
	cj, err := f.client.BatchV1().CronJobs("default").Get(ctx, "cj", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cj.ResourceVersion = "500"
	cj.Status = cronv1.CronJobStatus{
		LastScheduleTime:   &metav1.Time{Time: at(4 * time.Hour)},
		LastSuccessfulTime: &metav1.Time{Time: at(4*time.Hour + 5*time.Minute)},
		ObservedGeneration: cj.Generation,
	}
	inForce("0 * * * *", "UTC")(cj)
	if _, err := f.client.BatchV1().CronJobs("default").UpdateStatus(ctx, cj, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	cacheCronJob(t, cronFactory, cj)
	// The Jobs are gone from the API server (pruned by B).
	_ = f.kubeclient.BatchV1().Jobs("default").Delete(ctx, jobName(topOfHour), metav1.DeleteOptions{})
}

// A status deferred by replica A, whose shard then moves to replica B
// before the deferred write: A keeps it in c.deferred. B records the runs
// and goes on; when the shard comes back hours later, A's first sync takes
// the old status as its starting point (same UID, same generation) and
// starts again the 14:00 run B started. Two ways to be left deferred: a
// burst (the write waits behind the queue, and the queued sync finds the
// shard gone), and a write cut by the hold's lapse (the lease fence).
func TestProbeRev12DeferredOutlivesShardMove(t *testing.T) {
	for _, trigger := range []string{"burst", "write cut by the lapse"} {
		t.Run(trigger, func(t *testing.T) {
			ctx, f, c, cronFactory, set, i, key := rev12Replica(t)

			c.queue.Add(key)
			if trigger == "burst" {
				c.queue.Add(cache.ObjectName{Namespace: "default", Name: "other"})
			} else {
				cut := true
				f.client.PrependReactor("update", "cronjobs", func(core.Action) (bool, runtime.Object, error) {
					if !cut {
						return false, nil, nil
					}
					cut = false
					f.clock.Step(20 * time.Second) // the hold lapses mid-write
					return true, nil, context.Canceled
				})
			}
			// 10:00:01: the 10:00 run starts; its status is not written.
			c.processNextWorkItem(ctx)
			if got := created(f); !slices.Equal(got, []string{jobName(topOfHour)}) {
				t.Fatalf("created %q, want the 10:00 run", got)
			}
			for _, a := range f.client.Actions() {
				if a.GetSubresource() == "status" && trigger == "burst" {
					t.Fatal("status written at once; the case tests nothing")
				}
			}
			// The shard moves to B before the deferred write.
			set.Lose(i)
			if trigger == "burst" {
				c.processNextWorkItem(ctx) // other: gone
				c.processNextWorkItem(ctx) // cj: not held, dropped
			}

			// 14:30: B has recorded everything; the shard comes back.
			f.clock.SetTime(at(4*time.Hour + 30*time.Minute))
			rev12Recorded(t, ctx, f, cronFactory)
			f.kubeclient.ClearActions()
			f.client.ClearActions()
			set.Acquire(i, f.clock.Now().Add(15*time.Second))
			c.queue.Add(key)
			c.processNextWorkItem(ctx)

			if got := created(f); len(got) > 0 {
				t.Errorf("after the shard came back A created %q: the 14:00 run (B's status says it ran) started twice", got)
			}
			if w := f.writtenStatus(); w != nil && (w.Status.LastScheduleTime == nil || w.Status.LastScheduleTime.Time.Before(at(4*time.Hour))) {
				t.Errorf("A wrote lastScheduleTime %v over B's 14:00", w.Status.LastScheduleTime)
			}
		})
	}
}

// The same stale status, written by the shutdown flush: the shard came
// back and the replica stops before syncing the CronJob. flushDeferred
// writes A's 10:00 decision wholesale over B's newer status (no check that
// it is still the newest decision, nor a shard hold), so the next holder
// finds lastScheduleTime 10:00 and no Jobs, and starts 14:00 again.
func TestProbeRev12FlushWritesStaleDeferredStatus(t *testing.T) {
	ctx, f, c, cronFactory, set, i, key := rev12Replica(t)
	c.queue.Add(key)
	c.queue.Add(cache.ObjectName{Namespace: "default", Name: "other"})
	c.processNextWorkItem(ctx)
	if f.writtenStatus() != nil {
		t.Fatal("status written at once; the case tests nothing")
	}
	set.Lose(i)
	c.processNextWorkItem(ctx)
	c.processNextWorkItem(ctx)

	f.clock.SetTime(at(4*time.Hour + 30*time.Minute))
	rev12Recorded(t, ctx, f, cronFactory)
	f.client.ClearActions()
	set.Acquire(i, f.clock.Now().Add(15*time.Second))
	// Like the API server, a write returns a newer resource version.
	f.client.PrependReactor("update", "cronjobs", func(a core.Action) (bool, runtime.Object, error) {
		cj := a.(core.UpdateAction).GetObject().(*cronv1.CronJob).DeepCopy()
		cj.ResourceVersion = "501"
		return true, cj, nil
	})
	c.flushDeferred(ctx) // shutdown before the CronJob's first sync

	if w := f.writtenStatus(); w != nil && (w.Status.LastScheduleTime == nil || w.Status.LastScheduleTime.Time.Before(at(4*time.Hour))) {
		t.Errorf("the shutdown flush wrote lastScheduleTime %v, active %v over B's 14:00: the next holder starts 14:00 again",
			w.Status.LastScheduleTime, w.Status.Active)
	}
	// The next holder (here A again, its deferred map drained) decides from
	// what the flush left.
	f.kubeclient.ClearActions()
	if _, err := c.syncHandler(ctx, cache.MetaObjectToName(f.cronJob)); err != nil {
		t.Fatal(err)
	}
	if got := created(f); len(got) > 0 {
		t.Errorf("the sync after the flush created %q: the 14:00 run started twice", got)
	}
}

// Holds up: a deferred status put back by a failed view is not taken by a
// CronJob created again under the same name (new UID): its first sync
// decides from its own status.
func TestProbeRev12PutBackNotResurrectedForNewUID(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := newFixture(t, at(time.Second))
	f.cronJob = newCronJob(func(cj *cronv1.CronJob) { cj.ResourceVersion = "1" })
	c, _, cronFactory := f.newController(ctx)
	key := cache.MetaObjectToName(f.cronJob)
	faults := rev12Faults(f)
	// 10:00:01: the create's answer is lost, and the status write fails.
	faults["create jobs"], faults["update cronjobs/status"] = true, true
	if _, err := c.syncHandler(ctx, key); err == nil {
		t.Fatal("faults not reported")
	}
	// 10:00:03: the lookup of that Job fails: the status is put back.
	f.clock.SetTime(at(3 * time.Second))
	faults["get jobs"] = true
	if _, err := c.syncHandler(ctx, key); err == nil {
		t.Fatal("failed lookup not reported")
	}
	// The CronJob is deleted and created again (new UID, created 10:00:04,
	// so 10:00 is none of its runs).
	again := newCronJob(createdAt(at(4*time.Second)), func(cj *cronv1.CronJob) {
		cj.UID, cj.ResourceVersion = "cj-uid-2", "10"
	})
	c.deleteCronJob(f.cronJob)
	cacheCronJob(t, cronFactory, again)
	f.clock.SetTime(at(5 * time.Second))
	clear(faults)
	f.kubeclient.ClearActions()
	f.client.ClearActions()
	if _, err := c.syncHandler(ctx, key); err != nil {
		t.Fatal(err)
	}
	if got := created(f); len(got) > 0 {
		t.Errorf("the new CronJob created %q", got)
	}
	if w := f.writtenStatus(); w != nil && (w.Status.LastScheduleTime != nil || len(w.Status.Active) > 0) {
		t.Errorf("the new CronJob's status took the old one's decision: %+v", w.Status)
	}
}

// rev12Faults makes the named calls ("verb resource[/sub]") answer 500.
func rev12Faults(f *fixture) map[string]bool {
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
