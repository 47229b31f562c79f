// Package job holds the pure functions about the batch/v1 Jobs a CronJob
// owns: building one from the template, telling whether it finished, and
// choosing which finished ones fall outside the history limits.
package job

import (
	"fmt"
	"hash/fnv"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	cronv1 "github.com/cronjob-controller/cronjob-controller/pkg/apis/batch/v1"
)

// controllerKind is the owner reference kind and version of a CronJob.
var controllerKind = cronv1.SchemeGroupVersion.WithKind("CronJob")

// Name is the name of the Job of cronJobName scheduled at t: the scheduled
// time in Unix seconds makes the name a lock, so one run never yields two
// Jobs, across restarts and replicas alike.
func Name(cronJobName string, t time.Time) string {
	return cronJobName + "-" + strconv.FormatInt(t.Unix(), 10)
}

// Manual is the value of the instantiate annotation on Jobs started by hand.
const Manual = "manual"

// RunRecordFinalizer is on every Job this controller creates, until the Job
// has finished (or is being deleted) and the CronJob's status as stored
// records its run and no longer lists it active. Until the status records
// the run the Job is the run's only record: without the finalizer a TTL, a
// hand delete or history pruning could remove it before the status write
// (deferred behind a burst, or lost in a crash, or after a create whose
// answer was lost), and a restarted controller would start the same run
// again. Until the status no longer lists it active, the Job is the only
// record of its outcome: a TTL of 0 would remove a failed Job before any
// status saw it finish. Released at that point rather than at the status
// write that records the run, the finalizer costs a burst no write.
const RunRecordFinalizer = "batch.tutorial.kubebuilder.io/run-record"

// BackfillRecordFinalizer is on every Job a Backfill creates, until the
// Backfill's status as stored records it (pkg/backfill). It is not
// RunRecordFinalizer, which the CronJob controller releases from any Job
// no CronJob controls once it is deleted.
const BackfillRecordFinalizer = "batch.tutorial.kubebuilder.io/backfill-record"

// HoldsRunRecord reports whether j still carries RunRecordFinalizer.
func HoldsRunRecord(j metav1.Object) bool {
	return slices.Contains(j.GetFinalizers(), RunRecordFinalizer)
}

// New builds the Job for the run of cj scheduled at t. The scheduled-at
// annotation is written in loc, the CronJob's time zone.
func New(cj *cronv1.CronJob, t time.Time, loc *time.Location) *batchv1.Job {
	at := t.In(loc).Format(time.RFC3339)
	j := fromTemplate(cj, Name(cj.Name, t), cronv1.ScheduledAtAnnotation, at)
	withScheduledTime(&j.Spec.Template, at)
	return j
}

// ManualName is the name of the Job started for request number seq of the
// run-now annotation of the CronJob cronJobName with UID uid, value
// following the value handled before it (after; "" for none): "-m" and
// nine base-36 digits of a 64-bit hash of the four. The number makes each
// change of the value a name of its own, also back to a value used before
// when the value before it repeats too (A, B, A, B); a retried create of
// the same request gets the same name. The UID keeps a CronJob deleted and
// recreated under the same name from meeting its predecessor's Jobs, which
// may linger (Terminating, or orphaned), on its first request. seq 0 is the
// name Jobs got before requests were numbered (a hash of after and value
// alone). The name never collides with a scheduled run's (digits only) and
// fits 63 characters after a 52-character CronJob name.
func ManualName(cronJobName string, uid types.UID, after, value string, seq int64) string {
	h := fnv.New64a()
	h.Write([]byte(after))
	h.Write([]byte{0})
	h.Write([]byte(value))
	if seq != 0 {
		h.Write([]byte{0})
		h.Write([]byte(strconv.FormatInt(seq, 10)))
		h.Write([]byte{0})
		h.Write([]byte(uid))
	}
	digits := strconv.FormatUint(h.Sum64(), 36)
	return fmt.Sprintf("%s-m%09s", cronJobName, digits[max(0, len(digits)-9):])
}

// RerunName is the name of the Job a Backfill (backfillUID) makes to run
// again the time t of the CronJob cronJobName, a time that has already
// run under Name: "-b" and nine base-36 digits of a 64-bit hash of the two,
// so the name is that Backfill's lock on that time, and a second Backfill
// gets a lock of its own. Like ManualName's, it never collides with a
// scheduled run's (digits only) and fits 63 characters after a
// 52-character CronJob name.
func RerunName(cronJobName string, backfillUID types.UID, t time.Time) string {
	h := fnv.New64a()
	h.Write([]byte(backfillUID))
	h.Write([]byte{0})
	h.Write([]byte(strconv.FormatInt(t.Unix(), 10)))
	digits := strconv.FormatUint(h.Sum64(), 36)
	return fmt.Sprintf("%s-b%09s", cronJobName, digits[max(0, len(digits)-9):])
}

// RequestName is the name of the Job of the CronJobRun with UID runUID, a
// request to run the CronJob cronJobName: "-r" and nine base-36 digits of
// a 64-bit hash of the UID, so the name is that CronJobRun's lock (one Job
// per CronJobRun, whoever creates it, however often). Like ManualName's,
// it never collides with a scheduled run's (digits only) or a run-now's
// ("-m") and fits 63 characters after a 52-character CronJob name.
func RequestName(cronJobName string, runUID types.UID) string {
	h := fnv.New64a()
	h.Write([]byte("cronjobrun\x00"))
	h.Write([]byte(runUID))
	digits := strconv.FormatUint(h.Sum64(), 36)
	return fmt.Sprintf("%s-r%09s", cronJobName, digits[max(0, len(digits)-9):])
}

// IsRequestName reports whether name is the form RequestName gives the
// Jobs of cronJobName.
func IsRequestName(cronJobName, name string) bool {
	rest, ok := strings.CutPrefix(name, cronJobName+"-r")
	return ok && len(rest) == 9 && strings.Trim(rest, "0123456789abcdefghijklmnopqrstuvwxyz") == ""
}

// NewRequested builds the Job of the CronJobRun run of cj: a manual Job
// (as kubectl create job --from makes) named by RequestName, with env set
// in every container and init container, each name replacing the
// template's variable of that name.
func NewRequested(cj *cronv1.CronJob, runName string, runUID types.UID, env []cronv1.RunEnvVar) *batchv1.Job {
	j := fromTemplate(cj, RequestName(cj.Name, runUID), cronv1.InstantiateAnnotation, Manual)
	j.Annotations[cronv1.CronJobRunAnnotation] = runName
	pod := &j.Spec.Template.Spec
	for _, cs := range [][]corev1.Container{pod.InitContainers, pod.Containers} {
		for i := range cs {
			cs[i].Env = overrideEnv(cs[i].Env, env)
		}
	}
	return j
}

// overrideEnv sets each of set in base: in place of a variable of the same
// name, else at the end (so it may refer to the template's variables).
func overrideEnv(base []corev1.EnvVar, set []cronv1.RunEnvVar) []corev1.EnvVar {
	for _, e := range set {
		v := corev1.EnvVar{Name: e.Name, Value: e.Value}
		if i := slices.IndexFunc(base, func(b corev1.EnvVar) bool { return b.Name == e.Name }); i >= 0 {
			base[i] = v
		} else {
			base = append(base, v)
		}
	}
	return base
}

// NewManual builds the Job started by hand for request number seq, a
// run-now value following the handled value after; key is the value as
// status.lastRunNow keeps it.
func NewManual(cj *cronv1.CronJob, after, value, key string, seq int64) *batchv1.Job {
	j := fromTemplate(cj, ManualName(cj.Name, cj.UID, after, value, seq), cronv1.InstantiateAnnotation, Manual)
	j.Annotations[cronv1.RunNowKeyAnnotation] = key
	j.Annotations[cronv1.RunNowAfterAnnotation] = after
	j.Annotations[cronv1.RunNowSeqAnnotation] = strconv.FormatInt(seq, 10)
	return j
}

// fromTemplate builds a Job of cj from its template, with one extra
// annotation.
func fromTemplate(cj *cronv1.CronJob, name, annotationKey, annotationValue string) *batchv1.Job {
	tmpl := cj.Spec.JobTemplate
	annotations := make(map[string]string, len(tmpl.Annotations)+1)
	for k, v := range tmpl.Annotations {
		annotations[k] = v
	}
	annotations[annotationKey] = annotationValue
	annotations[cronv1.CronJobUIDAnnotation] = string(cj.UID)
	var labels map[string]string
	if len(tmpl.Labels) > 0 {
		labels = make(map[string]string, len(tmpl.Labels))
		for k, v := range tmpl.Labels {
			labels[k] = v
		}
	}
	return &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{
			Name:            name,
			Namespace:       cj.Namespace,
			Labels:          labels,
			Annotations:     annotations,
			Finalizers:      []string{RunRecordFinalizer},
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(cj, controllerKind)},
		},
		Spec: *tmpl.Spec.DeepCopy(),
	}
}

// RecordOf is the UID of the CronJob that j, a Job it no longer controls
// (a user removed the owner reference), was made for, while j still holds
// RunRecordFinalizer: the record of a run that CronJob's status does not
// record yet. "" for any other Job.
func RecordOf(j metav1.Object) types.UID {
	if ControllerOf(j) != nil || !HoldsRunRecord(j) {
		return ""
	}
	if r, ok := j.(interface{ RecordOf() types.UID }); ok {
		return r.RecordOf()
	}
	return types.UID(j.GetAnnotations()[cronv1.CronJobUIDAnnotation])
}

// CronJobNameOf is the name of the CronJob a Job of this controller's naming
// (Name, ManualName) was made for.
func CronJobNameOf(jobName string) string {
	if i := strings.LastIndexByte(jobName, '-'); i > 0 {
		return jobName[:i]
	}
	return jobName
}

// IsControlledBy reports whether the controller of j is a CronJob of this
// API with the given UID.
func IsControlledBy(j metav1.Object, uid string) bool {
	ref := ControllerOf(j)
	return ref != nil && string(ref.UID) == uid
}

// ControllerOf returns j's controller reference if it points at a CronJob
// of this API group, and nil otherwise (a built-in CronJob included).
func ControllerOf(j metav1.Object) *metav1.OwnerReference {
	ref := metav1.GetControllerOfNoCopy(j)
	if ref == nil || ref.Kind != controllerKind.Kind || ref.APIVersion != controllerKind.GroupVersion().String() {
		return nil
	}
	return ref
}

// Finished returns the condition type (Complete or Failed) that ended j, or
// "" while it runs.
func Finished(j *batchv1.Job) batchv1.JobConditionType {
	for _, c := range j.Status.Conditions {
		if (c.Type == batchv1.JobComplete || c.Type == batchv1.JobFailed) && c.Status == corev1.ConditionTrue {
			return c.Type
		}
	}
	return ""
}

// ScheduledAt reads the scheduled-at annotation of a Job this controller
// made. It returns false for a missing or unreadable annotation.
func ScheduledAt(j metav1.Object) (time.Time, bool) {
	v, ok := j.GetAnnotations()[cronv1.ScheduledAtAnnotation]
	if !ok {
		return time.Time{}, false
	}
	t, err := time.Parse(time.RFC3339, v)
	return t, err == nil
}

// Run is what history pruning reads of a Job: *batchv1.Job is not one (the
// controller's caches hold Jobs in a slim form that is).
type Run interface {
	GetName() string
	Finished() batchv1.JobConditionType
	StartTime() *metav1.Time
}

// ToPrune returns the finished Jobs beyond the history limits: the oldest by
// start time, a Job that never started counting as the newest. A nil limit
// keeps everything.
func ToPrune[J Run](finished []J, successfulLimit, failedLimit *int32) []J {
	var succeeded, failed []J
	for _, j := range finished {
		switch j.Finished() {
		case batchv1.JobComplete:
			succeeded = append(succeeded, j)
		case batchv1.JobFailed:
			failed = append(failed, j)
		}
	}
	return append(oldestBeyond(succeeded, successfulLimit), oldestBeyond(failed, failedLimit)...)
}

func oldestBeyond[J Run](jobs []J, limit *int32) []J {
	if limit == nil {
		return nil
	}
	// The schema refuses a negative limit; one that got past it keeps none.
	keep := max(0, int(*limit))
	if len(jobs) <= keep {
		return nil
	}
	sort.SliceStable(jobs, func(a, b int) bool { return startedBefore(jobs[a], jobs[b]) })
	return jobs[:len(jobs)-keep]
}

func startedBefore[J Run](a, b J) bool {
	as, bs := a.StartTime(), b.StartTime()
	switch {
	case as == nil && bs == nil:
		return a.GetName() < b.GetName()
	case as == nil:
		return false
	case bs == nil:
		return true
	case as.Equal(bs):
		return a.GetName() < b.GetName()
	default:
		return as.Before(bs)
	}
}

// Ref is the reference to j kept in a CronJob's status.active.
func Ref(j metav1.Object) corev1.ObjectReference {
	return corev1.ObjectReference{
		APIVersion: batchv1.SchemeGroupVersion.String(),
		Kind:       "Job",
		Namespace:  j.GetNamespace(),
		Name:       j.GetName(),
		UID:        j.GetUID(),
	}
}
