package main

// Tests of missed runs: status.missedRuns and the
// cronjob_missed_schedules_total metric count each run that can no longer
// start, once, and never a run that started.

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	core "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2/ktesting"

	cronv1 "github.com/cronjob-controller/cronjob-controller/pkg/apis/batch/v1"
)

// A create whose response was lost is looked up on the next sync. When
// that lookup fails (the API server is briefly unavailable), the sync must
// not go on as if the Job did not exist and, past the starting deadline,
// count the run as missed: the Job did start, and the next sync adopts it.
// A run is counted only when it can no longer start.
func TestLostCreateWithFailedLookupCountsNoStartedRunMissed(t *testing.T) {
	ctx, f, c, cronFactory, lose := lostCreateFixture(t)
	unavailable := true
	f.kubeclient.PrependReactor("get", "jobs", func(core.Action) (bool, runtime.Object, error) {
		if unavailable {
			return true, nil, apierrors.NewServiceUnavailable("try later")
		}
		return false, nil, nil
	})
	key := cache.MetaObjectToName(f.cronJob)
	if _, err := c.syncHandler(ctx, key); err == nil {
		t.Fatal("the lost response was not reported")
	}
	*lose = false
	f.clock.Step(30 * time.Second)
	// The lookup fails; whatever this sync does, it must not count 10:00.
	_, _ = c.syncHandler(ctx, key)
	if w := f.writtenStatus(); w != nil {
		cacheCronJob(t, cronFactory, w)
	}
	unavailable = false
	f.clock.Step(time.Second)
	w := syncWantStatus(t, ctx, f, c, key)
	if len(w.Status.MissedRuns) != 0 {
		t.Errorf("missedRuns %+v (last %v, active %v): the 10:00 run started, yet it is counted missed",
			w.Status.MissedRuns, w.Status.LastScheduleTime, w.Status.Active)
	}
}

// The metric cronjob_missed_schedules_total counts "as in
// status.missedRuns". A sync counts the 10:00 run missed (catchUpPolicy
// None, 36 minutes late) and reports the metric; its status write fails.
// An edit that changes nothing about the run (a Job template label)
// arrives before the retry, and the reset judges the run again: the metric
// must grow by what the status says, not once per judgement.
func TestDeferredResetCountsTheMissedMetricOnce(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	before := missedMetric(t, cronv1.MissedDeadlineExceeded)
	f := newFixture(t, at(36*time.Minute))
	f.cronJob = newCronJob(lastScheduled(at(-time.Hour)), catchUp(cronv1.CatchUpNone, nil))
	c, _, cronFactory := f.newController(ctx)
	stopConflicts := conflictOnStatus(f)
	key := cache.MetaObjectToName(f.cronJob)
	syncWantConflict(t, ctx, c, key, "sync")
	cacheEdit(t, cronFactory, f.cronJob, func(cj *cronv1.CronJob) { cj.Spec.JobTemplate.Labels = map[string]string{"app": "hello", "tier": "2"} })
	stopConflicts()
	f.clock.Step(time.Second)
	w := syncWantStatus(t, ctx, f, c, key)
	wantMissedMetricGrewAsStatus(t, cronv1.MissedDeadlineExceeded, before, w.Status)
}

// The create of 10:00 fails (a 500, not applied) while someone else makes
// a Job under that name. The lookup finds a Job the CronJob does not
// control: it must not be adopted, and the run is counted once.
func TestLostCreateLookupAdoptsNoForeignJob(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := newFixture(t, at(2*time.Second))
	f.cronJob = newCronJob(lastScheduled(at(-time.Hour)), deadline(10))
	c, _, cronFactory := f.newController(ctx)
	fail := true
	applyJobCreatesThenFail(f, &fail, func(j *batchv1.Job) {
		j.UID = "foreign"
		j.OwnerReferences = nil
	}, apierrors.NewInternalError(errors.New("etcd is sad")))
	key := cache.MetaObjectToName(f.cronJob)
	if _, err := c.syncHandler(ctx, key); err == nil {
		t.Fatal("the failed create was not reported")
	}
	fail = false
	for _, step := range []time.Duration{time.Second, 30 * time.Second} {
		f.clock.Step(step)
		if _, err := c.syncHandler(ctx, key); err != nil {
			t.Fatal(err)
		}
		if w := f.writtenStatus(); w != nil {
			cacheCronJob(t, cronFactory, w)
		}
	}
	w := f.writtenStatus()
	if w == nil {
		t.Fatal("no status written")
	}
	var total int64
	for _, m := range w.Status.MissedRuns {
		total += m.Count
	}
	if total != 1 || len(w.Status.Active) != 0 {
		t.Errorf("missedRuns %+v, active %v: want the 10:00 run counted once, nothing adopted", w.Status.MissedRuns, w.Status.Active)
	}
}

// The missed-run metric counts what status.missedRuns counts. A status
// write that landed but whose answer the next run cut (lostAnswerStatus)
// stored the superseded 09:00 run in status.missedRuns; the metric must
// grow by that run once the controller settles, not by none. The bound on
// a sync's bookkeeping makes such cuts common (1 s after the creates when
// the next run is near).
func TestMissedMetricCountsACutWriteThatLanded(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := newFixture(t, at(time.Second))
	f.cronJob = newCronJob(lastScheduled(at(-2 * time.Hour)))
	c, kubeFactory, cronFactory := f.newController(ctx)
	key := cache.MetaObjectToName(f.cronJob)
	before := missedMetric(t, cronv1.MissedSuperseded)
	landedWriteCutByTheNextRun(t, ctx, f, c, key)
	settle := func() {
		stored, err := f.client.BatchV1().CronJobs("default").Get(ctx, "cj", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		cacheCronJob(t, cronFactory, stored)
		list, err := f.kubeclient.BatchV1().Jobs("default").List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for i := range list.Items {
			cacheJob(t, kubeFactory, &list.Items[i])
		}
	}
	settle()
	for i := 0; i < 3; i++ {
		if _, err := c.syncHandler(context.WithoutCancel(ctx), key); err != nil && !apierrors.IsConflict(err) {
			t.Fatalf("sync %d: %v", i+2, err)
		}
		settle()
	}
	stored, err := f.client.BatchV1().CronJobs("default").Get(ctx, "cj", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var inStatus int64
	for _, m := range stored.Status.MissedRuns {
		if m.Reason == cronv1.MissedSuperseded {
			inStatus = m.Count
		}
	}
	if got := missedMetric(t, cronv1.MissedSuperseded) - before; got != float64(inStatus) {
		t.Errorf("missed metric grew by %v, status.missedRuns counts %d superseded: the landed write's count is lost", got, inStatus)
	}
}

// A status write that landed but whose answer was lost, decided again
// unchanged by the next sync, which then writes nothing: the metric must
// still count the misses the landed write stored (countMissed counts from
// a kept decision with nothing to write). After a shard move a dropped
// decision loses its count as a restart does; that is not checked here.
func TestMissedMetricCountsALandedWriteDecidedAgain(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	before := missedMetric(t, cronv1.MissedDeadlineExceeded)
	f := newFixture(t, at(36*time.Minute))
	f.cronJob = newCronJob(lastScheduled(at(-time.Hour)), catchUp(cronv1.CatchUpNone, nil), func(cj *cronv1.CronJob) { cj.ResourceVersion = "1" })
	c, _, cronFactory := f.newController(ctx)
	lost := &landedTimeout{CronJobs: c.cronJobs, lose: true}
	c.cronJobs = lost
	key := cache.MetaObjectToName(f.cronJob)
	if _, err := c.syncHandler(ctx, key); err == nil {
		t.Fatal("the lost answer was not reported")
	}
	lost.lose = false
	stored, err := f.client.BatchV1().CronJobs("default").Get(ctx, "cj", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if missedCount(stored.Status, cronv1.MissedDeadlineExceeded) == 0 {
		t.Fatal("the landed write counted nothing; the case tests nothing")
	}
	cacheCronJob(t, cronFactory, stored) // the informer shows the landed write
	for n := 0; n < 3; n++ {
		f.clock.Step(time.Second)
		if _, err := c.syncHandler(ctx, key); err != nil {
			t.Fatal(err)
		}
		if w := f.writtenStatus(); w != nil {
			cacheCronJob(t, cronFactory, w)
		}
	}
	stored, _ = f.client.BatchV1().CronJobs("default").Get(ctx, "cj", metav1.GetOptions{})
	wantMissedMetricGrewAsStatus(t, cronv1.MissedDeadlineExceeded, before, stored.Status)
}

// A run held back by Forbid is announced once, however often the CronJob is
// synced before its next run, and counted as missed only once it can no
// longer start: when the next run supersedes it.
func TestMissedRunAnnouncedOnce(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := newFixture(t, at(5*time.Second))
	withRunningJob(f, cronv1.ForbidConcurrent)
	c, _, cronFactory := f.newController(ctx)
	key := cache.MetaObjectToName(f.cronJob)
	sync := func() {
		t.Helper()
		if _, err := c.syncHandler(ctx, key); err != nil {
			t.Fatal(err)
		}
		// The cache catches up with the status written.
		if written := f.writtenStatus(); written != nil {
			cacheCronJob(t, cronFactory, written)
		}
	}
	for range 3 {
		sync()
	}
	if events := f.events(); !slices.Equal(events, []string{"Normal JobAlreadyActive"}) {
		t.Errorf("three syncs before the next run: events %q, want one JobAlreadyActive", events)
	}
	if missed := f.writtenStatus().Status.MissedRuns; len(missed) != 0 {
		t.Errorf("a run held back while it can still start is counted as missed: %+v", missed)
	}
	f.clock.SetTime(at(time.Hour + time.Second))
	sync()
	if events := f.events(); !slices.Equal(events, []string{"Normal JobAlreadyActive"}) {
		t.Errorf("the next run: events %q, want JobAlreadyActive again", events)
	}
	status := f.writtenStatus().Status
	want := []cronv1.MissedRuns{{Reason: cronv1.MissedConcurrencyForbidden, Count: 1, LastTime: metav1.NewTime(at(0))}}
	if len(status.MissedRuns) != 1 || status.MissedRuns[0].Reason != want[0].Reason || status.MissedRuns[0].Count != 1 || !status.MissedRuns[0].LastTime.Equal(&want[0].LastTime) {
		t.Errorf("status.missedRuns = %+v, want %+v", status.MissedRuns, want)
	}
	cond := meta.FindStatusCondition(status.Conditions, cronv1.ConditionLastRunStarted)
	if cond == nil || cond.Status != metav1.ConditionFalse || cond.Reason != cronv1.MissedConcurrencyForbidden {
		t.Errorf("LastRunStarted = %+v, want False/ConcurrencyForbidden", cond)
	}
}

// Runs missed while the controller was down are counted: the older ones as
// superseded, the most recent as past its deadline; a later sync counts
// nothing twice.
func TestMissedRunsCounted(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := newFixture(t, at(30*time.Second)) // 10:00:30; 07:00, 08:00, 09:00 and 10:00 were missed
	f.cronJob = newCronJob(lastScheduled(at(-4*time.Hour)), deadline(10))
	c, _, cronFactory := f.newController(ctx)
	cj := syncs(t, ctx, f, c, cronFactory)
	got := map[string]int64{}
	for _, m := range cj.Status.MissedRuns {
		got[m.Reason] = m.Count
	}
	if got[cronv1.MissedSuperseded] != 3 || got[cronv1.MissedDeadlineExceeded] != 1 || len(got) != 2 {
		t.Errorf("missedRuns = %+v, want 3 superseded and 1 past its deadline", cj.Status.MissedRuns)
	}
	f.clock.Step(10 * time.Second)
	cj = syncs(t, ctx, f, c, cronFactory)
	for _, m := range cj.Status.MissedRuns {
		if m.Count != got[m.Reason] {
			t.Errorf("a second sync counted again: %+v", cj.Status.MissedRuns)
		}
	}
	cond := meta.FindStatusCondition(cj.Status.Conditions, cronv1.ConditionLastRunStarted)
	if cond == nil || cond.Status != metav1.ConditionFalse || cond.Reason != cronv1.MissedDeadlineExceeded {
		t.Errorf("LastRunStarted = %+v", cond)
	}
	// The next run starts and is counted as started.
	f.clock.SetTime(at(time.Hour))
	cj = syncs(t, ctx, f, c, cronFactory)
	cond = meta.FindStatusCondition(cj.Status.Conditions, cronv1.ConditionLastRunStarted)
	if cond == nil || cond.Status != metav1.ConditionTrue {
		t.Errorf("after the 11:00 run: LastRunStarted = %+v", cond)
	}
	for _, m := range cj.Status.MissedRuns {
		if m.Count != got[m.Reason] {
			t.Errorf("the 11:00 run changed the missed counts: %+v", cj.Status.MissedRuns)
		}
	}
}

// A create whose response was lost (the API server applied it, the
// connection dropped) leaves the run's fate unknown to the controller. The
// next sync, past the starting deadline and on a cache that has not seen
// the Job yet, must look before it counts the run as missed: the run
// started. (Model seed 1795500264.)
func TestLostCreateResponseIsNoMiss(t *testing.T) {
	ctx, f, c, _, lose := lostCreateFixture(t)
	key := cache.MetaObjectToName(f.cronJob)
	if _, err := c.syncHandler(ctx, key); err == nil {
		t.Fatal("the lost response was not reported")
	}
	*lose = false
	f.clock.Step(30 * time.Second)
	w := syncWantStatus(t, ctx, f, c, key)
	if len(w.Status.MissedRuns) != 0 || w.Status.LastScheduleTime == nil || !w.Status.LastScheduleTime.Time.Equal(topOfHour) ||
		len(w.Status.Active) != 1 || w.Status.Active[0].Name != jobName(topOfHour) {
		t.Errorf("status: last %v, active %v, missed %+v; want the 10:00 run started and active, nothing missed",
			w.Status.LastScheduleTime, w.Status.Active, w.Status.MissedRuns)
	}
}
