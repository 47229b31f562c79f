package main

// CronJobRuns in the model walk (model_test.go): users create CronJobRuns
// (some asking for an env var the CronJob does not allow) and delete them;
// the controller's CronJobRun cache lags the store as its other caches do;
// its CronJobRun status writes and deletes meet faults and lost answers.
// I1 (never twice) covers them as it covers run-now Jobs: a CronJobRun's
// Job has one name, and a second create of that name, its first Job gone,
// is one request started twice (I1.run-now-twice). I11 checks a
// CronJobRun's status never names another Job than its own, and a refused
// one never gets a Job.
//
// I11.run-not-started, the liveness of CronJobRuns (docs/runs.md: one Job
// per CronJobRun, whatever suspend, the concurrency policy, a failure
// pause, maxRuns or the schedule say): after a sync of a CronJob that met
// no fault and began on caches caught up with the store (its CronJobRun
// cache among them), every CronJobRun naming that CronJob that the store
// holds has had its Job made, by it or by an earlier CronJob under its
// name, unless it asks for an env the CronJob does not allow (refused for
// good). As I3 asks of due runs; and at the end of every walk the faults
// stop, the caches catch up and every CronJob syncs (quiet), so every
// CronJobRun still there is judged once the faults have stopped. Made more
// than once is I11.run-started-twice.

import (
	"errors"
	"fmt"
	"hash/fnv"
	"maps"
	"slices"
	"strconv"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	core "k8s.io/client-go/testing"

	cronv1 "github.com/cronjob-controller/cronjob-controller/pkg/apis/batch/v1"
	"github.com/cronjob-controller/cronjob-controller/pkg/job"
	"github.com/cronjob-controller/cronjob-controller/pkg/planner"
)

// modelAllowedEnv is the env var a CronJob of the walk may allow.
const modelAllowedEnv = "MODEL_INPUT"

func (s *modelServer) logRun(key string, r *cronv1.CronJobRun) {
	e := modelEvent{key: key, at: s.clock.Now()}
	if r == nil {
		e.deleted = true
	} else {
		e.run = r.DeepCopy()
	}
	s.runLog = append(s.runLog, e)
}

// createRun stores a user's CronJobRun.
func (s *modelServer) createRun(r *cronv1.CronJobRun) *cronv1.CronJobRun {
	r = r.DeepCopy()
	s.uids++
	r.UID = types.UID(fmt.Sprintf("cronjobrun-uid-%d", s.uids))
	r.CreationTimestamp = s.now()
	r.ResourceVersion = s.nextRV()
	r.Generation = 1
	key := modelKey(r.Namespace, r.Name)
	s.runs[key] = r
	s.logRun(key, r)
	return r.DeepCopy()
}

func (s *modelServer) deleteRun(key string) {
	if _, ok := s.runs[key]; !ok {
		return
	}
	delete(s.runs, key)
	s.rv++
	s.logRun(key, nil)
}

// reactRun serves the controller's CronJobRun calls: status writes (which
// refuse a stale resourceVersion) and deletes (which honour a UID
// precondition). It lists and watches nothing: the walk feeds the cache.
func (s *modelServer) reactRun(a core.Action) (bool, runtime.Object, error) {
	switch {
	case a.GetVerb() == "update" && a.GetSubresource() == "status":
		sent, ok := a.(core.UpdateAction).GetObject().(*cronv1.CronJobRun)
		if !ok {
			return s.refuse(a)
		}
		call := modelCall{verb: "update", resource: "cronjobruns/status", name: sent.Name}
		call.fault = s.faults.decide("update", "cronjobruns/status", sent.Name, false, true)
		if call.fault != "" && call.fault != modelFaultLost {
			call.err = modelFaultError(call.fault, "update status of CronJobRun "+sent.Name)
			s.calls = append(s.calls, call)
			return true, nil, call.err
		}
		key := modelKey(sent.Namespace, sent.Name)
		stored, ok := s.runs[key]
		switch {
		case !ok:
			call.fault, call.err = "", apierrors.NewNotFound(cronv1.Resource("cronjobruns"), sent.Name)
		case sent.ResourceVersion != stored.ResourceVersion || sent.UID != stored.UID:
			call.fault, call.err = "", apierrors.NewConflict(cronv1.Resource("cronjobruns"), sent.Name, errors.New("the object has been modified"))
		}
		if call.err != nil {
			s.calls = append(s.calls, call)
			return true, nil, call.err
		}
		updated := stored.DeepCopy()
		updated.Status = *sent.Status.DeepCopy()
		updated.ResourceVersion = s.nextRV()
		s.runs[key] = updated
		s.logRun(key, updated)
		if call.fault == modelFaultLost {
			call.err = modelFaultError(call.fault, "update status of CronJobRun "+sent.Name)
			s.calls = append(s.calls, call)
			return true, nil, call.err
		}
		s.calls = append(s.calls, call)
		return true, updated.DeepCopy(), nil
	case a.GetVerb() == "get":
		ga := a.(core.GetAction)
		call := modelCall{verb: "get", resource: "cronjobruns", name: ga.GetName()}
		call.fault = s.faults.decide("get", "cronjobruns", ga.GetName(), false, false)
		if call.fault != "" {
			call.err = modelFaultError(call.fault, "get CronJobRun "+ga.GetName())
			s.calls = append(s.calls, call)
			return true, nil, call.err
		}
		s.calls = append(s.calls, call)
		r, ok := s.runs[modelKey(ga.GetNamespace(), ga.GetName())]
		if !ok {
			return true, nil, apierrors.NewNotFound(cronv1.Resource("cronjobruns"), ga.GetName())
		}
		return true, r.DeepCopy(), nil
	case a.GetVerb() == "list":
		// Before releasing a CronJobRun's Job its cache lacks (heldByRun).
		ns := a.GetNamespace()
		call := modelCall{verb: "list", resource: "cronjobruns"}
		call.fault = s.faults.decide("list", "cronjobruns", ns, false, false)
		if call.fault != "" {
			call.err = modelFaultError(call.fault, "list CronJobRuns")
			s.calls = append(s.calls, call)
			return true, nil, call.err
		}
		s.calls = append(s.calls, call)
		list := &cronv1.CronJobRunList{ListMeta: metav1.ListMeta{ResourceVersion: strconv.FormatInt(s.rv, 10)}}
		for _, key := range slices.Sorted(maps.Keys(s.runs)) {
			if r := s.runs[key]; ns == "" || r.Namespace == ns {
				list.Items = append(list.Items, *r.DeepCopy())
			}
		}
		return true, list, nil
	case a.GetVerb() == "delete":
		da := a.(core.DeleteAction)
		call := modelCall{verb: "delete", resource: "cronjobruns", name: da.GetName()}
		call.fault = s.faults.decide("delete", "cronjobruns", da.GetName(), false, true)
		if call.fault != "" && call.fault != modelFaultLost {
			call.err = modelFaultError(call.fault, "delete CronJobRun "+da.GetName())
			s.calls = append(s.calls, call)
			return true, nil, call.err
		}
		key := modelKey(da.GetNamespace(), da.GetName())
		stored, ok := s.runs[key]
		switch {
		case !ok:
			call.fault, call.err = "", apierrors.NewNotFound(cronv1.Resource("cronjobruns"), da.GetName())
		case da.GetDeleteOptions().Preconditions != nil && da.GetDeleteOptions().Preconditions.UID != nil && *da.GetDeleteOptions().Preconditions.UID != stored.UID:
			call.fault, call.err = "", apierrors.NewConflict(cronv1.Resource("cronjobruns"), da.GetName(), errors.New("UID precondition"))
		default:
			s.deleteRun(key)
			if call.fault == modelFaultLost {
				call.err = modelFaultError(call.fault, "delete CronJobRun "+da.GetName())
			}
		}
		s.calls = append(s.calls, call)
		return true, nil, call.err
	}
	return s.refuse(a)
}

// catchUpRuns lets the CronJobRun cache see the store's writes up to to.
func (w *modelWalk) catchUpRuns(to int) {
	ctl := w.ctl
	for ; ctl.runCursor < to; ctl.runCursor++ {
		e := w.srv.runLog[ctl.runCursor]
		if e.deleted {
			if obj, ok, _ := ctl.runIdx.GetByKey(e.key); ok {
				_ = ctl.runIdx.Delete(obj)
			}
			continue
		}
		if err := ctl.runIdx.Update(e.run.DeepCopy()); err != nil {
			w.t.Fatal(err)
		}
	}
}

// runMove is a user's CronJobRun move on x: create one (sometimes with an
// env var the CronJob may not allow, sometimes with a TTL), or delete one.
func (w *modelWalk) runMove(x *modelCJ) {
	if keys := slices.Sorted(maps.Keys(w.srv.runs)); len(keys) > 0 && w.rng.Float64() < 0.2 {
		key := pick(w.rng, keys)
		w.srv.deleteRun(key)
		w.logf("  user deletes CronJobRun %s", key)
		return
	}
	w.runs++
	r := &cronv1.CronJobRun{
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-run-%d", x.name, w.runs), Namespace: x.key.Namespace},
		Spec:       cronv1.CronJobRunSpec{CronJobName: x.name},
	}
	if w.rng.Float64() < 0.3 {
		r.Spec.Env = []cronv1.RunEnvVar{{Name: modelAllowedEnv, Value: "v"}}
	}
	if w.rng.Float64() < 0.3 {
		r.Spec.TTLSecondsAfterFinished = pick(w.rng, []*int32{new(int32), ptrInt32(60), ptrInt32(3600)})
	}
	stored := w.srv.createRun(r)
	w.logf("  user creates CronJobRun %s (uid %s) for %s, env %v; its Job: %s", stored.Name, stored.UID, x.name, r.Spec.Env, job.RequestName(x.name, stored.UID))
}

func ptrInt32(v int32) *int32 { return &v }

// modelAllows says whether the CronJob name allows modelAllowedEnv: fixed
// per name, so a CronJob created again under it allows the same.
func modelAllows(name string) bool {
	h := fnv.New32a()
	h.Write([]byte(name))
	return h.Sum32()%2 == 0
}

// checkRuns is I11: a CronJobRun's Job is created once, across every
// CronJob ever under its CronJob's name; its stored status names no Job but
// its own; and one refused for good has no Job.
func (w *modelWalk) checkRuns() {
	made := map[string]int{}
	for _, x := range w.byUID {
		for _, rec := range x.jobs {
			if rec.manual && job.IsRequestName(x.name, rec.name) {
				made[rec.name]++
			}
		}
	}
	for name, n := range made {
		w.checked("I11 CronJobRun Jobs, checked")
		if n > 1 && !w.reportedTwice[name] {
			if w.reportedTwice == nil {
				w.reportedTwice = map[string]bool{}
			}
			w.reportedTwice[name] = true
			w.violate("I11.run-started-twice", "Job %s of a CronJobRun created %d times", name, n)
		}
	}
	for key, r := range w.srv.runs {
		name := job.RequestName(r.Spec.CronJobName, r.UID)
		if r.Status.JobName != "" && r.Status.JobName != name {
			w.violate("I11.run-names-another-job", "CronJobRun %s names Job %s, its own is %s", key, r.Status.JobName, name)
		}
		c := meta.FindStatusCondition(r.Status.Conditions, cronv1.ConditionRunStarted)
		if c == nil || c.Status != metav1.ConditionFalse || c.Reason != cronv1.ReasonRunOverrideNotAllowed {
			continue
		}
		w.checked("I11 refused CronJobRuns, checked")
		if j, ok := w.srv.jobs[modelKey(r.Namespace, name)]; ok {
			w.violate("I11.refused-run-started", "CronJobRun %s was refused (%s) but Job %s exists (uid %s)", key, c.Message, name, j.UID)
		}
	}
}

// checkRunsStarted is I11.run-not-started for the CronJobRuns naming x,
// after a settled sync of x that met no fault.
func (w *modelWalk) checkRunsStarted(x *modelCJ) {
	cj, ok := w.srv.cronJobs[x.skey]
	if !ok || cj.UID != x.uid {
		return
	}
	for _, key := range slices.Sorted(maps.Keys(w.srv.runs)) {
		r := w.srv.runs[key]
		if r.Namespace != x.key.Namespace || r.Spec.CronJobName != x.name {
			continue
		}
		if bad := planner.DisallowedEnv(cj, r.Spec.Env); len(bad) > 0 {
			w.stat("I11 CronJobRuns asking for an env not allowed, not required to start")
			continue
		}
		name := job.RequestName(x.name, r.UID)
		w.checked("I11 CronJobRuns required to have started")
		if w.runJobsMade[name] > 0 {
			continue
		}
		state := "no Started condition"
		if c := meta.FindStatusCondition(r.Status.Conditions, cronv1.ConditionRunStarted); c != nil {
			state = fmt.Sprintf("Started %s/%s: %s", c.Status, c.Reason, c.Message)
		}
		w.violate("I11.run-not-started", "CronJobRun %s (uid %s, created %s, env %v) of %s has no Job %s after a settled sync with no fault (%s)",
			key, r.UID, modelFmtTime(r.CreationTimestamp.Time), r.Spec.Env, x.name, name, state)
	}
}

// quiet ends a walk as its faults stop: the caches catch up and every
// CronJob syncs (again at once when it asks to), so every CronJobRun still
// in the store is judged (checkRunsStarted). The lines go to the last
// step, so a replay of that many steps shows them.
func (w *modelWalk) quiet() {
	if w.done || w.ctl == nil {
		return
	}
	w.srv.faults.reset(w.step)
	w.logf("  end of the walk: the faults stop, the caches catch up, every CronJob syncs")
	if len(w.phantoms()) > 0 {
		// Past the window in which the controller trusts its own writes.
		w.clock.Step(modelOwnWritesWindow)
		w.logf("  clock +%v: %s", modelOwnWritesWindow, modelFmtTime(w.now()))
	}
	for _, x := range slices.Clone(w.cjs) {
		for burst := 0; burst < 30 && !w.done; burst++ {
			w.catchUp(len(w.srv.jobLog), len(w.srv.cronLog))
			if d := w.sync(x, false, burst > 0); d <= 0 || d > time.Second {
				break
			}
		}
	}
	w.checkRuns()
}

// requestRecorded says whether the run of r, a CronJobRun's Job, is
// recorded where it must be: the CronJobRun's stored status names it, with
// its outcome once it has finished, or the CronJobRun is gone (nothing can
// start it again).
func (w *modelWalk) requestRecorded(r *modelJobRec) bool {
	for _, run := range w.srv.runs {
		if job.RequestName(run.Spec.CronJobName, run.UID) != r.name {
			continue
		}
		if run.Status.JobName != r.name {
			return false
		}
		j, ok := w.srv.jobs[modelKey(run.Namespace, r.name)]
		return !ok || modelJobFinished(j) == "" || run.Status.Outcome == cronv1.OutcomeSucceeded || run.Status.Outcome == cronv1.OutcomeFailed
	}
	return true
}
