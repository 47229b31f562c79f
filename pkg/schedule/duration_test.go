package schedule

import (
	"math"
	"testing"
	"time"
)

func TestSecondsSaturates(t *testing.T) {
	for _, c := range []struct {
		n    int64
		want time.Duration
	}{
		{0, 0}, {-1, 0}, {math.MinInt64, 0}, {90, 90 * time.Second},
		{math.MaxInt64 / int64(time.Second), time.Duration(math.MaxInt64/int64(time.Second)) * time.Second},
		{math.MaxInt64/int64(time.Second) + 1, math.MaxInt64}, {10_000_000_000, math.MaxInt64}, {math.MaxInt64, math.MaxInt64},
	} {
		if got := Seconds(c.n); got != c.want {
			t.Errorf("Seconds(%d) = %v, want %v", c.n, got, c.want)
		}
	}
}

// An @every grid bounded by a window centuries away (longer than a duration
// holds) still answers on the grid and inside the window: the steps between
// are counted without wrapping.
func TestEveryWindowFarAwayStaysInTheWindow(t *testing.T) {
	zone := "UTC"
	every, err := Parse("@every 1h", &zone)
	if err != nil {
		t.Fatal(err)
	}
	base := ymd(2026, 5, 1, 10, 0)
	far := ymd(2500, 1, 1, 0, 30)
	n := every.Within(&far, nil).Next(base)
	if n.Before(far) || n.Sub(far) >= time.Hour || n.Minute() != 0 {
		t.Errorf("Next with notBefore %v: %v, want the first hourly grid point at or after it", far, n)
	}
	old := ymd(1950, 1, 1, 0, 30)
	if b := every.Within(nil, &old).Before(base, ymd(1600, 1, 1, 0, 0)); b.IsZero() || b.After(old) || old.Sub(b) >= time.Hour {
		t.Errorf("Before with notAfter %v: %v, want the last grid point at or before it", old, b)
	}
}

// The most recent @every time after centuries of missed ones is the grid
// point just before now, not one a wrapped span puts centuries early.
func TestEveryMostRecentAfterCenturies(t *testing.T) {
	zone := "UTC"
	every, err := Parse("@every 1h", &zone)
	if err != nil {
		t.Fatal(err)
	}
	earliest, now := ymd(1700, 1, 1, 0, 0), ymd(2026, 5, 1, 10, 30)
	due, err := every.MostRecent(earliest, now)
	if err != nil || due.Time.After(now) || now.Sub(due.Time) >= time.Hour {
		t.Errorf("MostRecent(%v, %v) = %+v, %v; want the grid point within the hour before now", earliest, now, due, err)
	}
}
