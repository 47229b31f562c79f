package schedule

import (
	"testing"
	"time"

	"k8s.io/utils/ptr"
)

// 2026: New York changes on 8 March (02:00 EST → 03:00 EDT) and 1 November
// (02:00 EDT → 01:00 EST); Berlin on 29 March (02:00 CET → 03:00 CEST) and
// 25 October (03:00 CEST → 02:00 CET).
func TestDaylightSavingTime(t *testing.T) {
	cases := []struct {
		name, zone, spec, from string
		want                   []string // the next runs, in UTC
	}{
		{"New York spring: 02:30 does not exist, runs at the change", "America/New_York", "30 2 * * *", "2026-03-07T12:00:00Z",
			[]string{"2026-03-08T07:00:00Z", "2026-03-09T06:30:00Z"}},
		{"New York autumn: 01:30 happens twice, runs once", "America/New_York", "30 1 * * *", "2026-10-31T12:00:00Z",
			[]string{"2026-11-01T05:30:00Z", "2026-11-02T06:30:00Z"}},
		{"New York autumn: 02:30 happens once", "America/New_York", "30 2 * * *", "2026-10-31T12:00:00Z",
			[]string{"2026-11-01T07:30:00Z", "2026-11-02T07:30:00Z"}},
		{"Berlin spring: 02:30 does not exist, runs at the change", "Europe/Berlin", "30 2 * * *", "2026-03-28T12:00:00Z",
			[]string{"2026-03-29T01:00:00Z", "2026-03-30T00:30:00Z"}},
		{"Berlin autumn: 02:30 happens twice, runs once", "Europe/Berlin", "30 2 * * *", "2026-10-24T12:00:00Z",
			[]string{"2026-10-25T00:30:00Z", "2026-10-26T01:30:00Z"}},
		{"Berlin spring, weekly on the changing Sunday", "Europe/Berlin", "30 2 * * 0", "2026-03-28T12:00:00Z",
			[]string{"2026-03-29T01:00:00Z", "2026-04-05T00:30:00Z"}},
		{"New York hourly through autumn: every real hour", "America/New_York", "0 * * * *", "2026-11-01T03:30:00Z",
			[]string{"2026-11-01T04:00:00Z", "2026-11-01T05:00:00Z", "2026-11-01T06:00:00Z", "2026-11-01T07:00:00Z"}},
		{"New York hourly through spring: the skipped hour has no run", "America/New_York", "0 * * * *", "2026-03-08T05:30:00Z",
			[]string{"2026-03-08T06:00:00Z", "2026-03-08T07:00:00Z", "2026-03-08T08:00:00Z"}},
		{"Berlin every 20 minutes through autumn", "Europe/Berlin", "*/20 * * * *", "2026-10-25T00:50:00Z",
			[]string{"2026-10-25T01:00:00Z", "2026-10-25T01:20:00Z", "2026-10-25T01:40:00Z", "2026-10-25T02:00:00Z"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := mustParse(t, tc.spec, ptr.To(tc.zone))
			at := utc(t, tc.from)
			for i, w := range tc.want {
				at = s.Next(at)
				if !at.Equal(utc(t, w)) {
					t.Fatalf("run %d: %v (%s), want %s", i+1, at.UTC().Format(time.RFC3339), at.Format("15:04 MST"), w)
				}
			}
		})
	}
}

// MostRecent agrees: after the autumn change the repeated 02:30 is not due
// a second time.
func TestMostRecentDoesNotRepeatAutumnTime(t *testing.T) {
	s := mustParse(t, "30 2 * * *", ptr.To("Europe/Berlin"))
	first := utc(t, "2026-10-25T00:30:00Z")                         // 02:30 CEST
	due, err := s.MostRecent(first, utc(t, "2026-10-25T01:45:00Z")) // 02:45 CET, after the second 02:30
	if err != nil {
		t.Fatal(err)
	}
	if !due.Time.IsZero() {
		t.Errorf("the second 02:30 is due: %v", due.Time)
	}
}
