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
	core "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2/ktesting"

	cronv1 "github.com/cronjob-controller/cronjob-controller/pkg/apis/batch/v1"
	"github.com/cronjob-controller/cronjob-controller/pkg/planner"
)

func withMaxRuns(n int64) func(*cronv1.CronJob) {
	return func(cj *cronv1.CronJob) { cj.Spec.MaxRuns = &n }
}

// wantMaxRunsReached fails the test unless st counts n runs and says, in
// Expired and Ready, that maxRuns is reached, with no next time.
func wantMaxRunsReached(t *testing.T, st cronv1.CronJobStatus, n int64) {
	t.Helper()
	expired := meta.FindStatusCondition(st.Conditions, cronv1.ConditionExpired)
	ready := meta.FindStatusCondition(st.Conditions, cronv1.ConditionReady)
	if st.ScheduledRunCount != n || expired == nil || expired.Reason != planner.ReasonMaxRunsReached ||
		ready == nil || ready.Status != "False" || ready.Reason != planner.ReasonMaxRunsReached || st.NextScheduleTime != nil {
		t.Errorf("status: count %d, Expired %+v, Ready %+v, next %v; want %d, MaxRunsReached, no next time",
			st.ScheduledRunCount, expired, ready, st.NextScheduleTime, n)
	}
}

// maxRuns 2. The 10:00 run's status write is refused (a conflict) and the
// controller restarts before retrying it: the next one finds the 10:00 Job
// and counts it, once, starts 11:00, the last, and says so. Syncs from
// stale caches after that (a standby whose CronJob cache still shows the
// status from before both runs; one whose Job cache lacks the 11:00 Job)
// start nothing and count nothing again.
func TestMaxRunsCountsARunOnceThroughALostStatusWrite(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := newFixture(t, at(5*time.Second))
	f.cronJob = newCronJob(lastScheduled(at(-time.Hour)), withMaxRuns(2))
	before := f.cronJob.DeepCopy()
	c, _, _ := f.newController(ctx)
	key := cache.MetaObjectToName(f.cronJob)
	stop := conflictOnStatus(f)
	syncWantConflict(t, ctx, c, key, "the 10:00 sync")
	if got := created(f); !slices.Equal(got, []string{jobName(topOfHour)}) {
		t.Fatalf("10:00: created %q, want the 10:00 run", got)
	}
	stop()

	f.clock.SetTime(at(time.Hour + 5*time.Second))
	c, _, _ = restart(t, ctx, f)
	w := syncWantStatus(t, ctx, f, c, key)
	if got := created(f); !slices.Equal(got, []string{jobName(at(time.Hour))}) {
		t.Fatalf("11:00: created %q, want the 11:00 run", got)
	}
	wantMaxRunsReached(t, w.Status, 2)

	for _, stale := range []string{"CronJob cache from before both runs", "Job cache without the 11:00 Job"} {
		f.clock.SetTime(f.clock.Now().Add(time.Hour))
		c, kubeFactory, cronFactory := restart(t, ctx, f)
		if stale == "CronJob cache from before both runs" {
			cacheCronJob(t, cronFactory, before)
		} else {
			last := liveJob(t, ctx, f, jobName(at(time.Hour)))
			uncacheJob(t, kubeFactory, last)
		}
		c.syncHandler(ctx, key) //nolint:errcheck // what matters is what it starts and what it would write
		if got := created(f); len(got) != 0 {
			t.Errorf("%s: created %q, want none", stale, got)
		}
		if w := f.writtenStatus(); w != nil {
			wantMaxRunsReached(t, w.Status, 2)
		}
	}
}

// maxRuns 2. The 10:00 run's status write is refused and the controller
// crashes before retrying it; the next leader's Job cache lacks the 10:00
// Job (a hung watch, past the own-writes window). At 11:00 it must not
// take 10:00 for a missed run and 11:00 for the first: before it settles a
// time as not run it looks up that time's Job on the API server, finds
// the 10:00 Job, counts it, starts 11:00 as the last run, and at 12:00
// starts nothing.
func TestMaxRunsCountsARunWhoseJobTheNextLeadersCacheLacks(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := newFixture(t, at(5*time.Second))
	f.cronJob = newCronJob(lastScheduled(at(-time.Hour)), withMaxRuns(2))
	c, _, _ := f.newController(ctx)
	key := cache.MetaObjectToName(f.cronJob)
	ran := syncLosingStatus(t, ctx, f, c, key, "the 10:00 sync", jobName(topOfHour))

	f.clock.SetTime(at(time.Hour + 5*time.Second))
	c, kubeFactory, _ := restart(t, ctx, f)
	uncacheJob(t, kubeFactory, ran)
	w := syncWantStatus(t, ctx, f, c, key)
	if got := created(f); !slices.Equal(got, []string{jobName(at(time.Hour))}) {
		t.Fatalf("11:00: created %q, want the 11:00 run", got)
	}
	wantMaxRunsReached(t, w.Status, 2)
	if n := missedCount(w.Status, cronv1.MissedSuperseded); n != 0 {
		t.Errorf("11:00: %d runs counted superseded, want none: the 10:00 run started", n)
	}

	f.clock.SetTime(at(2*time.Hour + 5*time.Second))
	c, kubeFactory, _ = restart(t, ctx, f)
	uncacheJob(t, kubeFactory, ran)
	c.syncHandler(ctx, key) //nolint:errcheck // what matters is what it starts
	if got := created(f); len(got) != 0 {
		t.Errorf("12:00: created %q, want none: maxRuns 2 was reached", got)
	}
}

// The status write that counts a run of a CronJob with maxRuns is never
// deferred behind a burst: deferred, a crash would leave the run's Job its
// only record, and a next leader whose Job cache missed the Job (a hung
// watch) would start one run more than maxRuns.
func TestMaxRunsStatusWriteIsNotDeferred(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := newFixture(t, at(time.Second))
	f.cronJob = newCronJob(lastScheduled(at(-time.Hour)), withMaxRuns(1))
	c, _, _ := f.newController(ctx)
	key := cache.MetaObjectToName(f.cronJob)
	syncInABurst(t, ctx, c, key)
	if got := created(f); !slices.Equal(got, []string{jobName(topOfHour)}) {
		t.Fatalf("created %q, want the 10:00 run", got)
	}
	w := f.writtenStatus()
	if w == nil {
		t.Fatal("the status that counts the run was deferred")
	}
	wantMaxRunsReached(t, w.Status, 1)

	// A crash; the next leader's Job cache never got the 10:00 create.
	f.clock.SetTime(at(time.Hour + time.Second))
	c2, kubeFactory, _ := restart(t, ctx, f)
	ran := liveJob(t, ctx, f, jobName(topOfHour))
	uncacheJob(t, kubeFactory, ran)
	if _, err := c2.syncHandler(ctx, key); err != nil {
		t.Fatal(err)
	}
	if got := created(f); len(got) != 0 {
		t.Errorf("after the crash: created %q, want none: maxRuns 1 was reached", got)
	}
}

// Without maxRuns, a burst still defers the status write: the rule costs
// only the CronJobs that set it.
func TestWithoutMaxRunsABurstStillDefersTheStatusWrite(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := newFixture(t, at(time.Second))
	f.cronJob = newCronJob(lastScheduled(at(-time.Hour)))
	c, _, _ := f.newController(ctx)
	syncInABurst(t, ctx, c, cache.MetaObjectToName(f.cronJob))
	if got := created(f); !slices.Equal(got, []string{jobName(topOfHour)}) {
		t.Fatalf("created %q, want the 10:00 run", got)
	}
	if n := f.statusWrites(); n != 0 {
		t.Errorf("%d status writes, want the write deferred", n)
	}
}

// The count is exact without maxRuns too, whose status writes a burst
// defers. Under Replace, the run before's Job is deleted by the next run's
// sync; both syncs' statuses are deferred. A spec edit then sends the next
// sync back to the stored status, as does any decision dropped. The
// replaced Job is still there, being deleted: its run-record finalizer
// holds it until a stored status records its run. That sync counts both
// runs, once each, and releases the replaced Job once its status is
// stored, whether the Job cache showed the replaced Job (hourly) or only
// this process's own writes did (every minute, within the own-writes
// window).
func TestRunCountKeepsARunReplacedBehindADeferredStatus(t *testing.T) {
	for _, tc := range []struct {
		name, schedule string
		first, next    time.Time
		cached         bool
	}{
		{"the Job cache shows the replaced Job", "0 * * * *", at(5 * time.Second), at(time.Hour + 5*time.Second), true},
		{"only own writes show the replaced Job", "* * * * *", at(time.Second), at(time.Minute + 500*time.Millisecond), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, ctx := ktesting.NewTestContext(t)
			f := newFixture(t, tc.first)
			f.cronJob = newCronJob(withSchedule(tc.schedule), lastScheduled(tc.first.Truncate(time.Minute).Add(-time.Minute)),
				policy(cronv1.ReplaceConcurrent), func(cj *cronv1.CronJob) { cj.Status.ScheduledRunCount = 4 })
			c, kubeFactory, cronFactory := f.newController(ctx)
			honourFinalizers(f.kubeclient, f.clock)
			key := cache.MetaObjectToName(f.cronJob)
			replaced, last := tc.first.Truncate(time.Minute), tc.next.Truncate(time.Minute)

			syncInABurst(t, ctx, c, key)
			if tc.cached {
				cacheJob(t, kubeFactory, liveJob(t, ctx, f, jobName(replaced)))
			}
			f.clock.SetTime(tc.next)
			syncInABurst(t, ctx, c, key)
			if got := created(f); !slices.Equal(got, []string{jobName(replaced), jobName(last)}) {
				t.Fatalf("created %q, want the runs of %s and %s", got, replaced.Format(time.TimeOnly), last.Format(time.TimeOnly))
			}
			if j := liveJob(t, ctx, f, jobName(replaced)); j == nil || j.DeletionTimestamp == nil {
				t.Fatalf("the replaced Job: %v, want it deleted and held by its finalizer", j)
			}
			if n := f.statusWrites(); n != 0 {
				t.Fatalf("%d status writes, want both deferred", n)
			}

			cacheEdit(t, cronFactory, f.cronJob, func(cj *cronv1.CronJob) { cj.Spec.JobTemplate.Labels = map[string]string{"app": "hello", "tier": "2"} })
			f.clock.Step(100 * time.Millisecond)
			w := syncWantStatus(t, ctx, f, c, key)
			if lst := w.Status.LastScheduleTime; lst == nil || !lst.Time.Equal(last) || w.Status.ScheduledRunCount != 6 {
				t.Errorf("lastScheduleTime %v, scheduledRunCount %d; want %s and 6 (4, then the two runs)", lst, w.Status.ScheduledRunCount, last.Format(time.TimeOnly))
			}
			if j := liveJob(t, ctx, f, jobName(replaced)); j != nil {
				t.Errorf("the replaced Job is still held (finalizers %v) after the status write that records its run", j.Finalizers)
			}
		})
	}
}

// maxRuns 2. The 10:00 run starts; its status write is refused (the user's
// edit setting spec.suspendUntil 10:50 conflicts with it) and the
// controller crashes before retrying it. The next leader, at 10:00:30,
// its Job cache lacking the 10:00 Job, settles 10:00 as held by
// suspendUntil: a time settled as not run (held), so it must read the
// 10:00 Job first and count the run. 11:00 is then the last run, and 12:00
// starts nothing.
func TestMaxRunsCountsARunWhoseTimeASuspendUntilSetAfterItsStartHolds(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := newFixture(t, at(5*time.Second))
	f.cronJob = newCronJob(lastScheduled(at(-time.Hour)), withMaxRuns(2))
	c, _, _ := f.newController(ctx)
	key := cache.MetaObjectToName(f.cronJob)
	ran := syncLosingStatus(t, ctx, f, c, key, "the 10:00 sync", jobName(topOfHour))
	live, err := f.client.BatchV1().CronJobs("default").Get(ctx, "cj", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	live.Generation++
	live.Spec.SuspendUntil = &metav1.Time{Time: at(50 * time.Minute)}
	if _, err := f.client.BatchV1().CronJobs("default").Update(ctx, live, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}

	for _, now := range []time.Time{at(30 * time.Second), at(time.Hour + 5*time.Second), at(2*time.Hour + 5*time.Second)} {
		f.clock.SetTime(now)
		c, kubeFactory, _ := restart(t, ctx, f)
		uncacheJob(t, kubeFactory, ran)
		c.syncHandler(ctx, key) //nolint:errcheck // what matters is what it starts and counts
		if w := f.writtenStatus(); now.Equal(at(time.Hour+5*time.Second)) && w != nil {
			wantMaxRunsReached(t, w.Status, 2)
		}
	}
	var all []string
	jobs, err := f.kubeclient.BatchV1().Jobs("default").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, j := range jobs.Items {
		all = append(all, j.Name)
	}
	if len(all) > 2 {
		t.Errorf("Jobs %q: %d scheduled runs started, want at most maxRuns (2)", all, len(all))
	}
}

// The cost side of the lookups: a CronJob with maxRuns that runs at each
// of its times settles no time as not run, and its syncs read no Job from
// the API server (docs/features.md, Run limits: "never on a CronJob that
// runs at each of its times").
func TestMaxRunsCostsNoLookupWhileItRunsAtEachTime(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := newFixture(t, at(5*time.Second))
	f.cronJob = newCronJob(lastScheduled(at(-time.Hour)), withMaxRuns(5))
	c, kubeFactory, cronFactory := f.newController(ctx)
	key := cache.MetaObjectToName(f.cronJob)
	for i := range 3 {
		f.clock.SetTime(at(time.Duration(i)*time.Hour + 5*time.Second))
		f.kubeclient.ClearActions()
		w := syncWantStatus(t, ctx, f, c, key)
		var gets []string
		for _, a := range describe(f.kubeclient.Actions(), false) {
			if strings.HasPrefix(a, "get jobs") {
				gets = append(gets, a)
			}
		}
		cacheCronJob(t, cronFactory, w)
		cacheJob(t, kubeFactory, liveJob(t, ctx, f, jobName(at(time.Duration(i)*time.Hour))))
		if len(gets) != 0 || w.Status.ScheduledRunCount != int64(i+1) {
			t.Errorf("sync %d: reads %q, count %d; want no read and %d runs counted", i, gets, w.Status.ScheduledRunCount, i+1)
		}
	}
}

// maxRuns 500, every minute, the controller back after two hours down:
// each sync looks up the Jobs of the 101 times it passes over before it
// starts the one due. The API server fails one read of a Job in fifty (as
// it may while it recovers from the same outage). Ten syncs make 500
// reads, 490 of them answered, almost five times the 101 lookups needed;
// but a failed lookup fails the sync and throws away the answers before
// it, and the retry asks them all again, so no sync gets through and the
// due run never starts. (With failures at random instead, a sync gets
// through with odds of (1-rate)^101: 13% at 2%, 0.6% at 5%.) Before the
// lookups no read stood in the due run's way.
func TestMaxRunsStartsTheDueRunThoughOneJobReadInFiftyFails(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := newFixture(t, at(5*time.Second))
	f.cronJob = newCronJob(withSchedule("* * * * *"), lastScheduled(at(-2*time.Hour)), withMaxRuns(500))
	c, _, _ := f.newController(ctx)
	key := cache.MetaObjectToName(f.cronJob)
	reads := 0
	f.kubeclient.PrependReactor("get", "jobs", func(core.Action) (bool, runtime.Object, error) {
		reads++
		if reads%50 == 0 {
			return true, nil, apierrors.NewInternalError(errors.New("etcd leader changed"))
		}
		return false, nil, nil
	})
	for i := 0; i < 10 && len(created(f)) == 0; i++ {
		c.syncHandler(ctx, key) //nolint:errcheck // a retry, as after the backoff
		f.clock.Step(time.Second)
	}
	if got := created(f); !slices.Equal(got, []string{jobName(topOfHour)}) {
		t.Errorf("after ten syncs (%d Job reads): created %q, want the 10:00 run", reads, got)
	}
}

// maxRuns 2. The 10:00 run starts; its status write is refused (the user's
// edit of the schedule to "30 * * * *" conflicts with it) and the
// controller crashes before retrying it. The next leader, at 10:30, its
// Job cache lacking the 10:00 Job (a hung watch), sees the edit and counts
// 10:00, which the new schedule refuses, as missed (ScheduleChanged): a
// time settled as not run with no lookup, so the 10:00 run is never
// counted, and 11:30 and 12:30 both start: three runs under maxRuns 2.
func TestMaxRunsCountsARunWhoseTimeAScheduleEditRefuses(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := newFixture(t, at(5*time.Second))
	f.cronJob = newCronJob(lastScheduled(at(-time.Hour)), withMaxRuns(2), inForce("0 * * * *", "UTC"))
	c, _, _ := f.newController(ctx)
	key := cache.MetaObjectToName(f.cronJob)
	ran := syncLosingStatus(t, ctx, f, c, key, "the 10:00 sync", jobName(topOfHour))
	live, err := f.client.BatchV1().CronJobs("default").Get(ctx, "cj", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	live.Generation++
	live.Spec.Schedule = "30 * * * *"
	if _, err := f.client.BatchV1().CronJobs("default").Update(ctx, live, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}

	for _, now := range []time.Time{at(30*time.Minute + 5*time.Second), at(90*time.Minute + 5*time.Second), at(150*time.Minute + 5*time.Second)} {
		f.clock.SetTime(now)
		c, kubeFactory, _ := restart(t, ctx, f)
		uncacheJob(t, kubeFactory, ran)
		c.syncHandler(ctx, key) //nolint:errcheck // what matters is what it starts and counts
	}
	jobs, err := f.kubeclient.BatchV1().Jobs("default").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var all []string
	for _, j := range jobs.Items {
		all = append(all, j.Name)
	}
	if len(all) > 2 {
		t.Errorf("Jobs %q: %d scheduled runs started, want at most maxRuns (2)", all, len(all))
	}
}

// As TestMaxRunsCountsARunWhoseTimeAScheduleEditRefuses, with the window
// edited instead of the schedule: the 10:00 run starts, its status write
// is refused and the controller crashes; the user moves spec.notBefore to
// 10:30 (postponing the CronJob). The next leader's Job cache lacks the
// 10:00 Job. 10:00 is now outside the window, so no sync settles it as not
// run, none looks its Job up, and the count ("exact whatever the informer
// caches lag", docs/features.md) leaves it out: 11:00 and 12:00 both
// start, three runs under maxRuns 2.
func TestMaxRunsCountsARunWhoseTimeAWindowEditLeavesOut(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := newFixture(t, at(5*time.Second))
	f.cronJob = newCronJob(lastScheduled(at(-time.Hour)), withMaxRuns(2), inForce("0 * * * *", "UTC"))
	c, _, _ := f.newController(ctx)
	key := cache.MetaObjectToName(f.cronJob)
	ran := syncLosingStatus(t, ctx, f, c, key, "the 10:00 sync", jobName(topOfHour))
	if ran == nil {
		t.Fatalf("created %q, want the 10:00 run", created(f))
	}
	live, err := f.client.BatchV1().CronJobs("default").Get(ctx, "cj", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	live.Generation++
	live.Spec.NotBefore = &metav1.Time{Time: at(30 * time.Minute)}
	if _, err := f.client.BatchV1().CronJobs("default").Update(ctx, live, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}

	for _, now := range []time.Time{at(time.Hour + 5*time.Second), at(2*time.Hour + 5*time.Second), at(3*time.Hour + 5*time.Second)} {
		f.clock.SetTime(now)
		c, kubeFactory, _ := restart(t, ctx, f)
		uncacheJob(t, kubeFactory, ran)
		c.syncHandler(ctx, key) //nolint:errcheck // what matters is what it starts and counts
	}
	jobs, err := f.kubeclient.BatchV1().Jobs("default").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var all []string
	for _, j := range jobs.Items {
		all = append(all, j.Name)
	}
	if len(all) > 2 {
		t.Errorf("Jobs %q: %d scheduled runs started, want at most maxRuns (2)", all, len(all))
	}
}

// lostRunAndFailedRead: last run 07:00, now 10:00:05, maxRuns limit with
// done counted. The 08:00 run's Job exists but the cache lacks it (its
// status write was lost), and the read of 09:00's Job fails until cleared.
func lostRunAndFailedRead(t *testing.T, limit, done int64) (*fixture, *Controller, cache.ObjectName, *bool) {
	_, ctx := ktesting.NewTestContext(t)
	f := newFixture(t, at(5*time.Second))
	f.cronJob = newCronJob(lastScheduled(at(-3*time.Hour)), withMaxRuns(limit), func(cj *cronv1.CronJob) { cj.Status.ScheduledRunCount = done })
	f.uncachedJobs = []*batchv1.Job{newJob(at(-2*time.Hour), succeeded, holdingRecord)}
	c, _, _ := f.newController(ctx)
	return f, c, cache.MetaObjectToName(f.cronJob), failJobRead(f, jobName(at(-time.Hour)))
}

// maxRuns 2 with 1 counted: the lookups find the lost 08:00 run, the last
// one, but the read of 09:00's Job fails. The sync fails before any create
// or status write, and its retry counts 08:00 and starts nothing: 09:00 and
// 10:00 come after the last run.
func TestMaxRunsStartsNoRunPastTheLimitWhenOneLookupOfSeveralFails(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f, c, key, failing := lostRunAndFailedRead(t, 2, 1)
	if _, err := c.syncHandler(ctx, key); err == nil {
		t.Fatal("the failed lookup was not reported")
	}
	if got := created(f); len(got) != 0 {
		t.Errorf("the failed sync created %q", got)
	}
	if w := f.writtenStatus(); w != nil {
		t.Errorf("the failed sync wrote a status %+v", w.Status)
	}
	*failing = false
	f.clock.Step(time.Second)
	w := syncWantStatus(t, ctx, f, c, key)
	if got := created(f); len(got) != 0 {
		t.Errorf("created %q past the limit", got)
	}
	wantMaxRunsReached(t, w.Status, 2)
	if len(w.Status.MissedRuns) != 0 {
		t.Errorf("missedRuns %+v: 09:00 comes after the last run, no run", w.Status.MissedRuns)
	}
}

// The same with runs left: the failed sync still wakes for the next run,
// and its retry counts 08:00 (found) and 10:00 (started) once each and
// 09:00 missed once; a further sync changes nothing.
func TestARetryAfterAPartlyFailedLookupCountsEachRunOnce(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f, c, key, failing := lostRunAndFailedRead(t, 10, 1)
	d, err := c.syncHandler(ctx, key)
	if err == nil {
		t.Fatal("the failed lookup was not reported")
	}
	if d <= 0 || d > time.Hour {
		t.Errorf("the failed sync asks to wake in %v, want by 11:00", d)
	}
	*failing = false
	f.clock.Step(time.Second)
	w := syncWantStatus(t, ctx, f, c, key)
	if got, want := created(f), []string{jobName(at(0))}; !slices.Equal(got, want) {
		t.Errorf("created %q, want %q", got, want)
	}
	if w.Status.ScheduledRunCount != 3 || missedCount(w.Status, cronv1.MissedSuperseded) != 1 || len(w.Status.MissedRuns) != 1 {
		t.Errorf("count %d, missed %+v; want 3 (08:00 and 10:00 added) and 09:00 Superseded once", w.Status.ScheduledRunCount, w.Status.MissedRuns)
	}
	f.clock.Step(time.Second)
	if _, err := c.syncHandler(ctx, key); err != nil {
		t.Fatal(err)
	}
	if w2 := f.writtenStatus(); w2 != nil && (w2.Status.ScheduledRunCount != 3 || missedCount(w2.Status, cronv1.MissedSuperseded) != 1) {
		t.Errorf("a further sync changed the counts: %d %+v", w2.Status.ScheduledRunCount, w2.Status.MissedRuns)
	}
}

// A Job whose read failed is looked up again, not remembered as absent:
// the 08:00 and 09:00 runs' Jobs exist but the cache lacks both, and the
// read of 09:00's fails once. The retry finds both, counts them with 10:00
// (started), and counts no run missed.
func TestAJobWhoseReadFailedIsFoundOnTheRetryNotCountedMissed(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := newFixture(t, at(5*time.Second))
	f.cronJob = newCronJob(lastScheduled(at(-3*time.Hour)), withMaxRuns(10), func(cj *cronv1.CronJob) { cj.Status.ScheduledRunCount = 1 })
	f.uncachedJobs = []*batchv1.Job{newJob(at(-2*time.Hour), succeeded, holdingRecord), newJob(at(-time.Hour), succeeded, holdingRecord)}
	c, _, _ := f.newController(ctx)
	key := cache.MetaObjectToName(f.cronJob)
	failing := failJobRead(f, jobName(at(-time.Hour)))
	if _, err := c.syncHandler(ctx, key); err == nil {
		t.Fatal("the failed lookup was not reported")
	}
	*failing = false
	f.clock.Step(time.Second)
	w := syncWantStatus(t, ctx, f, c, key)
	if got, want := created(f), []string{jobName(at(0))}; !slices.Equal(got, want) {
		t.Errorf("created %q, want %q", got, want)
	}
	if w.Status.ScheduledRunCount != 4 || len(w.Status.MissedRuns) != 0 {
		t.Errorf("count %d, missed %+v; want 4 (08:00 and 09:00 found, 10:00 started) and none missed", w.Status.ScheduledRunCount, w.Status.MissedRuns)
	}
}
