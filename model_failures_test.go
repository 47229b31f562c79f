package main

// spec.failurePolicy in the model walk: CronJobs whose Jobs fail in streaks
// (each CronJob fails its Jobs with a probability the walk changes over
// time), users who set, edit and remove the policy and resume a paused
// CronJob by its annotation, and the oracle of I9 (documented with the
// others in model_oracle_test.go). The oracle reads only what the
// simulated API server saw: the statuses written, the Jobs created, their
// outcomes.

import (
	"fmt"
	"slices"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	cronv1 "github.com/cronjob-controller/cronjob-controller/pkg/apis/batch/v1"
	"github.com/cronjob-controller/cronjob-controller/pkg/job"
	"github.com/cronjob-controller/cronjob-controller/pkg/planner"
)

// modelFail is what the walk and the oracle keep of one CronJob for
// spec.failurePolicy.
type modelFail struct {
	// failP is how likely a Job of the CronJob fails when it finishes; the
	// walk changes it now and then, so streaks come and go.
	failP float64
	// statusWrites counts the statuses of the CronJob the store took;
	// validated is that count after the last clean sync (settled, no
	// fault, its status final: the controller's state is the stored one),
	// -1 after any other; lastCtl the controller process that synced it
	// last (a new process has no state but the stored one).
	statusWrites, validated, lastCtl int
	// absorbed are the finished Jobs of the CronJob as of the last sync the
	// streak oracle looked at: a later finish is one of the runs it counts.
	absorbed map[types.UID]bool
	// lastPausedWrite is when the store last took a status of it saying
	// paused; anchorPaused whether the status at the missed-run anchor did.
	lastPausedWrite time.Time
	// trials are the scheduled Jobs started as trials, by the opening
	// (pausedAt, Unix seconds) of the stored status they started under.
	trials map[int64][]*modelJobRec
	// pending are scheduled Jobs created while the stored status said
	// paused that are not the opening's one trial: fine only if the
	// creating sync resumed (its status, once written, shows it).
	pending []modelPausedStart
	// entered are the outcomes (Succeeded, Failed) the store's run
	// history ever held, by Job name: written once (I10).
	entered map[string]cronv1.RunOutcome
	// settled are the latest missed times (Unix seconds) any stored status
	// counted: an @every grid may count from one a later status moved
	// on from (a trial started in the sync that counts the runs after it).
	settled map[int64]bool
}

type modelPausedStart struct {
	rec      *modelJobRec
	pausedAt time.Time
	resume   string
	why      string
	stale    bool // the creating sync's caches were behind the store
	sync     *modelSyncRec
}

func (w *modelWalk) failOf(x *modelCJ) *modelFail {
	if x.fail == nil {
		x.fail = &modelFail{failP: pick(w.rng, []float64{0.2, 0.5, 0.9}), validated: -1, absorbed: map[types.UID]bool{}, trials: map[int64][]*modelJobRec{},
			entered: map[string]cronv1.RunOutcome{}, settled: map[int64]bool{}}
	}
	return x.fail
}

// randomFailurePolicy: pauseAfter 1-3; resumeAfter unset or a few schedule
// periods (the walk's schedules run every 90 s to daily); sometimes a cap.
func (w *modelWalk) randomFailurePolicy() *cronv1.FailurePolicy {
	p := &cronv1.FailurePolicy{PauseAfter: int32(1 + w.rng.Intn(3))}
	if w.rng.Float64() < 0.7 {
		p.ResumeAfter = &metav1.Duration{Duration: pick(w.rng, []time.Duration{time.Second, 3 * time.Minute, 20 * time.Minute, 2 * time.Hour, 26 * time.Hour, 3 * 24 * time.Hour})}
		if w.rng.Float64() < 0.4 {
			p.MaxResumeAfter = &metav1.Duration{Duration: pick(w.rng, []time.Duration{time.Minute, time.Hour, 6 * time.Hour, 4 * 24 * time.Hour})}
		}
	}
	return p
}

func modelDescribePolicy(p *cronv1.FailurePolicy) string {
	if p == nil {
		return "nil"
	}
	s := fmt.Sprintf("pauseAfter=%d", p.PauseAfter)
	if p.ResumeAfter != nil {
		s += " resumeAfter=" + p.ResumeAfter.Duration.String()
	}
	if p.MaxResumeAfter != nil {
		s += " maxResumeAfter=" + p.MaxResumeAfter.Duration.String()
	}
	return s
}

// jobSucceeds draws whether the Job under key succeeds: by its CronJob's
// failure probability, else with probability base.
func (w *modelWalk) jobSucceeds(key string, base float64) bool {
	p := 1 - base
	if j := w.srv.jobs[key]; j != nil {
		if ref := job.ControllerOf(j); ref != nil && w.byUID[ref.UID] != nil {
			p = w.failOf(w.byUID[ref.UID]).failP
		}
	}
	return w.rng.Float64() >= p
}

// failureMove is a user's (or the world's) move around spec.failurePolicy.
func (w *modelWalk) failureMove(x *modelCJ) {
	f := w.failOf(x)
	switch r := w.rng.Float64(); {
	case r < 0.3:
		f.failP = pick(w.rng, []float64{0, 0.1, 0.5, 0.9, 1, 1})
		w.logf("  %s's Jobs now fail with probability %.1f", x.name, f.failP)
	case r < 0.65 && !x.everMaxRuns():
		var what string
		w.editSpecBy(x, func(s *cronv1.CronJobSpec) {
			switch {
			case s.FailurePolicy == nil || w.rng.Float64() < 0.4:
				s.FailurePolicy = w.randomFailurePolicy()
				// A short run history, so walks drop entries and meet
				// its bound; drawn from no random number, so the walks
				// of a seed stay those from before the history.
				s.RunHistoryLimit = ptr.To(1 + s.FailurePolicy.PauseAfter)
			case w.rng.Float64() < 0.5:
				s.FailurePolicy = nil
			default:
				s.FailurePolicy.PauseAfter = int32(1 + w.rng.Intn(3))
			}
			what = "failurePolicy " + modelDescribePolicy(s.FailurePolicy)
		}, func() string { return what })
	default:
		// kubectl cronjob resume: a new value, or now and then the one
		// set last (which resumes nothing).
		old := w.srv.cronJobs[x.skey].Annotations[cronv1.ResumeAnnotation]
		v := old
		if v == "" || w.rng.Float64() < 0.8 {
			v = fmt.Sprintf("r%d", w.step)
		}
		w.srv.updateCronJob(x.skey, func(cj *cronv1.CronJob) {
			if cj.Annotations == nil {
				cj.Annotations = map[string]string{}
			}
			cj.Annotations[cronv1.ResumeAnnotation] = v
		})
		w.logf("  user resumes %s: annotation %s=%s (was %q)", x.name, cronv1.ResumeAnnotation, v, old)
	}
}

// editSpecBy applies a user's edit of x's spec, as editSpec does.
func (w *modelWalk) editSpecBy(x *modelCJ, edit func(s *cronv1.CronJobSpec), what func() string) {
	cj := w.srv.updateCronJob(x.skey, func(cj *cronv1.CronJob) {
		edit(&cj.Spec)
		cj.Spec.JobTemplate.Annotations[modelSpecGenAnnotation] = fmt.Sprint(cj.Generation + 1)
	})
	if got := cj.Generation; got != w.lastGen(x)+1 {
		w.t.Fatalf("model: generation %d after an edit of generation %d", got, w.lastGen(x))
	}
	x.specs[cj.Generation] = *cj.Spec.DeepCopy()
	x.storeGens = append(x.storeGens, modelGenAt{at: w.now(), gen: cj.Generation})
	w.logf("  user edits %s: %s (generation %d)", x.name, what(), cj.Generation)
}

// modelCoolDown is R6's cool-down, computed afresh: resumeAfter doubled
// per pause after the first, at most maxResumeAfter (24h unset), never
// below resumeAfter; 0 without resumeAfter.
func modelCoolDown(p *cronv1.FailurePolicy, pauses int32) time.Duration {
	if p == nil || p.ResumeAfter == nil || p.ResumeAfter.Duration <= 0 {
		return 0
	}
	first := p.ResumeAfter.Duration
	limit := cronv1.DefaultMaxResumeAfter
	if p.MaxResumeAfter != nil && p.MaxResumeAfter.Duration > 0 {
		limit = p.MaxResumeAfter.Duration
	}
	limit = max(limit, first)
	d := first
	for n := int32(1); n < pauses && d < limit; n++ {
		d *= 2
	}
	return min(d, limit)
}

// modelResumeAt is when the trial may start under policy p and streak fs,
// zero when none may.
func modelResumeAt(p *cronv1.FailurePolicy, fs *cronv1.FailureStreak) time.Time {
	if fs == nil || fs.PausedAt == nil {
		return time.Time{}
	}
	d := modelCoolDown(p, fs.Pauses)
	if d == 0 {
		return time.Time{}
	}
	return fs.PausedAt.Add(d)
}

func modelPaused(st *cronv1.CronJobStatus) bool {
	return st.FailureStreak != nil && st.FailureStreak.PausedAt != nil
}

// noteStatus sees every status of x the store takes: I9.resume-at, and the
// scheduled Jobs started under a pause are judged by it.
func (w *modelWalk) noteStatus(key string, cj *cronv1.CronJob) {
	x := w.cjByName(cj.Name)
	if x == nil || x.skey != key || x.uid != cj.UID || x.retired {
		return
	}
	f := w.failOf(x)
	f.statusWrites++
	st := &cj.Status
	w.checkRunHistory(x, cj)
	w.checkRunCount(x, st)
	for _, m := range st.MissedRuns {
		if m.Reason != cronv1.MissedScheduleChanged {
			f.settled[m.LastTime.Unix()] = true
		}
	}
	if modelPaused(st) {
		f.lastPausedWrite = w.now()
		// I9.resume-at: the status's resumeAt is R6's, under the spec the
		// status says it observed.
		if spec, ok := x.specs[st.ObservedGeneration]; ok && spec.FailurePolicy != nil {
			want := modelResumeAt(spec.FailurePolicy, st.FailureStreak)
			got := modelTimeOf(st.FailureStreak.ResumeAt)
			w.checked("I9 resumeAt compared")
			if (got == nil) != want.IsZero() || (got != nil && !got.Equal(want)) {
				w.violate("I9.resume-at", "%s: status.failureStreak.resumeAt %v, want %s (pausedAt %s, pauses %d, %s)",
					x.name, got, modelFmtTime(want), modelFmtTime(st.FailureStreak.PausedAt.Time), st.FailureStreak.Pauses, modelDescribePolicy(spec.FailurePolicy))
			}
		}
	}
	if w.cur == nil {
		// A clean shutdown's flush: a decision made under an older spec
		// is written in part only (planner.StaleDecision), and the next
		// sync decides again. That sync's status judges.
		return
	}
	for _, p := range f.pending {
		if modelPaused(st) && st.FailureStreak.PausedAt.Time.Equal(p.pausedAt) && st.FailureStreak.LastResume == p.resume {
			cat := "I9.paused-start"
			switch {
			case p.stale:
				cat += "/stale-cache"
			case w.cur != p.sync:
				// The creating sync's status was never written as decided
				// (deferred, then decided again from the stored status):
				// what made the start right may be lost with it.
				cat += "/decision-not-kept"
			}
			w.violate(cat, "%s: Job %s (run at %s) was created while the stored status said paused since %s and %s; the next status written is still paused since then",
				x.name, p.rec.name, modelFmtTime(p.rec.scheduled), modelFmtTime(p.pausedAt), p.why)
		} else {
			w.stat("I9 scheduled Jobs created under a stored pause, cleared by a resume in the same sync")
		}
	}
	f.pending = nil
}

// notePausedStart is I9.paused-start, at a scheduled Job's create: under a
// stored pause only the opening's trial may start, once, for a time at or
// after resumeAt. Anything else waits for the next status written: the
// creating sync may have seen a success or a resume first.
func (w *modelWalk) notePausedStart(x *modelCJ, rec *modelJobRec) {
	if rec.manual || rec.scheduled.IsZero() {
		return
	}
	st := w.srv.cronJobs[x.skey].Status
	spec, ok := x.specs[rec.gen]
	if !ok || spec.FailurePolicy == nil || !modelPaused(&st) {
		return
	}
	f := w.failOf(x)
	fs := st.FailureStreak
	opening := fs.PausedAt.Unix()
	resumeAt := modelResumeAt(spec.FailurePolicy, fs)
	var why string
	switch {
	case resumeAt.IsZero():
		why = "no cool-down ends it (no resumeAfter)"
	case rec.scheduled.Before(resumeAt):
		why = fmt.Sprintf("the run is due before resumeAt %s", modelFmtTime(resumeAt))
	default:
		for _, t := range f.trials[opening] {
			// A trial being deleted is going away: like one gone, it makes
			// the next due run the trial (R6).
			if j, ok := w.srv.jobs[modelKey(metav1.NamespaceDefault, t.name)]; ok && j.UID == t.uid && job.IsControlledBy(j, string(x.uid)) && j.DeletionTimestamp == nil {
				why = fmt.Sprintf("the opening's trial %s is still there (%s)", t.name, modelJobState(j))
			}
		}
	}
	w.checked("I9 scheduled Jobs created under a stored pause, checked")
	if why == "" {
		f.trials[opening] = append(f.trials[opening], rec)
		w.logf("    Job %s is the trial of %s's pause since %s", rec.name, x.name, modelFmtTime(fs.PausedAt.Time))
		return
	}
	f.pending = append(f.pending, modelPausedStart{rec: rec, pausedAt: fs.PausedAt.Time, resume: fs.LastResume, why: why, stale: !w.curSettled, sync: w.cur})
}

// settlePending drops the pending paused starts of a sync that wrote no
// status and will not (a fault, or a crash losing what it deferred): what
// it decided is not known.
func (w *modelWalk) settlePending(keepDeferred bool) {
	for _, x := range w.cjs {
		if x.fail == nil || len(x.fail.pending) == 0 {
			continue
		}
		x.fail.pending = slices.DeleteFunc(x.fail.pending, func(p modelPausedStart) bool {
			drop := !keepDeferred || p.sync == nil || p.sync.faulted || !p.sync.deferred
			if drop {
				w.stat("I9 paused start not judged: its sync's status was never written")
			}
			return drop
		})
	}
}

// checkPausedDue is I3 under a pause (I9.paused-dropped,
// I9.trial-not-started): after a settled sync whose status is final and
// says paused, the due runs not started are the held ones: each counted
// (under Paused or another reason), but for the trial, which must start
// once the cool-down has passed.
func (w *modelWalk) checkPausedDue(res *modelSyncResult, spec *cronv1.CronJobSpec, missing []time.Time) {
	x := res.x
	st := w.srv.cronJobs[x.skey].Status
	fs := st.FailureStreak
	resumeAt := modelResumeAt(spec.FailurePolicy, fs)
	var held []time.Time
	for _, t := range missing {
		if fs.TrialJob == "" && !resumeAt.IsZero() && !t.Before(resumeAt) {
			if !res.pre.failValidated && modelPausedCountedUpTo(&st, &res.pre.stored, t) {
				// Held by a sync of this process whose status was not
				// written, while a trial it could not yet see gone still
				// ran: counted under Paused, final (R5).
				w.stat("I9 trial not required: held by an unwritten sync while a trial ran")
				held = append(held, t)
				continue
			}
			if modelRefusedIn(&st, &res.pre.stored, resumeAt, t) && modelPausedCountedUpTo(&st, &res.pre.stored, t) {
				// An earlier run at or after resumeAt took the trial's
				// place in this sync and was refused: the runs owed with
				// it count under Paused, the next one due is the trial
				// (docs/failures.md, rule 6).
				w.stat("I9 trial not required: the trial of this sync was refused")
				held = append(held, t)
				continue
			}
			cat := "I9.trial-not-started"
			w.violate(cat, "%s: paused since %s (pauses %d, %s), resumeAt %s passed, no trial runs, yet the run at %s was not started",
				x.name, modelFmtTime(fs.PausedAt.Time), fs.Pauses, modelDescribePolicy(spec.FailurePolicy), modelFmtTime(resumeAt), modelFmtTime(t))
			return
		}
		held = append(held, t)
	}
	w.checked("I9 runs held while paused required to be counted")
	newest := held[len(held)-1]
	var latest time.Time
	for _, m := range st.MissedRuns {
		if m.Reason != cronv1.MissedScheduleChanged && m.LastTime.After(latest) {
			latest = m.LastTime.Time
		}
	}
	got := modelMissedTotal(&st) - modelMissedTotal(&res.pre.stored)
	if latest.Before(newest) || got < int64(len(held)) {
		w.violate("I9.paused-dropped", "%s: paused since %s, run(s) %v due and not started, but status.missedRuns grew by %d and counts up to %s: %s",
			x.name, modelFmtTime(fs.PausedAt.Time), held, got, modelFmtTime(latest), modelDescribeMissed(st.MissedRuns))
	}
}

// checkStreak is I9.streak, after a clean sync (settled, no fault, its
// status final): the written count is the stored count before, moved by
// R1-R3 over the outcomes of the CronJob's own runs that left
// status.active finished in this sync (in the order they finished), after
// a new resume value zeroed it - when the controller started from the stored status (its
// last sync of the CronJob was clean too, or it is a new process: a sync
// whose status was not written may have counted outcomes it kept) and no
// other finish could have been counted. Also: a count at pauseAfter is
// paused, and without a policy no state is kept.
func (w *modelWalk) checkStreak(res *modelSyncResult) {
	x := res.x
	f := w.failOf(x)
	spec := x.specs[w.lastGen(x)]
	st := w.srv.cronJobs[x.skey].Status
	defer func() {
		for _, j := range res.pre.jobs {
			if job.IsControlledBy(j, string(x.uid)) && modelJobFinished(j) != "" {
				f.absorbed[j.UID] = true
			}
		}
		for _, j := range w.srv.jobs {
			if job.IsControlledBy(j, string(x.uid)) && modelJobFinished(j) != "" {
				f.absorbed[j.UID] = true
			}
		}
	}()
	// A clean sync: the next one starts from the status stored now.
	defer func() { f.validated = f.statusWrites }()
	if spec.FailurePolicy == nil {
		w.checked("I9 no failure state without a policy, checked")
		if st.FailureStreak != nil || modelHasCondition(st.Conditions, cronv1.ConditionPaused) {
			w.violate("I9.streak/kept-without-policy", "%s: no failurePolicy, yet the status keeps failureStreak %+v or the Paused condition", x.name, st.FailureStreak)
		}
		return
	}
	pre := res.pre.stored.FailureStreak
	known := res.pre.failValidated
	count := int32(0)
	if pre != nil {
		count = pre.Count
	}
	// The runs seen finishing: those the stored status listed active.
	var runs []*modelJobRec
	for _, ref := range res.pre.stored.Active {
		j, ok := res.pre.jobs[ref.Name]
		if !ok || j.UID != ref.UID || !job.IsControlledBy(j, string(x.uid)) {
			continue // gone before its outcome was seen, or detached
		}
		if j.DeletionTimestamp != nil {
			known = false
			continue
		}
		if modelJobFinished(j) == "" || f.absorbed[j.UID] {
			continue
		}
		i := slices.IndexFunc(x.jobs, func(r *modelJobRec) bool { return r.uid == j.UID })
		if i < 0 {
			continue // adopted, not a run
		}
		if slices.ContainsFunc(res.pre.stored.RecentRuns, func(r cronv1.RunRecord) bool {
			return r.JobName == j.Name && (r.Outcome == cronv1.OutcomeSucceeded || r.Outcome == cronv1.OutcomeFailed)
		}) {
			// Its outcome is in the stored run history: counted once
			// already (a cache older than that status listed it active
			// again), never again.
			w.stat("I9 streak: an outcome the stored history holds, seen finishing again")
			continue
		}
		runs = append(runs, x.jobs[i])
	}
	// A run absent from the run history the controller trims (to the
	// limit of any spec it may have read) and no newer than its oldest
	// entry, or more absent runs than the history has room for: the
	// history's bound (a count fewer) may apply.
	var running []*modelJobRec
	for _, j := range res.pre.jobs {
		if i := slices.IndexFunc(x.jobs, func(r *modelJobRec) bool { return r.uid == j.UID }); i >= 0 && job.IsControlledBy(j, string(x.uid)) &&
			modelJobFinished(j) == "" && j.DeletionTimestamp == nil {
			running = append(running, x.jobs[i])
		}
	}
	if modelHistoryBound(x, &res.pre.stored, runs, running) {
		w.stat("I9 streak not compared: the run history's bound may apply")
		known = false
	}
	// Any other finish not seen before: the oracle cannot tell whether a
	// status counted it.
	for _, j := range res.pre.jobs {
		if job.IsControlledBy(j, string(x.uid)) && modelJobFinished(j) != "" && !f.absorbed[j.UID] &&
			!slices.ContainsFunc(runs, func(r *modelJobRec) bool { return r.uid == j.UID }) {
			known = false
		}
	}
	// In the order the Jobs finished (R1): the Failed condition's
	// transition or the completion time, else when the run started.
	at := func(r *modelJobRec) time.Time {
		j := res.pre.jobs[r.name]
		if j.Status.CompletionTime != nil {
			return j.Status.CompletionTime.Time
		}
		for _, c := range j.Status.Conditions {
			if c.Type == batchv1.JobFailed && !c.LastTransitionTime.IsZero() {
				return c.LastTransitionTime.Time
			}
		}
		if r.manual {
			return r.createdAt
		}
		return r.scheduled
	}
	slices.SortStableFunc(runs, func(a, b *modelJobRec) int {
		if c := at(a).Compare(at(b)); c != 0 {
			return c
		}
		return cmpString(a.name, b.name)
	})
	// A new resume value first (R7); a streak the sync starts afresh takes
	// the value there as handled.
	if v := w.srv.cronJobs[x.skey].Annotations[cronv1.ResumeAnnotation]; pre != nil && v != "" && planner.RunNowKey(v) != pre.LastResume {
		count = 0
	}
	for _, r := range runs {
		switch modelJobFinished(res.pre.jobs[r.name]) {
		case batchv1.JobFailed:
			count++
		case batchv1.JobComplete:
			count = 0
		}
	}
	if !known {
		w.stat("I9 streak not compared: an outcome the oracle cannot place")
		return
	}
	w.checked("I9 streak compared")
	if count > 0 {
		w.checked("I9 streak compared, failures counted")
	}
	fs := st.FailureStreak
	if fs == nil || fs.Count != count {
		w.violate("I9.streak", "%s: status.failureStreak %+v, want count %d (before %+v; runs seen finishing %v)", x.name, fs, count, pre, modelRecNames(runs))
		return
	}
	if count >= spec.FailurePolicy.PauseAfter && fs.PausedAt == nil {
		w.violate("I9.streak/not-paused", "%s: %d runs in a row failed (pauseAfter %d), not paused: %+v", x.name, count, spec.FailurePolicy.PauseAfter, fs)
		return
	}
}

func modelHasCondition(conds []metav1.Condition, t string) bool {
	return slices.ContainsFunc(conds, func(c metav1.Condition) bool { return c.Type == t })
}

func cmpString(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func modelRecNames(rs []*modelJobRec) []string {
	var out []string
	for _, r := range rs {
		out = append(out, r.name)
	}
	return out
}

// jobsNow copies the Jobs in the store, by name.
func (w *modelWalk) jobsNow() map[string]*batchv1.Job {
	out := make(map[string]*batchv1.Job, len(w.srv.jobs))
	for _, j := range w.srv.jobs {
		out[j.Name] = j.DeepCopy()
	}
	return out
}

// modelPausedCountedUpTo says whether st counts more runs under Paused
// than pre, the newest at or after t.
func modelPausedCountedUpTo(st, pre *cronv1.CronJobStatus, t time.Time) bool {
	for _, m := range st.MissedRuns {
		if m.Reason == cronv1.MissedPaused {
			return m.Count > modelPausedCount(pre) && !m.LastTime.Time.Before(t)
		}
	}
	return false
}

// modelPausedCount is how many runs st counts as missed under Paused.
func modelPausedCount(st *cronv1.CronJobStatus) int64 {
	for _, m := range st.MissedRuns {
		if m.Reason == cronv1.MissedPaused {
			return m.Count
		}
	}
	return 0
}

// checkPausedCount is I9.paused-overcount, after a clean sync that
// started from the stored status: the runs it counted under Paused are
// at most the times due since the last one settled (the last run, or the
// newest counted miss), so no held run counts twice.
func (w *modelWalk) checkPausedCount(res *modelSyncResult) {
	x, now := res.x, w.now()
	st := w.srv.cronJobs[x.skey].Status
	grew := modelPausedCount(&st) - modelPausedCount(&res.pre.stored)
	if grew <= 0 || !res.pre.failValidated {
		return
	}
	gen := w.lastGen(x)
	lower := x.created
	if p := x.prevRun(res.pre.jobsN); p.After(lower) {
		lower = p
	}
	for _, m := range res.pre.stored.MissedRuns {
		if m.Reason != cronv1.MissedScheduleChanged && m.LastTime.After(lower) {
			lower = m.LastTime.Time
		}
	}
	if w.editedSince(x, lower) {
		w.stat("I9 Paused count not compared: the schedule was edited since the last settled run")
		return
	}
	cands, ok := w.enumerate(x, gen, lower, now, 3000, true)
	if !ok {
		w.stat("I9 Paused count not compared: due times not enumerable")
		return
	}
	views := w.views(x, w.ctl.id)
	possible := int64(0)
	for _, t := range cands {
		if w.owed(x, views, t, true) != modelNo {
			possible++
		}
	}
	w.checked("I9 Paused count compared")
	if grew > possible {
		w.violate("I9.paused-overcount", "%s: status.missedRuns under Paused grew by %d, but only %d times came due in (%s, %s]: %s",
			x.name, grew, possible, modelFmtTime(lower), modelFmtTime(now), modelDescribeMissed(st.MissedRuns))
	}
}

// modelRefusedIn says whether st counts, since pre, a run in [from, to)
// refused (a foreign Job holding its name, or the API rejecting its Job).
func modelRefusedIn(st, pre *cronv1.CronJobStatus, from, to time.Time) bool {
	for _, m := range st.MissedRuns {
		if m.Reason != cronv1.MissedNameTaken && m.Reason != cronv1.MissedJobRejected {
			continue
		}
		i := slices.IndexFunc(pre.MissedRuns, func(o cronv1.MissedRuns) bool { return o.Reason == m.Reason })
		if (i < 0 || pre.MissedRuns[i].Count < m.Count) && !m.LastTime.Time.Before(from) && m.LastTime.Time.Before(to) {
			return true
		}
	}
	return false
}

// checkRunHistory is I10, on every status of x the store takes: the run
// history holds at most spec.runHistoryLimit entries (of the generation
// the status observed), one per Job, newest first (I10.shape); each names
// a Job the store made for x (I10.ghost); an outcome, once entered, is
// never changed or entered again while the entry is kept
// (I10.outcome-rewritten); and it is the Job's own (I10.outcome-wrong).
func (w *modelWalk) checkRunHistory(x *modelCJ, cj *cronv1.CronJob) {
	f := w.failOf(x)
	rr := cj.Status.RecentRuns
	w.checked("I10 run histories checked")
	// The limit of the spec the status observed, or of the spec in the
	// store (a decision an edit overtook is written under the new spec's
	// limit, its observed generation the old one: planner.StaleDecision).
	limit := int(ptr.Deref(cj.Spec.RunHistoryLimit, cronv1.DefaultRunHistoryLimit))
	if spec, ok := x.specs[cj.Status.ObservedGeneration]; ok {
		limit = max(limit, int(ptr.Deref(spec.RunHistoryLimit, cronv1.DefaultRunHistoryLimit)))
	}
	sorted := slices.Clone(rr)
	planner.SortRuns(sorted)
	names := map[string]bool{}
	for _, r := range rr {
		names[r.JobName] = true
	}
	if len(rr) > limit || len(names) != len(rr) || !slices.EqualFunc(rr, sorted, func(a, b cronv1.RunRecord) bool { return a.JobName == b.JobName }) {
		w.violate("I10.shape", "%s: status.recentRuns %v: want at most %d, one per Job, newest first", x.name, modelRunNames(rr), limit)
	}
	for _, r := range rr {
		i := slices.IndexFunc(x.jobs, func(j *modelJobRec) bool { return j.name == r.JobName })
		if i < 0 {
			w.violate("I10.ghost", "%s: status.recentRuns has %s, a Job the store never made for it", x.name, r.JobName)
			continue
		}
		if r.Outcome != cronv1.OutcomeSucceeded && r.Outcome != cronv1.OutcomeFailed {
			continue
		}
		if was, ok := f.entered[r.JobName]; ok && was != r.Outcome {
			w.violate("I10.outcome-rewritten", "%s: the outcome of %s was %s, now %s", x.name, r.JobName, was, r.Outcome)
		}
		f.entered[r.JobName] = r.Outcome
		if j, ok := w.srv.jobs[modelKey(metav1.NamespaceDefault, r.JobName)]; ok && j.UID == x.jobs[i].uid {
			want := map[batchv1.JobConditionType]cronv1.RunOutcome{batchv1.JobComplete: cronv1.OutcomeSucceeded, batchv1.JobFailed: cronv1.OutcomeFailed}[modelJobFinished(j)]
			w.checked("I10 outcomes compared with their Jobs")
			if want != r.Outcome {
				w.violate("I10.outcome-wrong", "%s: status.recentRuns says %s %s, its Job says %q", x.name, r.JobName, r.Outcome, modelJobFinished(j))
			}
		}
	}
}

// modelRunNames are a run history's entries as "job:outcome".
func modelRunNames(rr []cronv1.RunRecord) []string {
	var out []string
	for _, r := range rr {
		out = append(out, r.JobName+":"+string(r.Outcome))
	}
	return out
}

// modelHistoryBound reports whether the run history's bound may leave one
// of runs uncounted: under the smallest runHistoryLimit of x's specs, one
// is absent from the stored history (trimmed to that limit) and no newer
// than its oldest entry, or the absent ones, with the running Jobs the
// sync enters (their statuses lost), overflow it.
func modelHistoryBound(x *modelCJ, st *cronv1.CronJobStatus, runs, running []*modelJobRec) bool {
	limit := cronv1.MaxRunHistoryLimit
	for _, spec := range x.specs {
		limit = min(limit, int(ptr.Deref(spec.RunHistoryLimit, cronv1.DefaultRunHistoryLimit)))
	}
	rr := slices.Clone(st.RecentRuns)
	planner.SortRuns(rr)
	rr = rr[:min(len(rr), limit)]
	absent := 0
	for _, r := range runs {
		if slices.ContainsFunc(rr, func(e cronv1.RunRecord) bool { return e.JobName == r.name }) {
			continue
		}
		absent++
		t := r.scheduled
		if r.manual {
			t = r.createdAt
		}
		if len(rr) > 0 {
			oldest := rr[len(rr)-1]
			at := oldest.StartTime
			if oldest.ScheduledTime != nil {
				at = oldest.ScheduledTime
			}
			if at != nil && !t.After(at.Time) {
				return true
			}
		}
	}
	entering := absent
	for _, r := range running {
		if !slices.ContainsFunc(rr, func(e cronv1.RunRecord) bool { return e.JobName == r.name }) {
			entering++
		}
	}
	return len(runs) > 0 && len(rr)+entering > limit
}
