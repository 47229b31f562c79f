package planner

import (
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	cronv1 "github.com/cronjob-controller/cronjob-controller/pkg/apis/batch/v1"
	"github.com/cronjob-controller/cronjob-controller/pkg/schedule"
)

// Event and condition reasons of exclusion calendars.
const (
	// ReasonRunExcluded (Normal): a Calendar excludes a due run's time.
	ReasonRunExcluded = "RunExcluded"
	// ReasonRunHeld (Normal): a run due while a named Calendar could not
	// be resolved is not started and counted missed (never started later);
	// the CalendarNotFound or CalendarInvalid Warning said why.
	ReasonRunHeld = "RunHeld"
	// ReasonCalendarNotFound (Warning, and the condition's reason): a
	// Calendar in spec.excludeCalendars does not exist.
	ReasonCalendarNotFound = "CalendarNotFound"
	// ReasonCalendarInvalid (Warning, and the condition's reason): a named
	// Calendar cannot be used (its time zone is not in the controller's
	// database, or a date the schema did not check is malformed).
	ReasonCalendarInvalid = "CalendarInvalid"

	reasonCalendarsResolved = "Resolved"

	// ReasonRunSkipped (Normal): spec.skipTimes names a due run's time.
	ReasonRunSkipped = "RunSkipped"
)

// dayLayout and the time layouts are the forms a Calendar's dates and
// range ends take (the schema refuses others).
const (
	dayLayout     = "2006-01-02"
	minuteLayout  = "2006-01-02T15:04"
	secondsLayout = "2006-01-02T15:04:05"
)

// calendar is a Calendar made ready to ask about instants.
type calendar struct {
	name   string
	loc    *time.Location
	dates  map[string]bool
	ranges []span
}

// span is a CalendarRange. A bound given as a day is kept as the day, and
// compared with the day of an instant in the Calendar's zone (so a day is
// whole whatever DST does to its length); one given as a time is kept as
// the instant.
type span struct {
	startDay, endDay string
	start, end       time.Time
}

// exclusions is what the Calendars of a CronJob say about its due times.
type exclusions struct {
	calendars []calendar
	// unresolved says why at least one named Calendar cannot be used: then
	// every due time is held.
	unresolvedReason, unresolvedMessage string
}

// hold reports whether a run due at t must not start, and why
// (cronv1.MissedExcluded or cronv1.MissedCalendarUnresolved), with the
// calendar that excludes it.
func (e *exclusions) hold(t time.Time) (reason, calendar string) {
	if e == nil {
		return "", ""
	}
	if e.unresolvedReason != "" {
		return cronv1.MissedCalendarUnresolved, ""
	}
	for _, c := range e.calendars {
		if c.excludes(t) {
			return cronv1.MissedExcluded, c.name
		}
	}
	return "", ""
}

func (c *calendar) excludes(t time.Time) bool {
	local := t.In(c.loc)
	day := local.Format(dayLayout)
	if c.dates[day] {
		return true
	}
	for _, s := range c.ranges {
		afterStart := s.startDay != "" && day >= s.startDay || s.startDay == "" && !local.Before(s.start)
		beforeEnd := s.endDay != "" && day <= s.endDay || s.endDay == "" && local.Before(s.end)
		if afterStart && beforeEnd {
			return true
		}
	}
	return false
}

// Excludes reports whether cal excludes an instant (the kubectl plugin and
// tests ask); an error says the Calendar cannot be used.
func Excludes(cal *cronv1.Calendar, t time.Time) (bool, error) {
	c, err := parseCalendar(cal)
	if err != nil {
		return false, err
	}
	return c.excludes(t), nil
}

// parseCalendar reads a Calendar. The schema checks the shapes; this
// checks them again, since an object from before a rule, or written past
// the schema, must not crash or mislead the controller.
func parseCalendar(cal *cronv1.Calendar) (calendar, error) {
	zone := cal.Spec.TimeZone
	if zone == "" {
		zone = "UTC"
	}
	loc, err := schedule.LoadLocation(zone)
	if err != nil {
		return calendar{}, err
	}
	c := calendar{name: cal.Name, loc: loc, dates: make(map[string]bool, len(cal.Spec.Dates))}
	for _, d := range cal.Spec.Dates {
		if _, err := time.ParseInLocation(dayLayout, string(d), loc); err != nil {
			return calendar{}, fmt.Errorf("date %s is not a day YYYY-MM-DD", quote(string(d)))
		}
		c.dates[string(d)] = true
	}
	for i, r := range cal.Spec.Ranges {
		var s span
		var err error
		if s.startDay, s.start, err = bound(string(r.Start), loc, false); err == nil {
			s.endDay, s.end, err = bound(string(r.End), loc, true)
		}
		if err != nil {
			return calendar{}, fmt.Errorf("range %d: %w", i, err)
		}
		c.ranges = append(c.ranges, s)
	}
	return c, nil
}

// bound reads a range's start or end: a day, or a wall-clock time in loc.
// A range is a wall-clock window: a time the clock shows twice is the first
// occurrence for a start and the last for an end (the window holds both),
// and a time it skips is the instant of the change.
func bound(v string, loc *time.Location, end bool) (day string, at time.Time, err error) {
	if _, err := time.ParseInLocation(dayLayout, v, loc); err == nil {
		return v, time.Time{}, nil
	}
	for _, layout := range []string{minuteLayout, secondsLayout} {
		if wall, err := time.Parse(layout, v); err == nil {
			first, last := schedule.WallOccurrences(wall, loc)
			if end {
				return "", last, nil
			}
			return "", first, nil
		}
	}
	return "", time.Time{}, fmt.Errorf("%s is neither a day YYYY-MM-DD nor a time YYYY-MM-DDTHH:MM[:SS]", quote(v))
}

// heldRunsFate says what becomes of a run due while a Calendar is
// unresolved: holdRuns counts it missed in the sync that holds it, which
// settles its time, so no later sync, the Calendar there or not, starts it.
const heldRunsFate = "are not started (counted missed as " + cronv1.MissedCalendarUnresolved + ", not started later)"

// resolveCalendars reads the Calendars spec.excludeCalendars names from
// found (by name; a name absent was not found) and sets the
// CalendarsResolved condition, with a Warning when a Calendar becomes
// unusable. A CronJob naming none has no exclusions and no condition.
func (p *Plan) resolveCalendars(found map[string]*cronv1.Calendar, parsed *CalendarCache) *exclusions {
	names := p.cj.Spec.ExcludeCalendars
	if len(names) == 0 {
		meta.RemoveStatusCondition(&p.Status.Conditions, cronv1.ConditionCalendarsResolved)
		return nil
	}
	e := &exclusions{}
	var missing, invalid []string
	for _, name := range names {
		cal, ok := found[name]
		if !ok || cal == nil {
			missing = append(missing, quote(name))
			continue
		}
		c, err := parsed.parse(cal)
		if err != nil {
			invalid = append(invalid, fmt.Sprintf("%s: %v", quote(name), err))
			continue
		}
		e.calendars = append(e.calendars, c)
	}
	switch {
	case len(missing) > 0:
		e.unresolvedReason = ReasonCalendarNotFound
		e.unresolvedMessage = fmt.Sprintf("Calendar %s not found; runs due until it exists %s", strings.Join(missing, ", "), heldRunsFate)
	case len(invalid) > 0:
		e.unresolvedReason = ReasonCalendarInvalid
		e.unresolvedMessage = fmt.Sprintf("Calendar %s; runs due until it is fixed %s", strings.Join(invalid, "; "), heldRunsFate)
	}
	if e.unresolvedReason == "" {
		p.setCondition(cronv1.ConditionCalendarsResolved, metav1.ConditionTrue, reasonCalendarsResolved, "")
		return e
	}
	if p.setCondition(cronv1.ConditionCalendarsResolved, metav1.ConditionFalse, e.unresolvedReason, e.unresolvedMessage) {
		p.event(corev1.EventTypeWarning, e.unresolvedReason, "%s", e.unresolvedMessage)
	}
	return e
}

// holdRuns takes the runs the Calendars hold out of runs (oldest first),
// counting them as missed once no run older than them is still to start:
// those older than every run left are counted now; the others when the
// creates before them are reported (countHeld), so a create that fails and
// stays owed is never passed over by a count that settles the time after
// it.
func (p *Plan) holdRuns(runs []time.Time) []time.Time {
	if p.excl == nil && !p.holding() && !p.specHolds() {
		return runs
	}
	kept := runs[:0:0]
	for _, t := range runs {
		reason, cal := p.excl.hold(t)
		if reason == "" {
			reason = p.specHold(t)
		}
		if reason == "" {
			// A Calendar's exclusion, a suspendUntil or a skip wins: the
			// time is no run at all, so no trial either.
			reason = p.pauseHold(t)
		}
		if reason != "" {
			p.held = append(p.held, heldRun{at: t, reason: reason, calendar: cal})
			p.notRun(t)
			continue
		}
		kept = append(kept, t)
	}
	if len(kept) == 0 {
		p.countHeld(time.Time{})
	} else {
		p.countHeld(kept[0])
	}
	return kept
}

// heldRun is a run a Calendar holds, not counted yet.
type heldRun struct {
	at               time.Time
	reason, calendar string
}

// countHeld counts the held runs before until (all of them when zero), with
// a Normal Event for each a Calendar holds.
func (p *Plan) countHeld(until time.Time) {
	n := 0
	for _, h := range p.held {
		if !until.IsZero() && !h.at.Before(until) {
			break
		}
		n++
		if !p.missed(h.reason, h.at, 1) {
			continue
		}
		switch h.reason {
		case cronv1.MissedPaused, cronv1.MissedSuspendedUntil:
			// The Paused or Ready condition says why; the count is the
			// record.
		case cronv1.MissedSkipped:
			p.event(corev1.EventTypeNormal, ReasonRunSkipped, "Not starting the run of %s: spec.skipTimes skips it", formatTime(h.at))
		case cronv1.MissedExcluded:
			p.event(corev1.EventTypeNormal, ReasonRunExcluded, "Not starting the run of %s: Calendar %s excludes it", formatTime(h.at), quote(h.calendar))
		default:
			p.event(corev1.EventTypeNormal, ReasonRunHeld, "Not starting the run of %s: %s", formatTime(h.at), p.excl.unresolvedMessage)
		}
	}
	p.held = slices.Delete(p.held, 0, n)
}

// reportedScheduled counts the held runs a reported scheduled create c
// released: those before the next scheduled create still to be made.
func (p *Plan) reportedScheduled(c Create) {
	if len(p.held) == 0 {
		return
	}
	next := time.Time{}
	for _, o := range p.Creates {
		if !o.Manual && o.Time.After(c.Time) {
			next = o.Time
			break
		}
	}
	p.countHeld(next)
}

// heldOnPurpose reports whether a Calendar or the spec (suspendUntil,
// skipTimes) holds a run due at t: no run at all, so it takes no place of
// a catch-up limit. (A pause's hold is not on purpose: the runs it holds
// are runs, and one of them may be the trial.)
func (p *Plan) heldOnPurpose(t time.Time) bool {
	reason, _ := p.excl.hold(t)
	return reason != "" || p.specHold(t) != ""
}

// olderHold sorts the runs older walks past: a held one counts for its
// hold reason, whatever its deadline.
func (p *Plan) olderHold() func(time.Time) string {
	if p.excl == nil && !p.holding() && !p.specHolds() {
		return nil
	}
	return func(t time.Time) string {
		if reason, _ := p.excl.hold(t); reason != "" {
			return reason
		}
		if reason := p.specHold(t); reason != "" {
			return reason
		}
		// Never the trial: that is one of the runs considered. A run due
		// before the pause was passed over as any run is.
		if p.paused() && !t.Before(p.Status.FailureStreak.PausedAt.Time) || p.heldBack(t) {
			return cronv1.MissedPaused
		}
		return ""
	}
}
