package main

// Tests of restarts, failovers and upgrades on the same API state: the
// next process starts every due run once, never twice.

import (
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
)

// A restart between a create and its (deferred) status write, with the Job
// gone meanwhile (ttlSecondsAfterFinished: 0 on a quick Job, or a hand
// delete): the next leader must not run the same scheduled time again.
func TestRestartAfterUnrecordedJobWasDeletedRunsOnce(t *testing.T) {

	_, ctx := ktesting.NewTestContext(t)
	f := newFixture(t, at(time.Second))
	f.cronJob = newCronJob(lastScheduled(at(-time.Hour)), func(cj *cronv1.CronJob) {
		cj.Spec.JobTemplate.Spec.TTLSecondsAfterFinished = ptr.To[int32](0)
	})
	c, _, _ := f.newController(ctx)
	honourFinalizers(f.kubeclient, f.clock)
	log := createLog{}
	// Other CronJobs wait: the status write is deferred behind them.
	syncInABurst(t, ctx, c, cache.MetaObjectToName(f.cronJob))
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

// The controller's own history pruning must not delete the only record of
// a run (its Job) before a stored status records the run: after a failed
// status write and then a failover, the next leader would start the run
// again.
func TestHistoryKeptUntilAStoredStatusRecordsTheRun(t *testing.T) {
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

// A CronJob whose status an earlier version of the controller wrote: it
// saw an edit to */5 at 09:30 and recorded resolvedSchedule and
// scheduleChangeTime. The upgraded controller must not start 09:30 (or
// earlier) runs.
func TestUpgradeKeepsTheRecordedScheduleEdit(t *testing.T) {
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

// catchUpPolicy All, status deferred, process restarts after the creates:
// the next leader starts nothing twice and loses nothing.
func TestRestartMidCatchUpStartsEachRunOnce(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := newFixture(t, at(5*time.Second))
	f.cronJob = newCronJob(lastScheduled(at(-4*time.Hour)), catchUp(cronv1.CatchUpAll, nil))
	c, _, _ := f.newController(ctx)
	log := createLog{}
	fail := jobName(at(-time.Hour))
	failJobCreates(f, func(name string) error {
		if name == fail {
			return apierrors.NewServiceUnavailable("try later")
		}
		return nil
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

// Replace with the status deferred, then a restart before the write: the
// replaced Job stays deleted, the new one is recorded, nothing twice.
func TestReplaceWithDeferredStatusRunsOnceAcrossRestart(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := newFixture(t, at(5*time.Second))
	withRunningJob(f, cronv1.ReplaceConcurrent)
	c, _, _ := f.newController(ctx)
	log := createLog{}
	syncInABurst(t, ctx, c, cache.MetaObjectToName(f.cronJob))
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

// Forbid. The 10:00 run starts and runs long; its status write is refused
// and the controller crashes before retrying it. The next leader's Job
// cache lacks the 10:00 Job (a hung watch, past the own-writes window), as
// in TestMaxRunsCountsARunWhoseJobTheNextLeadersCacheLacks. At 11:00 it
// settles 10:00 as not run and starts 11:00 beside the running 10:00 Job:
// a run Forbid forbids. (notRun's premise, that without maxRuns or an
// awaited trial "a run left out costs only a count of missed runs", does
// not hold under Forbid.)
func TestForbidStartsNoRunBesideALostRunWhoseJobTheNextLeadersCacheLacks(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := newFixture(t, at(5*time.Second))
	f.cronJob = newCronJob(lastScheduled(at(-time.Hour)), policy(cronv1.ForbidConcurrent))
	c, _, _ := f.newController(ctx)
	key := cache.MetaObjectToName(f.cronJob)
	ran := syncLosingStatus(t, ctx, f, c, key, "the 10:00 sync", jobName(topOfHour))

	f.clock.SetTime(at(time.Hour + 5*time.Second))
	c, kubeFactory, _ := restart(t, ctx, f)
	uncacheJob(t, kubeFactory, ran)
	c.syncHandler(ctx, key) //nolint:errcheck // what matters is what it starts
	if got := created(f); len(got) != 0 {
		t.Errorf("11:00: created %q, want none: the 10:00 Job still runs and concurrencyPolicy is Forbid", got)
	}
}

// Replace, as TestForbidStartsNoRunBesideALostRunWhoseJobTheNextLeadersCacheLacks:
// the 10:00 run's status is lost in a crash and the next leader's Job
// cache lacks its Job. At 11:00 it starts 11:00 and replaces nothing: two
// runs at once, which Replace never lets happen.
func TestReplaceReplacesALostRunWhoseJobTheNextLeadersCacheLacks(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := newFixture(t, at(5*time.Second))
	f.cronJob = newCronJob(lastScheduled(at(-time.Hour)), policy(cronv1.ReplaceConcurrent))
	c, _, _ := f.newController(ctx)
	honourFinalizers(f.kubeclient, f.clock)
	key := cache.MetaObjectToName(f.cronJob)
	ran := syncLosingStatus(t, ctx, f, c, key, "the 10:00 sync", jobName(topOfHour))

	f.clock.SetTime(at(time.Hour + 5*time.Second))
	c, kubeFactory, _ := restart(t, ctx, f)
	uncacheJob(t, kubeFactory, ran)
	c.syncHandler(ctx, key) //nolint:errcheck // what matters is what it starts and deletes
	if got := created(f); !slices.Equal(got, []string{jobName(at(time.Hour))}) {
		t.Fatalf("11:00: created %q, want the 11:00 run", got)
	}
	if j := liveJob(t, ctx, f, jobName(topOfHour)); j != nil && j.DeletionTimestamp == nil {
		t.Errorf("11:00: the 10:00 Job still runs beside the 11:00 one; Replace wants it deleted")
	}
}

// The lookups reach "the 101 most recent times" (docs/features.md, Run
// limits): the most recent of all among them. A Forbid CronJob run every
// minute, with a 30 s starting deadline, whose controller was away from
// 10:00 to 12:00: at 12:00:05 the leader starts 12:00 (counting the 119
// times before it missed) and its status write is lost before it crashes.
// The next leader's Job cache lacks the 12:00 Job; at 12:00:40 12:00 is
// past its deadline, and before settling it as missed the sync must read
// its Job, or at 12:01 Forbid starts a run beside the one still running.
func TestForbidStartsNoRunBesideALostRunAfterALongOutage(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := newFixture(t, at(2*time.Hour+5*time.Second)) // 12:00:05
	f.cronJob = newCronJob(lastScheduled(at(0)), withSchedule("* * * * *"), policy(cronv1.ForbidConcurrent), deadline(30))
	c, _, _ := f.newController(ctx)
	key := cache.MetaObjectToName(f.cronJob)
	ran := syncLosingStatus(t, ctx, f, c, key, "the 12:00 sync", jobName(at(2*time.Hour)))
	if ran == nil {
		t.Fatalf("created %q, want the 12:00 run", created(f))
	}

	f.clock.SetTime(at(2*time.Hour + 40*time.Second)) // 12:00:40
	c, kubeFactory, cronFactory := restart(t, ctx, f)
	uncacheJob(t, kubeFactory, ran)
	if _, err := c.syncHandler(ctx, key); err != nil {
		t.Fatal(err)
	}
	stored, err := f.client.BatchV1().CronJobs("default").Get(ctx, "cj", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cacheCronJob(t, cronFactory, stored)
	f.kubeclient.ClearActions()
	// 12:01:01
	f.clock.SetTime(at(2*time.Hour + time.Minute + time.Second))
	c.syncHandler(ctx, key) //nolint:errcheck // what matters is what it starts
	if got := created(f); len(got) != 0 {
		t.Errorf("12:01: created %q, want none: the 12:00 Job still runs and concurrencyPolicy is Forbid (stored at 12:00:40: active %v, missed %+v)",
			got, stored.Status.Active, stored.Status.MissedRuns)
	}
}
