package main

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/diff"
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

func naming(calendars ...string) func(*cronv1.CronJob) {
	return func(cj *cronv1.CronJob) { cj.Spec.ExcludeCalendars = calendars }
}

func freezeCalendar(ranges ...[2]string) *cronv1.Calendar {
	cal := &cronv1.Calendar{ObjectMeta: metav1.ObjectMeta{Name: "freeze", ResourceVersion: "1"}, Spec: cronv1.CalendarSpec{TimeZone: "UTC"}}
	for _, r := range ranges {
		cal.Spec.Ranges = append(cal.Spec.Ranges, cronv1.CalendarRange{Start: cronv1.CalendarTime(r[0]), End: cronv1.CalendarTime(r[1])})
	}
	return cal
}

// newCalendarController is the fixture's controller with a Calendar
// informer; cals go into its cache and the fake API server.
func (f *fixture) newCalendarController(ctx context.Context, cals ...*cronv1.Calendar) (*Controller, informers.SharedInformerFactory) {
	f.kubeclient = k8sfake.NewClientset()
	f.kubeclient.PrependReactor("create", "jobs", f.stampCreatedJob)
	var objects []runtime.Object
	if f.cronJob != nil {
		objects = append(objects, f.cronJob.DeepCopy())
	}
	for _, cal := range cals {
		objects = append(objects, cal.DeepCopy())
	}
	// The simple clientset: the field manager of NewClientset knows no
	// schema for this API's kinds, and updating a Calendar needs one.
	f.client = fake.NewSimpleClientset(objects...)
	kubeFactory := kubeinformers.NewSharedInformerFactory(f.kubeclient, 0)
	cronFactory := informers.NewSharedInformerFactory(f.client, 0)
	c, err := NewController(ctx, f.kubeclient, f.client,
		kubeFactory.Batch().V1().Jobs(), cronFactory.Batch().V1().CronJobs(), f.clock,
		WithEventRecorder(f.recorder), WithCalendars(cronFactory.Batch().V1().Calendars()))
	if err != nil {
		f.t.Fatal(err)
	}
	f.t.Cleanup(c.queue.ShutDown)
	if f.cronJob != nil {
		cacheCronJob(f.t, cronFactory, f.cronJob)
	}
	for _, cal := range cals {
		cacheCalendar(f.t, cronFactory, cal)
	}
	return c, cronFactory
}

func cacheCalendar(t testing.TB, cronFactory informers.SharedInformerFactory, cal *cronv1.Calendar) {
	t.Helper()
	if err := cronFactory.Batch().V1().Calendars().Informer().GetIndexer().Update(cal.DeepCopy()); err != nil {
		t.Fatal(err)
	}
}

// A Calendar added, changed or deleted queues the CronJobs that name it,
// and only those; a resync queues nothing.
func TestCalendarChangeQueuesItsCronJobs(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	f := newFixture(t, at(0))
	f.cronJob = newCronJob(naming("holidays", "freeze"))
	c, cronFactory := f.newCalendarController(ctx)
	other := newCronJob()
	other.Name, other.UID = "other", "other-uid"
	cacheCronJob(t, cronFactory, other)
	// Only the Calendar informer runs: the CronJob cache is as seeded, so
	// whatever the queue gets comes from Calendar events.
	calendarInformer := cronFactory.Batch().V1().Calendars().Informer()
	var wg sync.WaitGroup
	wg.Go(func() { calendarInformer.Run(ctx.Done()) })
	defer wg.Wait()
	defer cancel()
	if !cache.WaitForCacheSync(ctx.Done(), calendarInformer.HasSynced) {
		t.Fatal("the Calendar cache did not sync")
	}
	drain := func() []string {
		var keys []string
		for c.queue.Len() > 0 {
			key, _ := c.queue.Get()
			keys = append(keys, key.String())
			c.queue.Done(key)
			c.queue.Forget(key)
		}
		return keys
	}

	calendars := f.client.BatchV1().Calendars()
	cal, err := calendars.Create(ctx, freezeCalendar(), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	waitFor(ctx, t, "the add to queue the CronJob", func() bool { return c.queue.Len() > 0 })
	if keys := drain(); !slices.Equal(keys, []string{"default/cj"}) {
		t.Errorf("after the add: queued %q, want only default/cj", keys)
	}

	cal.Spec.Dates = []cronv1.CalendarDate{"2026-05-01"}
	cal.ResourceVersion = "2"
	if _, err := calendars.Update(ctx, cal, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(ctx, t, "the edit to queue the CronJob", func() bool { return c.queue.Len() > 0 })
	if keys := drain(); !slices.Equal(keys, []string{"default/cj"}) {
		t.Errorf("after the edit: queued %q, want only default/cj", keys)
	}

	// A resync hands the same object twice: nothing changed.
	same, _ := cronFactory.Batch().V1().Calendars().Lister().Get("freeze")
	c.updateCalendar(same, same)
	if c.queue.Len() != 0 {
		t.Errorf("a resync queued %q", drain())
	}

	if err := calendars.Delete(ctx, "freeze", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(ctx, t, "the delete to queue the CronJob", func() bool { return c.queue.Len() > 0 })
	if keys := drain(); !slices.Equal(keys, []string{"default/cj"}) {
		t.Errorf("after the delete: queued %q, want only default/cj", keys)
	}
}

// An edit of a Calendar takes effect at the next due time: a time the
// Calendar excluded when it was due stays excluded (it is never owed), and
// the next due time follows the edited Calendar.
func TestCalendarEditTakesEffectAtTheNextDueTime(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := newFixture(t, at(-30*time.Minute)) // 09:30
	f.cronJob = newCronJob(lastScheduled(at(-time.Hour)), naming("freeze"))
	c, cronFactory := f.newCalendarController(ctx, freezeCalendar())
	cj := syncs(t, ctx, f, c, cronFactory)
	if cond := meta.FindStatusCondition(cj.Status.Conditions, cronv1.ConditionCalendarsResolved); cond == nil || cond.Status != metav1.ConditionTrue {
		t.Fatalf("CalendarsResolved %+v, want True", cond)
	}

	// At 09:40 a freeze from 09:45 to 10:15 is added.
	f.clock.SetTime(at(-20 * time.Minute))
	frozen := freezeCalendar([2]string{"2026-05-01T09:45", "2026-05-01T10:15"})
	frozen.ResourceVersion = "2" // as the API server versions an edit
	cacheCalendar(t, cronFactory, frozen)
	syncs(t, ctx, f, c, cronFactory)
	f.clock.SetTime(at(time.Second))
	cj = syncs(t, ctx, f, c, cronFactory)
	if writes := describe(f.kubeclient.Actions(), true); len(writes) != 0 {
		t.Errorf("at 10:00, frozen: %q", writes)
	}
	if got := missedCount(cj.Status, cronv1.MissedExcluded); got != 1 {
		t.Errorf("Excluded %d, want 1", got)
	}
	if events := f.events(); !slices.Contains(events, "Normal "+planner.ReasonRunExcluded) || slices.ContainsFunc(events, func(e string) bool { return e[:7] == "Warning" }) {
		t.Errorf("events %q, want a Normal RunExcluded and no Warning", events)
	}

	// At 10:05 the freeze is lifted: 10:00 is not owed.
	f.clock.SetTime(at(5 * time.Minute))
	lifted := freezeCalendar()
	lifted.ResourceVersion = "3"
	cacheCalendar(t, cronFactory, lifted)
	cj = syncs(t, ctx, f, c, cronFactory)
	if writes := describe(f.kubeclient.Actions(), true); len(writes) != 0 {
		t.Errorf("lifting the freeze started %q", writes)
	}
	// 11:00 runs.
	f.clock.SetTime(at(time.Hour + time.Second))
	syncs(t, ctx, f, c, cronFactory)
	if writes := describe(f.kubeclient.Actions(), true); len(writes) == 0 || writes[0] != "create jobs default/"+jobName(at(time.Hour)) {
		t.Errorf("at 11:00: %q, want the 11:00 run", writes)
	}
}

// A CronJob naming a Calendar that does not exist holds its runs, loudly,
// and neither spins nor writes again while nothing changes.
func TestMissingCalendarHoldsRuns(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := newFixture(t, at(time.Second))
	f.cronJob = newCronJob(lastScheduled(at(-time.Hour)), naming("freeze"))
	c, cronFactory := f.newCalendarController(ctx)
	cj := syncs(t, ctx, f, c, cronFactory)
	if writes := describe(f.kubeclient.Actions(), true); len(writes) != 0 {
		t.Errorf("a run started without its Calendar: %q", writes)
	}
	cond := meta.FindStatusCondition(cj.Status.Conditions, cronv1.ConditionCalendarsResolved)
	if cond == nil || cond.Status != metav1.ConditionFalse || cond.Reason != planner.ReasonCalendarNotFound {
		t.Errorf("CalendarsResolved %+v, want False CalendarNotFound", cond)
	}
	if got := missedCount(cj.Status, cronv1.MissedCalendarUnresolved); got != 1 {
		t.Errorf("CalendarUnresolved %d, want 1", got)
	}
	if events := f.events(); !slices.Equal(events, []string{"Warning " + planner.ReasonCalendarNotFound, "Normal " + planner.ReasonRunHeld}) {
		t.Errorf("events %q", events)
	}

	f.clock.Step(time.Second)
	f.client.ClearActions()
	requeue, err := c.syncHandler(ctx, cache.MetaObjectToName(f.cronJob))
	if err != nil {
		t.Fatal(err)
	}
	if w := f.writtenStatus(); w != nil {
		t.Errorf("a second sync wrote the status again: %s", diff.Diff(cj.Status, w.Status))
	}
	if want := time.Hour - 2*time.Second; requeue != want {
		t.Errorf("requeue in %v, want %v (the next due time)", requeue, want)
	}
	if events := f.events(); len(events) != 0 {
		t.Errorf("a second sync emitted %q", events)
	}

	// An edit of the spec that leaves the Calendar missing: the condition
	// follows the new generation, and the Warning is not said again.
	edited := cj.DeepCopy()
	edited.Generation++
	edited.Spec.SuccessfulJobsHistoryLimit = ptr.To[int32](5)
	cacheCronJob(t, cronFactory, edited)
	f.cronJob = edited
	f.clock.Step(time.Second)
	cj = syncs(t, ctx, f, c, cronFactory)
	if cond := meta.FindStatusCondition(cj.Status.Conditions, cronv1.ConditionCalendarsResolved); cond == nil || cond.ObservedGeneration != edited.Generation {
		t.Errorf("after the edit: CalendarsResolved %+v, want it observed at generation %d", cond, edited.Generation)
	}
	if events := f.events(); len(events) != 0 {
		t.Errorf("a sync after an unrelated edit emitted %q", events)
	}
}

// The controller keeps Calendars parsed between syncs, one entry per
// Calendar the syncs found, and drops a Calendar once it is deleted (by
// its event, tombstone or not) or a sync no longer finds it.
func TestCalendarCacheFollowsTheCalendars(t *testing.T) {
	cases := []struct {
		name   string
		remove func(c *Controller, cal *cronv1.Calendar)
		// wantBeforeSync is the entries left before the next sync.
		wantBeforeSync int
	}{
		{"delete event", func(c *Controller, cal *cronv1.Calendar) { c.deleteCalendar(cal) }, 0},
		{"delete event, tombstone", func(c *Controller, cal *cronv1.Calendar) {
			c.deleteCalendar(cache.DeletedFinalStateUnknown{Key: cal.Name, Obj: cal})
		}, 0},
		{"event missed (or raced by a sync), the next sync finds it gone", func(*Controller, *cronv1.Calendar) {}, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, ctx := ktesting.NewTestContext(t)
			f := newFixture(t, at(-30*time.Minute))
			f.cronJob = newCronJob(lastScheduled(at(-time.Hour)), naming("freeze"))
			cal := freezeCalendar([2]string{"2026-05-01T09:45", "2026-05-01T10:15"})
			c, cronFactory := f.newCalendarController(ctx, cal)
			syncs(t, ctx, f, c, cronFactory)
			syncs(t, ctx, f, c, cronFactory)
			if n := c.calendarCache.Len(); n != 1 {
				t.Fatalf("after two syncs: %d Calendars cached, want 1", n)
			}
			if err := cronFactory.Batch().V1().Calendars().Informer().GetIndexer().Delete(cal); err != nil {
				t.Fatal(err)
			}
			tc.remove(c, cal)
			if n := c.calendarCache.Len(); n != tc.wantBeforeSync {
				t.Errorf("after the delete event: %d Calendars cached, want %d", n, tc.wantBeforeSync)
			}
			syncs(t, ctx, f, c, cronFactory)
			if n := c.calendarCache.Len(); n != 0 {
				t.Errorf("after the next sync: %d Calendars cached, want 0", n)
			}
		})
	}
}
