package main

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"
	kubeinformers "k8s.io/client-go/informers"
	k8sfake "k8s.io/client-go/kubernetes/fake"
	core "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"

	cronv1 "github.com/cronjob-controller/cronjob-controller/pkg/apis/batch/v1"
	"github.com/cronjob-controller/cronjob-controller/pkg/generated/clientset/versioned/fake"
	informers "github.com/cronjob-controller/cronjob-controller/pkg/generated/informers/externalversions"
	"github.com/cronjob-controller/cronjob-controller/pkg/job"
	"github.com/cronjob-controller/cronjob-controller/pkg/slim"
)

// The Backfill's model walk: random, seeded sequences of syncs, caches that
// lag the API server (or restart from an old snapshot, as a standby taking
// over), Job outcomes, TTL deletes, lost create answers and failed status
// writes. After every step: no time of the range has had two Jobs created.
// After the faults stop: every time has had exactly one Job, the Backfill
// is complete, and no Job hangs in Terminating.
//
// Seeds 21-24 name the Backfill with more than 63 characters (a Backfill's
// name may have 253), which its Jobs' backfill label must hold: the API
// server refuses a label value longer than 63 characters, as the walk's
// server does (I8.backfill-long-name).
func TestBackfillModelWalk(t *testing.T) {
	for seed := uint64(1); seed <= 24; seed++ {
		name := "bf"
		if seed > 20 {
			name = bfLongName
		}
		t.Run(fmt.Sprint(seed), func(t *testing.T) { walkBackfill(t, seed, 150, name, "") })
	}
}

// The walk under a rerun policy: the CronJob ran two of every three times
// of the range before the Backfill, a third of them failing (their Jobs
// kept, until a step deletes them) and a third succeeding (their Jobs
// pruned); its run history records both. After every step: no time has
// had two Jobs of the Backfill, whatever their names. After the faults
// stop: under Always every time has had exactly one, named as its
// scheduled run if it never ran, for the Backfill if it did; under
// IfFailed the succeeded times have had none. Half the replicas' CronJob
// caches predate the run history.
func TestBackfillRerunModelWalk(t *testing.T) {
	for seed := uint64(25); seed <= 36; seed++ {
		policy := cronv1.RerunAlways
		if seed%2 == 0 {
			policy = cronv1.RerunIfFailed
		}
		t.Run(fmt.Sprintf("%d-%s", seed, policy), func(t *testing.T) { walkBackfill(t, seed, 150, "bf", policy) })
	}
}

// ranBeforeBackfill says how the CronJob ran the i-th time of the walk's
// range before the Backfill (see TestBackfillRerunModelWalk): failed,
// succeeded, or "" for never.
func ranBeforeBackfill(i int) cronv1.RunOutcome {
	switch i % 3 {
	case 0:
		return cronv1.OutcomeFailed
	case 1:
		return cronv1.OutcomeSucceeded
	}
	return ""
}

// bfLongName is a Backfill name of 72 characters.
var bfLongName = "bf-" + strings.Repeat("backfill", 8) + "-long"

// bfWorld is the API server side of the walk: fake clientsets with the
// server behaviours the Backfill relies on added (resource versions and
// conflicts on Backfill writes, finalizers holding deleted Jobs).
type bfWorld struct {
	t          *testing.T
	rng        *rand.Rand
	kubeclient *k8sfake.Clientset
	client     *fake.Clientset
	cj         *cronv1.CronJob
	now        time.Time
	name       string // the Backfill's

	rv          int
	uids        int
	created     map[string]int    // successful creates per Job name
	createdAt   map[time.Time]int // successful creates per scheduled time
	policy      cronv1.RerunPolicy
	failStatus  int // status writes still to fail
	failCreate  int // Job creates still to fail
	loseAnswers int // Job creates still to succeed with an error answer
	log         []string
}

func newBFWorld(t *testing.T, seed uint64, name string, policy cronv1.RerunPolicy) *bfWorld {
	w := &bfWorld{t: t, rng: rand.New(rand.NewPCG(seed, 77)), now: at(10 * time.Minute), created: map[string]int{},
		createdAt: map[time.Time]int{}, name: name, policy: policy}
	w.cj = newCronJob(createdAt(at(-13*time.Hour)), lastScheduled(at(0)))
	bf := newBackfill(at(-12*time.Hour), at(0), int32(1+w.rng.IntN(3)))
	bf.Name = name
	bf.ResourceVersion = "1"
	bf.Spec.RerunPolicy = policy
	w.rv = 1
	var ran []runtime.Object
	if policy != "" {
		for i := range 12 {
			at := at(time.Duration(i-12) * time.Hour)
			outcome := ranBeforeBackfill(i)
			if outcome == "" {
				continue
			}
			w.cj.Status.RecentRuns = append([]cronv1.RunRecord{{JobName: jobName(at), Trigger: cronv1.TriggerScheduled,
				ScheduledTime: &metav1.Time{Time: at}, Outcome: outcome}}, w.cj.Status.RecentRuns...)
			if outcome == cronv1.OutcomeFailed {
				ran = append(ran, newJob(at, failed))
			}
		}
	}
	w.kubeclient = k8sfake.NewClientset(ran...)
	w.client = fake.NewClientset(bf, w.cj.DeepCopy())
	jobsGVR := batchv1.SchemeGroupVersion.WithResource("jobs")
	w.kubeclient.PrependReactor("create", "jobs", func(a core.Action) (bool, runtime.Object, error) {
		j := a.(core.CreateAction).GetObject().(*batchv1.Job).DeepCopy()
		if w.failCreate > 0 {
			w.failCreate--
			return true, nil, apierrors.NewServiceUnavailable("create refused")
		}
		// Validation, as the API server's.
		if why := modelInvalidJob(j); why != "" {
			return true, nil, apierrors.NewInvalid(batchv1.SchemeGroupVersion.WithKind("Job").GroupKind(), j.Name, field.ErrorList{field.Invalid(field.NewPath("metadata"), j.Name, why)})
		}
		w.uids++
		j.UID = types.UID(fmt.Sprintf("%s-%d", j.Name, w.uids))
		if err := w.kubeclient.Tracker().Create(jobsGVR, j, j.Namespace); err != nil {
			return true, nil, err
		}
		w.created[j.Name]++
		if at, ok := job.ScheduledAt(j); ok {
			w.createdAt[at]++
		}
		if w.loseAnswers > 0 {
			w.loseAnswers--
			return true, nil, apierrors.NewTimeoutError("create answer lost", 1)
		}
		return true, j, nil
	})
	// A patch that removes the last finalizer of a deleted Job removes it.
	w.kubeclient.AddReactor("patch", "jobs", func(a core.Action) (bool, runtime.Object, error) {
		w.collect()
		return false, nil, nil
	})
	bfGVR := cronv1.SchemeGroupVersion.WithResource("backfills")
	w.client.PrependReactor("update", "backfills", func(a core.Action) (bool, runtime.Object, error) {
		if a.GetSubresource() == "status" && w.failStatus > 0 {
			w.failStatus--
			return true, nil, apierrors.NewServiceUnavailable("status write lost")
		}
		bf := a.(core.UpdateAction).GetObject().(*cronv1.Backfill).DeepCopy()
		stored, err := w.client.Tracker().Get(bfGVR, bf.Namespace, bf.Name)
		if err != nil {
			return true, nil, err
		}
		if s := stored.(*cronv1.Backfill); s.ResourceVersion != bf.ResourceVersion {
			return true, nil, apierrors.NewConflict(bfGVR.GroupResource(), bf.Name, errors.New("stale resourceVersion"))
		} else if a.GetSubresource() == "status" {
			s = s.DeepCopy()
			s.Status = bf.Status
			bf = s
		}
		w.rv++
		bf.ResourceVersion = fmt.Sprint(w.rv)
		if err := w.client.Tracker().Update(bfGVR, bf, bf.Namespace); err != nil {
			return true, nil, err
		}
		return true, bf, nil
	})
	return w
}

// jobs lists the Jobs the server holds.
func (w *bfWorld) jobs() []batchv1.Job {
	list, err := w.kubeclient.BatchV1().Jobs(metav1.NamespaceDefault).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		w.t.Fatal(err)
	}
	return list.Items
}

// collect removes deleted Jobs that hold no finalizer, as the API server
// does.
func (w *bfWorld) collect() {
	jobsGVR := batchv1.SchemeGroupVersion.WithResource("jobs")
	objs, _ := w.kubeclient.Tracker().List(jobsGVR, batchv1.SchemeGroupVersion.WithKind("Job"), metav1.NamespaceDefault)
	if objs == nil {
		return
	}
	for _, j := range objs.(*batchv1.JobList).Items {
		if j.DeletionTimestamp != nil && len(j.Finalizers) == 0 {
			_ = w.kubeclient.Tracker().Delete(jobsGVR, j.Namespace, j.Name)
		}
	}
}

// ttlDelete deletes a finished Job as its TTL would: held by finalizers it
// only gets a deletion timestamp.
func (w *bfWorld) ttlDelete(j batchv1.Job) {
	jobsGVR := batchv1.SchemeGroupVersion.WithResource("jobs")
	if len(j.Finalizers) == 0 {
		_ = w.kubeclient.Tracker().Delete(jobsGVR, j.Namespace, j.Name)
		return
	}
	if j.DeletionTimestamp == nil {
		j.DeletionTimestamp = &metav1.Time{Time: w.now}
		if err := w.kubeclient.Tracker().Update(jobsGVR, &j, j.Namespace); err != nil {
			w.t.Fatal(err)
		}
	}
}

// bfReplica is one controller process with its own caches.
type bfReplica struct {
	c           *BackfillController
	kubeFactory kubeinformers.SharedInformerFactory
	cronFactory informers.SharedInformerFactory
}

func (w *bfWorld) newReplica() *bfReplica {
	r := &bfReplica{}
	r.c, r.kubeFactory, r.cronFactory = newBackfillControllerOn(w.t, w.kubeclient, w.client, w.now, record.NewFakeRecorder(10000))
	cj := w.cj
	if w.policy != "" && w.rng.IntN(2) == 0 {
		// A CronJob cache older than the status that recorded its runs.
		cj = cj.DeepCopy()
		cj.Status.RecentRuns = nil
	}
	cacheCronJob(w.t, r.cronFactory, cj)
	return r
}

// snapshot is what a cache could show: the server's state at some step.
type snapshot struct {
	jobs []batchv1.Job
	bf   *cronv1.Backfill
}

func (w *bfWorld) snapshot() snapshot {
	bf, err := w.client.BatchV1().Backfills(metav1.NamespaceDefault).Get(context.Background(), w.name, metav1.GetOptions{})
	if err != nil {
		w.t.Fatal(err)
	}
	return snapshot{jobs: w.jobs(), bf: bf}
}

// show makes r's Job cache, its Backfill cache, or both show s.
func (r *bfReplica) show(t *testing.T, s snapshot, jobs, backfill bool) {
	if jobs {
		var objs []any
		for i := range s.jobs {
			objs = append(objs, slim.NewJob(&s.jobs[i]))
		}
		if err := r.kubeFactory.Batch().V1().Jobs().Informer().GetIndexer().Replace(objs, ""); err != nil {
			t.Fatal(err)
		}
	}
	if backfill {
		if err := r.cronFactory.Batch().V1().Backfills().Informer().GetIndexer().Update(s.bf.DeepCopy()); err != nil {
			t.Fatal(err)
		}
	}
}

func walkBackfill(t *testing.T, seed uint64, steps int, name string, policy cronv1.RerunPolicy) {
	w := newBFWorld(t, seed, name, policy)
	r := w.newReplica()
	key := cache.ObjectName{Namespace: metav1.NamespaceDefault, Name: name}
	history := []snapshot{w.snapshot()}
	r.show(t, history[0], true, true)
	check := func(step string) {
		w.log = append(w.log, step)
		for name, n := range w.created {
			if n > 1 {
				t.Fatalf("seed %d: Job %s created %d times; steps:\n%s", seed, name, n, strings.Join(w.log, "\n"))
			}
		}
		for at, n := range w.createdAt {
			if n > 1 {
				t.Fatalf("seed %d: the time %v got %d Jobs of the Backfill; steps:\n%s", seed, at, n, strings.Join(w.log, "\n"))
			}
		}
	}
	for range steps {
		var step string
		switch x := w.rng.IntN(100); {
		case x < 30:
			err := r.c.syncBackfill(context.Background(), key)
			step = fmt.Sprintf("sync: %v", err)
		case x < 45:
			s := w.snapshot()
			history = append(history, s)
			jobs, bf := w.rng.IntN(2) == 0, w.rng.IntN(2) == 0
			r.show(t, s, jobs, bf)
			step = fmt.Sprintf("caches catch up (jobs %v, backfill %v)", jobs, bf)
		case x < 60:
			jobs := w.jobs()
			if len(jobs) == 0 {
				continue
			}
			j := jobs[w.rng.IntN(len(jobs))]
			if slices.ContainsFunc(j.Status.Conditions, func(c batchv1.JobCondition) bool { return c.Status == corev1.ConditionTrue }) {
				continue
			}
			cond := batchv1.JobComplete
			if w.rng.IntN(4) == 0 {
				cond = batchv1.JobFailed
			}
			j.Status.Conditions = []batchv1.JobCondition{{Type: cond, Status: corev1.ConditionTrue}}
			if err := w.kubeclient.Tracker().Update(batchv1.SchemeGroupVersion.WithResource("jobs"), &j, j.Namespace); err != nil {
				t.Fatal(err)
			}
			step = fmt.Sprintf("job %s %s", j.Name, cond)
		case x < 75:
			jobs := w.jobs()
			if len(jobs) == 0 {
				continue
			}
			j := jobs[w.rng.IntN(len(jobs))]
			if w.rng.IntN(3) > 0 && len(j.Status.Conditions) == 0 {
				continue // TTL deletes finished Jobs; now and then a user deletes a running one
			}
			w.ttlDelete(j)
			step = fmt.Sprintf("delete job %s (finalizers %v)", j.Name, j.Finalizers)
		case x < 85:
			switch w.rng.IntN(3) {
			case 0:
				w.failStatus = 1 + w.rng.IntN(3)
			case 1:
				w.failCreate = 1 + w.rng.IntN(2)
			default:
				w.loseAnswers = 1 + w.rng.IntN(2)
			}
			step = fmt.Sprintf("faults: status %d, create %d, lost answers %d", w.failStatus, w.failCreate, w.loseAnswers)
		default:
			// A standby takes over with caches from an earlier step.
			r = w.newReplica()
			s := history[w.rng.IntN(len(history))]
			r.show(t, s, true, true)
			step = fmt.Sprintf("takeover with caches of step-snapshot (backfill rv %s)", s.bf.ResourceVersion)
		}
		check(step)
	}

	// The faults stop; the caches catch up; every Job finishes.
	w.failStatus, w.failCreate, w.loseAnswers = 0, 0, 0
	var bf *cronv1.Backfill
	for i := range 100 {
		for _, j := range w.jobs() {
			if len(j.Status.Conditions) == 0 {
				j.Status.Conditions = []batchv1.JobCondition{{Type: batchv1.JobComplete, Status: corev1.ConditionTrue}}
				if err := w.kubeclient.Tracker().Update(batchv1.SchemeGroupVersion.WithResource("jobs"), &j, j.Namespace); err != nil {
					t.Fatal(err)
				}
			}
		}
		r.show(t, w.snapshot(), true, true)
		err := r.c.syncBackfill(context.Background(), key)
		check(fmt.Sprintf("settle %d: sync: %v", i, err))
		w.collect()
		bf = w.snapshot().bf
		if meta.IsStatusConditionTrue(bf.Status.Conditions, cronv1.ConditionBackfillComplete) {
			break
		}
	}
	// One more round so the last status's Jobs are released.
	r.show(t, w.snapshot(), true, true)
	if err := r.c.syncBackfill(context.Background(), key); err != nil {
		t.Errorf("seed %d: final sync: %v", seed, err)
	}
	w.collect()
	bf = w.snapshot().bf
	st := bf.Status
	if len(name) > 63 {
		made := 0
		for i := range 12 {
			if w.created[jobName(at(time.Duration(i-12)*time.Hour))] == 1 {
				made++
			}
		}
		if made != 12 || !meta.IsStatusConditionTrue(st.Conditions, cronv1.ConditionBackfillComplete) {
			t.Errorf("I8.backfill-long-name: seed %d: Backfill %q (%d characters): %d of its 12 times got a Job after the faults stopped; status total %d created %d skipped %d, conditions %v",
				seed, name, len(name), made, st.Total, st.Created, st.Skipped, bfConditions(st.Conditions))
			return
		}
	}
	if !meta.IsStatusConditionTrue(st.Conditions, cronv1.ConditionBackfillComplete) {
		t.Fatalf("seed %d: not complete after the faults stopped: %+v\nsteps:\n%s", seed, st, strings.Join(w.log, "\n"))
	}
	if policy != "" {
		checkRerunWalk(t, w, seed, st)
	} else {
		if st.Total != 12 || st.Created != 12 || st.Skipped != 0 || st.Succeeded+st.Failed != 12 {
			t.Errorf("seed %d: status %+v, want 12 times, each created and counted once", seed, st)
		}
		for i := range 12 {
			if name := jobName(at(time.Duration(i-12) * time.Hour)); w.created[name] != 1 {
				t.Errorf("seed %d: the time of %s had %d Jobs, want 1", seed, name, w.created[name])
			}
		}
	}
	for _, j := range w.jobs() {
		if j.DeletionTimestamp != nil {
			t.Errorf("seed %d: Job %s hangs in Terminating with finalizers %v", seed, j.Name, j.Finalizers)
		}
	}
}

// checkRerunWalk checks the end of a walk under a rerun policy: each time
// got the Jobs the policy asks for, under the names it asks for, and the
// status counts them.
func checkRerunWalk(t *testing.T, w *bfWorld, seed uint64, st cronv1.BackfillStatus) {
	t.Helper()
	var created, rerun, skipped int32
	for i := range 12 {
		at := at(time.Duration(i-12) * time.Hour)
		first, again := jobName(at), job.RerunName("cj", "bf-uid", at)
		wantFirst, wantAgain := 0, 0
		switch outcome := ranBeforeBackfill(i); {
		case outcome == "":
			wantFirst = 1
		case w.policy == cronv1.RerunAlways || outcome == cronv1.OutcomeFailed:
			wantAgain = 1
		default:
			skipped++
		}
		created += int32(wantFirst + wantAgain)
		rerun += int32(wantAgain)
		if w.created[first] != wantFirst || w.created[again] != wantAgain {
			t.Errorf("seed %d: the time %v (ran before: %q) got %d Jobs %s and %d Jobs %s; want %d and %d",
				seed, at, ranBeforeBackfill(i), w.created[first], first, w.created[again], again, wantFirst, wantAgain)
		}
	}
	if st.Total != 12 || st.Created != created || st.Rerun != rerun || st.Skipped != skipped || st.Succeeded+st.Failed != created {
		t.Errorf("seed %d: status %+v, want %d created (%d run again), %d skipped", seed, st, created, rerun, skipped)
	}
}

func bfConditions(cs []metav1.Condition) string {
	var out []string
	for _, c := range cs {
		out = append(out, fmt.Sprintf("%s=%s (%s: %s)", c.Type, c.Status, c.Reason, c.Message))
	}
	return strings.Join(out, "; ")
}
