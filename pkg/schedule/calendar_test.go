package schedule

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/utils/ptr"
)

// runs are the first n runs of spec in zone after from, in UTC RFC 3339.
func runs(t *testing.T, spec, zone, from string, n int) []string {
	t.Helper()
	s := mustParse(t, spec, ptr.To(zone))
	at := utc(t, from)
	var out []string
	for range n {
		at = s.Next(at)
		out = append(out, at.UTC().Format(time.RFC3339))
	}
	return out
}

func checkRuns(t *testing.T, spec, zone, from string, want ...string) {
	t.Helper()
	if got := runs(t, spec, zone, from, len(want)); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("%q in %s after %s: %v, want %v", spec, zone, from, got, want)
	}
}

func TestLastDayOfMonthRunsOnLastDay(t *testing.T) {
	for _, spec := range []string{"0 9 L * *", "0 9 l * ?"} {
		checkRuns(t, spec, "UTC", "2027-12-15T00:00:00Z",
			"2027-12-31T09:00:00Z", "2028-01-31T09:00:00Z", "2028-02-29T09:00:00Z", "2028-03-31T09:00:00Z", "2028-04-30T09:00:00Z")
	}
}

func TestDaysBeforeTheLastCountFromTheEnd(t *testing.T) {
	checkRuns(t, "0 9 L-1 * *", "UTC", "2028-02-01T00:00:00Z", "2028-02-28T09:00:00Z", "2028-03-30T09:00:00Z", "2028-04-29T09:00:00Z")
	// L-30 is the 1st of a 31-day month, and no day of a shorter one.
	checkRuns(t, "0 9 L-30 * *", "UTC", "2026-01-02T00:00:00Z", "2026-03-01T09:00:00Z", "2026-05-01T09:00:00Z", "2026-07-01T09:00:00Z")
}

func TestLastFridayOfMonthRunsOnLastFriday(t *testing.T) {
	for _, spec := range []string{"0 9 ? * 5L", "0 9 * * FRIL", "0 9 * * fril"} {
		checkRuns(t, spec, "Europe/Berlin", "2026-01-01T00:00:00Z",
			"2026-01-30T08:00:00Z", "2026-02-27T08:00:00Z", "2026-03-27T08:00:00Z", "2026-04-24T07:00:00Z", "2026-05-29T07:00:00Z")
	}
}

func TestNthWeekdayRunsOnThatWeekday(t *testing.T) {
	// 2026: the first Mondays are 5 January, 2 February, 2 March.
	checkRuns(t, "0 9 ? * MON#1", "UTC", "2026-01-01T00:00:00Z", "2026-01-05T09:00:00Z", "2026-02-02T09:00:00Z", "2026-03-02T09:00:00Z")
	checkRuns(t, "0 9 ? * 5#3", "UTC", "2026-01-01T00:00:00Z", "2026-01-16T09:00:00Z", "2026-02-20T09:00:00Z", "2026-03-20T09:00:00Z")
	// A month without a fifth Sunday has no run: 2026 has them in March,
	// May, August and November.
	checkRuns(t, "0 9 * * SUN#5", "UTC", "2026-01-01T00:00:00Z", "2026-03-29T09:00:00Z", "2026-05-31T09:00:00Z", "2026-08-30T09:00:00Z", "2026-11-29T09:00:00Z")
}

func TestNearestWeekdayNeverCrossesTheMonth(t *testing.T) {
	// 1 August 2026 is a Saturday: not Friday 31 July but Monday 3 August.
	checkRuns(t, "0 9 1W 8 *", "UTC", "2026-01-01T00:00:00Z", "2026-08-03T09:00:00Z", "2027-08-02T09:00:00Z")
	// 31 May 2026 is a Sunday: not Monday 1 June but Friday 29 May; and
	// 31W has no run in a month of 30 days.
	checkRuns(t, "0 9 31W * *", "UTC", "2026-05-01T00:00:00Z", "2026-05-29T09:00:00Z", "2026-07-31T09:00:00Z", "2026-08-31T09:00:00Z", "2026-10-30T09:00:00Z")
	// The 15th: a Sunday in February 2026 (Monday 16th), a Saturday in
	// August (Friday 14th), a weekday in April.
	checkRuns(t, "0 9 15W 2,4,8 *", "UTC", "2026-01-01T00:00:00Z", "2026-02-16T09:00:00Z", "2026-04-15T09:00:00Z", "2026-08-14T09:00:00Z")
}

func TestLastWeekdayOfMonthIsAMondayToFriday(t *testing.T) {
	// 31 January 2026 is a Saturday, 31 May a Sunday.
	checkRuns(t, "0 18 LW * *", "UTC", "2026-01-01T00:00:00Z",
		"2026-01-30T18:00:00Z", "2026-02-27T18:00:00Z", "2026-03-31T18:00:00Z", "2026-04-30T18:00:00Z", "2026-05-29T18:00:00Z")
}

// Both day fields restricted: a day either names runs, as with plain
// numbers in every cron. One of them * or ?: the other alone decides.
func TestCalendarFormsCombineAsCronDaysDo(t *testing.T) {
	// The last day of January 2026 is a Saturday, its last Friday the 30th.
	checkRuns(t, "0 0 L * 5L", "UTC", "2026-01-01T00:00:00Z", "2026-01-30T00:00:00Z", "2026-01-31T00:00:00Z", "2026-02-27T00:00:00Z", "2026-02-28T00:00:00Z")
	checkRuns(t, "0 0 1 * MON#1", "UTC", "2026-01-02T00:00:00Z", "2026-01-05T00:00:00Z", "2026-02-01T00:00:00Z", "2026-02-02T00:00:00Z")
	checkRuns(t, "0 0 * * MON#1", "UTC", "2026-01-02T00:00:00Z", "2026-01-05T00:00:00Z", "2026-02-02T00:00:00Z")
	checkRuns(t, "0 0 L ? *", "UTC", "2026-01-02T00:00:00Z", "2026-01-31T00:00:00Z", "2026-02-28T00:00:00Z")
	// A list is the union of its elements.
	checkRuns(t, "0 0 1,15W,L * ?", "UTC", "2026-02-02T00:00:00Z", "2026-02-16T00:00:00Z", "2026-02-28T00:00:00Z", "2026-03-01T00:00:00Z", "2026-03-16T00:00:00Z")
	checkRuns(t, "0 0 ? * MON#1,FRIL", "UTC", "2026-01-01T00:00:00Z", "2026-01-05T00:00:00Z", "2026-01-30T00:00:00Z", "2026-02-02T00:00:00Z")
}

// New York changes on the second Sunday of March (02:00 EST → 03:00 EDT)
// and the first Sunday of November (02:00 EDT → 01:00 EST); Cairo on the
// last Friday of April (00:00 → 01:00). The calendar forms keep the rules
// of dst.go.
func TestSecondSundayAcrossSpringChangeRunsOnceAtTheChange(t *testing.T) {
	checkRuns(t, "30 2 ? 3 SUN#2", "America/New_York", "2026-01-01T00:00:00Z", "2026-03-08T07:00:00Z", "2027-03-14T07:00:00Z")
	checkRuns(t, "30 0 ? 4 FRIL", "Africa/Cairo", "2026-01-01T00:00:00Z", "2026-04-23T22:00:00Z", "2027-04-29T22:00:00Z")
}

func TestFirstSundayAcrossAutumnChangeRunsOnce(t *testing.T) {
	checkRuns(t, "30 1 ? 11 SUN#1", "America/New_York", "2026-01-01T00:00:00Z", "2026-11-01T05:30:00Z", "2027-11-07T05:30:00Z")
}

func TestEveryHourOfAFirstSundayRunsEachRealHour(t *testing.T) {
	s := mustParse(t, "0 * ? 11 SUN#1", ptr.To("America/New_York"))
	day := utc(t, "2026-11-01T04:00:00Z") // midnight EDT
	count := 0
	for at := s.Next(day.Add(-time.Second)); at.Before(day.Add(25 * time.Hour)); at = s.Next(at) {
		if want := day.Add(time.Duration(count) * time.Hour); !at.Equal(want) {
			t.Fatalf("run %d at %v, want %v", count+1, at, want)
		}
		count++
	}
	if count != 25 { // the day has 25 hours
		t.Errorf("%d runs on 1 November 2026 in New York, want 25", count)
	}
	if next := s.Next(day.Add(25 * time.Hour)); !next.Equal(utc(t, "2027-11-07T04:00:00Z")) {
		t.Errorf("then %v, want the first Sunday of November 2027", next)
	}
}

// A list of schedules holds calendar forms as a single one does.
func TestScheduleListWithCalendarForms(t *testing.T) {
	s := mustList(t, "UTC", "0 9 L * *", "0 9 ? * MON#1")
	at := utc(t, "2026-01-06T00:00:00Z")
	for _, want := range []string{"2026-01-31T09:00:00Z", "2026-02-02T09:00:00Z", "2026-02-28T09:00:00Z"} {
		at = s.Next(at)
		if !at.Equal(utc(t, want)) {
			t.Fatalf("%v, want %s", at, want)
		}
	}
	if !s.Names(utc(t, "2026-02-28T09:00:00Z")) || s.Names(utc(t, "2026-02-27T09:00:00Z")) {
		t.Error("Names disagrees with Next")
	}
}

// Nonsense is refused by the parser with one line that says why, and by
// the CRD's rules at apply, except what only the controller can know.
func TestCalendarFormsRefusedWithOneLine(t *testing.T) {
	for _, c := range []struct {
		spec, why string
		cel       bool
	}{
		{"L * * * *", `minute field "L": L, W and # are only for the day-of-month and day-of-week fields`, true},
		{"0 L * * *", `hour field "L": L, W and # are only`, true},
		{"0 0 1 L *", `month field "L": L, W and # are only`, true},
		{"0 0 * * #6", `day of week field "#6": d#k takes k from 1 to 5`, true},
		{"0 0 * * MON#6", `d#k takes k from 1 to 5`, true},
		{"0 0 * * MON#0", `d#k takes k from 1 to 5`, true},
		{"0 0 * * 7#1", `d#k takes a day d from 0 to 6`, true},
		{"0 0 * * #1", `d#k takes a day d from 0 to 6`, true},
		{"0 0 0W * *", `day of month field "0W": nW takes a day n from 1 to 31`, true},
		{"0 0 32W * *", `nW takes a day n from 1 to 31`, true},
		{"0 0 W * *", `nW takes a day n from 1 to 31`, true},
		{"0 0 L-0 * *", `L-n takes n from 1 to 30`, true},
		{"0 0 L-31 * *", `L-n takes n from 1 to 30`, true},
		{"0 0 L-3W * *", `L-n takes n from 1 to 30`, true},
		{"0 0 1-L * *", `not a value, range or step, nor L, L-n, LW or nW`, true},
		{"0 0 L/2 * *", `not a value, range or step, nor L, L-n, LW or nW`, true},
		{"0 0 MON#1 * *", `# is for the day-of-week field`, true},
		{"0 0 * * L", `L alone is for the day-of-month field`, true},
		{"0 0 * * 5W", `W is for the day-of-month field`, true},
		{"0 0 * * LW", `W is for the day-of-month field`, true},
		{"0 0 * * 7L", `dL takes a day d from 0 to 6`, true},
		{"0 0 * * MON-FRIL", `dL takes a day d from 0 to 6`, true},
		{"0 0 * 2 FRI#5", `a fifth weekday (#5) in February alone comes once in 28 years`, false},
		{"0 0 30W 2 *", `never fires`, false},
	} {
		_, err := Parse(c.spec, ptr.To("UTC"))
		if err == nil {
			t.Errorf("Parse(%q) accepted it", c.spec)
			continue
		}
		if msg := err.Error(); !strings.Contains(msg, c.why) || strings.Contains(msg, "\n") {
			t.Errorf("Parse(%q): %q, want one line saying %q", c.spec, msg, c.why)
		}
		if refused := len(celMirror(c.spec)) > 0; refused != c.cel {
			t.Errorf("the rules on %q: refused %v, want %v", c.spec, refused, c.cel)
		}
	}
}

// Schedules that held no calendar form before still parse as cron does:
// the letters of the forms appear in the names JUL and WED.
func TestCalendarLettersInNamesAreCronsNames(t *testing.T) {
	for _, spec := range []string{"0 0 1 JUL *", "0 0 1 jul-aug *", "0 0 * * WED", "0 0 * * wed#2", "0 0 * * WEDL", "*-L * * * *", "0 0 ?-W * *"} {
		if _, err := Parse(spec, ptr.To("UTC")); err != nil {
			t.Errorf("Parse(%q): %v", spec, err)
		}
	}
}

// The oracle: the definitions of the forms by plain date arithmetic,
// written apart from calendar.go (no bit sets, no shortcuts): a date is
// walked day by day to find the month's length, its weekdays, and the
// count of a weekday so far.

// calExpr is a generated schedule: its two day fields as elements, or nil
// for * or ?, and its month field, nil for *.
type calExpr struct {
	dom, dow []calElem
	months   []time.Month
	// text of each field as written
	domText, dowText, monthText string
}

// calElem is one element: kind is "n" (a plain day or weekday), "L",
// "LW", "W", "nL" (last weekday d) or "#" (d#k); n is the number.
type calElem struct {
	kind string
	n, k int
}

func lastDayOf(date time.Time) int {
	d := time.Date(date.Year(), date.Month(), 1, 12, 0, 0, 0, time.UTC)
	last := 1
	for next := d.AddDate(0, 0, 1); next.Month() == date.Month(); next = next.AddDate(0, 0, 1) {
		last = next.Day()
	}
	return last
}

func isWeekday(y int, m time.Month, d int) bool {
	w := time.Date(y, m, d, 12, 0, 0, 0, time.UTC).Weekday()
	return w != time.Saturday && w != time.Sunday
}

func (e calElem) domHolds(date time.Time) bool {
	y, m, d := date.Date()
	last := lastDayOf(date)
	switch e.kind {
	case "n":
		return d == e.n
	case "L":
		return d == last-e.n
	case "LW":
		best := 0
		for i := 1; i <= last; i++ {
			if isWeekday(y, m, i) {
				best = i
			}
		}
		return d == best
	case "W":
		if e.n > last {
			return false
		}
		best, dist := 0, 99
		for i := 1; i <= last; i++ {
			if gap := max(i-e.n, e.n-i); isWeekday(y, m, i) && gap < dist {
				best, dist = i, gap
			}
		}
		return d == best
	}
	panic(e.kind)
}

func (e calElem) dowHolds(date time.Time) bool {
	if int(date.Weekday()) != e.n {
		return false
	}
	switch e.kind {
	case "n":
		return true
	case "nL":
		return date.AddDate(0, 0, 7).Month() != date.Month()
	case "#":
		count := 0
		for i := 1; i <= date.Day(); i++ {
			if time.Date(date.Year(), date.Month(), i, 12, 0, 0, 0, time.UTC).Weekday() == date.Weekday() {
				count++
			}
		}
		return count == e.k
	}
	panic(e.kind)
}

// holds says whether the schedule runs on date: both fields restricted,
// either; otherwise the restricted one (or every day).
func (x calExpr) holds(date time.Time) bool {
	if x.months != nil {
		in := false
		for _, m := range x.months {
			in = in || date.Month() == m
		}
		if !in {
			return false
		}
	}
	any := func(elems []calElem, f func(calElem) bool) bool {
		for _, e := range elems {
			if f(e) {
				return true
			}
		}
		return false
	}
	dom := x.dom == nil || any(x.dom, func(e calElem) bool { return e.domHolds(date) })
	dow := x.dow == nil || any(x.dow, func(e calElem) bool { return e.dowHolds(date) })
	if x.dom != nil && x.dow != nil {
		return dom || dow
	}
	return dom && dow
}

var dayNames = []string{"SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"}

// genCalExpr writes a random schedule with at least one calendar form.
func genCalExpr(r *rand.Rand) calExpr {
	for {
		if x := genDayFields(r); slices.ContainsFunc(append(x.dom, x.dow...), func(e calElem) bool { return e.kind != "n" }) {
			return x
		}
	}
}

// genDayFields writes random day and month fields.
func genDayFields(r *rand.Rand) calExpr {
	var x calExpr
	letter := func(s string) string {
		if r.IntN(5) == 0 {
			return strings.ToLower(s)
		}
		return s
	}
	day := func(d int) string {
		if r.IntN(2) == 0 {
			return fmt.Sprint(d)
		}
		return dayNames[d]
	}
	switch r.IntN(5) {
	case 0:
		x.domText = "?"
	case 1:
		x.domText = "*"
	default:
		var parts []string
		for range 1 + r.IntN(3) {
			e := calElem{}
			switch r.IntN(5) {
			case 0:
				e = calElem{kind: "n", n: 1 + r.IntN(31)}
				parts = append(parts, fmt.Sprint(e.n))
			case 1:
				e = calElem{kind: "L", n: max(0, r.IntN(40)-10)}
				if e.n == 0 {
					parts = append(parts, letter("L"))
				} else {
					parts = append(parts, letter("L")+"-"+fmt.Sprint(e.n))
				}
			case 2:
				e = calElem{kind: "LW"}
				parts = append(parts, letter("L")+letter("W"))
			default:
				e = calElem{kind: "W", n: 1 + r.IntN(31)}
				parts = append(parts, fmt.Sprint(e.n)+letter("W"))
			}
			x.dom = append(x.dom, e)
		}
		x.domText = strings.Join(parts, ",")
	}
	switch r.IntN(4) {
	case 0:
		x.dowText = "?"
	case 1:
		x.dowText = "*"
	default:
		var parts []string
		for range 1 + r.IntN(2) {
			d := r.IntN(7)
			switch r.IntN(4) {
			case 0:
				x.dow = append(x.dow, calElem{kind: "n", n: d})
				parts = append(parts, day(d))
			case 1:
				x.dow = append(x.dow, calElem{kind: "nL", n: d})
				parts = append(parts, day(d)+letter("L"))
			default:
				k := 1 + r.IntN(5)
				x.dow = append(x.dow, calElem{kind: "#", n: d, k: k})
				parts = append(parts, day(d)+"#"+fmt.Sprint(k))
			}
		}
		x.dowText = strings.Join(parts, ",")
	}
	x.monthText = "*"
	if r.IntN(3) == 0 {
		var parts []string
		for range 1 + r.IntN(2) {
			m := time.Month(1 + r.IntN(12))
			x.months = append(x.months, m)
			parts = append(parts, fmt.Sprint(int(m)))
		}
		x.monthText = strings.Join(parts, ",")
	}
	return x
}

// The times of day the oracle's dates are checked at, each with how many
// runs a date has: a fixed offset, a wall time the spring change skips
// and the autumn one repeats (New York, and Cairo, which changes at
// midnight), several hours, and every hour, which follows real time (0:
// as many runs as the day has hours, 23 and 25 on the days of a change).
var calTimes = []struct {
	minuteHour, zone string
	perDay           int
}{
	{"0 12", "UTC", 1},
	{"30 2", "America/New_York", 1},
	{"15 */6", "Europe/Berlin", 4},
	{"45 0", "Africa/Cairo", 1},
	{"50 *", "Europe/Berlin", 0},
}

// checkAgainstOracle compares the schedule's runs from 2026 to 2046 with
// the oracle's dates.
func checkAgainstOracle(t *testing.T, x calExpr, timeIndex int) {
	tod := calTimes[timeIndex%len(calTimes)]
	spec := fmt.Sprintf("%s %s %s %s", tod.minuteHour, x.domText, x.monthText, x.dowText)
	loc, err := time.LoadLocation(tod.zone)
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for d := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC); d.Year() <= 2046; d = d.AddDate(0, 0, 1) {
		if x.holds(d) {
			want = append(want, d.Format(time.DateOnly))
		}
	}
	s, err := Parse(spec, &tod.zone)
	if err != nil {
		// Only a schedule with no date in 20 years, or the fifth of a
		// weekday in February alone, may be refused.
		if len(want) > 0 && !strings.Contains(err.Error(), "#5") {
			t.Fatalf("Parse(%q): %v; the oracle has %d dates, first %s", spec, err, len(want), want[0])
		}
		return
	}
	perDay := map[string]int{}
	var got []string
	for at := s.Next(time.Date(2026, 1, 1, 0, 0, 0, 0, loc).Add(-time.Second)); !at.IsZero() && at.In(loc).Year() <= 2046; at = s.Next(at) {
		date := at.In(loc).Format(time.DateOnly)
		if perDay[date] == 0 {
			got = append(got, date)
		}
		perDay[date]++
	}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		for i := range max(len(got), len(want)) {
			if i >= len(got) || i >= len(want) || got[i] != want[i] {
				t.Fatalf("%q in %s: date %d is %v, the oracle says %v (%d dates, oracle %d)", spec, tod.zone, i, orNone(got, i), orNone(want, i), len(got), len(want))
			}
		}
	}
	for date, n := range perDay {
		want := tod.perDay
		if want == 0 {
			d, _ := time.ParseInLocation(time.DateOnly, date, loc)
			want = int(time.Date(d.Year(), d.Month(), d.Day()+1, 0, 0, 0, 0, loc).Sub(d).Hours())
		}
		if n != want {
			t.Fatalf("%q in %s: %d runs on %s, want %d", spec, tod.zone, n, date, want)
		}
	}
}

func orNone(s []string, i int) string {
	if i < len(s) {
		return s[i]
	}
	return "none"
}

// Random schedules of L, W and # forms run, over the twenty years from
// 2026 to 2046, on exactly the dates the oracle names, once a date (four
// times for a time every six hours), in zones with and without daylight
// saving. go test runs the seeds; go test -fuzz explores further.
func FuzzCalendarFormsAgreeWithOracle(f *testing.F) {
	for seed := range uint64(48) {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, seed uint64) {
		r := rand.New(rand.NewPCG(seed, 0xca1))
		checkAgainstOracle(t, genCalExpr(r), int(seed%uint64(len(calTimes))))
	})
}
