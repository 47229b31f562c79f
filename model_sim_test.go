package main

// The simulated API server of the model-based test (model_test.go): an
// in-memory store behind reactors on the fake clientsets, stricter than the
// client-go fake tracker. Every write bumps one global resourceVersion; UIDs
// and creationTimestamps come from the model clock; metadata.generation moves
// on spec edits only; the status subresource writes .status alone and
// refuses a stale resourceVersion; deletes honour UID preconditions. Faults
// are injected per call, decided by a hash of (seed, step, call), so a walk
// replays the same faults whatever order the controller makes its calls in.

import (
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"maps"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apimachinery/pkg/watch"
	k8sfake "k8s.io/client-go/kubernetes/fake"
	core "k8s.io/client-go/testing"
	testingclock "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	cronv1 "github.com/cronjob-controller/cronjob-controller/pkg/apis/batch/v1"
	"github.com/cronjob-controller/cronjob-controller/pkg/generated/clientset/versioned/fake"
)

// Fault kinds.
const (
	modelFault500  = "500"
	modelFault503  = "503"
	modelFault429  = "429"
	modelFaultLost = "lost" // the server applied the write; the client got an error
)

// modelFaultProfile says which calls of a step may fail.
type modelFaultProfile string

const (
	modelFaultsAll           modelFaultProfile = "all calls"
	modelFaultsJobCreates    modelFaultProfile = "Job creates"
	modelFaultsManualCreates modelFaultProfile = "run-now Job creates"
	modelFaultsStatus        modelFaultProfile = "status writes"
	modelFaultsReads         modelFaultProfile = "Job reads"
	modelFaultsDeletes       modelFaultProfile = "Job deletes"
)

// modelFaults decides, per call, whether it fails and how.
type modelFaults struct {
	seed    int64
	step    int
	rate    float64
	profile modelFaultProfile
	calls   map[string]int
}

func (f *modelFaults) reset(step int) {
	f.step, f.rate, f.profile, f.calls = step, 0, "", map[string]int{}
}

// decide returns the fault for this call, or "". lossy calls (writes) may
// also be applied and their response lost.
func (f *modelFaults) decide(verb, resource, name string, manual, lossy bool) string {
	if f.rate == 0 || !f.applies(verb, resource, manual) {
		return ""
	}
	k := verb + " " + resource + " " + name
	n := f.calls[k]
	f.calls[k] = n + 1
	h := fnv.New64a()
	fmt.Fprintf(h, "%d|%d|%s|%d", f.seed, f.step, k, n)
	x := h.Sum64()
	if float64(x>>11)/float64(1<<53) >= f.rate {
		return ""
	}
	kinds := []string{modelFault500, modelFault503, modelFault429}
	if lossy {
		kinds = append(kinds, modelFaultLost, modelFaultLost)
	}
	return kinds[(x&0xff)%uint64(len(kinds))]
}

func (f *modelFaults) applies(verb, resource string, manual bool) bool {
	switch f.profile {
	case modelFaultsAll:
		return true
	case modelFaultsJobCreates:
		return verb == "create" && resource == "jobs"
	case modelFaultsManualCreates:
		return verb == "create" && resource == "jobs" && manual
	case modelFaultsStatus:
		return resource == "cronjobs/status" || resource == "cronjobruns/status"
	case modelFaultsReads:
		return verb == "get"
	case modelFaultsDeletes:
		return verb == "delete"
	}
	return false
}

func modelFaultError(kind, what string) error {
	switch kind {
	case modelFault500:
		return apierrors.NewInternalError(fmt.Errorf("injected fault on %s", what))
	case modelFault503:
		return apierrors.NewServiceUnavailable("injected fault on " + what)
	case modelFault429:
		return apierrors.NewTooManyRequests("injected fault on "+what, 1)
	default:
		return fmt.Errorf("injected fault on %s: http2: client connection lost (the server applied the request)", what)
	}
}

// modelEvent is one write as a watch would deliver it: the object after the
// write, or its deletion.
type modelEvent struct {
	at      time.Time
	key     string
	job     *batchv1.Job
	cronJob *cronv1.CronJob
	run     *cronv1.CronJobRun
	deleted bool
}

// modelCall is one API call the controller made.
type modelCall struct {
	verb, resource, name string
	manual               bool   // a run-now Job's create
	fault                string // injected fault, "" if none
	err                  error  // what the client got
	gen                  int64  // status writes: the generation of the object sent
	respGen              int64  // status writes and CronJob reads: the generation the server returned
	job                  *batchv1.Job
}

func (c modelCall) String() string {
	s := c.verb + " " + c.resource + " " + c.name
	switch {
	case c.fault == modelFaultLost:
		s += " [applied, response lost]"
	case c.fault != "":
		s += " [fault " + c.fault + "]"
	case c.err != nil:
		s += " -> " + modelShortErr(c.err)
	}
	return s
}

func modelShortErr(err error) string {
	switch {
	case apierrors.IsConflict(err):
		return "Conflict"
	case apierrors.IsNotFound(err):
		return "NotFound"
	case apierrors.IsAlreadyExists(err):
		return "AlreadyExists"
	}
	return err.Error()
}

// modelServer is the simulated API server.
type modelServer struct {
	clock    *testingclock.FakeClock
	rv       int64
	uids     int
	jobs     map[string]*batchv1.Job
	cronJobs map[string]*cronv1.CronJob
	// runs are the CronJobRuns (model_runs_test.go).
	runs map[string]*cronv1.CronJobRun
	// jobLog, cronLog and runLog are every write, in order: the caches
	// replay them.
	jobLog, cronLog, runLog []modelEvent
	faults                  modelFaults
	// calls are the controller's calls since the last resetCalls.
	calls []modelCall
	// unexpected are calls the controller should never make.
	unexpected []string
	// onJobCreated sees every Job the store applied a create for;
	// onJobDeleting every Job the controller is about to delete.
	onJobCreated  func(j *batchv1.Job, lost bool)
	onJobDeleting func(key string)
	// onStatus sees every status the store took, lost responses too.
	onStatus func(key string, cj *cronv1.CronJob)
	// onCronJobRead sees every CronJob the controller read live.
	onCronJobRead func(cj *cronv1.CronJob)
	// missedUnder is, for each missed-run entry (modelMissedKey), the
	// observedGeneration of the status write that first stored it: the
	// spec the controller counted the miss under.
	missedUnder map[string]int64

	kube *k8sfake.Clientset
	cron *fake.Clientset
}

func newModelServer(clk *testingclock.FakeClock, seed int64) *modelServer {
	s := &modelServer{
		clock:       clk,
		jobs:        map[string]*batchv1.Job{},
		missedUnder: map[string]int64{},
		cronJobs:    map[string]*cronv1.CronJob{},
		runs:        map[string]*cronv1.CronJobRun{},
		faults:      modelFaults{seed: seed, calls: map[string]int{}},
		kube:        k8sfake.NewClientset(),
		cron:        fake.NewClientset(),
	}
	s.kube.PrependReactor("*", "*", s.reactKube)
	s.kube.PrependWatchReactor("*", s.refuseWatch)
	s.cron.PrependReactor("*", "*", s.reactCron)
	s.cron.PrependWatchReactor("*", s.refuseWatch)
	return s
}

func modelKey(ns, name string) string { return ns + "/" + name }

func (s *modelServer) now() metav1.Time {
	// The API server stamps whole seconds.
	return metav1.NewTime(s.clock.Now().Truncate(time.Second))
}

func (s *modelServer) nextRV() string {
	s.rv++
	return strconv.FormatInt(s.rv, 10)
}

func (s *modelServer) resetCalls() {
	s.calls = nil
	s.kube.ClearActions()
	s.cron.ClearActions()
}

func (s *modelServer) refuseWatch(a core.Action) (bool, watch.Interface, error) {
	s.unexpected = append(s.unexpected, "watch "+a.GetResource().Resource)
	return true, nil, errors.New("the model serves no watches")
}

func (s *modelServer) logJob(key string, j *batchv1.Job) {
	e := modelEvent{key: key, at: s.clock.Now()}
	if j == nil {
		e.deleted = true
	} else {
		e.job = j.DeepCopy()
	}
	s.jobLog = append(s.jobLog, e)
}

func (s *modelServer) logCronJob(key string, cj *cronv1.CronJob) {
	e := modelEvent{key: key, at: s.clock.Now()}
	if cj == nil {
		e.deleted = true
	} else {
		e.cronJob = cj.DeepCopy()
	}
	s.cronLog = append(s.cronLog, e)
}

func (s *modelServer) reactKube(a core.Action) (bool, runtime.Object, error) {
	if a.GetResource().Resource != "jobs" || a.GetSubresource() != "" {
		return s.refuse(a)
	}
	switch a.GetVerb() {
	case "create":
		if ca, ok := a.(core.CreateAction); ok {
			return s.createJobCall(ca)
		}
	case "get":
		if ga, ok := a.(core.GetAction); ok {
			return s.getJobCall(ga)
		}
	case "delete":
		if da, ok := a.(core.DeleteAction); ok {
			return s.deleteJobCall(da)
		}
	case "patch":
		if pa, ok := a.(core.PatchAction); ok {
			return s.patchJobCall(pa)
		}
	}
	return s.refuse(a)
}

func (s *modelServer) refuse(a core.Action) (bool, runtime.Object, error) {
	what := a.GetVerb() + " " + a.GetResource().Resource
	if sub := a.GetSubresource(); sub != "" {
		what += "/" + sub
	}
	s.unexpected = append(s.unexpected, what)
	return true, nil, apierrors.NewMethodNotSupported(a.GetResource().GroupResource(), a.GetVerb())
}

func (s *modelServer) createJobCall(a core.CreateAction) (bool, runtime.Object, error) {
	j, ok := a.GetObject().(*batchv1.Job)
	if !ok {
		return s.refuse(a)
	}
	j = j.DeepCopy()
	if j.Namespace == "" {
		j.Namespace = a.GetNamespace()
	}
	call := modelCall{verb: "create", resource: "jobs", name: j.Name, manual: j.Annotations[cronv1.InstantiateAnnotation] == "manual"}
	call.fault = s.faults.decide("create", "jobs", j.Name, call.manual, true)
	if call.fault != "" && call.fault != modelFaultLost {
		call.err = modelFaultError(call.fault, "create job "+j.Name)
		s.calls = append(s.calls, call)
		return true, nil, call.err
	}
	if why := modelInvalidJob(j); why != "" {
		// Validation comes before everything but the fault.
		call.fault = ""
		call.err = apierrors.NewInvalid(batchv1.SchemeGroupVersion.WithKind("Job").GroupKind(), j.Name, field.ErrorList{field.Invalid(field.NewPath("metadata"), j.Name, why)})
		s.calls = append(s.calls, call)
		return true, nil, call.err
	}
	key := modelKey(j.Namespace, j.Name)
	if _, exists := s.jobs[key]; exists {
		call.fault = "" // nothing applied, nothing lost
		call.err = apierrors.NewAlreadyExists(batchv1.Resource("jobs"), j.Name)
		s.calls = append(s.calls, call)
		return true, nil, call.err
	}
	stored := s.stampJob(j)
	call.job = stored.DeepCopy()
	if s.onJobCreated != nil {
		s.onJobCreated(stored.DeepCopy(), call.fault == modelFaultLost)
	}
	if call.fault == modelFaultLost {
		call.err = modelFaultError(call.fault, "create job "+j.Name)
		s.calls = append(s.calls, call)
		return true, nil, call.err
	}
	s.calls = append(s.calls, call)
	return true, stored.DeepCopy(), nil
}

// stampJob stores a new Job as the API server would and returns it.
func (s *modelServer) stampJob(j *batchv1.Job) *batchv1.Job {
	s.uids++
	j.UID = types.UID(fmt.Sprintf("job-uid-%d", s.uids))
	j.CreationTimestamp = s.now()
	j.ResourceVersion = s.nextRV()
	j.Generation = 1
	j.DeletionTimestamp = nil
	j.Status = batchv1.JobStatus{}
	key := modelKey(j.Namespace, j.Name)
	s.jobs[key] = j
	s.logJob(key, j)
	return j
}

func (s *modelServer) getJobCall(a core.GetAction) (bool, runtime.Object, error) {
	call := modelCall{verb: "get", resource: "jobs", name: a.GetName()}
	call.fault = s.faults.decide("get", "jobs", a.GetName(), false, false)
	if call.fault != "" {
		call.err = modelFaultError(call.fault, "get job "+a.GetName())
		s.calls = append(s.calls, call)
		return true, nil, call.err
	}
	j, ok := s.jobs[modelKey(a.GetNamespace(), a.GetName())]
	if !ok {
		call.err = apierrors.NewNotFound(batchv1.Resource("jobs"), a.GetName())
		s.calls = append(s.calls, call)
		return true, nil, call.err
	}
	s.calls = append(s.calls, call)
	return true, j.DeepCopy(), nil
}

func (s *modelServer) deleteJobCall(a core.DeleteAction) (bool, runtime.Object, error) {
	name := a.GetName()
	call := modelCall{verb: "delete", resource: "jobs", name: name}
	call.fault = s.faults.decide("delete", "jobs", name, false, true)
	if call.fault != "" && call.fault != modelFaultLost {
		call.err = modelFaultError(call.fault, "delete job "+name)
		s.calls = append(s.calls, call)
		return true, nil, call.err
	}
	key := modelKey(a.GetNamespace(), name)
	j, ok := s.jobs[key]
	if !ok {
		call.fault = ""
		call.err = apierrors.NewNotFound(batchv1.Resource("jobs"), name)
		s.calls = append(s.calls, call)
		return true, nil, call.err
	}
	if p := a.GetDeleteOptions().Preconditions; p != nil && p.UID != nil && *p.UID != j.UID {
		call.fault = ""
		call.err = apierrors.NewConflict(batchv1.Resource("jobs"), name,
			fmt.Errorf("precondition failed: UID in precondition: %s, UID in object meta: %s", *p.UID, j.UID))
		s.calls = append(s.calls, call)
		return true, nil, call.err
	}
	call.job = j.DeepCopy()
	if j.DeletionTimestamp == nil && s.onJobDeleting != nil {
		s.onJobDeleting(key)
	}
	// Background propagation: the Job goes at once (its pods after), or,
	// while finalizers hold it, is marked being deleted.
	s.deleteJob(key)
	if call.fault == modelFaultLost {
		call.err = modelFaultError(call.fault, "delete job "+name)
		s.calls = append(s.calls, call)
		return true, nil, call.err
	}
	s.calls = append(s.calls, call)
	return true, nil, nil
}

func (s *modelServer) reactCron(a core.Action) (bool, runtime.Object, error) {
	if a.GetResource().Resource == "cronjobruns" {
		return s.reactRun(a)
	}
	if a.GetResource().Resource != "cronjobs" {
		return s.refuse(a)
	}
	switch {
	case a.GetVerb() == "update" && a.GetSubresource() == "status":
		return s.updateStatusCall(a.(core.UpdateAction))
	case a.GetVerb() == "get" && a.GetSubresource() == "":
		ga := a.(core.GetAction)
		cj, ok := s.cronJobs[modelKey(ga.GetNamespace(), ga.GetName())]
		call := modelCall{verb: "get", resource: "cronjobs", name: ga.GetName()}
		if ok {
			call.respGen = cj.Generation
		}
		s.calls = append(s.calls, call)
		if !ok {
			return true, nil, apierrors.NewNotFound(cronv1.Resource("cronjobs"), ga.GetName())
		}
		if s.onCronJobRead != nil {
			s.onCronJobRead(cj.DeepCopy())
		}
		return true, cj.DeepCopy(), nil
	case a.GetVerb() == "list":
		s.calls = append(s.calls, modelCall{verb: "list", resource: "cronjobs"})
		list := &cronv1.CronJobList{ListMeta: metav1.ListMeta{ResourceVersion: strconv.FormatInt(s.rv, 10)}}
		for _, key := range slices.Sorted(maps.Keys(s.cronJobs)) {
			list.Items = append(list.Items, *s.cronJobs[key].DeepCopy())
		}
		return true, list, nil
	}
	return s.refuse(a)
}

func (s *modelServer) updateStatusCall(a core.UpdateAction) (bool, runtime.Object, error) {
	sent, ok := a.GetObject().(*cronv1.CronJob)
	if !ok {
		return s.refuse(a)
	}
	call := modelCall{verb: "update", resource: "cronjobs/status", name: sent.Name, gen: sent.Generation}
	call.fault = s.faults.decide("update", "cronjobs/status", sent.Name, false, true)
	if call.fault != "" && call.fault != modelFaultLost {
		call.err = modelFaultError(call.fault, "update status of "+sent.Name)
		s.calls = append(s.calls, call)
		return true, nil, call.err
	}
	key := modelKey(sent.Namespace, sent.Name)
	stored, ok := s.cronJobs[key]
	switch {
	case !ok:
		call.fault = ""
		call.err = apierrors.NewNotFound(cronv1.Resource("cronjobs"), sent.Name)
	case sent.ResourceVersion != stored.ResourceVersion:
		call.fault = ""
		call.err = apierrors.NewConflict(cronv1.Resource("cronjobs"), sent.Name,
			errors.New("the object has been modified; please apply your changes to the latest version and try again"))
	case sent.UID != "" && sent.UID != stored.UID:
		call.fault = ""
		call.err = apierrors.NewConflict(cronv1.Resource("cronjobs"), sent.Name, errors.New("UID mismatch"))
	}
	if call.err != nil {
		s.calls = append(s.calls, call)
		return true, nil, call.err
	}
	updated := stored.DeepCopy()
	updated.Status = modelRoundTripStatus(sent.Status)
	for _, m := range updated.Status.MissedRuns {
		if k := modelMissedKey(key, m); s.missedUnder[k] == 0 {
			s.missedUnder[k] = updated.Status.ObservedGeneration
		}
	}
	updated.ResourceVersion = s.nextRV()
	s.cronJobs[key] = updated
	s.logCronJob(key, updated)
	if s.onStatus != nil {
		s.onStatus(key, updated.DeepCopy())
	}
	call.respGen = updated.Generation
	if call.fault == modelFaultLost {
		call.err = modelFaultError(call.fault, "update status of "+sent.Name)
		s.calls = append(s.calls, call)
		return true, nil, call.err
	}
	s.calls = append(s.calls, call)
	return true, updated.DeepCopy(), nil
}

// modelRoundTripStatus is the status as the API server stores it: through
// JSON, so times keep whole seconds.
func modelRoundTripStatus(st cronv1.CronJobStatus) cronv1.CronJobStatus {
	data, err := json.Marshal(st)
	if err != nil {
		panic(err)
	}
	var out cronv1.CronJobStatus
	if err := json.Unmarshal(data, &out); err != nil {
		panic(err)
	}
	return out
}

// The model's own writes: a user, the Job controller, the garbage collector.

func (s *modelServer) createCronJob(cj *cronv1.CronJob) *cronv1.CronJob {
	cj = cj.DeepCopy()
	modelDefault(&cj.Spec)
	s.uids++
	cj.UID = types.UID(fmt.Sprintf("cronjob-uid-%d", s.uids))
	cj.CreationTimestamp = s.now()
	cj.ResourceVersion = s.nextRV()
	cj.Generation = 1
	key := modelKey(cj.Namespace, cj.Name)
	s.cronJobs[key] = cj
	s.logCronJob(key, cj)
	return cj.DeepCopy()
}

// deleteCronJob removes a CronJob, as the API server does once no
// finalizer holds it (the garbage collector's work on its Jobs is the
// walk's).
func (s *modelServer) deleteCronJob(key string) {
	if _, ok := s.cronJobs[key]; !ok {
		return
	}
	delete(s.cronJobs, key)
	for k := range s.missedUnder {
		if strings.HasPrefix(k, key+"|") {
			delete(s.missedUnder, k)
		}
	}
	s.rv++
	s.logCronJob(key, nil)
}

// updateCronJob applies a user's edit of metadata or spec; an edit of the
// spec bumps the generation.
func (s *modelServer) updateCronJob(key string, edit func(cj *cronv1.CronJob)) *cronv1.CronJob {
	old := s.cronJobs[key]
	cj := old.DeepCopy()
	edit(cj)
	modelDefault(&cj.Spec)
	cj.Status = old.Status
	cj.Generation = old.Generation
	if !equality.Semantic.DeepEqual(old.Spec, cj.Spec) {
		cj.Generation++
	}
	cj.ResourceVersion = s.nextRV()
	s.cronJobs[key] = cj
	s.logCronJob(key, cj)
	return cj.DeepCopy()
}

func (s *modelServer) createForeignJob(j *batchv1.Job) (*batchv1.Job, bool) {
	if _, exists := s.jobs[modelKey(j.Namespace, j.Name)]; exists {
		return nil, false
	}
	return s.stampJob(j.DeepCopy()).DeepCopy(), true
}

// updateJob changes a Job's status or metadata, as the Job controller or a
// user would.
func (s *modelServer) updateJob(key string, edit func(j *batchv1.Job)) {
	j := s.jobs[key].DeepCopy()
	edit(j)
	j.ResourceVersion = s.nextRV()
	s.jobs[key] = j
	s.logJob(key, j)
}

// deleteJob deletes a Job as the API server does: at once without
// finalizers, else it is marked being deleted until the last one goes.
func (s *modelServer) deleteJob(key string) {
	j, ok := s.jobs[key]
	if !ok {
		return
	}
	if len(j.Finalizers) == 0 {
		s.removeJob(key)
		return
	}
	if j.DeletionTimestamp == nil {
		now := s.now()
		s.updateJob(key, func(j *batchv1.Job) { j.DeletionTimestamp = &now })
	}
}

// modelPatchOp is one operation of a JSON patch.
type modelPatchOp struct {
	Op    string `json:"op"`
	Path  string `json:"path"`
	Value any    `json:"value"`
}

// patchJobCall serves the one patch the controller may send: a JSON patch
// that tests a Job's UID and one finalizer's position, then removes it. A
// failed test is a 422, as from the API server; a Job being deleted whose
// last finalizer goes is removed.
func (s *modelServer) patchJobCall(a core.PatchAction) (bool, runtime.Object, error) {
	name := a.GetName()
	call := modelCall{verb: "patch", resource: "jobs", name: name}
	var ops []modelPatchOp
	if a.GetPatchType() != types.JSONPatchType || json.Unmarshal(a.GetPatch(), &ops) != nil {
		return s.refuse(a)
	}
	call.fault = s.faults.decide("patch", "jobs", name, false, true)
	if call.fault != "" && call.fault != modelFaultLost {
		call.err = modelFaultError(call.fault, "patch job "+name)
		s.calls = append(s.calls, call)
		return true, nil, call.err
	}
	key := modelKey(a.GetNamespace(), name)
	j, ok := s.jobs[key]
	if !ok {
		call.fault = ""
		call.err = apierrors.NewNotFound(batchv1.Resource("jobs"), name)
		s.calls = append(s.calls, call)
		return true, nil, call.err
	}
	finalizers := slices.Clone(j.Finalizers)
	failed := func(why string) (bool, runtime.Object, error) {
		call.fault = ""
		call.err = apierrors.NewGenericServerResponse(http.StatusUnprocessableEntity, "patch", batchv1.Resource("jobs"), name, why, 0, false)
		s.calls = append(s.calls, call)
		return true, nil, call.err
	}
	for _, op := range ops {
		var i int
		if _, err := fmt.Sscanf(op.Path, "/metadata/finalizers/%d", &i); err == nil {
			if i < 0 || i >= len(finalizers) {
				return failed("no finalizer at " + op.Path)
			}
		}
		switch {
		case op.Op == "test" && op.Path == "/metadata/uid":
			if op.Value != string(j.UID) {
				return failed("uid differs")
			}
		case op.Op == "test" && strings.HasPrefix(op.Path, "/metadata/finalizers/"):
			if op.Value != finalizers[i] {
				return failed("finalizer differs")
			}
		case op.Op == "remove" && strings.HasPrefix(op.Path, "/metadata/finalizers/"):
			finalizers = slices.Delete(finalizers, i, i+1)
		default:
			return s.refuse(a)
		}
	}
	s.updateJob(key, func(j *batchv1.Job) { j.Finalizers = finalizers })
	if len(finalizers) == 0 && s.jobs[key].DeletionTimestamp != nil {
		s.removeJob(key)
	}
	call.job = j.DeepCopy()
	if call.fault == modelFaultLost {
		call.err = modelFaultError(call.fault, "patch job "+name)
		s.calls = append(s.calls, call)
		return true, nil, call.err
	}
	s.calls = append(s.calls, call)
	if cur, ok := s.jobs[key]; ok {
		return true, cur.DeepCopy(), nil
	}
	return true, j.DeepCopy(), nil
}

func (s *modelServer) removeJob(key string) {
	if _, ok := s.jobs[key]; !ok {
		return
	}
	delete(s.jobs, key)
	s.rv++
	s.logJob(key, nil)
}

// sortedJobKeys lists the stored Jobs in a stable order.
func (s *modelServer) sortedJobKeys() []string {
	keys := make([]string, 0, len(s.jobs))
	for k := range s.jobs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// jobFinished is the condition that ended a Job, or "".
func modelJobFinished(j *batchv1.Job) batchv1.JobConditionType {
	for _, c := range j.Status.Conditions {
		if (c.Type == batchv1.JobComplete || c.Type == batchv1.JobFailed) && c.Status == corev1.ConditionTrue {
			return c.Type
		}
	}
	return ""
}

// modelDefault applies the CRD's defaults, as the API server does on every
// write.
func modelDefault(spec *cronv1.CronJobSpec) {
	if spec.ConcurrencyPolicy == "" {
		spec.ConcurrencyPolicy = cronv1.AllowConcurrent
	}
	if spec.CatchUpPolicy == "" {
		spec.CatchUpPolicy = cronv1.CatchUpLatest
	}
	if spec.CatchUpLimit == nil {
		spec.CatchUpLimit = ptr.To[int32](10)
	}
	if spec.Suspend == nil {
		spec.Suspend = ptr.To(false)
	}
	if spec.SuccessfulJobsHistoryLimit == nil {
		spec.SuccessfulJobsHistoryLimit = ptr.To[int32](3)
	}
	if spec.FailedJobsHistoryLimit == nil {
		spec.FailedJobsHistoryLimit = ptr.To[int32](1)
	}
	if spec.RunHistoryLimit == nil {
		spec.RunHistoryLimit = ptr.To[int32](cronv1.DefaultRunHistoryLimit)
	}
}

// modelMissedKey names one status.missedRuns entry of the CronJob at key.
func modelMissedKey(key string, m cronv1.MissedRuns) string {
	return fmt.Sprintf("%s|%s@%d", key, m.Reason, m.LastTime.Unix())
}

// modelInvalidJob is why the API server refuses a Job's metadata: a name
// or a label value of more than 63 characters.
func modelInvalidJob(j *batchv1.Job) string {
	if len(j.Name) > 63 {
		return fmt.Sprintf("name of %d characters: must be no more than 63", len(j.Name))
	}
	for k, v := range j.Labels {
		if len(v) > 63 {
			return fmt.Sprintf("label %s: value of %d characters: must be no more than 63", k, len(v))
		}
	}
	return ""
}
