package main

// Adversarial probes for the issue-13 review (git diff 7f334d8 main). Each
// states the promise it checks; a failure is a bug in the product code.

import (
	"errors"
	"slices"
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

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	cronv1 "github.com/cronjob-controller/cronjob-controller/pkg/apis/batch/v1"
	"github.com/cronjob-controller/cronjob-controller/pkg/job"
	"github.com/cronjob-controller/cronjob-controller/pkg/metrics"
)

func missedCount(st cronv1.CronJobStatus, reason string) int64 {
	for _, m := range st.MissedRuns {
		if m.Reason == reason {
			return m.Count
		}
	}
	return 0
}

func drainQueue(c *Controller) {
	for c.queue.Len() > 0 {
		k, _ := c.queue.Get()
		c.queue.Done(k)
	}
}

func conflictOnStatus(f *fixture) {
	f.client.PrependReactor("update", "cronjobs", func(core.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewConflict(cronv1.Resource("cronjobs"), "cj", errors.New("stale"))
	})
}

// Change 1. A sync that started the 10:00 run (catchUpPolicy Latest) passed
// over 08:00 and 09:00 and counted them Superseded; its status write waits
// behind the queue. An unrelated spec edit (the Job template) arrives before
// the deferred write. The deferred status keeps lastScheduleTime 10:00 (the
// Job is a fact) but its unwritten misses are reset to the written ones, and
// nothing judges 08:00 and 09:00 again: they lie before lastScheduleTime.
// Two runs that can never start are never counted.
func TestProbe13DeferredResetLosesSupersededBehindAStartedRun(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := newFixture(t, at(5*time.Second))
	f.cronJob = newCronJob(lastScheduled(at(-3 * time.Hour)))
	c, _, cronFactory := f.newController(ctx)
	key := cache.MetaObjectToName(f.cronJob)
	c.queue.Add(cache.ObjectName{Namespace: "default", Name: "other"}) // the status write is deferred
	if _, err := c.syncHandler(ctx, key); err != nil {
		t.Fatal(err)
	}
	if got := created(f); !slices.Equal(got, []string{jobName(topOfHour)}) {
		t.Fatalf("first sync created %q, want the 10:00 run", got)
	}
	if w := f.writtenStatus(); w != nil {
		t.Fatalf("first sync wrote the status; the probe needs it deferred")
	}
	drainQueue(c)

	edited := f.cronJob.DeepCopy()
	edited.Generation++
	edited.Spec.JobTemplate.Labels = map[string]string{"app": "hello", "tier": "2"}
	cacheCronJob(t, cronFactory, edited)
	f.clock.Step(time.Second)
	if _, err := c.syncHandler(ctx, key); err != nil {
		t.Fatal(err)
	}
	w := f.writtenStatus()
	if w == nil {
		t.Fatal("no status written")
	}
	if w.Status.LastScheduleTime == nil || !w.Status.LastScheduleTime.Time.Equal(topOfHour) {
		t.Errorf("lastScheduleTime %v, want 10:00", w.Status.LastScheduleTime)
	}
	if got := missedCount(w.Status, cronv1.MissedSuperseded); got != 2 {
		t.Errorf("Superseded = %d, want 2 (08:00 and 09:00, passed over for 10:00); missedRuns %+v", got, w.Status.MissedRuns)
	}
}

// Change 1. The sync that first sees a schedule edit counts the run the old
// schedule owed and the new one refuses as ScheduleChanged ("nothing will
// start or count them later"), and records the new schedule as in force.
// Its status write fails. A second edit (only the deadline) arrives before
// the retry: the reset throws the ScheduleChanged count away, while the
// deferred status still says the new schedule is in force, so no later sync
// counts that run again.
func TestProbe13DeferredResetLosesScheduleChanged(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := newFixture(t, at(5*time.Minute)) // 10:05
	f.cronJob = newCronJob(withSchedule("30 * * * *"), lastScheduled(at(-time.Hour)), inForce("0 * * * *", "UTC"),
		func(cj *cronv1.CronJob) { cj.Generation = 2; cj.Status.ObservedGeneration = 1 })
	c, _, cronFactory := f.newController(ctx)
	conflictOnStatus(f)
	key := cache.MetaObjectToName(f.cronJob)
	if _, err := c.syncHandler(ctx, key); !apierrors.IsConflict(err) {
		t.Fatalf("want the conflict, got %v", err)
	}
	if got := created(f); len(got) != 0 {
		t.Fatalf("created %q; 10:00 is named only by the old schedule", got)
	}
	edited := f.cronJob.DeepCopy()
	edited.Generation++
	edited.Spec.StartingDeadlineSeconds = ptrTo[int64](3600)
	cacheCronJob(t, cronFactory, edited)
	f.client.ReactionChain = f.client.ReactionChain[1:]
	f.clock.Step(time.Second)
	if _, err := c.syncHandler(ctx, key); err != nil {
		t.Fatal(err)
	}
	w := f.writtenStatus()
	if w == nil {
		t.Fatal("no status written")
	}
	if got := missedCount(w.Status, cronv1.MissedScheduleChanged); got != 1 {
		t.Errorf("ScheduleChanged = %d, want 1 (10:00, owed by the old schedule, refused by the new); missedRuns %+v, resolved %q",
			got, w.Status.MissedRuns, w.Status.ResolvedSchedule)
	}
}

// Change 1. A deferred status that was itself built on a deferred status
// has its previousSchedules pruned up to the deferred misses' settled
// point. The reset moves the settled point back to the written one but
// cannot bring the pruned entry back, so a time the earlier schedule never
// named (09:30 under "0 * * * *", in force until 09:50) becomes a run again:
// a surprise run the README promises never happens.
func TestProbe13DeferredResetRevivesARunAnEditRefused(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := newFixture(t, at(5*time.Minute)) // 10:05
	f.cronJob = newCronJob(withSchedule("*/30 * * * *"), lastScheduled(at(-time.Hour)), inForce("*/30 * * * *", "UTC"),
		catchUp(cronv1.CatchUpNone, nil),
		func(cj *cronv1.CronJob) {
			cj.Generation = 2
			cj.Status.ObservedGeneration = 2
			cj.Status.PreviousSchedules = []cronv1.PreviousSchedule{{Schedule: "0 * * * *", TimeZone: "UTC", Until: metav1.NewTime(at(-10 * time.Minute))}}
			cj.Status.ScheduleChangeTime = &metav1.Time{Time: at(-10 * time.Minute)}
		})
	c, _, cronFactory := f.newController(ctx)
	conflictOnStatus(f)
	key := cache.MetaObjectToName(f.cronJob)
	// 10:05: the 10:00 run is five minutes late under catchUpPolicy None:
	// missed. The write fails; the status is kept.
	if _, err := c.syncHandler(ctx, key); !apierrors.IsConflict(err) {
		t.Fatalf("sync 1: want the conflict, got %v", err)
	}
	// 10:06: the retry settles past 09:50 and prunes the old schedule; the
	// write fails again.
	f.clock.Step(time.Minute)
	if _, err := c.syncHandler(ctx, key); !apierrors.IsConflict(err) {
		t.Fatalf("sync 2: want the conflict, got %v", err)
	}
	if got := created(f); len(got) != 0 {
		t.Fatalf("created %q before the edit", got)
	}
	// 10:07: the user switches to catchUpPolicy All.
	edited := f.cronJob.DeepCopy()
	edited.Generation++
	edited.Spec.CatchUpPolicy = cronv1.CatchUpAll
	cacheCronJob(t, cronFactory, edited)
	f.client.ReactionChain = f.client.ReactionChain[1:]
	f.clock.Step(time.Minute)
	if _, err := c.syncHandler(ctx, key); err != nil {
		t.Fatal(err)
	}
	if got := created(f); slices.Contains(got, jobName(at(-30*time.Minute))) {
		t.Errorf("created %q: 09:30 was never a run (the schedule in force then, \"0 * * * *\" until 09:50, does not name it)", got)
	}
}

// Change 4. A create whose response was lost is looked up on the next sync.
// When that lookup fails (the API server is briefly unavailable), the sync
// goes on as if the Job did not exist: past the starting deadline it counts
// the run as missed. The Job did start, and the next sync adopts it: the run
// is both started and counted missed, which the promise forbids (a run is
// counted only when it can no longer start).
func TestProbe13LostCreateLookupFailsCountsAStartedRunMissed(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := newFixture(t, at(2*time.Second))
	f.cronJob = newCronJob(lastScheduled(at(-time.Hour)), deadline(10))
	c, _, cronFactory := f.newController(ctx)
	lose := true
	f.kubeclient.PrependReactor("create", "jobs", func(action core.Action) (bool, runtime.Object, error) {
		if !lose {
			return false, nil, nil
		}
		j := action.(core.CreateAction).GetObject().(*batchv1.Job).DeepCopy()
		j.UID = types.UID("uid-" + j.Name)
		j.CreationTimestamp = metav1.NewTime(f.clock.Now())
		if err := f.kubeclient.Tracker().Create(batchv1.SchemeGroupVersion.WithResource("jobs"), j, j.Namespace); err != nil {
			return true, nil, err
		}
		return true, nil, errors.New("http2: client connection lost")
	})
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
	lose = false
	f.clock.Step(30 * time.Second)
	// The lookup fails; whatever this sync does, it must not count 10:00.
	_, _ = c.syncHandler(ctx, key)
	if w := f.writtenStatus(); w != nil {
		cacheCronJob(t, cronFactory, w)
	}
	unavailable = false
	f.clock.Step(time.Second)
	if _, err := c.syncHandler(ctx, key); err != nil {
		t.Fatal(err)
	}
	w := f.writtenStatus()
	if w == nil {
		t.Fatal("no status written")
	}
	if len(w.Status.MissedRuns) != 0 {
		t.Errorf("missedRuns %+v (last %v, active %v): the 10:00 run started, yet it is counted missed",
			w.Status.MissedRuns, w.Status.LastScheduleTime, w.Status.Active)
	}
}

func ptrTo[T any](v T) *T { return &v }

// Change 1, the companion of the probe above (which passes: the
// scheduleChangeTime fallback stands in for the pruned entry). That
// fallback names no time at all, so after the reset a run both schedules
// named is refused too. 09:30 is named by the old "30 * * * *" (in force
// until 09:50) and by the new "*/30 * * * *". The first sync counts it
// Superseded (catchUpPolicy None, 10:00 newest), the retry prunes the old
// schedule, and after the edit (catchUpPolicy All) the reset drops the
// count: 09:30 neither starts nor is counted - silently dropped.
func TestProbe13DeferredResetDropsARunBothSchedulesNamed(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := newFixture(t, at(5*time.Minute)) // 10:05
	f.cronJob = newCronJob(withSchedule("*/30 * * * *"), lastScheduled(at(-time.Hour)), inForce("*/30 * * * *", "UTC"),
		catchUp(cronv1.CatchUpNone, nil),
		func(cj *cronv1.CronJob) {
			cj.Generation = 2
			cj.Status.ObservedGeneration = 2
			cj.Status.PreviousSchedules = []cronv1.PreviousSchedule{{Schedule: "30 * * * *", TimeZone: "UTC", Until: metav1.NewTime(at(-10 * time.Minute))}}
			cj.Status.ScheduleChangeTime = &metav1.Time{Time: at(-10 * time.Minute)}
		})
	c, _, cronFactory := f.newController(ctx)
	conflictOnStatus(f)
	key := cache.MetaObjectToName(f.cronJob)
	if _, err := c.syncHandler(ctx, key); !apierrors.IsConflict(err) {
		t.Fatalf("sync 1: want the conflict, got %v", err)
	}
	f.clock.Step(time.Minute)
	if _, err := c.syncHandler(ctx, key); !apierrors.IsConflict(err) {
		t.Fatalf("sync 2: want the conflict, got %v", err)
	}
	edited := f.cronJob.DeepCopy()
	edited.Generation++
	edited.Spec.CatchUpPolicy = cronv1.CatchUpAll
	cacheCronJob(t, cronFactory, edited)
	f.client.ReactionChain = f.client.ReactionChain[1:]
	f.clock.Step(time.Minute)
	if _, err := c.syncHandler(ctx, key); err != nil {
		t.Fatal(err)
	}
	w := f.writtenStatus()
	if w == nil {
		t.Fatal("no status written")
	}
	nineThirty := jobName(at(-30 * time.Minute))
	if !slices.Contains(created(f), nineThirty) && len(w.Status.MissedRuns) == 0 {
		t.Errorf("09:30 (named by both schedules) neither started nor counted: created %q, lastScheduleTime %v, missedRuns %+v",
			created(f), w.Status.LastScheduleTime, w.Status.MissedRuns)
	}
}

// Change 2, passes: under Forbid with catchUpPolicy All the owed runs are
// alternatives, oldest first. 07:00 is rejected for good (counted, given
// way), 08:00 fails in a way a retry may mend: nothing later is tried, so
// no run is skipped for a later one; the retry starts 08:00 and only it.
func TestProbe13ForbidAlternativesStopAtARetryableFailure(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := newFixture(t, at(5*time.Second))
	f.cronJob = newCronJob(lastScheduled(at(-4*time.Hour)), catchUp(cronv1.CatchUpAll, nil), policy(cronv1.ForbidConcurrent))
	c, _, cronFactory := f.newController(ctx)
	failing := true
	f.kubeclient.PrependReactor("create", "jobs", func(a core.Action) (bool, runtime.Object, error) {
		switch a.(core.CreateAction).GetObject().(metav1.Object).GetName() {
		case jobName(at(-3 * time.Hour)):
			return true, nil, apierrors.NewInvalid(batchv1.SchemeGroupVersion.WithKind("Job").GroupKind(), "x", nil)
		case jobName(at(-2 * time.Hour)):
			if failing {
				return true, nil, apierrors.NewInternalError(errors.New("etcd is sad"))
			}
		}
		return false, nil, nil
	})
	key := cache.MetaObjectToName(f.cronJob)
	if _, err := c.syncHandler(ctx, key); err == nil {
		t.Fatal("the retryable failure was not reported")
	}
	if got, want := created(f), []string{jobName(at(-3 * time.Hour)), jobName(at(-2 * time.Hour))}; !slices.Equal(got, want) {
		t.Fatalf("sync 1 tried %q, want %q", got, want)
	}
	w := f.writtenStatus()
	if w == nil || missedCount(w.Status, cronv1.MissedJobRejected) != 1 || len(w.Status.MissedRuns) != 1 {
		t.Fatalf("sync 1 status %+v, want 07:00 counted JobRejected, nothing else", w)
	}
	cacheCronJob(t, cronFactory, w)
	failing = false
	f.kubeclient.ClearActions()
	f.clock.Step(10 * time.Second)
	if _, err := c.syncHandler(ctx, key); err != nil {
		t.Fatal(err)
	}
	if got, want := created(f), []string{jobName(at(-2 * time.Hour))}; !slices.Equal(got, want) {
		t.Errorf("sync 2 created %q, want %q", got, want)
	}
}

// Change 2, passes (cost noted): a template the Job API rejects under
// Forbid + catchUpPolicy All with catchUpLimit 100 makes 100 create calls
// in one sync (as Allow always did); each run is counted once, and the next
// sync makes no call.
func TestProbe13ForbidRejectedTemplateCost(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := newFixture(t, at(5*time.Second))
	f.cronJob = newCronJob(lastScheduled(at(-100*time.Hour)), catchUp(cronv1.CatchUpAll, ptrTo[int32](100)), policy(cronv1.ForbidConcurrent))
	c, _, cronFactory := f.newController(ctx)
	f.kubeclient.PrependReactor("create", "jobs", func(a core.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewInvalid(batchv1.SchemeGroupVersion.WithKind("Job").GroupKind(), "x", nil)
	})
	key := cache.MetaObjectToName(f.cronJob)
	if _, err := c.syncHandler(ctx, key); err != nil {
		t.Fatal(err)
	}
	t.Logf("sync 1 made %d create calls", len(created(f)))
	w := f.writtenStatus()
	if w == nil || missedCount(w.Status, cronv1.MissedJobRejected) != 100 {
		t.Fatalf("status %+v, want 100 JobRejected", w)
	}
	cacheCronJob(t, cronFactory, w)
	f.kubeclient.ClearActions()
	f.clock.Step(10 * time.Second)
	if _, err := c.syncHandler(ctx, key); err != nil {
		t.Fatal(err)
	}
	if got := created(f); len(got) != 0 {
		t.Errorf("sync 2 tried %d creates again", len(got))
	}
}

func missedMetric(t *testing.T, reason string) float64 {
	t.Helper()
	var m dto.Metric
	if err := metrics.MissedSchedules.WithLabelValues(reason).(prometheus.Metric).Write(&m); err != nil {
		t.Fatal(err)
	}
	return m.GetCounter().GetValue()
}

// Change 1. The metric cronjob_missed_schedules_total says it counts "as in
// status.missedRuns". A sync counts the 10:00 run missed (catchUpPolicy
// None, 36 minutes late) and reports the metric; its status write fails. An
// edit that changes nothing about the run (a Job template label) arrives
// before the retry, the reset judges the run again, and the metric is
// reported a second time: status says 1, the metric grew by 2.
func TestProbe13DeferredResetCountsTheMetricTwice(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	before := missedMetric(t, cronv1.MissedDeadlineExceeded)
	f := newFixture(t, at(36*time.Minute))
	f.cronJob = newCronJob(lastScheduled(at(-time.Hour)), catchUp(cronv1.CatchUpNone, nil))
	c, _, cronFactory := f.newController(ctx)
	conflictOnStatus(f)
	key := cache.MetaObjectToName(f.cronJob)
	if _, err := c.syncHandler(ctx, key); !apierrors.IsConflict(err) {
		t.Fatalf("want the conflict, got %v", err)
	}
	edited := f.cronJob.DeepCopy()
	edited.Generation++
	edited.Spec.JobTemplate.Labels = map[string]string{"app": "hello", "tier": "2"}
	cacheCronJob(t, cronFactory, edited)
	f.client.ReactionChain = f.client.ReactionChain[1:]
	f.clock.Step(time.Second)
	if _, err := c.syncHandler(ctx, key); err != nil {
		t.Fatal(err)
	}
	w := f.writtenStatus()
	if w == nil {
		t.Fatal("no status written")
	}
	inStatus := missedCount(w.Status, cronv1.MissedDeadlineExceeded)
	if grew := missedMetric(t, cronv1.MissedDeadlineExceeded) - before; grew != float64(inStatus) {
		t.Errorf("missed_schedules_total{reason=DeadlineExceeded} grew by %v, status.missedRuns says %d", grew, inStatus)
	}
}

// Change 4, passes: the create of 10:00 fails (a 500, not applied) while
// someone else makes a Job under that name. The lookup finds a Job the
// CronJob does not control: not adopted, and the run is counted once.
func TestProbe13LostCreateLookupFindsAForeignJob(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := newFixture(t, at(2*time.Second))
	f.cronJob = newCronJob(lastScheduled(at(-time.Hour)), deadline(10))
	c, _, cronFactory := f.newController(ctx)
	fail := true
	f.kubeclient.PrependReactor("create", "jobs", func(action core.Action) (bool, runtime.Object, error) {
		if !fail {
			return false, nil, nil
		}
		j := action.(core.CreateAction).GetObject().(*batchv1.Job).DeepCopy()
		j.UID = "foreign"
		j.OwnerReferences = nil
		if err := f.kubeclient.Tracker().Create(batchv1.SchemeGroupVersion.WithResource("jobs"), j, j.Namespace); err != nil {
			return true, nil, err
		}
		return true, nil, apierrors.NewInternalError(errors.New("etcd is sad"))
	})
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

// Oracle change 6 (a run-now value set again is a new request) against
// the product: the README promises "each change of the value starts one
// Job ... also a change back to a value used before". A -> B -> A -> B:
// the fourth change has the same (before, value) pair as the second, whose
// Job is still in the history (the default keeps 3 succeeded Jobs). The
// name once hashed only the pair, so the sync took that Job for "started
// before its status was written" and the fourth request never started;
// the request's number (status.runNowCount + 1) in the name tells them
// apart.
func TestProbe13RunNowBackAndForthStartsEachTime(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := newFixture(t, at(-50*time.Minute))
	f.cronJob = newCronJob(lastScheduled(at(-time.Hour)))
	c, kubeFactory, cronFactory := f.newController(ctx)
	cj := f.cronJob
	var made []string
	for i, value := range []string{"A", "B", "A", "B"} {
		before := cj.Status.LastRunNow
		cj = cj.DeepCopy()
		cj.Annotations = map[string]string{cronv1.RunNowAnnotation: value}
		cacheCronJob(t, cronFactory, cj)
		f.kubeclient.ClearActions()
		cj = syncs(t, ctx, f, c, cronFactory)
		got := created(f)
		made = append(made, got...)
		if len(got) != 1 {
			t.Errorf("change %d (to %q, after %q): created %q, want one manual Job", i+1, value, before, got)
			continue
		}
		// The Job runs and succeeds; it stays in the history.
		live, err := f.kubeclient.BatchV1().Jobs("default").Get(ctx, got[0], metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		live.Status.StartTime = &metav1.Time{Time: f.clock.Now()}
		live.Status.CompletionTime = &metav1.Time{Time: f.clock.Now().Add(time.Minute)}
		live.Status.Conditions = []batchv1.JobCondition{{Type: batchv1.JobComplete, Status: "True"}}
		cacheJob(t, kubeFactory, live)
		f.clock.Step(2 * time.Minute)
	}
	if got := slices.Compact(slices.Sorted(slices.Values(made))); len(got) != 4 || len(made) != 4 {
		t.Errorf("manual Jobs made: %q, want four of distinct names", made)
	}
	if cj.Status.LastRunNow != "B" || cj.Status.RunNowCount != 4 {
		t.Errorf("status lastRunNow %q, runNowCount %d: want B, 4", cj.Status.LastRunNow, cj.Status.RunNowCount)
	}
	if want := job.ManualName("cj", "cj-uid", "A", "B", 4); len(made) == 4 && made[3] != want {
		t.Errorf("fourth Job %s, want %s (after A, value B, request 4)", made[3], want)
	}
}

// The fourth change of A -> B -> A -> B creates its Job, and the status
// write recording it is lost (a conflict, then a crash). The restarted
// controller reads lastRunNow A, runNowCount 3 and run-now B, as before
// the fourth create: it finds that create's Job (same request, same name,
// on the chain of unrecorded run-now Jobs) and starts no second one,
// though the pair (A, B) is the second change's too.
func TestRunNowRepeatedPairStatusLostAfterCreate(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := newFixture(t, at(-50*time.Minute))
	f.cronJob = newCronJob(lastScheduled(at(-time.Hour)))
	c, kubeFactory, cronFactory := f.newController(ctx)
	key := cache.MetaObjectToName(f.cronJob)
	annotate := func(value string) {
		t.Helper()
		cj, err := f.client.BatchV1().CronJobs("default").Get(ctx, "cj", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		cj.Annotations = map[string]string{cronv1.RunNowAnnotation: value}
		if cj, err = f.client.BatchV1().CronJobs("default").Update(ctx, cj, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		cacheCronJob(t, cronFactory, cj)
		f.kubeclient.ClearActions()
	}
	for _, value := range []string{"A", "B", "A"} {
		annotate(value)
		syncs(t, ctx, f, c, cronFactory)
		got := created(f)
		if len(got) != 1 {
			t.Fatalf("run-now %s: created %q", value, got)
		}
		finishJob(t, ctx, f, kubeFactory, got[0])
		f.clock.Step(2 * time.Minute)
	}
	annotate("B")
	conflictOnStatus(f)
	if _, err := c.syncHandler(ctx, key); !apierrors.IsConflict(err) {
		t.Fatalf("want the conflict, got %v", err)
	}
	fourth := job.ManualName("cj", "cj-uid", "A", "B", 4)
	if got := created(f); !slices.Equal(got, []string{fourth}) {
		t.Fatalf("fourth change created %q, want %s", got, fourth)
	}
	f.client.ReactionChain = f.client.ReactionChain[1:]
	f.clock.Step(time.Second)
	c2, _, _ := restart(t, ctx, f)
	if _, err := c2.syncHandler(ctx, key); err != nil {
		t.Fatal(err)
	}
	if got := created(f); len(got) != 0 {
		t.Errorf("after the restart created %q: the fourth request started twice", got)
	}
	w := f.writtenStatus()
	if w == nil || w.Status.LastRunNow != "B" || w.Status.RunNowCount != 4 {
		t.Errorf("status written %+v, want lastRunNow B, runNowCount 4", w)
	}
}
