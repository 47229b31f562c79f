package schedule

import (
	"math"
	"time"
)

// Seconds is n seconds as a duration, saturated: a count of seconds beyond
// what a duration holds (about 292 years) is the longest duration, and a
// negative one is 0. Every duration built from a number a user typed goes
// through it, so no input wraps to a negative duration.
func Seconds(n int64) time.Duration {
	const most = math.MaxInt64 / int64(time.Second)
	switch {
	case n <= 0:
		return 0
	case n > most:
		return math.MaxInt64
	}
	return time.Duration(n) * time.Second
}

// stepsBetween is how many steps of every (whole seconds, as @every keeps
// them) reach from from to to or past it: ceil((to-from)/every), 0 when to
// is not after from. A span longer than a duration holds is counted in
// seconds, so a window centuries away is not mistaken for a near one.
func stepsBetween(from, to time.Time, every time.Duration) int64 {
	if !to.After(from) {
		return 0
	}
	if d := to.Sub(from); d < math.MaxInt64-every {
		return int64((d + every - 1) / every)
	}
	sec := to.Unix() - from.Unix()
	if to.Nanosecond() > from.Nanosecond() {
		sec++
	}
	step := max(int64(every/time.Second), 1)
	return (sec + step - 1) / step
}

// addSteps is t moved by k steps of every (whole seconds), exactly, however
// far that is.
func addSteps(t time.Time, k int64, every time.Duration) time.Time {
	if k == 0 {
		return t
	}
	if per := int64(every); k > 0 && k <= math.MaxInt64/per || k < 0 && k >= math.MinInt64/per {
		return t.Add(time.Duration(k) * every)
	}
	return time.Unix(t.Unix()+k*int64(every/time.Second), int64(t.Nanosecond())).In(t.Location())
}

// OnGrid reports whether t is a point of the grid from base in steps of
// every (whole seconds, as @every keeps them), however far apart the two.
func OnGrid(base, t time.Time, every time.Duration) bool {
	if t.Before(base) {
		return false
	}
	return addSteps(base, stepsBetween(base, t, every), every).Equal(t)
}
