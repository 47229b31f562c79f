package schedule

import "time"

// An active window (spec.notBefore, spec.notAfter) bounds the times a
// schedule names: outside it the schedule names none. Every question the
// planner asks (Next, Names, Before, MostRecent) then leaves the times
// outside alone: they are neither runs nor missed, catch-up never reaches
// back before notBefore, and past notAfter there is no next time.

// Within returns s bounded to [notBefore, notAfter], both included; a nil
// bound leaves that side open. s itself is not changed.
func (s *Schedule) Within(notBefore, notAfter *time.Time) *Schedule {
	w := *s
	w.notBefore, w.notAfter = time.Time{}, time.Time{}
	if notBefore != nil {
		w.notBefore = *notBefore
	}
	if notAfter != nil {
		w.notAfter = *notAfter
	}
	return &w
}

// InWindow reports whether t lies in the schedule's window.
func (s *Schedule) InWindow(t time.Time) bool {
	return (s.notBefore.IsZero() || !t.Before(s.notBefore)) && (s.notAfter.IsZero() || !t.After(s.notAfter))
}

// Ended reports whether the window closed before t.
func (s *Schedule) Ended(t time.Time) bool {
	return !s.notAfter.IsZero() && t.After(s.notAfter)
}

// nextInWindow is Next bounded to the window.
func (s *Schedule) nextInWindow(t time.Time) time.Time {
	n := s.nextUnbounded(t)
	if !s.notBefore.IsZero() && !n.IsZero() && n.Before(s.notBefore) {
		if every, ok := s.Every(); ok {
			// The grid Next(t) starts at t's second; its first point at or
			// after notBefore, without stepping through the ones before.
			t0 := t.Truncate(time.Second)
			n = addSteps(t0, max(stepsBetween(t0, s.notBefore, every), 1), every)
		} else {
			n = s.nextUnbounded(s.notBefore.Add(-time.Nanosecond))
		}
	}
	if !s.notAfter.IsZero() && n.After(s.notAfter) {
		return time.Time{}
	}
	return n
}

// everyBefore bounds Before's answer r for @every (a grid point of step
// every) to the window: the latest grid point not after notAfter, and
// none before notBefore or at or before lo.
func (s *Schedule) everyBefore(r, lo time.Time, every time.Duration) time.Time {
	if r.IsZero() {
		return r
	}
	if !s.notAfter.IsZero() && r.After(s.notAfter) {
		r = addSteps(r, -stepsBetween(s.notAfter, r, every), every)
		if !r.After(lo) {
			return time.Time{}
		}
	}
	if !s.notBefore.IsZero() && r.Before(s.notBefore) {
		return time.Time{}
	}
	return r
}
