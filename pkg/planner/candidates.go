package planner

import (
	"slices"
	"time"

	"github.com/cronjob-controller/cronjob-controller/pkg/schedule"
)

// previousSchedule is an earlier schedule, in force until it was seen
// replaced; a nil sched names no time.
type previousSchedule struct {
	sched *schedule.Schedule
	until time.Time
}

// maxWalk bounds the leaps one walk makes back from the most recent time,
// so a long outage or an edit whose schedules rarely agree cannot make a
// sync slow. A leap passes over every time an earlier schedule refuses at
// once, so only schedules that almost never agree, over a long outage, reach
// it; older times are then not found: they neither start nor count.
const maxWalk = 1000

// candidates walks the runs in (base, due.Time], newest first: the times the
// schedule in force names that every earlier schedule still in force at
// that time names too.
type candidates struct {
	sched *schedule.Schedule
	prev  []previousSchedule
	base  time.Time

	// next is the time the walk looks at next; zero when it is over.
	next  time.Time
	steps int
	// found counts the runs the walk has returned.
	found int
}

func newCandidates(sched *schedule.Schedule, prev []previousSchedule, base time.Time, due schedule.Due) *candidates {
	return &candidates{sched: sched, prev: prev, base: base, next: due.Time}
}

// pop returns the next run, newest first, or false when there is none.
func (c *candidates) pop() (time.Time, bool) {
	for !c.next.IsZero() && c.steps < maxWalk {
		t := c.next
		c.steps++
		bound, allowed := c.refusal(t)
		switch {
		case allowed:
			c.next = c.sched.Before(t, c.base)
			c.found++
			return t, true
		case bound.IsZero():
			c.next = time.Time{}
		default:
			// The latest time of the schedule in force at or before bound.
			c.next = c.sched.Before(bound.Add(time.Nanosecond), c.base)
		}
	}
	return time.Time{}, false
}

// refusal reports whether every earlier schedule in force at t names t. If
// not, bound is the latest instant before t that the ones refusing t could
// all still name, zero when no earlier time can be a run.
func (c *candidates) refusal(t time.Time) (bound time.Time, allowed bool) {
	allowed = true
	for _, p := range c.prev {
		if p.until.Before(t) || (p.sched != nil && c.names(p.sched, t)) {
			continue
		}
		if p.sched == nil {
			// It names nothing, and rules every earlier time too.
			return time.Time{}, false
		}
		earlier := p.sched.Before(t, c.base)
		if earlier.IsZero() {
			return time.Time{}, false
		}
		if allowed || earlier.Before(bound) {
			bound = earlier
		}
		allowed = false
	}
	return bound, allowed
}

// names reports whether s names t. An @every schedule names the times on
// its grid from the last run settled, as the schedule in force counts them.
func (c *candidates) names(s *schedule.Schedule, t time.Time) bool {
	if every, ok := s.Every(); ok {
		return schedule.OnGrid(c.base.Truncate(time.Second), t, every) && s.InWindow(t)
	}
	return s.Names(t)
}

// newest returns up to n runs, newest first, as long as keep (nil: always)
// holds; the walk stops at the first it does not.
func (c *candidates) newest(n int, keep func(time.Time) bool) []time.Time {
	return c.newestTaking(n, keep, nil)
}

// newestTaking is newest where the runs free says are no runs (held on
// purpose: a Calendar's exclusion, suspendUntil, skipTimes) come along but
// take no place of the n, so a held time never crowds an owed run out of a
// catch-up limit. At most schedule.ManyMissed free ones come along; the
// rest are left for older, which counts them held all the same.
func (c *candidates) newestTaking(n int, keep, free func(time.Time) bool) []time.Time {
	var out []time.Time
	for taken, freed := 0, 0; taken < n; {
		save := *c
		t, ok := c.pop()
		if !ok {
			break
		}
		if keep != nil && !keep(t) {
			*c = save // leave it for older
			break
		}
		isFree := free != nil && free(t)
		if isFree && freed == schedule.ManyMissed {
			*c = save
			break
		}
		out = append(out, t)
		if isFree {
			freed++
		} else {
			taken++
		}
	}
	return out
}

// olderRuns counts the runs the walk has not returned, up to ManyMissed+1.
type olderRuns struct {
	n int64
	// beyondDeadline of them are past the starting deadline, the latest of
	// those at latestBeyondDeadline; the latest of the others is
	// latestWithin.
	beyondDeadline                     int64
	latestBeyondDeadline, latestWithin time.Time
	// held of them a hold (a Calendar, a pause) keeps from starting,
	// whatever their deadline, counted per reason in heldBy.
	held   int64
	heldBy []heldTally
	// times are the runs walked, newest first.
	times []time.Time
}

// heldTally counts the older runs held for one reason, the latest at
// latest.
type heldTally struct {
	reason string
	n      int64
	latest time.Time
}

// older counts the rest of the walk; hold (nil: none) and tooLate
// classify each run.
func (c *candidates) older(tooLate func(time.Time) bool, hold func(time.Time) string) olderRuns {
	var o olderRuns
	for o.n <= schedule.ManyMissed {
		t, ok := c.pop()
		if !ok {
			break
		}
		o.n++
		o.times = append(o.times, t)
		if hold != nil {
			if reason := hold(t); reason != "" {
				i := slices.IndexFunc(o.heldBy, func(h heldTally) bool { return h.reason == reason })
				if i < 0 {
					// The walk goes newest first: the first is the latest.
					o.heldBy = append(o.heldBy, heldTally{reason: reason, latest: t})
					i = len(o.heldBy) - 1
				}
				o.heldBy[i].n++
				o.held++
				continue
			}
		}
		switch {
		case tooLate != nil && tooLate(t):
			if o.beyondDeadline == 0 {
				o.latestBeyondDeadline = t
			}
			o.beyondDeadline++
		case o.latestWithin.IsZero():
			o.latestWithin = t
		}
	}
	return o
}
