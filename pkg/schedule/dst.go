package schedule

import (
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

// dstAware reports whether sched names hours, so that DST shifts its runs.
func dstAware(sched cron.Schedule) (*cron.SpecSchedule, bool) {
	spec, ok := sched.(*cron.SpecSchedule)
	if !ok {
		return nil, false
	}
	const allHours = 1<<24 - 1
	return spec, spec.Hour&allHours != allHours
}

// nextWithDST is cron's Next adjusted for the two rules above.
func nextWithDST(sched cron.Schedule, loc *time.Location, t time.Time) time.Time {
	t = t.In(loc)
	n := sched.Next(t)
	if _, ok := dstAware(sched); !ok {
		return n
	}
	for !n.IsZero() && repeatedWallTime(n) {
		n = sched.Next(n)
	}
	if g := skippedRun(sched, t, n); !g.IsZero() {
		return g
	}
	return n
}

// repeatedWallTime reports whether the wall time of n already occurred
// earlier with a larger UTC offset (the second pass through a fall-back).
func repeatedWallTime(n time.Time) bool {
	_, offset := n.Zone()
	for _, d := range []time.Duration{30 * time.Minute, time.Hour, 2 * time.Hour} {
		p := n.Add(-d)
		_, pOffset := p.Zone()
		if pOffset != offset && sameWallClock(p, n) {
			return true
		}
	}
	return false
}

func sameWallClock(a, b time.Time) bool {
	ay, am, ad := a.Date()
	by, bm, bd := b.Date()
	return ay == by && am == bm && ad == bd && a.Hour() == b.Hour() && a.Minute() == b.Minute() && a.Second() == b.Second()
}

// skippedRun returns the instant of a spring-forward change in (t, n) if
// the schedule names a wall time inside the hour the change skips, and the
// zero time otherwise.
func skippedRun(sched cron.Schedule, t, n time.Time) time.Time {
	if n.IsZero() {
		return time.Time{}
	}
	_, before := t.Zone()
	_, after := n.Zone()
	if after <= before {
		return time.Time{}
	}
	// The change: the first second whose offset is the new one.
	lo, hi := t, n
	for hi.Sub(lo) > time.Second {
		mid := lo.Add(hi.Sub(lo) / 2)
		if _, o := mid.Zone(); o == before {
			lo = mid
		} else {
			hi = mid
		}
	}
	change := hi.Truncate(time.Second)
	if !change.After(t) || !change.Before(n) {
		return time.Time{}
	}
	// Read the schedule on the old offset: a match before change+gap there
	// is a wall time the clock jumped over.
	old := time.FixedZone("", before)
	gap := time.Duration(after-before) * time.Second
	v := sched.Next(change.Add(-time.Second).In(old))
	if !v.IsZero() && v.Before(change.Add(gap)) && !v.Before(change) {
		return change
	}
	return time.Time{}
}
