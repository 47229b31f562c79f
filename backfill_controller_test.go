package main

import (
	"context"
	"slices"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"
	kubeinformers "k8s.io/client-go/informers"
	k8sfake "k8s.io/client-go/kubernetes/fake"
	core "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2/ktesting"
	testingclock "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	cronv1 "github.com/cronjob-controller/cronjob-controller/pkg/apis/batch/v1"
	"github.com/cronjob-controller/cronjob-controller/pkg/backfill"
	"github.com/cronjob-controller/cronjob-controller/pkg/control"
	"github.com/cronjob-controller/cronjob-controller/pkg/generated/clientset/versioned/fake"
	informers "github.com/cronjob-controller/cronjob-controller/pkg/generated/informers/externalversions"
	"github.com/cronjob-controller/cronjob-controller/pkg/job"
	"github.com/cronjob-controller/cronjob-controller/pkg/shard"
	"github.com/cronjob-controller/cronjob-controller/pkg/slim"
)

// backfillFixture is a Backfill controller on fake clientsets whose caches
// the test fills by hand, as the reflectors would.
type backfillFixture struct {
	t           *testing.T
	kubeclient  *k8sfake.Clientset
	client      *fake.Clientset
	kubeFactory kubeinformers.SharedInformerFactory
	cronFactory informers.SharedInformerFactory
	c           *BackfillController
	recorder    *record.FakeRecorder
}

func newBackfillFixture(t *testing.T, now time.Time, cj *cronv1.CronJob, bf *cronv1.Backfill, jobs ...*batchv1.Job) *backfillFixture {
	f := &backfillFixture{t: t, recorder: record.NewFakeRecorder(100)}
	var kubeObjects []runtime.Object
	for _, j := range jobs {
		kubeObjects = append(kubeObjects, j.DeepCopy())
	}
	f.kubeclient = k8sfake.NewClientset(kubeObjects...)
	f.kubeclient.PrependReactor("create", "jobs", func(action core.Action) (bool, runtime.Object, error) {
		j := action.(core.CreateAction).GetObject().(*batchv1.Job)
		j.UID = types.UID("uid-" + j.Name)
		return false, nil, nil
	})
	cronObjects := []runtime.Object{bf.DeepCopy()}
	if cj != nil {
		cronObjects = append(cronObjects, cj.DeepCopy())
	}
	f.client = fake.NewClientset(cronObjects...)
	f.c, f.kubeFactory, f.cronFactory = newBackfillControllerOn(t, f.kubeclient, f.client, now, f.recorder)
	for _, j := range jobs {
		cacheJob(t, f.kubeFactory, j)
	}
	if cj != nil {
		cacheCronJob(t, f.cronFactory, cj)
	}
	f.cacheBackfill(bf)
	return f
}

// newBackfillControllerOn is a Backfill controller on these clients, with
// informer factories of its own (filled by hand, never started).
func newBackfillControllerOn(t *testing.T, kubeclient *k8sfake.Clientset, client *fake.Clientset, now time.Time,
	recorder record.EventRecorder) (*BackfillController, kubeinformers.SharedInformerFactory, informers.SharedInformerFactory) {
	t.Helper()
	kubeFactory := kubeinformers.NewSharedInformerFactory(kubeclient, 0)
	cronFactory := informers.NewSharedInformerFactory(client, 0)
	_, ctx := ktesting.NewTestContext(t)
	// NewController sets the slim transforms the Backfill controller's
	// caches are read in.
	cronJobs, err := NewController(ctx, kubeclient, client, kubeFactory.Batch().V1().Jobs(),
		cronFactory.Batch().V1().CronJobs(), testingclock.NewFakeClock(now), WithEventRecorder(recorder))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cronJobs.queue.ShutDown)
	c, err := NewBackfillController(ctx, control.NewJobs(kubeclient), client, kubeFactory.Batch().V1().Jobs(),
		cronFactory.Batch().V1().CronJobs(), cronFactory.Batch().V1().Backfills(), recorder, testingclock.NewFakeClock(now))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.queue.ShutDown)
	return c, kubeFactory, cronFactory
}

func (f *backfillFixture) cacheBackfill(bf *cronv1.Backfill) {
	if err := f.cronFactory.Batch().V1().Backfills().Informer().GetIndexer().Update(bf.DeepCopy()); err != nil {
		f.t.Fatal(err)
	}
}

// sync brings the Job cache up to date with the client, as the informer
// would, runs one sync, and caches the Backfill it wrote.
func (f *backfillFixture) sync() *cronv1.Backfill {
	f.t.Helper()
	jobs, _ := f.kubeclient.BatchV1().Jobs(metav1.NamespaceDefault).List(context.Background(), metav1.ListOptions{})
	for i := range jobs.Items {
		cacheJob(f.t, f.kubeFactory, &jobs.Items[i])
	}
	f.kubeclient.ClearActions()
	f.client.ClearActions()
	if err := f.c.syncBackfill(context.Background(), cache.ObjectName{Namespace: metav1.NamespaceDefault, Name: "bf"}); err != nil {
		f.t.Fatalf("sync: %v", err)
	}
	bf, err := f.client.BatchV1().Backfills(metav1.NamespaceDefault).Get(context.Background(), "bf", metav1.GetOptions{})
	if err != nil {
		f.t.Fatal(err)
	}
	f.cacheBackfill(bf)
	return bf
}

func (f *backfillFixture) createdJobs() []string {
	var names []string
	for _, a := range f.kubeclient.Actions() {
		if a.GetVerb() == "create" && a.GetResource().Resource == "jobs" {
			names = append(names, a.(interface{ GetObject() runtime.Object }).GetObject().(*batchv1.Job).Name)
		}
	}
	return names
}

func newBackfill(start, end time.Time, maxConcurrent int32) *cronv1.Backfill {
	return &cronv1.Backfill{
		ObjectMeta: metav1.ObjectMeta{Name: "bf", Namespace: metav1.NamespaceDefault, UID: "bf-uid", Generation: 1},
		Spec: cronv1.BackfillSpec{CronJobName: "cj", Start: metav1.NewTime(start), End: metav1.NewTime(end),
			MaxConcurrent: ptr.To(maxConcurrent)},
	}
}

func finish(t *testing.T, f *backfillFixture, name string, cond batchv1.JobConditionType) {
	t.Helper()
	j, err := f.kubeclient.BatchV1().Jobs(metav1.NamespaceDefault).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	j.Status.Conditions = []batchv1.JobCondition{{Type: cond, Status: corev1.ConditionTrue}}
	if _, err := f.kubeclient.BatchV1().Jobs(metav1.NamespaceDefault).UpdateStatus(context.Background(), j, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// A Backfill over three hours before the CronJob's creation, one of them
// run already: it becomes the CronJob's dependent, creates the other two
// as the CronJob would name them, one at a time, skips the run, and
// completes when its Jobs finish.
func TestBackfillSync(t *testing.T) {
	now := at(10 * time.Minute)
	cj := newCronJob(createdAt(at(-6*time.Hour)), lastScheduled(at(0)))
	run := newJob(at(-4*time.Hour), succeeded)
	f := newBackfillFixture(t, now, cj, newBackfill(at(-5*time.Hour), at(-2*time.Hour), 1), run)

	bf := f.sync()
	if got, want := f.createdJobs(), []string{jobName(at(-5 * time.Hour))}; !slices.Equal(got, want) {
		t.Fatalf("first sync created %v, want %v", got, want)
	}
	if len(bf.OwnerReferences) != 1 || bf.OwnerReferences[0].UID != cj.UID || ptr.Deref(bf.OwnerReferences[0].Controller, false) {
		t.Errorf("Backfill owner references %+v, want the CronJob, not as controller", bf.OwnerReferences)
	}
	made, err := f.kubeclient.BatchV1().Jobs(metav1.NamespaceDefault).Get(context.Background(), jobName(at(-5*time.Hour)), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if ref := metav1.GetControllerOf(made); ref == nil || ref.Kind != "Backfill" || ref.UID != "bf-uid" || !slices.Equal(made.Finalizers, []string{backfill.Finalizer}) {
		t.Errorf("backfilled Job: controller %+v, finalizers %v; want the Backfill, only the backfill-record finalizer", ref, made.Finalizers)
	}
	if bf.Status.Total != 3 || bf.Status.Created != 1 || len(bf.Status.Active) != 1 {
		t.Errorf("status after the first sync: %+v", bf.Status)
	}

	// maxConcurrent 1: nothing more while the first runs.
	if f.sync(); len(f.createdJobs()) != 0 {
		t.Fatalf("created %v while maxConcurrent Jobs run", f.createdJobs())
	}
	finish(t, f, jobName(at(-5*time.Hour)), batchv1.JobComplete)
	bf = f.sync()
	if got, want := f.createdJobs(), []string{jobName(at(-3 * time.Hour))}; !slices.Equal(got, want) {
		t.Fatalf("after the first finished, created %v, want %v (the run at -4h skipped); status %+v", got, want, bf.Status)
	}
	if bf.Status.Skipped != 1 || bf.Status.Succeeded != 1 || bf.Status.Created != 2 {
		t.Errorf("status: %+v", bf.Status)
	}
	finish(t, f, jobName(at(-3*time.Hour)), batchv1.JobFailed)
	bf = f.sync()
	if !meta.IsStatusConditionTrue(bf.Status.Conditions, cronv1.ConditionBackfillComplete) || bf.Status.Failed != 1 {
		t.Errorf("not complete after its last Job failed: %+v", bf.Status)
	}
	if n := len(f.recorder.Events); n == 0 {
		t.Error("no Events emitted")
	}
}

// A name taken by a Job the cache does not show yet: the create answers
// AlreadyExists, and the time is skipped and counted, not created twice.
func TestBackfillNameTakenMeanwhile(t *testing.T) {
	now := at(10 * time.Minute)
	cj := newCronJob(createdAt(at(-6*time.Hour)), lastScheduled(at(0)))
	f := newBackfillFixture(t, now, cj, newBackfill(at(-5*time.Hour), at(-4*time.Hour), 1))
	if _, err := f.kubeclient.BatchV1().Jobs(metav1.NamespaceDefault).Create(context.Background(), newJob(at(-5*time.Hour), running), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	bf := f.sync()
	if bf.Status.Skipped != 1 || bf.Status.Created != 0 || len(bf.Status.Active) != 0 ||
		!meta.IsStatusConditionTrue(bf.Status.Conditions, cronv1.ConditionBackfillComplete) {
		t.Errorf("status %+v, want one time skipped and complete", bf.Status)
	}
}

// Without its CronJob a Backfill creates nothing and says why.
func TestBackfillWithoutCronJob(t *testing.T) {
	f := newBackfillFixture(t, at(0), nil, newBackfill(at(-5*time.Hour), at(-4*time.Hour), 1))
	bf := f.sync()
	c := meta.FindStatusCondition(bf.Status.Conditions, cronv1.ConditionBackfillComplete)
	if len(f.createdJobs()) != 0 || c == nil || c.Reason != backfill.ReasonCronJobNotFound {
		t.Errorf("created %v, condition %+v", f.createdJobs(), c)
	}
}

// backfillJobAt is a Job the Backfill with this UID made for t, holding
// the backfill-record finalizer.
func backfillJobAt(t time.Time, backfillUID types.UID) *batchv1.Job {
	j := newJob(t, running)
	j.UID = types.UID("uid-" + j.Name)
	j.OwnerReferences = []metav1.OwnerReference{{APIVersion: cronv1.SchemeGroupVersion.String(), Kind: "Backfill",
		Name: "bf", UID: backfillUID, Controller: ptr.To(true)}}
	j.Finalizers = []string{backfill.Finalizer}
	return j
}

// released lists the Jobs whose finalizer a patch removed.
func (f *backfillFixture) released() []string {
	var names []string
	for _, a := range f.kubeclient.Actions() {
		if a.GetVerb() == "patch" && a.GetResource().Resource == "jobs" {
			names = append(names, a.(core.PatchAction).GetName())
		}
	}
	return names
}

func (f *backfillFixture) finalizersOf(name string) []string {
	f.t.Helper()
	j, err := f.kubeclient.BatchV1().Jobs(metav1.NamespaceDefault).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		f.t.Fatal(err)
	}
	return j.Finalizers
}

// A Backfill's Job keeps its finalizer until a stored status records it:
// here the status write after the create fails, the Job finishes, and
// only the sync whose status write records it releases it. Deleted (by
// its TTL) in between, it would have stayed, so no later sync could miss
// its run and create the time again.
func TestBackfillReleasesAJobOnceItsStatusIsStored(t *testing.T) {
	now := at(10 * time.Minute)
	cj := newCronJob(createdAt(at(-6*time.Hour)), lastScheduled(at(0)))
	f := newBackfillFixture(t, now, cj, newBackfill(at(-5*time.Hour), at(-4*time.Hour), 1))
	failStatus := true
	f.client.PrependReactor("update", "backfills", func(a core.Action) (bool, runtime.Object, error) {
		if a.GetSubresource() == "status" && failStatus {
			return true, nil, apierrors.NewServiceUnavailable("status write lost")
		}
		return false, nil, nil
	})
	key := cache.ObjectName{Namespace: metav1.NamespaceDefault, Name: "bf"}
	if err := f.c.syncBackfill(context.Background(), key); err == nil {
		t.Fatal("sync with a failing status write reported no error")
	}
	name := jobName(at(-5 * time.Hour))
	if got := f.createdJobs(); !slices.Equal(got, []string{name}) {
		t.Fatalf("created %v, want %s", got, name)
	}
	if got := f.released(); len(got) != 0 {
		t.Errorf("released %v before any status recorded them", got)
	}
	finish(t, f, name, batchv1.JobComplete)
	failStatus = false
	bf := f.sync()
	if bf.Status.Created != 1 || bf.Status.Succeeded != 1 || len(bf.Status.Active) != 0 || len(f.createdJobs()) != 0 {
		t.Fatalf("status %+v, created %v; want the Job counted once, as succeeded, and nothing created", bf.Status, f.createdJobs())
	}
	if got := f.released(); !slices.Equal(got, []string{name}) {
		t.Errorf("released %v, want %s once its status was stored", got, name)
	}
	if fin := f.finalizersOf(name); len(fin) != 0 {
		t.Errorf("Job %s still holds %v", name, fin)
	}
}

// A running Job, recorded as active, keeps its finalizer: its outcome is
// not counted yet.
func TestBackfillKeepsTheFinalizerOfAnActiveJob(t *testing.T) {
	now := at(10 * time.Minute)
	cj := newCronJob(createdAt(at(-6*time.Hour)), lastScheduled(at(0)))
	f := newBackfillFixture(t, now, cj, newBackfill(at(-5*time.Hour), at(-4*time.Hour), 1))
	f.sync()
	bf := f.sync()
	if len(bf.Status.Active) != 1 || len(f.released()) != 0 {
		t.Errorf("active %v, released %v: want the running Job active and holding its finalizer", bf.Status.Active, f.released())
	}
}

// The Jobs of a Backfill that is gone are released (else the garbage
// collector's delete of them hangs); those of a Backfill the Job cache
// shows before the Backfill cache does are not.
func TestBackfillOrphanedJobsReleased(t *testing.T) {
	for _, tc := range []struct {
		name        string
		live        *cronv1.Backfill // the Backfill "bf" on the API server; nil: none
		cached      bool             // in the Backfill cache too
		jobOwnerUID types.UID
		wantRelease bool
	}{
		{name: "backfill gone", jobOwnerUID: "old-uid", wantRelease: true},
		{name: "a new backfill of the name, cached", live: newBackfill(at(-5*time.Hour), at(-4*time.Hour), 1), cached: true,
			jobOwnerUID: "old-uid", wantRelease: true},
		{name: "a new backfill of the name, not cached yet", live: newBackfill(at(-5*time.Hour), at(-4*time.Hour), 1),
			jobOwnerUID: "old-uid", wantRelease: true},
		{name: "the Job's own backfill, not cached yet", live: newBackfill(at(-5*time.Hour), at(-4*time.Hour), 1),
			jobOwnerUID: "bf-uid", wantRelease: false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			now := at(10 * time.Minute)
			cj := newCronJob(createdAt(at(-6*time.Hour)), lastScheduled(at(0)))
			j := backfillJobAt(at(-5*time.Hour), tc.jobOwnerUID)
			j.DeletionTimestamp = &metav1.Time{Time: now}
			f := newBackfillFixture(t, now, cj, newBackfill(at(-5*time.Hour), at(-4*time.Hour), 1), j)
			if tc.live == nil {
				if err := f.client.Tracker().Delete(cronv1.SchemeGroupVersion.WithResource("backfills"), metav1.NamespaceDefault, "bf"); err != nil {
					t.Fatal(err)
				}
			}
			if !tc.cached {
				if err := f.cronFactory.Batch().V1().Backfills().Informer().GetIndexer().Delete(newBackfill(at(0), at(0), 1)); err != nil {
					t.Fatal(err)
				}
			}
			f.kubeclient.ClearActions()
			if err := f.c.syncBackfill(context.Background(), cache.ObjectName{Namespace: metav1.NamespaceDefault, Name: "bf"}); err != nil {
				t.Fatal(err)
			}
			if got := len(f.released()) == 1; got != tc.wantRelease {
				t.Errorf("released %v, want a release: %v", f.released(), tc.wantRelease)
			}
		})
	}
}

// With -shards a Backfill is worked by the replica holding its shard (its
// UID's), and its CronJob, in another shard, is read live when no cache
// here holds it.
func TestShardedBackfill(t *testing.T) {
	const shards = 4
	for _, tc := range []struct {
		name     string
		hold     bool
		lapse    bool
		wantJobs int
	}{
		{name: "held, CronJob in another shard", hold: true, wantJobs: 1},
		{name: "another replica's", hold: false},
		{name: "held but lapsed", hold: true, lapse: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			now := at(10 * time.Minute)
			cj := newCronJob(createdAt(at(-6*time.Hour)), lastScheduled(at(0)))
			bf := newBackfill(at(-5*time.Hour), at(-4*time.Hour), 1)
			f := newBackfillFixture(t, now, cj, bf)
			if err := f.cronFactory.Batch().V1().CronJobs().Informer().GetIndexer().Delete(cj); err != nil {
				t.Fatal(err)
			}
			setClock := testingclock.NewFakeClock(now)
			set := shard.NewSet(shards, setClock)
			if tc.hold {
				set.Acquire(shard.OfUID(bf.UID, shards), now.Add(2*time.Second))
			}
			if tc.lapse {
				setClock.Step(2 * time.Second)
			}
			f.c.shards = set
			_, ctx := ktesting.NewTestContext(t)
			f.c.queue.Add(cache.MetaObjectToName(bf))
			f.c.processNextWorkItem(ctx)
			if got := len(f.createdJobs()); got != tc.wantJobs {
				t.Errorf("%d Jobs created, want %d", got, tc.wantJobs)
			}
		})
	}
}

// A Backfill's Job whose status write was lost (so no status records it)
// loses its controller reference while the Backfill still exists (a user's
// edit; kubectl apply of a manifest without it), and is then deleted (its
// TTL). It must keep its finalizer until its Backfill's status records the
// time: released at once, the API server removes it, the Backfill finds
// the name free and runs the time a second time. Once recorded, it is
// released under its Backfill's key.
func TestBackfillUncontrolledJobReleasedOnceRecorded(t *testing.T) {
	now := at(10 * time.Minute)
	cj := newCronJob(createdAt(at(-6*time.Hour)), lastScheduled(at(0)))
	j := backfillJobAt(at(-5*time.Hour), "bf-uid")
	j.Labels = map[string]string{cronv1.BackfillLabel: "bf"}
	j.Status.Conditions = nil
	j.OwnerReferences = nil                       // the edit
	j.DeletionTimestamp = &metav1.Time{Time: now} // then its TTL
	f := newBackfillFixture(t, now, cj, newBackfill(at(-5*time.Hour), at(-4*time.Hour), 1), j)
	_, ctx := ktesting.NewTestContext(t)
	f.c.enqueueController(slim.NewJob(j))
	for f.c.queue.Len() > 0 {
		f.c.processNextWorkItem(ctx)
	}
	if fin := f.finalizersOf(j.Name); !slices.Contains(fin, backfill.Finalizer) {
		// Released: the API server now removes the Job.
		if err := f.kubeclient.BatchV1().Jobs(metav1.NamespaceDefault).Delete(context.Background(), j.Name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		if err := f.kubeFactory.Batch().V1().Jobs().Informer().GetIndexer().Delete(slim.NewJob(j)); err != nil {
			t.Fatal(err)
		}
	}
	f.sync()
	if got := f.createdJobs(); slices.Contains(got, j.Name) {
		t.Errorf("the time of %s, whose Job ran, was created again: %v", j.Name, got)
	}
	// The Backfill's sync passed its time (the Job, no longer its own,
	// counted skipped) and, the status stored, released it.
	if live, err := f.kubeclient.BatchV1().Jobs(metav1.NamespaceDefault).Get(context.Background(), j.Name, metav1.GetOptions{}); err == nil &&
		slices.Contains(live.Finalizers, backfill.Finalizer) {
		t.Errorf("the uncontrolled Job still holds %v once its Backfill's status covers its time", live.Finalizers)
	}
}

// With -shards a Backfill's shard moves away: the Backfill cache drops it
// before the Job cache drops its Jobs, and a Job event queues it here. The
// sync runs unheld (no cached Backfill to hold a shard by) and must not
// release the Jobs of a Backfill that lives on another replica, unrecorded
// as they may be: the live read says it exists.
func TestBackfillShardMovedAwayKeepsTheJobs(t *testing.T) {
	now := at(10 * time.Minute)
	cj := newCronJob(createdAt(at(-6*time.Hour)), lastScheduled(at(0)))
	bf := newBackfill(at(-5*time.Hour), at(-4*time.Hour), 1)
	j := backfillJobAt(at(-5*time.Hour), bf.UID)
	f := newBackfillFixture(t, now, cj, bf, j)
	if err := f.cronFactory.Batch().V1().Backfills().Informer().GetIndexer().Delete(bf); err != nil {
		t.Fatal(err)
	}
	f.c.shards = shard.NewSet(4, testingclock.NewFakeClock(now)) // holds no shard now
	_, ctx := ktesting.NewTestContext(t)
	f.c.enqueueController(slim.NewJob(j))
	for f.c.queue.Len() > 0 {
		f.c.processNextWorkItem(ctx)
	}
	if fin := f.finalizersOf(j.Name); !slices.Contains(fin, backfill.Finalizer) {
		t.Errorf("the Job of a Backfill on another replica lost its finalizer: %v", fin)
	}
	if got := f.createdJobs(); len(got) != 0 {
		t.Errorf("a replica not holding the Backfill's shard created %v", got)
	}
}

var backfillKey = cache.ObjectName{Namespace: metav1.NamespaceDefault, Name: "bf"}

// kubectl delete backfill bf --cascade=orphan: the garbage collector
// removes the Backfill's owner reference from its Jobs, then the Backfill
// goes. A Job still holding backfill-record is then controlled by nothing,
// and no Backfill will record it: deleted later (its TTL, by hand), its
// finalizer must go, or it hangs in Terminating. A Job nobody deleted
// keeps it.
func TestBackfillOrphanCascadeJobIsReleased(t *testing.T) {
	for _, tc := range []struct {
		name    string
		label   bool // the Job names its Backfill in its label
		sharded bool // with -shards, holding no shard: the release runs unheld
	}{
		{name: "labelled", label: true},
		{name: "no label"},
		{name: "no label, sharded", sharded: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			now := at(10 * time.Minute)
			cj := newCronJob(createdAt(at(-6*time.Hour)), lastScheduled(at(0)))
			orphaned := backfillJobAt(at(-5*time.Hour), "bf-uid")
			if tc.label {
				orphaned.Labels = map[string]string{cronv1.BackfillLabel: "bf"}
			}
			orphaned.OwnerReferences = nil // the garbage collector's orphan step
			kept := orphaned.DeepCopy()
			kept.Name, kept.UID = "not-deleted", "not-deleted-uid"
			orphaned.DeletionTimestamp = &metav1.Time{Time: now} // then its TTL
			f := newBackfillFixture(t, now, cj, newBackfill(at(-5*time.Hour), at(-4*time.Hour), 1), orphaned, kept)
			if err := f.client.Tracker().Delete(cronv1.SchemeGroupVersion.WithResource("backfills"), metav1.NamespaceDefault, "bf"); err != nil {
				t.Fatal(err)
			}
			if err := f.cronFactory.Batch().V1().Backfills().Informer().GetIndexer().Delete(newBackfill(at(0), at(0), 1)); err != nil {
				t.Fatal(err)
			}
			if tc.sharded {
				f.c.shards = shard.NewSet(4, testingclock.NewFakeClock(now))
			}
			// The Job update event (deletion timestamp set) queues its release.
			_, ctx := ktesting.NewTestContext(t)
			f.c.enqueueController(slim.NewJob(orphaned))
			f.c.enqueueController(slim.NewJob(kept))
			if f.c.queue.Len() == 0 {
				t.Fatal("the delete of an uncontrolled Job holding backfill-record queued nothing")
			}
			for f.c.queue.Len() > 0 {
				f.c.processNextWorkItem(ctx)
			}
			if fin := f.finalizersOf(orphaned.Name); slices.Contains(fin, backfill.Finalizer) {
				t.Errorf("the orphaned Job still holds %v after its Backfill is gone", fin)
			}
			if fin := f.finalizersOf(kept.Name); !slices.Contains(fin, backfill.Finalizer) {
				t.Errorf("an orphaned Job nobody deleted lost its finalizer: %v", fin)
			}
		})
	}
}

// kubectl delete backfill bf --cascade=foreground: the Backfill stays,
// with a deletionTimestamp, until its Jobs are gone. It must create no
// Job: each active Job the garbage collector deletes would otherwise count
// as failed and free a slot for the next time, which the garbage collector
// deletes in turn, and every remaining time of the range would get a Job
// (its pods start) while the user is deleting the Backfill.
func TestBackfillBeingDeletedCreatesNothing(t *testing.T) {
	now := at(10 * time.Minute)
	cj := newCronJob(createdAt(at(-6*time.Hour)), lastScheduled(at(0)))
	bf := newBackfill(at(-5*time.Hour), at(-2*time.Hour), 1)
	bf.DeletionTimestamp = &metav1.Time{Time: now}
	bf.Finalizers = []string{metav1.FinalizerDeleteDependents}
	f := newBackfillFixture(t, now, cj, bf)
	f.sync()
	if got := f.createdJobs(); len(got) != 0 {
		t.Errorf("a Backfill being deleted created %v", got)
	}
}

// A sync created the Job of a time and crashed (or lost its status write)
// before a status recorded it; then the CronJob was deleted with
// --cascade=orphan, so the Backfill stays, CronJobNotFound. The Job must
// still be recorded and released: otherwise, once it finishes and its TTL
// deletes it, it hangs in Terminating while the Backfill lives.
func TestBackfillWithoutCronJobReleasesAnUnrecordedJob(t *testing.T) {
	now := at(10 * time.Minute)
	j := backfillJobAt(at(-5*time.Hour), "bf-uid")
	j.Status.Conditions = []batchv1.JobCondition{{Type: batchv1.JobComplete, Status: "True"}}
	j.DeletionTimestamp = &metav1.Time{Time: now}            // its TTL
	bf := newBackfill(at(-5*time.Hour), at(-4*time.Hour), 1) // no owner: the CronJob's delete orphaned it
	f := newBackfillFixture(t, now, nil, bf, j)
	var st cronv1.BackfillStatus
	for range 3 {
		st = f.sync().Status
	}
	if fin := f.finalizersOf(j.Name); slices.Contains(fin, backfill.Finalizer) {
		t.Errorf("the Job of the lost status write still holds %v (status %+v)", fin, st)
	}
}

// A sync releases a recorded Job once, even when the Job cache still shows
// it holding the finalizer: the status write's own echo queues the next
// sync, usually before the release patches' echoes arrive, and a repeat
// would cost a failed JSON patch and a live read per Job (the CronJob
// controller remembers what it released the same way: releasedJobs).
func TestBackfillReleasesEachJobOnce(t *testing.T) {
	now := at(10 * time.Minute)
	cj := newCronJob(createdAt(at(-6*time.Hour)), lastScheduled(at(0)))
	f := newBackfillFixture(t, now, cj, newBackfill(at(-5*time.Hour), at(-2*time.Hour), 3))
	f.sync()
	for _, name := range f.createdJobs() {
		finish(t, f, name, batchv1.JobComplete)
	}
	f.sync() // counts them, writes the status, releases all three
	if got := len(f.released()); got != 3 {
		t.Fatalf("released %d Jobs, want 3", got)
	}
	// The status write's echo queues a sync; the Jobs' echoes are not in yet.
	f.kubeclient.ClearActions()
	if err := f.c.syncBackfill(context.Background(), backfillKey); err != nil {
		t.Fatal(err)
	}
	if n := len(f.kubeclient.Actions()); n != 0 {
		t.Errorf("a sync with nothing new made %d Job API calls (%d release patches)", n, len(f.released()))
	}
}

// The Backfill deleted while a sync creates its Job (after the live read):
// the status write fails NotFound, and the next sync, from the Backfill's
// delete event, releases the Job the garbage collector deletes.
func TestBackfillDeletedWhileCreatingReleasesItsJob(t *testing.T) {
	now := at(10 * time.Minute)
	cj := newCronJob(createdAt(at(-6*time.Hour)), lastScheduled(at(0)))
	f := newBackfillFixture(t, now, cj, newBackfill(at(-5*time.Hour), at(-4*time.Hour), 1))
	backfills := cronv1.SchemeGroupVersion.WithResource("backfills")
	f.kubeclient.PrependReactor("create", "jobs", func(a core.Action) (bool, runtime.Object, error) {
		_ = f.client.Tracker().Delete(backfills, metav1.NamespaceDefault, "bf")
		return false, nil, nil
	})
	if err := f.c.syncBackfill(context.Background(), backfillKey); err == nil {
		t.Fatal("the status write of a deleted Backfill reported no error")
	}
	name := jobName(at(-5 * time.Hour))
	if fin := f.finalizersOf(name); !slices.Contains(fin, backfill.Finalizer) {
		t.Fatalf("the created Job holds %v", fin)
	}
	// The garbage collector deletes it; the Backfill's delete reaches the cache.
	live, err := f.kubeclient.BatchV1().Jobs(metav1.NamespaceDefault).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	live.DeletionTimestamp = &metav1.Time{Time: now}
	if _, err := f.kubeclient.BatchV1().Jobs(metav1.NamespaceDefault).Update(context.Background(), live, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	cacheJob(t, f.kubeFactory, live)
	if err := f.cronFactory.Batch().V1().Backfills().Informer().GetIndexer().Delete(newBackfill(at(0), at(0), 1)); err != nil {
		t.Fatal(err)
	}
	if err := f.c.syncBackfill(context.Background(), backfillKey); err != nil {
		t.Fatal(err)
	}
	if fin := f.finalizersOf(name); slices.Contains(fin, backfill.Finalizer) {
		t.Errorf("the Job of the deleted Backfill still holds %v", fin)
	}
}

// The CronJob controller leaves a Backfill's Job alone. Its event handlers
// see a Job holding a finalizer, controlled by no CronJob and being
// deleted; neither the sync of the CronJob's key nor that of the Job's own
// name may release backfill-record (only the Backfill's stored status
// may): noteOrphan looks at run-record only.
func TestCronJobControllerLeavesBackfillJobsAlone(t *testing.T) {
	now := at(10 * time.Minute)
	f := newFixture(t, now)
	f.cronJob = newCronJob(createdAt(at(-6 * time.Hour)))
	j := backfillJobAt(at(-5*time.Hour), "bf-uid")
	j.DeletionTimestamp = &metav1.Time{Time: now}
	f.jobs = []*batchv1.Job{j}
	_, ctx := ktesting.NewTestContext(t)
	c, _, _ := f.newController(ctx)
	s := slim.NewJob(j)
	c.addJob(s)
	unowned := j.DeepCopy()
	unowned.OwnerReferences = nil
	c.updateJob(s, slim.NewJob(unowned))
	for _, name := range []string{"cj", j.Name, "bf"} {
		if _, err := c.syncHandler(ctx, cache.ObjectName{Namespace: metav1.NamespaceDefault, Name: name}); err != nil {
			t.Fatal(err)
		}
	}
	for _, a := range f.kubeclient.Actions() {
		if a.GetVerb() == "patch" && a.(core.PatchAction).GetName() == j.Name {
			t.Errorf("the CronJob controller patched the Backfill's Job %s", j.Name)
		}
	}
}

// A Job a Backfill made and that was deleted (ttlSecondsAfterFinished)
// before the echo of the status write recording it reached the cache: the
// cached status is stale, and must not make the same time be created
// again. A sync that creates decides from the Backfill read live.
func TestBackfillStaleCacheAfterTTLCreatesOnce(t *testing.T) {

	now := at(10 * time.Minute)
	cj := newCronJob(createdAt(at(-6*time.Hour)), lastScheduled(at(0)))
	stale := newBackfill(at(-5*time.Hour), at(-4*time.Hour), 1)
	f := newBackfillFixture(t, now, cj, stale)
	key := cache.ObjectName{Namespace: metav1.NamespaceDefault, Name: "bf"}
	if err := f.c.syncBackfill(context.Background(), key); err != nil {
		t.Fatal(err)
	}
	first := f.createdJobs()
	if len(first) != 1 {
		t.Fatalf("first sync created %v", first)
	}
	// The Job ran, finished and was deleted by its TTL; the Job cache
	// saw the delete, the Backfill cache not yet the status write.
	if err := f.kubeclient.BatchV1().Jobs(metav1.NamespaceDefault).Delete(context.Background(), first[0], metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := f.kubeFactory.Batch().V1().Jobs().Informer().GetIndexer().Replace(nil, ""); err != nil {
		t.Fatal(err)
	}
	f.kubeclient.ClearActions()
	_ = f.c.syncBackfill(context.Background(), key) // its status write may conflict; the create is done by then
	if again := f.createdJobs(); len(again) != 0 {
		t.Errorf("second sync from the stale Backfill created %v again: the time %v ran twice", again, at(-5*time.Hour))
	}
}

// A Job the API server refuses as invalid (a template it rejects, a label
// it cannot hold) is not created again and again: the sync ends without an
// error to retry, the time is skipped and counted, JobTemplateValid=False
// says why, and the next sync creates nothing for it.
func TestBackfillRejectedJobIsNotRetried(t *testing.T) {
	now := at(10 * time.Minute)
	cj := newCronJob(createdAt(at(-6*time.Hour)), lastScheduled(at(0)))
	f := newBackfillFixture(t, now, cj, newBackfill(at(-5*time.Hour), at(-4*time.Hour), 1))
	f.kubeclient.PrependReactor("create", "jobs", func(a core.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewInvalid(schema.GroupKind{Group: "batch", Kind: "Job"}, "x", field.ErrorList{field.Invalid(field.NewPath("metadata", "labels"), "x", "too long")})
	})
	bf := f.sync()
	if c := meta.FindStatusCondition(bf.Status.Conditions, cronv1.ConditionJobTemplateValid); c == nil || c.Status != metav1.ConditionFalse {
		t.Errorf("JobTemplateValid = %+v, want False", c)
	}
	if bf.Status.Skipped != 1 || bf.Status.Created != 0 || !meta.IsStatusConditionTrue(bf.Status.Conditions, cronv1.ConditionBackfillComplete) {
		t.Errorf("status %+v, want the one time skipped and the Backfill complete", bf.Status)
	}
	if f.sync(); len(f.createdJobs()) != 0 {
		t.Errorf("the next sync tried again: %v", f.createdJobs())
	}
}

// A time the CronJob ran, whose Job was pruned since, is not run again
// when the CronJob cache is older than the status that recorded the run:
// a sync that would create reads the CronJob live, and its run history
// says the time ran.
func TestBackfillReadsTheRunHistoryLiveBeforeCreating(t *testing.T) {
	now := at(10 * time.Minute)
	ran := at(-5 * time.Hour)
	stale := newCronJob(createdAt(at(-6*time.Hour)), lastScheduled(at(0)))
	live := stale.DeepCopy()
	live.Status.RecentRuns = []cronv1.RunRecord{{JobName: job.Name(live.Name, ran), Trigger: cronv1.TriggerScheduled,
		ScheduledTime: &metav1.Time{Time: ran}, Outcome: cronv1.OutcomeSucceeded}}
	f := newBackfillFixture(t, now, live, newBackfill(ran, ran.Add(time.Hour), 1))
	cacheCronJob(t, f.cronFactory, stale)
	bf := f.sync()
	if created := f.createdJobs(); len(created) != 0 {
		t.Errorf("created %v: the run of %v, pruned, ran a second time", created, ran)
	}
	if bf.Status.Skipped != 1 || !meta.IsStatusConditionTrue(bf.Status.Conditions, cronv1.ConditionBackfillComplete) {
		t.Errorf("status %+v, want the time skipped as already run and the Backfill complete", bf.Status)
	}
}

// Under rerunPolicy Always a time the CronJob has just run is run again
// once that run has finished, even when the Job cache did not show the
// CronJob's Job (it lags; with -shards it may never show a Job of another
// replica's shard): the create of the time's first run then meets it
// (AlreadyExists). Skipped then as "exists", as under Never, the time
// would never be run again.
func TestBackfillAlwaysRunsAgainATimeWhoseRunTheCacheDidNotShow(t *testing.T) {
	for _, tc := range []struct {
		name  string
		state jobState
	}{{"running", running}, {"finished", succeeded}} {
		t.Run(tc.name, func(t *testing.T) {
			now := at(10 * time.Minute)
			cj := newCronJob(createdAt(at(-6*time.Hour)), lastScheduled(at(0)))
			bf := newBackfill(at(0), at(time.Hour), 1)
			bf.Spec.RerunPolicy = cronv1.RerunAlways
			f := newBackfillFixture(t, now, cj, bf)
			// The CronJob's run of 10:00, which the Job cache never shows.
			if _, err := f.kubeclient.BatchV1().Jobs(metav1.NamespaceDefault).Create(context.Background(), newJob(at(0), tc.state), metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			again := job.RerunName("cj", bf.UID, at(0))
			for range 2 {
				f.kubeclient.ClearActions()
				if err := f.c.syncBackfill(context.Background(), backfillKey); err != nil {
					t.Fatal(err)
				}
				live, err := f.client.BatchV1().Backfills(metav1.NamespaceDefault).Get(context.Background(), "bf", metav1.GetOptions{})
				if err != nil {
					t.Fatal(err)
				}
				f.cacheBackfill(live)
				if slices.Contains(f.createdJobs(), again) {
					if live.Status.Created != 1 || live.Status.Rerun != 1 || live.Status.Skipped != 0 {
						t.Errorf("status %+v, want the run again counted", live.Status)
					}
					return
				}
				if live.Status.Skipped != 0 || live.Status.LastHandledTime != nil {
					t.Fatalf("the CronJob's run of %v met, not run again: status %+v, want the time unhandled", at(0), live.Status)
				}
				finish(t, f, jobName(at(0)), batchv1.JobComplete)
			}
			t.Errorf("the time %v, run by the CronJob, was never run again as %s", at(0), again)
		})
	}
}

// Under rerunPolicy IfFailed a Backfill waits for the earlier run of a
// time to finish before it may run the time again. When that run is
// another Backfill's Job, whose end changes nothing of the CronJob's, the
// Job's own events must wake the waiting Backfill: nothing else would (the
// CronJob here is idle), and the failed time would never be run again.
func TestWaitingBackfillWakesWhenTheEarlierRunFinishes(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	now := at(10 * time.Minute)
	ran := at(-5 * time.Hour)
	cj := newCronJob(createdAt(at(-6*time.Hour)), lastScheduled(at(0)))
	earlier := backfillJobAt(ran, "other-uid")
	earlier.OwnerReferences[0].Name = "other"
	other := newBackfill(ran, ran.Add(time.Hour), 1)
	other.Name, other.UID = "other", "other-uid"
	other.Status = cronv1.BackfillStatus{Total: 1, Created: 1, LastHandledTime: &metav1.Time{Time: ran},
		Active: []corev1.ObjectReference{job.Ref(earlier)}}
	bf := newBackfill(ran, ran.Add(time.Hour), 1)
	bf.Spec.RerunPolicy = cronv1.RerunIfFailed
	f := newBackfillFixture(t, now, cj, bf, earlier)
	if err := f.client.Tracker().Add(other); err != nil {
		t.Fatal(err)
	}
	f.kubeFactory.Start(ctx.Done())
	f.cronFactory.Start(ctx.Done())
	defer f.kubeFactory.Shutdown()
	defer f.cronFactory.Shutdown()
	done := make(chan error)
	go func() { done <- f.c.Run(ctx, 1) }()
	defer func() { cancel(); <-done }()

	waitFor(ctx, t, "the Backfill to wait for the earlier run", func() bool {
		live, err := f.client.BatchV1().Backfills(metav1.NamespaceDefault).Get(ctx, "bf", metav1.GetOptions{})
		c := meta.FindStatusCondition(live.Status.Conditions, cronv1.ConditionBackfillComplete)
		return err == nil && c != nil && c.Reason == backfill.ReasonWaitingForRun
	})
	finish(t, f, earlier.Name, batchv1.JobFailed)
	rerun := job.RerunName("cj", bf.UID, ran)
	waitFor(ctx, t, "the failed time to be run again as "+rerun, func() bool {
		_, err := f.kubeclient.BatchV1().Jobs(metav1.NamespaceDefault).Get(ctx, rerun, metav1.GetOptions{})
		return err == nil
	})
}
