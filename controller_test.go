package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
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
	"k8s.io/apimachinery/pkg/util/wait"
	kubeinformers "k8s.io/client-go/informers"
	k8sfake "k8s.io/client-go/kubernetes/fake"
	core "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2/ktesting"
	testingclock "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	cronv1 "github.com/cronjob-controller/cronjob-controller/pkg/apis/batch/v1"
	"github.com/cronjob-controller/cronjob-controller/pkg/generated/clientset/versioned/fake"
	informers "github.com/cronjob-controller/cronjob-controller/pkg/generated/informers/externalversions"
	"github.com/cronjob-controller/cronjob-controller/pkg/job"
	"github.com/cronjob-controller/cronjob-controller/pkg/schedule"
	"github.com/cronjob-controller/cronjob-controller/pkg/slim"
)

// topOfHour is the instant most cases revolve around.
var topOfHour = mustUTC("2026-05-01T10:00:00Z")

func mustUTC(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t
}

// at is an offset from topOfHour.
func at(d time.Duration) time.Time { return topOfHour.Add(d) }

// newCronJob is an hourly CronJob in UTC created at 09:30, never run.
func newCronJob(opts ...func(*cronv1.CronJob)) *cronv1.CronJob {
	cj := &cronv1.CronJob{
		TypeMeta: metav1.TypeMeta{APIVersion: cronv1.SchemeGroupVersion.String(), Kind: "CronJob"},
		ObjectMeta: metav1.ObjectMeta{
			Name: "cj", Namespace: metav1.NamespaceDefault, UID: "cj-uid", Generation: 1,
			CreationTimestamp: metav1.NewTime(at(-30 * time.Minute)),
		},
		Spec: cronv1.CronJobSpec{
			Schedule:          "0 * * * *",
			TimeZone:          ptr.To("UTC"),
			ConcurrencyPolicy: cronv1.AllowConcurrent,
			Suspend:           ptr.To(false),
			JobTemplate: batchv1.JobTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "hello"}, Annotations: map[string]string{"note": "kept"}},
				Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
					RestartPolicy: corev1.RestartPolicyOnFailure,
					Containers:    []corev1.Container{{Name: "hello", Image: "busybox"}},
				}}},
			},
			SuccessfulJobsHistoryLimit: ptr.To[int32](3),
			FailedJobsHistoryLimit:     ptr.To[int32](1),
		},
	}
	for _, o := range opts {
		o(cj)
	}
	return cj
}

func createdAt(t time.Time) func(*cronv1.CronJob) {
	return func(cj *cronv1.CronJob) { cj.CreationTimestamp = metav1.NewTime(t) }
}

// lastScheduled says the CronJob last ran at t; a CronJob that ran then
// existed then, so its creation moves before t if need be (times before a
// CronJob's creation are never its runs).
func lastScheduled(t time.Time) func(*cronv1.CronJob) {
	return func(cj *cronv1.CronJob) {
		cj.Status.LastScheduleTime = &metav1.Time{Time: t}
		if cj.CreationTimestamp.After(t) {
			cj.CreationTimestamp = metav1.NewTime(t.Add(-30 * time.Minute))
		}
	}
}

func policy(p cronv1.ConcurrencyPolicy) func(*cronv1.CronJob) {
	return func(cj *cronv1.CronJob) { cj.Spec.ConcurrencyPolicy = p }
}

func deadline(s int64) func(*cronv1.CronJob) {
	return func(cj *cronv1.CronJob) { cj.Spec.StartingDeadlineSeconds = &s }
}

func withSchedule(s string) func(*cronv1.CronJob) {
	return func(cj *cronv1.CronJob) { cj.Spec.Schedule = s }
}

// activeJobs lists jobs in status.active.
func activeJobs(jobs ...*batchv1.Job) func(*cronv1.CronJob) {
	return func(cj *cronv1.CronJob) {
		for _, j := range jobs {
			cj.Status.Active = append(cj.Status.Active, job.Ref(j))
		}
	}
}

type jobState int

const (
	running jobState = iota
	succeeded
	failed
)

// newJob is the Job the controller would have made for the run at t.
func newJob(t time.Time, state jobState, opts ...func(*batchv1.Job)) *batchv1.Job {
	cj := newCronJob()
	j := job.New(cj, t, time.UTC)
	j.UID = types.UID("uid-" + j.Name)
	j.CreationTimestamp = metav1.NewTime(t)
	j.Status.StartTime = &metav1.Time{Time: t}
	switch state {
	case succeeded:
		j.Status.CompletionTime = &metav1.Time{Time: t.Add(5 * time.Minute)}
		j.Status.Conditions = []batchv1.JobCondition{{Type: batchv1.JobComplete, Status: corev1.ConditionTrue}}
	case failed:
		j.Status.Conditions = []batchv1.JobCondition{{Type: batchv1.JobFailed, Status: corev1.ConditionTrue}}
	}
	// A Job made before the run-record finalizer, or released since: the
	// cases that need it say so (holdingRecord).
	j.Finalizers = nil
	for _, o := range opts {
		o(j)
	}
	return j
}

// holdingRecord gives a Job the run-record finalizer, as until the stored
// status records its run.
func holdingRecord(j *batchv1.Job) { j.Finalizers = []string{job.RunRecordFinalizer} }

func noStartTime(j *batchv1.Job) { j.Status.StartTime = nil }

// fixture holds what a sync sees and what it did, in the manner of
// sample-controller's tests.
type fixture struct {
	t testing.TB

	kubeclient *k8sfake.Clientset
	client     *fake.Clientset
	clock      *testingclock.FakeClock
	recorder   *record.FakeRecorder

	// Objects in the informer caches.
	cronJob *cronv1.CronJob
	jobs    []*batchv1.Job
	// Jobs the API server has but the cache has not seen yet.
	uncachedJobs []*batchv1.Job
	// Jobs the cache has but the API server deleted already.
	deletedJobs []*batchv1.Job
}

func newFixture(t testing.TB, now time.Time) *fixture {
	return &fixture{t: t, clock: testingclock.NewFakeClock(now), recorder: record.NewFakeRecorder(100)}
}

// newController builds a controller on fake clients with seeded caches.
func (f *fixture) newController(ctx context.Context) (*Controller, kubeinformers.SharedInformerFactory, informers.SharedInformerFactory) {
	var kubeObjects []runtime.Object
	for _, j := range append(slices.Clone(f.jobs), f.uncachedJobs...) {
		if !slices.Contains(f.deletedJobs, j) {
			kubeObjects = append(kubeObjects, j.DeepCopy())
		}
	}
	f.kubeclient = k8sfake.NewClientset(kubeObjects...)
	f.kubeclient.PrependReactor("create", "jobs", f.stampCreatedJob)
	var objects []runtime.Object
	if f.cronJob != nil {
		objects = append(objects, f.cronJob.DeepCopy())
	}
	f.client = fake.NewClientset(objects...)

	kubeFactory := kubeinformers.NewSharedInformerFactory(f.kubeclient, 0)
	cronFactory := informers.NewSharedInformerFactory(f.client, 0)
	c, err := NewController(ctx, f.kubeclient, f.client,
		kubeFactory.Batch().V1().Jobs(), cronFactory.Batch().V1().CronJobs(), f.clock,
		WithEventRecorder(f.recorder))
	if err != nil {
		f.t.Fatal(err)
	}
	f.t.Cleanup(c.queue.ShutDown)
	for _, j := range f.jobs {
		cacheJob(f.t, kubeFactory, j)
	}
	if f.cronJob != nil {
		cacheCronJob(f.t, cronFactory, f.cronJob)
	}
	return c, kubeFactory, cronFactory
}

// cacheJob and cacheCronJob put an object into an informer's cache as its
// reflector would: in the slim form the controller's transform makes.
func cacheJob(t testing.TB, kubeFactory kubeinformers.SharedInformerFactory, j *batchv1.Job) {
	t.Helper()
	if err := kubeFactory.Batch().V1().Jobs().Informer().GetIndexer().Update(slim.NewJob(j)); err != nil {
		t.Fatal(err)
	}
}

func cacheCronJob(t testing.TB, cronFactory informers.SharedInformerFactory, cj *cronv1.CronJob) {
	t.Helper()
	obj, err := slim.FromCronJob(cj.DeepCopy())
	if err != nil {
		t.Fatal(err)
	}
	if err := cronFactory.Batch().V1().CronJobs().Informer().GetIndexer().Update(obj); err != nil {
		t.Fatal(err)
	}
}

// stampCreatedJob gives a created Job what the API server would: a UID and
// a creation time.
func (f *fixture) stampCreatedJob(action core.Action) (bool, runtime.Object, error) {
	j := action.(core.CreateAction).GetObject().(*batchv1.Job)
	if j.UID == "" {
		j.UID = types.UID("uid-" + j.Name)
	}
	j.CreationTimestamp = metav1.NewTime(f.clock.Now())
	return false, nil, nil
}

// writes are the actions that change something, as "verb resource[/sub] ns/name".
func describe(actions []core.Action, onlyWrites bool) []string {
	var out []string
	for _, a := range actions {
		verb := a.GetVerb()
		if verb == "list" || verb == "watch" || (onlyWrites && verb == "get") {
			continue
		}
		res := a.GetResource().Resource
		if sub := a.GetSubresource(); sub != "" {
			res += "/" + sub
		}
		var name string
		switch a := a.(type) {
		case core.CreateAction:
			name = a.GetObject().(metav1.Object).GetName()
		case core.UpdateAction:
			name = a.GetObject().(metav1.Object).GetName()
		case core.GetAction:
			name = a.GetName()
		case core.DeleteAction:
			name = a.GetName()
		case core.PatchAction:
			name = a.GetName()
		}
		out = append(out, fmt.Sprintf("%s %s %s/%s", verb, res, a.GetNamespace(), name))
	}
	return out
}

func (f *fixture) events() []string {
	var out []string
	for {
		select {
		case e := <-f.recorder.Events:
			fields := strings.SplitN(e, " ", 3)
			out = append(out, fields[0]+" "+fields[1])
		default:
			return out
		}
	}
}

// writtenStatus is the status of the last UpdateStatus, or nil.
func (f *fixture) writtenStatus() *cronv1.CronJob {
	var last *cronv1.CronJob
	for _, a := range f.client.Actions() {
		if u, ok := a.(core.UpdateAction); ok && a.GetSubresource() == "status" {
			last = u.GetObject().(*cronv1.CronJob)
		}
	}
	return last
}

// statusWrites counts the UpdateStatus calls made.
func (f *fixture) statusWrites() int {
	n := 0
	for _, a := range f.client.Actions() {
		if _, ok := a.(core.UpdateAction); ok && a.GetSubresource() == "status" {
			n++
		}
	}
	return n
}

func jobName(t time.Time) string { return job.Name("cj", t) }

func TestSyncCronJob(t *testing.T) {
	prev := at(-time.Hour) // the run before topOfHour, 09:00
	running9 := newJob(prev, running)
	done9 := newJob(prev, succeeded)
	serverError := apierrors.NewInternalError(errors.New("etcd is sad"))
	invalid := apierrors.NewInvalid(schema.GroupKind{Group: "batch", Kind: "Job"}, jobName(topOfHour), nil)

	cases := []struct {
		name    string
		cronJob *cronv1.CronJob
		jobs    []*batchv1.Job
		// uncached are Jobs only the API server has; deleted only the cache.
		uncached, deleted []*batchv1.Job
		now               time.Time
		// createErr makes the Job create fail.
		createErr error

		wantActions      []string
		wantEvents       []string
		wantRequeue      time.Duration
		wantErr          bool
		wantActive       []string
		wantLastSchedule time.Time
		wantScheduleOK   metav1.ConditionStatus
		wantTemplateOK   metav1.ConditionStatus
	}{
		// Never ran.
		{
			name: "never ran, not yet time", cronJob: newCronJob(), now: at(-15 * time.Minute),
			wantActions: []string{"update cronjobs/status default/cj"}, wantRequeue: 15 * time.Minute, wantScheduleOK: metav1.ConditionTrue,
		},
		{
			name: "never ran, on time", cronJob: newCronJob(), now: at(5 * time.Second),
			wantActions:      []string{"create jobs default/" + jobName(topOfHour), "update cronjobs/status default/cj"},
			wantEvents:       []string{"Normal SuccessfulCreate"},
			wantRequeue:      time.Hour - 5*time.Second,
			wantActive:       []string{jobName(topOfHour)},
			wantLastSchedule: topOfHour, wantScheduleOK: metav1.ConditionTrue,
		},
		{
			name: "never ran, a week overdue: starts the most recent", cronJob: newCronJob(createdAt(at(-7 * 24 * time.Hour))), now: at(5 * time.Second),
			wantActions:      []string{"create jobs default/" + jobName(topOfHour), "update cronjobs/status default/cj"},
			wantEvents:       []string{"Warning TooManyMissedTimes", "Normal SuccessfulCreate"},
			wantRequeue:      time.Hour - 5*time.Second,
			wantActive:       []string{jobName(topOfHour)},
			wantLastSchedule: topOfHour,
		},
		{
			name: "never ran, within a short deadline", cronJob: newCronJob(deadline(10)), now: at(5 * time.Second),
			wantActions:      []string{"create jobs default/" + jobName(topOfHour), "update cronjobs/status default/cj"},
			wantEvents:       []string{"Normal SuccessfulCreate"},
			wantRequeue:      time.Hour - 5*time.Second,
			wantActive:       []string{jobName(topOfHour)},
			wantLastSchedule: topOfHour,
		},
		{
			name: "never ran, past a short deadline", cronJob: newCronJob(deadline(10)), now: at(30 * time.Second),
			wantActions: []string{"update cronjobs/status default/cj"},
			wantEvents:  []string{"Warning MissSchedule"},
			wantRequeue: time.Hour - 30*time.Second,
		},
		{
			name: "a week overdue, past a short deadline", cronJob: newCronJob(createdAt(at(-7*24*time.Hour)), deadline(10)), now: at(30 * time.Second),
			wantActions: []string{"update cronjobs/status default/cj"},
			wantEvents:  []string{"Warning TooManyMissedTimes", "Warning MissSchedule"},
			wantRequeue: time.Hour - 30*time.Second,
		},
		{
			name: "three hours overdue, within a two-hour deadline", cronJob: newCronJob(createdAt(at(-3*time.Hour-30*time.Minute)), deadline(7200)), now: at(30 * time.Minute),
			wantActions:      []string{"create jobs default/" + jobName(topOfHour), "update cronjobs/status default/cj"},
			wantEvents:       []string{"Normal SuccessfulCreate"},
			wantRequeue:      30 * time.Minute,
			wantActive:       []string{jobName(topOfHour)},
			wantLastSchedule: topOfHour,
		},
		{
			name: "a week overdue with a huge deadline", cronJob: newCronJob(createdAt(at(-7*24*time.Hour)), deadline(1_000_000)), now: at(5 * time.Second),
			wantActions:      []string{"create jobs default/" + jobName(topOfHour), "update cronjobs/status default/cj"},
			wantEvents:       []string{"Warning TooManyMissedTimes", "Normal SuccessfulCreate"},
			wantRequeue:      time.Hour - 5*time.Second,
			wantActive:       []string{jobName(topOfHour)},
			wantLastSchedule: topOfHour,
		},

		// Ran before, and that Job is done.
		{
			name: "ran and done, not yet time", cronJob: newCronJob(lastScheduled(prev)), jobs: []*batchv1.Job{done9}, now: at(-15 * time.Minute),
			wantActions: []string{"update cronjobs/status default/cj"}, wantRequeue: 15 * time.Minute, wantLastSchedule: prev,
		},
		{
			name: "ran and done, on time", cronJob: newCronJob(lastScheduled(prev)), jobs: []*batchv1.Job{done9}, now: at(5 * time.Second),
			wantActions:      []string{"create jobs default/" + jobName(topOfHour), "update cronjobs/status default/cj"},
			wantEvents:       []string{"Normal SuccessfulCreate"},
			wantRequeue:      time.Hour - 5*time.Second,
			wantActive:       []string{jobName(topOfHour)},
			wantLastSchedule: topOfHour,
		},
		{
			name: "ran and done, on time, Forbid", cronJob: newCronJob(lastScheduled(prev), policy(cronv1.ForbidConcurrent)), jobs: []*batchv1.Job{done9}, now: at(5 * time.Second),
			wantActions:      []string{"create jobs default/" + jobName(topOfHour), "update cronjobs/status default/cj"},
			wantEvents:       []string{"Normal SuccessfulCreate"},
			wantRequeue:      time.Hour - 5*time.Second,
			wantActive:       []string{jobName(topOfHour)},
			wantLastSchedule: topOfHour,
		},
		{
			name: "finished Job still listed active", cronJob: newCronJob(lastScheduled(prev), activeJobs(done9)), jobs: []*batchv1.Job{done9}, now: at(-15 * time.Minute),
			wantActions: []string{"update cronjobs/status default/cj"},
			wantEvents:  []string{"Normal SawCompletedJob"},
			wantRequeue: 15 * time.Minute, wantLastSchedule: prev,
		},

		// Ran before, and that Job still runs.
		{
			name: "still active, not yet time", cronJob: newCronJob(lastScheduled(prev), activeJobs(running9)), jobs: []*batchv1.Job{running9}, now: at(-15 * time.Minute),
			wantActions: []string{"update cronjobs/status default/cj"}, wantRequeue: 15 * time.Minute,
			wantActive: []string{jobName(prev)}, wantLastSchedule: prev,
		},
		{
			name: "still active, on time, Allow", cronJob: newCronJob(lastScheduled(prev), activeJobs(running9)), jobs: []*batchv1.Job{running9}, now: at(5 * time.Second),
			wantActions:      []string{"create jobs default/" + jobName(topOfHour), "update cronjobs/status default/cj"},
			wantEvents:       []string{"Normal SuccessfulCreate"},
			wantRequeue:      time.Hour - 5*time.Second,
			wantActive:       []string{jobName(prev), jobName(topOfHour)},
			wantLastSchedule: topOfHour,
		},
		{
			name: "still active, on time, Forbid", cronJob: newCronJob(lastScheduled(prev), activeJobs(running9), policy(cronv1.ForbidConcurrent)), jobs: []*batchv1.Job{running9}, now: at(5 * time.Second),
			wantActions: []string{"update cronjobs/status default/cj"},
			wantEvents:  []string{"Normal JobAlreadyActive"},
			wantRequeue: time.Hour - 5*time.Second,
			wantActive:  []string{jobName(prev)}, wantLastSchedule: prev,
		},
		{
			name: "still active, on time, Replace", cronJob: newCronJob(lastScheduled(prev), activeJobs(running9), policy(cronv1.ReplaceConcurrent)), jobs: []*batchv1.Job{running9}, now: at(5 * time.Second),
			// The running Job is read live before its delete, as the
			// built-in does: a user may have detached it since.
			wantActions:      []string{"get jobs default/" + jobName(prev), "delete jobs default/" + jobName(prev), "create jobs default/" + jobName(topOfHour), "update cronjobs/status default/cj"},
			wantEvents:       []string{"Normal SuccessfulDelete", "Normal SuccessfulCreate"},
			wantRequeue:      time.Hour - 5*time.Second,
			wantActive:       []string{jobName(topOfHour)},
			wantLastSchedule: topOfHour,
		},
		{
			name: "still active, past deadline, Forbid", cronJob: newCronJob(lastScheduled(prev), activeJobs(running9), policy(cronv1.ForbidConcurrent), deadline(10)), jobs: []*batchv1.Job{running9}, now: at(time.Minute),
			wantActions: []string{"get jobs default/" + jobName(topOfHour), "update cronjobs/status default/cj"},
			wantEvents:  []string{"Warning MissSchedule"},
			wantRequeue: 59 * time.Minute,
			wantActive:  []string{jobName(prev)}, wantLastSchedule: prev,
		},
		{
			name: "still active, past deadline, Replace: nothing deleted", cronJob: newCronJob(lastScheduled(prev), activeJobs(running9), policy(cronv1.ReplaceConcurrent), deadline(10)), jobs: []*batchv1.Job{running9}, now: at(time.Minute),
			wantActions: []string{"get jobs default/" + jobName(topOfHour), "update cronjobs/status default/cj"},
			wantEvents:  []string{"Warning MissSchedule"},
			wantRequeue: 59 * time.Minute,
			wantActive:  []string{jobName(prev)}, wantLastSchedule: prev,
		},

		// Spec says no.
		{
			name: "suspended, on time", cronJob: newCronJob(func(cj *cronv1.CronJob) { cj.Spec.Suspend = ptr.To(true) }), now: at(5 * time.Second),
			wantActions: []string{"update cronjobs/status default/cj"}, wantScheduleOK: metav1.ConditionTrue,
		},
		{
			name: "being deleted, on time", cronJob: newCronJob(func(cj *cronv1.CronJob) { cj.DeletionTimestamp = ptr.To(metav1.NewTime(at(0))) }), now: at(5 * time.Second),
			wantActions: []string{"update cronjobs/status default/cj"},
		},
		{
			name: "invalid schedule", cronJob: newCronJob(withSchedule("61 * * * *")), now: at(5 * time.Second),
			wantActions: []string{"update cronjobs/status default/cj"},
			wantEvents:  []string{"Warning InvalidSchedule"}, wantScheduleOK: metav1.ConditionFalse,
		},
		{
			name: "schedule that never fires", cronJob: newCronJob(withSchedule("59 23 31 2 *")), now: at(5 * time.Second),
			wantActions: []string{"update cronjobs/status default/cj"},
			wantEvents:  []string{"Warning InvalidSchedule"}, wantScheduleOK: metav1.ConditionFalse,
		},
		{
			name: "unknown time zone", cronJob: newCronJob(func(cj *cronv1.CronJob) { cj.Spec.TimeZone = ptr.To("Mars/Olympus_Mons") }), now: at(5 * time.Second),
			wantActions: []string{"update cronjobs/status default/cj"},
			wantEvents:  []string{"Warning UnknownTimeZone"}, wantScheduleOK: metav1.ConditionFalse,
		},
		{
			name: "TZ= inside the schedule", cronJob: newCronJob(withSchedule("TZ=Europe/Berlin 0 * * * *")), now: at(5 * time.Second),
			wantActions: []string{"update cronjobs/status default/cj"},
			wantEvents:  []string{"Warning InvalidSchedule"}, wantScheduleOK: metav1.ConditionFalse,
		},
		{
			name: "invalid schedule on a suspended CronJob still shows", cronJob: newCronJob(withSchedule("bogus"), func(cj *cronv1.CronJob) { cj.Spec.Suspend = ptr.To(true) }), now: at(5 * time.Second),
			wantActions: []string{"update cronjobs/status default/cj"},
			wantEvents:  []string{"Warning InvalidSchedule"}, wantScheduleOK: metav1.ConditionFalse,
		},
		{
			name: "@every 5m, two intervals after creation", cronJob: newCronJob(withSchedule("@every 5m")), now: at(-20*time.Minute + time.Second),
			wantActions:      []string{"create jobs default/" + jobName(at(-20*time.Minute)), "update cronjobs/status default/cj"},
			wantEvents:       []string{"Normal SuccessfulCreate"},
			wantRequeue:      5*time.Minute - time.Second,
			wantActive:       []string{jobName(at(-20 * time.Minute))},
			wantLastSchedule: at(-20 * time.Minute),
		},
		{
			name: "clock went back before the last run", cronJob: newCronJob(lastScheduled(topOfHour)), now: at(-10 * time.Minute),
			wantActions: []string{"update cronjobs/status default/cj"}, wantRequeue: 70 * time.Minute, wantLastSchedule: topOfHour,
		},

		// The Job's name is taken.
		{
			name: "AlreadyExists, ours, not yet cached", cronJob: newCronJob(lastScheduled(prev)), uncached: []*batchv1.Job{newJob(topOfHour, running)}, now: at(5 * time.Second),
			wantActions:      []string{"create jobs default/" + jobName(topOfHour), "get jobs default/" + jobName(topOfHour), "update cronjobs/status default/cj"},
			wantRequeue:      time.Hour - 5*time.Second,
			wantActive:       []string{jobName(topOfHour)},
			wantLastSchedule: topOfHour,
		},
		{
			name: "AlreadyExists, foreign, not yet cached", cronJob: newCronJob(lastScheduled(prev)),
			uncached: []*batchv1.Job{newJob(topOfHour, running, func(j *batchv1.Job) { j.OwnerReferences = nil })}, now: at(5 * time.Second),
			wantActions: []string{"create jobs default/" + jobName(topOfHour), "get jobs default/" + jobName(topOfHour), "update cronjobs/status default/cj"},
			wantEvents:  []string{"Warning FailedCreate"},
			wantRequeue: time.Hour - 5*time.Second, wantLastSchedule: prev,
		},
		{
			name: "name taken by a cached foreign Job: no create call", cronJob: newCronJob(lastScheduled(prev)),
			jobs: []*batchv1.Job{newJob(topOfHour, running, func(j *batchv1.Job) { j.OwnerReferences[0].UID = "someone-else" })}, now: at(5 * time.Second),
			wantActions: []string{"update cronjobs/status default/cj"},
			wantEvents:  []string{"Warning FailedCreate"},
			wantRequeue: time.Hour - 5*time.Second, wantLastSchedule: prev,
		},

		// Cache and status disagree.
		{
			name: "active Job in the cache, already deleted on the server: the cache is trusted", cronJob: newCronJob(lastScheduled(prev), activeJobs(running9)), jobs: []*batchv1.Job{running9}, deleted: []*batchv1.Job{running9}, now: at(-15 * time.Minute),
			wantActions: []string{"update cronjobs/status default/cj"}, wantRequeue: 15 * time.Minute, wantActive: []string{jobName(prev)}, wantLastSchedule: prev,
		},
		{
			name: "active Job gone from cache and API server", cronJob: newCronJob(lastScheduled(prev), activeJobs(running9)), now: at(-15 * time.Minute),
			wantActions: []string{"get jobs default/" + jobName(prev), "update cronjobs/status default/cj"},
			wantEvents:  []string{"Normal MissingJob"},
			wantRequeue: 15 * time.Minute, wantLastSchedule: prev,
		},
		{
			name: "active Job not yet in cache but on the API server", cronJob: newCronJob(lastScheduled(prev), activeJobs(running9)), uncached: []*batchv1.Job{running9}, now: at(-15 * time.Minute),
			wantActions: []string{"get jobs default/" + jobName(prev), "update cronjobs/status default/cj"},
			wantRequeue: 15 * time.Minute, wantActive: []string{jobName(prev)}, wantLastSchedule: prev,
		},
		{
			name: "our running Job missing from status (crash before the status write)", cronJob: newCronJob(lastScheduled(prev)), jobs: []*batchv1.Job{newJob(topOfHour, running)}, now: at(5 * time.Second),
			wantActions: []string{"update cronjobs/status default/cj"},
			wantRequeue: time.Hour - 5*time.Second, wantActive: []string{jobName(topOfHour)}, wantLastSchedule: topOfHour,
		},
		{
			name: "a running Job we did not make", cronJob: newCronJob(lastScheduled(prev)),
			jobs: []*batchv1.Job{newJob(prev, running, func(j *batchv1.Job) { j.Name = "by-hand"; j.Annotations = nil })}, now: at(-15 * time.Minute),
			wantActions: []string{"update cronjobs/status default/cj"},
			wantEvents:  []string{"Warning UnexpectedJob"},
			wantRequeue: 15 * time.Minute, wantActive: []string{"by-hand"}, wantLastSchedule: prev,
		},

		// Create fails.
		{
			name: "create fails on the server: retried", cronJob: newCronJob(lastScheduled(prev)), now: at(5 * time.Second), createErr: serverError,
			wantActions: []string{"create jobs default/" + jobName(topOfHour), "update cronjobs/status default/cj"},
			wantEvents:  []string{"Warning FailedCreate"}, wantErr: true, wantLastSchedule: prev, wantRequeue: time.Hour - 5*time.Second,
		},
		{
			name: "create rejected as invalid: not retried until the next run", cronJob: newCronJob(lastScheduled(prev)), now: at(5 * time.Second), createErr: invalid,
			wantActions: []string{"create jobs default/" + jobName(topOfHour), "update cronjobs/status default/cj"},
			wantEvents:  []string{"Warning FailedCreate"}, wantRequeue: time.Hour - 5*time.Second, wantLastSchedule: prev,
			wantTemplateOK: metav1.ConditionFalse,
		},

		// Odd input.
		{
			name: "created years ago, never ran", cronJob: newCronJob(createdAt(at(-5 * 365 * 24 * time.Hour))), now: at(5 * time.Second),
			wantActions:      []string{"create jobs default/" + jobName(topOfHour), "update cronjobs/status default/cj"},
			wantEvents:       []string{"Warning TooManyMissedTimes", "Normal SuccessfulCreate"},
			wantRequeue:      time.Hour - 5*time.Second,
			wantActive:       []string{jobName(topOfHour)},
			wantLastSchedule: topOfHour, wantTemplateOK: metav1.ConditionTrue,
		},
		{
			name: "our running Job with a garbage scheduled-at annotation", cronJob: newCronJob(lastScheduled(prev)),
			jobs: []*batchv1.Job{newJob(prev, running, func(j *batchv1.Job) { j.Annotations[cronv1.ScheduledAtAnnotation] = "yesterday-ish" })}, now: at(-15 * time.Minute),
			wantActions: []string{"update cronjobs/status default/cj"},
			wantEvents:  []string{"Warning UnexpectedJob"},
			wantRequeue: 15 * time.Minute, wantActive: []string{jobName(prev)}, wantLastSchedule: prev,
		},
	}

	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, ctx := ktesting.NewTestContext(t)
			f := newFixture(t, tc.now)
			f.cronJob, f.jobs, f.uncachedJobs, f.deletedJobs = tc.cronJob, tc.jobs, tc.uncached, tc.deleted
			c, _, _ := f.newController(ctx)
			if tc.createErr != nil {
				failAllJobCreates(f, tc.createErr)
			}
			f.kubeclient.ClearActions()

			requeue, err := c.syncHandler(ctx, cache.MetaObjectToName(tc.cronJob))
			if (err != nil) != tc.wantErr {
				t.Fatalf("sync error = %v, want error: %v", err, tc.wantErr)
			}
			if requeue != tc.wantRequeue {
				t.Errorf("requeue after %v, want %v", requeue, tc.wantRequeue)
			}
			got := append(describe(f.kubeclient.Actions(), false), describe(f.client.Actions(), false)...)
			if !slices.Equal(got, tc.wantActions) {
				t.Errorf("actions:\n got %q\nwant %q", got, tc.wantActions)
			}
			if events := f.events(); !slices.Equal(events, tc.wantEvents) {
				t.Errorf("events = %q, want %q", events, tc.wantEvents)
			}

			status := f.writtenStatus()
			if status == nil {
				return
			}
			var active []string
			for _, r := range status.Status.Active {
				active = append(active, r.Name)
			}
			if !slices.Equal(active, tc.wantActive) {
				t.Errorf("status.active = %q, want %q", active, tc.wantActive)
			}
			if int(status.Status.ActiveCount) != len(active) {
				t.Errorf("status.activeCount = %d with %d active", status.Status.ActiveCount, len(active))
			}
			if got := status.Status.LastScheduleTime; (got == nil) != tc.wantLastSchedule.IsZero() || (got != nil && !got.Time.Equal(tc.wantLastSchedule)) {
				t.Errorf("status.lastScheduleTime = %v, want %v", got, tc.wantLastSchedule)
			}
			if status.Status.ObservedGeneration != tc.cronJob.Generation {
				t.Errorf("status.observedGeneration = %d, want %d", status.Status.ObservedGeneration, tc.cronJob.Generation)
			}
			if tc.wantScheduleOK != "" {
				cond := meta.FindStatusCondition(status.Status.Conditions, cronv1.ConditionScheduleValid)
				if cond == nil || cond.Status != tc.wantScheduleOK {
					t.Errorf("ScheduleValid condition = %+v, want status %s", cond, tc.wantScheduleOK)
				}
				if tc.wantScheduleOK == metav1.ConditionFalse && (cond.Message == "" || status.Status.NextScheduleTime != nil) {
					t.Errorf("an unusable schedule needs a message and no next time: %+v, next %v", cond, status.Status.NextScheduleTime)
				}
			}
			if tc.wantTemplateOK != "" {
				cond := meta.FindStatusCondition(status.Status.Conditions, cronv1.ConditionJobTemplateValid)
				if cond == nil || cond.Status != tc.wantTemplateOK {
					t.Errorf("JobTemplateValid condition = %+v, want status %s", cond, tc.wantTemplateOK)
				}
			}
			if tc.wantRequeue > 0 {
				if next := status.Status.NextScheduleTime; next == nil || !next.Time.Equal(tc.now.Add(tc.wantRequeue)) {
					t.Errorf("status.nextScheduleTime = %v, want %v", next, tc.now.Add(tc.wantRequeue))
				}
			}
		})
	}
}

// Once the caches have caught up with what a sync wrote, syncing again at
// the same instant writes nothing: no second Job, no needless status write.
func TestSyncIsIdempotent(t *testing.T) {
	prev := at(-time.Hour)
	running9 := newJob(prev, running)
	cases := map[string]struct {
		cronJob *cronv1.CronJob
		jobs    []*batchv1.Job
		now     time.Time
	}{
		"create":          {newCronJob(), nil, at(5 * time.Second)},
		"replace":         {newCronJob(lastScheduled(prev), activeJobs(running9), policy(cronv1.ReplaceConcurrent)), []*batchv1.Job{running9}, at(5 * time.Second)},
		"forbid":          {newCronJob(lastScheduled(prev), activeJobs(running9), policy(cronv1.ForbidConcurrent)), []*batchv1.Job{running9}, at(5 * time.Second)},
		"missed deadline": {newCronJob(deadline(10)), nil, at(time.Minute)},
		"invalid":         {newCronJob(withSchedule("bogus")), nil, at(time.Minute)},
		"prune":           {newCronJob(lastScheduled(prev), func(cj *cronv1.CronJob) { cj.Spec.SuccessfulJobsHistoryLimit = ptr.To[int32](0) }), []*batchv1.Job{newJob(prev, succeeded)}, at(-time.Minute)},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, ctx := ktesting.NewTestContext(t)
			f := newFixture(t, tc.now)
			f.cronJob, f.jobs = tc.cronJob, tc.jobs
			c, kubeFactory, cronFactory := f.newController(ctx)
			key := cache.MetaObjectToName(tc.cronJob)
			if _, err := c.syncHandler(ctx, key); err != nil {
				t.Fatal(err)
			}
			if len(describe(append(f.kubeclient.Actions(), f.client.Actions()...), true)) == 0 {
				t.Fatal("the first sync wrote nothing; the case tests nothing")
			}

			// Let the caches catch up with the API server.
			jobs, err := f.kubeclient.BatchV1().Jobs("").List(ctx, metav1.ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			var items []any
			for i := range jobs.Items {
				items = append(items, slim.NewJob(&jobs.Items[i]))
			}
			if err := kubeFactory.Batch().V1().Jobs().Informer().GetIndexer().Replace(items, ""); err != nil {
				t.Fatal(err)
			}
			stored, err := f.client.BatchV1().CronJobs(key.Namespace).Get(ctx, key.Name, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			cacheCronJob(t, cronFactory, stored)
			f.kubeclient.ClearActions()
			f.client.ClearActions()

			if _, err := c.syncHandler(ctx, key); err != nil {
				t.Fatal(err)
			}
			if writes := describe(append(f.kubeclient.Actions(), f.client.Actions()...), true); len(writes) > 0 {
				t.Errorf("second sync wrote %q", writes)
			}
		})
	}
}

func TestPruneHistory(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	cj := newCronJob(lastScheduled(at(-time.Hour)), func(cj *cronv1.CronJob) {
		cj.Spec.SuccessfulJobsHistoryLimit = ptr.To[int32](1)
		cj.Spec.FailedJobsHistoryLimit = ptr.To[int32](0)
	})
	oldest := newJob(at(-3*time.Hour), succeeded)
	older := newJob(at(-2*time.Hour), succeeded)
	neverStarted := newJob(at(-time.Hour), succeeded, noStartTime)
	failedRun := newJob(at(-4*time.Hour), failed)
	stillRunning := newJob(at(-5*time.Hour), running)
	f := newFixture(t, at(-30*time.Minute))
	f.cronJob = cj
	f.jobs = []*batchv1.Job{older, neverStarted, oldest, failedRun, stillRunning}
	c, _, _ := f.newController(ctx)

	if _, err := c.syncHandler(ctx, cache.MetaObjectToName(cj)); err != nil {
		t.Fatal(err)
	}
	var deleted []string
	for _, a := range f.kubeclient.Actions() {
		if d, ok := a.(core.DeleteAction); ok {
			deleted = append(deleted, d.GetName())
		}
	}
	slices.Sort(deleted)
	// A Job with no start time counts as the newest, so it is the one kept.
	want := []string{failedRun.Name, oldest.Name, older.Name}
	slices.Sort(want)
	if !slices.Equal(deleted, want) {
		t.Errorf("deleted %q, want %q", deleted, want)
	}
	for _, name := range []string{neverStarted.Name, stillRunning.Name} {
		if _, err := f.kubeclient.BatchV1().Jobs("default").Get(ctx, name, metav1.GetOptions{}); err != nil {
			t.Errorf("%s should be kept: %v", name, err)
		}
	}
}

func TestPruneFailureIsBestEffort(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	cj := newCronJob(lastScheduled(at(-time.Hour)), func(cj *cronv1.CronJob) { cj.Spec.SuccessfulJobsHistoryLimit = ptr.To[int32](0) })
	f := newFixture(t, at(5*time.Second))
	f.cronJob = cj
	f.jobs = []*batchv1.Job{newJob(at(-2*time.Hour), succeeded), newJob(at(-time.Hour), succeeded)}
	c, _, _ := f.newController(ctx)
	f.kubeclient.PrependReactor("delete", "jobs", func(a core.Action) (bool, runtime.Object, error) {
		if a.(core.DeleteAction).GetName() == f.jobs[0].Name {
			return true, nil, apierrors.NewServiceUnavailable("try later")
		}
		return false, nil, nil
	})

	if _, err := c.syncHandler(ctx, cache.MetaObjectToName(cj)); err != nil {
		t.Fatalf("a failed prune must not fail the sync: %v", err)
	}
	writes := describe(f.kubeclient.Actions(), true)
	want := []string{"create jobs default/" + jobName(topOfHour), "delete jobs default/" + f.jobs[0].Name, "delete jobs default/" + f.jobs[1].Name}
	if !slices.Equal(writes, want) {
		t.Errorf("writes %q, want %q", writes, want)
	}
	events := f.events()
	if !slices.Contains(events, "Warning FailedDelete") || !slices.Contains(events, "Normal SuccessfulCreate") {
		t.Errorf("events %q lack the failed delete or the create", events)
	}
}

func TestCreatedJob(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	cj := newCronJob(func(cj *cronv1.CronJob) { cj.Spec.TimeZone = ptr.To("Europe/Berlin") })
	f := newFixture(t, at(time.Second))
	f.cronJob = cj
	c, _, _ := f.newController(ctx)
	if _, err := c.syncHandler(ctx, cache.MetaObjectToName(cj)); err != nil {
		t.Fatal(err)
	}
	j, err := f.kubeclient.BatchV1().Jobs("default").Get(ctx, jobName(topOfHour), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if j.Name != fmt.Sprintf("cj-%d", topOfHour.Unix()) {
		t.Errorf("name %q", j.Name)
	}
	if got := j.Annotations[cronv1.ScheduledAtAnnotation]; got != "2026-05-01T12:00:00+02:00" {
		t.Errorf("scheduled-at = %q, want the time in the CronJob's zone", got)
	}
	if j.Annotations["note"] != "kept" || j.Labels["app"] != "hello" {
		t.Errorf("template labels and annotations not copied: %v %v", j.Labels, j.Annotations)
	}
	ref := metav1.GetControllerOf(j)
	if ref == nil || ref.UID != cj.UID || ref.Kind != "CronJob" || ref.APIVersion != "batch.tutorial.kubebuilder.io/v1" || !ptr.Deref(ref.BlockOwnerDeletion, false) {
		t.Errorf("controller reference = %+v", ref)
	}
	if j.Spec.Template.Spec.Containers[0].Image != "busybox" {
		t.Errorf("spec not copied from the template: %+v", j.Spec)
	}
	cj.Spec.JobTemplate.Spec.Template.Spec.Containers[0].Image = "changed"
	if j.Spec.Template.Spec.Containers[0].Image != "busybox" {
		t.Error("the Job shares memory with the template")
	}
}

func TestCronJobGone(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := newFixture(t, topOfHour)
	c, _, _ := f.newController(ctx)
	requeue, err := c.syncHandler(ctx, cache.ObjectName{Namespace: "default", Name: "nope"})
	if err != nil || requeue != 0 {
		t.Errorf("sync of a missing CronJob = %v, %v; want nothing to do", requeue, err)
	}
	if a := describe(append(f.kubeclient.Actions(), f.client.Actions()...), false); len(a) > 0 {
		t.Errorf("actions %q for a missing CronJob", a)
	}
}

func TestStatusWriteConflictIsRetried(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := newFixture(t, at(5*time.Second))
	f.cronJob = newCronJob()
	c, _, _ := f.newController(ctx)
	f.client.PrependReactor("update", "cronjobs", func(core.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewConflict(cronv1.Resource("cronjobs"), "cj", errors.New("stale"))
	})
	if _, err := c.syncHandler(ctx, cache.MetaObjectToName(f.cronJob)); !apierrors.IsConflict(err) {
		t.Fatalf("a conflicting status write must be returned for a retry, got %v", err)
	}
}

// The wait to the next run counts from the moment the sync decided, not
// from its end: a sync slowed by its own requests (client-go waits out a
// 429's Retry-After inside the call) must not push the next run's wake-up
// back by its own duration. Found by TestSurvivesLostCreateAnswers
// (test/e2e): a status write throttled twice held a sync 6 s, the next run of
// an @every 5s schedule woke 6 s late, and the newer run superseded it.
func TestSlowSyncWakesOnTime(t *testing.T) {
	for _, tc := range []struct {
		name       string
		writeTakes time.Duration
		// from and to bound the wait the sync returns.
		from, to time.Duration
	}{
		{"a quick write", 0, time.Hour - time.Second, time.Hour - time.Second},
		{"a slow write", 10 * time.Minute, 50*time.Minute - time.Second, 50*time.Minute - time.Second},
		{"the next run fell due during the write", time.Hour, time.Nanosecond, time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, ctx := ktesting.NewTestContext(t)
			f := newFixture(t, at(time.Second))
			f.cronJob = newCronJob()
			c, _, _ := f.newController(ctx)
			f.client.PrependReactor("update", "cronjobs", func(core.Action) (bool, runtime.Object, error) {
				f.clock.Step(tc.writeTakes)
				return false, nil, nil
			})
			requeue, err := c.syncHandler(ctx, cache.MetaObjectToName(f.cronJob))
			if err != nil {
				t.Fatal(err)
			}
			if requeue < tc.from || requeue > tc.to {
				t.Errorf("the next wake-up is %v after the sync, want %v to %v", requeue, tc.from, tc.to)
			}
		})
	}
}

func TestJobHandlersEnqueueTheOwner(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := newFixture(t, topOfHour)
	f.cronJob = newCronJob()
	c, _, _ := f.newController(ctx)
	ours := newJob(topOfHour, running)
	ours.ResourceVersion = "1"

	builtinOwned := ours.DeepCopy()
	builtinOwned.OwnerReferences[0].APIVersion = "batch/v1"
	staleUID := ours.DeepCopy()
	staleUID.OwnerReferences[0].UID = "an-older-cronjob-of-the-same-name"
	updated := ours.DeepCopy()
	updated.ResourceVersion = "2"
	deleting := ours.DeepCopy()
	deleting.DeletionTimestamp = ptr.To(metav1.NewTime(topOfHour))

	cases := []struct {
		name string
		fire func()
		want int
	}{
		{"add", func() { c.addJob(slim.NewJob(ours)) }, 1},
		{"add, being deleted", func() { c.addJob(slim.NewJob(deleting)) }, 1},
		{"update", func() { c.updateJob(slim.NewJob(ours), slim.NewJob(updated)) }, 1},
		{"resync (same resourceVersion)", func() { c.updateJob(slim.NewJob(ours), slim.NewJob(ours)) }, 0},
		{"delete", func() { c.deleteJob(slim.NewJob(ours)) }, 1},
		{"delete, tombstone", func() { c.deleteJob(cache.DeletedFinalStateUnknown{Key: "default/x", Obj: slim.NewJob(ours)}) }, 1},
		{"delete, bad tombstone", func() { c.deleteJob(cache.DeletedFinalStateUnknown{Key: "default/x", Obj: "junk"}) }, 0},
		{"add, not a Job", func() { c.addJob("junk") }, 0},
		{"update, not a Job", func() { c.updateJob(slim.NewJob(ours), "junk") }, 0},
		{"add, the API type", func() { c.addJob(ours) }, 1},
		{"add, the Job this process created", func() {
			c.createdJobs.Wrote(slim.NewJob(ours))
			c.addJob(slim.NewJob(ours))
		}, 0},
		{"add, a newer version than the Job this process created", func() {
			c.createdJobs.Wrote(slim.NewJob(ours))
			c.addJob(slim.NewJob(updated))
		}, 1},
		{"owned by a built-in CronJob", func() { c.addJob(slim.NewJob(builtinOwned)) }, 0},
		{"owner UID does not match", func() { c.addJob(slim.NewJob(staleUID)) }, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tc.fire()
			if got := c.queue.Len(); got != tc.want {
				t.Errorf("queue length %d, want %d", got, tc.want)
			}
			for c.queue.Len() > 0 {
				key, _ := c.queue.Get()
				if key != cache.MetaObjectToName(f.cronJob) {
					t.Errorf("queued %v", key)
				}
				c.queue.Done(key)
			}
		})
	}
}

// The echo of the controller's own status write queues nothing; a newer
// write by someone else, or a change it did not make, queues the CronJob.
func TestOwnStatusWriteEchoNotQueued(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := newFixture(t, at(time.Second))
	f.cronJob = newCronJob(func(cj *cronv1.CronJob) { cj.ResourceVersion = "1" })
	c, _, _ := f.newController(ctx)
	written := f.cronJob.DeepCopy()
	written.ResourceVersion = "2"
	written.Status.LastScheduleTime = &metav1.Time{Time: topOfHour}
	edited := written.DeepCopy()
	edited.ResourceVersion = "3"
	edited.Spec.Suspend = ptr.To(true)

	c.writtenCronJobs.Wrote(slim.NewCronJob(written))
	c.updateCronJob(slim.NewCronJob(f.cronJob), slim.NewCronJob(written))
	if got := c.queue.Len(); got != 0 {
		t.Errorf("the echo of its own status write queued %d CronJobs, want none", got)
	}
	c.updateCronJob(slim.NewCronJob(written), slim.NewCronJob(edited))
	if got := c.queue.Len(); got != 1 {
		t.Errorf("an edit after the write queued %d CronJobs, want 1", got)
	}
	c.writtenCronJobs.Wrote(slim.NewCronJob(written))
	c.updateCronJob(slim.NewCronJob(f.cronJob), slim.NewCronJob(edited))
	if got := c.queue.Len(); got != 1 {
		t.Errorf("a version newer than the write: %d queued, want it queued once", got)
	}
}

func TestIndexByControllerUID(t *testing.T) {
	ours := newJob(topOfHour, running)
	if keys, _ := indexByControllerUID(ours); !slices.Equal(keys, []string{"cj-uid"}) {
		t.Errorf("keys %q", keys)
	}
	if keys, _ := indexByControllerUID(slim.NewJob(ours)); !slices.Equal(keys, []string{"cj-uid"}) {
		t.Errorf("keys of the cache form %q", keys)
	}
	orphan := ours.DeepCopy()
	orphan.OwnerReferences = nil
	if keys, _ := indexByControllerUID(orphan); len(keys) != 0 {
		t.Errorf("an orphan is indexed under %q", keys)
	}
	notController := ours.DeepCopy()
	notController.OwnerReferences[0].Controller = ptr.To(false)
	if keys, _ := indexByControllerUID(notController); len(keys) != 0 {
		t.Errorf("a non-controller owner is indexed under %q", keys)
	}
}

// The whole pipeline on fake clients: informers feed the queue, the CronJob
// sleeps in the queue until its time on the (fake) clock, a worker creates
// the Job, and Run returns once cancelled.
func TestRunCreatesJobsOnTheClock(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	f := newFixture(t, at(-time.Second))
	f.kubeclient = k8sfake.NewClientset()
	f.kubeclient.PrependReactor("create", "jobs", f.stampCreatedJob)
	f.client = fake.NewClientset(newCronJob())
	kubeFactory := kubeinformers.NewSharedInformerFactory(f.kubeclient, 0)
	cronFactory := informers.NewSharedInformerFactory(f.client, 0)
	c, err := NewController(ctx, f.kubeclient, f.client, kubeFactory.Batch().V1().Jobs(), cronFactory.Batch().V1().CronJobs(), f.clock, WithEventRecorder(f.recorder))
	if err != nil {
		t.Fatal(err)
	}
	timers := &timerSpy{TypedRateLimitingInterface: c.queue, added: make(chan time.Duration, 10)}
	c.queue = timers
	kubeFactory.Start(ctx.Done())
	cronFactory.Start(ctx.Done())
	defer kubeFactory.Shutdown()
	defer cronFactory.Shutdown()
	done := make(chan error)
	go func() { done <- c.Run(ctx, 2) }()

	jobCount := func() int {
		jobs, err := f.kubeclient.BatchV1().Jobs("default").List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return len(jobs.Items)
	}
	// The first sync records the next time and puts the CronJob to sleep.
	waitFor(ctx, t, "nextScheduleTime to be written", func() bool {
		cj, err := f.client.BatchV1().CronJobs("default").Get(ctx, "cj", metav1.GetOptions{})
		return err == nil && cj.Status.NextScheduleTime != nil && cj.Status.NextScheduleTime.Time.Equal(topOfHour)
	})
	select {
	case d := <-timers.added:
		if d != time.Second {
			t.Fatalf("the CronJob sleeps %v, want 1s", d)
		}
	case <-time.After(wait.ForeverTestTimeout):
		t.Fatal("the CronJob was not put to sleep until its next run")
	}
	if n := jobCount(); n != 0 {
		t.Fatalf("%d Jobs before the scheduled time", n)
	}

	f.clock.Step(time.Second)
	waitFor(ctx, t, "the Job of 10:00", func() bool { return jobCount() == 1 })
	waitFor(ctx, t, "status.active", func() bool {
		cj, err := f.client.BatchV1().CronJobs("default").Get(ctx, "cj", metav1.GetOptions{})
		return err == nil && len(cj.Status.Active) == 1 && cj.Status.LastScheduleTime != nil && cj.Status.LastScheduleTime.Time.Equal(topOfHour)
	})

	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Run returned %v", err)
		}
	case <-time.After(wait.ForeverTestTimeout):
		t.Fatal("Run did not return after cancel")
	}
	if n := jobCount(); n != 1 {
		t.Errorf("%d Jobs after one scheduled time", n)
	}
}

// timerSpy reports the delays the controller asks the queue for.
type timerSpy struct {
	workqueue.TypedRateLimitingInterface[cache.ObjectName]
	added chan time.Duration
}

func (s *timerSpy) AddAfter(key cache.ObjectName, d time.Duration) {
	s.TypedRateLimitingInterface.AddAfter(key, d)
	s.added <- d
}

// waitFor polls cond until it holds, failing the test after a bound.
func waitFor(ctx context.Context, t *testing.T, what string, cond func() bool) {
	t.Helper()
	err := wait.PollUntilContextTimeout(ctx, 5*time.Millisecond, wait.ForeverTestTimeout, true, func(context.Context) (bool, error) {
		return cond(), nil
	})
	if err != nil {
		t.Fatalf("waiting for %s: %v", what, err)
	}
}

// syncs runs the sync handler on a fixture's CronJob, feeding the status it
// writes back into the cache as the informer would.
func syncs(t *testing.T, ctx context.Context, f *fixture, c *Controller, cronFactory informers.SharedInformerFactory) *cronv1.CronJob {
	t.Helper()
	f.client.ClearActions()
	if _, err := c.syncHandler(ctx, cache.MetaObjectToName(f.cronJob)); err != nil {
		t.Fatal(err)
	}
	written := f.writtenStatus()
	if written == nil {
		cj, err := c.cachedCronJob(ctx, cache.MetaObjectToName(f.cronJob))
		if err != nil {
			t.Fatal(err)
		}
		return cj
	}
	cacheCronJob(t, cronFactory, written)
	return written
}

// Editing the schedule never starts a run the new schedule named before the
// edit (kubernetes/kubernetes#63371 and friends).
func TestScheduleEditIsNoSurprise(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := newFixture(t, at(-30*time.Minute)) // 09:30
	f.cronJob = newCronJob(lastScheduled(at(-time.Hour)))
	c, _, cronFactory := f.newController(ctx)
	cj := syncs(t, ctx, f, c, cronFactory)
	if cj.Status.ResolvedSchedule != "0 * * * *" || cj.Status.ScheduleChangeTime != nil {
		t.Fatalf("first sight of the schedule: resolved %q, change time %v", cj.Status.ResolvedSchedule, cj.Status.ScheduleChangeTime)
	}

	// At 09:30 the user switches to every five minutes: 09:05 … 09:30 were
	// never runs of this CronJob, so nothing starts before 09:35.
	edited := cj.DeepCopy()
	edited.Spec.Schedule = "*/5 * * * *"
	edited.Generation++
	cacheCronJob(t, cronFactory, edited)
	f.clock.Step(time.Second)
	cj = syncs(t, ctx, f, c, cronFactory)
	if writes := describe(f.kubeclient.Actions(), true); len(writes) != 0 {
		t.Errorf("the edit started %q", writes)
	}
	if cj.Status.ScheduleChangeTime == nil || !cj.Status.NextScheduleTime.Time.Equal(at(-25*time.Minute)) {
		t.Errorf("after the edit: change time %v, next %v, want next 09:35", cj.Status.ScheduleChangeTime, cj.Status.NextScheduleTime)
	}
	f.clock.SetTime(at(-25 * time.Minute))
	syncs(t, ctx, f, c, cronFactory)
	if writes := describe(f.kubeclient.Actions(), true); !slices.Equal(writes, []string{"create jobs default/" + jobName(at(-25*time.Minute))}) {
		t.Errorf("at 09:35: %q, want the 09:35 run", writes)
	}
}

// H in the schedule resolves to this CronJob's own slot, shown in status.
func TestHashedSchedule(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := newFixture(t, at(-30*time.Minute))
	f.cronJob = newCronJob(withSchedule("H * * * *"))
	c, _, cronFactory := f.newController(ctx)
	cj := syncs(t, ctx, f, c, cronFactory)
	want, err := schedule.Resolve("H * * * *", "default/cj")
	if err != nil {
		t.Fatal(err)
	}
	if cj.Status.ResolvedSchedule != want || want == "H * * * *" {
		t.Errorf("status.resolvedSchedule = %q, want %q", cj.Status.ResolvedSchedule, want)
	}
	cond := meta.FindStatusCondition(cj.Status.Conditions, cronv1.ConditionScheduleValid)
	if cond == nil || cond.Status != metav1.ConditionTrue {
		t.Errorf("ScheduleValid = %+v", cond)
	}
}

// catchUpPolicy All starts every missed run still within the deadline, oldest
// first, at most catchUpLimit, all in one sync; None starts none of them.
func TestCatchUpPolicy(t *testing.T) {
	hours := func(hs ...int) []string {
		var out []string
		for _, h := range hs {
			out = append(out, jobName(at(time.Duration(h-10)*time.Hour)))
		}
		return out
	}
	cases := []struct {
		name      string
		opts      []func(*cronv1.CronJob)
		now       time.Time
		wantJobs  []string
		wantSuper int64
		// wantLate counts DeadlineExceeded.
		wantLate int64
	}{
		{"Latest (default)", nil, at(5 * time.Second), hours(10), 3, 0},
		{"All", []func(*cronv1.CronJob){catchUp(cronv1.CatchUpAll, nil)}, at(5 * time.Second), hours(7, 8, 9, 10), 0, 0},
		{"All, limit 2", []func(*cronv1.CronJob){catchUp(cronv1.CatchUpAll, ptr.To[int32](2))}, at(5 * time.Second), hours(9, 10), 2, 0},
		{"All, within a 2 h deadline", []func(*cronv1.CronJob){catchUp(cronv1.CatchUpAll, nil), deadline(7200)}, at(5 * time.Second), hours(9, 10), 0, 2},
		{"All, Forbid: the oldest only", []func(*cronv1.CronJob){catchUp(cronv1.CatchUpAll, nil), policy(cronv1.ForbidConcurrent)}, at(5 * time.Second), hours(7), 0, 0},
		{"None, on time", []func(*cronv1.CronJob){catchUp(cronv1.CatchUpNone, nil)}, at(5 * time.Second), hours(10), 3, 0},
		{"None, two minutes late", []func(*cronv1.CronJob){catchUp(cronv1.CatchUpNone, nil)}, at(2 * time.Minute), nil, 3, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, ctx := ktesting.NewTestContext(t)
			f := newFixture(t, tc.now)
			f.cronJob = newCronJob(append([]func(*cronv1.CronJob){lastScheduled(at(-4 * time.Hour))}, tc.opts...)...)
			c, _, _ := f.newController(ctx)
			if _, err := c.syncHandler(ctx, cache.MetaObjectToName(f.cronJob)); err != nil {
				t.Fatal(err)
			}
			var created []string
			for _, a := range f.kubeclient.Actions() {
				if cr, ok := a.(core.CreateAction); ok {
					created = append(created, cr.GetObject().(*batchv1.Job).Name)
				}
			}
			if !slices.Equal(created, tc.wantJobs) {
				t.Errorf("created %q, want %q", created, tc.wantJobs)
			}
			cj := f.writtenStatus()
			missed := map[string]int64{}
			for _, m := range cj.Status.MissedRuns {
				missed[m.Reason] = m.Count
			}
			if missed[cronv1.MissedSuperseded] != tc.wantSuper || missed[cronv1.MissedDeadlineExceeded] != tc.wantLate {
				t.Errorf("missed %v, want %d superseded and %d past the deadline", missed, tc.wantSuper, tc.wantLate)
			}
		})
	}
}

func catchUp(p cronv1.CatchUpPolicy, limit *int32) func(*cronv1.CronJob) {
	return func(cj *cronv1.CronJob) {
		cj.Spec.CatchUpPolicy = p
		cj.Spec.CatchUpLimit = limit
	}
}

// A sync that runs before the informers have seen the previous sync's
// writes (the Job it created, the status it wrote) reads those writes: it
// makes no request at all, where a stale cache alone would mean a live GET
// of the Job and a conflicting status write.
func TestSyncReadsItsOwnWrites(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := newFixture(t, at(time.Second))
	f.cronJob = newCronJob(func(cj *cronv1.CronJob) { cj.ResourceVersion = "1" })
	c, _, cronFactory := f.newController(ctx)
	// Like the API server, the write returns a newer resource version.
	f.client.PrependReactor("update", "cronjobs", func(a core.Action) (bool, runtime.Object, error) {
		cj := a.(core.UpdateAction).GetObject().(*cronv1.CronJob).DeepCopy()
		cj.ResourceVersion = "2"
		return true, cj, nil
	})
	key := cache.MetaObjectToName(f.cronJob)
	if _, err := c.syncHandler(ctx, key); err != nil {
		t.Fatal(err)
	}
	if f.writtenStatus() == nil {
		t.Fatal("the first sync wrote no status; the case tests nothing")
	}

	f.kubeclient.ClearActions()
	f.client.ClearActions()
	f.clock.Step(time.Second)
	if _, err := c.syncHandler(ctx, key); err != nil {
		t.Fatal(err)
	}
	if got := describe(append(f.kubeclient.Actions(), f.client.Actions()...), false); len(got) > 0 {
		t.Errorf("a sync on caches behind its own writes did %q, want nothing", got)
	}

	// Once the cache shows a newer version than the write, the cache wins.
	newer := f.cronJob.DeepCopy()
	newer.ResourceVersion = "1000"
	newer.Spec.Suspend = ptr.To(true)
	cacheCronJob(t, cronFactory, newer)
	if got, err := c.cachedCronJob(ctx, key); err != nil || got.ResourceVersion != "1000" || !*got.Spec.Suspend {
		t.Errorf("read %v (%v), want the cache's newer version", got, err)
	}
}

// The informers stall (a hung watch, which client-go only notices at its
// 5-10 minute watch timeout). The controller's own writes stand in for the
// cache for ownWritesTTL (1 minute) only. After that, under catchUpPolicy
// All, a run whose Job has since gone (ttlSecondsAfterFinished) must not
// be started again from a cache older than the controller's own status
// write.
func TestStaleCacheAfterOwnWritesExpireStartsNoRunTwice(t *testing.T) {

	_, ctx := ktesting.NewTestContext(t)
	f := newFixture(t, at(5*time.Second))
	f.cronJob = newCronJob(withSchedule("*/10 * * * *"), lastScheduled(at(-10*time.Minute)), catchUp(cronv1.CatchUpAll, nil), func(cj *cronv1.CronJob) {
		cj.ResourceVersion = "1"
		cj.Spec.JobTemplate.Spec.TTLSecondsAfterFinished = ptr.To[int32](0)
	})
	c, _, _ := f.newController(ctx)
	rv := 1
	f.client.PrependReactor("update", "cronjobs", func(a core.Action) (bool, runtime.Object, error) {
		rv++
		a.(core.UpdateAction).GetObject().(metav1.Object).SetResourceVersion(strconv.Itoa(rv))
		return false, nil, nil
	})
	key := cache.MetaObjectToName(f.cronJob)
	log := createLog{}
	if _, err := c.syncHandler(ctx, key); err != nil {
		t.Fatal(err)
	}
	log.add(f)
	if w := f.writtenStatus(); w == nil || !w.Status.LastScheduleTime.Time.Equal(topOfHour) {
		t.Fatalf("first sync wrote %+v", w)
	}
	// The 10:00 Job finishes and the TTL controller deletes it; the caches
	// (never fed in this test) still show the CronJob as it was at 09:59.
	f.clock.Step(30 * time.Second)
	finishJob(t, ctx, f, nil, jobName(topOfHour))
	if err := f.kubeclient.BatchV1().Jobs("default").Delete(ctx, jobName(topOfHour), metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	// The 10:10 wake-up, informers still behind.
	f.clock.SetTime(at(10*time.Minute + time.Second))
	f.kubeclient.ClearActions()
	c.syncHandler(ctx, key) //nolint:errcheck // a conflict would be fine here; a second 10:00 Job is not
	log.add(f)
	if log[jobName(topOfHour)] > 1 {
		t.Errorf("the 10:00 run started twice (creates %v): the sync trusted a cache older than its own status write", log)
	}
}
