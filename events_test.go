package main

// Tests of events.go: Events held in a burst, paced, kept in order per
// CronJob, and recorded at shutdown.

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/tools/reference"
	"k8s.io/klog/v2/ktesting"

	cronv1 "github.com/cronjob-controller/cronjob-controller/pkg/apis/batch/v1"
	"github.com/cronjob-controller/cronjob-controller/pkg/planner"
)

// A CronJob with Events held must have its later Events held behind them,
// even when the hold is full: otherwise the later Event is recorded first
// and the CronJob's Events are reordered (the promise: never reordered per
// CronJob).
func TestHeldEventsKeepEachCronJobsOrderWhenTheHoldIsFull(t *testing.T) {
	f := newFixture(t, time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	f.recorder = record.NewFakeRecorder(maxHeldEvents + 10)
	c, _, _ := f.newController(context.Background())

	a := &cronv1.CronJob{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "a", UID: "uid-a"}}
	b := &cronv1.CronJob{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "b", UID: "uid-b"}}
	now := f.clock.Now()

	// a's first Event is held in a burst.
	c.report(a, &planner.Plan{Events: []planner.Event{{Type: corev1.EventTypeNormal, Reason: "First", Message: "a1"}}}, true)
	// Other CronJobs fill the hold to its bound.
	filler := make([]planner.Event, maxHeldEvents-1)
	for i := range filler {
		filler[i] = planner.Event{Type: corev1.EventTypeNormal, Reason: "Filler", Message: fmt.Sprint(i)}
	}
	if !c.heldEvents.hold(b, filler, true, now) {
		t.Fatal("filler not held")
	}
	// a's next Event, outside a burst: a still has an Event held.
	c.report(a, &planner.Plan{Events: []planner.Event{{Type: corev1.EventTypeNormal, Reason: "Second", Message: "a2"}}}, false)

	c.flushHeldEvents(context.Background())
	// a's Events in the order the recorder saw them.
	var got []string
	for _, e := range f.events() {
		if e == "Normal First" || e == "Normal Second" {
			got = append(got, e)
		}
	}
	if want := []string{"Normal First", "Normal Second"}; !slices.Equal(got, want) {
		t.Errorf("a's Events recorded as %q, want %q (later Event overtook the held one when the hold was full)", got, want)
	}
}

// In a burst an Event is a write like a Job's create: the Events of a sync
// whose status write waits behind the queue wait with it, and are recorded
// once the queue drains, never dropped.
func TestEventsWaitBehindQueuedCronJobs(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := newFixture(t, at(time.Second))
	f.cronJob = newCronJob()
	c, _, _ := f.newController(ctx)
	key := cache.MetaObjectToName(f.cronJob)
	c.queue.Add(key)
	c.queue.Add(cache.ObjectName{Namespace: "default", Name: "other"})
	feederCtx, stopFeeder := context.WithCancel(ctx)
	fed := make(chan struct{})
	go func() { defer close(fed); c.feedHeldEvents(feederCtx) }()
	defer func() { stopFeeder(); <-fed }()

	c.processNextWorkItem(ctx) // creates the Job, defers the status
	if f.writtenStatus() != nil {
		t.Fatal("status written at once; the case tests nothing")
	}
	c.processNextWorkItem(ctx) // the other CronJob; this one is queued behind it
	if got := len(c.heldEvents.events); got != 1 {
		t.Errorf("%d Events held while this CronJob waits in the queue, want its one", got)
	}
	if got := f.events(); len(got) > 0 {
		t.Errorf("events %q recorded while CronJobs wait in the queue, want none yet", got)
	}
	c.processNextWorkItem(ctx) // writes the status; the queue is empty
	if f.writtenStatus() == nil {
		t.Fatal("deferred status not written")
	}
	select {
	case e := <-f.recorder.Events:
		if !strings.HasPrefix(e, "Normal "+planner.ReasonSuccessfulCreate+" ") {
			t.Errorf("event %q once the queue drained, want SuccessfulCreate", e)
		}
	case <-time.After(wait.ForeverTestTimeout):
		t.Fatal("no Event recorded after the queue drained")
	}
}

// Held Events go to the recorder paced, on the injected clock: a burst past
// what the pace allows at once waits for the clock, and what a stopped
// feeder did not record stays held, in order, for the shutdown flush.
func TestHeldEventsArePaced(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := newFixture(t, at(time.Second))
	f.recorder = record.NewFakeRecorder(2 * heldEventsBurst)
	f.cronJob = newCronJob()
	c, _, _ := f.newController(ctx)
	c.heldEvents.pace = newPacer(f.clock, 1, 3)
	for i := range 5 {
		c.heldEvents.hold(f.cronJob, []planner.Event{{Type: "Normal", Reason: fmt.Sprint("E", i)}}, true, f.clock.Now())
	}
	waitForTimer := func(before int) {
		t.Helper()
		if err := wait.PollUntilContextTimeout(ctx, time.Millisecond, wait.ForeverTestTimeout, true, func(context.Context) (bool, error) {
			return f.clock.Waiters() > before, nil
		}); err != nil {
			t.Fatal("the pace set no timer")
		}
	}
	expect := func(i int) {
		t.Helper()
		select {
		case got := <-f.recorder.Events:
			if !strings.HasPrefix(got, fmt.Sprint("Normal E", i)) {
				t.Fatalf("event %q, want E%d", got, i)
			}
		case <-time.After(wait.ForeverTestTimeout):
			t.Fatalf("E%d not recorded", i)
		}
	}
	cut, cancel := context.WithCancel(ctx)
	done := make(chan bool)
	waiters := f.clock.Waiters()
	go func() { done <- c.recordHeldEvents(cut, time.Time{}) }()
	for i := range 3 { // the burst
		expect(i)
	}
	waitForTimer(waiters) // the fourth waits for the clock
	select {
	case got := <-f.recorder.Events:
		t.Fatalf("event %q recorded past the burst with the clock standing still", got)
	default:
	}
	f.clock.Step(time.Second)
	expect(3)
	waitForTimer(waiters) // the fifth waits
	cancel()
	if all := <-done; all {
		t.Fatal("recordHeldEvents says it recorded all five though cut off")
	}
	if got := len(c.heldEvents.events); got != 1 {
		t.Fatalf("%d Events held after the cut, want the one not recorded", got)
	}
	c.flushHeldEvents(ctx)
	expect(4)
	if n := len(c.heldEvents.perCronJob); n != 0 {
		t.Errorf("%d CronJobs still count Events held after all were recorded", n)
	}
}

// A CronJob's Events are recorded in the order they happened: once one of
// its Events is held, its later ones (of syncs outside a burst) wait behind
// it.
func TestHeldEventsKeepEachCronJobsOrder(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := newFixture(t, at(time.Second))
	f.cronJob = newCronJob()
	c, kubeFactory, _ := f.newController(ctx)
	key := cache.MetaObjectToName(f.cronJob)
	syncInABurst(t, ctx, c, key) // creates the Job in a burst
	// The Job completes before the queue drains; this sync starts nothing.
	f.clock.Step(6 * time.Minute)
	cacheJob(t, kubeFactory, newJob(topOfHour, succeeded, holdingRecord))
	if _, err := c.syncHandler(ctx, key); err != nil {
		t.Fatal(err)
	}
	if got := f.events(); len(got) > 0 {
		t.Errorf("events %q recorded ahead of the CronJob's held SuccessfulCreate", got)
	}
	c.recordHeldEvents(ctx, time.Time{})
	want := []string{"Normal " + planner.ReasonSuccessfulCreate, "Normal " + planner.ReasonSawCompletedJob}
	if got := f.events(); !slices.Equal(got, want) {
		t.Errorf("the CronJob's Events in recording order %q, want %q", got, want)
	}
	// With nothing held any more, its Events go at once again.
	c.report(f.cronJob, &planner.Plan{Events: []planner.Event{{Type: "Normal", Reason: "Later"}}}, false)
	if got := f.events(); !slices.Equal(got, []string{"Normal Later"}) {
		t.Errorf("events %q, want Later recorded at once", got)
	}
}

// Events still held when the workers stop are recorded before Run returns.
func TestHeldEventsRecordedAtShutdown(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := newFixture(t, at(time.Second))
	f.cronJob = newCronJob()
	c, _, _ := f.newController(ctx)
	key := cache.MetaObjectToName(f.cronJob)
	syncInABurst(t, ctx, c, key)
	if got := f.events(); len(got) > 0 {
		t.Fatalf("events %q recorded at once; the case tests nothing", got)
	}
	c.flushDeferred(ctx)
	if got := f.events(); !slices.Equal(got, []string{"Normal " + planner.ReasonSuccessfulCreate}) {
		t.Errorf("events %q after the shutdown flush, want one SuccessfulCreate", got)
	}
}

// A held Event names its CronJob as one recorded at once does.
func TestHeldEventNamesTheCronJob(t *testing.T) {
	cj := newCronJob()
	cj.ResourceVersion = "7"
	cj.TypeMeta = metav1.TypeMeta{} // as the cache's copies come
	want, err := reference.GetReference(scheme.Scheme, cj)
	if err != nil {
		t.Fatal(err)
	}
	if got := cronJobRef(cj); !equality.Semantic.DeepEqual(got, want) {
		t.Errorf("held Event names %+v, want %+v", got, want)
	}
}

// A queue that never drains (a fleet busy all the time) holds Events back
// for heldEventsMaxWait at most.
func TestHeldEventsGoWhileTheQueueStaysBusy(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := newFixture(t, at(time.Second))
	f.cronJob = newCronJob()
	c, _, _ := f.newController(ctx)
	c.queue.Add(cache.ObjectName{Namespace: "default", Name: "busy"})
	c.heldEvents.hold(f.cronJob, []planner.Event{{Type: "Normal", Reason: planner.ReasonSuccessfulCreate}}, true, f.clock.Now())
	waiters := f.clock.Waiters()
	feederCtx, stopFeeder := context.WithCancel(ctx)
	fed := make(chan struct{})
	go func() { defer close(fed); c.feedHeldEvents(feederCtx) }()
	defer func() { stopFeeder(); <-fed }()

	if err := wait.PollUntilContextTimeout(ctx, time.Millisecond, wait.ForeverTestTimeout, true, func(context.Context) (bool, error) {
		return f.clock.Waiters() > waiters, nil
	}); err != nil {
		t.Fatal("the feeder set no timer")
	}
	select {
	case e := <-f.recorder.Events:
		t.Fatalf("event %q recorded before its wait was over, the queue busy", e)
	default:
	}
	f.clock.Step(heldEventsMaxWait)
	select {
	case e := <-f.recorder.Events:
		if !strings.HasPrefix(e, "Normal "+planner.ReasonSuccessfulCreate+" ") {
			t.Errorf("event %q, want SuccessfulCreate", e)
		}
	case <-time.After(wait.ForeverTestTimeout):
		t.Fatalf("no Event recorded %v after it was held, the queue busy", heldEventsMaxWait)
	}
}

// Run returns promptly on cancel while the feeder waits on the pace, and
// what it had not recorded comes out once, in order, in the shutdown flush.
func TestRunStopsWhileHeldEventsWait(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	ctx, cancelRun := context.WithCancel(ctx)
	defer cancelRun()
	f := newFixture(t, at(time.Second))
	f.recorder = record.NewFakeRecorder(1000)
	f.cronJob = newCronJob()
	c, kubeFactory, cronFactory := f.newController(ctx)
	c.heldEvents.pace = newPacer(f.clock, 1, 1) // one, then the clock must move
	for i := range 3 {
		c.heldEvents.hold(f.cronJob, []planner.Event{{Type: "Normal", Reason: fmt.Sprint("E", i)}}, true, f.clock.Now())
	}
	c.heldEvents.drained()
	kubeFactory.Start(ctx.Done())
	cronFactory.Start(ctx.Done())
	defer kubeFactory.Shutdown()
	defer cronFactory.Shutdown()
	done := make(chan error)
	go func() { done <- c.Run(ctx, 1) }()
	var got []string
	select {
	case e := <-f.recorder.Events:
		got = append(got, e)
	case <-time.After(wait.ForeverTestTimeout):
		t.Fatal("the feeder recorded nothing")
	}
	cancelRun()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(wait.ForeverTestTimeout):
		t.Fatal("Run did not return with the feeder waiting on the pace")
	}
	got = append(got, f.events()...)
	var held []string
	for _, e := range got {
		if strings.HasPrefix(e, "Normal E") {
			held = append(held, strings.TrimSpace(strings.TrimPrefix(e, "Normal ")))
		}
	}
	if want := []string{"E0", "E1", "E2"}; !slices.Equal(held, want) {
		t.Errorf("events %q, want %q", held, want)
	}
}

// The feeder's tick takes only Events held heldEventsMaxWait or longer: a
// burst's young Events stay behind its creates even when a tick falls in
// the burst.
func TestHeldEventsTickTakesOnlyOldOnes(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := newFixture(t, at(time.Second))
	f.cronJob = newCronJob()
	c, _, _ := f.newController(ctx)
	other := newCronJob(func(cj *cronv1.CronJob) { cj.Name, cj.UID = "young", "young-uid" })
	c.heldEvents.hold(f.cronJob, []planner.Event{{Type: "Normal", Reason: "Old"}}, true, f.clock.Now())
	f.clock.Step(heldEventsMaxWait / 2)
	c.heldEvents.hold(other, []planner.Event{{Type: "Normal", Reason: "Young"}}, true, f.clock.Now())
	f.clock.Step(heldEventsMaxWait / 2) // a tick: Old is 10 s old, Young 5 s
	if !c.recordHeldEvents(ctx, f.clock.Now().Add(-heldEventsMaxWait)) {
		t.Fatal("recordHeldEvents cut off")
	}
	if got := f.events(); !slices.Equal(got, []string{"Normal Old"}) {
		t.Errorf("a tick recorded %q, want only the Event held %v ago", got, heldEventsMaxWait)
	}
	if got := len(c.heldEvents.events); got != 1 {
		t.Errorf("%d Events still held, want the young one", got)
	}
}
