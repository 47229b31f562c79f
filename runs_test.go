package main

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	core "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2/ktesting"
	"k8s.io/utils/ptr"

	cronv1 "github.com/cronjob-controller/cronjob-controller/pkg/apis/batch/v1"
)

// The cases in this file each broke the promise that every due run starts
// exactly once, in a corner the other tests did not reach. Each failed
// before its fix.

func inZone(zone string) func(*cronv1.CronJob) {
	return func(cj *cronv1.CronJob) { cj.Spec.TimeZone = ptr.To(zone) }
}

// A schedule edit the controller first sees after a run fell due (a
// restart, a failover, a long queue): a time both schedules name is owed as
// usual; a time only one of them names is not a run.
func TestEditSeenLate(t *testing.T) {
	cases := []struct {
		name     string
		old      string // resolved schedule the status says was in force, in UTC
		oldZone  string
		cronJob  *cronv1.CronJob
		wantJobs []string
	}{
		{"same schedule as a descriptor", "0 * * * *", "UTC", newCronJob(withSchedule("@hourly")), []string{jobName(topOfHour)}},
		{"extra spaces", "0 * * * *", "UTC", newCronJob(withSchedule("0  *  * * *")), []string{jobName(topOfHour)}},
		{"UTC to Etc/UTC", "0 * * * *", "UTC", newCronJob(inZone("Etc/UTC")), []string{jobName(topOfHour)}},
		{"hourly to every two hours, at 10:00", "0 * * * *", "UTC", newCronJob(withSchedule("0 */2 * * *")), []string{jobName(topOfHour)}},
		{"hourly to a weekday list naming Friday 10:00", "0 * * * *", "UTC", newCronJob(withSchedule("0 10 * * MON-FRI")), []string{jobName(topOfHour)}},
		{"only the new schedule names 10:00", "30 * * * *", "UTC", newCronJob(), nil},
		{"only the old schedule names 10:00", "0 * * * *", "UTC", newCronJob(withSchedule("30 * * * *")), nil},
		{"same wall clock, another zone", "0 10 * * *", "Europe/Berlin", newCronJob(withSchedule("0 10 * * *")), nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, ctx := ktesting.NewTestContext(t)
			f := newFixture(t, at(5*time.Minute))
			f.cronJob = tc.cronJob
			lastScheduled(at(-time.Hour))(f.cronJob)
			if tc.name == "only the new schedule names 10:00" {
				lastScheduled(at(-30 * time.Minute))(f.cronJob)
			}
			inForce(tc.old, tc.oldZone)(f.cronJob)
			c, _, _ := f.newController(ctx)
			if _, err := c.syncHandler(ctx, cache.MetaObjectToName(f.cronJob)); err != nil {
				t.Fatal(err)
			}
			if got := created(f); !slices.Equal(got, tc.wantJobs) {
				t.Errorf("created %q, want %q", got, tc.wantJobs)
			}
		})
	}
}

// The run both schedules name stays owed when the sync that saw the edit
// could not start it: the retry starts it, although the edit is recorded.
func TestEditSeenLateSurvivesAFailedCreate(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := newFixture(t, at(5*time.Minute))
	f.cronJob = newCronJob(withSchedule("@hourly"), lastScheduled(at(-time.Hour)), inForce("0 * * * *", "UTC"))
	c, _, cronFactory := f.newController(ctx)
	failing := true
	failJobCreates(f, func(string) error {
		if failing {
			return apierrors.NewInternalError(errors.New("etcd is sad"))
		}
		return nil
	})
	key := cache.MetaObjectToName(f.cronJob)
	if _, err := c.syncHandler(ctx, key); err == nil {
		t.Fatal("the failed create was not reported")
	}
	if w := f.writtenStatus(); w != nil {
		cacheCronJob(t, cronFactory, w)
	}
	failing = false
	f.kubeclient.ClearActions()
	f.clock.Step(10 * time.Second)
	if _, err := c.syncHandler(ctx, key); err != nil {
		t.Fatal(err)
	}
	if got := created(f); !slices.Equal(got, []string{jobName(topOfHour)}) {
		t.Errorf("the retry created %q, want the 10:00 run", got)
	}
}

// Fixing an unusable schedule starts nothing for a time before the fix: the
// README promises no surprise runs.
func TestFixingAScheduleIsNoSurprise(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := newFixture(t, at(-30*time.Minute)) // 09:30
	f.cronJob = newCronJob(withSchedule("every hour please"), lastScheduled(at(-2*time.Hour)))
	c, _, cronFactory := f.newController(ctx)
	cj := syncs(t, ctx, f, c, cronFactory)
	if cond := meta.FindStatusCondition(cj.Status.Conditions, cronv1.ConditionScheduleValid); cond == nil || cond.Status != metav1.ConditionFalse {
		t.Fatalf("ScheduleValid = %+v, want False", cond)
	}

	// Fixed at 10:05, after 10:00 passed under the broken schedule.
	f.clock.SetTime(at(5 * time.Minute))
	fixed := cj.DeepCopy()
	fixed.Spec.Schedule = "0 * * * *"
	fixed.Generation++
	cacheCronJob(t, cronFactory, fixed)
	f.kubeclient.ClearActions()
	cj = syncs(t, ctx, f, c, cronFactory)
	if got := created(f); len(got) != 0 {
		t.Errorf("the fix started %q", got)
	}
	if cj.Status.NextScheduleTime == nil || !cj.Status.NextScheduleTime.Time.Equal(at(time.Hour)) {
		t.Errorf("next schedule %v, want 11:00", cj.Status.NextScheduleTime)
	}
	f.clock.SetTime(at(time.Hour + time.Second))
	syncs(t, ctx, f, c, cronFactory)
	if got := created(f); !slices.Equal(got, []string{jobName(at(time.Hour))}) {
		t.Errorf("at 11:00: created %q, want the 11:00 run", got)
	}
}

// Replace with the status write deferred behind the queue: the next sync,
// on a cache that still shows the deleted Job, does not adopt it back.
func TestReplaceDoesNotAdoptTheJobItDeleted(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := newFixture(t, at(5*time.Second))
	withRunningJob(f, cronv1.ReplaceConcurrent)
	prev := at(-time.Hour)
	c, _, _ := f.newController(ctx)
	key := cache.MetaObjectToName(f.cronJob)
	syncInABurst(t, ctx, c, key)
	if got := describe(f.kubeclient.Actions(), true); !slices.Equal(got, []string{"delete jobs default/" + jobName(prev), "create jobs default/" + jobName(topOfHour)}) {
		t.Fatalf("first sync: %q", got)
	}
	for c.queue.Len() > 0 {
		k, _ := c.queue.Get()
		c.queue.Done(k)
	}
	f.clock.Step(time.Second)
	w := syncWantStatus(t, ctx, f, c, key)
	var active []string
	for _, r := range w.Status.Active {
		active = append(active, r.Name)
	}
	if !slices.Equal(active, []string{jobName(topOfHour)}) {
		t.Errorf("status.active = %q, want only the 10:00 run", active)
	}
}

// LastRunStarted says when the latest due run did not start, with why.
func TestLastRunStartedWhenTheRunDidNotStart(t *testing.T) {
	prev := at(-time.Hour)
	invalid := apierrors.NewInvalid(schema.GroupKind{Group: "batch", Kind: "Job"}, jobName(topOfHour), nil)
	foreign := newJob(topOfHour, running, func(j *batchv1.Job) { j.OwnerReferences = nil })
	cases := []struct {
		name       string
		createErr  error
		jobs       []*batchv1.Job
		wantReason string
	}{
		{"the Job API rejected the Job", invalid, nil, "JobRejected"},
		{"a Job the CronJob does not own holds the name", nil, []*batchv1.Job{foreign}, "NameTaken"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, ctx := ktesting.NewTestContext(t)
			f := newFixture(t, at(5*time.Second))
			f.cronJob = newCronJob(lastScheduled(prev), func(cj *cronv1.CronJob) {
				cj.Status.Conditions = []metav1.Condition{{
					Type: cronv1.ConditionLastRunStarted, Status: metav1.ConditionTrue, Reason: "Started",
					Message: "Job cj-1 is the run of 09:00", LastTransitionTime: metav1.NewTime(prev),
				}}
			})
			f.jobs = tc.jobs
			c, _, _ := f.newController(ctx)
			if tc.createErr != nil {
				failAllJobCreates(f, tc.createErr)
			}
			if _, err := c.syncHandler(ctx, cache.MetaObjectToName(f.cronJob)); err != nil {
				t.Fatal(err)
			}
			w := f.writtenStatus()
			if w == nil {
				t.Fatal("no status written")
			}
			cond := meta.FindStatusCondition(w.Status.Conditions, cronv1.ConditionLastRunStarted)
			if cond == nil || cond.Status != metav1.ConditionFalse || cond.Reason != tc.wantReason || !strings.Contains(cond.Message, topOfHour.Format(time.RFC3339)) {
				t.Errorf("LastRunStarted = %+v, want False/%s naming the 10:00 run", cond, tc.wantReason)
			}
			if !slices.ContainsFunc(w.Status.MissedRuns, func(m cronv1.MissedRuns) bool { return m.Reason == tc.wantReason && m.Count == 1 }) {
				t.Errorf("missedRuns = %+v, want one %s", w.Status.MissedRuns, tc.wantReason)
			}
		})
	}
}

// catchUpPolicy All: a run whose name a foreign Job holds is counted and
// passed over; every other missed run starts, in the one sync.
func TestCatchUpPastATakenName(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := newFixture(t, at(5*time.Second))
	f.cronJob = newCronJob(lastScheduled(at(-4*time.Hour)), catchUp(cronv1.CatchUpAll, nil))
	f.jobs = []*batchv1.Job{newJob(at(-2*time.Hour), running, func(j *batchv1.Job) { j.OwnerReferences[0].UID = "someone-else" })}
	c, _, _ := f.newController(ctx)
	if _, err := c.syncHandler(ctx, cache.MetaObjectToName(f.cronJob)); err != nil {
		t.Fatal(err)
	}
	want := []string{jobName(at(-3 * time.Hour)), jobName(at(-time.Hour)), jobName(topOfHour)}
	if got := created(f); !slices.Equal(got, want) {
		t.Errorf("created %q, want %q", got, want)
	}
	w := f.writtenStatus()
	if w == nil || !w.Status.LastScheduleTime.Time.Equal(topOfHour) ||
		!slices.ContainsFunc(w.Status.MissedRuns, func(m cronv1.MissedRuns) bool { return m.Reason == "NameTaken" && m.Count == 1 }) {
		t.Errorf("status %+v, want 10:00 last and the 08:00 run counted as NameTaken", w)
	}
}

// Under Forbid, a run held back while the earlier Job runs starts when that
// Job finishes (if it is still the latest due run), and is never counted
// as missed.
func TestForbidHeldBackRunStartsLater(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := newFixture(t, at(5*time.Second))
	withRunningJob(f, cronv1.ForbidConcurrent)
	prev := at(-time.Hour)
	c, kubeFactory, cronFactory := f.newController(ctx)
	syncs(t, ctx, f, c, cronFactory)
	if got := created(f); len(got) != 0 {
		t.Fatalf("created %q while the 09:00 Job runs", got)
	}
	f.clock.SetTime(at(20 * time.Minute))
	cacheJob(t, kubeFactory, newJob(prev, succeeded))
	cj := syncs(t, ctx, f, c, cronFactory)
	if got := created(f); !slices.Equal(got, []string{jobName(topOfHour)}) {
		t.Errorf("after the 09:00 Job finished: created %q, want the 10:00 run", got)
	}
	if len(cj.Status.MissedRuns) != 0 {
		t.Errorf("missedRuns = %+v, want none: the run started", cj.Status.MissedRuns)
	}
}

// An active Job the cache lacks and a live read cannot reach holds back
// neither the due run nor the status: it stays active, and observedGeneration
// is the generation whose spec the sync acted on.
func TestUnreadableActiveJob(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	prev := at(-time.Hour)
	f := newFixture(t, at(5*time.Second))
	f.cronJob = newCronJob(lastScheduled(prev), activeJobs(newJob(prev, running)), func(cj *cronv1.CronJob) {
		cj.Generation = 2
		cj.Status.ObservedGeneration = 1
	})
	c, _, _ := f.newController(ctx)
	f.kubeclient.PrependReactor("get", "jobs", func(core.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewServiceUnavailable("try later")
	})
	if _, err := c.syncHandler(ctx, cache.MetaObjectToName(f.cronJob)); err != nil {
		t.Fatal(err)
	}
	if got := created(f); !slices.Equal(got, []string{jobName(topOfHour)}) {
		t.Errorf("created %q, want the 10:00 run", got)
	}
	w := f.writtenStatus()
	if w == nil || len(w.Status.Active) != 2 || w.Status.ObservedGeneration != 2 {
		t.Errorf("status %+v, want both Jobs active and generation 2 observed", w)
	}
}

// No input makes a status write or an Event unbounded: a 20,000-character
// schedule or run-now value ends in a short condition and Event, and the
// run-now value still runs exactly once.
func TestLongInputsAreBounded(t *testing.T) {
	long := strings.Repeat("0 * * * * ", 2000)
	t.Run("schedule", func(t *testing.T) {
		_, ctx := ktesting.NewTestContext(t)
		f := newFixture(t, at(5*time.Second))
		f.cronJob = newCronJob(withSchedule(long))
		c, _, cronFactory := f.newController(ctx)
		cj := syncs(t, ctx, f, c, cronFactory)
		cond := meta.FindStatusCondition(cj.Status.Conditions, cronv1.ConditionScheduleValid)
		if cond == nil || cond.Status != metav1.ConditionFalse || len(cond.Message) > 1024 {
			t.Errorf("ScheduleValid = %.200v (message %d bytes), want False and short", cond, len(cond.Message))
		}
		if len(cj.Status.ResolvedSchedule) > 1024 {
			t.Errorf("status.resolvedSchedule holds %d bytes", len(cj.Status.ResolvedSchedule))
		}
		for _, e := range f.recorderMessages() {
			if len(e) > 2048 {
				t.Errorf("an Event of %d bytes", len(e))
			}
		}
	})
	t.Run("run-now value", func(t *testing.T) {
		_, ctx := ktesting.NewTestContext(t)
		f := newFixture(t, at(-30*time.Minute))
		f.cronJob = newCronJob(func(cj *cronv1.CronJob) { cj.Annotations = map[string]string{cronv1.RunNowAnnotation: long} })
		c, kubeFactory, cronFactory := f.newController(ctx)
		cj := syncs(t, ctx, f, c, cronFactory)
		if got := created(f); len(got) != 1 {
			t.Fatalf("created %q, want the one manual Job", got)
		}
		if len(cj.Status.LastRunNow) > 128 || cj.Status.LastRunNow == "" {
			t.Errorf("status.lastRunNow holds %d bytes", len(cj.Status.LastRunNow))
		}
		for _, name := range created(f) {
			j, err := f.kubeclient.BatchV1().Jobs("default").Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			cacheJob(t, kubeFactory, j)
		}
		f.kubeclient.ClearActions()
		syncs(t, ctx, f, c, cronFactory)
		if got := created(f); len(got) != 0 {
			t.Errorf("the same value ran again: %q", got)
		}
	})
}

// recorderMessages drains the fake recorder, whole messages.
func (f *fixture) recorderMessages() []string {
	var out []string
	for {
		select {
		case e := <-f.recorder.Events:
			out = append(out, e)
		default:
			return out
		}
	}
}

// A status write that fails keeps its decision for the retry, but a miss is
// a decision of the spec it was made under. When the user's edit arrives
// before the retry (here catchUpPolicy None -> Latest, which lets the 10:00
// run start 36 minutes late), the retry decides that run again under the new
// spec instead of counting it missed on the old one's word. (Model seed
// 1795428002.)
func TestEditAfterAFailedStatusWriteDecidesMissesAgain(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := newFixture(t, at(36*time.Minute))
	f.cronJob = newCronJob(lastScheduled(at(-time.Hour)), catchUp(cronv1.CatchUpNone, nil))
	c, _, cronFactory := f.newController(ctx)
	stopConflicts := conflictOnStatus(f)
	key := cache.MetaObjectToName(f.cronJob)
	syncWantConflict(t, ctx, c, key, "sync")
	if got := created(f); len(got) != 0 {
		t.Fatalf("under catchUpPolicy None a run 36 minutes late must not start, created %q", got)
	}
	cacheEdit(t, cronFactory, f.cronJob, func(cj *cronv1.CronJob) { cj.Spec.CatchUpPolicy = cronv1.CatchUpLatest })
	stopConflicts()
	f.kubeclient.ClearActions()
	if _, err := c.syncHandler(ctx, key); err != nil {
		t.Fatal(err)
	}
	if got := created(f); !slices.Equal(got, []string{jobName(topOfHour)}) {
		t.Errorf("after the edit the retry created %q, want the 10:00 run", got)
	}
}

// Under Forbid a catch-up starts the oldest run it can, one at a time. A run
// whose name a foreign Job holds cannot start, so the next one starts in the
// same sync instead of a day later. (Model seed 1795428056.)
func TestForbidCatchUpPastATakenName(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := newFixture(t, at(5*time.Second))
	f.cronJob = newCronJob(lastScheduled(at(-3*time.Hour)), catchUp(cronv1.CatchUpAll, nil), policy(cronv1.ForbidConcurrent))
	f.jobs = []*batchv1.Job{newJob(at(-2*time.Hour), running, func(j *batchv1.Job) { j.OwnerReferences[0].UID = "someone-else" })}
	c, _, _ := f.newController(ctx)
	if _, err := c.syncHandler(ctx, cache.MetaObjectToName(f.cronJob)); err != nil {
		t.Fatal(err)
	}
	if got, want := created(f), []string{jobName(at(-time.Hour))}; !slices.Equal(got, want) {
		t.Errorf("created %q, want %q: the oldest run that can start, and only it", got, want)
	}
	w := f.writtenStatus()
	if w == nil || !w.Status.LastScheduleTime.Time.Equal(at(-time.Hour)) ||
		!slices.ContainsFunc(w.Status.MissedRuns, func(m cronv1.MissedRuns) bool { return m.Reason == "NameTaken" && m.Count == 1 }) {
		t.Errorf("status %+v, want 09:00 last and the 08:00 run counted as NameTaken", w)
	}
}

// A sync whose view fails after it has taken a deferred status (here the
// lookup of a Job whose create failed is answered 503) must keep that
// status: it holds what the cache cannot show, here when the schedule edit
// was first seen. Lost, the next sync takes the edit as seen only then, and
// the run due between the two is neither started nor counted. (Model seed
// 1795535714.)
func TestFailedViewKeepsTheDeferredStatus(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := newFixture(t, at(-2*time.Minute))
	f.cronJob = newCronJob(lastScheduled(at(-30*time.Minute)), withSchedule("*/5 * * * *"), inForce("30 * * * *", "UTC"))
	c, _, _ := f.newController(ctx)
	key := cache.MetaObjectToName(f.cronJob)
	faults := injectFaults(f)
	faults["update cronjobs/status"] = true

	// 09:58: the edit from half past every hour to every five minutes is
	// seen; nothing is due (the times before it were not runs), and the
	// status recording it fails.
	if _, err := c.syncHandler(ctx, key); err == nil {
		t.Fatal("the failed status write was not reported")
	}
	// 10:00:01: the 10:00 run is due under the new schedule; its create
	// fails without saying whether it was applied, and so does the status.
	f.clock.SetTime(at(time.Second))
	faults["create jobs"] = true
	if _, err := c.syncHandler(ctx, key); err == nil {
		t.Fatal("the failed create was not reported")
	}
	// 10:00:03: the lookup of that Job fails, so the sync cannot decide.
	f.clock.SetTime(at(3 * time.Second))
	faults["get jobs"] = true
	if _, err := c.syncHandler(ctx, key); err == nil {
		t.Fatal("the failed lookup was not reported")
	}
	// 10:00:05: everything answers. The Job was never made: the 10:00 run
	// starts now.
	f.clock.SetTime(at(5 * time.Second))
	clear(faults)
	f.kubeclient.ClearActions()
	if _, err := c.syncHandler(ctx, key); err != nil {
		t.Fatal(err)
	}
	if got, want := created(f), []string{jobName(at(0))}; !slices.Equal(got, want) {
		t.Errorf("created %q, want %q: the run due after the edit was seen", got, want)
	}
	w := f.writtenStatus()
	if w == nil || w.Status.ScheduleChangeTime == nil || !w.Status.ScheduleChangeTime.Time.Equal(at(-2*time.Minute)) {
		t.Errorf("written status %+v: want the edit recorded as seen at 09:58", w)
	}
}

// The same when the sync fails at its lookups of the times it settles as
// not run (a Forbid CronJob, a Job read answered 500): the status it took
// is kept again, not lost with the edit it recorded. (Model seed 8 at
// -model.lag=bounded, whose dropped decision held a run back.)
func TestAFailedLookupKeepsTheDeferredStatus(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := newFixture(t, at(-2*time.Minute))
	f.cronJob = newCronJob(lastScheduled(at(-30*time.Minute)), withSchedule("* * * * *"), inForce("30 * * * *", "UTC"),
		policy(cronv1.ForbidConcurrent))
	c, _, _ := f.newController(ctx)
	key := cache.MetaObjectToName(f.cronJob)
	faults := injectFaults(f)
	faults["update cronjobs/status"] = true

	// 09:58: the edit to every minute is seen; nothing is due, and the
	// status recording it fails: it is kept.
	if _, err := c.syncHandler(ctx, key); err == nil {
		t.Fatal("the failed status write was not reported")
	}
	// 10:03:01: 09:59 to 10:02 passed without a run; their lookups fail.
	f.clock.SetTime(at(3*time.Minute + time.Second))
	faults["get jobs"] = true
	if _, err := c.syncHandler(ctx, key); err == nil {
		t.Fatal("the failed lookups were not reported")
	}
	// 10:03:05: everything answers; the 10:03 run starts.
	f.clock.SetTime(at(3*time.Minute + 5*time.Second))
	clear(faults)
	if _, err := c.syncHandler(ctx, key); err != nil {
		t.Fatal(err)
	}
	if got, want := created(f), []string{jobName(at(3 * time.Minute))}; !slices.Equal(got, want) {
		t.Errorf("created %q, want %q: the run due after the edit was seen", got, want)
	}
}

// Under Forbid with catchUpPolicy All the owed runs are alternatives,
// oldest first. 07:00 is rejected for good (counted, given way), 08:00
// fails in a way a retry may mend: nothing later is tried, so no run is
// skipped for a later one; the retry starts 08:00 and only it.
func TestForbidCatchUpStopsAtARetryableFailure(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := newFixture(t, at(5*time.Second))
	f.cronJob = newCronJob(lastScheduled(at(-4*time.Hour)), catchUp(cronv1.CatchUpAll, nil), policy(cronv1.ForbidConcurrent))
	c, _, cronFactory := f.newController(ctx)
	failing := true
	failJobCreates(f, func(name string) error {
		switch name {
		case jobName(at(-3 * time.Hour)):
			return apierrors.NewInvalid(batchv1.SchemeGroupVersion.WithKind("Job").GroupKind(), "x", nil)
		case jobName(at(-2 * time.Hour)):
			if failing {
				return apierrors.NewInternalError(errors.New("etcd is sad"))
			}
		}
		return nil
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

// A template the Job API rejects under Forbid + catchUpPolicy All with
// catchUpLimit 100 makes 100 create calls in one sync (as Allow does);
// each run is counted once, and the next sync makes no call.
func TestForbidRejectedTemplateCountsEachRunOnce(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := newFixture(t, at(5*time.Second))
	f.cronJob = newCronJob(lastScheduled(at(-100*time.Hour)), catchUp(cronv1.CatchUpAll, ptr.To[int32](100)), policy(cronv1.ForbidConcurrent))
	c, _, cronFactory := f.newController(ctx)
	failAllJobCreates(f, apierrors.NewInvalid(batchv1.SchemeGroupVersion.WithKind("Job").GroupKind(), "x", nil))
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
