package schedule

import (
	"math/bits"
	"time"

	"github.com/robfig/cron/v3"
)

// Daylight saving time, for schedules that name their hours (30 2 * * *):
//
//   - autumn: a wall time that occurs twice runs once, at its first
//     occurrence;
//   - spring: a wall time skipped by the clock change runs once, at the
//     instant of the change (02:30 runs at 03:00 on that day).
//
// Schedules that fire every hour (0 * * * *, */5 * * * *) follow absolute
// time through both changes: each real hour has its runs, none twice.
//
// The rules hold for changes of any size at any offset: Lord Howe moves its
// clocks by 30 minutes, Chatham keeps a :45 offset.

// dstAware reports whether sched names hours, so that DST shifts its runs,
// and returns its fields and calendar forms (nil when it has none).
func dstAware(sched cron.Schedule) (*cron.SpecSchedule, *dayForms, bool) {
	switch s := sched.(type) {
	case *cron.SpecSchedule:
		return s, nil, s.Hour&allHours != allHours
	case *calendarSchedule:
		return s.spec, &s.forms, s.spec.Hour&allHours != allHours
	}
	return nil, nil, false
}

const (
	allHours   = 1<<24 - 1
	allMinutes = 1<<60 - 1
	allSeconds = 1<<60 - 1
	// cronStar is the bit cron sets in a day field written as * or ?, which
	// decides how the two day fields combine (see dateMatches).
	cronStar = 1 << 63
)

// nextWithDST is the first run strictly after t, by the rules above.
func nextWithDST(sched cron.Schedule, loc *time.Location, t time.Time) time.Time {
	if _, every := sched.(cron.ConstantDelaySchedule); every {
		return sched.Next(t.In(loc)) // a fixed interval: no wall clock involved
	}
	spec, forms, ok := dstAware(sched)
	if !ok {
		return nextAbsolute(sched, loc, t.In(loc))
	}
	return nextWallTime(spec, forms, loc, t.In(loc))
}

// nextAbsolute is the first run strictly after t of a schedule that names
// every hour: the first instant whose wall clock the schedule names.
//
// cron's Next is not trusted with a zone that changes here either: when a
// change skips midnight (Beirut), its day loop steps back into the day
// before and on past the day it wanted ("45 * * * 0" missed the Sunday).
// Between two changes, though, the offset is fixed and the wall clock is
// real time shifted, and cron on a fixed offset is exact. So ask cron on
// the offset in force at t; an answer past the end of that offset's period
// is not one, and the search moves on to the next period.
func nextAbsolute(sched cron.Schedule, loc *time.Location, t time.Time) time.Time {
	from, period := t, t // runs are after from; period is in the one searched
	// Like cron, give up at the end of the fifth year after t's.
	for lastYear := t.Year() + 5; period.Year() <= lastYear; {
		name, offset := period.Zone()
		end := periodEnd(period)
		n := sched.Next(from.In(time.FixedZone(name, offset)))
		// A period that does not end after it starts (times past what the
		// zone database can say, as from a clock gone wrong) ends the
		// search too: the loop must move forward.
		if n.IsZero() || end.IsZero() || n.Before(end) || !end.After(period) {
			return n.In(loc)
		}
		// Next is strictly after its argument, and end itself may be a run.
		from, period = end.Add(-time.Nanosecond), end
	}
	return time.Time{}
}

// nextWallTime is the first run strictly after t of a schedule that names
// its hours.
//
// cron's own Next cannot be patched up for these: it steps through real
// time an hour or a minute at a time and re-checks the earlier fields only
// when a field wraps to 0. Across a change that is not a whole hour on a
// whole-hour offset its answers are wrong in ways no later check can undo:
// in Lord Howe the minute loop runs from 01:59 +10:30 to 02:30 +11 and on to
// 02:45 without looking at the hour (a second run of "45 1 * * *"), and the
// hour loop, stepping from 01:00 +11 into 01:30 +10:30, leaves the minutes
// at :30 so that "0 2 * * *" misses the day; in Chatham it can return its
// argument itself ("45 3 * * *" from 02:45 +12:45 on 2026-04-05), so even a
// loop that re-asks it past a wrong answer need not end.
//
// So the search runs over wall times instead, which have no gaps and no
// repeats: the wall times the schedule names, in order, each mapped to an
// instant by the rules (wallInstant). That map never goes backwards: a
// later wall time's first occurrence, or the change that skipped it, is
// never earlier. So the first wall time whose instant is after t gives the
// answer, and no wall time up to t's own can: it maps to t or earlier.
func nextWallTime(spec *cron.SpecSchedule, forms *dayForms, loc *time.Location, t time.Time) time.Time {
	from := wallClock(t).Truncate(time.Second)
	firstDay := time.Date(from.Year(), from.Month(), from.Day(), 0, 0, 0, 0, time.UTC)
	day := firstDay
	// cron gives up at the end of the fifth year after t's; so does this,
	// for the same answer on schedules that never fire ("0 0 30 2 *").
	for lastYear := day.Year() + 5; day.Year() <= lastYear; {
		if spec.Month&(1<<uint(day.Month())) == 0 {
			day = day.AddDate(0, 1, 1-day.Day())
			continue
		}
		if dateMatches(spec, forms, day) {
			for h := range setBits(spec.Hour & allHours) {
				if day.Equal(firstDay) && h < from.Hour() {
					continue
				}
				for m := range setBits(spec.Minute & allMinutes) {
					for s := range setBits(spec.Second & allSeconds) {
						w := day.Add(time.Duration(h)*time.Hour + time.Duration(m)*time.Minute + time.Duration(s)*time.Second)
						if !w.After(from) {
							continue
						}
						// Usually the first candidate; more only while t is
						// in the second pass of repeated wall times.
						if n := wallInstant(w, loc); n.After(t) {
							return n
						}
					}
				}
			}
		}
		day = day.AddDate(0, 0, 1)
	}
	return time.Time{}
}

// setBits yields the positions of the bits set in b, lowest first.
func setBits(b uint64) func(func(int) bool) {
	return func(yield func(int) bool) {
		for ; b != 0; b &= b - 1 {
			if !yield(bits.TrailingZeros64(b)) {
				return
			}
		}
	}
}

// dateMatches reports whether the schedule's day fields allow the date of
// day, with the calendar forms (calendar.go) if forms is not nil. As in
// every cron, when both day fields are restricted either one is enough
// ("0 0 1 * 1": the 1st and every Monday); when either is * both must hold.
// A form restricts its field as a number does ("0 0 L * 5L": the last day
// and the last Friday).
func dateMatches(spec *cron.SpecSchedule, forms *dayForms, day time.Time) bool {
	dom := spec.Dom&(1<<uint(day.Day())) != 0
	dow := spec.Dow&(1<<uint(day.Weekday())) != 0
	if forms != nil {
		dom = dom || forms.domMatches(day)
		dow = dow || forms.dowMatches(day)
	}
	if spec.Dom&cronStar != 0 || spec.Dow&cronStar != 0 {
		return dom && dow
	}
	return dom || dow
}

// wallClock is the wall clock of t in its zone, held as a time in UTC so
// that wall times compare and add without any zone.
func wallClock(t time.Time) time.Time {
	_, offset := t.Zone()
	return t.UTC().Add(time.Duration(offset) * time.Second)
}

// periodEnd is the end of the zone period t is in: the next instant the
// offset may change, or the zero time if it never does.
func periodEnd(t time.Time) time.Time {
	_, end := t.ZoneBounds()
	if !end.IsZero() && !end.After(t) {
		// golang/go#81583: past the end of a zone's table, in the last UTC
		// day of a leap year, ZoneBounds reports an end before t. The
		// period Go computes then ends at the UTC new year (it is where the
		// next one starts), and no offset changes there. Without this, a
		// search that moves from period to period never moves.
		end = time.Date(t.UTC().Year()+1, 1, 1, 0, 0, 0, 0, time.UTC).In(t.Location())
	}
	return end
}

// maxShift bounds a clock change: offsets run from -12 to +14 hours (Samoa
// moved by 24 hours in 2011, skipping 30 December), so readings of one wall
// time on two offsets, and the instants around a change that the change
// makes ambiguous or skips, are never further apart.
const maxShift = 26 * time.Hour

// wallInstant maps wall time w (held in UTC, as wallClock gives it) to its
// run in loc: the instant w occurs, the first of the two in autumn, and for
// a wall time a spring change skips, the instant of the change.
func wallInstant(w time.Time, loc *time.Location) time.Time {
	first, _ := WallOccurrences(w, loc)
	return first
}

// WallOccurrences are the first and the last instant the wall clock of loc
// shows w (a wall time held in UTC, as time.Parse without a zone gives it):
// the same instant for a wall time that occurs once, the two occurrences
// of one an autumn change repeats, and for one a spring change skips the
// instant of the change, twice.
func WallOccurrences(w time.Time, loc *time.Location) (first, last time.Time) {
	x := time.Date(w.Year(), w.Month(), w.Day(), w.Hour(), w.Minute(), w.Second(), w.Nanosecond(), loc)
	// Near a change time.Date picks one of the two offsets without saying
	// which, so read w on the offsets in force a little before and after x
	// too (not on ZoneBounds, which can be wrong: see periodEnd); a reading
	// whose wall clock is w is an occurrence.
	var lo, hi time.Time
	for _, near := range []time.Time{x.Add(-maxShift), x, x.Add(maxShift)} {
		_, offset := near.Zone()
		at := w.Add(-time.Duration(offset) * time.Second).In(loc)
		if wallClock(at).Equal(w) {
			if first.IsZero() || at.Before(first) {
				first = at
			}
			if last.IsZero() || at.After(last) {
				last = at
			}
			continue
		}
		// Not an occurrence: at is before the gap if its wall clock is
		// short of w, after it otherwise.
		if wallClock(at).Before(w) {
			if lo.IsZero() || at.After(lo) {
				lo = at
			}
		} else if hi.IsZero() || at.Before(hi) {
			hi = at
		}
	}
	if !first.IsZero() || lo.IsZero() || hi.IsZero() {
		return first, last // zero only if loc is stranger than any zone on record
	}
	// w never occurs: the change is the first instant after lo whose wall
	// clock is past w. Changes fall on whole seconds.
	for hi.Sub(lo) > time.Second {
		mid := lo.Add(hi.Sub(lo) / 2).Truncate(time.Second)
		if wallClock(mid).After(w) {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi, hi
}
