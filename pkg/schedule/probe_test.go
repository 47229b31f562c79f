package schedule

import (
	"testing"
	"time"
)

// Next must return only times the schedule names: for a schedule that names
// hour 1 only, never a time in hour 2. Lord Howe moves its clocks by 30
// minutes; cron's minute loop runs from 01:59 +10:30 into 02:30 +11 and
// keeps going to 02:45 without re-checking the hour.
func TestProbeNextNamesOnlyScheduledTimes(t *testing.T) {
	for _, tc := range []struct{ spec, zone string }{
		{"45 1 * * *", "Australia/Lord_Howe"},
		{"30 1 * * *", "Australia/Lord_Howe"},
		{"*/30 1 * * *", "Australia/Lord_Howe"},
		{"45 1 * * *", "America/New_York"},
		{"45 1 * * *", "Europe/Berlin"},
	} {
		zone := tc.zone
		s, err := Parse(tc.spec, &zone)
		if err != nil {
			t.Fatal(err)
		}
		loc := s.Location()
		x := time.Date(2026, 1, 1, 0, 0, 0, 0, loc)
		for x.Year() == 2026 {
			x = s.Next(x)
			if h := x.In(loc).Hour(); h != 1 {
				t.Errorf("%s in %s: Next gave %s (hour %d); Names says %v", tc.spec, tc.zone, x.In(loc).Format(time.RFC3339), h, s.Names(x))
			}
		}
	}
}
