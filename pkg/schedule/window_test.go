package schedule

import "testing"

func TestWindowBoundsEveryQuestion(t *testing.T) {
	zone := "UTC"
	hourly, err := Parse("0 * * * *", &zone)
	if err != nil {
		t.Fatal(err)
	}
	lo, hi := ymd(2026, 5, 1, 9, 30), ymd(2026, 5, 1, 12, 0)
	s := hourly.Within(&lo, &hi)
	if n := s.Next(ymd(2026, 5, 1, 0, 0)); !n.Equal(ymd(2026, 5, 1, 10, 0)) {
		t.Errorf("Next before the window: %v", n)
	}
	if n := s.Next(ymd(2026, 5, 1, 11, 0)); !n.Equal(hi) {
		t.Errorf("notAfter is included: %v", n)
	}
	if n := s.Next(hi); !n.IsZero() {
		t.Errorf("Next past the window: %v", n)
	}
	if s.Names(ymd(2026, 5, 1, 9, 0)) || !s.Names(ymd(2026, 5, 1, 10, 0)) {
		t.Error("Names ignores the window")
	}
	if b := s.Before(ymd(2026, 5, 1, 10, 0), ymd(2026, 5, 1, 0, 0)); !b.IsZero() {
		t.Errorf("Before reaches back before notBefore: %v", b)
	}
	due, err := s.MostRecent(ymd(2026, 5, 1, 0, 0), ymd(2026, 5, 2, 0, 0))
	if err != nil || !due.Time.Equal(hi) || due.Missed != 3 || !due.Next.IsZero() {
		t.Errorf("MostRecent across the window: %+v, %v", due, err)
	}
	// Nothing left after the window: no error, nothing due, no next time.
	if due, err := s.MostRecent(hi, ymd(2026, 5, 3, 0, 0)); err != nil || !due.Time.IsZero() || !due.Next.IsZero() {
		t.Errorf("MostRecent after the window: %+v, %v", due, err)
	}
	// The schedule itself is not bounded.
	if n := hourly.Next(hi); !n.Equal(ymd(2026, 5, 1, 13, 0)) {
		t.Errorf("Within changed its receiver: %v", n)
	}
}

func TestWindowOnEvery(t *testing.T) {
	zone := "UTC"
	every, err := Parse("@every 40m", &zone)
	if err != nil {
		t.Fatal(err)
	}
	lo, hi := ymd(2026, 5, 1, 9, 30), ymd(2026, 5, 1, 11, 0)
	s := every.Within(&lo, &hi)
	base := ymd(2026, 5, 1, 8, 0) // grid 8:40, 9:20, 10:00, 10:40, 11:20
	if n := s.Next(base); !n.Equal(ymd(2026, 5, 1, 10, 0)) {
		t.Errorf("Next from before the window: %v, want the grid's first point in it", n)
	}
	if b := s.Before(ymd(2026, 5, 1, 12, 0), base); !b.Equal(ymd(2026, 5, 1, 10, 40)) {
		t.Errorf("Before past notAfter: %v", b)
	}
	if b := s.Before(ymd(2026, 5, 1, 10, 0), base); !b.IsZero() {
		t.Errorf("Before reaches back before notBefore: %v", b)
	}
	if s.InWindow(ymd(2026, 5, 1, 9, 20)) || !s.InWindow(ymd(2026, 5, 1, 11, 0)) {
		t.Error("InWindow")
	}
	// A far notBefore is reached by arithmetic, not by stepping.
	far := ymd(2036, 1, 1, 0, 0)
	sec, _ := Parse("@every 1s", &zone)
	if n := sec.Within(&far, nil).Next(base); !n.Equal(far) {
		t.Errorf("far notBefore: %v", n)
	}
}
