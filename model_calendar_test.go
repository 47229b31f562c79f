package main

// Exclusion Calendars in the model-based test (model_test.go).
//
// The walk keeps a few cluster-scoped Calendars (cal-a, cal-b, and cal-c,
// rarely created: a name CronJobs often find missing) whose dates and ranges,
// in a zone of their own, cover upcoming due times of the walk's CronJobs;
// it creates, edits and deletes them, names them in CronJobs (at creation
// and by edits), and feeds the controller's Calendar cache from their log,
// behind the store as the other caches are. Every sync records how far its
// Calendar cache was (modelSyncRec.cal), so the oracle knows exactly which
// version of each Calendar a sync could read.
//
// The decision for a due time t is made by a sync at t or after; editing a
// Calendar takes effect at the next due time, and a time already due keeps
// the decision made then. So the Calendar states that may have decided t are
// those the syncs of the CronJob at or after t read (its views), under any
// spec generation the controller may have read since (their
// excludeCalendars). A time blocked (excluded, or held for a missing or
// unusable Calendar) under every one of them must never start:
//
// I2.excluded-run-started, I2.held-run-started: a scheduled Job for a time
// every such view excludes, or holds.
//
// A time blocked under some of them is ambiguous: I3 requires no Job for
// it (under Latest, nothing for that sync), and the missed-run window
// around it is compared with a tolerance of one per such time (counted or
// not; letting one older run into a catch-up's limit or not). A time
// blocked under none is judged as before (I1, I3). A count under Excluded
// (CalendarUnresolved) must be for a time some such view excluded (held),
// and the newest due time, blocked under all of them, must be counted:
//
// I3.excluded-without-calendar, I3.held-without-missing-calendar,
// I3.held-run-not-counted.

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	cronv1 "github.com/cronjob-controller/cronjob-controller/pkg/apis/batch/v1"
)

// modelCals is the store's Calendars and their history.
type modelCals struct {
	cur map[string]*cronv1.Calendar
	// log is every write, in order; states[i] is the store after the first
	// i of them (states[0] empty): a cache at position i holds states[i].
	log    []modelCalWrite
	states []map[string]*cronv1.Calendar
	rv     int
	// checked are the missedRuns entries (reason, lastTime) judged already.
	checked map[string]bool
}

type modelCalWrite struct {
	at   time.Time
	name string
	cal  *cronv1.Calendar // nil: deleted
}

var (
	modelCalNames = []string{"cal-a", "cal-b", "cal-c"}
	modelCalZones = []string{"", "UTC", "Europe/Berlin", "America/New_York", "Australia/Lord_Howe"}
)

func (c *modelCals) state(pos int) map[string]*cronv1.Calendar {
	if len(c.states) == 0 {
		return nil
	}
	return c.states[pos]
}

// writeCal stores cal under name (nil deletes it) and logs the write.
func (w *modelWalk) writeCal(name string, cal *cronv1.Calendar) {
	c := &w.cal
	if c.cur == nil {
		c.cur = map[string]*cronv1.Calendar{}
		c.states = []map[string]*cronv1.Calendar{{}}
		c.checked = map[string]bool{}
	}
	if cal == nil {
		delete(c.cur, name)
	} else {
		c.rv++
		cal.ResourceVersion = fmt.Sprint(c.rv)
		c.cur[name] = cal
	}
	c.log = append(c.log, modelCalWrite{at: w.now(), name: name, cal: cal})
	next := make(map[string]*cronv1.Calendar, len(c.cur))
	for k, v := range c.cur {
		next[k] = v
	}
	c.states = append(c.states, next)
}

// catchUpCals lets the Calendar cache see the log up to to.
func (w *modelWalk) catchUpCals(to int) {
	ctl := w.ctl
	for ; ctl.calCursor < to; ctl.calCursor++ {
		e := w.cal.log[ctl.calCursor]
		if e.cal == nil {
			if obj, ok, _ := ctl.calIdx.GetByKey(e.name); ok {
				_ = ctl.calIdx.Delete(obj)
			}
			continue
		}
		if err := ctl.calIdx.Update(e.cal.DeepCopy()); err != nil {
			w.t.Fatal(err)
		}
	}
}

// initialCalendars creates none to two Calendars before the controller
// starts.
func (w *modelWalk) initialCalendars() {
	for _, name := range modelCalNames[:2] {
		if w.rng.Float64() < 0.6 {
			cal := w.randomCalendar(name)
			w.writeCal(name, cal)
			w.logf("  create Calendar %s: %s", name, modelDescribeCal(cal))
		}
	}
}

// calendarStep creates, edits or deletes a Calendar, mostly aiming at x's
// coming runs.
func (w *modelWalk) calendarStep(x *modelCJ) {
	name := modelCalNames[w.rng.Intn(2)]
	if w.rng.Float64() < 0.15 {
		name = modelCalNames[2]
	}
	_, exists := w.cal.cur[name]
	if exists && w.rng.Float64() < 0.25 {
		w.writeCal(name, nil)
		w.logf("  user deletes Calendar %s", name)
		return
	}
	cal := w.randomCalendarFor(name, x)
	w.writeCal(name, cal)
	verb := "creates"
	if exists {
		verb = "edits"
	}
	w.logf("  user %s Calendar %s: %s", verb, name, modelDescribeCal(cal))
}

func (w *modelWalk) randomCalendar(name string) *cronv1.Calendar {
	return w.randomCalendarFor(name, pick(w.rng, w.cjs))
}

// randomCalendarFor makes a Calendar whose dates and ranges cover some of
// x's coming (or just past) runs: the day of one, a stretch of minutes
// around one (sometimes ending exactly on it: the end is exclusive), or
// whole days.
func (w *modelWalk) randomCalendarFor(name string, x *modelCJ) *cronv1.Calendar {
	zone := pick(w.rng, modelCalZones)
	if w.rng.Float64() < 0.03 {
		zone = "Mars/Olympus_Mons" // not in any database: unusable
	}
	loc := time.UTC
	if l, err := time.LoadLocation(zone); err == nil {
		loc = l
	}
	cal := &cronv1.Calendar{
		TypeMeta:   metav1.TypeMeta{APIVersion: cronv1.SchemeGroupVersion.String(), Kind: "Calendar"},
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       cronv1.CalendarSpec{TimeZone: zone},
	}
	var runs []time.Time
	from := w.now().Add(-time.Duration(w.rng.Intn(3)) * time.Hour)
	for t := from; len(runs) < 6; {
		if t = w.nextNamed(x, t); t.IsZero() || t.Sub(w.now()) > 10*24*time.Hour {
			break
		}
		runs = append(runs, t)
	}
	if len(runs) == 0 {
		runs = []time.Time{w.now().Add(time.Duration(w.rng.Intn(48)) * time.Hour)}
	}
	layout := func(t time.Time) string {
		if t.Second() != 0 {
			return "2006-01-02T15:04:05"
		}
		return "2006-01-02T15:04"
	}
	for range 1 + w.rng.Intn(3) {
		t := pick(w.rng, runs).In(loc)
		switch r := w.rng.Float64(); {
		case r < 0.3:
			d := cronv1.CalendarDate(t.Format("2006-01-02"))
			if !slices.Contains(cal.Spec.Dates, d) {
				cal.Spec.Dates = append(cal.Spec.Dates, d)
			}
		case r < 0.75:
			start := t.Add(-time.Duration(w.rng.Intn(90)) * time.Minute).Truncate(time.Minute)
			end := t.Add(time.Duration(1+w.rng.Intn(120)) * time.Minute).Truncate(time.Minute)
			if w.rng.Float64() < 0.3 {
				end = t // exclusive: t itself runs
			}
			if w.rng.Float64() < 0.2 {
				start = t // inclusive: t itself is excluded
			}
			if !start.Before(end) {
				start = end.Add(-time.Minute)
			}
			rg := cronv1.CalendarRange{
				Start: cronv1.CalendarTime(start.In(loc).Format(layout(start))),
				End:   cronv1.CalendarTime(end.In(loc).Format(layout(end))),
			}
			// A bound at a daylight-saving change: a wall time the change
			// skips or repeats (model_moves_test.go).
			if w.rng.Float64() < 0.6 {
				if wall, at, ok := modelDSTWall(w.rng, loc, t); ok {
					w.stat("I3 Calendar ranges with a bound at a daylight-saving change written")
					if at.After(t) || (!at.Before(t) && w.rng.Float64() < 0.5) {
						rg.End = cronv1.CalendarTime(wall)
						rg.Start = cronv1.CalendarTime(at.Add(-time.Duration(1+w.rng.Intn(180)) * time.Minute).In(loc).Format("2006-01-02T15:04"))
					} else {
						rg.Start = cronv1.CalendarTime(wall)
						rg.End = cronv1.CalendarTime(at.Add(time.Duration(1+w.rng.Intn(180)) * time.Minute).In(loc).Format("2006-01-02T15:04"))
					}
				}
			}
			cal.Spec.Ranges = append(cal.Spec.Ranges, rg)
		default:
			end := t.AddDate(0, 0, w.rng.Intn(2))
			cal.Spec.Ranges = append(cal.Spec.Ranges, cronv1.CalendarRange{
				Start: cronv1.CalendarTime(t.Format("2006-01-02")),
				End:   cronv1.CalendarTime(end.Format("2006-01-02")),
			})
		}
	}
	return cal
}

func modelDescribeCal(cal *cronv1.Calendar) string {
	var rs []string
	for _, r := range cal.Spec.Ranges {
		rs = append(rs, fmt.Sprintf("[%s, %s]", r.Start, r.End))
	}
	return fmt.Sprintf("zone=%q dates=%v ranges=%s", cal.Spec.TimeZone, cal.Spec.Dates, strings.Join(rs, " "))
}

// randomCalendarNames is what a CronJob names: none, one or two Calendars,
// sometimes one that does not exist.
func (w *modelWalk) randomCalendarNames() []string {
	var out []string
	for _, n := range modelCalNames {
		p := 0.45
		if n == modelCalNames[2] {
			p = 0.12
		}
		if w.rng.Float64() < p {
			out = append(out, n)
		}
	}
	return out
}

// modelCalExcludes says whether cal excludes t, as the README reads a
// Calendar: a date is the whole day in the Calendar's zone; a range's start
// and end are each a day (from its start, to its end) or a wall-clock time
// (the end exclusive). ok is false when the Calendar cannot be used.
func modelCalExcludes(cal *cronv1.Calendar, t time.Time) (excluded, ok bool) {
	zone := cal.Spec.TimeZone
	if zone == "" {
		zone = "UTC"
	}
	loc, err := time.LoadLocation(zone)
	if err != nil {
		return false, false
	}
	local := t.In(loc)
	day := local.Format("2006-01-02")
	for _, d := range cal.Spec.Dates {
		if string(d) == day {
			excluded = true
		}
	}
	instant := func(v string, end bool) (time.Time, bool) {
		for _, l := range []string{"2006-01-02T15:04:05", "2006-01-02T15:04"} {
			if at, err := time.ParseInLocation(l, v, loc); err == nil {
				return modelWallInstant(v, l, loc, at, end), true
			}
		}
		return time.Time{}, false
	}
	for _, r := range cal.Spec.Ranges {
		s, e := string(r.Start), string(r.End)
		var afterStart, beforeEnd bool
		if len(s) == 10 {
			afterStart = day >= s
		} else if at, ok := instant(s, false); ok {
			afterStart = !t.Before(at)
		} else {
			return false, false
		}
		if len(e) == 10 {
			beforeEnd = day <= e
		} else if at, ok := instant(e, true); ok {
			beforeEnd = t.Before(at)
		} else {
			return false, false
		}
		if afterStart && beforeEnd {
			excluded = true
		}
	}
	return excluded, true
}

// modelCalHold says what the Calendars names, as state holds them, do to a
// run due at t: "" (nothing), Excluded, or CalendarUnresolved (a Calendar
// missing or unusable holds every run).
func modelCalHold(state map[string]*cronv1.Calendar, names []string, t time.Time) string {
	excluded := false
	for _, n := range names {
		cal, ok := state[n]
		if !ok {
			return cronv1.MissedCalendarUnresolved
		}
		ex, usable := modelCalExcludes(cal, t)
		if !usable {
			return cronv1.MissedCalendarUnresolved
		}
		excluded = excluded || ex
	}
	if excluded {
		return cronv1.MissedExcluded
	}
	return ""
}

// calDecisions are the (generation, Calendar cache position) pairs that
// may have decided x's run at t: the syncs of x at t or after, each with
// its Calendar cache, under any generation x's views hold from t on (gens
// nil: every generation), plus extra cache positions.
func (w *modelWalk) calDecisions(x *modelCJ, t time.Time, gens []int64, extra ...int) (outGens []int64, positions []int) {
	if gens == nil {
		for g := range x.specs {
			gens = append(gens, g)
		}
		sort.Slice(gens, func(i, j int) bool { return gens[i] < gens[j] })
	}
	seen := map[int]bool{}
	add := func(p int) {
		if !seen[p] {
			seen[p] = true
			positions = append(positions, p)
		}
	}
	for _, r := range x.records {
		if !r.at.Before(t) {
			add(r.cal)
		}
	}
	for _, p := range extra {
		add(p)
	}
	return gens, positions
}

// calVerdicts are the holds of x's run at t under each decision the
// controller may have made: how many decisions there were, and how many
// excluded or held it.
type modelCalVerdicts struct {
	n, excluded, held int
}

func (v modelCalVerdicts) never() bool  { return v.excluded+v.held == 0 }
func (v modelCalVerdicts) always() bool { return v.n > 0 && v.excluded+v.held == v.n }

func (w *modelWalk) calVerdicts(x *modelCJ, t time.Time, gens []int64, positions []int) modelCalVerdicts {
	var v modelCalVerdicts
	for _, g := range gens {
		names := x.specs[g].ExcludeCalendars
		for _, p := range positions {
			v.n++
			switch modelCalHold(w.cal.state(p), names, t) {
			case cronv1.MissedExcluded:
				v.excluded++
			case cronv1.MissedCalendarUnresolved:
				v.held++
			}
		}
	}
	return v
}

// namesCalendars says whether any generation of x names a Calendar.
func (x *modelCJ) namesCalendars() bool {
	for _, s := range x.specs {
		if len(s.ExcludeCalendars) > 0 {
			return true
		}
	}
	return false
}

// viewGensFrom are the generations x's views hold from the one in force at
// t on.
func modelViewGensFrom(views []modelView, t time.Time) []int64 {
	at := 0
	for i, v := range views {
		if v.at.Before(t) {
			at = i
		}
	}
	var out []int64
	for _, v := range views[min(at, len(views)):] {
		out = modelUnion(out, v.gens)
	}
	return out
}

// calMayHold says whether some decision the controller may have made for
// x's run at t excludes or holds it: a Calendar, or the spec's
// suspendUntil or skipTimes.
func (w *modelWalk) calMayHold(x *modelCJ, views []modelView, t time.Time) bool {
	if x.specMayHold(t) {
		// suspendUntil or skipTimes (model_holds_test.go) hold it.
		return true
	}
	if !x.namesCalendars() {
		return false
	}
	var gens []int64
	if len(views) > 0 {
		gens = modelViewGensFrom(views, t)
	}
	gens, positions := w.calDecisions(x, t, gens, w.ctl.calCursor)
	return !w.calVerdicts(x, t, gens, positions).never()
}

// checkCalendarStart is I2 for Calendars: a scheduled Job, made from
// generation rec.gen by a sync whose Calendar cache is known, for a time
// every decision the controller may have made excludes or holds.
func (w *modelWalk) checkCalendarStart(x *modelCJ, rec *modelJobRec) {
	spec, ok := x.specs[rec.gen]
	if !ok || len(spec.ExcludeCalendars) == 0 {
		return
	}
	extra := []int{w.ctl.calCursor}
	if rec.sync != nil {
		extra = append(extra, rec.sync.cal)
	}
	gens, positions := w.calDecisions(x, rec.scheduled, []int64{rec.gen}, extra...)
	v := w.calVerdicts(x, rec.scheduled, gens, positions)
	w.checked("I2 scheduled Jobs of CronJobs naming Calendars, checked")
	if !v.always() {
		if !v.never() {
			w.stat("I2 Calendar-named Job for a time some version held: allowed")
		}
		return
	}
	cat, what := "I2.excluded-run-started", "excludes"
	if v.excluded == 0 {
		cat, what = "I2.held-run-started", "is missing or unusable and holds"
	}
	var states []string
	for _, p := range positions {
		states = append(states, w.describeCalState(p, spec.ExcludeCalendars))
	}
	w.violate(cat, "Job %s is for %s, which a Calendar of %v %s in every version the controller could have read (%s)",
		rec.name, modelFmtTime(rec.scheduled), spec.ExcludeCalendars, what, strings.Join(states, "; "))
}

func (w *modelWalk) describeCalState(pos int, names []string) string {
	st := w.cal.state(pos)
	var parts []string
	for _, n := range names {
		if c, ok := st[n]; ok {
			parts = append(parts, n+" "+modelDescribeCal(c))
		} else {
			parts = append(parts, n+" missing")
		}
	}
	return fmt.Sprintf("cache at write %d: %s", pos, strings.Join(parts, ", "))
}

// checkCalendarCounts is I3 for the Calendar reasons of status.missedRuns:
// a run counted as Excluded (CalendarUnresolved) was excluded (held) by
// some decision the controller may have made for it.
func (w *modelWalk) checkCalendarCounts(x *modelCJ) {
	cj, ok := w.srv.cronJobs[x.skey]
	if !ok {
		return
	}
	for _, m := range cj.Status.MissedRuns {
		if m.Reason != cronv1.MissedExcluded && m.Reason != cronv1.MissedCalendarUnresolved {
			continue
		}
		t := m.LastTime.Time
		key := fmt.Sprintf("%s|%s|%d", x.skey, m.Reason, t.Unix())
		if w.cal.checked[key] {
			continue
		}
		if w.cal.checked == nil {
			w.cal.checked = map[string]bool{}
		}
		w.cal.checked[key] = true
		gens, positions := w.calDecisions(x, t, nil)
		v := w.calVerdicts(x, t, gens, positions)
		w.checked("I3 Calendar counts checked")
		switch {
		case m.Reason == cronv1.MissedExcluded && v.excluded == 0:
			w.violate("I3.excluded-without-calendar", "%s: the run at %s is counted as Excluded, but no Calendar version the controller could have read excludes it (%d decisions)", x.name, modelFmtTime(t), v.n)
		case m.Reason == cronv1.MissedCalendarUnresolved && v.held == 0:
			w.violate("I3.held-without-missing-calendar", "%s: the run at %s is counted as CalendarUnresolved, but every Calendar it named was there and usable (%d decisions)", x.name, modelFmtTime(t), v.n)
		}
	}
}

// checkHeldCounted is I3 for a held run: after a settled sync whose status
// is final, the newest due run, if every Calendar version the controller may
// have decided it under excludes or holds it, is counted under Excluded or
// CalendarUnresolved (an exclusion wins over the deadline and Forbid; older
// runs are superseded or started around it) - unless Forbid waits on a
// running Job, when older runs may still be to start and the count waits.
func (w *modelWalk) checkHeldCounted(res *modelSyncResult) {
	x, now := res.x, w.now()
	if !x.namesCalendars() {
		return
	}
	gen := w.lastGen(x)
	spec := x.specs[gen]
	if ptr.Deref(spec.Suspend, false) || !w.naming(x, gen).valid {
		return
	}
	lower := x.created
	if p := x.prevRun(res.pre.jobsN); p.After(lower) {
		lower = p
	}
	for _, m := range res.pre.stored.MissedRuns {
		if m.Reason != cronv1.MissedScheduleChanged && m.LastTime.After(lower) {
			lower = m.LastTime.Time
		}
	}
	cands, ok := w.enumerate(x, gen, lower, now, 3000, true)
	if !ok {
		return
	}
	views := w.views(x, w.ctl.id)
	var t time.Time
	for i := len(cands) - 1; i >= 0 && t.IsZero(); i-- {
		switch w.owed(x, views, cands[i], true) {
		case modelUnknown:
			return
		case modelYes:
			t = cands[i]
		}
	}
	if t.IsZero() || x.started(t, len(x.jobs)) {
		return
	}
	gens, positions := w.calDecisions(x, t, modelViewGensFrom(views, t), w.ctl.calCursor)
	v := w.calVerdicts(x, t, gens, positions)
	if !v.always() {
		return
	}
	if spec.ConcurrencyPolicy == cronv1.ForbidConcurrent && (len(res.pre.active) > 0 || len(w.activeJobs(x)) > 0) {
		w.stat("I3 held run count skipped: Forbid waits on a running Job")
		return
	}
	w.checked("I3 newest due run a Calendar holds required to be counted")
	for _, m := range w.srv.cronJobs[x.skey].Status.MissedRuns {
		if (m.Reason == cronv1.MissedExcluded && v.excluded > 0 || m.Reason == cronv1.MissedCalendarUnresolved && v.held > 0) && !m.LastTime.Time.Before(t) {
			return
		}
	}
	w.violate("I3.held-run-not-counted", "%s: the run at %s, the newest due, is excluded or held by every Calendar version the controller could have read, but status.missedRuns does not count it: %s",
		x.name, modelFmtTime(t), modelDescribeMissed(w.srv.cronJobs[x.skey].Status.MissedRuns))
}
