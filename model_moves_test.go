package main

// User moves of the walk beyond edits, run-now and Job deletes (model_test.go),
// and the invariants I6-I8 they need (listed in model_oracle_test.go):
//
//   - detachJob: a user removes the controller reference of one of a
//     CronJob's Jobs, to keep it past the history limit. The Job then
//     finishes or runs on, as any other.
//   - recreateCronJob: a user (or GitOps) deletes a CronJob, in the
//     background (its Jobs holding the run-record finalizer linger,
//     Terminating) or with --cascade=orphan (its Jobs stay, detached), and
//     creates it again under the same name, a new UID, its manifest often
//     carrying the run-now annotation it carried before.
//   - stopAfterEdit: a sync in a burst defers its status, a user edits the
//     spec (mostly the starting deadline), and the controller shuts down
//     cleanly, flushing the deferred status.
//
// The informer event handlers the walk otherwise never calls are called for
// these moves' writes when the cache that saw the object before delivers
// them (the Job update of a detach, the CronJob's delete), as the informer
// would: the controller learns of them the way it does in a cluster.

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"

	cronv1 "github.com/cronjob-controller/cronjob-controller/pkg/apis/batch/v1"
	"github.com/cronjob-controller/cronjob-controller/pkg/job"
	"github.com/cronjob-controller/cronjob-controller/pkg/planner"
	"github.com/cronjob-controller/cronjob-controller/pkg/slim"
)

// modelHugeDeadline is the largest startingDeadlineSeconds users write for
// "no deadline": more seconds than a time.Duration holds.
const modelHugeDeadline int64 = 10000000000

// modelLongName is a CronJob name of 52 characters, the most a CronJob
// name may have (its Jobs' names add 11).
var modelLongName = "cj-a-" + strings.Repeat("long", 10) + "-name52"

// modelDetached is a Job a user took from its CronJob.
type modelDetached struct {
	x        *modelCJ // the CronJob that controlled it
	name     string
	uid      types.UID
	rec      *modelJobRec // nil for a Job the walk never saw created
	at       time.Time
	step     int
	orphaned bool // by a --cascade=orphan delete of its CronJob
	// unrecorded says the stored status did not record its run when it
	// was detached: only the Job told of the run.
	unrecorded bool
	// runNowSeq is the request number of a run-now Job (0 for others).
	runNowSeq int64
}

// modelHandlerCall is an event handler call due when a controller's cache
// delivers one write: only the controller that was running when the write
// was made calls it (one started later lists the object as it is).
type modelHandlerCall struct {
	ctl  int
	call func(c *Controller)
	// queues is the key the handler may put in the queue: a sync of it
	// then defers its status behind it.
	queues cache.ObjectName
}

func (w *modelWalk) initMoves() {
	w.detached = map[types.UID]*modelDetached{}
	w.jobHandlers = map[int]modelHandlerCall{}
	w.cronHandlers = map[int]modelHandlerCall{}
	w.retiredJobs = map[types.UID]*modelCJ{}
}

// deliverJobHandler calls the handler due at jobLog position i, if any.
func (w *modelWalk) deliverJobHandler(i int) {
	if h, ok := w.jobHandlers[i]; ok && h.ctl == w.ctl.id {
		h.call(w.ctl.c)
		w.ctl.queued[h.queues] = true
	}
}

func (w *modelWalk) deliverCronHandler(i int) {
	if h, ok := w.cronHandlers[i]; ok && h.ctl == w.ctl.id {
		h.call(w.ctl.c)
		w.ctl.queued[h.queues] = true
	}
}

// detach removes the controller reference of the Job under key, as a user
// or the garbage collector orphaning it would; the handler call follows
// the cache.
func (w *modelWalk) detach(key string, orphaned bool) *modelDetached {
	old := w.srv.jobs[key].DeepCopy()
	ref := job.ControllerOf(old)
	if ref == nil {
		return nil
	}
	x := w.byUID[ref.UID]
	if x == nil {
		return nil
	}
	w.srv.updateJob(key, func(j *batchv1.Job) {
		j.OwnerReferences = slices.DeleteFunc(j.OwnerReferences, func(r metav1.OwnerReference) bool { return r.UID == ref.UID })
	})
	cur := w.srv.jobs[key].DeepCopy()
	if w.ctl != nil {
		w.jobHandlers[len(w.srv.jobLog)-1] = modelHandlerCall{ctl: w.ctl.id, call: func(c *Controller) {
			c.updateJob(slim.NewJob(old), slim.NewJob(cur))
		}, queues: x.key}
	}
	d := &modelDetached{x: x, name: old.Name, uid: old.UID, at: w.now(), step: w.step, orphaned: orphaned}
	d.runNowSeq, _ = strconv.ParseInt(old.Annotations[cronv1.RunNowSeqAnnotation], 10, 64)
	for _, r := range x.jobs {
		if r.uid == old.UID {
			d.rec = r
		}
	}
	d.unrecorded = d.rec != nil && !x.retired && !w.runRecorded(x, d.rec)
	w.detached[old.UID] = d
	return d
}

// detachJob: a user removes the controller reference of one Job of a
// CronJob, to keep it past the history limit.
func (w *modelWalk) detachJob() {
	var keys []string
	for _, key := range w.srv.sortedJobKeys() {
		j := w.srv.jobs[key]
		if ref := job.ControllerOf(j); ref != nil && w.byUID[ref.UID] != nil && !w.byUID[ref.UID].retired {
			keys = append(keys, key)
		}
	}
	if len(keys) == 0 {
		w.logf("  no Job to detach")
		return
	}
	// Mostly a Job still running: the one a detach can make trouble for.
	key := pick(w.rng, keys)
	for range 3 {
		if modelJobFinished(w.srv.jobs[key]) == "" {
			break
		}
		key = pick(w.rng, keys)
	}
	j := w.srv.jobs[key]
	state := "running"
	if f := modelJobFinished(j); f != "" {
		state = string(f)
	}
	if j.DeletionTimestamp != nil {
		state += ", being deleted"
	}
	d := w.detach(key, false)
	w.logf("  user removes the controller reference of Job %s (%s, finalizers %v) from %s: detached", key, state, j.Finalizers, d.x.name)
	if w.rng.Float64() < 0.5 {
		w.syncStep(d.x)
	}
}

// recreateCronJob deletes x and creates it again under its name.
func (w *modelWalk) recreateCronJob(x *modelCJ) {
	// GitOps: the manifest carries a run-now annotation the old CronJob
	// acted on already.
	if w.rng.Float64() < 0.4 && w.srv.cronJobs[x.skey].Annotations[cronv1.RunNowAnnotation] == "" {
		w.runNow(x)
		w.syncStep(x)
	}
	old := w.srv.cronJobs[x.skey].DeepCopy()
	orphan := w.rng.Float64() < 0.5
	how := "in the background"
	if orphan {
		how = "with --cascade=orphan"
	}
	w.logf("  user deletes CronJob %s (uid %s) %s", x.name, x.uid, how)
	// The garbage collector: orphaned Jobs lose their controller
	// reference; else they are deleted, and those holding the run-record
	// finalizer are left Terminating.
	for _, key := range w.srv.sortedJobKeys() {
		j := w.srv.jobs[key]
		if !job.IsControlledBy(j, string(x.uid)) {
			continue
		}
		if orphan {
			w.detach(key, true)
			w.logf("    garbage collector orphans Job %s", key)
			continue
		}
		w.noteRunEnds(key)
		w.srv.deleteJob(key)
		if _, ok := w.srv.jobs[key]; ok {
			w.logf("    garbage collector deletes Job %s: Terminating behind %v", key, w.srv.jobs[key].Finalizers)
		} else {
			w.logf("    garbage collector deletes Job %s", key)
		}
	}
	for _, r := range x.jobs {
		w.retiredJobs[r.uid] = x
	}
	w.srv.deleteCronJob(x.skey)
	if w.ctl != nil {
		w.cronHandlers[len(w.srv.cronLog)-1] = modelHandlerCall{ctl: w.ctl.id, call: func(c *Controller) {
			obj, err := slim.FromCronJob(old.DeepCopy())
			if err == nil {
				c.deleteCronJob(obj)
			}
		}, queues: x.key}
	}
	x.retired = true
	i := slices.Index(w.cjs, x)
	if w.rng.Float64() < 0.3 {
		// A sync of the key while no CronJob has it.
		w.syncGone(x)
	}
	if w.rng.Float64() < 0.5 {
		w.clock.Step(time.Duration(1+w.rng.Intn(30)) * time.Second)
	}
	// The same manifest again, or an edited one.
	spec := old.Spec.DeepCopy()
	if w.rng.Float64() < 0.3 {
		spec.StartingDeadlineSeconds = pick(w.rng, modelDeadlines)
		spec.ConcurrencyPolicy = pick(w.rng, []cronv1.ConcurrencyPolicy{cronv1.AllowConcurrent, cronv1.ForbidConcurrent, cronv1.ReplaceConcurrent})
	}
	spec.JobTemplate.Annotations[modelSpecGenAnnotation] = "1"
	var annotations map[string]string
	value := old.Annotations[cronv1.RunNowAnnotation]
	if value == "" && w.rng.Float64() < 0.3 {
		value = fmt.Sprintf("v%d", w.step)
	}
	if value != "" && w.rng.Float64() < 0.85 {
		annotations = map[string]string{cronv1.RunNowAnnotation: value}
	} else {
		value = ""
	}
	cj := w.srv.createCronJob(&cronv1.CronJob{
		TypeMeta:   old.TypeMeta,
		ObjectMeta: metav1.ObjectMeta{Name: old.Name, Namespace: old.Namespace, Annotations: annotations},
		Spec:       *spec,
	})
	y := &modelCJ{
		name: x.name, key: x.key, skey: x.skey,
		uid: cj.UID, created: cj.CreationTimestamp.Time,
		specs:        map[int64]cronv1.CronJobSpec{1: *cj.Spec.DeepCopy()},
		storeGens:    []modelGenAt{{at: w.now(), gen: 1}},
		completions:  map[int64]bool{},
		countedEarly: map[int64]bool{}, countedThenStarted: map[int64]bool{}, reportedDropped: map[int64]bool{},
		recreated: true,
	}
	w.cjs[i] = y
	w.byUID[y.uid] = y
	// The run-now values are the new CronJob's own.
	w.runNowSets[y.name] = map[string]int{}
	w.runNowLast[y.name] = [2]string{}
	if value != "" {
		w.runNowSets[y.name][value]++
		w.runNowLast[y.name] = [2]string{"", value}
	}
	w.logf("  user creates CronJob %s again (uid %s, run-now=%q): %s", y.name, y.uid, value, modelDescribeSpec(&cj.Spec))
	if w.rng.Float64() < 0.6 {
		w.syncStep(y)
	}
}

// syncGone syncs the key of a CronJob deleted, as a worker would on its
// delete event.
func (w *modelWalk) syncGone(x *modelCJ) {
	if w.rng.Float64() < 0.6 {
		w.catchUp(len(w.srv.jobLog), len(w.srv.cronLog))
	}
	w.srv.resetCalls()
	w.events = nil
	_, err, panicked, blocked := w.callSync(x.key)
	w.logf("  sync %s (gone; %s): %s -> err %v", x.name, w.cacheLag(), modelDescribeCalls(w.srv.calls), err)
	w.afterCalls(nil, "sync of a deleted CronJob")
	w.checkCreatedJobs()
	switch {
	case blocked:
		w.violate("I5.sync-blocks", "syncHandler(%s) did not return within %v", x.name, modelSyncTimeout)
		w.done = true
	case panicked != nil:
		w.violate("I5.panic", "syncHandler(%s) panicked: %v", x.name, panicked)
		w.restart(false)
	}
}

// stopAfterEdit: a burst defers a status, a user edits the spec, the
// controller shuts down cleanly.
func (w *modelWalk) stopAfterEdit(x *modelCJ) {
	w.queueOther()
	if w.rng.Float64() < 0.7 {
		w.runNow(x)
	}
	w.syncStep(x)
	deferred := false
	for _, r := range x.records {
		deferred = deferred || (r.inst == w.ctl.id && r.deferred)
	}
	if deferred || w.rng.Float64() < 0.3 {
		if w.rng.Float64() < 0.7 {
			w.raiseDeadline(x)
		} else {
			w.editSpec(x)
		}
		// The edit reaches the cache before the shutdown, mostly (a
		// flush on a cache without it meets a conflict).
		if w.rng.Float64() < 0.75 {
			w.catchUp(len(w.srv.jobLog), len(w.srv.cronLog))
			w.logf("  informers deliver: %s", w.cacheLag())
		}
	}
	w.restart(true)
	if w.rng.Float64() < 0.5 {
		// The new controller's first sync: what the flush wrote stands.
		w.syncStep(x)
	}
}

// raiseDeadline is the user's edit of startingDeadlineSeconds to a larger
// value, or none.
func (w *modelWalk) raiseDeadline(x *modelCJ) {
	cur := w.storeSpec(x).StartingDeadlineSeconds
	var to *int64
	switch r := w.rng.Float64(); {
	case r < 0.3:
	case r < 0.5:
		to = ptr.To(modelHugeDeadline)
	default:
		to = ptr.To[int64](86400)
		if cur != nil && *cur < 600 {
			to = ptr.To(*cur * int64(10+w.rng.Intn(100)))
		}
	}
	cj := w.srv.updateCronJob(x.skey, func(cj *cronv1.CronJob) {
		cj.Spec.StartingDeadlineSeconds = to
		cj.Spec.JobTemplate.Annotations[modelSpecGenAnnotation] = fmt.Sprint(cj.Generation + 1)
	})
	if cj.Generation == w.lastGen(x) {
		w.logf("  user sets %s startingDeadlineSeconds=%s: no change", x.name, modelDeref(to))
		return
	}
	x.specs[cj.Generation] = *cj.Spec.DeepCopy()
	x.storeGens = append(x.storeGens, modelGenAt{at: w.now(), gen: cj.Generation})
	w.logf("  user edits %s: startingDeadlineSeconds=%s (generation %d)", x.name, modelDeref(to), cj.Generation)
}

// --- the invariants ----------------------------------------------------------

// checkDetachedCalls is I6 on every call a sync or flush made: a Job the
// controller's cache shows detached is never deleted by it, and the
// run-record finalizer of a detached Job is not released while the stored
// status of the CronJob it came from does not record its run.
func (w *modelWalk) checkDetachedCalls() {
	for _, c := range w.srv.calls {
		if c.resource != "jobs" || c.job == nil || (c.err != nil && c.fault != modelFaultLost) {
			continue
		}
		d := w.detached[c.job.UID]
		if d == nil {
			continue
		}
		switch c.verb {
		case "delete":
			// Only a controller whose cache shows the detach can know.
			obj, ok, _ := w.ctl.jobIdx.GetByKey(modelKey(metav1.NamespaceDefault, c.name))
			if !ok || obj.(*slim.Job).UID != d.uid || job.ControllerOf(obj.(*slim.Job)) != nil {
				w.stat("I6 delete of a detached Job the cache does not show detached")
				continue
			}
			w.checked("I6 deletes of detached Jobs")
			w.violate("I6.detached-deleted", "the controller deleted Job %s, which a user detached from %s at step %d (its cache shows it detached)",
				c.name, d.x.name, d.step)
		case "patch":
			if d.rec == nil || d.x.retired {
				continue
			}
			w.checked("I6 releases of detached Jobs")
			if !w.runRecorded(d.x, d.rec) {
				w.violate("I6.detached-released-early", "the controller released the run-record finalizer of Job %s, detached from %s at step %d, while %s's stored status does not record its run",
					c.name, d.x.name, d.step, d.x.name)
			}
		}
	}
}

// runRecorded says whether x's stored status records the run of r.
func (w *modelWalk) runRecorded(x *modelCJ, r *modelJobRec) bool {
	st := w.srv.cronJobs[x.skey].Status
	if r.manual && job.IsRequestName(x.name, r.name) {
		return w.requestRecorded(r)
	}
	if r.manual {
		for v := range w.runNowSets[x.name] {
			if planner.RunNowKey(v) == st.LastRunNow && slices.Contains(w.manualNames(x, v), r.name) {
				return true
			}
		}
		// A later request handled settles this one too: no status from
		// here on can start it again (its request number is covered).
		for _, d := range w.detached {
			if d.rec == r {
				return d.runNowSeq > 0 && st.RunNowCount >= d.runNowSeq
			}
		}
		return false
	}
	return st.LastScheduleTime != nil && !st.LastScheduleTime.Time.Before(r.scheduled)
}

// listsDetached lists the Jobs of status.active a user detached.
func (w *modelWalk) listsDetached(st *cronv1.CronJobStatus) []string {
	var out []string
	for _, r := range st.Active {
		if d := w.detached[r.UID]; d != nil {
			out = append(out, fmt.Sprintf("%s, detached at step %d%s", r.Name, d.step, modelJobStateByName(w, r.Name, r.UID)))
		}
	}
	return out
}

// retiredHolder is the deleted CronJob of the same name whose Job holds
// name, if any.
func (w *modelWalk) retiredHolder(x *modelCJ, name string) (*batchv1.Job, *modelCJ) {
	j, ok := w.srv.jobs[modelKey(metav1.NamespaceDefault, name)]
	if !ok {
		return nil, nil
	}
	if old := w.retiredJobs[j.UID]; old != nil && old != x && old.name == x.name {
		return j, old
	}
	return nil, nil
}

// checkFlush is I3 on a clean shutdown's flush: a deferred status decided
// under an older spec, written as it was, must not count as missed a run
// the spec in the store lets start (the sync after the restart trusts the
// count, and never starts the run).
func (w *modelWalk) checkFlush(before map[string]cronv1.CronJobStatus) {
	now := w.now()
	for _, c := range w.srv.calls {
		if c.resource != "cronjobs/status" || c.err != nil {
			continue
		}
		x := w.cjByName(c.name)
		if x == nil {
			continue
		}
		cj := w.srv.cronJobs[x.skey]
		st := cj.Status
		gen := w.lastGen(x)
		spec := x.specs[gen]
		if st.ObservedGeneration >= cj.Generation || !w.naming(x, gen).valid || ptr.Deref(spec.Suspend, false) {
			continue
		}
		w.checked("I3 flushed statuses decided under an older spec")
		prev := before[x.skey]
		for _, m := range st.MissedRuns {
			if m.Reason != cronv1.MissedDeadlineExceeded {
				continue
			}
			counted := int64(0)
			for _, p := range prev.MissedRuns {
				if p.Reason == m.Reason {
					counted = p.Count
				}
			}
			t := m.LastTime.Time
			if m.Count <= counted || !modelWithin(&spec, t, now) || x.started(t, len(x.jobs)) || w.named(x, gen, t, true) != modelYes {
				continue
			}
			w.violate("I3.flush-stale", "%s: the clean shutdown's flush wrote a status decided under generation %d (the store holds %d: startingDeadlineSeconds %s) that counts the run of %s DeadlineExceeded, which the spec in the store lets start until %s",
				x.name, st.ObservedGeneration, cj.Generation, modelDeref(spec.StartingDeadlineSeconds), modelFmtTime(t), modelDeadlineEnd(&spec, t))
		}
	}
}

func modelDeadlineEnd(spec *cronv1.CronJobSpec, t time.Time) string {
	d := modelDeadline(spec)
	if d < 0 {
		return "any time"
	}
	return modelFmtTime(t.Add(d))
}

// modelDeadlineSeconds is startingDeadlineSeconds as a duration, -1 for
// one a time.Duration cannot hold (no limit in practice: 292 years).
func modelDeadlineSeconds(s int64) time.Duration {
	if s > int64(math.MaxInt64/time.Second) {
		return -1
	}
	return time.Duration(s) * time.Second
}

func modelHuge(spec *cronv1.CronJobSpec) bool {
	return spec.StartingDeadlineSeconds != nil && *spec.StartingDeadlineSeconds > int64(math.MaxInt64/time.Second)
}

// retiredNameHolder describes a Job of a deleted CronJob of x's name that
// lingers, if any.
func (w *modelWalk) retiredNameHolder(x *modelCJ) string {
	for _, key := range w.srv.sortedJobKeys() {
		j := w.srv.jobs[key]
		if old := w.retiredJobs[j.UID]; old != nil && old != x && old.name == x.name {
			return fmt.Sprintf("Job %s of the deleted %s (uid %s) lingers%s", j.Name, old.name, old.uid, modelJobState(j))
		}
	}
	return ""
}

func modelJobState(j *batchv1.Job) string {
	var parts []string
	if f := modelJobFinished(j); f != "" {
		parts = append(parts, string(f))
	} else {
		parts = append(parts, "running")
	}
	if j.DeletionTimestamp != nil {
		parts = append(parts, "Terminating")
	}
	if job.ControllerOf(j) == nil {
		parts = append(parts, "no controller reference")
	}
	if len(j.Finalizers) > 0 {
		parts = append(parts, fmt.Sprintf("finalizers %v", j.Finalizers))
	}
	return " (" + strings.Join(parts, ", ") + ")"
}

func modelJobStateByName(w *modelWalk, name string, uid types.UID) string {
	if j, ok := w.srv.jobs[modelKey(metav1.NamespaceDefault, name)]; ok && j.UID == uid {
		return modelJobState(j)
	}
	return " (gone from the store)"
}

// retiredNamed says whether a deleted CronJob of x's name had a Job named
// name.
func (w *modelWalk) retiredNamed(x *modelCJ, name string) bool {
	for uid, old := range w.retiredJobs {
		if old == x || old.name != x.name {
			continue
		}
		for _, r := range old.jobs {
			if r.uid == uid && r.name == name {
				return true
			}
		}
	}
	return false
}

// deletedDetached names the detached Jobs calls tried to delete.
func (w *modelWalk) deletedDetached(calls []modelCall) string {
	var out []string
	for _, c := range calls {
		if c.verb != "delete" || c.resource != "jobs" {
			continue
		}
		j := c.job
		if j == nil {
			j = w.srv.jobs[modelKey(metav1.NamespaceDefault, c.name)]
		}
		if j != nil && w.detached[j.UID] != nil {
			out = append(out, c.name)
		}
	}
	return strings.Join(out, ", ")
}

// --- daylight-saving instants as Calendar range bounds -----------------------

// modelDSTWall is a wall-clock time (YYYY-MM-DDTHH:MM) in loc that a
// daylight-saving change within two days of t skips or repeats, with the
// instant of that change.
func modelDSTWall(rng interface{ Intn(int) int }, loc *time.Location, t time.Time) (string, time.Time, bool) {
	change := modelNextTransition(loc, t.Add(-48*time.Hour))
	if change.IsZero() || change.Sub(t) > 48*time.Hour {
		return "", time.Time{}, false
	}
	_, before := change.Add(-time.Second).In(loc).Zone()
	_, after := change.In(loc).Zone()
	width := after - before // seconds skipped (> 0) or repeated (< 0)
	if width < 0 {
		width = -width
	}
	// The wall clock at the change, read on the offset before it for a
	// gap (the first skipped time), on the offset after it for a fold
	// (the first repeated time); then a minute into that span.
	off := before
	if after < before {
		off = after
	}
	wall := change.In(time.FixedZone("", off)).Add(time.Duration(rng.Intn(width/60)) * time.Minute)
	return wall.Format("2006-01-02T15:04"), change, true
}

// modelWallInstant reads wall-clock time v (layout l, parsed by Go as at)
// in loc by the rule docs/calendars.md gives for a Calendar's range bounds
// at a daylight-saving change: a time the change skips is the instant of
// the change, a time it repeats its first occurrence for a start and its
// last for an end (last).
func modelWallInstant(v, l string, loc *time.Location, at time.Time, last bool) time.Time {
	var pick time.Time
	found := false
	for _, d := range []time.Duration{-2 * time.Hour, -time.Hour, -30 * time.Minute, 0, 30 * time.Minute, time.Hour, 2 * time.Hour} {
		c := at.Add(d)
		if c.In(loc).Format(l) == v && (!found || c.Before(pick) != last) {
			pick, found = c, true
		}
	}
	if found {
		return pick
	}
	// Skipped: the change is within a few hours of Go's reading.
	if change := modelNextTransition(loc, at.Add(-3*time.Hour)); !change.IsZero() && change.Sub(at) < 3*time.Hour {
		return change
	}
	return at
}

// unrecordedDetachSince says whether a Job of x for a scheduled time after
// t was detached before the stored status recorded its run: the controller
// cannot tell that run started, and counting it missed is the detach's
// doing (a limitation, not a finding of its own).
func (w *modelWalk) unrecordedDetachSince(x *modelCJ, t time.Time) bool {
	for _, d := range w.detached {
		if d.x == x && d.unrecorded && d.rec != nil && !d.rec.manual && d.rec.scheduled.After(t) {
			return true
		}
	}
	return false
}
