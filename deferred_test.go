package main

// Tests of deferred status writes (a status write left for later while
// other CronJobs wait): what a deferred status keeps when it is reset, put
// back or taken again, and its flush at shutdown.

import (
	"context"
	"slices"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kubeinformers "k8s.io/client-go/informers"
	k8sfake "k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2/ktesting"
	"k8s.io/utils/ptr"

	cronv1 "github.com/cronjob-controller/cronjob-controller/pkg/apis/batch/v1"
	"github.com/cronjob-controller/cronjob-controller/pkg/generated/clientset/versioned/fake"
	informers "github.com/cronjob-controller/cronjob-controller/pkg/generated/informers/externalversions"
	"github.com/cronjob-controller/cronjob-controller/pkg/planner"
)

// Forbid, status deferred behind the queue, caches behind: the next sync
// still sees its own Job active and holds 11:00 back; after a restart the
// Job is adopted and holds it back too. Nothing twice.
func TestForbidHoldsBackWhileTheStatusIsDeferredAndCachesLag(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := newFixture(t, at(5*time.Second))
	f.cronJob = newCronJob(lastScheduled(at(-time.Hour)), policy(cronv1.ForbidConcurrent))
	c, _, _ := f.newController(ctx)
	key := cache.MetaObjectToName(f.cronJob)
	log := createLog{}
	syncInABurst(t, ctx, c, key)
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

// A sync that started the 10:00 run (catchUpPolicy Latest) passed over
// 08:00 and 09:00 and counted them Superseded; its status write waits
// behind the queue. An unrelated spec edit (the Job template) arrives
// before the deferred write. The deferred status keeps lastScheduleTime
// 10:00 (the Job is a fact), and it must keep the two Superseded counts
// too: nothing judges 08:00 and 09:00 again, as they lie before
// lastScheduleTime, so two runs that can never start would go uncounted.
func TestDeferredResetKeepsSupersededRunsBehindAStartedRun(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := newFixture(t, at(5*time.Second))
	f.cronJob = newCronJob(lastScheduled(at(-3 * time.Hour)))
	c, _, cronFactory := f.newController(ctx)
	key := cache.MetaObjectToName(f.cronJob)
	syncInABurst(t, ctx, c, key)
	if got := created(f); !slices.Equal(got, []string{jobName(topOfHour)}) {
		t.Fatalf("first sync created %q, want the 10:00 run", got)
	}
	if w := f.writtenStatus(); w != nil {
		t.Fatalf("first sync wrote the status; the case needs it deferred")
	}
	drainQueue(c)

	cacheEdit(t, cronFactory, f.cronJob, func(cj *cronv1.CronJob) { cj.Spec.JobTemplate.Labels = map[string]string{"app": "hello", "tier": "2"} })
	f.clock.Step(time.Second)
	w := syncWantStatus(t, ctx, f, c, key)
	if w.Status.LastScheduleTime == nil || !w.Status.LastScheduleTime.Time.Equal(topOfHour) {
		t.Errorf("lastScheduleTime %v, want 10:00", w.Status.LastScheduleTime)
	}
	if got := missedCount(w.Status, cronv1.MissedSuperseded); got != 2 {
		t.Errorf("Superseded = %d, want 2 (08:00 and 09:00, passed over for 10:00); missedRuns %+v", got, w.Status.MissedRuns)
	}
}

// The sync that first sees a schedule edit counts the run the old schedule
// owed and the new one refuses as ScheduleChanged ("nothing will start or
// count them later"), and records the new schedule as in force. Its status
// write fails. A second edit (only the deadline) arrives before the retry:
// the ScheduleChanged count must survive the reset, since the kept status
// says the new schedule is in force and no later sync counts that run
// again.
func TestDeferredResetKeepsTheScheduleChangedCount(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := newFixture(t, at(5*time.Minute)) // 10:05
	f.cronJob = newCronJob(withSchedule("30 * * * *"), lastScheduled(at(-time.Hour)), inForce("0 * * * *", "UTC"),
		func(cj *cronv1.CronJob) { cj.Generation = 2; cj.Status.ObservedGeneration = 1 })
	c, _, cronFactory := f.newController(ctx)
	stopConflicts := conflictOnStatus(f)
	key := cache.MetaObjectToName(f.cronJob)
	syncWantConflict(t, ctx, c, key, "sync")
	if got := created(f); len(got) != 0 {
		t.Fatalf("created %q; 10:00 is named only by the old schedule", got)
	}
	cacheEdit(t, cronFactory, f.cronJob, func(cj *cronv1.CronJob) { cj.Spec.StartingDeadlineSeconds = ptr.To[int64](3600) })
	stopConflicts()
	f.clock.Step(time.Second)
	w := syncWantStatus(t, ctx, f, c, key)
	if got := missedCount(w.Status, cronv1.MissedScheduleChanged); got != 1 {
		t.Errorf("ScheduleChanged = %d, want 1 (10:00, owed by the old schedule, refused by the new); missedRuns %+v, resolved %q",
			got, w.Status.MissedRuns, w.Status.ResolvedSchedule)
	}
}

// A deferred status that was itself built on a deferred status has its
// previousSchedules pruned up to the deferred misses' settled point. The
// reset moves the settled point back to the written one but cannot bring
// the pruned entry back; a time the earlier schedule never named (09:30
// under "0 * * * *", in force until 09:50) must still not become a run: a
// surprise run the README promises never happens.
func TestDeferredResetRevivesNoRunAnEditRefused(t *testing.T) {
	ctx, f, c, cronFactory, key, stopConflicts := twoRefusedWritesAfterAScheduleChange(t, "0 * * * *")
	if got := created(f); len(got) != 0 {
		t.Fatalf("created %q before the edit", got)
	}
	// 10:07: the user switches to catchUpPolicy All.
	cacheEdit(t, cronFactory, f.cronJob, func(cj *cronv1.CronJob) { cj.Spec.CatchUpPolicy = cronv1.CatchUpAll })
	stopConflicts()
	f.clock.Step(time.Minute)
	if _, err := c.syncHandler(ctx, key); err != nil {
		t.Fatal(err)
	}
	if got := created(f); slices.Contains(got, jobName(at(-30*time.Minute))) {
		t.Errorf("created %q: 09:30 was never a run (the schedule in force then, \"0 * * * *\" until 09:50, does not name it)", got)
	}
}

// The companion of TestDeferredResetRevivesNoRunAnEditRefused: a run both
// schedules named must not be refused along with the ones only the old
// schedule named. 09:30 is named by the old "30 * * * *" (in force until
// 09:50) and by the new "*/30 * * * *". The first sync counts it
// Superseded (catchUpPolicy None, 10:00 newest), the retry prunes the old
// schedule, and after the edit (catchUpPolicy All) the reset drops the
// count: 09:30 must then start or be counted, not be silently dropped.
func TestDeferredResetStartsOrCountsARunBothSchedulesNamed(t *testing.T) {
	ctx, f, c, cronFactory, key, stopConflicts := twoRefusedWritesAfterAScheduleChange(t, "30 * * * *")
	cacheEdit(t, cronFactory, f.cronJob, func(cj *cronv1.CronJob) { cj.Spec.CatchUpPolicy = cronv1.CatchUpAll })
	stopConflicts()
	f.clock.Step(time.Minute)
	w := syncWantStatus(t, ctx, f, c, key)
	nineThirty := jobName(at(-30 * time.Minute))
	if !slices.Contains(created(f), nineThirty) && len(w.Status.MissedRuns) == 0 {
		t.Errorf("09:30 (named by both schedules) neither started nor counted: created %q, lastScheduleTime %v, missedRuns %+v",
			created(f), w.Status.LastScheduleTime, w.Status.MissedRuns)
	}
}

// Under leader election Run's ctx ends when the Lease is lost, and the docs
// promise no write later than the lease grace after that (past the fence
// another replica leads). The deferred statuses written (and finalizers
// released) after the workers stop must be cut with that grace too: the
// flush runs under Run's last-writes context, not a context of its own.
func TestDeferredFlushEndsWithTheLeaseGrace(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	runCtx, loseLease := context.WithCancel(ctx)
	defer loseLease()
	f := newFixture(t, at(time.Second))
	f.kubeclient = k8sfake.NewClientset()
	f.kubeclient.PrependReactor("create", "jobs", f.stampCreatedJob)
	f.client = fake.NewClientset(newCronJob())
	kubeFactory := kubeinformers.NewSharedInformerFactory(f.kubeclient, 0)
	cronFactory := informers.NewSharedInformerFactory(f.client, 0)
	const grace = time.Second
	clk := &clockTimerSpy{FakeClock: f.clock, made: make(chan time.Duration, 16)}
	c, err := NewController(ctx, f.kubeclient, f.client, kubeFactory.Batch().V1().Jobs(),
		cronFactory.Batch().V1().CronJobs(), clk, WithEventRecorder(f.recorder), WithLeaseGrace(grace))
	if err != nil {
		t.Fatal(err)
	}
	infCtx, stopInformers := context.WithCancel(ctx)
	kubeFactory.Start(infCtx.Done())
	cronFactory.Start(infCtx.Done())
	defer kubeFactory.Shutdown()
	defer cronFactory.Shutdown()
	defer stopInformers()
	cache.WaitForCacheSync(ctx.Done(), c.cachesSynced...)

	// A sync that defers its status (another key waits), as under load.
	key := cache.ObjectName{Namespace: "default", Name: "cj"}
	syncInABurst(t, ctx, c, key)
	if f.writtenStatus() != nil {
		t.Fatal("status written at once; the case tests nothing")
	}
	b := &blockingStatus{CronJobs: c.cronJobs, called: make(chan context.Context, 1), goOn: make(chan struct{})}
	c.cronJobs = b

	// Nothing in the queue: the deferred status waits for the flush.
	for c.queue.Len() > 0 {
		k, _ := c.queue.Get()
		c.queue.Done(k)
		c.queue.Forget(k)
	}
	spy := &getSpy{TypedRateLimitingInterface: c.queue, started: make(chan struct{}, 1)}
	c.queue = spy
	done := make(chan error, 1)
	go func() { done <- c.Run(runCtx, 1) }()
	select {
	case <-spy.started:
	case <-time.After(30 * time.Second):
		t.Fatal("no worker started")
	}
	loseLease()
	var writeCtx context.Context
	select {
	case writeCtx = <-b.called:
	case <-time.After(30 * time.Second):
		t.Fatal("no deferred status written after the workers stopped")
	}
	// The grace timer starts in a goroutine of its own once the Lease is
	// lost: stepping the clock before it exists would pass it by.
	for made := false; !made; {
		select {
		case d := <-clk.made:
			made = d == grace
		case <-time.After(30 * time.Second):
			t.Fatal("no grace timer started after the Lease was lost")
		}
	}
	// The fence passes while the write is in flight.
	f.clock.Step(2 * grace)
	alive := true
	select { // a grace timer, if any, cuts the write
	case <-writeCtx.Done():
		alive = false
	case <-time.After(2 * time.Second):
	}
	close(b.goOn)
	<-done
	if alive {
		t.Errorf("the deferred status write outlived the lease grace")
	}
}

// A deferred status put back by a failed view is not taken by a CronJob
// created again under the same name (new UID): its first sync decides from
// its own status.
func TestPutBackStatusNotTakenByANewUID(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := newFixture(t, at(time.Second))
	f.cronJob = newCronJob(func(cj *cronv1.CronJob) { cj.ResourceVersion = "1" })
	c, _, cronFactory := f.newController(ctx)
	key := cache.MetaObjectToName(f.cronJob)
	faults := injectFaults(f)
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

// When other CronJobs wait in the queue, a sync that starts a Job leaves its
// status write for later, behind them; the later sync writes the status it
// kept, without creating or reading the Job again although no cache has
// seen it.
func TestStatusWriteWaitsBehindQueuedCronJobs(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := newFixture(t, at(time.Second))
	f.cronJob = newCronJob()
	c, _, _ := f.newController(ctx)
	key := cache.MetaObjectToName(f.cronJob)
	other := cache.ObjectName{Namespace: "default", Name: "other"}
	c.queue.Add(other)

	if _, err := c.syncHandler(ctx, key); err != nil {
		t.Fatal(err)
	}
	if got, want := describe(append(f.kubeclient.Actions(), f.client.Actions()...), false), []string{"create jobs default/" + jobName(topOfHour)}; !slices.Equal(got, want) {
		t.Fatalf("first sync did %q, want only %q", got, want)
	}
	if got := c.queue.Len(); got != 2 {
		t.Fatalf("queue holds %d items, want the other CronJob and this one behind it", got)
	}
	if first, _ := c.queue.Get(); first != other {
		t.Fatalf("queue head is %v, want the CronJob that was waiting", first)
	}

	f.kubeclient.ClearActions()
	f.client.ClearActions()
	if _, err := c.syncHandler(ctx, key); err != nil {
		t.Fatal(err)
	}
	// The status write; the Job holds no finalizer to release (no TTL).
	if got, want := describe(append(f.kubeclient.Actions(), f.client.Actions()...), false), []string{"update cronjobs/status default/cj"}; !slices.Equal(got, want) {
		t.Fatalf("second sync did %q, want only %q", got, want)
	}
	st := f.writtenStatus().Status
	if len(st.Active) != 1 || st.Active[0].Name != jobName(topOfHour) || st.ActiveCount != 1 {
		t.Errorf("active = %+v (count %d), want the new Job", st.Active, st.ActiveCount)
	}
	if st.LastScheduleTime == nil || !st.LastScheduleTime.Equal(&metav1.Time{Time: topOfHour}) {
		t.Errorf("lastScheduleTime = %v, want %v", st.LastScheduleTime, topOfHour)
	}
	if cond := meta.FindStatusCondition(st.Conditions, cronv1.ConditionLastRunStarted); cond == nil || cond.Status != metav1.ConditionTrue {
		t.Errorf("LastRunStarted = %+v, want True", cond)
	}
	// Its Event waits for the queue to drain (TestEventsWaitBehindQueuedCronJobs).
	c.recordHeldEvents(ctx, time.Time{})
	if got := f.events(); !slices.Equal(got, []string{"Normal " + planner.ReasonSuccessfulCreate}) {
		t.Errorf("events %q, want one SuccessfulCreate", got)
	}
}

// With nothing else queued the status is written in the same sync.
func TestStatusWrittenAtOnceWhenNothingWaits(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := newFixture(t, at(time.Second))
	f.cronJob = newCronJob()
	c, _, _ := f.newController(ctx)
	if _, err := c.syncHandler(ctx, cache.MetaObjectToName(f.cronJob)); err != nil {
		t.Fatal(err)
	}
	want := []string{"create jobs default/" + jobName(topOfHour), "update cronjobs/status default/cj"}
	if got := describe(append(f.kubeclient.Actions(), f.client.Actions()...), false); !slices.Equal(got, want) {
		t.Errorf("sync did %q, want %q", got, want)
	}
}

// A status still deferred when the workers stop is written before Run
// returns.
func TestDeferredStatusFlushedAtShutdown(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := newFixture(t, at(time.Second))
	f.cronJob = newCronJob()
	c, _, _ := f.newController(ctx)
	key := cache.MetaObjectToName(f.cronJob)
	syncInABurst(t, ctx, c, key)
	if f.writtenStatus() != nil {
		t.Fatal("status written at once; the case tests nothing")
	}
	c.flushDeferred(ctx)
	st := f.writtenStatus()
	if st == nil || len(st.Status.Active) != 1 || st.Status.Active[0].Name != jobName(topOfHour) {
		t.Fatalf("flushed status = %+v, want the new Job active", st)
	}
}

// twoRefusedWritesAfterAScheduleChange is a CronJob at 10:05 whose schedule
// was changed at 09:50 from previous to "*/30 * * * *" (catchUpPolicy
// None), synced twice with each status write refused (a conflict, until
// stopConflicts): at 10:05 the 10:00 run is five minutes late, missed, and
// the status is kept; at 10:06 the retry settles past 09:50 and prunes the
// old schedule.
func twoRefusedWritesAfterAScheduleChange(t *testing.T, previous string) (
	ctx context.Context, f *fixture, c *Controller, cronFactory informers.SharedInformerFactory, key cache.ObjectName, stopConflicts func(),
) {
	t.Helper()
	_, ctx = ktesting.NewTestContext(t)
	f = newFixture(t, at(5*time.Minute)) // 10:05
	f.cronJob = newCronJob(withSchedule("*/30 * * * *"), lastScheduled(at(-time.Hour)), inForce("*/30 * * * *", "UTC"),
		catchUp(cronv1.CatchUpNone, nil),
		func(cj *cronv1.CronJob) {
			cj.Generation = 2
			cj.Status.ObservedGeneration = 2
			cj.Status.PreviousSchedules = []cronv1.PreviousSchedule{{Schedule: previous, TimeZone: "UTC", Until: metav1.NewTime(at(-10 * time.Minute))}}
			cj.Status.ScheduleChangeTime = &metav1.Time{Time: at(-10 * time.Minute)}
		})
	c, _, cronFactory = f.newController(ctx)
	stopConflicts = conflictOnStatus(f)
	key = cache.MetaObjectToName(f.cronJob)
	syncWantConflict(t, ctx, c, key, "sync 1")
	f.clock.Step(time.Minute)
	syncWantConflict(t, ctx, c, key, "sync 2")
	return ctx, f, c, cronFactory, key, stopConflicts
}

// A clean stop (a rolling update) writes no deferred decision that a spec
// edit overtook as it was: a sync at 10:00:30 starts a run-now Job in a
// burst and defers its status, having counted the 10:00 run late (deadline
// 10 s); the user raises the deadline to 600 s before the shutdown flush.
// The flush judges that decision again under the new spec, as a sync does,
// so after the restart the 10:00 run starts.
func TestShutdownFlushRejudgesADecisionAnEditOvertook(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := newFixture(t, at(30*time.Second))
	f.cronJob = newCronJob(lastScheduled(at(-time.Hour)), deadline(10), func(cj *cronv1.CronJob) {
		cj.Annotations = map[string]string{cronv1.RunNowAnnotation: "one"}
	})
	c, _, cronFactory := f.newController(ctx)
	key := cache.MetaObjectToName(f.cronJob)
	c.queue.Add(cache.ObjectName{Namespace: "default", Name: "other"})
	if _, err := c.syncHandler(ctx, key); err != nil {
		t.Fatal(err)
	}
	if f.writtenStatus() != nil {
		t.Fatal("status written at once; the case tests nothing")
	}

	edited := f.cronJob.DeepCopy()
	edited.Generation = 2
	edited.Spec.StartingDeadlineSeconds = ptr.To[int64](600)
	cacheCronJob(t, cronFactory, edited)
	c.flushDeferred(ctx)
	written := f.writtenStatus()
	if written == nil {
		t.Fatal("the flush wrote nothing")
	}
	if n := missedCount(written.Status, cronv1.MissedDeadlineExceeded); n != 0 {
		t.Errorf("flushed status counts %d runs DeadlineExceeded, judged under the old deadline", n)
	}
	if written.Status.LastRunNow != "one" {
		t.Errorf("flushed status lastRunNow %q, want the run-now request handled", written.Status.LastRunNow)
	}

	// The restart: a new controller on the stored status and the Jobs.
	jobs, err := f.kubeclient.BatchV1().Jobs("default").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	g := newFixture(t, at(31*time.Second))
	g.cronJob = edited.DeepCopy()
	g.cronJob.Status = written.Status
	for i := range jobs.Items {
		g.jobs = append(g.jobs, &jobs.Items[i])
	}
	restarted, _, _ := g.newController(ctx)
	if _, err := restarted.syncHandler(ctx, key); err != nil {
		t.Fatal(err)
	}
	created := describe(g.kubeclient.Actions(), true)
	if !slices.Contains(created, "create jobs default/"+jobName(topOfHour)) || slices.ContainsFunc(created, func(s string) bool { return s == "create jobs default/"+jobs.Items[0].Name }) {
		t.Errorf("after the restart the controller did %q, want the 10:00 run started and the run-now Job not again", created)
	}
}
