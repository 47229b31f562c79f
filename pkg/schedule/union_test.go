package schedule

import (
	"strings"
	"testing"
	"time"
)

func TestUnionNamesEveryEntrysTimesOnce(t *testing.T) {
	s := mustList(t, "UTC", "0 9 * * 1-5", "30 17 * * 5", "0 9 * * *")
	from := ymd(2026, 5, 1, 0, 0) // a Friday
	var got []time.Time
	for n := s.Next(from); len(got) < 5; n = s.Next(n) {
		got = append(got, n)
	}
	want := []time.Time{ymd(2026, 5, 1, 9, 0), ymd(2026, 5, 1, 17, 30), ymd(2026, 5, 2, 9, 0), ymd(2026, 5, 3, 9, 0), ymd(2026, 5, 4, 9, 0)}
	if len(got) != len(want) {
		t.Fatalf("got %v", got)
	}
	for i := range want {
		if !got[i].Equal(want[i]) {
			t.Fatalf("time %d: %v, want %v (all %v)", i, got[i], want[i], got)
		}
	}
	if !s.Names(ymd(2026, 5, 1, 17, 30)) || s.Names(ymd(2026, 5, 1, 17, 0)) {
		t.Error("Names disagrees with the union")
	}
	if b := s.Before(ymd(2026, 5, 2, 9, 0), from); !b.Equal(ymd(2026, 5, 1, 17, 30)) {
		t.Errorf("Before: %v", b)
	}
	due, err := s.MostRecent(from, ymd(2026, 5, 2, 12, 0))
	if err != nil || !due.Time.Equal(ymd(2026, 5, 2, 9, 0)) || due.Missed != 3 || !due.Next.Equal(ymd(2026, 5, 3, 9, 0)) {
		t.Errorf("MostRecent: %+v, %v", due, err)
	}
}

// In spring Berlin skips 02:00-03:00: 02:30 runs at 03:00, the instant of
// the change, and so does 03:00 itself: one time, not two.
func TestUnionAcrossDaylightSaving(t *testing.T) {
	s := mustList(t, "Europe/Berlin", "30 2 * * *", "0 3 * * *")
	n := s.Next(ymd(2026, 3, 28, 23, 0))
	if !n.Equal(ymd(2026, 3, 29, 1, 0)) {
		t.Fatalf("first %v", n)
	}
	if m := s.Next(n); !m.Equal(ymd(2026, 3, 30, 0, 30)) {
		t.Errorf("after the change: %v, want 02:30 CEST the next day", m)
	}
}

func TestParseListRefuses(t *testing.T) {
	zone := "UTC"
	for _, tc := range []struct {
		entries []string
		want    string
	}{
		{[]string{"0 * * * *", "0 0 30 2 *"}, "spec.schedules[1]: schedule \"0 0 30 2 *\" never fires"},
		{[]string{"61 * * * *"}, "spec.schedules[0]: schedule \"61 * * * *\""},
		{[]string{"0 * * * *", "@every 1h"}, "spec.schedules[1]: \"@every 1h\": @every cannot be one of several schedules"},
		// An entry holding the separator is no schedule: it cannot
		// smuggle two into the status text.
		{[]string{"0 9 * * * | 5 * * * *"}, "spec.schedules[0]"},
	} {
		_, err := ParseList(tc.entries, &zone)
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%q: %v, want %q…", tc.entries, err, tc.want)
		}
	}
	bad := "Mars/Olympus"
	if _, err := ParseList([]string{"0 * * * *"}, &bad); err == nil || !strings.HasPrefix(err.Error(), "unknown time zone") {
		t.Errorf("unknown zone: %v", err)
	}
}

// H in a list hashes with the CronJob's seed alone, so an entry's times do
// not move when the list is reordered.
func TestResolveListKeepsEachEntrysHash(t *testing.T) {
	a, err := ResolveList([]string{"H 9 * * *", "H/15 * * * *"}, "ns/cj")
	if err != nil {
		t.Fatal(err)
	}
	b, err := ResolveList([]string{"H/15 * * * *", "H 9 * * *"}, "ns/cj")
	if err != nil {
		t.Fatal(err)
	}
	if a[0] != b[1] || a[1] != b[0] {
		t.Errorf("reordering moved the times: %q vs %q", a, b)
	}
	if single, _ := Resolve("H 9 * * *", "ns/cj"); a[0] != single {
		t.Errorf("an entry resolves as spec.schedule would: %q vs %q", a[0], single)
	}
	if _, err := ResolveList([]string{"0 * * * *", "H * * *"}, "ns/cj"); err == nil || !strings.HasPrefix(err.Error(), "spec.schedules[1]: ") {
		t.Errorf("a bad H entry: %v", err)
	}
}

// ParseResolved reads back what JoinList wrote, and a single schedule as
// Parse does. No schedule Parse accepts holds the separator.
func TestParseResolvedRoundTrip(t *testing.T) {
	zone := "UTC"
	list := mustList(t, zone, "0 9 * * *", "30 17 * * *")
	back, err := ParseResolved(JoinList([]string{"0 9 * * *", "30 17 * * *"}), &zone)
	if err != nil {
		t.Fatal(err)
	}
	from := ymd(2026, 5, 1, 0, 0)
	for n, m := list.Next(from), back.Next(from); n.Before(ymd(2026, 5, 10, 0, 0)); n, m = list.Next(n), back.Next(m) {
		if !n.Equal(m) {
			t.Fatalf("%v vs %v", n, m)
		}
	}
	for _, spec := range []string{"* * * * *-| * * * *", "@hourly | @daily", "* | * * * *", "0 9 * * * | 0 10 * * *"} {
		if _, err := Parse(spec, &zone); err == nil && strings.Contains(spec, ListSeparator) {
			t.Errorf("Parse accepts %q, which holds the separator", spec)
		}
	}
}
