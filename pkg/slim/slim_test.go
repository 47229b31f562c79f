package slim

import (
	"errors"
	"math/rand"
	"reflect"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/apitesting/fuzzer"
	"k8s.io/apimachinery/pkg/api/equality"
	metafuzzer "k8s.io/apimachinery/pkg/apis/meta/fuzzer"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/util/diff"

	cronv1 "github.com/cronjob-controller/cronjob-controller/pkg/apis/batch/v1"
	"github.com/cronjob-controller/cronjob-controller/pkg/job"
)

// TestCronJobRoundTrip fills CronJobs at random, every field of the spec,
// template and status included, and checks that the cache form expands back
// to the same CronJob without managedFields. A spec field the cache form
// does not carry fails here.
func TestCronJobRoundTrip(t *testing.T) {
	filler := fuzzer.FuzzerFor(metafuzzer.Funcs, rand.NewSource(1), serializer.NewCodecFactory(runtime.NewScheme()))
	setSpecFields := map[string]bool{}
	for i := range 300 {
		var cj cronv1.CronJob
		filler.Fill(&cj)
		if i%2 == 0 {
			// The filler leaves a *metav1.Time nil.
			cj.Spec.NotBefore = &metav1.Time{Time: time.Unix(int64(i)*1000, 0)}
			cj.Spec.NotAfter = &metav1.Time{Time: time.Unix(int64(i)*2000+1, 0)}
			cj.Spec.SuspendUntil = &metav1.Time{Time: time.Unix(int64(i)*3000+2, 0)}
		}
		want := cj.DeepCopy()
		want.TypeMeta = metav1.TypeMeta{}
		want.ManagedFields = nil
		recordSetFields(reflect.ValueOf(cj.Spec), setSpecFields)

		out, err := FromCronJob(&cj)
		if err != nil {
			t.Fatal(err)
		}
		s, ok := out.(*CronJob)
		if !ok {
			t.Fatalf("FromCronJob gave %T", out)
		}
		if s.ManagedFields != nil {
			t.Error("managedFields kept in the cache")
		}
		got, err := s.CronJob()
		if err != nil {
			t.Fatal(err)
		}
		if !equality.Semantic.DeepEqual(want, got) {
			t.Fatalf("round trip changed the CronJob:\n%s", diff.Diff(want, got))
		}
	}
	for i := range reflect.TypeFor[cronv1.CronJobSpec]().NumField() {
		if name := reflect.TypeFor[cronv1.CronJobSpec]().Field(i).Name; !setSpecFields[name] {
			t.Errorf("no filled CronJob had spec.%s set: the test proves nothing for it", name)
		}
	}
}

func recordSetFields(v reflect.Value, set map[string]bool) {
	for i := range v.NumField() {
		if !v.Field(i).IsZero() {
			set[v.Type().Field(i).Name] = true
		}
	}
}

// TestCronJobCopiesAreIndependent checks that a sync changing the CronJob
// it expanded changes neither the cache nor the next expansion.
func TestCronJobCopiesAreIndependent(t *testing.T) {
	cj := &cronv1.CronJob{ObjectMeta: metav1.ObjectMeta{Name: "cj", Namespace: "ns", Labels: map[string]string{"a": "b"}}}
	cj.Spec.Schedule = "* * * * *"
	cj.Spec.Suspend = new(bool)
	cj.Spec.StartingDeadlineSeconds = new(int64(30))
	cj.Spec.JobTemplate.Spec.Template.Spec.Containers = []corev1.Container{{Name: "c", Image: "busybox"}}
	cj.Status.Active = []corev1.ObjectReference{{Name: "j1"}}
	s := NewCronJob(cj)
	*cj.Spec.Suspend = true // the informer's object, changed after the transform
	first, err := s.CronJob()
	if err != nil {
		t.Fatal(err)
	}
	*first.Spec.Suspend = true
	*first.Spec.StartingDeadlineSeconds = 5
	first.Labels["a"] = "changed"
	first.Spec.JobTemplate.Spec.Template.Spec.Containers[0].Image = "changed"
	first.Status.Active[0].Name = "changed"

	second, err := s.CronJob()
	if err != nil {
		t.Fatal(err)
	}
	if *second.Spec.Suspend || *second.Spec.StartingDeadlineSeconds != 30 || second.Labels["a"] != "b" ||
		second.Spec.JobTemplate.Spec.Template.Spec.Containers[0].Image != "busybox" || second.Status.Active[0].Name != "j1" {
		t.Errorf("the cache changed with the objects it gave out: %+v", second)
	}
}

// TestCronJobTemplateThatCannotBeEncoded checks that a template the
// encoder refuses is kept as it is rather than lost or failing the
// informer.
func TestCronJobTemplateThatCannotBeEncoded(t *testing.T) {
	defer func(f func(*batchv1.JobTemplateSpec) ([]byte, error)) { encodeTemplate = f }(encodeTemplate)
	encodeTemplate = func(*batchv1.JobTemplateSpec) ([]byte, error) { return nil, errors.New("refused") }

	cj := &cronv1.CronJob{ObjectMeta: metav1.ObjectMeta{Name: "cj"}}
	cj.Spec.JobTemplate.Spec.Template.Spec.Containers = []corev1.Container{{Name: "c", Image: "busybox"}}
	s := NewCronJob(cj)
	cj.Spec.JobTemplate.Spec.Template.Spec.Containers[0].Image = "changed"
	got, err := s.CronJob()
	if err != nil {
		t.Fatal(err)
	}
	if c := got.Spec.JobTemplate.Spec.Template.Spec.Containers; len(c) != 1 || c[0].Image != "busybox" {
		t.Errorf("template %+v, want the one cached", c)
	}
	got.Spec.JobTemplate.Spec.Template.Spec.Containers[0].Image = "changed"
	if again, _ := s.CronJob(); again.Spec.JobTemplate.Spec.Template.Spec.Containers[0].Image != "busybox" {
		t.Error("the cache changed with the CronJob it gave out")
	}
}

func TestJobKeepsWhatTheSyncReads(t *testing.T) {
	cj := &cronv1.CronJob{ObjectMeta: metav1.ObjectMeta{Name: "cj", Namespace: "ns", UID: "cj-uid"}}
	cj.Spec.JobTemplate.Annotations = map[string]string{"big": "x"}
	cj.Spec.JobTemplate.Spec.Template.Spec.Containers = []corev1.Container{{Name: "c", Image: "busybox"}}
	at := time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)
	j := job.New(cj, at, time.UTC)
	j.UID, j.ResourceVersion = "job-uid", "42"
	j.CreationTimestamp = metav1.NewTime(at.Add(time.Second))
	j.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "kube-controller-manager"}}
	j.Status.StartTime = &metav1.Time{Time: at}
	j.Status.CompletionTime = &metav1.Time{Time: at.Add(time.Minute)}
	j.Status.Conditions = []batchv1.JobCondition{
		{Type: batchv1.JobSuccessCriteriaMet, Status: corev1.ConditionTrue, Message: "long"},
		{Type: batchv1.JobComplete, Status: corev1.ConditionTrue, Message: "long"},
	}

	out, err := FromJob(j)
	if err != nil {
		t.Fatal(err)
	}
	s := out.(*Job)
	if s.Annotations != nil || s.Labels != nil || s.ManagedFields != nil {
		t.Errorf("the cache form keeps metadata the sync never reads: %+v", s.ObjectMeta)
	}
	if s.Name != j.Name || s.Namespace != "ns" || s.UID != j.UID || s.ResourceVersion != "42" ||
		!s.CreationTimestamp.Equal(&j.CreationTimestamp) || !job.IsControlledBy(s, "cj-uid") {
		t.Errorf("identity or owner lost: %+v", s.ObjectMeta)
	}
	if got, ok := s.ScheduledAt(); !ok || !got.Equal(at) || s.Manual() {
		t.Errorf("scheduled-at lost: %v, %v", got, ok)
	}
	if s.Finished() != batchv1.JobComplete || !s.StartTime().Equal(j.Status.StartTime) || !s.CompletionTime().Equal(j.Status.CompletionTime) {
		t.Errorf("status the sync reads lost: %v %v %v", s.Finished(), s.StartTime(), s.CompletionTime())
	}
	j.OwnerReferences[0].Name = "changed"
	j.Status.StartTime.Time = at.Add(time.Hour)
	if s.OwnerReferences[0].Name != "cj" || !s.StartTime().Equal(&metav1.Time{Time: at}) {
		t.Error("the cache form changed with the Job it was made from")
	}

	manualJob := job.NewManual(cj, "before", "now", "now", 7)
	manual := NewJob(manualJob)
	if _, ok := manual.ScheduledAt(); ok || !manual.Manual() || manual.Finished() != "" {
		t.Errorf("a manual run read as scheduled, not manual, or finished: %+v", manual)
	}
	if key, after, seq, ok := manual.RunNow(); !ok || key != "now" || after != "before" || seq != 7 {
		t.Errorf("run-now annotations read as %q, %q, %d, %v", key, after, seq, ok)
	}
	unnumbered := manualJob.DeepCopy()
	delete(unnumbered.Annotations, cronv1.RunNowSeqAnnotation) // made before requests were numbered
	if _, _, seq, ok := NewJob(unnumbered).RunNow(); !ok || seq != 0 {
		t.Errorf("a Job without a request number read as %d, %v", seq, ok)
	}

	unreadable := j.DeepCopy()
	unreadable.Annotations[cronv1.ScheduledAtAnnotation] = "yesterday"
	if _, ok := NewJob(unreadable).ScheduledAt(); ok {
		t.Error("an unreadable scheduled-at annotation read as a time")
	}

	foreign := j.DeepCopy()
	foreign.OwnerReferences, foreign.Finalizers = nil, nil
	if s := NewJob(foreign); s.Name != j.Name || !s.scheduledAt.IsZero() || s.Manual() || s.StartTime() != nil || s.Finished() != "" {
		t.Errorf("a foreign Job keeps more than its identity: %+v", s)
	}
	// Detached from its CronJob before its run was recorded: it keeps which
	// run it is, so its finalizer goes only once the status records that.
	detached := j.DeepCopy()
	detached.OwnerReferences = nil
	if got, ok := NewJob(detached).ScheduledAt(); !ok || !got.Equal(at) || !job.HoldsRunRecord(NewJob(detached)) {
		t.Errorf("a detached Job holding the run-record finalizer reads as run %v (%v)", got, ok)
	}
	if out, _ := FromJob("tombstone"); out != "tombstone" {
		t.Error("non-Jobs must pass through")
	}
}

// A Job a Backfill controls keeps whether it finished, the one thing the
// Backfill controller reads of it; a Job nobody of ours controls keeps
// nothing.
func TestBackfillJobKeepsFinished(t *testing.T) {
	done := []batchv1.JobCondition{{Type: batchv1.JobFailed, Status: corev1.ConditionTrue}}
	backfilled := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: "cj-60", OwnerReferences: []metav1.OwnerReference{{
			APIVersion: cronv1.SchemeGroupVersion.String(), Kind: "Backfill", Name: "bf", UID: "bf-uid", Controller: new(bool)}}},
		Status: batchv1.JobStatus{Conditions: done},
	}
	*backfilled.OwnerReferences[0].Controller = true
	if got := NewJob(backfilled).Finished(); got != batchv1.JobFailed {
		t.Errorf("a Backfill's finished Job: Finished() = %q, want Failed", got)
	}
	foreign := backfilled.DeepCopy()
	foreign.OwnerReferences[0].Kind = "Workflow"
	if got := NewJob(foreign).Finished(); got != "" {
		t.Errorf("a foreign Job: Finished() = %q, want nothing kept", got)
	}
}

// A Job's finish time orders the outcomes spec.failurePolicy counts: the
// completion time of a Complete Job, the Failed condition's transition for
// a failed one (which has no completion time), none while it runs.
func TestJobFinishTimeIsWhenItCompletedOrFailed(t *testing.T) {
	cj := &cronv1.CronJob{ObjectMeta: metav1.ObjectMeta{Name: "cj", Namespace: "ns", UID: "cj-uid"}}
	at := time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)
	done, failed := metav1.NewTime(at.Add(5*time.Minute)), metav1.NewTime(at.Add(7*time.Minute))
	complete, failing, running := job.New(cj, at, time.UTC), job.New(cj, at, time.UTC), job.New(cj, at, time.UTC)
	complete.Status = batchv1.JobStatus{CompletionTime: &done,
		Conditions: []batchv1.JobCondition{{Type: batchv1.JobComplete, Status: corev1.ConditionTrue, LastTransitionTime: done}}}
	failing.Status = batchv1.JobStatus{
		Conditions: []batchv1.JobCondition{{Type: batchv1.JobFailureTarget, Status: corev1.ConditionTrue, LastTransitionTime: done},
			{Type: batchv1.JobFailed, Status: corev1.ConditionTrue, LastTransitionTime: failed}}}
	if got := NewJob(complete).FinishTime(); got == nil || !got.Equal(&done) {
		t.Errorf("a Complete Job's finish time = %v, want %v", got, done)
	}
	if got := NewJob(failing).FinishTime(); got == nil || !got.Equal(&failed) {
		t.Errorf("a failed Job's finish time = %v, want %v", got, failed)
	}
	if got := NewJob(running).FinishTime(); got != nil {
		t.Errorf("a running Job's finish time = %v, want none", got)
	}
}

// A failed Job keeps its Failed condition's reason and message, for the
// run history, the message cut to what a run record holds.
func TestFailedJobKeepsWhyItFailed(t *testing.T) {
	cj := &cronv1.CronJob{ObjectMeta: metav1.ObjectMeta{Name: "cj", Namespace: "ns", UID: "cj-uid"}}
	at := time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)
	failing := job.New(cj, at, time.UTC)
	long := strings.Repeat("é", 200) // 400 bytes
	failing.Status.Conditions = []batchv1.JobCondition{{Type: batchv1.JobFailed, Status: corev1.ConditionTrue,
		Reason: "BackoffLimitExceeded", Message: long, LastTransitionTime: metav1.NewTime(at)}}
	reason, message := NewJob(failing).Failure()
	if reason != "BackoffLimitExceeded" || len(message) != maxFailedMessage || !utf8.ValidString(message) || !strings.HasPrefix(long, message) {
		t.Errorf("failure = %q, %q (%d bytes); want the reason and the message's first %d bytes, whole runes", reason, message, len(message), maxFailedMessage)
	}
	if reason, message := NewJob(job.New(cj, at, time.UTC)).Failure(); reason != "" || message != "" {
		t.Errorf("a running Job's failure = %q, %q; want none", reason, message)
	}
}

// The collector of per-CronJob metrics reports the failure policy's series
// only for a CronJob that has one, and reads that from the cache form.
func TestCronJobHasFailurePolicy(t *testing.T) {
	cj := &cronv1.CronJob{ObjectMeta: metav1.ObjectMeta{Name: "cj", Namespace: "ns"}}
	if NewCronJob(cj).HasFailurePolicy() {
		t.Error("HasFailurePolicy without spec.failurePolicy")
	}
	cj.Spec.FailurePolicy = &cronv1.FailurePolicy{PauseAfter: 3}
	s := NewCronJob(cj)
	cj.Spec.FailurePolicy = nil // the informer's object, changed after the transform
	if !s.HasFailurePolicy() {
		t.Error("no HasFailurePolicy with spec.failurePolicy set")
	}
}

// Deleting is the Job as a delete its finalizer holds up leaves it: being
// deleted since then, the rest as it was; the Job it was made from is not
// changed.
func TestJobDeletingIsTheJobBeingDeleted(t *testing.T) {
	at := time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)
	j := NewJob(&batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "j", UID: "job-uid", ResourceVersion: "7", Finalizers: []string{job.RunRecordFinalizer}}})
	d := j.Deleting(at.Add(time.Hour))
	if d.DeletionTimestamp == nil || !d.DeletionTimestamp.Time.Equal(at.Add(time.Hour)) {
		t.Errorf("deletionTimestamp %v, want 11:00", d.DeletionTimestamp)
	}
	if d.Name != "j" || d.UID != "job-uid" || d.ResourceVersion != "7" || !job.HoldsRunRecord(d) {
		t.Errorf("the copy lost what it was: %+v", d.ObjectMeta)
	}
	if j.DeletionTimestamp != nil {
		t.Error("the Job the copy was made from is being deleted too")
	}
}
