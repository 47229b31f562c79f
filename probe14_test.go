package main

import (
	"context"
	goruntime "runtime"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"

	cronv1 "github.com/cronjob-controller/cronjob-controller/pkg/apis/batch/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	k8sfake "k8s.io/client-go/kubernetes/fake"
	core "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2/ktesting"

	"github.com/cronjob-controller/cronjob-controller/pkg/control"
	"github.com/cronjob-controller/cronjob-controller/pkg/job"
	"github.com/cronjob-controller/cronjob-controller/pkg/slim"
)

// drain runs the queued syncs (and those they queue) a few rounds.
func probe14Drain(t *testing.T, ctx context.Context, c *Controller) {
	t.Helper()
	for i := 0; i < 10 && c.queue.Len() > 0; i++ {
		key, _ := c.queue.Get()
		if _, err := c.syncHandler(ctx, key); err != nil {
			t.Logf("sync %v: %v", key, err)
		}
		c.queue.Done(key)
	}
}

// The controller is down while a CronJob is deleted (background
// propagation): the garbage collector deletes its Job, which stays in
// Terminating behind the run-record finalizer. The restarted controller's
// Job informer lists it (addJob of a Job already being deleted), and no
// CronJob is in its cache: nothing ever releases it.
func TestProbe14OrphanTerminatingAtStartupIsReleased(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := newFixture(t, at(time.Minute))
	j := newJob(at(0), succeeded, holdingRecord, func(j *batchv1.Job) {
		j.DeletionTimestamp = &metav1.Time{Time: at(30 * time.Second)}
	})
	f.jobs = []*batchv1.Job{j}
	c, _, _ := f.newController(ctx) // no CronJob: it was deleted while we were down
	honourFinalizers(f.kubeclient, f.clock)
	c.addJob(slim.NewJob(j)) // the informer's initial list
	probe14Drain(t, ctx, c)
	if live := liveJob(t, ctx, f, j.Name); live != nil {
		t.Errorf("the Job of a CronJob deleted while the controller was down hangs in Terminating: finalizers %v", live.Finalizers)
	}
}

// The controller is down while a CronJob is deleted with orphan
// propagation: the garbage collector strips the Jobs' controller
// references. After the restart a TTL (or a user) deletes such a Job:
// it holds the run-record finalizer and nothing releases it.
func TestProbe14OrphanedWhileDownThenDeletedIsReleased(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := newFixture(t, at(time.Minute))
	j := newJob(at(0), succeeded, holdingRecord, func(j *batchv1.Job) { j.OwnerReferences = nil })
	f.jobs = []*batchv1.Job{j}
	c, kubeFactory, _ := f.newController(ctx)
	honourFinalizers(f.kubeclient, f.clock)
	c.addJob(slim.NewJob(j))
	probe14Drain(t, ctx, c)
	if err := f.kubeclient.BatchV1().Jobs("default").Delete(ctx, j.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	deleting := liveJob(t, ctx, f, j.Name)
	if deleting == nil {
		t.Fatal("the Job went at once")
	}
	deleting.ResourceVersion = "2" // as the API server's delete would
	cacheJob(t, kubeFactory, deleting)
	c.updateJob(slim.NewJob(j), slim.NewJob(deleting))
	probe14Drain(t, ctx, c)
	if live := liveJob(t, ctx, f, j.Name); live != nil {
		t.Errorf("an orphaned Job deleted later hangs in Terminating: finalizers %v", live.Finalizers)
	}
}

// ReleaseFinalizer given a stale finalizer list (another controller
// reordered or added entries): it must remove ours and only ours.
func TestProbe14ReleaseWithMovedFinalizer(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct{ live, seen, want []string }{
		{live: []string{"a", job.RunRecordFinalizer, "b"}, seen: []string{job.RunRecordFinalizer}, want: []string{"a", "b"}},
		{live: []string{job.RunRecordFinalizer, "a"}, seen: []string{"a", job.RunRecordFinalizer}, want: []string{"a"}},
		{live: []string{"x", "y", "z", job.RunRecordFinalizer}, seen: []string{job.RunRecordFinalizer, "x"}, want: []string{"x", "y", "z"}},
		{live: []string{"a"}, seen: []string{job.RunRecordFinalizer}, want: []string{"a"}},
	} {
		j := newJob(at(0), running)
		j.Finalizers = tc.live
		client := k8sfake.NewClientset(j)
		if err := control.NewJobs(client).ReleaseFinalizer(ctx, "default", j.Name, j.UID, job.RunRecordFinalizer, tc.seen); err != nil {
			t.Errorf("live %v seen %v: %v", tc.live, tc.seen, err)
			continue
		}
		got, err := client.BatchV1().Jobs("default").Get(ctx, j.Name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got.Finalizers, tc.want) {
			t.Errorf("live %v seen %v: finalizers after release %v, want %v", tc.live, tc.seen, got.Finalizers, tc.want)
		}
	}
	// Another Job under the same name (new UID): untouched, no error.
	j := newJob(at(0), running, holdingRecord)
	client := k8sfake.NewClientset(j)
	if err := control.NewJobs(client).ReleaseFinalizer(ctx, "default", j.Name, "other-uid", job.RunRecordFinalizer, j.Finalizers); err != nil {
		t.Errorf("another UID: %v", err)
	}
	if got, _ := client.BatchV1().Jobs("default").Get(ctx, j.Name, metav1.GetOptions{}); !job.HoldsRunRecord(got) {
		t.Error("released the finalizer of another Job with the same name")
	}
}

// The README claim: three writes per firing (create, status, release),
// also when the status write is deferred behind a busy queue.
func TestProbe14ThreeWritesPerFiringDeferred(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := newFixture(t, at(time.Second))
	f.cronJob = newCronJob()
	c, kubeFactory, cronFactory := f.newController(ctx)
	key := cache.MetaObjectToName(f.cronJob)
	other := cache.ObjectName{Namespace: "default", Name: "other"}
	c.queue.Add(other) // something waits: the write is deferred
	if _, err := c.syncHandler(ctx, key); err != nil {
		t.Fatal(err)
	}
	// the informers catch up with the created Job
	for _, a := range f.kubeclient.Actions() {
		_ = a
	}
	if j, err := f.kubeclient.BatchV1().Jobs("default").Get(ctx, jobName(topOfHour), metav1.GetOptions{}); err == nil {
		cacheJob(t, kubeFactory, j)
	}
	_ = cronFactory
	for c.queue.Len() > 0 {
		k, _ := c.queue.Get()
		c.queue.Done(k)
		c.queue.Forget(k)
	}
	if _, err := c.syncHandler(ctx, key); err != nil {
		t.Fatal(err)
	}
	got := describe(append(f.kubeclient.Actions(), f.client.Actions()...), true)
	if len(got) != 3 {
		t.Errorf("writes %q, want 3 (create, release, status)", got)
	}
}

// The CronJob is deleted with foreground propagation before the status
// records its last run: the garbage collector deletes the Job (it blocks
// its owner) and waits for it. The CronJob's sync must release it, or the
// CronJob and the Job both hang.
func TestProbe14ForegroundDeleteReleasesUnrecordedJob(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := newFixture(t, at(time.Minute))
	f.cronJob = newCronJob(lastScheduled(at(-time.Hour)), func(cj *cronv1.CronJob) {
		cj.DeletionTimestamp = &metav1.Time{Time: at(30 * time.Second)}
		cj.Finalizers = []string{metav1.FinalizerDeleteDependents}
	})
	j := newJob(at(0), running, func(j *batchv1.Job) {
		j.Finalizers = []string{metav1.FinalizerDeleteDependents, job.RunRecordFinalizer}
		j.DeletionTimestamp = &metav1.Time{Time: at(40 * time.Second)}
	})
	f.jobs = []*batchv1.Job{j}
	c, _, _ := f.newController(ctx)
	honourFinalizers(f.kubeclient, f.clock)
	if _, err := c.syncHandler(ctx, cache.MetaObjectToName(f.cronJob)); err != nil {
		t.Fatal(err)
	}
	live := liveJob(t, ctx, f, j.Name)
	if live == nil || !slices.Equal(live.Finalizers, []string{metav1.FinalizerDeleteDependents}) {
		t.Errorf("Job after the sync of its CronJob being deleted: %+v, want only foregroundDeletion left", live)
	}
}

// Run-now "a" handled in a sync whose status write is deferred; the user
// sets run-now to "b" before it is written; the next sync (same
// generation: the deferred status is taken) starts "b" under
// ManualName("a", "b"), deferred again. Before any status is written, a
// sync must not release either Job; and after a crash (the deferred status
// lost), the restarted controller must not start "b" again.
func TestProbe14RunNowChangedWhileDeferredThenCrash(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := newFixture(t, at(time.Minute))
	f.cronJob = newCronJob(lastScheduled(at(0)), func(cj *cronv1.CronJob) {
		cj.Annotations = map[string]string{cronv1.RunNowAnnotation: "a"}
	})
	c, kubeFactory, cronFactory := f.newController(ctx)
	honourFinalizers(f.kubeclient, f.clock)
	key := cache.MetaObjectToName(f.cronJob)
	other := cache.ObjectName{Namespace: "default", Name: "other"}
	c.queue.Add(other) // a burst: status writes wait

	if _, err := c.syncHandler(ctx, key); err != nil {
		t.Fatal(err)
	}
	edited := f.cronJob.DeepCopy()
	edited.Annotations[cronv1.RunNowAnnotation] = "b"
	edited.ResourceVersion = "5"
	if _, err := f.client.BatchV1().CronJobs("default").Update(ctx, edited, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	cacheCronJob(t, cronFactory, edited)
	for _, n := range []string{job.ManualName("cj", "cj-uid", "", "a", 1)} {
		if j := liveJob(t, ctx, f, n); j != nil {
			cacheJob(t, kubeFactory, j)
		}
	}
	if _, err := c.syncHandler(ctx, key); err != nil {
		t.Fatal(err)
	}
	jb := job.ManualName("cj", "cj-uid", "a", "b", 2)
	if liveJob(t, ctx, f, jb) == nil {
		t.Fatalf("no Job %s for run-now b", jb)
	}
	if f.writtenStatus() != nil {
		t.Fatalf("a status was written: the probe wants it deferred")
	}
	for _, a := range describe(f.kubeclient.Actions(), true) {
		if strings.HasPrefix(a, "patch jobs") {
			t.Errorf("%s while no status records its run (written lastRunNow \"\")", a)
		}
	}

	// Crash: the deferred status is lost; a new controller starts on the
	// stored state (lastRunNow "", run-now "b").
	g := newFixture(t, at(2*time.Minute))
	g.cronJob = edited
	list, _ := f.kubeclient.BatchV1().Jobs("default").List(ctx, metav1.ListOptions{})
	for i := range list.Items {
		g.jobs = append(g.jobs, &list.Items[i])
	}
	c2, _, _ := g.newController(ctx)
	if _, err := c2.syncHandler(ctx, key); err != nil {
		t.Fatal(err)
	}
	for _, a := range describe(g.kubeclient.Actions(), true) {
		if strings.HasPrefix(a, "create jobs") {
			t.Errorf("after the restart: %s, but run-now b already has Job %s: b runs twice", a, jb)
		}
	}
}

// Failover to a warm standby whose CronJob watch lags (hung): the old
// leader created the 10:00 Job, wrote lastScheduleTime 10:00 and released
// the Job; the Job finished and its TTL deleted it. The standby's caches
// still show lastScheduleTime 09:00 and never saw the Job. The barrier Run
// passes before its first sync (catchUpWithAPIServer) reads the CronJobs
// live, so the 10:00 run is not started again.
func TestProbe14FailoverToStandbyWithLaggingCache(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := newFixture(t, at(20*time.Second))
	f.cronJob = newCronJob(lastScheduled(at(0))) // as the API server holds it
	f.cronJob.ResourceVersion = "20"
	c, _, cronFactory := f.newController(ctx)
	stale := newCronJob(lastScheduled(at(-time.Hour)))
	stale.ResourceVersion = "10"
	cacheCronJob(t, cronFactory, stale)                 // the standby's lagging cache
	if err := c.catchUpWithAPIServer(ctx); err != nil { // as Run does before its workers start
		t.Fatal(err)
	}
	if _, err := c.syncHandler(ctx, cache.MetaObjectToName(f.cronJob)); err != nil {
		t.Fatal(err)
	}
	for _, a := range describe(f.kubeclient.Actions(), true) {
		if a == "create jobs default/"+jobName(at(0)) {
			t.Errorf("%s: the 10:00 run, recorded on the API server, runs twice after failover", a)
		}
	}
}

// A Job being deleted whose scheduled time is still to come (made by a
// replica whose clock was ahead) cannot be recorded before that time, yet
// its CronJob is looked at again every second until then.
func TestProbe14FutureJobBeingDeletedDoesNotSpin(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := newFixture(t, at(time.Second))
	f.cronJob = newCronJob(lastScheduled(at(0)))
	future := newJob(at(time.Hour), succeeded, holdingRecord, func(j *batchv1.Job) {
		j.DeletionTimestamp = &metav1.Time{Time: at(time.Second)}
	})
	f.jobs = []*batchv1.Job{future}
	c, _, _ := f.newController(ctx)
	honourFinalizers(f.kubeclient, f.clock)
	var syncsRun int
	for ; syncsRun < 3600; syncsRun++ {
		d, err := c.syncHandler(ctx, cache.MetaObjectToName(f.cronJob))
		if err != nil {
			t.Fatal(err)
		}
		if d > time.Minute || d <= 0 {
			break
		}
		f.clock.Step(d)
		if !f.clock.Now().Before(at(time.Hour)) {
			break
		}
	}
	if syncsRun > 60 {
		t.Errorf("%d syncs (requeue every second) before the future Job's time: a release spin", syncsRun)
	}
}

// README/docs: "Per firing, three API writes: the Job create, the status
// write, and the finalizer release". Counted over a firing's whole life:
// the Job's completion makes a second status write (as in the built-in
// controller), so a firing costs four writes against the built-in's three.
func TestProbe14WritesPerFiringWholeLife(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := newFixture(t, at(time.Second))
	f.cronJob = newCronJob(lastScheduled(at(-time.Hour)))
	c, kubeFactory, cronFactory := f.newController(ctx)
	key := cache.MetaObjectToName(f.cronJob)
	if _, err := c.syncHandler(ctx, key); err != nil {
		t.Fatal(err)
	}
	j, err := f.kubeclient.BatchV1().Jobs("default").Get(ctx, jobName(topOfHour), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	done := newJob(topOfHour, succeeded)
	j.Status = done.Status
	j.ResourceVersion = "7"
	cacheJob(t, kubeFactory, j)
	if w := f.writtenStatus(); w != nil {
		w = w.DeepCopy()
		w.ResourceVersion = "8"
		cacheCronJob(t, cronFactory, w)
	}
	f.clock.Step(10 * time.Second)
	if _, err := c.syncHandler(ctx, key); err != nil {
		t.Fatal(err)
	}
	got := describe(append(f.kubeclient.Actions(), f.client.Actions()...), true)
	t.Logf("writes over the firing: %q", got)
	// The start costs three (create, release, status); the completion's
	// status write, which the built-in makes too, is the fourth.
	if len(got) != 4 {
		t.Errorf("%d writes over a firing's life, documented as 4: %q", len(got), got)
	}
}

// The takeover barrier holds the first sync back until a live list of the
// CronJobs succeeds, trying again with a growing pause (on the controller's
// clock) rather than giving up or deciding from the cache.
func TestTakeoverBarrierRetriesTheList(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := newFixture(t, at(20*time.Second))
	f.cronJob = newCronJob(lastScheduled(at(0)))
	f.cronJob.ResourceVersion = "20"
	c, _, cronFactory := f.newController(ctx)
	stale := newCronJob(lastScheduled(at(-time.Hour)))
	stale.ResourceVersion = "10"
	cacheCronJob(t, cronFactory, stale)
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
