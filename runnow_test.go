package main

// Tests of run-now (the run-now annotation): each change of the value
// starts one Job, once, across failed creates, lost status writes and
// restarts, without holding back the schedule.

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2/ktesting"
	"k8s.io/utils/ptr"

	cronv1 "github.com/cronjob-controller/cronjob-controller/pkg/apis/batch/v1"
	"github.com/cronjob-controller/cronjob-controller/pkg/job"
	"github.com/cronjob-controller/cronjob-controller/pkg/slim"
)

// Under Forbid, a run-now whose create keeps failing (a webhook's 403, a
// 500) is no active Job: the scheduled 10:00 run must still start, as it
// does under Allow (TestFailingRunNowDoesNotBlockTheSchedule).
func TestFailingRunNowDoesNotBlockTheScheduleUnderForbid(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := newFixture(t, at(5*time.Second))
	f.cronJob = newCronJob(lastScheduled(at(-time.Hour)), policy(cronv1.ForbidConcurrent), func(cj *cronv1.CronJob) {
		cj.Annotations = map[string]string{cronv1.RunNowAnnotation: "now-please"}
	})
	c, _, cronFactory := f.newController(ctx)
	manual := job.ManualName("cj", "cj-uid", "", "now-please", 1)
	failJobCreateOf(f, manual, apierrors.NewInternalError(errors.New("admission webhook unavailable")))
	key := cache.MetaObjectToName(f.cronJob)
	var cj *cronv1.CronJob
	for i := range 5 { // the retries of the next few seconds
		f.client.ClearActions()
		if _, err := c.syncHandler(ctx, key); err == nil {
			t.Fatal("the failing run-now was not reported")
		}
		if w := f.writtenStatus(); w != nil {
			cacheCronJob(t, cronFactory, w)
			cj = w
		}
		f.clock.Step(time.Duration(i+1) * time.Second)
	}
	if got := created(f); !slices.Contains(got, jobName(topOfHour)) {
		t.Errorf("Forbid: while the run-now create fails, the scheduled 10:00 run never starts (creates tried %q); LastRunStarted %+v",
			got, cj.Status.Conditions)
	}
}

// A long run-now value survives a restart: hashed once, never run twice.
func TestLongRunNowValueRunsOnceAcrossRestart(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := newFixture(t, at(-30*time.Minute))
	value := strings.Repeat("x", 500)
	f.cronJob = newCronJob(func(cj *cronv1.CronJob) {
		cj.Annotations = map[string]string{cronv1.RunNowAnnotation: value}
		cj.Spec.SuccessfulJobsHistoryLimit = ptr.To[int32](0)
	})
	c, kubeFactory, cronFactory := f.newController(ctx)
	syncs(t, ctx, f, c, cronFactory)
	log := createLog{}
	log.add(f)
	f.clock.Step(time.Minute)
	finishJob(t, ctx, f, kubeFactory, job.ManualName("cj", "cj-uid", "", value, 1))
	syncs(t, ctx, f, c, cronFactory) // prunes it
	c2, _, _ := restart(t, ctx, f)
	if _, err := c2.syncHandler(ctx, cache.MetaObjectToName(f.cronJob)); err != nil {
		t.Fatal(err)
	}
	log.add(f)
	if log[job.ManualName("cj", "cj-uid", "", value, 1)] != 1 {
		t.Errorf("run-now creates %v", log)
	}
}

// The README promises "each change of the value starts one Job ... also a
// change back to a value used before". A -> B -> A -> B: the fourth change
// has the same (before, value) pair as the second, whose Job is still in
// the history (the default keeps 3 succeeded Jobs). The request's number
// (status.runNowCount + 1) in the Job name tells them apart, so the sync
// does not take the second change's Job for "started before its status
// was written", and the fourth request starts.
func TestRunNowBackAndForthStartsEachTime(t *testing.T) {
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
// the fourth create: it must find that create's Job (same request, same
// name, on the chain of unrecorded run-now Jobs) and start no second one,
// though the pair (A, B) is the second change's too.
func TestRunNowRepeatedPairStartsOnceWhenItsStatusIsLost(t *testing.T) {
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
	stopConflicts := conflictOnStatus(f)
	syncWantConflict(t, ctx, c, key, "sync")
	fourth := job.ManualName("cj", "cj-uid", "A", "B", 4)
	if got := created(f); !slices.Equal(got, []string{fourth}) {
		t.Fatalf("fourth change created %q, want %s", got, fourth)
	}
	stopConflicts()
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

// Run-now "a" handled in a sync whose status write is deferred; the user
// sets run-now to "b" before it is written; the next sync (same
// generation: the deferred status is taken) starts "b" under
// ManualName("a", "b"), deferred again. Before any status is written, a
// sync must not release either Job; and after a crash (the deferred status
// lost), the restarted controller must not start "b" again.
func TestRunNowChangedWhileDeferredStartsOnceAcrossACrash(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := newFixture(t, at(time.Minute))
	f.cronJob = newCronJob(lastScheduled(at(0)), func(cj *cronv1.CronJob) {
		cj.Annotations = map[string]string{cronv1.RunNowAnnotation: "a"}
	})
	c, kubeFactory, cronFactory := f.newController(ctx)
	honourFinalizers(f.kubeclient, f.clock)
	key := cache.MetaObjectToName(f.cronJob)
	other := cache.ObjectName{Namespace: "default", Name: "other"}
	c.queue.Add(other) // a burst: status writes wait

	if _, err := c.syncHandler(ctx, key); err != nil {
		t.Fatal(err)
	}
	edited := setRunNow(t, ctx, f, cronFactory, "b")
	for _, n := range []string{job.ManualName("cj", "cj-uid", "", "a", 1)} {
		if j := liveJob(t, ctx, f, n); j != nil {
			cacheJob(t, kubeFactory, j)
		}
	}
	if _, err := c.syncHandler(ctx, key); err != nil {
		t.Fatal(err)
	}
	jb := job.ManualName("cj", "cj-uid", "a", "b", 2)
	if liveJob(t, ctx, f, jb) == nil {
		t.Fatalf("no Job %s for run-now b", jb)
	}
	if f.writtenStatus() != nil {
		t.Fatalf("a status was written: the case needs it deferred")
	}
	for _, a := range describe(f.kubeclient.Actions(), true) {
		if strings.HasPrefix(a, "patch jobs") {
			t.Errorf("%s while no status records its run (written lastRunNow \"\")", a)
		}
	}

	// Crash: the deferred status is lost; a new controller starts on the
	// stored state (lastRunNow "", run-now "b").
	g := newFixture(t, at(2*time.Minute))
	g.cronJob = edited
	list, _ := f.kubeclient.BatchV1().Jobs("default").List(ctx, metav1.ListOptions{})
	for i := range list.Items {
		g.jobs = append(g.jobs, &list.Items[i])
	}
	c2, _, _ := g.newController(ctx)
	if _, err := c2.syncHandler(ctx, key); err != nil {
		t.Fatal(err)
	}
	for _, a := range describe(g.kubeclient.Actions(), true) {
		if strings.HasPrefix(a, "create jobs") {
			t.Errorf("after the restart: %s, but run-now b already has Job %s: b runs twice", a, jb)
		}
	}
}

// A run-now request handled in a sync whose status write the next run
// cuts, then a second request set before the next sync: the next sync
// starts the 11:00 run and request "b" once each, and a sync after that
// (every Job in the cache, the status written) starts nothing again.
func TestRunNowAcrossACutStatusWriteStartsEachOnce(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := newFixture(t, at(time.Second))
	f.cronJob = newCronJob(func(cj *cronv1.CronJob) {
		cj.Annotations = map[string]string{cronv1.RunNowAnnotation: "a"}
	})
	c, kubeFactory, cronFactory := f.newController(ctx)
	key := cache.MetaObjectToName(f.cronJob)
	cronJobs := c.cronJobs
	stalled := &stalledStatus{CronJobs: cronJobs, entered: make(chan string, 4)}
	c.cronJobs = stalled

	done := syncInBackground(ctx, c, key)
	awaitEntered(t, stalled.entered, "status write")
	f.clock.Step(time.Hour - time.Second) // 11:00: the cut
	if r := awaitSync(t, done, "cut status write"); r.err != nil {
		t.Fatalf("sync error %v", r.err)
	}
	c.cronJobs = cronJobs

	setRunNow(t, ctx, f, cronFactory, "b")
	cacheAll := func() {
		list, err := f.kubeclient.BatchV1().Jobs("default").List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for i := range list.Items {
			cacheJob(t, kubeFactory, &list.Items[i])
		}
	}
	cacheAll()
	f.kubeclient.ClearActions()
	if _, err := c.syncHandler(ctx, key); err != nil {
		t.Fatal(err)
	}
	var creates []string
	for _, a := range describe(f.kubeclient.Actions(), true) {
		if strings.HasPrefix(a, "create jobs") {
			creates = append(creates, strings.TrimPrefix(a, "create jobs default/"))
		}
	}
	slices.Sort(creates)
	want := []string{jobName(at(time.Hour)), job.ManualName("cj", "cj-uid", "a", "b", 2)}
	slices.Sort(want)
	if !slices.Equal(creates, want) {
		t.Errorf("creates %q, want %q: the due run and request b, once each", creates, want)
	}

	// Settle: the status written reaches the cache, every Job too.
	if st := f.writtenStatus(); st != nil {
		cacheCronJob(t, cronFactory, st)
	}
	cacheAll()
	f.kubeclient.ClearActions()
	if _, err := c.syncHandler(ctx, key); err != nil {
		t.Fatal(err)
	}
	for _, a := range describe(f.kubeclient.Actions(), true) {
		if strings.HasPrefix(a, "create jobs") {
			t.Errorf("%s: a run started twice", a)
		}
	}
}

// run-now starts one Job per distinct value, even when suspended or under
// Forbid with a Job active, and never a second one for the same value.
func TestRunNow(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	prev := at(-time.Hour)
	running9 := newJob(prev, running)
	f := newFixture(t, at(-30*time.Minute))
	f.cronJob = newCronJob(lastScheduled(prev), activeJobs(running9), policy(cronv1.ForbidConcurrent), func(cj *cronv1.CronJob) {
		cj.Spec.Suspend = ptr.To(true)
		cj.Annotations = map[string]string{cronv1.RunNowAnnotation: "1777000000"}
	})
	f.jobs = []*batchv1.Job{running9}
	c, _, cronFactory := f.newController(ctx)
	cj := syncs(t, ctx, f, c, cronFactory)
	manual := job.ManualName("cj", "cj-uid", "", "1777000000", 1)
	if writes := describe(f.kubeclient.Actions(), true); !slices.Equal(writes, []string{"create jobs default/" + manual}) {
		t.Fatalf("writes %q, want the manual Job", writes)
	}
	if len(manual) > len("cj")+11 || strings.Trim(strings.TrimPrefix(manual, "cj-"), "0123456789") == "" {
		t.Errorf("manual name %q could collide with a scheduled one", manual)
	}
	j, err := f.kubeclient.BatchV1().Jobs("default").Get(ctx, manual, metav1.GetOptions{})
	if err != nil || j.Annotations[cronv1.InstantiateAnnotation] != "manual" || metav1.GetControllerOf(j) == nil {
		t.Fatalf("manual Job %v: %+v", err, j)
	}
	if cj.Status.LastRunNow != "1777000000" || len(cj.Status.Active) != 2 || cj.Status.LastScheduleTime == nil || !cj.Status.LastScheduleTime.Time.Equal(prev) {
		t.Errorf("status after run-now: %+v", cj.Status)
	}

	// The same value again, even after a restart (a new controller on the
	// stored status): nothing.
	f.kubeclient.ClearActions()
	syncs(t, ctx, f, c, cronFactory)
	if writes := describe(f.kubeclient.Actions(), true); len(writes) != 0 {
		t.Errorf("the same value ran again: %q", writes)
	}
	if events := f.events(); slices.Contains(events, "Warning UnexpectedJob") {
		t.Errorf("the manual Job was reported unexpected: %q", events)
	}
}

// A run-now whose create keeps failing with a retryable error does not hold
// back the scheduled run; both are retried until they start.
func TestFailingRunNowDoesNotBlockTheSchedule(t *testing.T) {
	for _, createErr := range []error{
		apierrors.NewInternalError(errors.New("etcd is sad")),
		apierrors.NewForbidden(schema.GroupResource{Group: "batch", Resource: "jobs"}, "x", errors.New("admission webhook said no")),
	} {
		t.Run(fmt.Sprint(apierrors.ReasonForError(createErr)), func(t *testing.T) {
			_, ctx := ktesting.NewTestContext(t)
			f := newFixture(t, at(5*time.Second))
			f.cronJob = newCronJob(lastScheduled(at(-time.Hour)), func(cj *cronv1.CronJob) {
				cj.Annotations = map[string]string{cronv1.RunNowAnnotation: "now-please"}
			})
			c, _, _ := f.newController(ctx)
			manual := job.ManualName("cj", "cj-uid", "", "now-please", 1)
			failJobCreateOf(f, manual, createErr)
			_, err := c.syncHandler(ctx, cache.MetaObjectToName(f.cronJob))
			if err == nil {
				t.Error("the failed run-now was not reported for a retry")
			}
			if got := created(f); !slices.Contains(got, jobName(topOfHour)) {
				t.Errorf("created %q: the scheduled 10:00 run did not start", got)
			}
			if w := f.writtenStatus(); w == nil || w.Status.LastScheduleTime == nil || !w.Status.LastScheduleTime.Time.Equal(topOfHour) || w.Status.LastRunNow != "" {
				t.Errorf("status %+v, want the 10:00 run recorded and the run-now value still owed", w)
			}
		})
	}
}

// A CronJob deleted and recreated under the same name (GitOps re-applies a
// manifest that carries the run-now annotation) starts its own first
// run-now request while the old CronJob's run-now Job still exists, held
// in Terminating by the run-record finalizer or orphaned by
// --cascade=orphan: the new CronJob's Job has a name of its own.
func TestRecreatedCronJobStartsItsFirstRunNow(t *testing.T) {
	for _, lingering := range []string{"terminating", "orphaned"} {
		t.Run(lingering, func(t *testing.T) {
			_, ctx := ktesting.NewTestContext(t)
			withRunNow := func(cj *cronv1.CronJob) { cj.Annotations = map[string]string{cronv1.RunNowAnnotation: "deploy-1"} }
			old := newCronJob(withRunNow, func(cj *cronv1.CronJob) { cj.UID = "old-uid" })
			oldJob := job.NewManual(old, "", "deploy-1", "deploy-1", 1)
			oldJob.UID = "old-job-uid"
			switch lingering {
			case "terminating":
				oldJob.DeletionTimestamp = &metav1.Time{Time: at(-time.Minute)}
			case "orphaned":
				oldJob.OwnerReferences = nil
			}

			f := newFixture(t, at(-30*time.Minute))
			f.cronJob = newCronJob(withRunNow, func(cj *cronv1.CronJob) {
				cj.UID = types.UID("new-uid")
				cj.CreationTimestamp = metav1.NewTime(at(-31 * time.Minute))
			})
			f.jobs = []*batchv1.Job{oldJob}
			c, _, _ := f.newController(ctx)
			if _, err := c.syncHandler(ctx, cache.MetaObjectToName(f.cronJob)); err != nil {
				t.Fatal(err)
			}
			mine := job.NewManual(f.cronJob, "", "deploy-1", "deploy-1", 1).Name
			if mine == oldJob.Name {
				t.Fatalf("the recreated CronJob's first run-now Job is named %s, as the old one's", mine)
			}
			if writes := describe(f.kubeclient.Actions(), true); !slices.Contains(writes, "create jobs default/"+mine) {
				t.Errorf("writes %q, want the new CronJob's run-now Job %s", writes, mine)
			}
			st := f.writtenStatus()
			if st == nil || missedCount(st.Status, cronv1.MissedNameTaken) != 0 || st.Status.LastRunNow != "deploy-1" {
				t.Errorf("status %+v, want the request handled by a Job of its own, nothing NameTaken", st)
			}
		})
	}
}

// Run-now "a" then "b", both started, no stored status records either
// (the writes lost or deferred). A user detaches both and deletes b's Job.
// b's finalizer must stay until a stored status records b: b follows a on
// the chain, and a is a record too (detached), not a Job the CronJob
// controls. Released early, a restart finds only a's record and starts b
// again, under the same name.
func TestDetachedRunNowJobDeletedAfterADetachedOneKeepsItsRecord(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := newFixture(t, at(time.Minute))
	ja, jb := runNowAThenB(f)
	detached(ja)
	detached(jb)
	jb.DeletionTimestamp = &metav1.Time{Time: at(50 * time.Second)}
	f.jobs = []*batchv1.Job{ja, jb}
	c, _, _ := f.newController(ctx)
	honourFinalizers(f.kubeclient, f.clock)
	key := cache.MetaObjectToName(f.cronJob)

	// The handler sees b's delete; the orphans of the key are released
	// (as every sync's tidy does, whether its status write landed or not).
	c.addJob(slim.NewJob(jb))
	if err := c.releaseOrphans(ctx, key); err != nil {
		t.Fatal(err)
	}
	if liveJob(t, ctx, f, jb.Name) == nil {
		t.Errorf("writes %q: b's finalizer went while no stored status records b", describe(f.kubeclient.Actions(), true))
	}

	// A restart on the stored state and what is left.
	c2, _, _ := restart(t, ctx, f)
	f.kubeclient.ClearActions()
	if _, err := c2.syncHandler(ctx, key); err != nil {
		t.Fatal(err)
	}
	for _, a := range describe(f.kubeclient.Actions(), true) {
		if strings.HasPrefix(a, "create jobs") {
			t.Errorf("after the restart: %s: run-now b runs twice", a)
		}
	}
}

// As above, but b is only detached (not deleted): the detach itself must
// not release b's finalizer (a TTL would then delete b, and a restart start
// it again) while a, detached before, is the only other record of the chain.
func TestDetachingARunNowJobAfterADetachedOneKeepsItsRecord(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := newFixture(t, at(time.Minute))
	ja, jb := runNowAThenB(f)
	jb.ResourceVersion = "1"
	detached(ja)
	f.jobs = []*batchv1.Job{ja, jb}
	c, kubeFactory, _ := f.newController(ctx)
	key := cache.MetaObjectToName(f.cronJob)
	owned := jb.DeepCopy()
	detached(jb)
	jb.ResourceVersion = "2"
	cacheJob(t, kubeFactory, jb)
	c.updateJob(slim.NewJob(owned), slim.NewJob(jb))
	if err := c.releaseOrphans(ctx, key); err != nil {
		t.Fatal(err)
	}
	for _, a := range describe(f.kubeclient.Actions(), true) {
		if a == "patch jobs default/"+jb.Name {
			t.Errorf("writes %q: b's finalizer went at its detach while no stored status records b", describe(f.kubeclient.Actions(), true))
		}
	}
}
