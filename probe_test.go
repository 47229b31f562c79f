package main

// Adversarial probes of the controller: restarts on the same API state,
// deferred statuses, failing writes, upgrades. See the review report.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	kubeinformers "k8s.io/client-go/informers"
	core "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2/ktesting"
	"k8s.io/utils/ptr"

	cronv1 "github.com/cronjob-controller/cronjob-controller/pkg/apis/batch/v1"
	informers "github.com/cronjob-controller/cronjob-controller/pkg/generated/informers/externalversions"
	"github.com/cronjob-controller/cronjob-controller/pkg/job"
)

// restart builds a new Controller on the fixture's API state, as a new
// process (or the next leader) would: empty own-writes, no deferred
// statuses, caches listed from the API server.
func restart(t *testing.T, ctx context.Context, f *fixture) (*Controller, kubeinformers.SharedInformerFactory, informers.SharedInformerFactory) {
	t.Helper()
	kubeFactory := kubeinformers.NewSharedInformerFactory(f.kubeclient, 0)
	cronFactory := informers.NewSharedInformerFactory(f.client, 0)
	c, err := NewController(ctx, f.kubeclient, f.client,
		kubeFactory.Batch().V1().Jobs(), cronFactory.Batch().V1().CronJobs(), f.clock,
		WithEventRecorder(f.recorder))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.queue.ShutDown)
	jobs, err := f.kubeclient.BatchV1().Jobs("").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range jobs.Items {
		cacheJob(t, kubeFactory, &jobs.Items[i])
	}
	cj, err := f.client.BatchV1().CronJobs("default").Get(ctx, "cj", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cacheCronJob(t, cronFactory, cj)
	f.kubeclient.ClearActions()
	f.client.ClearActions()
	return c, kubeFactory, cronFactory
}

// finishJob marks a Job on the API server (and in a cache) complete.
func finishJob(t *testing.T, ctx context.Context, f *fixture, kubeFactory kubeinformers.SharedInformerFactory, name string) {
	t.Helper()
	j, err := f.kubeclient.BatchV1().Jobs("default").Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	now := metav1.NewTime(f.clock.Now())
	j.Status.StartTime = &now
	j.Status.CompletionTime = &now
	j.Status.Conditions = []batchv1.JobCondition{{Type: batchv1.JobComplete, Status: corev1.ConditionTrue}}
	if _, err := f.kubeclient.BatchV1().Jobs("default").UpdateStatus(ctx, j, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if kubeFactory != nil {
		cacheJob(t, kubeFactory, j)
	}
}

// createsOf counts, across all of a fixture's recorded actions so far, the
// successful-or-not create requests per Job name.
type createLog map[string]int

func (l createLog) add(f *fixture) {
	for _, n := range created(f) {
		l[n]++
	}
}

// Under Forbid, a run-now whose create keeps failing (a webhook's 403, a 500)
// is no active Job: the scheduled 10:00 run must still start (issue 13, case
// 6, which the fix covers under Allow only).
func TestProbeForbidFailingRunNowBlocksSchedule(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := newFixture(t, at(5*time.Second))
	f.cronJob = newCronJob(lastScheduled(at(-time.Hour)), policy(cronv1.ForbidConcurrent), func(cj *cronv1.CronJob) {
		cj.Annotations = map[string]string{cronv1.RunNowAnnotation: "now-please"}
	})
	c, _, cronFactory := f.newController(ctx)
	manual := job.ManualName("cj", "cj-uid", "", "now-please", 1)
	f.kubeclient.PrependReactor("create", "jobs", func(a core.Action) (bool, runtime.Object, error) {
		if a.(core.CreateAction).GetObject().(metav1.Object).GetName() == manual {
			return true, nil, apierrors.NewInternalError(errors.New("admission webhook unavailable"))
		}
		return false, nil, nil
	})
	key := cache.MetaObjectToName(f.cronJob)
	var cj *cronv1.CronJob
	for i := range 5 { // the retries of the next few seconds
		f.client.ClearActions()
		if _, err := c.syncHandler(ctx, key); err == nil {
			t.Fatal("the failing run-now was not reported")
		}
		if w := f.writtenStatus(); w != nil {
			cacheCronJob(t, cronFactory, w)
			cj = w
		}
		f.clock.Step(time.Duration(i+1) * time.Second)
	}
	if got := created(f); !slices.Contains(got, jobName(topOfHour)) {
		t.Errorf("Forbid: while the run-now create fails, the scheduled 10:00 run never starts (creates tried %q); LastRunStarted %+v",
			got, cj.Status.Conditions)
	}
}

// A restart between a create and its (deferred) status write, with the Job
// gone meanwhile (ttlSecondsAfterFinished: 0 on a quick Job, or a hand
// delete): the next leader must not run the same scheduled time again.
func TestProbeRestartAfterUnrecordedJobWasDeleted(t *testing.T) {

	_, ctx := ktesting.NewTestContext(t)
	f := newFixture(t, at(time.Second))
	f.cronJob = newCronJob(lastScheduled(at(-time.Hour)), func(cj *cronv1.CronJob) {
		cj.Spec.JobTemplate.Spec.TTLSecondsAfterFinished = ptr.To[int32](0)
	})
	c, _, _ := f.newController(ctx)
	honourFinalizers(f.kubeclient, f.clock)
	log := createLog{}
	// Other CronJobs wait: the status write is deferred behind them.
	c.queue.Add(cache.ObjectName{Namespace: "default", Name: "other"})
	if _, err := c.syncHandler(ctx, cache.MetaObjectToName(f.cronJob)); err != nil {
		t.Fatal(err)
	}
	log.add(f)
	if f.writtenStatus() != nil {
		t.Fatal("status written at once; the case tests nothing")
	}
	// The process dies (OOM, node drain, lost lease) before the deferred
	// write. The Job finishes in a second and the TTL controller deletes it.
	f.clock.Step(2 * time.Second)
	finishJob(t, ctx, f, nil, jobName(topOfHour))
	if err := f.kubeclient.BatchV1().Jobs("default").Delete(ctx, jobName(topOfHour), metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	f.clock.Step(10 * time.Second)
	c2, _, _ := restart(t, ctx, f)
	if _, err := c2.syncHandler(ctx, cache.MetaObjectToName(f.cronJob)); err != nil {
		t.Fatal(err)
	}
	log.add(f)
	if log[jobName(topOfHour)] > 1 {
		t.Errorf("the 10:00 run was started twice (%d creates of %s) across a restart", log[jobName(topOfHour)], jobName(topOfHour))
	}
	// The status now records the run: the Job, deleted long ago, goes.
	if j := liveJob(t, ctx, f, jobName(topOfHour)); j != nil {
		t.Errorf("the Job still hangs once its run is recorded: %+v", j.ObjectMeta)
	}
}

// The controller's own history pruning deletes the only record of a run
// (its Job) before the status that records the run is stored: a failed
// status write, then a failover, and the run starts again.
func TestProbePruneBeforeStatusIsStored(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := newFixture(t, at(time.Second))
	f.cronJob = newCronJob(lastScheduled(at(-time.Hour)), func(cj *cronv1.CronJob) {
		cj.Spec.SuccessfulJobsHistoryLimit = ptr.To[int32](0)
	})
	c, kubeFactory, _ := f.newController(ctx)
	log := createLog{}
	statusFails := true
	f.client.PrependReactor("update", "cronjobs", func(a core.Action) (bool, runtime.Object, error) {
		if statusFails && a.GetSubresource() == "status" {
			return true, nil, apierrors.NewInternalError(errors.New("etcd leader election"))
		}
		return false, nil, nil
	})
	key := cache.MetaObjectToName(f.cronJob)
	if _, err := c.syncHandler(ctx, key); err == nil {
		t.Fatal("the failed status write was not reported")
	}
	log.add(f)
	if !slices.Equal(created(f), []string{jobName(topOfHour)}) {
		t.Fatalf("first sync created %q", created(f))
	}
	// The Job is quick; the retry (status still failing) must not prune it
	// while no stored status records its run.
	f.clock.Step(3 * time.Second)
	finishJob(t, ctx, f, kubeFactory, jobName(topOfHour))
	f.kubeclient.ClearActions()
	if _, err := c.syncHandler(ctx, key); err == nil {
		t.Fatal("the failed status write was not reported")
	}
	if got := describe(f.kubeclient.Actions(), true); slices.Contains(got, "delete jobs default/"+jobName(topOfHour)) {
		t.Errorf("the retry pruned the Job before a stored status recorded its run: %q", got)
	}
	// Leadership moves (the lease expires while the API server is sick).
	statusFails = false
	f.clock.Step(20 * time.Second)
	c2, _, _ := restart(t, ctx, f)
	if _, err := c2.syncHandler(ctx, key); err != nil {
		t.Fatal(err)
	}
	log.add(f)
	if log[jobName(topOfHour)] > 1 {
		t.Errorf("the 10:00 run was started twice (%d creates): the controller deleted its Job before any stored status recorded it", log[jobName(topOfHour)])
	}
}

// A CronJob whose status the previous version (72e6024) wrote: it saw an
// edit to */5 at 09:30 and recorded resolvedSchedule and scheduleChangeTime.
// The upgraded controller must not start 09:30 (or earlier) runs.
func TestProbeUpgradeSurpriseRun(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := newFixture(t, at(-29*time.Minute)) // 09:31
	f.cronJob = newCronJob(withSchedule("*/5 * * * *"), lastScheduled(at(-time.Hour)), inForce("*/5 * * * *", "UTC"), func(cj *cronv1.CronJob) {
		cj.Status.ScheduleChangeTime = &metav1.Time{Time: at(-30 * time.Minute)}
		cj.Status.NextScheduleTime = &metav1.Time{Time: at(-25 * time.Minute)}
	})
	c, _, _ := f.newController(ctx)
	if _, err := c.syncHandler(ctx, cache.MetaObjectToName(f.cronJob)); err != nil {
		t.Fatal(err)
	}
	if got := created(f); len(got) != 0 {
		t.Errorf("after the upgrade the controller started %q; the old one had next run 09:35", got)
	}
}

// ---- Probes that are expected to hold ----

// catchUpPolicy All, status deferred, process restarts after the creates:
// the next leader starts nothing twice and loses nothing.
func TestProbeRestartMidCatchUp(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := newFixture(t, at(5*time.Second))
	f.cronJob = newCronJob(lastScheduled(at(-4*time.Hour)), catchUp(cronv1.CatchUpAll, nil))
	c, _, _ := f.newController(ctx)
	log := createLog{}
	fail := jobName(at(-time.Hour))
	f.kubeclient.PrependReactor("create", "jobs", func(a core.Action) (bool, runtime.Object, error) {
		if a.(core.CreateAction).GetObject().(metav1.Object).GetName() == fail {
			return true, nil, apierrors.NewServiceUnavailable("try later")
		}
		return false, nil, nil
	})
	c.queue.Add(cache.ObjectName{Namespace: "default", Name: "other"})
	_, err := c.syncHandler(ctx, cache.MetaObjectToName(f.cronJob))
	if err == nil {
		t.Fatal("the failed create was not reported")
	}
	log.add(f)
	if want := []string{jobName(at(-3 * time.Hour)), jobName(at(-2 * time.Hour)), fail}; !slices.Equal(created(f), want) {
		t.Errorf("first sync tried %q, want %q (stop at the failure)", created(f), want)
	}
	fail = ""
	c2, _, _ := restart(t, ctx, f)
	if _, err := c2.syncHandler(ctx, cache.MetaObjectToName(f.cronJob)); err != nil {
		t.Fatal(err)
	}
	log.add(f)
	for _, h := range []time.Duration{-3, -2, -1, 0} {
		if n := log[jobName(at(h*time.Hour))]; n != 1 && !(h == -1 && n == 2) {
			t.Errorf("%s: %d creates", jobName(at(h*time.Hour)), n)
		}
	}
	if got, _ := f.client.BatchV1().CronJobs("default").Get(ctx, "cj", metav1.GetOptions{}); got.Status.LastScheduleTime == nil || !got.Status.LastScheduleTime.Time.Equal(topOfHour) || len(got.Status.MissedRuns) != 0 {
		t.Errorf("status after restart %+v", got.Status)
	}
}

// A long run-now value survives a restart: hashed once, never run twice.
func TestProbeLongRunNowAcrossRestart(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := newFixture(t, at(-30*time.Minute))
	value := strings.Repeat("x", 500)
	f.cronJob = newCronJob(func(cj *cronv1.CronJob) {
		cj.Annotations = map[string]string{cronv1.RunNowAnnotation: value}
		cj.Spec.SuccessfulJobsHistoryLimit = ptr.To[int32](0)
	})
	c, kubeFactory, cronFactory := f.newController(ctx)
	syncs(t, ctx, f, c, cronFactory)
	log := createLog{}
	log.add(f)
	f.clock.Step(time.Minute)
	finishJob(t, ctx, f, kubeFactory, job.ManualName("cj", "cj-uid", "", value, 1))
	syncs(t, ctx, f, c, cronFactory) // prunes it
	c2, _, _ := restart(t, ctx, f)
	if _, err := c2.syncHandler(ctx, cache.MetaObjectToName(f.cronJob)); err != nil {
		t.Fatal(err)
	}
	log.add(f)
	if log[job.ManualName("cj", "cj-uid", "", value, 1)] != 1 {
		t.Errorf("run-now creates %v", log)
	}
}

// Replace with the status deferred, then a restart before the write: the
// replaced Job stays deleted, the new one is recorded, nothing twice.
func TestProbeReplaceDeferredThenRestart(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	prev := at(-time.Hour)
	running9 := newJob(prev, running)
	f := newFixture(t, at(5*time.Second))
	f.cronJob = newCronJob(lastScheduled(prev), activeJobs(running9), policy(cronv1.ReplaceConcurrent))
	f.jobs = []*batchv1.Job{running9}
	c, _, _ := f.newController(ctx)
	log := createLog{}
	c.queue.Add(cache.ObjectName{Namespace: "default", Name: "other"})
	if _, err := c.syncHandler(ctx, cache.MetaObjectToName(f.cronJob)); err != nil {
		t.Fatal(err)
	}
	log.add(f)
	c2, _, _ := restart(t, ctx, f)
	if _, err := c2.syncHandler(ctx, cache.MetaObjectToName(f.cronJob)); err != nil {
		t.Fatal(err)
	}
	log.add(f)
	got, _ := f.client.BatchV1().CronJobs("default").Get(ctx, "cj", metav1.GetOptions{})
	if log[jobName(topOfHour)] != 1 || len(got.Status.Active) != 1 || got.Status.Active[0].Name != jobName(topOfHour) || !got.Status.LastScheduleTime.Time.Equal(topOfHour) {
		t.Errorf("creates %v, status %+v", log, got.Status)
	}
}

// The informers stall (a hung watch, which client-go only notices at its
// 5-10 minute watch timeout). The controller's own writes stand in for the
// cache for ownWritesTTL (1 minute) only; after that it decides from a cache
// older than its own status write. Under catchUpPolicy All, a run whose Job
// has since gone (ttlSecondsAfterFinished) is started again.
func TestProbeStaleCacheAfterOwnWritesExpire(t *testing.T) {

	_, ctx := ktesting.NewTestContext(t)
	f := newFixture(t, at(5*time.Second))
	f.cronJob = newCronJob(withSchedule("*/10 * * * *"), lastScheduled(at(-10*time.Minute)), catchUp(cronv1.CatchUpAll, nil), func(cj *cronv1.CronJob) {
		cj.ResourceVersion = "1"
		cj.Spec.JobTemplate.Spec.TTLSecondsAfterFinished = ptr.To[int32](0)
	})
	c, _, _ := f.newController(ctx)
	rv := 1
	f.client.PrependReactor("update", "cronjobs", func(a core.Action) (bool, runtime.Object, error) {
		rv++
		a.(core.UpdateAction).GetObject().(metav1.Object).SetResourceVersion(itoa(rv))
		return false, nil, nil
	})
	key := cache.MetaObjectToName(f.cronJob)
	log := createLog{}
	if _, err := c.syncHandler(ctx, key); err != nil {
		t.Fatal(err)
	}
	log.add(f)
	if w := f.writtenStatus(); w == nil || !w.Status.LastScheduleTime.Time.Equal(topOfHour) {
		t.Fatalf("first sync wrote %+v", w)
	}
	// The 10:00 Job finishes and the TTL controller deletes it; the caches
	// (never fed in this test) still show the CronJob as it was at 09:59.
	f.clock.Step(30 * time.Second)
	finishJob(t, ctx, f, nil, jobName(topOfHour))
	if err := f.kubeclient.BatchV1().Jobs("default").Delete(ctx, jobName(topOfHour), metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	// The 10:10 wake-up, informers still behind.
	f.clock.SetTime(at(10*time.Minute + time.Second))
	f.kubeclient.ClearActions()
	c.syncHandler(ctx, key) //nolint:errcheck // a conflict would be fine here; a second 10:00 Job is not
	log.add(f)
	if log[jobName(topOfHour)] > 1 {
		t.Errorf("the 10:00 run started twice (creates %v): the sync trusted a cache older than its own status write", log)
	}
}

func itoa(i int) string { return fmt.Sprint(i) }

// Forbid, status deferred behind the queue, caches behind: the next sync
// still sees its own Job active and holds 11:00 back; after a restart the
// Job is adopted and holds it back too. Nothing twice.
func TestProbeForbidDeferredCacheLag(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := newFixture(t, at(5*time.Second))
	f.cronJob = newCronJob(lastScheduled(at(-time.Hour)), policy(cronv1.ForbidConcurrent))
	c, _, _ := f.newController(ctx)
	key := cache.MetaObjectToName(f.cronJob)
	log := createLog{}
	c.queue.Add(cache.ObjectName{Namespace: "default", Name: "other"})
	if _, err := c.syncHandler(ctx, key); err != nil {
		t.Fatal(err)
	}
	log.add(f)
	f.kubeclient.ClearActions()
	f.clock.SetTime(at(time.Hour + time.Second))
	if _, err := c.syncHandler(ctx, key); err != nil {
		t.Fatal(err)
	}
	log.add(f)
	c2, _, _ := restart(t, ctx, f)
	f.clock.Step(time.Second)
	if _, err := c2.syncHandler(ctx, key); err != nil {
		t.Fatal(err)
	}
	log.add(f)
	if len(log) != 1 || log[jobName(topOfHour)] != 1 {
		t.Errorf("creates %v, want only the 10:00 run (11:00 held back by Forbid)", log)
	}
}
