package main

// Tests of release.go: the run-record finalizer is released once a stored
// status records the Job's run, and a Job no CronJob will record (orphaned,
// its CronJob gone or being deleted) is released too.

import (
	"context"
	"slices"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	k8sfake "k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2/ktesting"
	"k8s.io/utils/ptr"

	cronv1 "github.com/cronjob-controller/cronjob-controller/pkg/apis/batch/v1"
	"github.com/cronjob-controller/cronjob-controller/pkg/control"
	"github.com/cronjob-controller/cronjob-controller/pkg/job"
	"github.com/cronjob-controller/cronjob-controller/pkg/slim"
)

// The controller is down while a CronJob is deleted (background
// propagation): the garbage collector deletes its Job, which stays in
// Terminating behind the run-record finalizer. The restarted controller's
// Job informer lists it (addJob of a Job already being deleted), and no
// CronJob is in its cache: the Job must still be released.
func TestOrphanTerminatingAtStartupIsReleased(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := newFixture(t, at(time.Minute))
	j := newJob(at(0), succeeded, holdingRecord, func(j *batchv1.Job) {
		j.DeletionTimestamp = &metav1.Time{Time: at(30 * time.Second)}
	})
	f.jobs = []*batchv1.Job{j}
	c, _, _ := f.newController(ctx) // no CronJob: it was deleted while we were down
	honourFinalizers(f.kubeclient, f.clock)
	c.addJob(slim.NewJob(j)) // the informer's initial list
	drainSyncs(t, ctx, c)
	if live := liveJob(t, ctx, f, j.Name); live != nil {
		t.Errorf("the Job of a CronJob deleted while the controller was down hangs in Terminating: finalizers %v", live.Finalizers)
	}
}

// The controller is down while a CronJob is deleted with orphan
// propagation: the garbage collector strips the Jobs' controller
// references. After the restart a TTL (or a user) deletes such a Job,
// which holds the run-record finalizer: it must be released.
func TestOrphanedWhileDownThenDeletedIsReleased(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := newFixture(t, at(time.Minute))
	j := newJob(at(0), succeeded, holdingRecord, func(j *batchv1.Job) { j.OwnerReferences = nil })
	f.jobs = []*batchv1.Job{j}
	c, kubeFactory, _ := f.newController(ctx)
	honourFinalizers(f.kubeclient, f.clock)
	c.addJob(slim.NewJob(j))
	drainSyncs(t, ctx, c)
	if err := f.kubeclient.BatchV1().Jobs("default").Delete(ctx, j.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	deleting := liveJob(t, ctx, f, j.Name)
	if deleting == nil {
		t.Fatal("the Job went at once")
	}
	deleting.ResourceVersion = "2" // as the API server's delete would
	cacheJob(t, kubeFactory, deleting)
	c.updateJob(slim.NewJob(j), slim.NewJob(deleting))
	drainSyncs(t, ctx, c)
	if live := liveJob(t, ctx, f, j.Name); live != nil {
		t.Errorf("an orphaned Job deleted later hangs in Terminating: finalizers %v", live.Finalizers)
	}
}

// ReleaseFinalizer given a stale finalizer list (another controller
// reordered or added entries): it must remove ours and only ours.
func TestReleaseRemovesOnlyOurFinalizer(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct{ live, seen, want []string }{
		{live: []string{"a", job.RunRecordFinalizer, "b"}, seen: []string{job.RunRecordFinalizer}, want: []string{"a", "b"}},
		{live: []string{job.RunRecordFinalizer, "a"}, seen: []string{"a", job.RunRecordFinalizer}, want: []string{"a"}},
		{live: []string{"x", "y", "z", job.RunRecordFinalizer}, seen: []string{job.RunRecordFinalizer, "x"}, want: []string{"x", "y", "z"}},
		{live: []string{"a"}, seen: []string{job.RunRecordFinalizer}, want: []string{"a"}},
	} {
		j := newJob(at(0), running)
		j.Finalizers = tc.live
		client := k8sfake.NewClientset(j)
		if err := control.NewJobs(client).ReleaseFinalizer(ctx, "default", j.Name, j.UID, job.RunRecordFinalizer, tc.seen); err != nil {
			t.Errorf("live %v seen %v: %v", tc.live, tc.seen, err)
			continue
		}
		got, err := client.BatchV1().Jobs("default").Get(ctx, j.Name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got.Finalizers, tc.want) {
			t.Errorf("live %v seen %v: finalizers after release %v, want %v", tc.live, tc.seen, got.Finalizers, tc.want)
		}
	}
	// Another Job under the same name (new UID): untouched, no error.
	j := newJob(at(0), running, holdingRecord)
	client := k8sfake.NewClientset(j)
	if err := control.NewJobs(client).ReleaseFinalizer(ctx, "default", j.Name, "other-uid", job.RunRecordFinalizer, j.Finalizers); err != nil {
		t.Errorf("another UID: %v", err)
	}
	if got, _ := client.BatchV1().Jobs("default").Get(ctx, j.Name, metav1.GetOptions{}); !job.HoldsRunRecord(got) {
		t.Error("released the finalizer of another Job with the same name")
	}
}

// The CronJob is deleted with foreground propagation before the status
// records its last run: the garbage collector deletes the Job (it blocks
// its owner) and waits for it. The CronJob's sync must release it, or the
// CronJob and the Job both hang.
func TestForegroundDeleteReleasesUnrecordedJob(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := newFixture(t, at(time.Minute))
	f.cronJob = newCronJob(lastScheduled(at(-time.Hour)), func(cj *cronv1.CronJob) {
		cj.DeletionTimestamp = &metav1.Time{Time: at(30 * time.Second)}
		cj.Finalizers = []string{metav1.FinalizerDeleteDependents}
	})
	j := newJob(at(0), running, func(j *batchv1.Job) {
		j.Finalizers = []string{metav1.FinalizerDeleteDependents, job.RunRecordFinalizer}
		j.DeletionTimestamp = &metav1.Time{Time: at(40 * time.Second)}
	})
	f.jobs = []*batchv1.Job{j}
	c, _, _ := f.newController(ctx)
	honourFinalizers(f.kubeclient, f.clock)
	if _, err := c.syncHandler(ctx, cache.MetaObjectToName(f.cronJob)); err != nil {
		t.Fatal(err)
	}
	live := liveJob(t, ctx, f, j.Name)
	if live == nil || !slices.Equal(live.Finalizers, []string{metav1.FinalizerDeleteDependents}) {
		t.Errorf("Job after the sync of its CronJob being deleted: %+v, want only foregroundDeletion left", live)
	}
}

// A Job being deleted whose scheduled time is still to come (made by a
// replica whose clock was ahead) cannot be recorded before that time; its
// CronJob must not be looked at again every second until then.
func TestFutureJobBeingDeletedDoesNotSpin(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := newFixture(t, at(time.Second))
	f.cronJob = newCronJob(lastScheduled(at(0)))
	future := newJob(at(time.Hour), succeeded, holdingRecord, func(j *batchv1.Job) {
		j.DeletionTimestamp = &metav1.Time{Time: at(time.Second)}
	})
	f.jobs = []*batchv1.Job{future}
	c, _, _ := f.newController(ctx)
	honourFinalizers(f.kubeclient, f.clock)
	var syncsRun int
	for ; syncsRun < 3600; syncsRun++ {
		d, err := c.syncHandler(ctx, cache.MetaObjectToName(f.cronJob))
		if err != nil {
			t.Fatal(err)
		}
		if d > time.Minute || d <= 0 {
			break
		}
		f.clock.Step(d)
		if !f.clock.Now().Before(at(time.Hour)) {
			break
		}
	}
	if syncsRun > 60 {
		t.Errorf("%d syncs (requeue every second) before the future Job's time: a release spin", syncsRun)
	}
}

// A CronJob being deleted (foreground deletion, or any finalizer) is
// decided without planRuns: plan.Status.NextScheduleTime is the stale one
// from its last status, past once its next run's time has gone by. The
// bookkeeping is then bounded to minTidyTime (1 s), and the plan asks for
// no wake-up (RequeueAfter 0). A release cut there must be retried (an
// error) or the CronJob woken again: (0, nil) makes processNextWorkItem
// Forget the key, no next sync comes (nothing changes, informers have no
// resync), and the Job hangs in Terminating holding the run-record
// finalizer, the CronJob with it under foreground deletion.
func TestDeletingCronJobReleaseCutIsRetried(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	// 11:05: the garbage collector deletes the Jobs of a CronJob deleted in
	// the foreground; its status still says the next run is at 11:00.
	f := newFixture(t, at(time.Hour+5*time.Minute))
	j := newJob(at(0), running, holdingRecord, func(j *batchv1.Job) {
		j.DeletionTimestamp = &metav1.Time{Time: at(time.Hour + 4*time.Minute)}
	})
	f.cronJob = newCronJob(lastScheduled(at(0)), activeJobs(j), func(cj *cronv1.CronJob) {
		cj.DeletionTimestamp = &metav1.Time{Time: at(time.Hour + 4*time.Minute)}
		cj.Finalizers = []string{metav1.FinalizerDeleteDependents}
		cj.Status.NextScheduleTime = &metav1.Time{Time: at(time.Hour)}
	})
	f.jobs = []*batchv1.Job{j}
	c, _, _ := f.newController(ctx)
	stalled := &throttledReleases{Jobs: c.jobs, clock: f.clock, entered: make(held, 4)}
	c.jobs = stalled
	c.cronJobs = &ctxStatus{CronJobs: c.cronJobs}

	done := syncInBackground(ctx, c, cache.MetaObjectToName(f.cronJob))
	if name := awaitEntered(t, stalled.entered, "release"); name != j.Name {
		t.Fatalf("released %s, want %s", name, j.Name)
	}
	// The API server answers every release 429, Retry-After 3 s: more than
	// minTidyTime.
	f.clock.Step(3 * time.Second)
	var r syncResult
	for waiting := true; waiting; {
		select {
		case r = <-done:
			waiting = false
		case <-stalled.entered: // a release after the first, throttled too
			f.clock.Step(3 * time.Second)
		case <-time.After(wait.ForeverTestTimeout):
			t.Fatal("the sync has not returned")
		}
	}
	// Either the release is not cut (it fails, and the failure is
	// retried), or something wakes the CronJob again.
	if r.err == nil && r.requeue <= 0 {
		t.Errorf("sync of a CronJob being deleted returned (%v, nil) after its release was cut: "+
			"processNextWorkItem forgets the key, no sync ever releases %s, which hangs in Terminating", r.requeue, j.Name)
	}
}

// A Job whose CronJob is gone is released when it is deleted (by the
// garbage collector or a user): no plan will ever name it again, and it
// would hang in Terminating.
func TestJobOfAGoneCronJobIsReleased(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := newFixture(t, at(time.Minute))
	f.cronJob = newCronJob(lastScheduled(at(0)))
	f.jobs = []*batchv1.Job{newJob(at(0), running, holdingRecord)}
	c, kubeFactory, cronFactory := f.newController(ctx)
	honourFinalizers(f.kubeclient, f.clock)
	key := cache.MetaObjectToName(f.cronJob)
	name := f.jobs[0].Name

	// The CronJob goes; the garbage collector deletes its Job.
	if err := f.client.BatchV1().CronJobs("default").Delete(ctx, "cj", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := cronFactory.Batch().V1().CronJobs().Informer().GetIndexer().Delete(mustSlimCronJob(t, f)); err != nil {
		t.Fatal(err)
	}
	c.deleteCronJob(f.cronJob)
	if err := f.kubeclient.BatchV1().Jobs("default").Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	deleting := liveJob(t, ctx, f, name)
	cacheJob(t, kubeFactory, deleting)
	c.updateJob(slim.NewJob(f.jobs[0]), slim.NewJob(deleting))
	if c.queue.Len() != 1 {
		t.Fatalf("queue length %d, want the gone CronJob's key", c.queue.Len())
	}
	if _, err := c.syncHandler(ctx, key); err != nil {
		t.Fatal(err)
	}
	if j := liveJob(t, ctx, f, name); j != nil {
		t.Errorf("the Job of a deleted CronJob hangs: %+v", j.ObjectMeta)
	}
}

// A Job that lost its controller (the CronJob deleted with orphan
// propagation) is released too; one whose CronJob is still there is not.
func TestOrphanedJobIsReleased(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := newFixture(t, at(time.Minute))
	f.cronJob = newCronJob(lastScheduled(at(0)))
	f.jobs = []*batchv1.Job{newJob(at(0), running, holdingRecord), newJob(at(-time.Hour), running, holdingRecord)}
	c, kubeFactory, _ := f.newController(ctx)
	honourFinalizers(f.kubeclient, f.clock)
	key := cache.MetaObjectToName(f.cronJob)

	orphaned := f.jobs[0].DeepCopy()
	orphaned.OwnerReferences = nil
	if _, err := f.kubeclient.BatchV1().Jobs("default").Update(ctx, orphaned, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	orphaned.ResourceVersion = "2"
	cacheJob(t, kubeFactory, orphaned)
	c.updateJob(slim.NewJob(f.jobs[0]), slim.NewJob(orphaned))
	// A handler that ran before the CronJob cache listed it.
	c.noteOrphan(slim.NewJob(f.jobs[1]), job.ControllerOf(f.jobs[1]), f.jobs[1].Finalizers)
	f.kubeclient.ClearActions()
	if err := c.releaseOrphans(ctx, key); err != nil {
		t.Fatal(err)
	}
	if j := liveJob(t, ctx, f, f.jobs[0].Name); j == nil || job.HoldsRunRecord(j) {
		t.Errorf("the orphaned Job: %+v, want it kept, released", j)
	}
	if j := liveJob(t, ctx, f, f.jobs[1].Name); j == nil || !job.HoldsRunRecord(j) {
		t.Errorf("the Job of a CronJob still there was released: %+v", j)
	}
}

func mustSlimCronJob(t *testing.T, f *fixture) any {
	t.Helper()
	obj, err := slim.FromCronJob(f.cronJob.DeepCopy())
	if err != nil {
		t.Fatal(err)
	}
	return obj
}

// A CronJob deleted and created again under the same name: a Job detached
// from the old one before it recorded the run is no record of the new one
// (not adopted), and once deleted its finalizer goes (its CronJob is gone).
func TestRecordOfARecreatedCronJobIsNotAdoptedAndIsReleased(t *testing.T) {
	for _, deleted := range []bool{false, true} {
		t.Run(map[bool]string{false: "kept", true: "deleted"}[deleted], func(t *testing.T) {
			_, ctx := ktesting.NewTestContext(t)
			old := newJob(at(-30*time.Minute), succeeded, holdingRecord, detached, func(j *batchv1.Job) {
				j.Annotations[cronv1.CronJobUIDAnnotation] = "old-uid"
				if deleted {
					j.DeletionTimestamp = &metav1.Time{Time: at(4 * time.Second)}
				}
			})
			f := newFixture(t, at(5*time.Second))
			f.cronJob = newCronJob(lastScheduled(at(-time.Hour)))
			f.jobs = []*batchv1.Job{old}
			c, _, _ := f.newController(ctx)
			honourFinalizers(f.kubeclient, f.clock)
			c.addJob(slim.NewJob(old))
			drainSyncs(t, ctx, c)
			if _, err := c.syncHandler(ctx, cache.MetaObjectToName(f.cronJob)); err != nil {
				t.Fatal(err)
			}
			st := f.writtenStatus()
			if st != nil && st.Status.LastScheduleTime != nil && st.Status.LastScheduleTime.Time.Equal(at(-30*time.Minute)) {
				t.Errorf("the new CronJob adopted the old one's record: lastScheduleTime %v", st.Status.LastScheduleTime)
			}
			if deleted && liveJob(t, ctx, f, old.Name) != nil {
				t.Errorf("writes %q: the old CronJob's deleted record keeps its finalizer", describe(f.kubeclient.Actions(), true))
			}
		})
	}
}

// withTTL gives the CronJob's Job template spec.ttlSecondsAfterFinished.
func withTTL(seconds int32) func(*cronv1.CronJob) {
	return func(cj *cronv1.CronJob) { cj.Spec.JobTemplate.Spec.TTLSecondsAfterFinished = &seconds }
}

// writesOf are the fixture's writes since its actions were last cleared.
func writesOf(f *fixture) []string {
	return describe(append(f.kubeclient.Actions(), f.client.Actions()...), true)
}

// A Job keeps the run-record finalizer past the status write that records
// its run: released then, a TTL could remove it the moment it finishes,
// before any status saw it finish. The finalizer goes once the Job has
// finished and the stored status records its run and no longer lists it
// active; the firing that starts it pays no release.
func TestFinalizerIsReleasedWhenTheJobFinishes(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := newFixture(t, at(time.Second))
	f.cronJob = newCronJob(lastScheduled(at(-time.Hour)), withTTL(60))
	c, kubeFactory, cronFactory := f.newController(ctx)
	name := jobName(topOfHour)
	syncs(t, ctx, f, c, cronFactory)
	j := liveJob(t, ctx, f, name)
	if j == nil || !job.HoldsRunRecord(j) {
		t.Fatalf("the 10:00 Job %+v: want it created holding the run-record finalizer", j)
	}
	if got := writesOf(f); len(got) != 2 {
		t.Errorf("writes at the firing %q, want 2 (create, status): no release at the status write", got)
	}
	cacheJob(t, kubeFactory, j)

	f.clock.Step(time.Minute)
	f.kubeclient.ClearActions()
	finishJob(t, ctx, f, kubeFactory, name)
	f.kubeclient.ClearActions()
	cj := syncs(t, ctx, f, c, cronFactory)
	if len(cj.Status.Active) != 0 {
		t.Fatalf("active %v after the Job finished", cj.Status.Active)
	}
	if live := liveJob(t, ctx, f, name); live == nil || job.HoldsRunRecord(live) {
		t.Errorf("the finished 10:00 Job %+v: want it kept, its finalizer released once the status saw it finish", live)
	}
}

// A Job with ttlSecondsAfterFinished 0 fails, and the TTL controller
// deletes it at once; the stored status still lists it active. The Job
// stays (Terminating) until a stored status has seen it finish: a status
// that never saw it leave status.active as failed would lose its outcome.
func TestTTLZeroFailedJobStaysUntilTheStatusSawItFinish(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := newFixture(t, at(time.Minute))
	gone := newJob(topOfHour, failed, holdingRecord, func(j *batchv1.Job) {
		j.Spec.TTLSecondsAfterFinished = ptr.To[int32](0)
	})
	f.cronJob = newCronJob(lastScheduled(topOfHour), withTTL(0), activeJobs(gone))
	f.jobs = []*batchv1.Job{gone}
	c, kubeFactory, cronFactory := f.newController(ctx)
	honourFinalizers(f.kubeclient, f.clock)
	// The TTL controller deletes it.
	if err := f.kubeclient.BatchV1().Jobs("default").Delete(ctx, gone.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	deleting := liveJob(t, ctx, f, gone.Name)
	if deleting == nil {
		t.Fatal("the Job went at once, its finalizer ignored")
	}
	cacheJob(t, kubeFactory, deleting)
	// The status write fails: the stored status still lists the Job
	// active.
	stop := conflictOnStatus(f)
	syncWantConflict(t, ctx, c, cache.MetaObjectToName(f.cronJob), "the status write")
	if liveJob(t, ctx, f, gone.Name) == nil {
		t.Fatalf("writes %q: the failed Job went before any stored status saw it finish", writesOf(f))
	}
	stop()
	cj := syncs(t, ctx, f, c, cronFactory)
	if len(cj.Status.Active) != 0 {
		t.Fatalf("active %v: the status did not see the Job finish", cj.Status.Active)
	}
	if live := liveJob(t, ctx, f, gone.Name); live != nil {
		t.Errorf("the failed Job hangs in Terminating once the status saw it finish: finalizers %v", live.Finalizers)
	}
}

// A CronJobRun's Job whose CronJob is deleted and created again under its
// name before the controller synced the deletion (kubectl replace --force,
// a chart reinstalled): the garbage collector deletes the old CronJob's
// Job, and the new CronJob cannot name it in the CronJobRun's status (it is
// not its Job: the CronJobRun is refused, its Job's name taken). The
// finalizer must still go (release.go: "Without this, a Job the garbage
// collector or a user deletes after its CronJob would hang in
// Terminating"), and the new CronJob's syncs must not fail for it.
func TestTheJobOfACronJobRunGoesWhenItsCronJobIsCreatedAgainUnderItsName(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := newFixture(t, at(-30*time.Minute))
	f.cronJob = newCronJob(lastScheduled(at(-time.Hour)))
	run := newRun("by-hand")
	c, kubeFactory, cronFactory := f.newRunController(ctx, run)
	honourFinalizers(f.kubeclient, f.clock)
	key := cache.MetaObjectToName(f.cronJob)
	name := job.RequestName("cj", run.UID)
	lose := true
	loseJobCreateAnswers(f, &lose)
	if _, err := c.syncHandler(ctx, key); err == nil {
		t.Fatal("sync with the create's answer lost: no error, want one")
	}
	lose = false
	made := liveJob(t, ctx, f, name)
	if made == nil {
		t.Fatal("the CronJobRun's Job was not made")
	}
	cacheJob(t, kubeFactory, made)

	// Deleted and created again at once: the controller's next sync of the
	// key sees only the new CronJob.
	if err := f.client.BatchV1().CronJobs("default").Delete(ctx, "cj", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := cronFactory.Batch().V1().CronJobs().Informer().GetIndexer().Delete(mustSlimCronJob(t, f)); err != nil {
		t.Fatal(err)
	}
	c.deleteCronJob(f.cronJob)
	again := newCronJob(lastScheduled(at(-time.Hour)), func(cj *cronv1.CronJob) { cj.UID = "cj-uid-again" })
	if _, err := f.client.BatchV1().CronJobs("default").Create(ctx, again, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	cacheCronJob(t, cronFactory, again)
	// The garbage collector deletes the old CronJob's Job.
	if err := f.kubeclient.BatchV1().Jobs("default").Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	deleting := liveJob(t, ctx, f, name)
	cacheJob(t, kubeFactory, deleting)
	c.updateJob(slim.NewJob(made), slim.NewJob(deleting))

	var err error
	for range 4 {
		f.clock.Step(10 * time.Second)
		_, err = c.syncHandler(ctx, key)
		f.recacheRuns(ctx, cronFactory)
		if j := liveJob(t, ctx, f, name); j != nil {
			cacheJob(t, kubeFactory, j)
		}
	}
	st := f.storedRun(ctx, "by-hand").Status
	if j := liveJob(t, ctx, f, name); j != nil {
		t.Errorf("the old CronJob's Job %s hangs in Terminating (finalizers %v, deleted %v); the CronJobRun's status: job %q, conditions %+v",
			name, j.Finalizers, j.DeletionTimestamp, st.JobName, st.Conditions)
	}
	if err != nil {
		t.Errorf("the new CronJob's sync fails for the old one's Job: %v", err)
	}
}
