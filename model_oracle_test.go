package main

// The oracle of the model-based test: invariants I1-I11, checked after every
// sync of the walk (model_test.go); I11, maxRuns, in model_maxruns_test.go.
//
// Views. The oracle knows exactly which spec generation a Job was made from
// (the walk stamps the generation on the job template) and, for every sync,
// which generations the controller may have read: the one its cache held, up
// to the newest it wrote itself; a status write or a created Job shows which.
// A sync's view is kept if it is this process's own and hit no fault, or if
// its status reached the store; otherwise the view before it stays possible
// too. Before the first sync, every generation the store had by then is.
//
// Runs. A time t is named by a generation if its schedule, read in its zone
// (pkg/schedule's Next, with its daylight-saving rules; an invalid schedule
// or zone names nothing; @every names a grid from the creation, or, where
// edits make the anchor uncertain, from any time the controller could have
// used), and t is after the CronJob's creation. t is owed (a run) if every
// view from the one in force at t to the last names it; not a run if some
// view certainly does not (the rule for edits: when the controller first
// sees an edit after t fell due, t is owed only if both sides name it); and
// unknown otherwise, or when a view starts at t exactly and the two readings
// differ. Unknown is never judged.
//
// I1 never twice: no two Jobs of one CronJob are ever created in the store
// for one scheduled time (scheduled-at annotation) or one run-now value
// (its Job name), counting Jobs deleted since.
//
// I2 no ghost: a scheduled Job has a scheduled-at annotation matching its
// name; its time t is after the creation, not after now, named by the
// generation it was made from, which is not suspended; and t is not "not a
// run".
//
// I3 not dropped, after a sync on caught-up caches with no fault (or faults
// only on a run-now Job's create or a finished Job's delete): with the
// schedule valid and not suspended, the newest owed times in (max(creation,
// last run before the sync), now], one (catchUpPolicy Latest, None) or up to
// catchUpLimit (All), within the deadline (startingDeadlineSeconds, at most
// 60 s under None), each have a Job of the CronJob, unless a foreign Job
// holds the name, or under Forbid an unfinished Job not being deleted
// exists; under Replace with All only the newest, once the sync stops asking
// to be called back within a second. The run-now value, with the schedule
// valid, has its Job. Missed runs: between two such syncs with the same
// generation, not suspended, whose statuses reached the store, the sum of
// status.missedRuns grows by the number of owed times that could still start
// at the first (or were not due) and can no longer start at the second and
// never started (can start: after the last run, within the deadline, among
// the newest one or catchUpLimit owed times due), ±1 per run whose name a
// foreign Job took, at least 100 when more than 100; a run counted (by a
// reason other than Superseded, whose lastTime is the run considered) while
// it can still start, or that starts after being counted, is a violation of
// its own.
//
// I4 status agrees, after such a sync whose status is in the store: active
// is exactly the Jobs the CronJob controls that have not finished and are not
// being deleted; activeCount its length; lastScheduleTime is at least the
// newest scheduled time among its Jobs still in the store, the time of a run
// that was created, and never earlier than the store held before;
// lastSuccessfulTime is at least the newest completion among its Jobs in the
// store and one of its Jobs' completions; finished Jobs not being deleted are
// within the history limits, and none deleted by the sync started after one
// kept; under Replace a started run leaves no earlier Job running. After any
// fault-free sync that writes a status, however stale its caches, active
// does not list a Job this process deleted itself within the last minute,
// nor leave out one it created within it that still runs.
//
// Calendars (model_calendar_test.go): a scheduled Job for a time that every
// Calendar version the controller could have decided it under excludes or
// holds breaks I2 (excluded-run-started, held-run-started); I3 requires no
// Job for a time some such version holds, compares the missed-run window
// around it with a tolerance of one per such time, wants a count under
// Excluded or CalendarUnresolved backed by such a version, and the newest
// due time that every such version holds counted.
//
// I6 detached Jobs (model_moves_test.go): a Job a user took from its CronJob
// (its controller reference removed by hand, or by a --cascade=orphan
// delete) is, after a settled sync whose status is in the store, never in
// status.active (I6.detached-active); never deleted by a controller whose
// cache shows it detached, e.g. by concurrencyPolicy Replace
// (I6.detached-deleted; a due run held back by that delete failing is
// I6.detached-deleted/run-not-started); never holds back a run under Forbid
// once the CronJob's own Jobs are done (I6.forbid-blocked: a due run not
// started while status.active lists a detached Job); and keeps the
// run-record finalizer while the stored status of its CronJob does not
// record its run (I6.detached-released-early: a crash and a TTL delete
// after the release could start the run again). A run the status did not
// record when its Job was detached is still known started (the Job holds
// the run-record finalizer and names its CronJob): a missed-run count
// around it is filed under /after-unrecorded-detach.
//
// I7 a CronJob deleted and created again under its name (a new UID), its
// old Jobs lingering (Terminating behind the finalizer, or orphaned), starts
// each of its own run-now requests: one whose name a Job of the deleted
// CronJob holds (or held when it was refused as NameTaken) is
// I7.recreated-runnow; a due scheduled run not started while such a Job
// lingers is I7.recreated-run-not-started.
//
// I3.flush-stale: a clean shutdown's flush (flushDeferred) writes no status
// decided under a spec older than the store's that counts as
// DeadlineExceeded a run the spec in the store still lets start (a sync
// would decide it again, see planner.StaleDecision; the written count
// settles the run, and the restarted controller never starts it).
//
// I8 inputs at their bounds: startingDeadlineSeconds 10000000000 (more than
// a time.Duration holds, meant as no deadline) is no deadline: a due run
// not started under it is I8.huge-deadline-run-not-started, and I3's
// missed-run findings under it are I8.huge-deadline/<category>. A CronJob
// name of 52 characters (the most) makes valid Job names (the walk's API
// server refuses names and label values over 63 characters, so a refusal
// shows as I3). A Backfill name over 63 characters, which its Jobs' label
// cannot hold, must still fill its range (I8.backfill-long-name,
// TestBackfillModelWalk seeds 21-24). Calendar range bounds at a
// daylight-saving change are read by docs/calendars.md's rule (a skipped
// wall time is the instant of the change, a repeated one its first
// occurrence for a start and its last for an end).
//
// I9 spec.failurePolicy (model_failures_test.go; the walk fails each
// CronJob's Jobs with a probability it changes now and then, and sets,
// edits and removes the policy and the resume annotation):
// I9.paused-start: no scheduled Job is created while the stored status says
// paused, unless it is the opening's trial (its run at or after resumeAt,
// computed afresh from pausedAt, pauses and the policy the Job was made
// under, and no earlier trial of the same opening still in the store under
// the CronJob) or the sync that made it ended the pause (the next status
// written is no longer paused since the same time, or took a new resume
// value); /stale-cache when the sync began on caches behind the store,
// /decision-not-kept when the status judged is a later sync's (the
// creating sync's was deferred and then decided again from the stored
// status, e.g. after a spec edit).
// I9.trial-not-started and I9.paused-dropped: after a settled fault-free
// sync whose written status says paused, a due run I3 requires (within the
// deadline and catch-up limit, no Calendar hold, Forbid not waiting) and
// not started is the trial if its time is at or after resumeAt and no
// trial runs (it must have started, unless a run before it in the sync
// took the trial's place and was refused: then it counts under Paused, and
// the next run due is the trial), else held: missedRuns grows by at
// least the runs so held and counts up to the newest of them (a count
// under Paused is final, so I3's missed-counted-while-startable skips it,
// and I3's missed-run windows touching a pause are left to I9).
// I9.paused-overcount: after a clean sync that started from the stored
// status, missedRuns under Paused grew by at most the times due since the
// last settled one (the last run, or the newest miss counted), unless the
// schedule was edited since.
// I9.streak: after a clean sync (settled, no fault, status final) that
// started from the stored status (the controller's last sync of the
// CronJob was clean too, or it is a new process), the written count is
// the stored one plus R1-R3 over the runs (the CronJob's own Jobs, not
// adopted, not detached) the stored status listed active and that had
// finished as the sync began, in the order they finished (the Failed
// condition's transition or the completion time), after a new resume value
// zeroed it (a streak started afresh takes the value there as handled); not
// compared when some other
// finish not seen before could have been counted (the oracle cannot
// place it). /not-paused: a count at pauseAfter with no pause;
// /kept-without-policy: failureStreak or the Paused condition kept
// without a policy. I9.resume-at: a paused status's resumeAt is R6's
// under the spec generation it observed. A run whose outcome the stored run
// history holds already is not counted again; a run the history's bound
// may leave uncounted (absent from it and no newer than its oldest entry,
// or more such runs than it has room for) makes the count not compared.
//
// I10 the run history (status.recentRuns, model_failures_test.go), on every
// status the store takes: at most spec.runHistoryLimit entries, one per
// Job, newest first (I10.shape); each names a Job the store made for the
// CronJob (I10.ghost); an outcome once entered is never changed while its
// entry is kept (I10.outcome-rewritten); and it is the Job's own, while the
// store holds the Job (I10.outcome-wrong). Walks that set a failurePolicy
// give the CronJob a history of pauseAfter+1 entries, so entries are
// dropped and the bound is met.
//
// I5: syncHandler never panics nor blocks (30 s), returns an error only when
// a fault was injected or a status write met a conflict on caches behind the
// store, makes only the calls a controller needs (no list, watch, update of a
// Job), and no status write fails but for an injected fault or a conflict.

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	cronv1 "github.com/cronjob-controller/cronjob-controller/pkg/apis/batch/v1"
	"github.com/cronjob-controller/cronjob-controller/pkg/job"
	"github.com/cronjob-controller/cronjob-controller/pkg/planner"
	"github.com/cronjob-controller/cronjob-controller/pkg/schedule"
)

// modelTri is yes, no or unknown.
type modelTri int

const (
	modelNo modelTri = iota
	modelYes
	modelUnknown
)

// modelNaming is a spec's schedule and zone, parsed: which times it names.
type modelNaming struct {
	valid bool
	every time.Duration // @every schedules: a grid from an anchor
	sched *schedule.Schedule
	text  string
}

// naming parses the schedule of x's spec generation gen. An invalid schedule
// or zone names no time.
func (w *modelWalk) naming(x *modelCJ, gen int64) *modelNaming {
	spec, ok := x.specs[gen]
	if !ok {
		return &modelNaming{}
	}
	key := modelScheduleKey(spec) + "|" + ptr.Deref(spec.TimeZone, "<nil>") + "|" + modelWindowKey(spec) + "|" + x.skey
	n, ok := w.namings[key]
	if ok {
		return n
	}
	n = &modelNaming{text: fmt.Sprintf("%q in %s", modelScheduleKey(spec), ptr.Deref(spec.TimeZone, "<local>"))}
	// spec.schedule or spec.schedules, as the controller reads them; the
	// active window bounds the times named.
	cj := &cronv1.CronJob{Spec: spec}
	cj.Namespace, cj.Name, _ = strings.Cut(x.skey, "/")
	if resolved, s, err := planner.ResolveSchedule(cj); err == nil {
		n.valid, n.sched = true, s
		if spec.NotBefore != nil || spec.NotAfter != nil {
			n.sched = s.Within(modelTimeOf(spec.NotBefore), modelTimeOf(spec.NotAfter))
			n.text += " within " + modelWindowKey(spec)
		}
		if rest, ok := strings.CutPrefix(strings.TrimSpace(resolved), "@every "); ok {
			n.every, _ = time.ParseDuration(strings.TrimSpace(rest))
		}
	}
	w.namings[key] = n
	return n
}

// scheduleEdited says whether x's schedule or zone text ever changed: an
// @every grid is then anchored where the controller saw the change, which
// the oracle knows only approximately.
func (w *modelWalk) scheduleEdited(x *modelCJ) bool {
	first := x.specs[1]
	for _, s := range x.specs {
		if modelScheduleKey(s) != modelScheduleKey(first) || ptr.Deref(s.TimeZone, "") != ptr.Deref(first.TimeZone, "") {
			return true
		}
	}
	return false
}

// named says whether generation gen of x's spec names t. With exact, an
// @every grid must be the one from creation (else unknown); without, any
// anchor the controller could have used will do.
func (w *modelWalk) named(x *modelCJ, gen int64, t time.Time, exact bool) modelTri {
	n := w.naming(x, gen)
	if !n.valid {
		return modelNo
	}
	if n.every == 0 {
		k := modelNamedKey{n, t.Unix()}
		r, ok := w.namedCache[k]
		if !ok {
			r = modelBool(n.sched.Next(t.Add(-time.Second)).Equal(t))
			w.namedCache[k] = r
		}
		return r
	}
	if n.every > 0 {
		if !n.sched.InWindow(t) {
			// The grid counts from an anchor, but the window bounds it.
			return modelNo
		}
		if exact {
			if w.scheduleEdited(x) {
				return modelUnknown
			}
			return modelBool(t.After(x.created) && t.Sub(x.created)%n.every == 0)
		}
		anchors := []time.Time{x.created}
		for _, r := range x.records {
			anchors = append(anchors, r.at.Truncate(time.Second))
		}
		for _, j := range x.jobs {
			if !j.scheduled.IsZero() {
				anchors = append(anchors, j.scheduled)
			}
		}
		// The controller counts a grid from the last instant settled, and a
		// run counted as missed settles it too (all but ScheduleChanged),
		// in any status stored, not only the latest.
		if x.fail != nil {
			for at := range x.fail.settled {
				anchors = append(anchors, time.Unix(at, 0))
			}
		}
		if cj, ok := w.srv.cronJobs[x.skey]; ok {
			for _, m := range cj.Status.MissedRuns {
				if m.Reason != cronv1.MissedScheduleChanged {
					anchors = append(anchors, m.LastTime.Time)
				}
			}
		}
		for _, a := range anchors {
			if t.After(a) && t.Sub(a)%n.every == 0 {
				return modelYes
			}
		}
		return modelNo
	}
	return modelBool(n.sched.Next(t.Add(-time.Second)).Equal(t))
}

type modelNamedKey struct {
	n *modelNaming
	t int64
}

func modelBool(b bool) modelTri {
	if b {
		return modelYes
	}
	return modelNo
}

// enumerate lists the times generation gen names in (from, to], oldest
// first; false when it cannot (too many, or an @every grid it does not
// know).
func (w *modelWalk) enumerate(x *modelCJ, gen int64, from, to time.Time, limit int, exact bool) ([]time.Time, bool) {
	n := w.naming(x, gen)
	if !n.valid {
		return nil, true
	}
	var out []time.Time
	if n.every > 0 {
		if !exact || w.scheduleEdited(x) {
			return nil, false
		}
		k := from.Sub(x.created)/n.every + 1
		for t := x.created.Add(k * n.every); !t.After(to); t = t.Add(n.every) {
			if !n.sched.InWindow(t) {
				continue
			}
			if out = append(out, t); len(out) > limit {
				return nil, false
			}
		}
		return out, true
	}
	for t := n.sched.Next(from); !t.IsZero() && !t.After(to); t = n.sched.Next(t) {
		if out = append(out, t); len(out) > limit {
			return nil, false
		}
	}
	return out, true
}

// nextNamed is the first time x's current schedule names after t, or zero.
func (w *modelWalk) nextNamed(x *modelCJ, t time.Time) time.Time {
	gen := w.lastGen(x)
	n := w.naming(x, gen)
	if !n.valid {
		return time.Time{}
	}
	if n.every > 0 {
		k := t.Sub(x.created)/n.every + 1
		next := x.created.Add(k * n.every)
		for !next.IsZero() && !n.sched.InWindow(next) {
			if n.sched.Ended(next) {
				return time.Time{}
			}
			// Before the window: its first grid point in it.
			next = n.sched.Next(next)
		}
		return next
	}
	return n.sched.Next(t)
}

// modelView is the set of spec generations that may have been the
// controller's view of x from a sync on.
type modelView struct {
	at   time.Time
	gens []int64
}

// views are x's views, oldest first, as judged by controller inst: a sync
// of its own or one whose status reached the store keeps what it read; one
// that hit a fault, or an earlier process's whose status never reached the
// store, may have been forgotten, so the view before it stays possible. The
// first view, from creation to the first sync whose view is kept, is every
// generation up to the one that sync read.
func (w *modelWalk) views(x *modelCJ, inst int) []modelView {
	if len(x.records) == 0 {
		return nil
	}
	// Until the first sync whose view is kept, the controller's view is any
	// generation up to what that sync read: what it saw before, it may have
	// forgotten.
	var first int64
	for _, g := range x.storeGens {
		if !g.at.After(x.records[0].at) {
			first = g.gen
		}
	}
	for _, r := range x.records {
		first = max(first, r.hi, r.revealed)
		if !r.faulted && (r.inst == inst || r.wroteOK) {
			break
		}
	}
	var gens []int64
	for g := int64(1); g <= first; g++ {
		gens = append(gens, g)
	}
	out := []modelView{{at: x.created, gens: gens}}
	for _, r := range x.records {
		var read []int64
		if r.revealed != 0 {
			read = []int64{r.revealed}
		} else {
			for g := r.lo; g <= r.hi; g++ {
				read = append(read, g)
			}
		}
		if r.faulted || (r.inst != inst && !r.wroteOK) {
			read = modelUnion(read, out[len(out)-1].gens)
		}
		if slices.Equal(read, out[len(out)-1].gens) {
			continue // the same view goes on
		}
		out = append(out, modelView{at: r.at, gens: read})
	}
	return out
}

func modelUnion(a, b []int64) []int64 {
	out := slices.Clone(a)
	for _, g := range b {
		if !slices.Contains(out, g) {
			out = append(out, g)
		}
	}
	slices.Sort(out)
	return out
}

// owed says whether t is a run of x: every view from the one in force at t
// to the last names it (yes), some view certainly does not (no), or the
// oracle cannot tell. A view that starts at t exactly is judged both ways.
func (w *modelWalk) owed(x *modelCJ, views []modelView, t time.Time, exact bool) modelTri {
	if len(views) == 0 || !t.After(x.created) {
		return modelNo
	}
	eval := func(start int) modelTri {
		res := modelYes
		for _, v := range views[start:] {
			yes, unknown := 0, 0
			for _, g := range v.gens {
				switch w.named(x, g, t, exact) {
				case modelYes:
					yes++
				case modelUnknown:
					unknown++
				}
			}
			if yes == 0 && unknown == 0 {
				return modelNo
			}
			if yes < len(v.gens) {
				res = modelUnknown
			}
		}
		return res
	}
	strict, loose := 0, 0
	for i, v := range views {
		if v.at.Before(t) {
			strict = i
		}
		if !v.at.After(t) {
			loose = i
		}
	}
	a := eval(strict)
	if loose == strict {
		return a
	}
	if b := eval(loose); a != b {
		return modelUnknown
	}
	return a
}

// prevRun is the latest scheduled time among x's first n Jobs.
func (x *modelCJ) prevRun(n int) time.Time {
	var t time.Time
	for _, j := range x.jobs[:n] {
		if j.scheduled.After(t) {
			t = j.scheduled
		}
	}
	return t
}

func (x *modelCJ) started(t time.Time, n int) bool {
	for _, j := range x.jobs[:n] {
		if !j.manual && j.scheduled.Equal(t) {
			return true
		}
	}
	return false
}

// modelDeadline is how late a run of spec may start, -1 for no limit.
func modelDeadline(spec *cronv1.CronJobSpec) time.Duration {
	d := time.Duration(-1)
	if s := spec.StartingDeadlineSeconds; s != nil {
		d = modelDeadlineSeconds(*s)
	}
	if spec.CatchUpPolicy == cronv1.CatchUpNone && (d < 0 || d > time.Minute) {
		d = time.Minute
	}
	return d
}

func modelWithin(spec *cronv1.CronJobSpec, t, now time.Time) bool {
	d := modelDeadline(spec)
	return d < 0 || !t.Add(d).Before(now)
}

// --- I1 and I2: every Job the store created --------------------------------

// checkCreated checks a Job the store just created for x: never a second
// Job for a scheduled time or a run-now value (I1), and a scheduled Job
// only for a run (I2).
func (w *modelWalk) checkCreated(x *modelCJ, j *batchv1.Job, rec *modelJobRec, earlier []*modelJobRec) {
	w.checked("I1 Jobs created, checked")
	if rec.manual {
		for _, o := range earlier {
			if o.manual && o.name == j.Name {
				// A value set again after another one is a new request
				// with a number of its own, so a name of its own: a name
				// made twice is one request started twice.
				cat := "I1.run-now-twice"
				switch {
				case !o.visible:
					cat += "/first-job-never-seen"
				case o.unrecorded:
					cat += "/first-run-unrecorded"
				}
				w.violate(cat, "second Job %s for one run-now value (the first, created at step %d, was deleted since)", j.Name, o.step)
			}
		}
		return
	}
	t, ok := job.ScheduledAt(j)
	if !ok || j.Name != job.Name(x.name, t) {
		w.violate("I2.malformed-job", "Job %s of %s has neither a scheduled-at annotation matching its name nor %s=manual (scheduled-at %q)",
			j.Name, x.name, cronv1.InstantiateAnnotation, j.Annotations[cronv1.ScheduledAtAnnotation])
		return
	}
	for _, o := range earlier {
		if !o.manual && o.scheduled.Equal(t) {
			cat := "I1.twice"
			switch {
			case !o.visible:
				cat += "/first-job-never-seen"
			case o.unrecorded:
				cat += "/first-run-unrecorded"
			}
			w.violate(cat, "second Job for %s's run at %s: %s created at step %d (lost response: %v, seen by the controller: %v), deleted since; now again",
				x.name, modelFmtTime(t), o.name, o.step, o.lost, o.visible)
		}
	}
	// I3: a run counted as missed must never start.
	if cj, ok := w.srv.cronJobs[x.skey]; ok {
		for _, m := range cj.Status.MissedRuns {
			if m.Reason != cronv1.MissedSuperseded && m.LastTime.Time.Equal(t) {
				x.countedThenStarted[t.Unix()] = true
				w.violate("I3.missed-counted-then-started", "%s's run at %s starts now, but status.missedRuns counted it as %s", x.name, modelFmtTime(t), m.Reason)
			}
		}
	}
	w.checkGhost(x, rec)
	w.checkCalendarStart(x, rec)
	w.checkHeldStart(x, rec)
}

// manualNames are the names the Job of run-now value may have: the name
// hashes the key of the value handled before it, any the walk has set, and
// the number of the request, at most the number of values the walk set.
func (w *modelWalk) manualNames(x *modelCJ, value string) []string {
	var sets int64
	for _, n := range w.runNowSets[x.name] {
		sets += int64(n)
	}
	var out []string
	for seq := int64(1); seq <= sets; seq++ {
		out = append(out, w.manualNamesOf(x, value, seq)...)
	}
	return out
}

// manualNamesOf are the names the Job of request seq for value may have.
func (w *modelWalk) manualNamesOf(x *modelCJ, value string, seq int64) []string {
	out := []string{job.ManualName(x.name, x.uid, "", value, seq)}
	for v := range w.runNowSets[x.name] {
		out = append(out, job.ManualName(x.name, x.uid, planner.RunNowKey(v), value, seq))
	}
	return out
}

// checkGhost is I2: a Job for t only if t is after the CronJob's creation,
// due, named by the spec it was made from, not suspended, and a run by the
// rule for edits.
func (w *modelWalk) checkGhost(x *modelCJ, rec *modelJobRec) {
	t := rec.scheduled
	before := w.countAll()
	defer func() {
		if w.countAll() != before && t.After(x.ghostAt) {
			x.ghostAt = t
		}
	}()
	w.checked("I2 scheduled Jobs created, checked")
	if !t.After(x.created) {
		w.violate("I2.before-creation", "Job %s is for %s, not after %s's creation at %s", rec.name, modelFmtTime(t), x.name, modelFmtTime(x.created))
	}
	if t.After(w.now()) {
		w.violate("I2.not-due-yet", "Job %s is for %s, after now (%s)", rec.name, modelFmtTime(t), modelFmtTime(w.now()))
	}
	spec, ok := x.specs[rec.gen]
	if !ok {
		w.stat("I2 skipped: Job without the model's generation")
		return
	}
	if ptr.Deref(spec.Suspend, false) {
		w.violate("I2.started-while-suspended", "Job %s was made from generation %d, which is suspended", rec.name, rec.gen)
	}
	if w.named(x, rec.gen, t, false) == modelNo {
		if w.naming(x, rec.gen).every > 0 {
			// The @every grid is off from here on: what follows is the
			// same finding.
			x.gridBroken = true
		}
		w.violate("I2.not-named", "Job %s is for %s, which generation %d (%s) does not name", rec.name, modelFmtTime(t), rec.gen, w.naming(x, rec.gen).text)
		return
	}
	views := w.views(x, w.ctl.id)
	if w.owed(x, views, t, false) == modelNo {
		cat := "I2.edit-rule"
		if v := w.failingView(x, views, t); v != nil && w.allInvalid(x, v.gens) {
			cat = "I2.edit-rule/after-invalid-schedule"
		}
		w.violate(cat, "Job %s is for %s, which is not a run: the controller saw an edit after it, and a schedule on one side does not name it (views: %s)",
			rec.name, modelFmtTime(t), w.describeViews(x, views, t))
	}
}

func (w *modelWalk) countAll() int {
	n := 0
	for _, c := range w.counts {
		n += c
	}
	return n
}

func (w *modelWalk) failingView(x *modelCJ, views []modelView, t time.Time) *modelView {
	for i := len(views) - 1; i >= 0; i-- {
		none := true
		for _, g := range views[i].gens {
			if w.named(x, g, t, false) != modelNo {
				none = false
			}
		}
		if none {
			return &views[i]
		}
	}
	return nil
}

func (w *modelWalk) allInvalid(x *modelCJ, gens []int64) bool {
	for _, g := range gens {
		if w.naming(x, g).valid {
			return false
		}
	}
	return true
}

func (w *modelWalk) describeViews(x *modelCJ, views []modelView, t time.Time) string {
	var parts []string
	for i, v := range views {
		if i+1 < len(views) && !views[i+1].at.After(t.Add(-time.Hour*24*7)) {
			continue
		}
		var gs []string
		for _, g := range v.gens {
			gs = append(gs, fmt.Sprintf("gen %d %s", g, w.naming(x, g).text))
		}
		parts = append(parts, fmt.Sprintf("from %s: %s", modelFmtTime(v.at), strings.Join(gs, " or ")))
	}
	return strings.Join(parts, "; ")
}

// --- after each sync: I3, I4, I5 -------------------------------------------

// modelPre is the store as a sync began.
type modelPre struct {
	active map[string]types.UID // x's unfinished Jobs not being deleted
	jobsN  int                  // len(x.jobs)
	// stored is x's status in the store before the sync: a Job whose run it
	// does not record may outlive the history limit by a sync, since the
	// controller prunes it only once a stored status records its run.
	stored cronv1.CronJobStatus
	// failValidated says I9.streak found the stored status's count right
	// and nothing has been written since.
	failValidated bool
	// jobs are the Jobs in the store as the sync began, by name: the
	// outcomes it can see, though it may delete them.
	jobs map[string]*batchv1.Job
}

type modelSyncResult struct {
	x            *modelCJ
	rec          *modelSyncRec
	pre          modelPre
	calls        []modelCall
	requeue      time.Duration
	err          error
	settled      bool
	deferred     bool
	queuedBefore bool
	burst        bool
}

func (r *modelSyncResult) recOrNil() *modelSyncRec {
	if r == nil {
		return nil
	}
	return r.rec
}

// recorded reports whether the stored status before the sync records j's
// run (for a run-now Job: whether a run-now value was recorded at all
// before, and none changed; the walk's values are short).
func (pre modelPre) recorded(j *batchv1.Job) bool {
	if t, ok := job.ScheduledAt(j); ok {
		last := pre.stored.LastScheduleTime
		return last != nil && !t.After(last.Time)
	}
	return false
}

// listsActive reports whether the stored status lists j in status.active.
func (pre modelPre) listsActive(j *batchv1.Job) bool {
	return slices.ContainsFunc(pre.stored.Active, func(ref corev1.ObjectReference) bool { return ref.UID == j.UID })
}

func (w *modelWalk) preSync(x *modelCJ) modelPre {
	// The controller starts from the stored status when its last sync of x
	// was clean (what it wrote is what the store holds) or it has none.
	f := w.failOf(x)
	fresh := f.lastCtl != w.ctl.id
	f.lastCtl = w.ctl.id
	return modelPre{active: w.activeJobs(x), jobsN: len(x.jobs), stored: *w.srv.cronJobs[x.skey].Status.DeepCopy(),
		failValidated: fresh || (f.validated >= 0 && f.validated == f.statusWrites), jobs: w.jobsNow()}
}

// activeJobs are x's Jobs in the store that have not finished and are not
// being deleted.
func (w *modelWalk) activeJobs(x *modelCJ) map[string]types.UID {
	out := map[string]types.UID{}
	for _, j := range w.srv.jobs {
		if job.IsControlledBy(j, string(x.uid)) && modelJobFinished(j) == "" && j.DeletionTimestamp == nil {
			out[j.Name] = j.UID
		}
	}
	return out
}

func (w *modelWalk) checkSync(res *modelSyncResult) {
	x := res.x
	faults := 0
	conflict := false
	for _, c := range res.calls {
		if c.fault != "" {
			faults++
		}
		if c.resource == "cronjobs/status" && c.err != nil && apierrors.IsConflict(c.err) && c.fault == "" {
			conflict = true
		}
	}
	w.checkCalendarCounts(x)
	// Until checkStreak says otherwise, the next sync of x may start from
	// a state this one kept but did not write.
	w.failOf(x).validated = -1
	// I5: errors only from faults, or from a conflict on a stale cache.
	if res.err != nil && faults == 0 {
		switch {
		case conflict && res.settled:
			w.violate("I5.conflict-on-caught-up-caches", "sync of %s on caught-up caches wrote a stale status: %v", x.name, res.err)
		case !conflict:
			w.violate("I5.error-without-fault", "sync of %s returned %v with no fault injected", x.name, res.err)
		}
	}
	if res.rec == nil {
		w.stat("I3/I4 skipped: CronJob not in the cache yet")
		return
	}
	if faults == 0 {
		w.checkOwnWrites(res)
	}
	if !res.settled {
		w.stat("I3/I4 skipped: caches behind the store")
		return
	}
	if faults > 0 {
		if w.onlyUnrelatedFaults(res) {
			w.checkDue(res, true)
		} else {
			w.stat("I3/I4 skipped: fault injected")
		}
		return
	}
	w.checkRunsStarted(x)
	w.checkDue(res, false)
	w.checkRunNow(res)
	if w.statusFinal(res) {
		w.checkStatus(res)
		w.checkMissed(res)
		w.checkHeldCounted(res)
		w.checkStreak(res)
		w.checkPausedCount(res)
	} else {
		w.stat("I4 skipped: status deferred")
		x.anchor = nil
	}
}

// onlyUnrelatedFaults says whether every fault of the sync hit a call the
// due run does not depend on: a run-now Job's create, or the deletion of a
// finished Job (history).
func (w *modelWalk) onlyUnrelatedFaults(res *modelSyncResult) bool {
	for _, c := range res.calls {
		if c.fault == "" {
			continue
		}
		switch {
		case c.verb == "create" && c.resource == "jobs" && c.manual:
		case c.verb == "delete" && c.resource == "jobs":
			j, ok := w.srv.jobs[modelKey(metav1.NamespaceDefault, c.name)]
			if ok && modelJobFinished(j) == "" {
				return false
			}
			if !ok && (c.job == nil || modelJobFinished(c.job) == "") {
				return false
			}
		default:
			return false
		}
	}
	return true
}

// statusFinal says whether the store's status is this sync's result: it
// wrote it, or had nothing to write and nothing waits in the queue.
func (w *modelWalk) statusFinal(res *modelSyncResult) bool {
	for _, c := range res.calls {
		if c.resource == "cronjobs/status" && c.name == res.x.name && c.err == nil {
			return true
		}
	}
	if res.deferred || res.queuedBefore {
		return false
	}
	for _, c := range res.calls {
		if c.resource == "cronjobs/status" && c.name == res.x.name {
			return false
		}
	}
	for _, r := range res.x.records {
		if r.inst == w.ctl.id && r.deferred {
			return false
		}
	}
	return true
}

// checkDue is I3's liveness: after a settled sync, the run that is due has
// a Job, unless something the rules name holds it back.
func (w *modelWalk) checkDue(res *modelSyncResult, unrelatedFaults bool) {
	x, now := res.x, w.now()
	gen := w.lastGen(x)
	spec := x.specs[gen]
	if !w.naming(x, gen).valid {
		w.stat("I3 nothing required: schedule invalid")
		return
	}
	if ptr.Deref(spec.Suspend, false) {
		w.stat("I3 nothing required: suspended")
		return
	}
	// Due as the sync began: the runs it should have started. A run the
	// stored status counted as missed (but for ScheduleChanged, which
	// settles nothing) can no longer start, nor any before it: the
	// controller's rule, which I3's accounting checks separately.
	prev := x.prevRun(res.pre.jobsN)
	lower := x.created
	if prev.After(lower) {
		lower = prev
	}
	for _, m := range res.pre.stored.MissedRuns {
		if m.Reason != cronv1.MissedScheduleChanged && m.LastTime.After(lower) {
			lower = m.LastTime.Time
		}
	}
	views := w.views(x, w.ctl.id)
	limit := modelCatchUpLimit(&spec)
	newest, status := w.newestOwed(x, gen, views, lower, now, limit, modelDeadline(&spec))
	switch status {
	case modelNotEnumerable:
		w.stat("I3 skipped: due times not enumerable (edited @every grid, or too many)")
		return
	case modelUnknownRun:
		w.stat("I3 skipped: cannot tell whether an edit makes a time a run")
		return
	}
	var expected []time.Time
	for _, t := range newest {
		if !modelWithin(&spec, t, now) {
			break
		}
		if w.calMayHold(x, views, t) {
			// A Calendar version the controller may have decided it under
			// excludes or holds it: either decision is right. Under Latest
			// that leaves nothing to start.
			w.stat("I3 nothing required: a Calendar may hold a due time")
			continue
		}
		expected = append(expected, t)
	}
	if len(expected) == 0 {
		w.stat("I3 nothing required: no run due within the deadline")
		return
	}
	active := w.activeJobs(x)
	var missing []time.Time
	for _, t := range expected {
		if x.started(t, len(x.jobs)) {
			continue
		}
		name := job.Name(x.name, t)
		if j, ok := w.srv.jobs[modelKey(metav1.NamespaceDefault, name)]; ok && !job.IsControlledBy(j, string(x.uid)) {
			w.stat("I3 nothing required: a foreign Job holds the name")
			continue
		}
		if w.refusedNames[name] {
			// Refused while a foreign Job held the name, and counted: a
			// refusal is final, even once that Job is gone.
			w.stat("I3 nothing required: refused for a foreign Job since gone")
			continue
		}
		missing = append(missing, t)
	}
	if len(missing) > 0 {
		if missing = w.maxRunsRequired(x, missing); len(missing) == 0 {
			return // maxRuns reached: nothing is due
		}
	}
	if x.namesCalendars() {
		w.checked("I3 due run of a CronJob naming Calendars required to have started")
	}
	if len(missing) == 0 {
		w.checked("I3 due run required to have started")
		w.noteMaxRunsRequired(x, prev)
		return
	}
	if spec.ConcurrencyPolicy == cronv1.ForbidConcurrent && len(active) > 0 {
		w.stat("I3 nothing required: held back by Forbid")
		return
	}
	if spec.FailurePolicy != nil {
		// Held while paused, but for the trial (I9): what the sync decided
		// shows only in the status it wrote.
		if !w.statusFinal(res) {
			w.stat("I3 skipped: failurePolicy set, the sync's status not written")
			return
		}
		if st := w.srv.cronJobs[x.skey].Status; modelPaused(&st) {
			w.checkPausedDue(res, &spec, missing)
			return
		} else if !res.pre.failValidated && modelPausedCountedUpTo(&st, &res.pre.stored, missing[len(missing)-1]) {
			// Not paused now, but a sync of this process whose status was
			// not written held the run while paused (then a resume came):
			// counted under Paused, final (R5).
			w.stat("I3 nothing required: held while paused by an unwritten sync, then resumed")
			return
		} else if pre := res.pre.stored.FailureStreak; pre != nil && pre.PausedAt != nil && !missing[0].Before(pre.PausedAt.Time) &&
			modelPausedCountedUpTo(&st, &res.pre.stored, missing[len(missing)-1]) {
			// The sync ended the pause (a success, a resume): runs due
			// while paused, before that, count under Paused (R5).
			w.stat("I3 nothing required: due while paused, the pause ended in the sync")
			return
		}
	}
	w.checked("I3 due run required to have started")
	w.noteMaxRunsRequired(x, prev)
	var ms []string
	for _, t := range missing {
		ms = append(ms, modelFmtTime(t))
	}
	what := fmt.Sprintf("%s: run(s) %s due (catchUp %s, deadline %s, policy %s, last run %s) but not started",
		x.name, strings.Join(ms, ", "), spec.CatchUpPolicy, modelDeref(spec.StartingDeadlineSeconds), spec.ConcurrencyPolicy, modelFmtTime(prev))
	cat := "I3.due-run-not-started"
	stored := w.srv.cronJobs[x.skey].Status
	switch detached := w.listsDetached(&stored); {
	case spec.ConcurrencyPolicy == cronv1.ForbidConcurrent && len(detached) > 0:
		w.violate("I6.forbid-blocked", "%s; under Forbid, its own Jobs done, status.active still lists %v, which it no longer controls", what, detached)
		return
	case w.deletedDetached(res.calls) != "":
		w.violate("I6.detached-deleted/run-not-started", "%s; the sync tried to delete %s, which a user detached", what, w.deletedDetached(res.calls))
		return
	case modelHuge(&spec):
		w.violate("I8.huge-deadline-run-not-started", "%s: startingDeadlineSeconds %d means no deadline", what, *spec.StartingDeadlineSeconds)
		return
	case x.recreated && w.retiredNameHolder(x) != "":
		cat = "I7.recreated-run-not-started"
		what += "; " + w.retiredNameHolder(x)
	}
	if spec.CatchUpPolicy == cronv1.CatchUpAll {
		cat = "I3.catchup-all-not-started"
		if res.requeue > 0 && res.requeue <= time.Second {
			cat = "I3.catchup-all-not-in-one-sync"
			what += fmt.Sprintf(" (the sync asks to be called back in %v)", res.requeue)
		}
	}
	switch {
	case strings.HasSuffix(cat, "not-in-one-sync"):
		// One category for the design: its context does not matter.
	case x.gridBroken && w.naming(x, gen).every > 0, !x.ghostAt.IsZero() && !x.ghostAt.Before(lower):
		cat += "/after-ghost-run"
		what += "; an earlier Job of this CronJob was for a time that is not a run (I2)"
	case !x.uncut.IsZero() && x.uncut.Equal(prev):
		cat += "/after-maxruns-raise"
		what += fmt.Sprintf("; a maxRuns edit (now %s) ended the cut at the last run", modelDeref(spec.MaxRuns))
	case unrelatedFaults:
		cat += "/after-unrelated-fault"
		what += "; the only faults were on calls the run does not need: " + modelDescribeCalls(res.calls)
	case w.foreignSince(x, lower):
		cat += "/foreign-job-holds-a-run"
		what += "; a foreign Job holds the name of a run since the last one"
	case spec.ConcurrencyPolicy == cronv1.ForbidConcurrent && w.beingDeleted(x):
		cat += "/forbid-with-job-being-deleted"
		what += "; the only Jobs left are being deleted"
	case w.editedSince(x, lower) || w.editSeenAfter(x, views, missing[len(missing)-1]):
		cat += "/after-schedule-edit"
		what += "; the schedule or zone was edited since the last run"
	case modelNearDSTChange(spec.TimeZone, missing[0]):
		cat += "/near-dst-change"
		what += "; the zone changed its UTC offset within the day before"
	}
	for _, t := range missing {
		x.reportedDropped[t.Unix()] = true
	}
	w.violate(cat, "%s", what)
}

// modelNearDSTChange says whether zone changed its UTC offset in the 36
// hours up to t.
func modelNearDSTChange(zone *string, t time.Time) bool {
	if zone == nil {
		return false
	}
	loc, err := time.LoadLocation(*zone)
	if err != nil {
		return false
	}
	_, before := t.Add(-36 * time.Hour).In(loc).Zone()
	_, after := t.In(loc).Zone()
	return before != after
}

// modelZoneChanged says whether zone changed its UTC offset between a and b.
func modelZoneChanged(zone *string, a, b time.Time) bool {
	if zone == nil || !a.Before(b) {
		return false
	}
	loc, err := time.LoadLocation(*zone)
	if err != nil {
		return false
	}
	next := modelNextTransition(loc, a)
	return !next.IsZero() && !next.After(b)
}

// beingDeleted says whether an unfinished Job of x is being deleted.
func (w *modelWalk) beingDeleted(x *modelCJ) bool {
	for _, j := range w.srv.jobs {
		if job.IsControlledBy(j, string(x.uid)) && modelJobFinished(j) == "" && j.DeletionTimestamp != nil {
			return true
		}
	}
	return false
}

// foreignSince says whether a Job x does not control holds the name of one
// of x's runs after t.
func (w *modelWalk) foreignSince(x *modelCJ, t time.Time) bool {
	for name := range w.foreign {
		j, ok := w.srv.jobs[modelKey(metav1.NamespaceDefault, name)]
		if !ok || job.IsControlledBy(j, string(x.uid)) || !strings.HasPrefix(name, x.name+"-") {
			continue
		}
		var unix int64
		if _, err := fmt.Sscan(strings.TrimPrefix(name, x.name+"-"), &unix); err == nil && time.Unix(unix, 0).After(t) {
			return true
		}
	}
	return false
}

// Outcomes of newestOwed.
const (
	modelOwedOK = iota
	modelNotEnumerable
	modelUnknownRun
)

// newestOwed is up to n of the newest runs (owed times) of generation gen in
// (lower, now], newest first. It looks back from now in growing windows,
// since only the newest matter, and stops once a window covers the
// deadline: older runs could not start anyway.
func (w *modelWalk) newestOwed(x *modelCJ, gen int64, views []modelView, lower, now time.Time, n int, deadline time.Duration) ([]time.Time, int) {
	for span := time.Hour; ; span *= 8 {
		from := now.Add(-span)
		complete := !from.After(lower)
		if complete {
			from = lower
		}
		cands, ok := w.enumerate(x, gen, from, now, 20000, true)
		if !ok {
			return nil, modelNotEnumerable
		}
		var out []time.Time
		for i := len(cands) - 1; i >= 0 && len(out) < n; i-- {
			switch w.owed(x, views, cands[i], true) {
			case modelUnknown:
				return nil, modelUnknownRun
			case modelYes:
				out = append(out, cands[i])
			}
		}
		if len(out) == n || complete || (deadline >= 0 && span > deadline) {
			return out, modelOwedOK
		}
	}
}

// unrecordedRunSince says whether a run of x after t finished or went before
// the status in the store recorded it (its create's response was lost, or a
// crash took the status that would have): only its Job, if any, tells of it.
func (w *modelWalk) unrecordedRunSince(x *modelCJ, t time.Time) bool {
	for _, j := range x.jobs {
		if !j.manual && j.scheduled.After(t) && j.unrecorded {
			return true
		}
	}
	return false
}

// editSeenAfter says whether the controller saw an edit of x's schedule or
// zone at t or after.
func (w *modelWalk) editSeenAfter(x *modelCJ, views []modelView, t time.Time) bool {
	at := 0
	for i, v := range views {
		if v.at.Before(t) {
			at = i
		}
	}
	key := func(g int64) string {
		s := x.specs[g]
		return modelScheduleKey(s) + "|" + ptr.Deref(s.TimeZone, "")
	}
	for _, v := range views[at+1:] {
		for _, g := range v.gens {
			for _, g0 := range views[at].gens {
				if key(g) != key(g0) {
					return true
				}
			}
		}
	}
	return false
}

// editedSince says whether x's schedule or zone text changed at t or after.
func (w *modelWalk) editedSince(x *modelCJ, t time.Time) bool {
	for i := 1; i < len(x.storeGens); i++ {
		g := x.storeGens[i]
		if g.at.Before(t) {
			continue
		}
		a, b := x.specs[x.storeGens[i-1].gen], x.specs[g.gen]
		if modelScheduleKey(a) != modelScheduleKey(b) || ptr.Deref(a.TimeZone, "") != ptr.Deref(b.TimeZone, "") {
			return true
		}
	}
	return false
}

// checkRunNow is I3 for run-now: after a settled sync the annotation's
// value has its Job.
func (w *modelWalk) checkRunNow(res *modelSyncResult) {
	x := res.x
	value := w.srv.cronJobs[x.skey].Annotations[cronv1.RunNowAnnotation]
	if value == "" || !w.naming(x, w.lastGen(x)).valid {
		// Whether run-now works while the schedule cannot is not said.
		return
	}
	names := w.manualNames(x, value)
	if st := w.srv.cronJobs[x.skey].Status; st.LastRunNow == planner.RunNowKey(value) && st.RunNowCount > 0 {
		// Handled: by the Job of the request the count numbers, not one
		// of an earlier request for the same value.
		names = slices.DeleteFunc(names, func(n string) bool { return !slices.Contains(w.manualNamesOf(x, value, st.RunNowCount), n) })
	}
	for _, j := range x.jobs {
		if j.manual && slices.Contains(names, j.name) {
			w.checked("I3 run-now value required to have started")
			return
		}
	}
	for _, name := range names {
		if j, ok := w.srv.jobs[modelKey(metav1.NamespaceDefault, name)]; ok && !job.IsControlledBy(j, string(x.uid)) {
			if _, old := w.retiredHolder(x, name); old != nil {
				w.checked("I7 run-now of a recreated CronJob required to have started")
				w.violate("I7.recreated-runnow", "%s (uid %s, created again): run-now=%q has no Job: the name %s is held by Job %s of the deleted %s (uid %s)%s",
					x.name, x.uid, value, name, j.UID, old.name, old.uid, modelJobState(j))
			}
			return
		}
	}
	w.checked("I3 run-now value required to have started")
	if x.recreated {
		for _, name := range names {
			if w.refusedNames[name] || w.retiredNamed(x, name) {
				// Refused while the deleted CronJob's Job held the name; that
				// Job is gone, the refusal stands.
				w.violate("I7.recreated-runnow", "%s (created again): run-now=%q has no Job: it was refused (NameTaken) while a Job of the deleted CronJob of its name held %s, and is not started now that Job is gone",
					x.name, value, name)
				return
			}
		}
	}
	w.violate("I3.run-now-not-started", "%s: run-now=%q has no Job (any of %s) after a settled sync", x.name, value, names)
}

// checkStatus is I4: the status agrees with the Jobs.
func (w *modelWalk) checkStatus(res *modelSyncResult) {
	x := res.x
	cj := w.srv.cronJobs[x.skey]
	st := cj.Status
	spec := cj.Spec
	w.checked("I4 settled statuses compared")

	want := w.activeJobs(x)
	got := map[string]types.UID{}
	for _, r := range st.Active {
		got[r.Name] = r.UID
	}
	var missing []string
	extra := map[string][]string{}
	for n, uid := range got {
		if want[n] == uid {
			continue
		}
		why := "gone"
		if d := w.detached[uid]; d != nil {
			w.violate("I6.detached-active", "%s: status.active lists %s, which a user detached at step %d (%s): the CronJob no longer controls it%s",
				x.name, n, d.step, map[bool]string{true: "by a --cascade=orphan delete", false: "by hand"}[d.orphaned], modelJobStateByName(w, n, uid))
			continue
		}
		if j, ok := w.srv.jobs[modelKey(metav1.NamespaceDefault, n)]; ok && j.UID == uid {
			switch {
			case j.DeletionTimestamp != nil:
				why = "being-deleted"
			case modelJobFinished(j) != "":
				why = "finished"
			}
		} else if ok {
			why = "replaced-by-another-job"
		}
		extra[why] = append(extra[why], n)
	}
	for n, uid := range want {
		if got[n] != uid {
			missing = append(missing, n)
		}
	}
	sort.Strings(missing)
	for _, why := range []string{"gone", "being-deleted", "finished", "replaced-by-another-job"} {
		if names := extra[why]; len(names) > 0 {
			sort.Strings(names)
			w.violate("I4.active/lists-"+why, "%s: status.active lists %v, which are %s", x.name, names, strings.ReplaceAll(why, "-", " "))
		}
	}
	if len(missing) > 0 {
		w.violate("I4.active/missing", "%s: status.active lacks running Jobs %v", x.name, missing)
	}
	if int(st.ActiveCount) != len(st.Active) {
		w.violate("I4.activeCount", "%s: activeCount %d, active has %d", x.name, st.ActiveCount, len(st.Active))
	}

	// lastScheduleTime: the newest run that started.
	var newestExisting time.Time
	for _, j := range w.srv.jobs {
		if job.IsControlledBy(j, string(x.uid)) {
			if t, ok := job.ScheduledAt(j); ok && t.After(newestExisting) {
				newestExisting = t
			}
		}
	}
	var lst time.Time
	if st.LastScheduleTime != nil {
		lst = st.LastScheduleTime.Time
	}
	if !newestExisting.IsZero() && lst.Before(newestExisting) {
		w.violate("I4.lastScheduleTime/behind", "%s: lastScheduleTime %s, but Job for %s exists", x.name, modelFmtTime(lst), modelFmtTime(newestExisting))
	}
	if lst.Before(x.recordedLST) {
		w.violate("I4.lastScheduleTime/regressed", "%s: lastScheduleTime %s, but the store held %s before", x.name, modelFmtTime(lst), modelFmtTime(x.recordedLST))
	}
	if !lst.IsZero() && !x.started(lst, len(x.jobs)) {
		w.violate("I4.lastScheduleTime/not-a-run", "%s: lastScheduleTime %s, which no Job was created for", x.name, modelFmtTime(lst))
	}

	// lastSuccessfulTime: the newest completion.
	var newestDone time.Time
	for _, j := range w.srv.jobs {
		if job.IsControlledBy(j, string(x.uid)) && modelJobFinished(j) == batchv1.JobComplete && j.Status.CompletionTime != nil &&
			j.Status.CompletionTime.After(newestDone) {
			newestDone = j.Status.CompletionTime.Time
		}
	}
	var lsu time.Time
	if st.LastSuccessfulTime != nil {
		lsu = st.LastSuccessfulTime.Time
	}
	if !newestDone.IsZero() && lsu.Before(newestDone) {
		w.violate("I4.lastSuccessfulTime/behind", "%s: lastSuccessfulTime %s, but a Job completed at %s", x.name, modelFmtTime(lsu), modelFmtTime(newestDone))
	}
	if !lsu.IsZero() && !x.completions[lsu.Unix()] {
		w.violate("I4.lastSuccessfulTime/not-a-completion", "%s: lastSuccessfulTime %s, when none of its Jobs completed", x.name, modelFmtTime(lsu))
	}

	// History limits, oldest first.
	var done []*batchv1.Job
	for _, j := range w.srv.jobs {
		if job.IsControlledBy(j, string(x.uid)) && modelJobFinished(j) != "" && j.DeletionTimestamp == nil {
			done = append(done, j)
		}
	}
	for _, kind := range []batchv1.JobConditionType{batchv1.JobComplete, batchv1.JobFailed} {
		limit := spec.SuccessfulJobsHistoryLimit
		if kind == batchv1.JobFailed {
			limit = spec.FailedJobsHistoryLimit
		}
		var kept []*batchv1.Job
		for _, j := range done {
			if modelJobFinished(j) == kind {
				kept = append(kept, j)
			}
		}
		// Pruning goes oldest first and stops at a Job whose run the
		// written status does not record: past the limit, the oldest Job
		// kept must be such a Job (it holds the newer ones back).
		// With spec.failurePolicy, a Job the stored status still lists
		// active waits too: its outcome is not written yet.
		sort.Slice(kept, func(a, b int) bool { return modelStartedBefore(kept[a], kept[b]) })
		if limit != nil && len(kept) > int(*limit) && res.pre.recorded(kept[0]) && !(spec.FailurePolicy != nil && res.pre.listsActive(kept[0])) {
			w.violate("I4.history-limit", "%s: %d %s Jobs kept, limit %d", x.name, len(kept), kind, *limit)
		}
		for _, c := range res.calls {
			if c.verb != "delete" || c.job == nil || modelJobFinished(c.job) != kind || w.detached[c.job.UID] != nil {
				// A detached Job deleted is I6's finding, not pruning's.
				continue
			}
			for _, k := range kept {
				if modelStartedBefore(k, c.job) {
					w.violate("I4.history-order", "%s: deleted %s (started %v) but kept the older %s (started %v)",
						x.name, c.job.Name, c.job.Status.StartTime, k.Name, k.Status.StartTime)
				}
			}
		}
	}

	// Replace: a started run leaves no earlier Job running.
	if spec.ConcurrencyPolicy == cronv1.ReplaceConcurrent {
		startedNow := false
		for _, j := range x.jobs {
			if j.sync == res.rec && !j.manual {
				startedNow = true
			}
		}
		if startedNow {
			for n, uid := range res.pre.active {
				if want[n] == uid {
					w.violate("I4.replace-left-active", "%s: a run started under Replace, but the earlier Job %s still runs", x.name, n)
				}
			}
		}
	}
}

// checkOwnWrites is I4 on any cache, however stale: a status this process
// writes never lists a Job it deleted itself, nor leaves out one it created
// that still runs, while it trusts its own writes over its caches.
func (w *modelWalk) checkOwnWrites(res *modelSyncResult) {
	x, ctl := res.x, w.ctl
	wrote := false
	for _, c := range res.calls {
		if c.resource == "cronjobs/status" && c.name == x.name && c.err == nil {
			wrote = true
		}
	}
	if !wrote {
		return
	}
	w.checked("I4 statuses checked against the controller's own writes")
	st := w.srv.cronJobs[x.skey].Status
	listed := map[types.UID]string{}
	for _, r := range st.Active {
		listed[r.UID] = r.Name
	}
	recent := func(at time.Time) bool { return w.now().Sub(at) < modelOwnWritesWindow-time.Second }
	var own []string
	for uid, d := range ctl.deleted {
		if name, ok := listed[uid]; ok && recent(d.at) {
			own = append(own, name)
		}
	}
	sort.Strings(own)
	if len(own) > 0 {
		w.violate("I4.active/lists-job-it-deleted", "%s: status.active lists %v, which this controller deleted itself within the last minute",
			x.name, own)
	}
	var forgot []string
	for uid, cr := range ctl.created {
		j, ok := w.srv.jobs[cr.key]
		if !ok || j.UID != uid || !recent(cr.at) || !job.IsControlledBy(j, string(x.uid)) || modelJobFinished(j) != "" || j.DeletionTimestamp != nil {
			continue
		}
		if _, ok := listed[uid]; !ok {
			forgot = append(forgot, j.Name)
		}
	}
	sort.Strings(forgot)
	if len(forgot) > 0 {
		w.violate("I4.active/forgets-job-it-created", "%s: status.active lacks %v, which this controller created within the last minute and which still run",
			x.name, forgot)
	}
}

// modelStartedBefore orders Jobs as history pruning does: by start time, a
// Job that never started counting as the newest, then by name.
func modelStartedBefore(a, b *batchv1.Job) bool {
	as, bs := a.Status.StartTime, b.Status.StartTime
	switch {
	case as == nil && bs == nil:
		return a.Name < b.Name
	case as == nil:
		return false
	case bs == nil:
		return true
	case as.Equal(bs):
		return a.Name < b.Name
	}
	return as.Before(bs)
}

// modelAnchor is a settled sync whose status reached the store; missed runs
// are counted between two of them.
type modelAnchor struct {
	step  int
	at    time.Time
	gen   int64
	total int64
	jobsN int
	// settled is the newest missed time in the status then (ScheduleChanged
	// aside): every run up to it was counted or started before the window.
	settled time.Time
	// paused says the status then said paused (spec.failurePolicy);
	// pausedN is its count of runs missed under Paused.
	paused  bool
	pausedN int64
}

func modelMissedTotal(st *cronv1.CronJobStatus) int64 {
	var n int64
	for _, m := range st.MissedRuns {
		n += m.Count
	}
	return n
}

// checkMissed is I3's accounting: between two settled syncs with the same
// spec, status.missedRuns grows by the runs that could still start at the
// first and can no longer start, and never started, at the second: exactly
// once each, and not while they can still start. More than 100 at once may
// count as 100; a run whose name a foreign Job took may be counted when the
// controller finds it taken.
func (w *modelWalk) checkMissed(res *modelSyncResult) {
	x, now := res.x, w.now()
	gen := w.lastGen(x)
	spec := x.specs[gen]
	st := w.srv.cronJobs[x.skey].Status
	// A deadline too large for a time.Duration (meant as none) is a bound
	// of its own: what it breaks is filed under I8.
	violate := w.violate
	if modelHuge(&spec) {
		violate = func(cat, format string, args ...any) { w.violate("I8.huge-deadline/"+cat, format, args...) }
	}
	if ptr.Deref(spec.Suspend, false) || !w.naming(x, gen).valid {
		x.anchor = nil
		return
	}
	// A run counted while it may still start is its own finding. A refusal
	// (a foreign Job holding the name, a Job the API rejected) is final by
	// the controller's rule: the run is counted and passed over, so that it
	// holds back no later run. A miss counted and written under one spec
	// stays counted when a later edit (a longer deadline, catchUpPolicy
	// All) would have let the run start: the controller does not take a
	// published miss back (docs/differential.md).
	newEarly := int64(0)
	for _, m := range st.MissedRuns {
		t := m.LastTime.Time
		switch m.Reason {
		case cronv1.MissedSuperseded, cronv1.MissedNameTaken, cronv1.MissedJobRejected, cronv1.MissedScheduleChanged:
			continue
		case cronv1.MissedExcluded, cronv1.MissedCalendarUnresolved:
			// A Calendar's hold is final by rule too (never owed later);
			// checkCalendarCounts judges these.
			continue
		case cronv1.MissedPaused:
			// Counted at once, by rule (R5): never started later. I9 judges.
			continue
		case cronv1.MissedSuspendedUntil, cronv1.MissedSkipped:
			// Held on purpose, final by rule; I12 judges.
			w.checkHeldCount(x, m)
			continue
		}
		if x.countedEarly[t.Unix()] {
			continue
		}
		if under := w.srv.missedUnder[modelMissedKey(x.skey, m)]; under != 0 && under != gen {
			continue // counted under another spec, and final
		}
		if w.startable(x, gen, &spec, t, now) == modelYes {
			x.countedEarly[t.Unix()] = true
			newEarly++
			violate("I3.missed-counted-while-startable", "%s: the run at %s is counted as missed (%s) while it may still start", x.name, modelFmtTime(t), m.Reason)
		}
	}
	a1 := x.anchor
	x.anchor = &modelAnchor{at: now, gen: gen, total: modelMissedTotal(&st), jobsN: len(x.jobs), step: w.step, paused: modelPaused(&st), pausedN: modelPausedCount(&st)}
	for _, m := range st.MissedRuns {
		if m.Reason != cronv1.MissedScheduleChanged && m.LastTime.After(x.anchor.settled) {
			x.anchor.settled = m.LastTime.Time
		}
	}
	if a1 == nil || a1.gen != gen {
		return
	}
	if a1.paused || !w.failOf(x).lastPausedWrite.Before(a1.at) || modelPausedCount(&st) != a1.pausedN {
		// Runs held while paused count at once, while this window's rule
		// would still let them start: I9.paused-dropped judges them.
		w.stat("I3 missed-run window skipped: paused in the window")
		return
	}
	prev1 := x.prevRun(a1.jobsN)
	lower := x.created
	if prev1.After(lower) {
		lower = prev1
	}
	if a1.settled.After(lower) {
		lower = a1.settled
	}
	cands, ok := w.enumerate(x, gen, lower, now, 3000, true)
	if !ok {
		w.stat("I3 missed-run window skipped: not enumerable")
		return
	}
	views := w.views(x, w.ctl.id)
	var owed []time.Time
	// held counts the runs a Calendar version the controller may have
	// decided them under excludes or holds: each may be counted or not,
	// and each may let one older run into a catch-up's limit.
	held := int64(0)
	for _, t := range cands {
		if x.maxRunsCut(gen, t) {
			continue // no run: maxRuns reached before it
		}
		switch w.owed(x, views, t, true) {
		case modelUnknown:
			w.stat("I3 missed-run window skipped: cannot tell runs")
			return
		case modelYes:
			if w.calMayHold(x, views, t) {
				held++
			}
			owed = append(owed, t)
		}
	}
	limit := modelCatchUpLimit(&spec)
	// canStart says whether owed[i] may still start at T, given the first
	// n Jobs: after the last run, within the deadline, and among the newest
	// limit runs due by T.
	canStart := func(i int, T time.Time, n int) bool {
		t := owed[i]
		lo := x.created
		if p := x.prevRun(n); p.After(lo) {
			lo = p
		}
		if !t.After(lo) || t.After(T) || !modelWithin(&spec, t, T) {
			return false
		}
		newest := sort.Search(len(owed), func(k int) bool { return owed[k].After(T) }) - 1
		return newest-i < limit
	}
	resolved := func(i int, T time.Time, n int) bool {
		return !owed[i].After(T) && !x.started(owed[i], n) && !canStart(i, T, n)
	}
	var expect, foreign, allowance int64
	var newly []string
	editSeen := false
	for i, t := range owed {
		r1, r2 := resolved(i, a1.at, a1.jobsN), resolved(i, now, len(x.jobs))
		if r2 && !r1 && !x.countedEarly[t.Unix()] {
			expect++
			newly = append(newly, modelFmtTime(t))
			editSeen = editSeen || w.editSeenAfter(x, views, t)
		}
		if r2 && !r1 && x.reportedDropped[t.Unix()] {
			foreign++ // reported when it was dropped
		}
		if !x.started(t, len(x.jobs)) && w.foreign[job.Name(x.name, t)] {
			foreign++
		}
		if x.countedThenStarted[t.Unix()] {
			allowance++ // reported when it started
		}
	}
	got := modelMissedTotal(&st) - a1.total
	lo, hi := expect-foreign-held, expect+foreign+allowance+newEarly+held
	if expect > schedule.ManyMissed {
		lo = min(lo, schedule.ManyMissed)
	}
	w.checked("I3 missed-run windows compared")
	if held > 0 {
		w.stat("I3 missed-run windows compared with a Calendar's tolerance")
	}
	window := fmt.Sprintf("between %s and %s (runs due in the window: %d, policy %s, catchUp %s, deadline %s): missedRuns grew by %d, want %d",
		modelFmtTime(a1.at), modelFmtTime(now), len(owed), spec.ConcurrencyPolicy, spec.CatchUpPolicy, modelDeref(spec.StartingDeadlineSeconds), got, expect)
	if len(newly) > 8 {
		newly = slices.Concat(newly[:4], []string{"..."}, newly[len(newly)-3:])
	}
	window += fmt.Sprintf(" (runs no longer able to start: %s)", strings.Join(newly, " "))
	if foreign+allowance+newEarly+held > 0 {
		window += fmt.Sprintf(" (tolerance -%d/+%d for runs reported already, names foreign Jobs took, or runs a Calendar may hold)", foreign+held, foreign+allowance+newEarly+held)
	}
	if got >= lo && got <= hi {
		return
	}
	suffix := ""
	switch {
	case w.unrecordedDetachSince(x, lower):
		suffix = "/after-unrecorded-detach"
	case x.gridBroken && w.naming(x, gen).every > 0, !x.ghostAt.IsZero() && !x.ghostAt.Before(lower):
		suffix = "/after-ghost-run"
	case got > hi && w.unrecordedRunSince(x, lower):
		// Counted as missed: a run only its Job tells of.
		suffix = "/after-run-unrecorded"
	case editSeen:
		suffix = "/after-schedule-edit"
	case modelNearDSTChange(spec.TimeZone, now) || modelZoneChanged(spec.TimeZone, lower, now):
		suffix = "/near-dst-change"
	}
	switch {
	case got < 0:
		violate("I3.missed-count-decreased"+suffix, "%s: %s; status.missedRuns %s", x.name, window, modelDescribeMissed(st.MissedRuns))
	case got < lo:
		violate("I3.missed-undercount"+suffix, "%s: %s; status.missedRuns %s", x.name, window, modelDescribeMissed(st.MissedRuns))
	case got > hi:
		cat := "I3.missed-overcount"
		seen := map[int64]int{}
		for _, m := range st.MissedRuns {
			if m.Reason != cronv1.MissedSuperseded {
				if seen[m.LastTime.Unix()]++; seen[m.LastTime.Unix()] > 1 {
					cat = "I3.missed-counted-twice"
				}
			}
		}
		violate(cat+suffix, "%s: %s; status.missedRuns %s", x.name, window, modelDescribeMissed(st.MissedRuns))
	}
}

// startable says whether the run of x at t, not started, may still start
// at now: after the last run, within the deadline, and among the newest
// runs the catch-up policy starts.
func (w *modelWalk) startable(x *modelCJ, gen int64, spec *cronv1.CronJobSpec, t, now time.Time) modelTri {
	lower := x.created
	if p := x.prevRun(len(x.jobs)); p.After(lower) {
		lower = p
	}
	if x.started(t, len(x.jobs)) || !t.After(lower) || t.After(now) || !modelWithin(spec, t, now) {
		return modelNo
	}
	views := w.views(x, w.ctl.id)
	if o := w.owed(x, views, t, true); o != modelYes {
		return o
	}
	later, ok := w.enumerate(x, gen, t, now, 3000, true)
	if !ok {
		return modelUnknown
	}
	limit := modelCatchUpLimit(spec)
	n := 0
	for _, u := range later {
		switch w.owed(x, views, u, true) {
		case modelUnknown:
			return modelUnknown
		case modelYes:
			n++
		}
	}
	return modelBool(n+1 <= limit)
}

func modelDescribeMissed(ms []cronv1.MissedRuns) string {
	var parts []string
	for _, m := range ms {
		parts = append(parts, fmt.Sprintf("%s=%d (last %s)", m.Reason, m.Count, modelFmtTime(m.LastTime.Time)))
	}
	if len(parts) == 0 {
		return "empty"
	}
	return strings.Join(parts, ", ")
}

// modelCatchUpLimit is how many of the newest due runs may start: under
// catchUpPolicy All up to catchUpLimit, except under Replace, where each
// run would replace the one before, so only the latest is owed.
func modelCatchUpLimit(spec *cronv1.CronJobSpec) int {
	if spec.CatchUpPolicy == cronv1.CatchUpAll && spec.ConcurrencyPolicy != cronv1.ReplaceConcurrent {
		return int(ptr.Deref(spec.CatchUpLimit, 10))
	}
	return 1
}

// modelScheduleKey is the schedule text of a spec: spec.schedule, or the
// entries of spec.schedules joined.
func modelScheduleKey(s cronv1.CronJobSpec) string {
	return planner.ScheduleText(&cronv1.CronJob{Spec: s})
}

// modelWindowKey is the active window of a spec, for keys and messages.
func modelWindowKey(s cronv1.CronJobSpec) string {
	f := func(t *metav1.Time) string {
		if t == nil {
			return "-"
		}
		return modelFmtTime(t.Time)
	}
	return "[" + f(s.NotBefore) + ", " + f(s.NotAfter) + "]"
}

func modelTimeOf(t *metav1.Time) *time.Time {
	if t == nil {
		return nil
	}
	return &t.Time
}
