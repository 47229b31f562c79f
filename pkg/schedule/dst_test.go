package schedule

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/robfig/cron/v3"
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
		// Lord Howe moves its clocks by 30 minutes: on 4 October 2026 from
		// 02:00 +10:30 to 02:30 +11, on 5 April from 02:00 +11 to 01:30 +10:30.
		{"Lord Howe spring: 01:45 comes before the change, once", "Australia/Lord_Howe", "45 1 * * *", "2026-10-03T12:00:00Z",
			[]string{"2026-10-03T15:15:00Z", "2026-10-04T14:45:00Z"}},
		{"Lord Howe spring: 02:15 does not exist, runs at the change", "Australia/Lord_Howe", "15 2 * * *", "2026-10-03T12:00:00Z",
			[]string{"2026-10-03T15:30:00Z", "2026-10-04T15:15:00Z"}},
		{"Lord Howe spring: 03:00 exists after the change", "Australia/Lord_Howe", "0 3 * * *", "2026-10-03T12:00:00Z",
			[]string{"2026-10-03T16:00:00Z", "2026-10-04T16:00:00Z"}},
		{"Lord Howe autumn: 01:45 happens twice, runs once", "Australia/Lord_Howe", "45 1 * * *", "2026-04-04T12:00:00Z",
			[]string{"2026-04-04T14:45:00Z", "2026-04-05T15:15:00Z"}},
		{"Lord Howe autumn: 02:00 happens once, after the change", "Australia/Lord_Howe", "0 2 * * *", "2026-04-04T12:00:00Z",
			[]string{"2026-04-04T15:30:00Z", "2026-04-05T15:30:00Z"}},
		{"Chatham spring: 03:00 does not exist, runs at the change", "Pacific/Chatham", "0 3 * * *", "2026-09-26T00:00:00Z",
			[]string{"2026-09-26T14:00:00Z", "2026-09-27T13:15:00Z"}},
		{"Lord Howe hourly through spring: 02:00 does not exist", "Australia/Lord_Howe", "0 * * * *", "2026-10-03T14:00:00Z",
			[]string{"2026-10-03T14:30:00Z", "2026-10-03T16:00:00Z", "2026-10-03T17:00:00Z"}},
		// Beirut changes at midnight: on 29 March 2026 from 00:00 +02 to 01:00 +03.
		{"Beirut hourly on Sundays, the Sunday spring skips 00:00", "Asia/Beirut", "45 * * * 0", "2026-03-28T12:00:00Z",
			[]string{"2026-03-28T22:45:00Z", "2026-03-28T23:45:00Z"}},
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

// The zones the DST walk covers: no changes (UTC, Asia/Kolkata), the usual
// one-hour changes, half-hour offsets with one-hour changes (St_Johns,
// Adelaide), a 45-minute offset (Chatham), a 30-minute change (Lord_Howe)
// and changes at midnight, so that spring skips 00:00 (Beirut).
var walkZones = []string{"UTC", "Europe/Berlin", "America/New_York", "Australia/Lord_Howe", "Asia/Kolkata", "America/St_Johns", "Pacific/Chatham", "Australia/Adelaide", "Asia/Beirut"}

var everyDay = []time.Weekday{time.Sunday, time.Monday, time.Tuesday, time.Wednesday, time.Thursday, time.Friday, time.Saturday}

// walkSpec is a schedule of the DST walk. onceOn lists the local weekdays
// on which it names exactly one wall time; nil for schedules that name
// several a day.
type walkSpec struct {
	spec   string
	onceOn []time.Weekday
}

// walkCorpus covers the skipped and repeated ranges of every zone above
// (01:00-04:00 local); dstWalkSpecs adds each zone's own edges.
var walkCorpus = []walkSpec{
	{"0 0 * * *", everyDay},
	{"@daily", everyDay},
	{"0 1 * * *", everyDay},
	{"30 1 * * *", everyDay},
	{"45 1 * * *", everyDay},
	{"59 1 * * *", everyDay},
	{"0 2 * * *", everyDay},
	{"15 2 * * *", everyDay},
	{"30 2 * * *", everyDay},
	{"45 2 * * *", everyDay},
	{"0 3 * * *", everyDay},
	{"30 3 * * *", everyDay},
	{"45 3 * * *", everyDay},
	{"0 4 * * *", everyDay},
	{"0 12 * * *", everyDay},
	{"59 23 * * *", everyDay},
	{"0 9 * * 1-5", []time.Weekday{time.Monday, time.Tuesday, time.Wednesday, time.Thursday, time.Friday}},
	{"30 2 * * 0", []time.Weekday{time.Sunday}},
	{"15 2 * * SAT,SUN", []time.Weekday{time.Saturday, time.Sunday}},
	{"45 1 * * 0,3", []time.Weekday{time.Sunday, time.Wednesday}},
	{"*/30 1 * * *", nil},
	{"*/15 2 * * *", nil},
	{"0,30 1-3 * * *", nil},
	{"*/20 2-3 * * 0", nil},
	{"0 */2 * * *", nil},
	{"0 1,2,3 * * *", nil},
	// Every hour: absolute time.
	{"0 * * * *", nil},
	{"@hourly", nil},
	{"30 * * * *", nil},
	{"*/5 * * * *", nil},
	{"*/15 * * * *", nil},
	{"*/30 * * * *", nil},
	{"45 * * * 0", nil},
	{"*/30 * * * 1-5", nil},
}

// transitions2026 are the instants loc changes its offset in 2026.
func transitions2026(loc *time.Location) []time.Time {
	var out []time.Time
	for t := time.Date(2026, 1, 1, 0, 0, 0, 0, loc); ; {
		_, end := t.ZoneBounds()
		if end.IsZero() || end.Year() > 2026 {
			return out
		}
		out = append(out, end)
		t = end
	}
}

// edgeSpecs are daily schedules at the edges and middle of the wall times
// a change skips or repeats, and one minute either side.
func edgeSpecs(change time.Time) []walkSpec {
	_, before := change.Add(-time.Nanosecond).Zone()
	_, after := change.Zone()
	shift := time.Duration(after-before) * time.Second
	// The range starts at the wall time the change shows in autumn; in
	// spring, at the one the old clock would have shown.
	first := wall(change)
	if shift > 0 {
		first = first.Add(-shift)
	}
	width := shift.Abs()
	var out []walkSpec
	for _, d := range []time.Duration{-time.Minute, 0, width / 2, width - time.Minute, width} {
		w := first.Add(d)
		out = append(out, walkSpec{fmt.Sprintf("%d %d * * *", w.Minute(), w.Hour()), everyDay})
	}
	return out
}

// wall is the wall clock of x in its zone, as a time in UTC, so wall
// times compare and step without any zone.
func wall(x time.Time) time.Time {
	_, off := x.Zone()
	return x.UTC().Add(time.Duration(off) * time.Second)
}

// names reports the wall times in [from, to) that spec's fields match,
// read by cron in UTC, where no clock changes.
func names(t *testing.T, spec string, from, to time.Time) map[time.Time]bool {
	t.Helper()
	parsed, err := cron.ParseStandard(spec)
	if err != nil {
		t.Fatal(err)
	}
	utcSpec := *parsed.(*cron.SpecSchedule)
	utcSpec.Location = time.UTC
	out := map[time.Time]bool{}
	for w := utcSpec.Next(from.Add(-time.Second)); w.Before(to); w = utcSpec.Next(w) {
		out[w] = true
	}
	return out
}

// expectedRuns walks absolute time minute by minute over [from, to) (every
// offset and change in the zones above falls on a whole minute) and applies
// the README's rules directly: a schedule that names its hours runs at the
// first occurrence of a wall time it names, and at the instant of a spring
// change for a named wall time the change skips; one that runs every hour
// runs at every instant whose wall clock it names.
func expectedRuns(named map[time.Time]bool, wallClock bool, from, to time.Time) []time.Time {
	var out []time.Time
	prev := wall(from.Add(-time.Minute))
	latest := prev // the latest wall time shown so far
	for x := from; x.Before(to); x = x.Add(time.Minute) {
		w := wall(x)
		run := named[w] && (!wallClock || w.After(latest))
		for s := prev.Add(time.Minute); wallClock && s.Before(w); s = s.Add(time.Minute) {
			run = run || named[s] // skipped by a spring change
		}
		if run {
			out = append(out, x)
		}
		if w.After(latest) {
			latest = w
		}
		prev = w
	}
	return out
}

// Next, walked over each 2026 change of each zone, from the day before to
// the day after, for every schedule of the corpus:
//
//	(a) a schedule naming one wall time a day runs once on each such day;
//	(b) every run is a wall time the schedule names (the first time that
//	    wall time occurs, if the schedule names hours), or the instant of a
//	    spring change that skipped one;
//	(c) the runs strictly increase;
//	(d) Next(x-1ns) == x for every run x, so Names agrees with Next;
//	(e) the runs are exactly those a minute-by-minute walk of the rules finds;
//	(f) Next from any instant in between is the first of those after it.
func TestNextAcrossDaylightSavingChanges(t *testing.T) {
	for _, zone := range walkZones {
		loc, err := time.LoadLocation(zone)
		if err != nil {
			t.Fatal(err)
		}
		changes := transitions2026(loc)
		days := slices.Clone(changes)
		if len(days) == 0 {
			days = append(days, time.Date(2026, 7, 1, 12, 0, 0, 0, loc)) // no changes: any day
		}
		// The last UTC day of 2040, a leap year past the zones' tables, where
		// time.Time.ZoneBounds reports a period end before the instant asked
		// (golang/go#81583).
		days = append(days, time.Date(2040, 12, 31, 12, 0, 0, 0, time.UTC))
		specs := append([]walkSpec{}, walkCorpus...)
		for _, c := range changes {
			for _, e := range edgeSpecs(c) {
				if !slices.ContainsFunc(specs, func(ws walkSpec) bool { return ws.spec == e.spec }) {
					specs = append(specs, e)
				}
			}
		}
		for _, day := range days {
			y, m, d := day.In(loc).Date()
			from := time.Date(y, m, d-1, 0, 0, 0, 0, loc)
			to := time.Date(y, m, d+2, 0, 0, 0, 0, loc)
			for _, ws := range specs {
				t.Run(fmt.Sprintf("%s/%s/%s", zone, day.In(loc).Format("2006-01-02"), ws.spec), func(t *testing.T) {
					checkWalk(t, ws, zone, from, to)
				})
			}
		}
	}
}

func checkWalk(t *testing.T, ws walkSpec, zone string, from, to time.Time) {
	s := mustParse(t, ws.spec, ptr.To(zone))
	loc := s.Location()
	named := names(t, ws.spec, wall(from).Add(-3*time.Hour), wall(to).Add(3*time.Hour))
	all := (1<<24 - 1)
	parsed, _ := cron.ParseStandard(ws.spec)
	wallClock := parsed.(*cron.SpecSchedule).Hour&uint64(all) != uint64(all)

	var runs []time.Time
	perDay := map[string]int{}
	prev := from.Add(-time.Nanosecond)
	for x := s.Next(prev); x.Before(to); prev, x = x, s.Next(x) {
		show := x.In(loc).Format("2006-01-02 15:04 -0700")
		if !x.After(prev) { // (c)
			t.Fatalf("Next(%s) = %s, not after it", prev.In(loc).Format("2006-01-02 15:04:05.999999999 -0700"), show)
		}
		if back := s.Next(x.Add(-time.Nanosecond)); !back.Equal(x) || !s.Names(x) { // (d)
			t.Errorf("run %s: Next(run-1ns) = %s", show, back.In(loc).Format("2006-01-02 15:04 -0700"))
		}
		if !obeysRules(x, named, wallClock) { // (b)
			t.Errorf("run %s is neither a wall time %q names nor a spring change skipping one", show, ws.spec)
		}
		runs = append(runs, x)
		perDay[x.In(loc).Format("2006-01-02")]++
	}
	if ws.onceOn != nil { // (a)
		for d := wall(from); d.Before(wall(to)); d = d.AddDate(0, 0, 1) { // dates, not instants: a day can be skipped
			want := 0
			if slices.Contains(ws.onceOn, d.Weekday()) {
				want = 1
			}
			if got := perDay[d.Format("2006-01-02")]; got != want {
				t.Errorf("%d runs on %s, want %d; runs: %s", got, d.Format("Mon 2006-01-02"), want, format(runs, loc))
			}
		}
	}
	want := expectedRuns(named, wallClock, from, to)
	if !slices.EqualFunc(runs, want, time.Time.Equal) { // (e)
		t.Errorf("runs:\n  %s\nwant:\n  %s", format(runs, loc), format(want, loc))
	}
	// (f) The controller asks from any instant, not only from a run: inside
	// a repeated hour, on a fraction of a second.
	for x := from; x.Before(to); x = x.Add(7*time.Minute + 13*time.Second + 1) {
		i, _ := slices.BinarySearchFunc(want, x, func(r, x time.Time) int { return r.Compare(x.Add(time.Nanosecond)) })
		if i == len(want) {
			break
		}
		if got := s.Next(x); !got.Equal(want[i]) {
			t.Errorf("Next(%s) = %s, want %s", x.In(loc).Format("2006-01-02 15:04:05.999999999 -0700"), got.In(loc).Format("2006-01-02 15:04 -0700"), want[i].In(loc).Format("2006-01-02 15:04 -0700"))
		}
	}
}

// obeysRules reports whether run x is a wall time the schedule names (for
// a schedule that names hours, at the first time that wall time occurs),
// or the instant of a spring change that skipped a wall time it names.
func obeysRules(x time.Time, named map[time.Time]bool, wallClock bool) bool {
	w := wall(x)
	if named[w] {
		if !wallClock {
			return true
		}
		for d := 15 * time.Minute; d <= 3*time.Hour; d += 15 * time.Minute {
			if wall(x.Add(-d)).Equal(w) {
				return false // the second occurrence
			}
		}
		return true
	}
	_, before := x.Add(-time.Nanosecond).Zone()
	_, after := x.Zone()
	if !wallClock || after <= before || x.Nanosecond() != 0 || wall(x.Add(-time.Nanosecond)).Add(time.Nanosecond).Equal(w) {
		return false
	}
	for s := w.Add(-time.Duration(after-before) * time.Second); s.Before(w); s = s.Add(time.Minute) {
		if named[s] {
			return true
		}
	}
	return false
}

func format(runs []time.Time, loc *time.Location) string {
	var b strings.Builder
	for i, r := range runs {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(r.In(loc).Format("01-02 15:04 -0700"))
	}
	return b.String()
}

// Next must return only times the schedule names: for a schedule that names
// hour 1 only, never a time in hour 2. Lord Howe moves its clocks by 30
// minutes: a minute loop that steps from 01:59 +10:30 into 02:30 +11 must
// re-check the hour, or it runs on to 02:45.
func TestNextNamesOnlyScheduledTimes(t *testing.T) {
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
