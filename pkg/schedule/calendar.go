package schedule

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/robfig/cron/v3"
)

// The calendar forms of Quartz and EventBridge, which robfig/cron does not
// read, in the day-of-month and day-of-week fields of the five-field form:
//
//   - day of month: L is the last day of the month, L-n (n 1-30) the n-th
//     day before it (L-1 is the day before the last), LW the last weekday
//     (Monday to Friday) of the month, and nW (n 1-31) the weekday nearest
//     day n within its month: a Saturday moves to the Friday before, a
//     Sunday to the Monday after, unless that leaves the month (1W on a
//     Saturday runs on Monday the 3rd, 31W on a Sunday on Friday the 29th).
//     A month without the day (L-30 in February, 31W in April) has no run.
//   - day of week: dL is the last day d of the month (5L or FRIL: the last
//     Friday) and d#k (k 1-5) the k-th day d (MON#1: the first Monday);
//     a month without a fifth one has no run for d#5. Days are numbered as
//     everywhere in this cron, 0-6 from Sunday (Quartz counts 1-7), or
//     named in any case. L alone, Saturday to Quartz, is refused here: it
//     reads too easily as the last day of the month.
//
// A form is one element of its field's comma-separated list, so "1,15,L"
// is the 1st, the 15th and the last day; Quartz allows a form only alone.
// The letters L and W may be written in either case. The fields then
// combine by this cron's rule (dateMatches): when both are restricted a
// day either one names runs; when one is * or ? the other decides. Quartz
// instead requires ? in one of the two.

// dayForms are the calendar forms of one schedule.
type dayForms struct {
	// fromEnd has bit n for L-n, bit 0 for L.
	fromEnd uint32
	// nearest has bit n for nW.
	nearest uint32
	// lastWeekday is LW.
	lastWeekday bool
	// lastOf has bit d for dL; nth[k] has bit d for d#k.
	lastOf uint8
	nth    [6]uint8
}

// domMatches reports whether the day-of-month forms name day's date.
func (f *dayForms) domMatches(day time.Time) bool {
	d, last := day.Day(), daysIn(day)
	if f.fromEnd&(1<<uint(last-d)) != 0 {
		return true
	}
	if f.lastWeekday && d == nearestWeekday(day, last, last) {
		return true
	}
	// The nearest weekday of n is n-2 to n+2.
	for n := max(d-2, 1); n <= min(d+2, last); n++ {
		if f.nearest&(1<<uint(n)) != 0 && nearestWeekday(day, n, last) == d {
			return true
		}
	}
	return false
}

// dowMatches reports whether the day-of-week forms name day's date.
func (f *dayForms) dowMatches(day time.Time) bool {
	w := uint8(1) << uint(day.Weekday())
	if f.lastOf&w != 0 && day.Day()+7 > daysIn(day) {
		return true
	}
	return f.nth[(day.Day()+6)/7]&w != 0
}

// daysIn is the number of days of day's month.
func daysIn(day time.Time) int {
	return time.Date(day.Year(), day.Month()+1, 0, 0, 0, 0, 0, time.UTC).Day()
}

// nearestWeekday is the weekday nearest day n of day's month, which has
// last days, without leaving the month.
func nearestWeekday(day time.Time, n, last int) int {
	switch time.Date(day.Year(), day.Month(), n, 0, 0, 0, 0, time.UTC).Weekday() {
	case time.Saturday:
		if n == 1 {
			return 3
		}
		return n - 1
	case time.Sunday:
		if n == last {
			return n - 2
		}
		return n + 1
	}
	return n
}

// calendarSchedule is a five-field schedule with calendar forms: spec holds
// what cron parsed of it, the forms taken out of the day fields (a day
// field of forms only is then empty: it names no day, and is restricted).
type calendarSchedule struct {
	spec  *cron.SpecSchedule
	forms dayForms
	// anyDay is spec with every day allowed, to find the times of a day.
	anyDay cron.SpecSchedule
}

// Next is the first run strictly after t, read on t's own clock. Like
// cron's, it is exact on a fixed offset, which is how nextAbsolute asks
// it; nextWallTime reads the forms through dateMatches instead.
func (c *calendarSchedule) Next(t time.Time) time.Time {
	day := time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, t.Location())
	for lastYear := t.Year() + 5; day.Year() <= lastYear; day = day.AddDate(0, 0, 1) {
		if c.spec.Month&(1<<uint(day.Month())) == 0 || !dateMatches(c.spec, &c.forms, day) {
			continue
		}
		from := day.Add(-time.Nanosecond)
		if from.Before(t) {
			from = t
		}
		if n := c.anyDay.Next(from); !n.IsZero() && n.Year() == day.Year() && n.YearDay() == day.YearDay() {
			return n
		}
	}
	return time.Time{}
}

// parseFields parses a schedule as cron does, and the five-field form with
// calendar forms in its day fields too. A schedule without them goes to
// cron exactly as written.
func parseFields(spec string) (cron.Schedule, error) {
	fields := strings.Fields(spec)
	if len(fields) != 5 || strings.HasPrefix(spec, "@") {
		return parseStandard(spec)
	}
	var forms dayForms
	found := false
	for i, field := range fields {
		elements := strings.Split(field, ",")
		for j, e := range elements {
			form, err := forms.add(i, e)
			if err != nil {
				return nil, fmt.Errorf("%s field %s: %w", fieldRanges[i].name, quote(e), err)
			}
			if form {
				found = true
				elements[j] = "" // cron skips empty elements
			}
		}
		fields[i] = strings.Join(elements, ",")
		if fields[i] == "" {
			fields[i] = "," // no element left: no day, as cron reads ","
		}
	}
	if !found {
		return parseStandard(spec)
	}
	sched, err := parseStandard(strings.Join(fields, " "))
	if err != nil {
		return nil, err
	}
	spec5 := sched.(*cron.SpecSchedule)
	if forms.nth[5] != 0 && spec5.Month&^cronStar == 1<<uint(time.February) {
		// A leap February has a fifth of one weekday once in 28 years:
		// past the five years Next looks ahead.
		return nil, errors.New("a fifth weekday (#5) in February alone comes once in 28 years at most; name more months or use L (the last one)")
	}
	c := &calendarSchedule{spec: spec5, forms: forms, anyDay: *spec5}
	c.anyDay.Dom, c.anyDay.Dow = ^uint64(0), ^uint64(0)
	return c, nil
}

// add reads element e of field i (0 is the minute) into f when it is a
// calendar form, and reports whether it was. An element that uses the
// letters of a form where none fits is refused here with a reason; any
// other is left to cron. Elements cron reads as * or ? are cron's.
func (f *dayForms) add(i int, e string) (bool, error) {
	head, _, _ := strings.Cut(e, "/")
	head, _, _ = strings.Cut(head, "-")
	if head == "*" || head == "?" {
		return false, nil
	}
	lower := strings.ToLower(e)
	switch i {
	case 2:
		if !strings.ContainsAny(lower, "lw#") {
			return false, nil
		}
		return true, f.addDom(lower)
	case 4:
		// wed is the one day name holding a w; none holds an l.
		if strings.Contains(strings.ReplaceAll(lower, "wed", ""), "w") {
			return false, errors.New("W is for the day-of-month field (15W: the weekday nearest the 15th)")
		}
		if !strings.Contains(lower, "#") && !strings.HasSuffix(lower, "l") {
			return false, nil
		}
		return true, f.addDow(e)
	}
	if i == 3 {
		lower = strings.ReplaceAll(lower, "jul", "") // the one month name holding an l
	}
	if strings.ContainsAny(lower, "lw#") {
		return false, errors.New("L, W and # are only for the day-of-month and day-of-week fields")
	}
	return false, nil
}

// addDom reads a day-of-month form, lower-cased.
func (f *dayForms) addDom(e string) error {
	switch {
	case e == "l":
		f.fromEnd |= 1
	case e == "lw":
		f.lastWeekday = true
	case strings.HasPrefix(e, "l-"):
		n, ok := atoi(e[2:])
		if !ok || n < 1 || n > 30 {
			return errors.New("L-n takes n from 1 to 30 (L-1: the day before the last)")
		}
		f.fromEnd |= 1 << uint(n)
	case strings.HasSuffix(e, "w"):
		n, ok := atoi(e[:len(e)-1])
		if !ok || n < 1 || n > 31 {
			return errors.New("nW takes a day n from 1 to 31 (15W: the weekday nearest the 15th)")
		}
		f.nearest |= 1 << uint(n)
	case strings.Contains(e, "#"):
		return errors.New("# is for the day-of-week field (MON#1: the first Monday)")
	default:
		return errors.New("not a value, range or step, nor L, L-n, LW or nW")
	}
	return nil
}

// addDow reads a day-of-week form: dL or d#k.
func (f *dayForms) addDow(e string) error {
	if d, k, ok := strings.Cut(e, "#"); ok {
		n, ok := atoi(k)
		if !ok || n < 1 || n > 5 {
			return errors.New("d#k takes k from 1 to 5 (MON#1: the first Monday)")
		}
		day, ok := weekday(d)
		if !ok {
			return errors.New("d#k takes a day d from 0 to 6 or SUN to SAT (MON#1: the first Monday)")
		}
		f.nth[n] |= 1 << uint(day)
		return nil
	}
	d := e[:len(e)-1] // ends in L or l
	if d == "" {
		return errors.New("L alone is for the day-of-month field; here name the day (5L or FRIL: the last Friday)")
	}
	day, ok := weekday(d)
	if !ok {
		return errors.New("dL takes a day d from 0 to 6 or SUN to SAT (5L: the last Friday)")
	}
	f.lastOf |= 1 << uint(day)
	return nil
}

// weekdayNames are cron's, looked up lower-cased as cron does.
var weekdayNames = map[string]int{"sun": 0, "mon": 1, "tue": 2, "wed": 3, "thu": 4, "fri": 5, "sat": 6}

// weekday reads a day of the week as cron reads a value: a name in any
// case, or a number 0-6.
func weekday(s string) (int, bool) {
	if d, ok := weekdayNames[strings.ToLower(s)]; ok {
		return d, true
	}
	n, ok := atoi(s)
	return n, ok && n <= 6
}

// atoi reads a non-negative number as cron's strconv.Atoi does (a plus
// sign and any number of leading zeros allowed), without a minus sign;
// false for one past 999999999, which no form takes.
func atoi(s string) (int, bool) {
	digits := strings.TrimPrefix(s, "+")
	if digits == "" || strings.Trim(digits, "0123456789") != "" {
		return 0, false
	}
	digits = strings.TrimLeft(digits, "0")
	if len(digits) > 9 {
		return 0, false
	}
	n := 0
	for _, c := range digits {
		n = 10*n + int(c-'0')
	}
	return n, true
}
