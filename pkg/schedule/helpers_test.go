package schedule

// The package's shared test helpers: times, and schedules that must parse.

import (
	"testing"
	"time"
)

func mustTime(t *testing.T, layout, value string) time.Time {
	t.Helper()
	v, err := time.Parse(layout, value)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func utc(t *testing.T, value string) time.Time { return mustTime(t, time.RFC3339, value) }

func mustParse(t *testing.T, spec string, zone *string) *Schedule {
	t.Helper()
	s, err := Parse(spec, zone)
	if err != nil {
		t.Fatalf("Parse(%q): %v", spec, err)
	}
	return s
}

func ymd(y int, mo time.Month, d, h, mi int) time.Time {
	return time.Date(y, mo, d, h, mi, 0, 0, time.UTC)
}

func mustList(t *testing.T, zone string, entries ...string) *Schedule {
	t.Helper()
	s, err := ParseList(entries, &zone)
	if err != nil {
		t.Fatal(err)
	}
	return s
}
