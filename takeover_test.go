package main

// Tests of takeover.go: the barrier a new leader passes before its first
// sync (a live list of the CronJobs), so a standby with lagging caches
// starts no run the old leader recorded.

import (
	"context"
	goruntime "runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	core "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2/ktesting"

	cronv1 "github.com/cronjob-controller/cronjob-controller/pkg/apis/batch/v1"
	"github.com/cronjob-controller/cronjob-controller/pkg/job"
	"github.com/cronjob-controller/cronjob-controller/pkg/slim"
)

// Failover to a warm standby whose CronJob watch lags (hung): the old
// leader created the 10:00 Job, wrote lastScheduleTime 10:00 and released
// the Job; the Job finished and its TTL deleted it. The standby's caches
// still show lastScheduleTime 09:00 and never saw the Job. The barrier Run
// passes before its first sync (catchUpWithAPIServer) reads the CronJobs
// live, so the 10:00 run is not started again.
func TestTakeoverWithLaggingCacheStartsNoRecordedRun(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := newFixture(t, at(20*time.Second))
	c := standbyWithLaggingCache(t, ctx, f, newCronJob(lastScheduled(at(0))), newCronJob(lastScheduled(at(-time.Hour))))
	if err := c.catchUpWithAPIServer(ctx); err != nil { // as Run does before its workers start
		t.Fatal(err)
	}
	if _, err := c.syncHandler(ctx, cache.MetaObjectToName(f.cronJob)); err != nil {
		t.Fatal(err)
	}
	wantNotCreated(t, f, jobName(at(0)), "the 10:00 run, recorded on the API server, runs twice after failover")
}

// The takeover barrier holds the first sync back until a live list of the
// CronJobs succeeds, trying again with a growing pause (on the controller's
// clock) rather than giving up or deciding from the cache.
func TestTakeoverBarrierRetriesTheList(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := newFixture(t, at(20*time.Second))
	c := standbyWithLaggingCache(t, ctx, f, newCronJob(lastScheduled(at(0))), newCronJob(lastScheduled(at(-time.Hour))))
	var lists atomic.Int32
	f.client.PrependReactor("list", "cronjobs", func(core.Action) (bool, runtime.Object, error) {
		if lists.Add(1) <= 2 {
			return true, nil, apierrors.NewServiceUnavailable("etcd is down")
		}
		return false, nil, nil
	})
	done := make(chan error, 1)
	go func() { done <- c.catchUpWithAPIServer(ctx) }()
	for {
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
			if n := lists.Load(); n != 3 {
				t.Errorf("%d lists, want 3 (two refused, then one that succeeds)", n)
			}
			got, err := c.cachedCronJob(ctx, cache.MetaObjectToName(f.cronJob))
			if err != nil {
				t.Fatal(err)
			}
			if got.ResourceVersion != "20" {
				t.Errorf("after the barrier the sync sees resourceVersion %s, want the live 20", got.ResourceVersion)
			}
			return
		default:
		}
		if f.clock.HasWaiters() {
			f.clock.Step(10 * time.Second)
		}
		goruntime.Gosched()
	}
}

// A CronJob deleted and re-created under the same name while the
// standby's watch lags. The cache shows the old CronJob (UID A); the live
// list shows the new one (UID B) whose 10:00 run the old leader recorded
// (its Job released and deleted by TTL), so the barrier records B. The
// watch then catches up in order: A's delete, then B's add at B's first
// version (never run). A's delete must forget only what was held for A
// (Store.ForgetUID), not B's barrier entry, or the first sync decides from
// B's first version and starts the 10:00 run again.
func TestTakeoverRecreatedCronJobKeepsItsBarrierEntry(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := newFixture(t, at(20*time.Second))
	live := newCronJob(createdAt(at(-15*time.Minute)), lastScheduled(at(0))) // B, as the API server holds it
	live.UID = "cj-uid-B"
	live.ResourceVersion = "30"
	f.cronJob = live
	c, _, cronFactory := f.newController(ctx)
	indexer := cronFactory.Batch().V1().CronJobs().Informer().GetIndexer()

	old := newCronJob(createdAt(at(-2*time.Hour)), lastScheduled(at(-time.Hour))) // A, in the lagging cache
	old.ResourceVersion = "10"
	cacheCronJob(t, cronFactory, old)
	if err := c.catchUpWithAPIServer(ctx); err != nil {
		t.Fatal(err)
	}

	// The watch catches up, in order: A deleted (rv 15), B created (rv 20).
	oldSlim, err := slim.FromCronJob(old.DeepCopy())
	if err != nil {
		t.Fatal(err)
	}
	if err := indexer.Delete(oldSlim); err != nil {
		t.Fatal(err)
	}
	c.deleteCronJob(oldSlim)
	first := newCronJob(createdAt(at(-15 * time.Minute))) // B as created: never run
	first.UID = types.UID("cj-uid-B")
	first.ResourceVersion = "20"
	cacheCronJob(t, cronFactory, first)
	firstObj, _, _ := indexer.GetByKey("default/cj")
	c.enqueueCronJob(firstObj)

	if _, err := c.syncHandler(ctx, cache.MetaObjectToName(live)); err != nil {
		t.Fatal(err)
	}
	wantNotCreated(t, f, jobName(at(0)), "the 10:00 run of the re-created CronJob, recorded on the API server, runs twice after failover")
}

// The barrier's entry outlives ownWritesTTL while the cache still lags:
// the versioned store then forces a live read, so the recorded run is not
// started again.
func TestTakeoverBarrierEntryExpiredStillReadsLive(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := newFixture(t, at(20*time.Second))
	c := standbyWithLaggingCache(t, ctx, f, newCronJob(lastScheduled(at(0))), newCronJob(lastScheduled(at(-time.Hour))))
	if err := c.catchUpWithAPIServer(ctx); err != nil {
		t.Fatal(err)
	}
	f.clock.Step(2 * ownWritesTTL) // a long queue, or a slow first sync
	if _, err := c.syncHandler(ctx, cache.MetaObjectToName(f.cronJob)); err != nil {
		t.Fatal(err)
	}
	wantNotCreated(t, f, jobName(at(0)), "the recorded 10:00 run starts again once the barrier's entry expired")
	if got, err := c.cachedCronJob(ctx, cache.MetaObjectToName(f.cronJob)); err != nil || got.ResourceVersion < "20" {
		t.Errorf("after the TTL the sync sees %v (err %v), want the live version 20 or newer", got, err)
	}
}

// The Job cache lags at takeover: the old leader's 10:00 Job is running
// (status.active lists it, read live by the barrier) but the standby's Job
// cache does not show it. At 11:00 with Forbid, the standby must not start
// the 11:00 run beside it.
func TestTakeoverWithLaggingJobCacheForbidHoldsTheNextRun(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := newFixture(t, at(time.Hour+20*time.Second))
	running10 := newJob(at(0), running)
	f.uncachedJobs = []*batchv1.Job{running10}
	c := standbyWithLaggingCache(t, ctx, f,
		newCronJob(policy(cronv1.ForbidConcurrent), lastScheduled(at(0)), activeJobs(running10)),
		newCronJob(policy(cronv1.ForbidConcurrent), lastScheduled(at(-time.Hour))))
	if err := c.catchUpWithAPIServer(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := c.syncHandler(ctx, cache.MetaObjectToName(f.cronJob)); err != nil {
		t.Fatal(err)
	}
	wantNotCreated(t, f, jobName(at(time.Hour)), "Forbid, yet the 11:00 run starts beside the old leader's running 10:00 Job the standby's Job cache does not show")
	wantNotCreated(t, f, jobName(at(0)), "the recorded 10:00 run starts again")
	t.Logf("writes: %q", describe(f.kubeclient.Actions(), true))
}

// The old leader created the 10:00 Job (still holding the run-record
// finalizer) and deferred its status write, then lost the Lease; the
// standby's Job cache does not show that Job yet. Its create of the same
// name is refused and the Job adopted: one Job for the run, no NameTaken,
// and the status written records the 10:00 run.
func TestTakeoverAdoptsTheOldLeadersUnrecordedJob(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := newFixture(t, at(20*time.Second))
	created := newJob(at(0), running, holdingRecord)
	f.uncachedJobs = []*batchv1.Job{created}
	f.cronJob = newCronJob(lastScheduled(at(-time.Hour))) // the deferred write never happened
	f.cronJob.ResourceVersion = "20"
	c, _, _ := f.newController(ctx)
	jobs := takeOverAndSettle(t, ctx, f, c)
	if len(jobs) != 1 || jobs[0].UID != created.UID {
		t.Errorf("Jobs %v, want only the old leader's %s", jobs, created.Name)
	}
	for _, e := range f.events() {
		if strings.Contains(e, "NameTaken") {
			t.Errorf("event %s: the old leader's own Job counted as foreign", e)
		}
	}
	if st := f.writtenStatus(); st == nil || st.Status.LastScheduleTime == nil || !st.Status.LastScheduleTime.Time.Equal(at(0)) {
		t.Errorf("status written %+v, want lastScheduleTime 10:00 (the adopted run)", st)
	}
}

// As TestTakeoverAdoptsTheOldLeadersUnrecordedJob for run-now: the old
// leader created the manual Job for value "a" and deferred the status
// write recording lastRunNow; the standby's Job cache lags. The create of
// the same name is refused and the Job adopted.
func TestTakeoverAdoptsTheOldLeadersRunNowJob(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := newFixture(t, at(-30*time.Minute))
	f.cronJob = newCronJob(lastScheduled(at(-time.Hour)), func(cj *cronv1.CronJob) {
		cj.Annotations = map[string]string{cronv1.RunNowAnnotation: "a"}
	})
	f.cronJob.ResourceVersion = "20"
	manual := job.NewManual(f.cronJob, "", "a", cronv1.RunNowAnnotation, 1)
	manual.UID = "uid-manual"
	manual.Finalizers = []string{job.RunRecordFinalizer}
	f.uncachedJobs = []*batchv1.Job{manual}
	c, _, _ := f.newController(ctx)
	jobs := takeOverAndSettle(t, ctx, f, c)
	if len(jobs) != 1 || jobs[0].UID != manual.UID {
		t.Errorf("Jobs %v, want only the old leader's %s", jobs, manual.Name)
	}
	if st := f.writtenStatus(); st == nil || st.Status.LastRunNow != "a" {
		t.Errorf("status written %+v, want lastRunNow a (the adopted run-now)", st)
	}
}

// standbyWithLaggingCache is a standby about to take over: the API server
// holds live (resourceVersion 20), the standby's CronJob cache still shows
// stale (resourceVersion 10).
func standbyWithLaggingCache(t *testing.T, ctx context.Context, f *fixture, live, stale *cronv1.CronJob) *Controller {
	t.Helper()
	f.cronJob = live
	f.cronJob.ResourceVersion = "20"
	c, _, cronFactory := f.newController(ctx)
	stale.ResourceVersion = "10"
	cacheCronJob(t, cronFactory, stale)
	return c
}

// takeOverAndSettle passes the takeover barrier, then syncs the fixture's
// CronJob until it asks for no wake-up within a minute (three syncs at
// most: the first, and any deferred status write after it), and returns
// the Jobs then on the API server.
func takeOverAndSettle(t *testing.T, ctx context.Context, f *fixture, c *Controller) []batchv1.Job {
	t.Helper()
	if err := c.catchUpWithAPIServer(ctx); err != nil {
		t.Fatal(err)
	}
	key := cache.MetaObjectToName(f.cronJob)
	for range 3 { // the first sync, and any deferred status write after it
		d, err := c.syncHandler(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		if d <= 0 || d > time.Minute {
			break
		}
		f.clock.Step(d)
	}
	t.Logf("writes: %q", describe(f.kubeclient.Actions(), false))
	jobs, err := f.kubeclient.BatchV1().Jobs("default").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return jobs.Items
}
