package schedule

import (
	"errors"
	"time"

	"github.com/robfig/cron/v3"
)

// ManyMissed is how many missed times make a CronJob worth a warning. Past it
// the times are no longer counted one by one.
const ManyMissed = 100

// ErrNeverFires is returned when a schedule has no run after a given time.
var ErrNeverFires = errors.New("schedule has no next run time")

// Due describes the scheduled times between a CronJob's last run and now.
type Due struct {
	// Time is the most recent scheduled time in (earliest, now]; zero if none.
	Time time.Time
	// Missed is how many scheduled times fall in (earliest, now], Time
	// included. It is exact up to ManyMissed and ManyMissed+1 beyond.
	Missed int
	// Next is the first scheduled time after now; zero if there is none.
	Next time.Time
}

// TooMany reports whether more than ManyMissed times were missed.
func (d Due) TooMany() bool { return d.Missed > ManyMissed }

// Names reports whether t is one of the schedule's own times. An @every
// schedule has none: its times count from wherever its last run was.
func (s *Schedule) Names(t time.Time) bool {
	if _, ok := s.Every(); ok {
		return false
	}
	return s.Next(t.Add(-time.Nanosecond)).Equal(t)
}

// Every returns the interval of an @every schedule, and false for any other.
func (s *Schedule) Every() (time.Duration, bool) {
	every, ok := s.cron.(cron.ConstantDelaySchedule)
	return every.Delay, ok
}

// Before is the last scheduled time after lo and before t, or the zero
// time if there is none. Like lastNotAfter it binary-searches for the
// largest x with Next(x) < t.
func (s *Schedule) Before(t, lo time.Time) time.Time {
	if every, ok := s.Every(); ok {
		// @every times form a grid from lo, as in MostRecent (cron drops
		// lo's fraction of a second).
		lo = lo.Truncate(time.Second)
		if !t.After(lo.Add(every)) {
			return time.Time{}
		}
		// The last grid point before t: one step short of the first at
		// or after it.
		steps := stepsBetween(lo, t, every) - 1
		return s.everyBefore(addSteps(lo, steps, every), lo, every)
	}
	if n := s.Next(lo); n.IsZero() || !n.Before(t) {
		return time.Time{}
	}
	hi := t
	for hi.Sub(lo) > time.Second {
		mid := lo.Add(hi.Sub(lo) / 2)
		if n := s.Next(mid); !n.IsZero() && n.Before(t) {
			lo = mid
		} else {
			hi = mid
		}
	}
	return s.Next(lo)
}

// MostRecent finds the scheduled times in (earliest, now]. The work is
// bounded however long ago earliest is: past ManyMissed times it jumps
// straight to the most recent one instead of walking every missed time.
//
// Past the end of an active window (window.go) the search stops at
// notAfter, and a window with no time left after earliest has nothing due
// and no next time; that is no error.
func (s *Schedule) MostRecent(earliest, now time.Time) (Due, error) {
	if s.Ended(now) {
		now = s.notAfter
	}
	t := s.Next(earliest)
	if t.IsZero() {
		if !s.notAfter.IsZero() && s.nextUnbounded(earliest).After(s.notAfter) {
			return Due{}, nil
		}
		return Due{}, ErrNeverFires
	}
	if t.After(now) {
		return Due{Next: t}, nil
	}
	for missed := 1; missed <= ManyMissed; missed++ {
		next := s.Next(t)
		if next.IsZero() || next.After(now) {
			return Due{Time: t, Missed: missed, Next: next}, nil
		}
		t = next
	}
	// t is the (ManyMissed+1)th time; lastNotAfter needs its successor to be
	// due too, and when it is not, t is the most recent.
	if next := s.Next(t); next.IsZero() || next.After(now) {
		return Due{Time: t, Missed: ManyMissed + 1, Next: next}, nil
	}
	recent := s.lastNotAfter(t, now)
	return Due{Time: recent, Missed: ManyMissed + 1, Next: s.Next(recent)}, nil
}

// lastNotAfter returns the last scheduled time ≤ now, given a scheduled
// time lo ≤ now whose successor is also ≤ now.
func (s *Schedule) lastNotAfter(lo, now time.Time) time.Time {
	if every, ok := s.cron.(cron.ConstantDelaySchedule); ok {
		// @every times form a grid from lo (cron keeps them on whole seconds).
		steps := stepsBetween(lo, now, every.Delay)
		if t := addSteps(lo, steps, every.Delay); !t.After(now) {
			return t
		}
		return addSteps(lo, steps-1, every.Delay)
	}
	// Next is monotonic and returns the first scheduled second after its
	// argument, so the answer is Next(x) for the largest x with Next(x) ≤ now:
	// a binary search over [lo, now] to one-second precision.
	hi := now
	for hi.Sub(lo) > time.Second {
		mid := lo.Add(hi.Sub(lo) / 2)
		if n := s.Next(mid); !n.IsZero() && !n.After(now) {
			lo = mid
		} else {
			hi = mid
		}
	}
	return s.Next(lo)
}
