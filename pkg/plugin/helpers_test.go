package plugin

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"testing"
	"time"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	k8sfake "k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	testingclock "k8s.io/utils/clock/testing"

	cronv1 "github.com/cronjob-controller/cronjob-controller/pkg/apis/batch/v1"
	"github.com/cronjob-controller/cronjob-controller/pkg/generated/clientset/versioned/fake"
	"github.com/cronjob-controller/cronjob-controller/pkg/job"
	"github.com/cronjob-controller/cronjob-controller/pkg/planner"
)

const ns = "team-a"

// t0 is the tests' now.
var t0 = time.Date(2026, 11, 23, 13, 4, 30, 0, time.UTC)

func newCronJob(name, schedule string, opts ...func(*cronv1.CronJob)) *cronv1.CronJob {
	cj := &cronv1.CronJob{
		ObjectMeta: metav1.ObjectMeta{
			Name: name, Namespace: ns, UID: types.UID("uid-" + name), Generation: 1, ResourceVersion: "10",
			CreationTimestamp: metav1.NewTime(t0.Add(-time.Hour)),
		},
		Spec: cronv1.CronJobSpec{Schedule: schedule},
	}
	for _, o := range opts {
		o(cj)
	}
	return cj
}

// fakes are the fake clientsets of one test, with its clock.
type fakes struct {
	cron  *fake.Clientset
	kube  *k8sfake.Clientset
	clock *testingclock.FakePassiveClock
}

func newFakes(cronJobs []*cronv1.CronJob, jobs ...*batchv1.Job) fakes {
	var cronObjects, kubeObjects []runtime.Object
	for _, cj := range cronJobs {
		cronObjects = append(cronObjects, cj.DeepCopy())
	}
	for _, j := range jobs {
		kubeObjects = append(kubeObjects, j.DeepCopy())
	}
	// The simple clientset: the field manager of NewClientset knows no
	// schema for this API's kinds, and creating a CronJobRun needs one.
	return fakes{cron: fake.NewSimpleClientset(cronObjects...), kube: k8sfake.NewClientset(kubeObjects...), clock: testingclock.NewFakePassiveClock(t0)}
}

func (f fakes) clients() Clients {
	return Clients{Cron: f.cron, Kube: f.kube, Namespace: ns, Clock: f.clock}
}

func (f fakes) cronJob(t *testing.T, name string) *cronv1.CronJob {
	t.Helper()
	cj, err := f.cron.BatchV1().CronJobs(ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return cj
}

// patches counts the patch requests the fake CronJob client saw.
func (f fakes) patches() int {
	n := 0
	for _, a := range f.cron.Actions() {
		if a.GetVerb() == "patch" {
			n++
		}
	}
	return n
}

// decide is what a sync of the controller plans for cj at now, with no
// Jobs: the planner is the controller's decision, so the plugin's
// predictions are checked against it rather than against a copy.
func decide(cj *cronv1.CronJob, now time.Time) *planner.Plan {
	return planner.Decide(planner.Input{CronJob: cj, Now: now})
}

// jobOf is a Job cj controls, created at created.
func jobOf(cj *cronv1.CronJob, name string, created time.Time, opts ...func(*batchv1.Job)) *batchv1.Job {
	j := job.NewManual(cj, "", "x", "x", 1)
	j.Name = name
	j.Annotations = map[string]string{}
	j.CreationTimestamp = metav1.NewTime(created)
	for _, o := range opts {
		o(j)
	}
	return j
}

func scheduledAt(t time.Time) func(*batchv1.Job) {
	return func(j *batchv1.Job) { j.Annotations[cronv1.ScheduledAtAnnotation] = t.Format(time.RFC3339) }
}

func manual(j *batchv1.Job) { j.Annotations[cronv1.InstantiateAnnotation] = job.Manual }

func started(t time.Time) func(*batchv1.Job) {
	return func(j *batchv1.Job) { j.Status.StartTime = &metav1.Time{Time: t} }
}

func ended(outcome batchv1.JobConditionType, t time.Time) func(*batchv1.Job) {
	return func(j *batchv1.Job) {
		j.Status.Conditions = append(j.Status.Conditions, batchv1.JobCondition{
			Type: outcome, Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(t),
		})
		if outcome == batchv1.JobComplete {
			j.Status.CompletionTime = &metav1.Time{Time: t}
		}
	}
}

var metav1UpdateOptions = metav1.UpdateOptions{}

// withResourceVersions makes the fake CronJob client keep resourceVersions
// as the API server does, which the fake's tracker does not: each merge
// patch stores a new one, and one that carries a resourceVersion other
// than the stored one conflicts.
func (f fakes) withResourceVersions(t *testing.T) {
	gvr := cronv1.SchemeGroupVersion.WithResource("cronjobs")
	f.cron.PrependReactor("patch", "cronjobs", func(a k8stesting.Action) (bool, runtime.Object, error) {
		p := a.(k8stesting.PatchAction)
		if p.GetPatchType() != types.MergePatchType {
			t.Fatalf("a %s patch; this fake applies merge patches only", p.GetPatchType())
		}
		// The tracker, not the clientset: the fake holds its lock while a
		// reactor runs.
		obj, err := f.cron.Tracker().Get(gvr, p.GetNamespace(), p.GetName())
		if err != nil {
			return true, nil, err
		}
		stored := obj.(*cronv1.CronJob)
		var sent struct {
			Metadata struct {
				ResourceVersion string `json:"resourceVersion"`
			} `json:"metadata"`
		}
		if err := json.Unmarshal(p.GetPatch(), &sent); err != nil {
			return true, nil, err
		}
		if rv := sent.Metadata.ResourceVersion; rv != "" && rv != stored.ResourceVersion {
			return true, nil, apierrors.NewConflict(schema.GroupResource{Group: cronv1.GroupName, Resource: "cronjobs"}, p.GetName(),
				errors.New("the object has been modified"))
		}
		doc, err := json.Marshal(stored)
		if err != nil {
			return true, nil, err
		}
		if doc, err = jsonpatch.MergePatch(doc, p.GetPatch()); err != nil {
			return true, nil, err
		}
		patched := &cronv1.CronJob{}
		if err := json.Unmarshal(doc, patched); err != nil {
			return true, nil, err
		}
		n, err := strconv.Atoi(stored.ResourceVersion)
		if err != nil {
			t.Fatalf("resourceVersion %q", stored.ResourceVersion)
		}
		patched.ResourceVersion = strconv.Itoa(n + 1)
		if err := f.cron.Tracker().Update(gvr, patched, p.GetNamespace()); err != nil {
			return true, nil, err
		}
		return true, patched.DeepCopy(), nil
	})
}
