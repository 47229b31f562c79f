package schedule

import (
	"testing"
	"time"

	"k8s.io/utils/ptr"
)

func BenchmarkParse(b *testing.B) {
	zone := ptr.To("Europe/Berlin")
	for b.Loop() {
		if _, err := Parse("30 6-16/4 * * 1-5", zone); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkMostRecent(b *testing.B) {
	earliest := time.Date(2026, 5, 1, 9, 30, 0, 0, time.UTC)
	for _, bc := range []struct {
		name, spec string
		now        time.Time
	}{
		{"hourly/nothing-due", "0 * * * *", earliest.Add(20 * time.Minute)},
		{"hourly/one-due", "0 * * * *", earliest.Add(40 * time.Minute)},
		{"minutely/a-week-overdue", "* * * * *", earliest.Add(7 * 24 * time.Hour)},
		{"weekdays/a-year-overdue", "30 6-16/4 * * 1-5", earliest.Add(365 * 24 * time.Hour)},
		{"every-7s/a-day-overdue", "@every 7s", earliest.Add(24 * time.Hour)},
	} {
		s, err := Parse(bc.spec, ptr.To("UTC"))
		if err != nil {
			b.Fatal(err)
		}
		b.Run(bc.name, func(b *testing.B) {
			for b.Loop() {
				if _, err := s.MostRecent(earliest, bc.now); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
