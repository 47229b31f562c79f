package main

// Tests of sharded.go (-shards): a replica syncs a CronJob only while it
// holds its shard, keeps no decision across a shard move, and runs the
// same controllers as the unsharded one.

import (
	"context"
	"go/ast"
	"go/parser"
	"go/token"
	"slices"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	core "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2/ktesting"
	"k8s.io/utils/ptr"

	"fmt"
	cronv1 "github.com/cronjob-controller/cronjob-controller/pkg/apis/batch/v1"
	informers "github.com/cronjob-controller/cronjob-controller/pkg/generated/informers/externalversions"
	"github.com/cronjob-controller/cronjob-controller/pkg/job"
	"github.com/cronjob-controller/cronjob-controller/pkg/shard"
	"github.com/cronjob-controller/cronjob-controller/pkg/slim"
	"k8s.io/apimachinery/pkg/types"
	"strings"
)

const replicaShards = 4

// shardHoldingReplica is replica A at 10:00:01, holding the shard (i of set) of
// an hourly CronJob that keeps no history.
func shardHoldingReplica(t *testing.T) (context.Context, *fixture, *Controller, informers.SharedInformerFactory, *shard.Set, int, cache.ObjectName) {
	t.Helper()
	_, ctx := ktesting.NewTestContext(t)
	f := newFixture(t, at(time.Second))
	f.cronJob = newCronJob(func(cj *cronv1.CronJob) {
		cj.Spec.SuccessfulJobsHistoryLimit = ptr.To[int32](0)
		cj.ResourceVersion = "1"
	})
	c, _, cronFactory := f.newController(ctx)
	set := shard.NewSet(replicaShards, f.clock)
	i := shard.OfUID(f.cronJob.UID, replicaShards)
	set.Acquire(i, f.clock.Now().Add(15*time.Second))
	c.shards = set
	return ctx, f, c, cronFactory, set, i, cache.MetaObjectToName(f.cronJob)
}

// recordedByOtherReplica is the status another replica (B) leaves after holding the
// shard from 10:00 to 14:30: it recorded A's 10:00 Job and ran 11:00 to
// 14:00, each Job since finished and pruned (history limit 0).
func recordedByOtherReplica(t *testing.T, ctx context.Context, f *fixture, cronFactory informers.SharedInformerFactory) {
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
// before the deferred write. B records the runs and goes on; when the
// shard comes back hours later, A's first sync must not take its old
// status as the starting point (same UID, same generation) and start again
// the 14:00 run B started: a kept decision carries the hold of its shard
// (deferredStatus.hold, Controller.current). Two ways to be left deferred:
// a burst (the write waits behind the queue, and the queued sync finds the
// shard gone), and a write cut by the hold's lapse (the lease fence).
func TestDeferredStatusDoesNotOutliveAShardMove(t *testing.T) {
	for _, trigger := range []string{"burst", "write cut by the lapse"} {
		t.Run(trigger, func(t *testing.T) {
			ctx, f, c, cronFactory, set, i, key := shardHoldingReplica(t)

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
			recordedByOtherReplica(t, ctx, f, cronFactory)
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

// The same stale status, at the shutdown flush: the shard came back and
// the replica stops before syncing the CronJob. flushDeferred must not
// write A's 10:00 decision wholesale over B's newer status (it is no
// longer the newest decision, and A held no shard for it between), or the
// next holder finds lastScheduleTime 10:00 and no Jobs, and starts 14:00
// again.
func TestShutdownFlushWritesNoStaleDeferredStatus(t *testing.T) {
	ctx, f, c, cronFactory, set, i, key := shardHoldingReplica(t)
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
	recordedByOtherReplica(t, ctx, f, cronFactory)
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

// calledIn reports the names of the functions called inside the body of
// the top-level function fn of main.go.
func calledIn(t *testing.T, fn string) map[string]bool {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), "main.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	called := map[string]bool{}
	for _, d := range f.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok || fd.Name.Name != fn {
			continue
		}
		ast.Inspect(fd.Body, func(n ast.Node) bool {
			if c, ok := n.(*ast.CallExpr); ok {
				if id, ok := c.Fun.(*ast.Ident); ok {
					called[id.Name] = true
				}
			}
			return true
		})
	}
	if len(called) == 0 {
		t.Fatalf("no function %s in main.go", fn)
	}
	return called
}

// With -shards the controller must read Calendars as the unsharded one
// does: without WithCalendars, calendarsOf finds none, so every CronJob
// naming a Calendar would have every due run held (CalendarNotFound) and
// counted missed, never started.
func TestShardedControllerReadsCalendars(t *testing.T) {
	if !calledIn(t, "runTerm")["WithCalendars"] || !calledIn(t, "runShardedController")["WithCalendars"] {
		t.Error("both the unsharded controller (runTerm) and runShardedController must call WithCalendars")
	}
}

// Backfills need their controller under -shards too.
func TestShardedRunsBackfills(t *testing.T) {
	if !calledIn(t, "runShardedController")["NewBackfillController"] {
		t.Error("runShardedController does not start the Backfill controller")
	}
}

// A sharded replica syncs a CronJob only while it holds the CronJob's
// shard: not another replica's shard, and not its own once the hold lapsed
// unrenewed (when another replica may take the shard).
func TestShardedSyncHoldsTheShard(t *testing.T) {
	const shards = 4
	for _, tc := range []struct {
		name       string
		hold       bool
		lapse      bool
		wantJobs   int
		wantQueued int
	}{
		{name: "held", hold: true, wantJobs: 1, wantQueued: 1},
		{name: "another replica's", hold: false, wantJobs: 0},
		{name: "held but lapsed", hold: true, lapse: true, wantJobs: 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, ctx := ktesting.NewTestContext(t)
			cj := newCronJob()
			f := newFixture(t, at(time.Second))
			f.cronJob = cj
			set := shard.NewSet(shards, f.clock)
			if tc.hold {
				set.Acquire(shard.OfUID(cj.UID, shards), f.clock.Now().Add(2*time.Second))
			}
			c, _, _ := f.newController(ctx)
			c.shards = set
			if tc.lapse {
				f.clock.Step(2 * time.Second)
			}
			c.queue.Add(cache.MetaObjectToName(cj))
			c.processNextWorkItem(ctx)
			jobs, err := f.kubeclient.BatchV1().Jobs(cj.Namespace).List(ctx, metav1.ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if len(jobs.Items) != tc.wantJobs {
				t.Errorf("%d Jobs created, want %d", len(jobs.Items), tc.wantJobs)
			}
			// Held: queued again for its next run; not held: dropped.
			if got := c.queue.Len(); got > tc.wantQueued {
				t.Errorf("queue holds %d, want at most %d", got, tc.wantQueued)
			}
		})
	}
}

// A CronJob whose shard left the replica leaves its cache as deleted; that
// is no deletion: its Jobs are not noted as orphans, nothing is queued.
func TestShardLeavingIsNoDelete(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	cj := newCronJob()
	f := newFixture(t, at(time.Second))
	f.cronJob = cj
	c, _, _ := f.newController(ctx)
	c.shards = shard.NewSet(4, f.clock) // holds nothing
	c.deleteCronJob(cj)
	if c.queue.Len() != 0 {
		t.Errorf("a CronJob whose shard left was queued as deleted")
	}
}

func TestValidateSharding(t *testing.T) {
	for _, tc := range []struct {
		name    string
		o       options
		wantErr bool
	}{
		{"off", options{}, false},
		{"on", options{shards: 32, leaseDuration: 15 * time.Second, renewDeadline: 10 * time.Second}, false},
		{"negative", options{shards: -1}, true},
		{"with leader election", options{shards: 32, leaderElect: true, leaseDuration: 15 * time.Second, renewDeadline: 10 * time.Second}, true},
		{"renew deadline not shorter than the lease", options{shards: 32, leaseDuration: 10 * time.Second, renewDeadline: 10 * time.Second}, true},
	} {
		if err := validateLeaseFlags(tc.o); (err != nil) != tc.wantErr {
			t.Errorf("%s: validateLeaseFlags = %v, want error %v", tc.name, err, tc.wantErr)
		}
	}
}

// A CronJob of a shard just acquired, whose caches are still filling, is
// tried again soon, at a fixed short delay however often it found the
// shard not ready: not through the error rate limiter, whose backoff grew
// with each try and whose overall bucket, shared by every CronJob of the
// new shards, held them for seconds. A 300-CronJob run every 5 s lost runs
// when a replica joined: the shards moved at once, their CronJobs synced
// three seconds later (TestShardedReplicas, docs/sharding.md).
func TestShardNotReadyRetriesSoon(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	cj := newCronJob()
	f := newFixture(t, at(time.Second))
	f.cronJob = cj
	set := shard.NewSet(4, f.clock)
	// A filter that never lists: the shard's caches never fill.
	shard.NewFilter(set, &batchv1.Job{},
		func(context.Context, metav1.ListOptions) (runtime.Object, error) { return &batchv1.JobList{}, nil },
		func(context.Context, metav1.ListOptions) (watch.Interface, error) { return watch.NewFake(), nil }, "")
	set.Acquire(shard.OfUID(cj.UID, 4), f.clock.Now().Add(time.Hour))
	set.Commit()
	c, _, _ := f.newController(ctx)
	c.shards = set
	spy := &requeueSpy{TypedRateLimitingInterface: c.queue}
	c.queue = spy
	key := cache.MetaObjectToName(cj)
	for try := range 20 {
		spy.Add(key)
		c.processNextWorkItem(ctx)
		if spy.rateLimited != 0 {
			t.Fatalf("try %d: queued again through the rate limiter", try)
		}
		if len(spy.after) != try+1 || spy.after[try] > shardNotReadyRetry {
			t.Fatalf("try %d: queued again after %v, want at most %v", try, spy.after, shardNotReadyRetry)
		}
	}
	if n := spy.NumRequeues(key); n != 0 {
		t.Errorf("the key counts %d failures, want none: a shard filling is no failure", n)
	}
}

// otherShardUID gives j a UID whose shard is not the CronJob's.
func otherShardUID(t *testing.T, j *batchv1.Job, cronJobUID types.UID) {
	t.Helper()
	for i := 0; i < 100; i++ {
		j.UID = types.UID(fmt.Sprintf("uid-%s-%d", j.Name, i))
		if shard.OfUID(j.UID, replicaShards) != shard.OfUID(cronJobUID, replicaShards) {
			return
		}
	}
	t.Fatal("no UID of another shard")
}

// Sharded, the replica holding a CronJob must see the Jobs detached from it
// before its status recorded their runs: they are its Records (a restart
// with the record only must not start the run again), and its sync is the
// one that releases them. The Job filter keeps a Job by shard.KeyOf.
func TestShardedDetachedRecordIsInItsCronJobsShard(t *testing.T) {
	cj := newCronJob()
	rec := newJob(topOfHour, running, holdingRecord, detached)
	otherShardUID(t, rec, cj.UID)
	for name, obj := range map[string]metav1.Object{"API form": rec, "cache form": slim.NewJob(rec)} {
		if got, want := shard.OfUID(shard.KeyOf(obj), replicaShards), shard.OfUID(cj.UID, replicaShards); got != want {
			t.Errorf("%s: a detached record of CronJob %s is in shard %d, its CronJob in %d: the replica holding the CronJob never sees it", name, cj.UID, got, want)
		}
	}
}

// Sharded, a detached record deleted once the stored status records its run
// is released by the replica that holds its CronJob's shard: the record is
// in that shard (shard.KeyOf), so that replica sees it and nothing strands
// it in Terminating.
func TestShardedDeletedDetachedRecordIsReleased(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := newFixture(t, at(5*time.Second))
	f.cronJob = newCronJob(lastScheduled(topOfHour))
	rec := newJob(topOfHour, succeeded, holdingRecord, detached, func(j *batchv1.Job) {
		j.DeletionTimestamp = &metav1.Time{Time: at(4 * time.Second)}
	})
	otherShardUID(t, rec, f.cronJob.UID)
	f.jobs = []*batchv1.Job{rec}
	c, _, _ := f.newController(ctx)
	honourFinalizers(f.kubeclient, f.clock)
	set := shard.NewSet(replicaShards, f.clock)
	set.Acquire(shard.OfUID(shard.KeyOf(rec), replicaShards), f.clock.Now().Add(15*time.Second))
	c.shards = set
	if !c.owns(f.cronJob.UID) {
		t.Fatal("the replica seeing the record does not hold its CronJob's shard")
	}
	c.addJob(slim.NewJob(rec))
	drainSyncs(t, ctx, c)
	if liveJob(t, ctx, f, rec.Name) != nil {
		t.Errorf("writes %q: the deleted record's finalizer stays though the stored status records its run (stuck Terminating)",
			describe(f.kubeclient.Actions(), true))
	}
}

// Sharded, the replica holding the CronJob: a run-now Job "a" detached
// before any status recorded it is still the record of "a", and the Job
// of "b" after it already runs; b must not start a second time. The
// replica's Job cache holds what the shard filter keeps (shard.KeyOf).
func TestShardedDetachedRunNowJobKeepsTheChainOfTheRequestsAfterIt(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := newFixture(t, at(time.Minute))
	ja, jb := runNowAThenB(f)
	detached(ja) // by a user, before any status recorded "a"
	otherShardUID(t, ja, f.cronJob.UID)
	set := shard.NewSet(replicaShards, f.clock)
	set.Acquire(shard.OfUID(f.cronJob.UID, replicaShards), f.clock.Now().Add(15*time.Second))
	for _, j := range []*batchv1.Job{ja, jb} {
		if set.Owns(shard.KeyOf(j)) {
			f.jobs = append(f.jobs, j)
		} else {
			f.uncachedJobs = append(f.uncachedJobs, j)
		}
	}
	c, _, _ := f.newController(ctx)
	c.shards = set
	if _, err := c.syncHandler(ctx, cache.MetaObjectToName(f.cronJob)); err != nil {
		t.Fatal(err)
	}
	for _, a := range describe(f.kubeclient.Actions(), true) {
		if strings.HasPrefix(a, "create jobs") {
			t.Errorf("sharded: %s, but run-now b already has Job %s: b runs twice", a, jb.Name)
		}
	}
}

// Sharded, a replica that does not hold a CronJob's shard caches neither
// the CronJob nor its Jobs, but sees every CronJobRun. A CronJobRun of that
// CronJob, whose Job the holding replica made and named in its status, must
// be left alone there: not marked CronJobNotFound, its run not called
// Unknown (its Job gone), and not deleted by its TTL as finished.
func TestAReplicaNotHoldingTheCronJobLeavesItsCronJobRunsAlone(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := newFixture(t, at(-30*time.Minute))
	f.cronJob = newCronJob(lastScheduled(at(-time.Hour)))
	run := newRun("by-hand", func(r *cronv1.CronJobRun) { r.Spec.TTLSecondsAfterFinished = ptr.To[int32](0) })
	holder, _, _ := f.newRunController(ctx, run)
	key := cache.MetaObjectToName(f.cronJob)
	if _, err := holder.syncHandler(ctx, key); err != nil {
		t.Fatal(err)
	}
	started := f.storedRun(ctx, "by-hand")
	if started.Status.JobName == "" || started.Status.Outcome != cronv1.OutcomeRunning {
		t.Fatalf("the holding replica's CronJobRun status %+v, want its Job named and running", started.Status)
	}

	other, kubeFactory, cronFactory := f.restartRuns(ctx)
	set := shard.NewSet(replicaShards, f.clock)
	set.Acquire((shard.OfUID(f.cronJob.UID, replicaShards)+1)%replicaShards, f.clock.Now().Add(15*time.Second))
	other.shards = set
	// What its sharded informers hold: no CronJob, none of its Jobs.
	if err := kubeFactory.Batch().V1().Jobs().Informer().GetIndexer().Replace(nil, ""); err != nil {
		t.Fatal(err)
	}
	if err := cronFactory.Batch().V1().CronJobs().Informer().GetIndexer().Replace(nil, ""); err != nil {
		t.Fatal(err)
	}
	f.client.ClearActions()
	other.runChanged(started)
	drainSyncs(t, ctx, other)
	for _, a := range f.client.Actions() {
		if a.GetResource().Resource == "cronjobruns" && a.GetVerb() != "get" && a.GetVerb() != "list" && a.GetVerb() != "watch" {
			t.Errorf("the replica not holding the shard wrote %s %s/%s", a.GetVerb(), a.GetResource().Resource, a.GetSubresource())
		}
	}
	if st := f.storedRun(ctx, "by-hand").Status; st.Outcome != cronv1.OutcomeRunning {
		t.Errorf("CronJobRun outcome %q after the other replica's sync, want Running", st.Outcome)
	}
}

// Sharded, once the API server says a CronJob is gone, whichever replica
// syncs its key follows its CronJobRuns (the one that held the CronJob's
// shard sees its delete; one holding the run's shard may get no event at
// all), reading a run's Job from the API server when its cache lacks it
// (the Job is in the gone CronJob's shard), so a running Job is not called
// gone.
func TestShardedCronJobRunsOfAGoneCronJobAreFollowedWithTheirJobsReadLive(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := newFixture(t, at(-30*time.Minute))
	f.cronJob = newCronJob(lastScheduled(at(-time.Hour)))
	run := newRun("by-hand")
	holder, _, _ := f.newRunController(ctx, run)
	key := cache.MetaObjectToName(f.cronJob)
	if _, err := holder.syncHandler(ctx, key); err != nil {
		t.Fatal(err)
	}
	runShard := shard.OfUID(run.UID, replicaShards)
	for _, tc := range []struct {
		name  string
		shard int
	}{
		{"holding the run's shard", runShard},
		{"holding another shard", (runShard + 1) % replicaShards},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := f.storedRun(ctx, "by-hand")
			r.Status.Outcome = "" // so that following it is a write
			if _, err := f.client.BatchV1().CronJobRuns("default").UpdateStatus(ctx, r, metav1.UpdateOptions{}); err != nil {
				t.Fatal(err)
			}
			// restartRuns caches the CronJob: it is deleted after.
			if _, err := f.client.BatchV1().CronJobs("default").Create(ctx, f.cronJob.DeepCopy(), metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
				t.Fatal(err)
			}
			c, kubeFactory, cronFactory := f.restartRuns(ctx)
			set := shard.NewSet(replicaShards, f.clock)
			set.Acquire(tc.shard, f.clock.Now().Add(15*time.Second))
			c.shards = set
			// The CronJob is deleted; the Job, in its shard, is not cached.
			if err := f.client.BatchV1().CronJobs("default").Delete(ctx, "cj", metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
				t.Fatal(err)
			}
			if err := cronFactory.Batch().V1().CronJobs().Informer().GetIndexer().Replace(nil, ""); err != nil {
				t.Fatal(err)
			}
			if err := kubeFactory.Batch().V1().Jobs().Informer().GetIndexer().Replace(nil, ""); err != nil {
				t.Fatal(err)
			}
			f.client.ClearActions()
			c.runChanged(r)
			drainSyncs(t, ctx, c)
			wrote := slices.ContainsFunc(f.client.Actions(), func(a core.Action) bool {
				return a.GetResource().Resource == "cronjobruns" && a.GetVerb() == "update"
			})
			if !wrote {
				t.Errorf("the replica syncing the gone CronJob's key did not follow its CronJobRun")
			}
			if st := f.storedRun(ctx, "by-hand").Status; st.Outcome != cronv1.OutcomeRunning {
				t.Errorf("CronJobRun outcome %q, want Running: its Job still runs", st.Outcome)
			}
		})
	}
}

// Sharded, a CronJobRun of a CronJob deleted right as its Job finished
// (before a sync wrote the outcome into the CronJobRun's status): once the
// CronJob is gone the replica that syncs its key, the one that held its
// shard, must follow it (docs/runs.md), so its outcome is written and its
// Job, which the garbage collector deletes, loses its finalizer.
// Replica A holds the CronJob's shard (the CronJob and its Job are in its
// caches, and only the events it would get are given to it); replica B
// holds the CronJobRun's shard, and sees the CronJobRun change only when
// someone writes it. Nothing the deletion does reaches B.
func TestShardedCronJobRunOfACronJobDeletedAsItsJobFinishedIsFollowed(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := newFixture(t, at(-30*time.Minute))
	f.cronJob = newCronJob(lastScheduled(at(-time.Hour)))
	run := newRun("by-hand")
	cjShard, runShard := shard.OfUID(f.cronJob.UID, replicaShards), shard.OfUID(run.UID, replicaShards)
	if cjShard == runShard {
		t.Fatalf("the case needs the CronJob (shard %d) and the CronJobRun (shard %d) in different shards", cjShard, runShard)
	}
	holder, _, _ := f.newRunController(ctx, run)
	honourFinalizers(f.kubeclient, f.clock)
	key := cache.MetaObjectToName(f.cronJob)
	if _, err := holder.syncHandler(ctx, key); err != nil {
		t.Fatal(err)
	}
	name := job.RequestName("cj", run.UID)
	if st := f.storedRun(ctx, "by-hand").Status; st.JobName != name || st.Outcome != cronv1.OutcomeRunning {
		t.Fatalf("CronJobRun status %+v, want Job %s running", st, name)
	}

	// Replica A, holding the CronJob's shard; replica B, the CronJobRun's.
	a, aJobs, aCron := f.restartRuns(ctx)
	aSet := shard.NewSet(replicaShards, f.clock)
	aSet.Acquire(cjShard, f.clock.Now().Add(time.Hour))
	a.shards = aSet
	b, bJobs, bCron := f.restartRuns(ctx)
	bSet := shard.NewSet(replicaShards, f.clock)
	bSet.Acquire(runShard, f.clock.Now().Add(time.Hour))
	b.shards = bSet
	if err := bJobs.Batch().V1().Jobs().Informer().GetIndexer().Replace(nil, ""); err != nil {
		t.Fatal(err)
	}
	if err := bCron.Batch().V1().CronJobs().Informer().GetIndexer().Replace(nil, ""); err != nil {
		t.Fatal(err)
	}

	// The Job finishes; the CronJob is deleted before A syncs it, and the
	// garbage collector deletes the Job.
	f.clock.Step(time.Minute)
	before := liveJob(t, ctx, f, name)
	finishJob(t, ctx, f, aJobs, name)
	finished := liveJob(t, ctx, f, name)
	a.updateJob(slim.NewJob(before), slim.NewJob(finished))
	if err := f.client.BatchV1().CronJobs("default").Delete(ctx, "cj", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := aCron.Batch().V1().CronJobs().Informer().GetIndexer().Delete(mustSlimCronJob(t, f)); err != nil {
		t.Fatal(err)
	}
	a.deleteCronJob(f.cronJob)
	if err := f.kubeclient.BatchV1().Jobs("default").Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	deleting := liveJob(t, ctx, f, name)
	cacheJob(t, aJobs, deleting)
	a.updateJob(slim.NewJob(finished), slim.NewJob(deleting))

	// A retries its failed syncs (backoff); B syncs what its events queue.
	rv := f.storedRun(ctx, "by-hand").ResourceVersion
	var aErr error
	for range 5 {
		f.clock.Step(10 * time.Second)
		drainSyncs(t, ctx, a)
		_, aErr = a.syncHandler(ctx, key)
		drainSyncs(t, ctx, b)
		if r := f.storedRun(ctx, "by-hand"); r.ResourceVersion != rv {
			rv = r.ResourceVersion
			a.recacheRunsFor(t, ctx, f, aCron, r)
			b.recacheRunsFor(t, ctx, f, bCron, r)
		}
		if j := liveJob(t, ctx, f, name); j != nil {
			cacheJob(t, aJobs, j)
		}
	}
	if st := f.storedRun(ctx, "by-hand").Status; st.Outcome != cronv1.OutcomeSucceeded {
		t.Errorf("CronJobRun outcome %q after its CronJob was deleted, want Succeeded: no replica followed it", st.Outcome)
	}
	if j := liveJob(t, ctx, f, name); j != nil {
		t.Errorf("Job %s hangs in Terminating (finalizers %v); A's last sync: %v", name, j.Finalizers, aErr)
	}
}

// recacheRunsFor puts the API server's CronJobRuns into c's cache and
// gives c the event of r's change, as its informer would.
func (c *Controller) recacheRunsFor(t *testing.T, ctx context.Context, f *fixture, cronFactory informers.SharedInformerFactory, r *cronv1.CronJobRun) {
	t.Helper()
	f.recacheRuns(ctx, cronFactory)
	c.runChanged(r)
}
