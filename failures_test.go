package main

// Tests of spec.failurePolicy through the controller: a CronJob whose runs
// fail pauses, tries once after its cool-down, and resumes on a success;
// the state lives in status, so each step here is a new controller (a
// restart, or another leader) reading it from the API server.

import (
	"context"
	"slices"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2/ktesting"

	cronv1 "github.com/cronjob-controller/cronjob-controller/pkg/apis/batch/v1"
	"github.com/cronjob-controller/cronjob-controller/pkg/planner"
)

func withFailurePolicy(pauseAfter int32, resumeAfter time.Duration) func(*cronv1.CronJob) {
	return func(cj *cronv1.CronJob) {
		cj.Spec.FailurePolicy = &cronv1.FailurePolicy{PauseAfter: pauseAfter, ResumeAfter: &metav1.Duration{Duration: resumeAfter}}
	}
}

// breakerWalk syncs a CronJob as a new controller at each step.
type breakerWalk struct {
	t   *testing.T
	ctx context.Context
	f   *fixture
	log createLog
	// events are the Events of every step, "Type Reason".
	events []string
}

// syncAt restarts the controller at now, syncs, and returns the CronJob as
// the API server then holds it.
func (w *breakerWalk) syncAt(now time.Time) *cronv1.CronJob {
	w.t.Helper()
	w.f.clock.SetTime(now)
	c, _, _ := restart(w.t, w.ctx, w.f)
	if _, err := c.syncHandler(w.ctx, cache.ObjectName{Namespace: "default", Name: "cj"}); err != nil {
		w.t.Fatal(err)
	}
	w.log.add(w.f)
	w.events = append(w.events, w.f.events()...)
	cj, err := w.f.client.BatchV1().CronJobs("default").Get(w.ctx, "cj", metav1.GetOptions{})
	if err != nil {
		w.t.Fatal(err)
	}
	return cj
}

func (w *breakerWalk) finish(t time.Time, end batchv1.JobConditionType) {
	w.t.Helper()
	finishJobAs(w.t, w.ctx, w.f, nil, jobName(t), end)
}

func pausedReason(cj *cronv1.CronJob) string {
	c := meta.FindStatusCondition(cj.Status.Conditions, cronv1.ConditionPaused)
	if c == nil {
		return ""
	}
	return string(c.Status) + "/" + c.Reason
}

func TestFailingCronJobPausesTriesOnceAfterTheCoolDownAndResumesAcrossRestarts(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := newFixture(t, topOfHour)
	f.cronJob = newCronJob(withFailurePolicy(2, 30*time.Minute))
	f.newController(ctx)
	w := &breakerWalk{t: t, ctx: ctx, f: f, log: createLog{}}
	h := func(n int) time.Time { return at(time.Duration(n) * time.Hour) }

	w.syncAt(h(0))
	w.finish(h(0), batchv1.JobFailed)
	w.syncAt(h(1))
	w.finish(h(1), batchv1.JobFailed)
	// The second failure in a row: the 12:00 run is due, and held.
	cj := w.syncAt(h(2))
	if fs := cj.Status.FailureStreak; fs == nil || fs.Count != 2 || fs.PausedAt == nil || pausedReason(cj) != "True/"+planner.ReasonFailureStreak {
		t.Fatalf("at 12:00: failureStreak %+v, Paused %s; want paused after two failures", fs, pausedReason(cj))
	}
	// resumeAt 12:30: 13:00 is the trial, and it fails.
	cj = w.syncAt(h(3))
	if cj.Status.FailureStreak.TrialJob != jobName(h(3)) {
		t.Fatalf("at 13:00: trialJob %q, want %s", cj.Status.FailureStreak.TrialJob, jobName(h(3)))
	}
	w.finish(h(3), batchv1.JobFailed)
	cj = w.syncAt(h(3).Add(5 * time.Minute))
	if fs := cj.Status.FailureStreak; fs.Pauses != 2 || fs.ResumeAt == nil || !fs.ResumeAt.Time.Equal(h(4).Add(5*time.Minute)) {
		t.Fatalf("after the failed trial: failureStreak %+v, want pauses 2 and resumeAt 14:05 (an hour's cool-down)", fs)
	}
	// 14:00 is held; 15:00 is the next trial, and it succeeds.
	w.syncAt(h(4))
	w.syncAt(h(5))
	w.finish(h(5), batchv1.JobComplete)
	cj = w.syncAt(h(5).Add(5 * time.Minute))
	if fs := cj.Status.FailureStreak; fs.PausedAt != nil || fs.Count != 0 || pausedReason(cj) != "False/"+planner.ReasonResumed {
		t.Fatalf("after the trial succeeded: failureStreak %+v, Paused %s; want resumed", fs, pausedReason(cj))
	}
	cj = w.syncAt(h(6))

	for n := range 7 {
		want := 1
		if n == 2 || n == 4 {
			want = 0
		}
		if got := w.log[jobName(h(n))]; got != want {
			t.Errorf("%s: created %d times, want %d", jobName(h(n)), got, want)
		}
	}
	if got := missedCount(cj.Status, cronv1.MissedPaused); got != 2 {
		t.Errorf("missed Paused = %d, want 2 (12:00 and 14:00); missedRuns %+v", got, cj.Status.MissedRuns)
	}
	count := func(e string) int {
		return len(slices.DeleteFunc(slices.Clone(w.events), func(x string) bool { return x != e }))
	}
	for e, want := range map[string]int{"Warning " + planner.ReasonPaused: 2, "Normal " + planner.ReasonTrialRun: 2, "Normal " + planner.ReasonResumed: 1} {
		if got := count(e); got != want {
			t.Errorf("%d Events %q, want %d; events %q", got, e, want, w.events)
		}
	}
}

// A failure counts once across a status write deferred behind a burst, a
// write refused by a conflict and an edit: the decisions kept and judged
// again never count it twice.
func TestFailureCountsOnceAcrossADeferredWriteAConflictAndAnEdit(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := newFixture(t, at(5*time.Second))
	f.cronJob = newCronJob(lastScheduled(at(-time.Hour)), withFailurePolicy(2, 0))
	c, kubeFactory, cronFactory := f.newController(ctx)
	key := cache.MetaObjectToName(f.cronJob)
	syncInABurst(t, ctx, c, key)
	if got := created(f); len(got) != 1 || got[0] != jobName(topOfHour) {
		t.Fatalf("first sync created %q, want the 10:00 run", got)
	}
	if w := f.writtenStatus(); w != nil {
		t.Fatalf("first sync wrote the status; the case needs it deferred")
	}
	drainQueue(c)
	f.clock.Step(10 * time.Second)
	finishJobAs(t, ctx, f, kubeFactory, jobName(topOfHour), batchv1.JobFailed)
	stopConflicts := conflictOnStatus(f)
	syncWantConflict(t, ctx, c, key, "sync that counts the failure")
	cacheEdit(t, cronFactory, f.cronJob, func(cj *cronv1.CronJob) { cj.Spec.JobTemplate.Labels = map[string]string{"app": "hello", "tier": "2"} })
	stopConflicts()
	f.clock.Step(time.Second)
	w := syncWantStatus(t, ctx, f, c, key)
	if fs := w.Status.FailureStreak; fs == nil || fs.Count != 1 || fs.PausedAt != nil {
		t.Errorf("failureStreak %+v, want count 1 and not paused: one run failed, once", fs)
	}
}

// A failure counts once when the status write of the sync that counted it
// meets a conflict and the next sync's Job cache is older than that sync's
// (it shows the Job running, then failed again): kept as decided, or judged
// again after an edit, the decision holds its outcome once.
func TestAFailureCountsOnceWhenAStaleCacheFollowsAConflictingWrite(t *testing.T) {
	for _, edited := range []bool{false, true} {
		t.Run(map[bool]string{false: "kept decision", true: "edited since"}[edited], func(t *testing.T) {
			_, ctx := ktesting.NewTestContext(t)
			f := newFixture(t, at(5*time.Second))
			f.cronJob = newCronJob(lastScheduled(at(-time.Hour)), withFailurePolicy(2, 0))
			c, kubeFactory, cronFactory := f.newController(ctx)
			key := cache.MetaObjectToName(f.cronJob)
			if _, err := c.syncHandler(ctx, key); err != nil {
				t.Fatal(err)
			}
			running := liveJob(t, ctx, f, jobName(topOfHour))
			f.clock.Step(10 * time.Second)
			finishJobAs(t, ctx, f, kubeFactory, jobName(topOfHour), batchv1.JobFailed)
			failed := liveJob(t, ctx, f, jobName(topOfHour))
			stopConflicts := conflictOnStatus(f)
			syncWantConflict(t, ctx, c, key, "sync that counts the failure")
			if edited {
				cacheEdit(t, cronFactory, f.cronJob, func(cj *cronv1.CronJob) { cj.Spec.JobTemplate.Labels = map[string]string{"tier": "2"} })
			}
			stopConflicts()
			for _, seen := range []*batchv1.Job{running, failed} {
				cacheJob(t, kubeFactory, seen)
				f.clock.Step(time.Second)
				if _, err := c.syncHandler(ctx, key); err != nil {
					t.Fatal(err)
				}
			}
			cj, err := f.client.BatchV1().CronJobs("default").Get(ctx, "cj", metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if fs := cj.Status.FailureStreak; fs == nil || fs.Count != 1 || fs.PausedAt != nil {
				t.Errorf("failureStreak %+v, want count 1 and not paused: one run failed, once", fs)
			}
			if r := cj.Status.RecentRuns; len(r) != 1 || r[0].Outcome != cronv1.OutcomeFailed || len(cj.Status.Active) != 0 {
				t.Errorf("recentRuns %+v, active %v; want the 10:00 run failed, none active", r, cj.Status.Active)
			}
		})
	}
}

// The status that names a trial run is written by the sync that starts it,
// never deferred behind a burst: a crash before a deferred write would lose
// the only record of which run is the trial, and a controller whose Job
// cache missed the trial's create (a hung watch) would start a second one.
func TestACrashAfterATrialStartsStartsNoSecondTrial(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := newFixture(t, at(time.Second))
	f.cronJob = newCronJob(lastScheduled(at(-time.Hour)), withFailurePolicy(2, 30*time.Minute), func(cj *cronv1.CronJob) {
		cj.Status.FailureStreak = &cronv1.FailureStreak{Count: 2, LastFailedJob: jobName(at(-time.Hour)),
			PausedAt: &metav1.Time{Time: at(-50 * time.Minute)}, Pauses: 1}
	})
	c, _, _ := f.newController(ctx)
	key := cache.MetaObjectToName(f.cronJob)
	syncInABurst(t, ctx, c, key)
	if got := created(f); len(got) != 1 || got[0] != jobName(topOfHour) {
		t.Fatalf("created %v, want the 10:00 run as the trial", got)
	}

	// A crash; the next leader's Job cache never got the trial's create.
	f.clock.SetTime(at(time.Hour + time.Second))
	c2, kubeFactory, _ := restart(t, ctx, f)
	trial := liveJob(t, ctx, f, jobName(topOfHour))
	uncacheJob(t, kubeFactory, trial)
	if _, err := c2.syncHandler(ctx, key); err != nil {
		t.Fatal(err)
	}
	if got := created(f); len(got) != 0 {
		t.Errorf("after the crash: created %v, want none while the 10:00 trial runs", got)
	}
}

// The trial starts but its status write is refused, and the controller
// crashes before retrying it; the next leader's Job cache lacks the trial
// (a hung watch). At 11:00 it looks up the 10:00 Job before settling that
// time as not run, finds the trial running, and starts no second trial.
func TestATrialWhoseStatusWasLostBeforeACrashIsFoundByTheNextLeader(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := newFixture(t, at(time.Second))
	pausedForATrial(f)
	c, _, _ := f.newController(ctx)
	key := cache.MetaObjectToName(f.cronJob)
	stop := conflictOnStatus(f)
	syncWantConflict(t, ctx, c, key, "the 10:00 trial's sync")
	stop()
	if got := created(f); len(got) != 1 || got[0] != jobName(topOfHour) {
		t.Fatalf("created %v, want the 10:00 run as the trial", got)
	}

	f.clock.SetTime(at(time.Hour + time.Second))
	c2, kubeFactory, _ := restart(t, ctx, f)
	trial := liveJob(t, ctx, f, jobName(topOfHour))
	uncacheJob(t, kubeFactory, trial)
	if _, err := c2.syncHandler(ctx, key); err != nil {
		t.Fatal(err)
	}
	if got := created(f); len(got) != 0 {
		t.Errorf("after the crash: created %v, want none while the 10:00 trial runs", got)
	}
}

// pausedForATrial makes f's CronJob paused by two failures, its cool-down
// over: its next due run is the trial.
func pausedForATrial(f *fixture) {
	f.cronJob = newCronJob(lastScheduled(at(-time.Hour)), withFailurePolicy(2, 30*time.Minute), func(cj *cronv1.CronJob) {
		cj.Status.FailureStreak = &cronv1.FailureStreak{Count: 2, LastFailedJob: jobName(at(-time.Hour)),
			PausedAt: &metav1.Time{Time: at(-50 * time.Minute)}, Pauses: 1}
	})
}

// The trial starts in a burst and its status is written at once; the next
// sync starts no second trial.
func TestATrialStartedInABurstIsWrittenAtOnce(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := newFixture(t, at(time.Second))
	pausedForATrial(f)
	c, _, cronFactory := f.newController(ctx)
	key := cache.MetaObjectToName(f.cronJob)
	syncInABurst(t, ctx, c, key)
	w := f.writtenStatus()
	if w == nil || w.Status.FailureStreak == nil || w.Status.FailureStreak.TrialJob != jobName(topOfHour) {
		t.Fatalf("after the burst sync: written %+v, want the status naming the 10:00 trial", w)
	}
	writes := f.statusWrites()
	// The cache catches up with the write (the fake client keeps no
	// resourceVersions, so the own-writes overlay cannot stand in).
	cacheCronJob(t, cronFactory, w)
	drainQueue(c)
	f.clock.Step(time.Second)
	if _, err := c.syncHandler(ctx, key); err != nil {
		t.Fatal(err)
	}
	if got := created(f); len(got) != 1 {
		t.Errorf("created %v, want the trial once", got)
	}
	// The next sync decides what the first wrote (planner
	// TestTheSyncThatStartsATrialSaysWhatTheNextSyncSays): nothing to write.
	if got := f.statusWrites(); got != writes {
		t.Errorf("%d status writes after the next sync, want still %d", got, writes)
	}
}

// The trial starts in a burst and the write naming it meets a conflict: the
// decision is kept, and the retry writes it without starting a second trial.
func TestATrialWhoseStatusWriteFailsInABurstStartsOnce(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := newFixture(t, at(time.Second))
	pausedForATrial(f)
	c, _, _ := f.newController(ctx)
	key := cache.MetaObjectToName(f.cronJob)
	stop := conflictOnStatus(f)
	c.queue.Add(cache.ObjectName{Namespace: "default", Name: "other"})
	syncWantConflict(t, ctx, c, key, "the sync that starts the trial")
	if got := created(f); len(got) != 1 || got[0] != jobName(topOfHour) {
		t.Fatalf("created %v, want the 10:00 run as the trial", got)
	}
	stop()
	drainQueue(c)
	f.clock.Step(2 * time.Second)
	w := syncWantStatus(t, ctx, f, c, key)
	if fs := w.Status.FailureStreak; fs == nil || fs.TrialJob != jobName(topOfHour) || fs.PausedAt == nil {
		t.Errorf("after the retry: failureStreak %+v, want paused with the 10:00 trial named", fs)
	}
	if got := created(f); len(got) != 1 {
		t.Errorf("created %v, want the trial once", got)
	}
}

// A burst sync that starts an ordinary run (the pause ended) still defers
// its status: only a new trial is written at once.
func TestABurstRunThatIsNoTrialStillDefers(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := newFixture(t, at(time.Second))
	f.cronJob = newCronJob(lastScheduled(at(-time.Hour)), withFailurePolicy(2, 30*time.Minute), func(cj *cronv1.CronJob) {
		cj.Status.FailureStreak = &cronv1.FailureStreak{Count: 1, LastFailedJob: jobName(at(-time.Hour))}
	})
	c, _, _ := f.newController(ctx)
	key := cache.MetaObjectToName(f.cronJob)
	syncInABurst(t, ctx, c, key)
	if got := created(f); len(got) != 1 {
		t.Fatalf("created %v, want the 10:00 run", got)
	}
	if w := f.writtenStatus(); w != nil {
		t.Errorf("the burst sync wrote %+v; want it deferred: no trial", w.Status)
	}
}

// The 10:00 trial starts under the stored status's cool-down (resumeAt
// 09:40); its status write is refused, a conflict with the user's edit
// that lengthens resumeAfter to 2h (resumeAt 11:10), and the controller
// crashes before retrying. The next leader comes at 10:30, its Job cache
// lacking the trial's Job (a hung watch): a trial is awaited, and it
// settles 10:00 as not run (held by the pause), so it must read the 10:00
// Job first and find the trial (rule 6: the first run at or after the
// stored resumeAt is the trial). At 12:00 no second trial may start while
// the 10:00 one runs.
func TestATrialWhoseStatusWasLostIsFoundWhenTheNextLeaderComesBeforeTheLengthenedCoolDownEnds(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := newFixture(t, at(time.Second))
	pausedForATrial(f)
	f.cronJob.Status.FailureStreak.ResumeAt = &metav1.Time{Time: at(-20 * time.Minute)}
	c, _, _ := f.newController(ctx)
	key := cache.MetaObjectToName(f.cronJob)
	stop := conflictOnStatus(f)
	syncWantConflict(t, ctx, c, key, "the 10:00 trial's sync")
	stop()
	if got := created(f); len(got) != 1 || got[0] != jobName(topOfHour) {
		t.Fatalf("created %v, want the 10:00 run as the trial", got)
	}
	trial := liveJob(t, ctx, f, jobName(topOfHour))
	live, err := f.client.BatchV1().CronJobs("default").Get(ctx, "cj", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	live.Generation++
	live.Spec.FailurePolicy.ResumeAfter = &metav1.Duration{Duration: 2 * time.Hour}
	if _, err := f.client.BatchV1().CronJobs("default").Update(ctx, live, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}

	var all []string
	for _, now := range []time.Time{at(30 * time.Minute), at(2*time.Hour + time.Second)} {
		f.clock.SetTime(now)
		c, kubeFactory, _ := restart(t, ctx, f)
		uncacheJob(t, kubeFactory, trial)
		if _, err := c.syncHandler(ctx, key); err != nil {
			t.Fatal(err)
		}
		all = append(all, created(f)...)
	}
	if len(all) != 0 {
		t.Errorf("after the crash: created %v, want none while the 10:00 trial runs", all)
	}
	if w := f.writtenStatus(); w == nil || w.Status.FailureStreak == nil || w.Status.FailureStreak.TrialJob != trial.Name {
		t.Errorf("written failureStreak %+v, want it naming the 10:00 trial", w.Status.FailureStreak)
	}
}

// The trial starts, its status write is refused and the controller
// crashes; the trial then fails. The next leader's Job cache lacks it (a
// hung watch): the lookup finds it failed, and its failure counts once,
// reopening the pause (pauses 2, count 3); the syncs after it, the found
// Job among this process's own writes or gone from view again, count
// nothing more and start nothing.
func TestATrialFoundFailedByTheLookupCountsOnce(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := newFixture(t, at(time.Second))
	pausedForATrial(f)
	c, _, _ := f.newController(ctx)
	key := cache.MetaObjectToName(f.cronJob)
	stop := conflictOnStatus(f)
	syncWantConflict(t, ctx, c, key, "the 10:00 trial's sync")
	stop()
	f.clock.SetTime(at(20 * time.Minute))
	finishJobAs(t, ctx, f, nil, jobName(topOfHour), batchv1.JobFailed)
	trial := liveJob(t, ctx, f, jobName(topOfHour))
	trial.Status.Conditions[0].LastTransitionTime = metav1.NewTime(at(20 * time.Minute))
	trial, err := f.kubeclient.BatchV1().Jobs("default").UpdateStatus(ctx, trial, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}

	c, kubeFactory, cronFactory := restart(t, ctx, f)
	for i, now := range []time.Time{at(time.Hour + time.Second), at(time.Hour + 10*time.Second), at(2*time.Hour + time.Second)} {
		if i == 2 {
			c, kubeFactory, cronFactory = restart(t, ctx, f)
		}
		if i != 1 {
			uncacheJob(t, kubeFactory, trial)
		}
		f.clock.SetTime(now)
		if _, err := c.syncHandler(ctx, key); err != nil {
			t.Fatal(err)
		}
		got, err := f.client.BatchV1().CronJobs("default").Get(ctx, "cj", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if fs := got.Status.FailureStreak; fs == nil || fs.Count != 3 || fs.Pauses != 2 || fs.PausedAt == nil || !fs.PausedAt.Time.Equal(at(20*time.Minute)) {
			t.Errorf("sync %d: failureStreak %+v, want count 3, pauses 2, paused as of 10:20", i, fs)
		}
		want := []string(nil)
		if i == 2 {
			// The doubled cool-down (1h from 10:20) is over: the next trial.
			want = []string{jobName(at(2 * time.Hour))}
		}
		if made := created(f); !slices.Equal(made, want) {
			t.Errorf("sync %d: created %v, want %v", i, made, want)
		}
		// The cache catches up with the write (the fake client keeps no
		// resourceVersions, so the own-writes overlay cannot stand in).
		cacheCronJob(t, cronFactory, got)
	}
}

// Rule 6 through the lookup: the 10:00 trial's status is lost in a crash,
// and the trial's Job is deleted by hand (its run-record finalizer holds
// it, being deleted). The next leader's Job cache lacks it; the lookup
// finds it going away: no verdict, and not the trial, so 11:00 starts as
// the next trial, once, and the deleted Job is released once the status
// records its run.
func TestATrialFoundBeingDeletedByTheLookupMakesTheNextRunTheTrial(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := newFixture(t, at(time.Second))
	pausedForATrial(f)
	c, _, _ := f.newController(ctx)
	honourFinalizers(f.kubeclient, f.clock)
	key := cache.MetaObjectToName(f.cronJob)
	stop := conflictOnStatus(f)
	syncWantConflict(t, ctx, c, key, "the 10:00 trial's sync")
	stop()
	f.clock.SetTime(at(30 * time.Minute))
	if err := f.kubeclient.BatchV1().Jobs("default").Delete(ctx, jobName(topOfHour), metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	trial := liveJob(t, ctx, f, jobName(topOfHour))
	if trial == nil || trial.DeletionTimestamp == nil {
		t.Fatalf("the trial's Job: %v, want it held by its finalizer, being deleted", trial)
	}

	f.clock.SetTime(at(time.Hour + time.Second))
	c, kubeFactory, cronFactory := restart(t, ctx, f)
	uncacheJob(t, kubeFactory, trial)
	w := syncWantStatus(t, ctx, f, c, key)
	if got := created(f); !slices.Equal(got, []string{jobName(at(time.Hour))}) {
		t.Errorf("11:00: created %v, want the 11:00 run as the next trial", got)
	}
	if fs := w.Status.FailureStreak; fs == nil || fs.TrialJob != jobName(at(time.Hour)) {
		t.Errorf("11:00: failureStreak %+v, want the 11:00 run the trial", fs)
	}
	if j := liveJob(t, ctx, f, jobName(topOfHour)); j != nil {
		t.Errorf("the deleted trial's Job is still held (finalizers %v) after the status recording its run", j.Finalizers)
	}
	cacheCronJob(t, cronFactory, w)
	f.kubeclient.ClearActions()
	f.clock.Step(10 * time.Second)
	if _, err := c.syncHandler(ctx, key); err != nil {
		t.Fatal(err)
	}
	if got := created(f); len(got) != 0 {
		t.Errorf("11:00:11: created %v, want none while the 11:00 trial runs", got)
	}
}
