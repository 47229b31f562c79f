package main

import (
	"slices"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2/ktesting"

	cronv1 "github.com/cronjob-controller/cronjob-controller/pkg/apis/batch/v1"
	"github.com/cronjob-controller/cronjob-controller/pkg/slim"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	core "k8s.io/client-go/testing"
)

// detached is a Job a user took from its CronJob by removing the owner
// reference (to keep it past the history limit): it is no longer the
// CronJob's.
func detached(j *batchv1.Job) { j.OwnerReferences = nil }

// A Job detached from its CronJob is no longer counted active, holds back
// no run under Forbid and is not deleted under Replace, whether it is still
// running or finished, and whether the cache shows the detach or only the
// API server does.
func TestDetachedJobIsNoLongerTheCronJobs(t *testing.T) {
	prev := at(-time.Hour)
	for _, c := range []struct {
		name   string
		policy cronv1.ConcurrencyPolicy
		state  jobState
		cached bool
	}{
		{"Forbid, finished, cache shows it", cronv1.ForbidConcurrent, succeeded, true},
		{"Forbid, running, cache shows it", cronv1.ForbidConcurrent, running, true},
		{"Forbid, finished, only the API server shows it", cronv1.ForbidConcurrent, succeeded, false},
		{"Replace, running, cache shows it", cronv1.ReplaceConcurrent, running, true},
		{"Replace, running, only the API server shows it", cronv1.ReplaceConcurrent, running, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, ctx := ktesting.NewTestContext(t)
			kept := newJob(prev, c.state, detached)
			f := newFixture(t, at(5*time.Second))
			f.cronJob = newCronJob(lastScheduled(prev), activeJobs(kept), policy(c.policy))
			if c.cached {
				f.jobs = []*batchv1.Job{kept}
			} else {
				f.uncachedJobs = []*batchv1.Job{kept}
			}
			ctl, _, _ := f.newController(ctx)
			if _, err := ctl.syncHandler(ctx, cache.MetaObjectToName(f.cronJob)); err != nil {
				t.Fatal(err)
			}
			writes := describe(f.kubeclient.Actions(), true)
			if !slices.Contains(writes, "create jobs default/"+jobName(topOfHour)) {
				t.Errorf("writes %q, want the 10:00 run started", writes)
			}
			if slices.ContainsFunc(writes, func(w string) bool { return strings.HasPrefix(w, "delete jobs") }) {
				t.Errorf("writes %q: the detached Job was deleted", writes)
			}
			st := f.writtenStatus()
			if st == nil {
				t.Fatal("no status written")
			}
			if slices.ContainsFunc(st.Status.Active, func(r corev1.ObjectReference) bool { return r.UID == kept.UID }) {
				t.Errorf("active %v still holds the detached Job", st.Status.Active)
			}
			if n := missedCount(st.Status, cronv1.MissedConcurrencyForbidden); n != 0 {
				t.Errorf("%d runs counted ConcurrencyForbidden behind a Job the CronJob no longer controls", n)
			}
		})
	}
}

// A Job detached before the stored status records its run keeps the
// run-record finalizer until the status does: released at once, a crash
// and a TTL delete would leave no trace of the run, and it would start
// again. Once the status records the run, the finalizer goes.
func TestDetachedJobKeepsItsRecordUntilTheRunIsRecorded(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	unrecorded := newJob(topOfHour, running, holdingRecord)
	f := newFixture(t, at(5*time.Second))
	f.cronJob = newCronJob(lastScheduled(at(-time.Hour)))
	f.jobs = []*batchv1.Job{unrecorded}
	ctl, kubeFactory, cronFactory := f.newController(ctx)
	key := cache.MetaObjectToName(f.cronJob)
	old := unrecorded.DeepCopy()
	detached(unrecorded)
	unrecorded.ResourceVersion = "2"
	cacheJob(t, kubeFactory, unrecorded)
	ctl.updateJob(slim.NewJob(old), slim.NewJob(unrecorded))
	release := "patch jobs default/" + unrecorded.Name
	if err := ctl.releaseOrphans(ctx, key); err != nil {
		t.Fatal(err)
	}
	if writes := describe(f.kubeclient.Actions(), true); slices.Contains(writes, release) {
		t.Fatalf("writes %q: the finalizer went while no stored status records the run", writes)
	}

	recorded := f.cronJob.DeepCopy()
	recorded.Status.LastScheduleTime = &metav1.Time{Time: topOfHour}
	recorded.ResourceVersion = "5"
	cacheCronJob(t, cronFactory, recorded)
	if err := ctl.releaseOrphans(ctx, key); err != nil {
		t.Fatal(err)
	}
	if writes := describe(f.kubeclient.Actions(), true); !slices.Contains(writes, release) {
		t.Errorf("writes %q: the finalizer stayed after the status recorded the run", writes)
	}
}

// A running Job deleted by hand (kubectl delete job) is gone, and so is its
// run: the run started, and its time is not created again, neither by the
// controller that made it nor by one that takes over on the stored state.
// The Job, running, still holds the run-record finalizer (it goes once the
// Job finishes or is deleted and the status no longer lists it active): it
// is Terminating until the status drops it from status.active, then goes;
// lastScheduleTime keeps its time.
func TestRunningJobDeletedByHandIsNotCreatedAgain(t *testing.T) {
	for _, restarted := range []bool{false, true} {
		t.Run(map[bool]string{false: "same controller", true: "after a restart"}[restarted], func(t *testing.T) {
			_, ctx := ktesting.NewTestContext(t)
			f := newFixture(t, at(time.Second))
			f.cronJob = newCronJob(lastScheduled(at(-time.Hour)))
			c, kubeFactory, cronFactory := f.newController(ctx)
			honourFinalizers(f.kubeclient, f.clock)
			name := jobName(topOfHour)
			syncs(t, ctx, f, c, cronFactory)
			if got := created(f); !slices.Equal(got, []string{name}) {
				t.Fatalf("first sync created %q, want the 10:00 run", got)
			}
			j := liveJob(t, ctx, f, name)
			if j == nil || len(j.Finalizers) != 1 {
				t.Fatalf("the 10:00 Job %+v: want it running, holding the run-record finalizer until it finishes", j)
			}
			cacheJob(t, kubeFactory, j)

			// Running, it is deleted by hand a minute later: Terminating,
			// as the informer shows it.
			f.clock.Step(time.Minute)
			if err := f.kubeclient.BatchV1().Jobs("default").Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
			terminating := liveJob(t, ctx, f, name)
			if terminating == nil {
				t.Fatal("the Job went at once, its finalizer ignored")
			}
			terminating.ResourceVersion = "9"
			cacheJob(t, kubeFactory, terminating)
			if restarted {
				c, kubeFactory, cronFactory = restart(t, ctx, f)
			}
			f.kubeclient.ClearActions()
			syncs(t, ctx, f, c, cronFactory)
			if liveJob(t, ctx, f, name) != nil {
				t.Fatalf("writes %q: the deleted Job hangs in Terminating once the status dropped it", describe(f.kubeclient.Actions(), true))
			}
			uncacheJob(t, kubeFactory, terminating)
			syncs(t, ctx, f, c, cronFactory)
			f.clock.Step(time.Minute)
			cj := syncs(t, ctx, f, c, cronFactory)
			if got := created(f); len(got) != 0 {
				t.Errorf("created %q after the running 10:00 Job was deleted by hand: its run started already", got)
			}
			if len(cj.Status.Active) != 0 || cj.Status.LastScheduleTime == nil || !cj.Status.LastScheduleTime.Time.Equal(topOfHour) {
				t.Errorf("status active %v, lastScheduleTime %v; want none active, 10:00", cj.Status.Active, cj.Status.LastScheduleTime)
			}
		})
	}
}

// A Job detached before the stored status records its run keeps the
// run-record finalizer until the status does, also once it is deleted (a
// TTL after it finished, a user): the finalizer is then all that keeps the
// run's name taken. Here the process that created the Job crashed before
// its status write, and the Job was detached and deleted before the next
// leader started; that one meets it Terminating. Released at once, the Job
// goes and the run starts a second time.
func TestDetachedJobDeletedBeforeItsRunIsRecordedKeepsItsRecord(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	unrecorded := newJob(topOfHour, succeeded, holdingRecord, detached, func(j *batchv1.Job) {
		j.DeletionTimestamp = &metav1.Time{Time: at(4 * time.Second)}
	})
	f := newFixture(t, at(5*time.Second))
	f.cronJob = newCronJob(lastScheduled(at(-time.Hour)))
	f.jobs = []*batchv1.Job{unrecorded}
	ctl, kubeFactory, _ := f.newController(ctx)
	honourFinalizers(f.kubeclient, f.clock)

	// The new leader's informer delivers the Job; the workers sync what
	// that queued, and the CronJob.
	ctl.addJob(slim.NewJob(unrecorded))
	drainSyncs(t, ctx, ctl)
	if liveJob(t, ctx, f, unrecorded.Name) == nil {
		t.Errorf("writes %q: the detached Job's finalizer went while no stored status records its run",
			describe(f.kubeclient.Actions(), true))
		// The cache follows: the Job is gone.
		uncacheJob(t, kubeFactory, unrecorded)
	}
	if _, err := ctl.syncHandler(ctx, cache.MetaObjectToName(f.cronJob)); err != nil {
		t.Fatal(err)
	}
	if writes := describe(f.kubeclient.Actions(), true); slices.Contains(writes, "create jobs default/"+jobName(topOfHour)) &&
		liveJob(t, ctx, f, jobName(topOfHour)) != nil {
		t.Errorf("writes %q: the run of 10:00 started a second time", writes)
	}
}

// Run-now "a" then "b", both started, no stored status records either; a
// user detaches a's Job. After a restart the chain from the stored status
// still runs through a's record to b: b is not started a second time.
func TestDetachedRunNowJobKeepsTheChainOfTheRequestsAfterIt(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := newFixture(t, at(time.Minute))
	ja, jb := runNowAThenB(f)
	detached(ja) // by a user, before any status recorded "a"
	f.jobs = []*batchv1.Job{ja, jb}
	c, _, _ := f.newController(ctx)
	if _, err := c.syncHandler(ctx, cache.MetaObjectToName(f.cronJob)); err != nil {
		t.Fatal(err)
	}
	for _, a := range describe(f.kubeclient.Actions(), true) {
		if strings.HasPrefix(a, "create jobs") {
			t.Errorf("after the restart: %s, but run-now b already has Job %s: b runs twice", a, jb.Name)
		}
	}
}

// Under Replace a Job the user detached is not deleted, also when the
// Job cache has not caught up with the detach yet (the sync runs within
// the watch's lag): the delete must not land on a Job the CronJob no
// longer controls.
func TestReplaceDoesNotDeleteAJobDetachedWhileTheCacheLags(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	prev := at(-time.Hour)
	kept := newJob(prev, running)
	f := newFixture(t, at(5*time.Second))
	f.cronJob = newCronJob(lastScheduled(prev), activeJobs(kept), policy(cronv1.ReplaceConcurrent))
	f.jobs = []*batchv1.Job{kept}
	ctl, _, _ := f.newController(ctx)
	// The user detaches it; the watch event is still on its way.
	live := liveJob(t, ctx, f, kept.Name)
	detached(live)
	if _, err := f.kubeclient.BatchV1().Jobs("default").Update(ctx, live, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	f.kubeclient.ClearActions()
	if _, err := ctl.syncHandler(ctx, cache.MetaObjectToName(f.cronJob)); err != nil {
		t.Fatal(err)
	}
	if liveJob(t, ctx, f, kept.Name) == nil {
		t.Errorf("writes %q: Replace deleted the Job the user had detached", describe(f.kubeclient.Actions(), true))
	}
}

// A run whose status write failed, its Job then detached, and the spec
// edited before the retry (the kept decision is stale, so lastScheduleTime
// goes back to the stored one): the run started, and the retry must not
// count it as not started (NameTaken, with a Warning that the run "is not
// started") because its Job, which the CronJob made, is no longer its.
func TestDetachedJobOfAnOvertakenDecisionIsNotCountedNameTaken(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := newFixture(t, at(5*time.Second))
	f.cronJob = newCronJob(lastScheduled(at(-time.Hour)))
	ctl, kubeFactory, cronFactory := f.newController(ctx)
	key := cache.MetaObjectToName(f.cronJob)
	stop := conflictOnStatus(f)
	syncWantConflict(t, ctx, ctl, key, "the 10:00 run's status write")
	stop()
	started := liveJob(t, ctx, f, jobName(topOfHour))
	if started == nil {
		t.Fatal("the 10:00 run did not start")
	}
	cacheJob(t, kubeFactory, started) // the create's echo
	ctl.addJob(slim.NewJob(started))

	// The user edits the template and detaches the Job.
	cacheEdit(t, cronFactory, f.cronJob, func(cj *cronv1.CronJob) { cj.Spec.JobTemplate.Labels["app"] = "hello-2" })
	detachedJob := started.DeepCopy()
	detached(detachedJob)
	detachedJob, err := f.kubeclient.BatchV1().Jobs("default").Update(ctx, detachedJob, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	detachedJob.ResourceVersion = "7"
	cacheJob(t, kubeFactory, detachedJob)
	ctl.updateJob(slim.NewJob(started), slim.NewJob(detachedJob))

	if _, err := ctl.syncHandler(ctx, key); err != nil {
		t.Fatal(err)
	}
	st := f.writtenStatus()
	if st == nil {
		t.Fatal("no status written")
	}
	if n := missedCount(st.Status, cronv1.MissedNameTaken); n != 0 || st.Status.LastScheduleTime == nil || st.Status.LastScheduleTime.Time.Before(topOfHour) {
		t.Errorf("status lastScheduleTime %v, %d run(s) NameTaken, events %q: the 10:00 run, which started, is counted as not started",
			st.Status.LastScheduleTime, n, f.events())
	}
}

// A Job the controller never made for a run (a copy made by hand of one of
// its Jobs, under another name, the owner reference left out) is no record
// of the run it names: the 10:00 run, due, starts, and under its own name.
func TestCopiedJobUnderAnotherNameDoesNotSilenceTheDueRun(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	copied := newJob(topOfHour, running, holdingRecord, detached, func(j *batchv1.Job) {
		j.Name = "by-hand"
		j.UID = "uid-by-hand"
	})
	f := newFixture(t, at(5*time.Second))
	f.cronJob = newCronJob(lastScheduled(at(-time.Hour)))
	f.jobs = []*batchv1.Job{copied}
	c, _, _ := f.newController(ctx)
	if _, err := c.syncHandler(ctx, cache.MetaObjectToName(f.cronJob)); err != nil {
		t.Fatal(err)
	}
	if writes := describe(f.kubeclient.Actions(), true); !slices.Contains(writes, "create jobs default/"+jobName(topOfHour)) {
		t.Errorf("writes %q, events %q: the due 10:00 run did not start; a Job named %s, no run's Job, took its place", writes, f.events(), copied.Name)
	}
}

// Replace's live read of the running Job fails once: the 10:00 run waits
// (the running Job is neither deleted unread nor run beside), and the
// retry replaces it and starts 10:00 once.
func TestReplaceWhoseLiveReadFailsStartsTheRunOnceOnRetry(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := newFixture(t, at(5*time.Second))
	old := withRunningJob(f, cronv1.ReplaceConcurrent)
	c, _, _ := f.newController(ctx)
	fail := true
	f.kubeclient.PrependReactor("get", "jobs", func(core.Action) (bool, runtime.Object, error) {
		if fail {
			fail = false
			return true, nil, apierrors.NewServiceUnavailable("down")
		}
		return false, nil, nil
	})
	key := cache.MetaObjectToName(f.cronJob)
	if _, err := c.syncHandler(ctx, key); err == nil {
		t.Errorf("first sync: no error after the live read failed")
	}
	first := describe(f.kubeclient.Actions(), true)
	if slices.ContainsFunc(first, func(w string) bool { return strings.HasPrefix(w, "create jobs") || strings.HasPrefix(w, "delete jobs") }) {
		t.Errorf("first sync %q: acted on a Job it could not read", first)
	}
	f.kubeclient.ClearActions()
	if _, err := c.syncHandler(ctx, key); err != nil {
		t.Fatal(err)
	}
	got := describe(f.kubeclient.Actions(), true)
	if !slices.Contains(got, "delete jobs default/"+old.Name) || !slices.Contains(got, "create jobs default/"+jobName(topOfHour)) {
		t.Errorf("retry %q: want %s replaced by the 10:00 run", got, old.Name)
	}
}

// A Job deleted by hand (kubectl delete job) before any stored status
// records its run: here the create's answer was lost, so the controller
// does not know it made the Job, and a user deletes it before the next
// sync looks it up. The run started, and must not start again: the
// run-record finalizer keeps the Job (Terminating) until the status
// records its run, whether or not the template sets a TTL. Nothing but
// the Job records the run, and users, not only the TTL controller, delete
// Jobs.
func TestJobDeletedByHandBeforeItsRunIsRecordedIsNotStartedAgain(t *testing.T) {
	ctx, f, c, _, lose := lostCreateFixture(t)
	honourFinalizers(f.kubeclient, f.clock)
	key := cache.MetaObjectToName(f.cronJob)
	name := jobName(topOfHour)
	if _, err := c.syncHandler(ctx, key); err == nil {
		t.Fatal("the create's answer was lost: want the sync to fail")
	}
	*lose = false
	if liveJob(t, ctx, f, name) == nil {
		t.Fatal("the lost create was not applied")
	}
	if err := f.kubeclient.BatchV1().Jobs("default").Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	f.kubeclient.ClearActions()
	f.clock.Step(time.Second)
	if _, err := c.syncHandler(ctx, key); err != nil {
		t.Fatal(err)
	}
	if writes := describe(f.kubeclient.Actions(), true); slices.Contains(writes, "create jobs default/"+name) {
		t.Errorf("writes %q: the run of 10:00, whose Job a user deleted before its run was recorded, started a second time", writes)
	}
	if st := f.writtenStatus(); st == nil || st.Status.LastScheduleTime == nil || !st.Status.LastScheduleTime.Time.Equal(topOfHour) {
		t.Errorf("status %v: want the 10:00 run recorded", st)
	}
}
