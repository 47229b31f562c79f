package schedule

import (
	"errors"
	"time"

	"github.com/robfig/cron/v3"

	batchv1 "github.com/cronjob-controller/cronjob-controller/pkg/apis/batch/v1"
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

// Earliest is the instant after which a CronJob's next run is searched for:
// its last scheduled run, or its creation when it never ran, or the last
// change of its schedule if that is later.
func Earliest(cj *batchv1.CronJob) time.Time {
	earliest := cj.CreationTimestamp.Time
	if cj.Status.LastScheduleTime != nil {
		earliest = cj.Status.LastScheduleTime.Time
	}
	if changed := cj.Status.ScheduleChangeTime; changed != nil && changed.After(earliest) {
		earliest = changed.Time
	}
	return earliest
}

// NoneGrace is how late a run may start under catchUpPolicy None.
const NoneGrace = time.Minute

// StartingDeadline is how late a run of cj may start: its
// startingDeadlineSeconds, capped at NoneGrace under catchUpPolicy None. Nil
// means no limit.
func StartingDeadline(cj *batchv1.CronJob) *time.Duration {
	var d *time.Duration
	if s := cj.Spec.StartingDeadlineSeconds; s != nil {
		v := time.Duration(*s) * time.Second
		d = &v
	}
	if cj.Spec.CatchUpPolicy == batchv1.CatchUpNone && (d == nil || *d > NoneGrace) {
		v := NoneGrace
		d = &v
	}
	return d
}

// TooLate reports whether a run scheduled at t may no longer start at now.
func TooLate(cj *batchv1.CronJob, t, now time.Time) bool {
	d := StartingDeadline(cj)
	return d != nil && t.Add(*d).Before(now)
}

// OldestOfNewest returns the oldest of the n most recent scheduled times in
// (from, now], or the zero time if there is none.
func (s *Schedule) OldestOfNewest(from, now time.Time, n int) (time.Time, error) {
	window, err := s.MostRecent(from, now)
	if err != nil || window.Time.IsZero() {
		return time.Time{}, err
	}
	if window.Missed <= ManyMissed {
		t := s.Next(from)
		for skip := window.Missed - n; skip > 0; skip-- {
			t = s.Next(t)
		}
		return t, nil
	}
	t := window.Time
	for range n - 1 {
		t = s.previous(t, from)
	}
	return t, nil
}

// previous is the last scheduled time before t and after lo, found like
// lastNotAfter: the largest x with Next(x) < t, then Next(x).
func (s *Schedule) previous(t, lo time.Time) time.Time {
	if every, ok := s.cron.(cron.ConstantDelaySchedule); ok {
		return t.Add(-every.Delay)
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
func (s *Schedule) MostRecent(earliest, now time.Time) (Due, error) {
	t := s.Next(earliest)
	if t.IsZero() {
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
	recent := s.lastNotAfter(t, now)
	return Due{Time: recent, Missed: ManyMissed + 1, Next: s.Next(recent)}, nil
}

// lastNotAfter returns the last scheduled time ≤ now, given a scheduled
// time lo ≤ now whose successor is also ≤ now.
func (s *Schedule) lastNotAfter(lo, now time.Time) time.Time {
	if every, ok := s.cron.(cron.ConstantDelaySchedule); ok {
		// @every times form a grid from lo (cron keeps them on whole seconds).
		steps := now.Sub(lo) / every.Delay
		return lo.Add(steps * every.Delay)
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
