package main

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	kubeinformers "k8s.io/client-go/informers"
	k8sfake "k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2/ktesting"
	"k8s.io/utils/ptr"

	cronv1 "github.com/cronjob-controller/cronjob-controller/pkg/apis/batch/v1"
	"github.com/cronjob-controller/cronjob-controller/pkg/generated/clientset/versioned/fake"
	informers "github.com/cronjob-controller/cronjob-controller/pkg/generated/informers/externalversions"
	"github.com/cronjob-controller/cronjob-controller/pkg/job"
	"github.com/cronjob-controller/cronjob-controller/pkg/slim"
)

// newRun is a CronJobRun of the fixture's CronJob "cj".
func newRun(name string, opts ...func(*cronv1.CronJobRun)) *cronv1.CronJobRun {
	r := &cronv1.CronJobRun{
		TypeMeta: metav1.TypeMeta{APIVersion: cronv1.SchemeGroupVersion.String(), Kind: "CronJobRun"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: metav1.NamespaceDefault, UID: types.UID("run-uid-" + name),
			Generation: 1, ResourceVersion: "1", CreationTimestamp: metav1.NewTime(at(-time.Minute))},
		Spec: cronv1.CronJobRunSpec{CronJobName: "cj"},
	}
	for _, o := range opts {
		o(r)
	}
	return r
}

// newRunController is a controller with a CronJobRun informer on fake
// clients holding the fixture's CronJob and Jobs and runs, all cached, as
// a process (re)started on that API state would see them.
func (f *fixture) newRunController(ctx context.Context, runs ...*cronv1.CronJobRun) (*Controller, kubeinformers.SharedInformerFactory, informers.SharedInformerFactory) {
	var kubeObjects []runtime.Object
	for _, j := range f.jobs {
		kubeObjects = append(kubeObjects, j.DeepCopy())
	}
	f.kubeclient = k8sfake.NewClientset(kubeObjects...)
	f.kubeclient.PrependReactor("create", "jobs", f.stampCreatedJob)
	objects := []runtime.Object{f.cronJob.DeepCopy()}
	for _, r := range runs {
		objects = append(objects, r.DeepCopy())
	}
	// The simple clientset: updating a CronJobRun's status needs no schema.
	f.client = fake.NewSimpleClientset(objects...)
	return f.restartRuns(ctx)
}

// restartRuns builds a new controller on the fake clients' state, every
// object listed into fresh caches.
func (f *fixture) restartRuns(ctx context.Context) (*Controller, kubeinformers.SharedInformerFactory, informers.SharedInformerFactory) {
	return restartWith(f.t, ctx, f, func(cronFactory informers.SharedInformerFactory) (Option, func()) {
		return WithCronJobRuns(cronFactory.Batch().V1().CronJobRuns()), func() { f.recacheRuns(ctx, cronFactory) }
	})
}

// recacheRuns puts the API server's CronJobRuns into the cache, dropping
// those it no longer has.
func (f *fixture) recacheRuns(ctx context.Context, cronFactory informers.SharedInformerFactory) {
	f.t.Helper()
	runs, err := f.client.BatchV1().CronJobRuns("").List(ctx, metav1.ListOptions{})
	if err != nil {
		f.t.Fatal(err)
	}
	items := make([]any, 0, len(runs.Items))
	for i := range runs.Items {
		items = append(items, &runs.Items[i])
	}
	if err := cronFactory.Batch().V1().CronJobRuns().Informer().GetIndexer().Replace(items, ""); err != nil {
		f.t.Fatal(err)
	}
}

func (f *fixture) storedRun(ctx context.Context, name string) *cronv1.CronJobRun {
	f.t.Helper()
	r, err := f.client.BatchV1().CronJobRuns("default").Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		f.t.Fatal(err)
	}
	return r
}

// One CronJobRun, one Job: a create whose answer is lost, then a restart
// before anything recorded it, and syncs after, start no second Job; the
// CronJobRun's status names the Job, and the run is recorded as Requested.
func TestACronJobRunStartsExactlyOneJob(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := newFixture(t, at(-30*time.Minute))
	f.cronJob = newCronJob(lastScheduled(at(-time.Hour)))
	run := newRun("by-hand")
	c, _, _ := f.newRunController(ctx, run)
	name := job.RequestName("cj", run.UID)

	lose := true
	loseJobCreateAnswers(f, &lose)
	if _, err := c.syncHandler(ctx, cache.MetaObjectToName(f.cronJob)); err == nil {
		t.Fatal("sync with the create's answer lost: no error, want one")
	}
	lose = false
	// A restart: the Job listed from the API server, nothing else known.
	c, _, cronFactory := f.restartRuns(ctx)
	for range 3 {
		if _, err := c.syncHandler(ctx, cache.MetaObjectToName(f.cronJob)); err != nil {
			t.Fatal(err)
		}
		f.recacheRuns(ctx, cronFactory)
	}
	if got := created(f); len(got) != 0 {
		t.Fatalf("creates after the restart %v, want none", got)
	}
	jobs, _ := f.kubeclient.BatchV1().Jobs("default").List(ctx, metav1.ListOptions{})
	if len(jobs.Items) != 1 || jobs.Items[0].Name != name || jobs.Items[0].Annotations[cronv1.CronJobRunAnnotation] != "by-hand" {
		t.Fatalf("Jobs %v, want one, %s, annotated with its CronJobRun", jobs.Items, name)
	}
	st := f.storedRun(ctx, "by-hand").Status
	if st.JobName != name || st.Outcome != cronv1.OutcomeRunning || !meta.IsStatusConditionTrue(st.Conditions, cronv1.ConditionRunStarted) {
		t.Errorf("CronJobRun status %+v, want Job %s, Running, Started True", st, name)
	}
	cj, _ := f.client.BatchV1().CronJobs("default").Get(ctx, "cj", metav1.GetOptions{})
	if i := slices.IndexFunc(cj.Status.RecentRuns, func(r cronv1.RunRecord) bool { return r.JobName == name }); i < 0 || cj.Status.RecentRuns[i].Trigger != cronv1.TriggerRequested {
		t.Errorf("CronJob recentRuns %+v, want %s with trigger Requested", cj.Status.RecentRuns, name)
	}
	if len(cj.Status.Active) != 1 || cj.Status.Active[0].Name != name {
		t.Errorf("CronJob active %v, want %s", cj.Status.Active, name)
	}
}

// One CronJobRun, one Job, through a failover (docs/runs.md: until the
// CronJobRun's status names its Job, the Job keeps the run-record
// finalizer, so no delete can make the request look new; a standby's cache
// may lag). The create's answer is lost, so the CronJobRun's status says
// Pending; a user deletes the Job, which the finalizer holds. A standby
// takes over whose CronJobRun cache has not seen the CronJobRun yet: its
// sync must not take the CronJobRun for gone and release the Job, or the
// next controller, seeing the CronJobRun Pending and no Job, starts a
// second one. (Found by the model walk, I11.run-started-twice, there
// through a CronJob deleted and created again under its name.)
func TestACronJobRunStartsOneJobThroughAStandbyBehindOnCronJobRuns(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := newFixture(t, at(-30*time.Minute))
	f.cronJob = newCronJob(lastScheduled(at(-time.Hour)))
	run := newRun("by-hand")
	c, _, _ := f.newRunController(ctx, run)
	honourFinalizers(f.kubeclient, f.clock)
	key := cache.MetaObjectToName(f.cronJob)
	name := job.RequestName("cj", run.UID)

	lose := true
	loseJobCreateAnswers(f, &lose)
	if _, err := c.syncHandler(ctx, key); err == nil {
		t.Fatal("sync with the create's answer lost: no error, want one")
	}
	lose = false
	if st := f.storedRun(ctx, "by-hand").Status; st.JobName != "" {
		t.Fatalf("CronJobRun status names %s after the lost answer; the case needs it unnamed", st.JobName)
	}
	if err := f.kubeclient.BatchV1().Jobs("default").Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}

	// The standby: its Job cache current, its CronJobRun cache behind.
	c, _, cronFactory := f.restartRuns(ctx)
	if err := cronFactory.Batch().V1().CronJobRuns().Informer().GetIndexer().Replace(nil, ""); err != nil {
		t.Fatal(err)
	}
	if _, err := c.syncHandler(ctx, key); err != nil {
		t.Fatal(err)
	}
	if j := liveJob(t, ctx, f, name); j == nil || !job.HoldsRunRecord(j) {
		t.Errorf("the standby let Job %s go (or released its finalizer) while the CronJobRun's stored status does not name it: %v", name, j)
	}

	// It crashes; the next controller lists everything.
	f.kubeclient.ClearActions()
	c, _, cronFactory = f.restartRuns(ctx)
	for range 2 {
		if _, err := c.syncHandler(ctx, key); err != nil {
			t.Fatal(err)
		}
		f.recacheRuns(ctx, cronFactory)
	}
	if n := createLogOf(f)[name]; n != 0 {
		t.Errorf("Job %s of CronJobRun by-hand created again %d time(s) after the failover; want once in all", name, n)
	}
}

// A CronJobRun asking for an env var the CronJob does not allow starts
// nothing; its status and a Warning Event say why.
func TestACronJobRunWithAnEnvNotAllowedStartsNothing(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := newFixture(t, at(-30*time.Minute))
	f.cronJob = newCronJob(lastScheduled(at(-time.Hour)), func(cj *cronv1.CronJob) {
		cj.Spec.RunOverrides = &cronv1.RunOverrides{AllowedEnv: []string{"DRY_RUN"}}
	})
	run := newRun("bad", func(r *cronv1.CronJobRun) { r.Spec.Env = []cronv1.RunEnvVar{{Name: "PATH", Value: "/evil"}} })
	c, _, _ := f.newRunController(ctx, run)
	if _, err := c.syncHandler(ctx, cache.MetaObjectToName(f.cronJob)); err != nil {
		t.Fatal(err)
	}
	if got := created(f); len(got) != 0 {
		t.Fatalf("creates %v, want none", got)
	}
	c1 := meta.FindStatusCondition(f.storedRun(ctx, "bad").Status.Conditions, cronv1.ConditionRunStarted)
	if c1 == nil || c1.Status != metav1.ConditionFalse || c1.Reason != cronv1.ReasonRunOverrideNotAllowed {
		t.Errorf("Started condition %+v, want False %s", c1, cronv1.ReasonRunOverrideNotAllowed)
	}
	if events := f.events(); !slices.Contains(events, "Warning "+cronv1.ReasonRunOverrideNotAllowed) {
		t.Errorf("events %v, want a Warning %s", events, cronv1.ReasonRunOverrideNotAllowed)
	}
}

// The CronJobRun's status follows its Job to its end, and the Job keeps its
// run-record finalizer until the CronJobRun's status has its outcome.
func TestACronJobRunFollowsItsJob(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := newFixture(t, at(-30*time.Minute))
	f.cronJob = newCronJob(lastScheduled(at(-time.Hour)))
	run := newRun("by-hand")
	c, kubeFactory, cronFactory := f.newRunController(ctx, run)
	key := cache.MetaObjectToName(f.cronJob)
	name := job.RequestName("cj", run.UID)
	if _, err := c.syncHandler(ctx, key); err != nil {
		t.Fatal(err)
	}
	f.recacheRuns(ctx, cronFactory)
	finishJobAs(t, ctx, f, kubeFactory, name, batchv1.JobFailed)
	// The CronJob's status write: a fresh cache of it.
	cj, _ := f.client.BatchV1().CronJobs("default").Get(ctx, "cj", metav1.GetOptions{})
	cacheCronJob(t, cronFactory, cj)
	if _, err := c.syncHandler(ctx, key); err != nil {
		t.Fatal(err)
	}
	st := f.storedRun(ctx, "by-hand").Status
	if st.JobName != name || st.Outcome != cronv1.OutcomeFailed || st.CompletionTime == nil {
		t.Fatalf("CronJobRun status %+v, want Job %s Failed with a completion time", st, name)
	}
	if j := liveJob(t, ctx, f, name); !job.HoldsRunRecord(j) {
		// Released by the same sync that wrote the outcome is too early:
		// the sync could not know the write landed.
		t.Errorf("the Job's run-record finalizer went before a sync saw the CronJobRun's outcome stored")
	}
	f.recacheRuns(ctx, cronFactory)
	cj, _ = f.client.BatchV1().CronJobs("default").Get(ctx, "cj", metav1.GetOptions{})
	cacheCronJob(t, cronFactory, cj)
	if _, err := c.syncHandler(ctx, key); err != nil {
		t.Fatal(err)
	}
	if j := liveJob(t, ctx, f, name); job.HoldsRunRecord(j) {
		t.Errorf("the Job still holds the run-record finalizer once both statuses record it")
	}
	if events := f.events(); !slices.Contains(events, "Normal RunStarted") || !slices.Contains(events, "Normal RunFinished") {
		t.Errorf("events %v, want RunStarted and RunFinished", events)
	}
}

// A finished CronJobRun with spec.ttlSecondsAfterFinished is deleted once
// that long has passed since its run finished, not before.
func TestFinishedCronJobRunsGoAfterTheirTTL(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := newFixture(t, at(-30*time.Minute))
	f.cronJob = newCronJob(lastScheduled(at(-time.Hour)))
	done := metav1.NewTime(at(-31 * time.Minute))
	finished := newRun("finished", func(r *cronv1.CronJobRun) {
		r.Spec.TTLSecondsAfterFinished = ptr.To[int32](120)
		r.Status = cronv1.CronJobRunStatus{JobName: job.RequestName("cj", r.UID), Outcome: cronv1.OutcomeSucceeded, CompletionTime: &done,
			Conditions: []metav1.Condition{{Type: cronv1.ConditionRunStarted, Status: metav1.ConditionTrue, Reason: cronv1.ReasonRunJobCreated,
				Message: "Job " + job.RequestName("cj", r.UID) + " is the run", LastTransitionTime: done}}}
	})
	c, _, cronFactory := f.newRunController(ctx, finished)
	key := cache.MetaObjectToName(f.cronJob)
	wake, err := c.syncHandler(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	if wake != time.Minute {
		t.Errorf("the sync looks again in %v, want 1m0s: when the TTL ends", wake)
	}
	if _, err := f.client.BatchV1().CronJobRuns("default").Get(ctx, "finished", metav1.GetOptions{}); err != nil {
		t.Fatalf("deleted a minute after it finished, TTL two minutes: %v", err)
	}
	f.clock.Step(61 * time.Second)
	f.recacheRuns(ctx, cronFactory)
	if _, err := c.syncHandler(ctx, key); err != nil {
		t.Fatal(err)
	}
	if _, err := f.client.BatchV1().CronJobRuns("default").Get(ctx, "finished", metav1.GetOptions{}); err == nil {
		t.Fatal("the CronJobRun is still there past its TTL")
	}
	if jobs, _ := f.kubeclient.BatchV1().Jobs("default").List(ctx, metav1.ListOptions{}); len(jobs.Items) != 0 {
		t.Errorf("Jobs %v: the CronJobRun's deletion started one", jobs.Items)
	}
}

// While the CronJobRun's status cannot be written (a 500 on every try),
// its finished Job is its only record: neither the history limit (0 here)
// nor a delete by hand removes it, and no second Job starts. Once the
// status is written, the Job is released and pruned, and still nothing
// starts again.
func TestACronJobRunWhoseStatusCannotBeWrittenKeepsItsJob(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := newFixture(t, at(-30*time.Minute))
	f.cronJob = newCronJob(lastScheduled(at(-time.Hour)), func(cj *cronv1.CronJob) { cj.Spec.SuccessfulJobsHistoryLimit = ptr.To[int32](0) })
	run := newRun("by-hand")
	c, kubeFactory, cronFactory := f.newRunController(ctx, run)
	honourFinalizers(f.kubeclient, f.clock)
	key := cache.MetaObjectToName(f.cronJob)
	name := job.RequestName("cj", run.UID)
	refuse := true
	f.client.PrependReactor("update", "cronjobruns", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if refuse && a.GetSubresource() == "status" {
			return true, nil, apierrors.NewInternalError(errors.New("etcd is away"))
		}
		return false, nil, nil
	})
	sync := func() {
		t.Helper()
		_, _ = c.syncHandler(ctx, key) // the refused writes fail it
		cj, err := f.client.BatchV1().CronJobs("default").Get(ctx, "cj", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		cacheCronJob(t, cronFactory, cj)
		f.recacheRuns(ctx, cronFactory)
		jobs, _ := f.kubeclient.BatchV1().Jobs("default").List(ctx, metav1.ListOptions{})
		for i := range jobs.Items {
			cacheJob(t, kubeFactory, &jobs.Items[i])
		}
	}
	sync()
	finishJobAs(t, ctx, f, kubeFactory, name, batchv1.JobComplete)
	for range 3 {
		sync()
	}
	// A user deletes it by hand: the finalizer holds it.
	if err := f.kubeclient.BatchV1().Jobs("default").Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		sync()
	}
	if j := liveJob(t, ctx, f, name); j == nil || !job.HoldsRunRecord(j) {
		t.Fatalf("the Job went (or lost its finalizer) before the CronJobRun's status recorded it: %v", j)
	}
	if n := createLogOf(f)[name]; n != 1 {
		t.Fatalf("creates of %s: %d, want 1; actions %q", name, n, describe(f.kubeclient.Actions(), true))
	}

	refuse = false
	for range 3 {
		sync()
	}
	if st := f.storedRun(ctx, "by-hand").Status; st.JobName != name || st.Outcome != cronv1.OutcomeSucceeded {
		t.Errorf("CronJobRun status %+v, want %s Succeeded", st, name)
	}
	if j := liveJob(t, ctx, f, name); j != nil {
		t.Errorf("the Job is still there once both statuses record it: finalizers %v", j.Finalizers)
	}
	for range 2 {
		sync()
	}
	if n := createLogOf(f)[name]; n != 1 {
		t.Errorf("creates of %s: %d, want 1", name, n)
	}
}

// createLogOf counts the Job creates the fixture's client was asked for,
// by name.
func createLogOf(f *fixture) map[string]int {
	out := map[string]int{}
	for _, a := range f.kubeclient.Actions() {
		if c, ok := a.(k8stesting.CreateAction); ok && a.GetVerb() == "create" && a.GetResource().Resource == "jobs" {
			out[c.GetObject().(metav1.Object).GetName()]++
		}
	}
	return out
}

// The sync that starts a CronJobRun's Job writes the CronJobRun's status
// naming it: the Jobs its creates made are among those its CronJobRuns
// follow.
func TestACronJobRunNamesItsJobInTheSyncThatStartsIt(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := newFixture(t, at(-30*time.Minute))
	f.cronJob = newCronJob(lastScheduled(at(-time.Hour)))
	run := newRun("by-hand")
	c, _, _ := f.newRunController(ctx, run)
	name := job.RequestName("cj", run.UID)
	if _, err := c.syncHandler(ctx, cache.MetaObjectToName(f.cronJob)); err != nil {
		t.Fatal(err)
	}
	if got := created(f); !slices.Equal(got, []string{name}) {
		t.Fatalf("created %q, want %s", got, name)
	}
	st := f.storedRun(ctx, "by-hand").Status
	if st.JobName != name || st.Outcome != cronv1.OutcomeRunning || !meta.IsStatusConditionTrue(st.Conditions, cronv1.ConditionRunStarted) {
		t.Errorf("CronJobRun status %+v, want Job %s, Running, Started True, written by the sync that started it", st, name)
	}
}

// A CronJobRun follows its Job as the sync saw it: with the Job cache hung
// since before the Job's create (and this process's own write of it
// expired), the sync reads the active Job live, and the CronJobRun stays
// Running rather than taking its Job for gone.
func TestACronJobRunFollowsTheJobItsSyncReadLive(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := newFixture(t, at(-30*time.Minute))
	f.cronJob = newCronJob(lastScheduled(at(-time.Hour)))
	run := newRun("by-hand")
	c, _, cronFactory := f.newRunController(ctx, run)
	key := cache.MetaObjectToName(f.cronJob)
	name := job.RequestName("cj", run.UID)
	if _, err := c.syncHandler(ctx, key); err != nil {
		t.Fatal(err)
	}
	f.recacheRuns(ctx, cronFactory)
	cj, _ := f.client.BatchV1().CronJobs("default").Get(ctx, "cj", metav1.GetOptions{})
	if len(cj.Status.Active) != 1 || cj.Status.Active[0].Name != name {
		t.Fatalf("CronJob active %v, want %s", cj.Status.Active, name)
	}
	cacheCronJob(t, cronFactory, cj)
	f.clock.Step(2 * ownWritesTTL)
	if _, err := c.syncHandler(ctx, key); err != nil {
		t.Fatal(err)
	}
	if st := f.storedRun(ctx, "by-hand").Status; st.JobName != name || st.Outcome != cronv1.OutcomeRunning {
		t.Errorf("CronJobRun status %+v, want Job %s still Running", st, name)
	}
}

// The Job of a CronJobRun whose CronJob is gone keeps its run-record
// finalizer until the CronJobRun's status names it: the sync of the gone
// CronJob writes that status first, and while that write fails the Job
// waits, or it could go with the CronJobRun still pending, and a CronJob
// created again under the name would start the run a second time.
func TestTheJobOfAGoneCronJobWaitsForItsCronJobRunToNameIt(t *testing.T) {
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
	cacheJob(t, kubeFactory, made)

	refuse := true
	f.client.PrependReactor("update", "cronjobruns", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if refuse && a.GetSubresource() == "status" {
			return true, nil, apierrors.NewInternalError(errors.New("injected: update cronjobruns/status"))
		}
		return false, nil, nil
	})
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
	c.updateJob(slim.NewJob(made), slim.NewJob(deleting))
	c.syncHandler(ctx, key) //nolint:errcheck // the CronJobRun's status write fails
	if j := liveJob(t, ctx, f, name); j == nil || !job.HoldsRunRecord(j) {
		t.Fatalf("Job %s released while its CronJobRun's status does not name it: %v", name, j)
	}

	refuse = false
	for range 2 {
		c.syncHandler(ctx, key) //nolint:errcheck // what matters is the Job
		f.recacheRuns(ctx, cronFactory)
	}
	if st := f.storedRun(ctx, "by-hand").Status; st.JobName != name {
		t.Fatalf("CronJobRun status %+v, want it to name %s", st, name)
	}
	if j := liveJob(t, ctx, f, name); j != nil {
		t.Errorf("Job %s still held once its CronJobRun's status names it: %+v", name, j.ObjectMeta)
	}
}

// A CronJobRun whose CronJob is deleted while its Job runs: the garbage
// collector deletes the Job, the sync of the gone CronJob releases it and
// it goes. Its run was never seen to finish, so the CronJobRun's outcome
// must become Unknown (docs/runs.md: "Unknown (the Job went away before it
// was seen to finish)"), and its TTL can then run; it must not say
// Running for ever (kubectl cronjob run --wait waiting with it). Only the
// events the controller would get are given to it.
func TestACronJobRunWhoseCronJobIsDeletedWhileItsJobRunsEndsUnknown(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := newFixture(t, at(-30*time.Minute))
	f.cronJob = newCronJob(lastScheduled(at(-time.Hour)))
	run := newRun("by-hand")
	c, kubeFactory, cronFactory := f.newRunController(ctx, run)
	honourFinalizers(f.kubeclient, f.clock)
	key := cache.MetaObjectToName(f.cronJob)
	if _, err := c.syncHandler(ctx, key); err != nil {
		t.Fatal(err)
	}
	f.recacheRuns(ctx, cronFactory)
	name := job.RequestName("cj", run.UID)
	made := liveJob(t, ctx, f, name)
	if st := f.storedRun(ctx, "by-hand").Status; made == nil || st.JobName != name || st.Outcome != cronv1.OutcomeRunning {
		t.Fatalf("CronJobRun status %+v, want Job %s running", st, name)
	}
	cacheJob(t, kubeFactory, made)

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
	c.updateJob(slim.NewJob(made), slim.NewJob(deleting))

	rv := f.storedRun(ctx, "by-hand").ResourceVersion
	for range 5 {
		f.clock.Step(10 * time.Second)
		drainSyncs(t, ctx, c)
		if liveJob(t, ctx, f, name) == nil {
			// The Job informer's delete, once the release let it go.
			if err := kubeFactory.Batch().V1().Jobs().Informer().GetIndexer().Delete(slim.NewJob(deleting)); err == nil {
				c.deleteJob(slim.NewJob(deleting))
			}
		}
		if r := f.storedRun(ctx, "by-hand"); r.ResourceVersion != rv {
			rv = r.ResourceVersion
			f.recacheRuns(ctx, cronFactory)
			c.runChanged(r)
		}
	}
	if liveJob(t, ctx, f, name) != nil {
		t.Fatalf("Job %s was not released; the case needs it gone", name)
	}
	if st := f.storedRun(ctx, "by-hand").Status; st.Outcome != cronv1.OutcomeUnknown {
		t.Errorf("CronJobRun outcome %q after its CronJob and its Job went, want Unknown", st.Outcome)
	}
}
