package schedule

import (
	"fmt"
	"strings"
)

// The CRD's CEL rules (x-kubernetes-validations) refuse at admission what
// Resolve and Parse refuse, as far as CEL can say it, and never anything
// they accept. The rules are regular expressions written out here from the
// grammar the parser accepts (robfig/cron v3's ParseStandard, the H forms of
// hash.go, the calendar forms of calendar.go and Parse's own checks), so the two are read side by side; the
// markers on CronJobSpec carry the rules verbatim, and a unit test in
// pkg/apis/batch/v1 keeps them equal (go test ./pkg/apis/batch/v1 -update
// rewrites them). What CEL cannot know stays with the controller: a zone
// missing from the tz database, a schedule that never fires (30 February,
// or a month chosen by H), and an @every duration past what Go can hold.
//
// Every expression is RE2 in Go's syntax, as CEL's matches() and the
// Kubernetes find/findAll functions compile it, and holds no quote or
// backtick so it can sit in a CEL raw string inside a marker.

// space is one character of what strings.Fields and strings.TrimSpace
// treat as white space (unicode.IsSpace): \t \n \v \f \r, U+0085 and the
// Unicode separators, space among them.
const space = `[\t-\r\x{85}\p{Z}]`

// notSpace is one character that is neither white space nor the given
// extra characters.
func notSpace(extra string) string { return `[^\t-\r\x{85}\p{Z}` + extra + `]` }

// celField is one of the five fields as the cron parser bounds it, with
// the bounds H takes in it (hash.go's fieldRanges).
type celField struct {
	name         string
	lo, hi       int
	hlo, hhi     int
	names        []string // names[i] is the value lo+i; cron looks them up lower-cased
	emptyFiresOK bool     // a field of commas only can still fire (day fields: OR)
}

var celFields = [5]celField{
	{name: "minute", lo: 0, hi: 59, hlo: 0, hhi: 59},
	{name: "hour", lo: 0, hi: 23, hlo: 0, hhi: 23},
	// A day-of-month field of commas only has no day, yet cron fires on the
	// day of week alone when that is restricted; so commas only pass here.
	{name: "day of month", lo: 1, hi: 31, hlo: 1, hhi: 28, emptyFiresOK: true},
	{name: "month", lo: 1, hi: 12, hlo: 1, hhi: 12,
		names: []string{"jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"}},
	{name: "day of week", lo: 0, hi: 6, hlo: 0, hhi: 6,
		names: []string{"sun", "mon", "tue", "wed", "thu", "fri", "sat"}, emptyFiresOK: true},
}

// digits matches the canonical decimal forms of lo..hi (0 <= lo <= hi < 100).
func digits(lo, hi int) string {
	var alts []string
	class := func(a, b int) string {
		if a == b {
			return fmt.Sprint(a)
		}
		return fmt.Sprintf("[%d-%d]", a, b)
	}
	if lo <= 9 {
		alts = append(alts, class(lo, min(hi, 9)))
	}
	if hi >= 10 {
		a, b := max(lo, 10), hi
		ta, ua, tb, ub := a/10, a%10, b/10, b%10
		if ta == tb {
			alts = append(alts, fmt.Sprint(ta)+class(ua, ub))
		} else {
			first, last := ta, tb
			if ua > 0 {
				alts = append(alts, fmt.Sprint(ta)+class(ua, 9))
				first++
			}
			if ub < 9 {
				last--
			}
			if first <= last {
				alts = append(alts, class(first, last)+"[0-9]")
			}
			if ub < 9 {
				alts = append(alts, fmt.Sprint(tb)+class(0, ub))
			}
		}
	}
	return strings.Join(alts, "|")
}

// number matches what strconv.Atoi reads as a value in lo..hi: an optional
// plus sign and any number of leading zeros.
func number(lo, hi int) string { return `\+?0*(?:` + digits(lo, hi) + `)` }

// nameRE matches what strings.ToLower turns into name: each letter in
// either case, and for i also U+0130, which Go lower-cases to i (K, U+212A,
// would lower-case to k, which no cron name holds).
func nameRE(name string) string {
	var b strings.Builder
	for _, r := range name {
		up := strings.ToUpper(string(r))
		if r == 'i' {
			up += `\x{130}`
		}
		fmt.Fprintf(&b, "[%c%s]", r, up)
	}
	return b.String()
}

// value matches one value of f in lo..hi, as a number or a name.
func (f celField) value(lo, hi int) string {
	alts := []string{number(lo, hi)}
	for v := lo; v <= hi && f.names != nil; v++ {
		alts = append(alts, nameRE(f.names[v-f.lo]))
	}
	return "(?:" + strings.Join(alts, "|") + ")"
}

// rangeRE matches a-b with lo <= a <= b <= hi (a == b too), numbers only
// when numeric, names too when the field has them.
func (f celField) rangeRE(lo, hi int, named bool) string {
	numeric := numericRange(lo, hi)
	if !named {
		return numeric
	}
	alts := []string{numeric}
	for a := lo; a <= hi; a++ {
		alts = append(alts, nameRE(f.names[a-f.lo])+"-"+f.value(a, hi))
		// A number before a name: the names from a on.
		var later []string
		for b := a; b <= hi; b++ {
			later = append(later, nameRE(f.names[b-f.lo]))
		}
		alts = append(alts, number(a, a)+"-(?:"+strings.Join(later, "|")+")")
	}
	return "(?:" + strings.Join(alts, "|") + ")"
}

// numericRange matches a-b in numbers, lo <= a <= b <= hi < 100. The
// starts are grouped by their tens digit: a b of a higher tens digit
// follows any of them, one of the same tens digit needs units at least as
// high.
func numericRange(lo, hi int) string {
	const pfx = `\+?0*`
	class := func(a, b int) string {
		if a == b {
			return fmt.Sprint(a)
		}
		return fmt.Sprintf("[%d-%d]", a, b)
	}
	var alts []string
	for t := lo / 10; t <= hi/10; t++ {
		ulo, uhi := max(lo, 10*t)-10*t, min(hi, 10*t+9)-10*t
		tens := ""
		if t > 0 {
			tens = fmt.Sprint(t)
		}
		if hi >= 10*(t+1) {
			alts = append(alts, tens+class(ulo, uhi)+"-"+pfx+"(?:"+digits(10*(t+1), hi)+")")
		}
		for u := ulo; u <= uhi; u++ {
			alts = append(alts, tens+fmt.Sprint(u)+"-"+pfx+tens+class(u, uhi))
		}
	}
	return pfx + "(?:" + strings.Join(alts, "|") + ")"
}

// step matches the number after a slash: what Atoi reads as a positive
// int64. Nineteen digits may still overflow; those are left to the parser.
const step = `\+?0*[1-9][0-9]{0,18}`

// element matches one comma-separated element of field f, as cron's
// getRange reads it (or as resolvePart reads an H form):
//   - * or ? (cron ignores anything after a hyphen there), with a step;
//   - a value, or a value with a step (value-max/step);
//   - a range a-b with a <= b, with or without a step;
//   - H, H(a-b), H/n, H(a-b)/n within the H bounds; n at most the width
//     of the H bounds here, and at most b-a+1 by hStepOK;
//   - in the day fields, the calendar forms of calendar.go: L, L-n (n
//     1-30), LW and nW (n 1-31) in the day of month; a value followed by
//     L or by #k (k 1-5) in the day of week. L and W in either case.
func (f celField) element() string {
	named := f.names != nil
	value := f.value(f.lo, f.hi)
	star := `[*?](?:-` + notSpace(",/") + `*)?`
	h := `H(?:\(` + f.rangeRE(f.hlo, f.hhi, false) + `\))?(?:/` + number(1, f.hhi-f.hlo+1) + `)?`
	// A value is written once, with what may follow it, so that the
	// day of week's names do not count twice against the cost limit.
	afterValue := "/" + step
	e := "(?:(?:" + star + "|" + f.rangeRE(f.lo, f.hi, named) + ")(?:/" + step + ")?|" + h
	switch f.name {
	case "day of month":
		e += `|[Ll](?:-` + number(1, 30) + `|[Ww])?|` + number(1, 31) + `[Ww]`
	case "day of week":
		afterValue += `|[Ll]|#` + number(1, 5)
	}
	return e + "|" + value + "(?:" + afterValue + ")?)"
}

// what names the elements field f takes, for the message.
func (f celField) what() string {
	switch f.name {
	case "day of month":
		return "value, range, step, list, H form, L, L-n, LW or nW"
	case "day of week":
		return "value, range, step, list, H form, dL or d#k (k 1-5)"
	}
	return "value, range, step, list or H form"
}

// fieldRE matches field f: its elements separated by commas, with empty
// elements anywhere (cron skips them); commas only in the day fields.
func (f celField) fieldRE() string {
	e := f.element()
	list := ",*" + e + "(?:,+" + e + ")*,*"
	if f.emptyFiresOK {
		return "(?:" + list + "|,+)"
	}
	return list
}

// durationRE is the syntax of time.ParseDuration without a sign or with a
// plus, never the bare 0 (below a second either way): decimal numbers with
// a unit each (µs in both its spellings).
const durationRE = `\+?(?:(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:ns|us|\x{b5}s|\x{3bc}s|ms|s|m|h))+`

// ScheduleRE is a whole schedule whose shape Resolve and Parse accept:
// five fields, a descriptor, or @every and a duration, with white space
// around it.
func ScheduleRE() string {
	var fields []string
	for _, f := range celFields {
		fields = append(fields, f.fieldRE())
	}
	return "^" + space + "*(?:@(?:yearly|annually|monthly|weekly|daily|midnight|hourly)|@every " + durationRE + "|" +
		strings.Join(fields, space+"+") + ")" + space + "*$"
}

// FieldRE is the i-th field alone (0 is the minute), for the message
// naming the field at fault.
func FieldRE(i int) string { return "^" + celFields[i].fieldRE() + "$" }

// fieldsRE finds the fields as strings.Fields splits them.
var fieldsRE = notSpace("") + "+"

// hStepRE finds each H(a-b)/n element with numbers short enough for CEL's
// int(); ScheduleRE has checked the bounds, hStepOK checks n <= b-a+1.
const hStepRE = `(?:^|[\t-\r\x{85}\p{Z},])H\(\+?0*[0-9]{1,3}-\+?0*[0-9]{1,3}\)/\+?0*[0-9]{1,3}`

// timeZonePartRE is the shape the built-in CronJob's validation gives
// each /-separated part of spec.timeZone: 1 to 14 of A-Z a-z 0-9 . - _ +,
// neither . nor .., not starting with a hyphen.
const timeZonePartRE = `(?:[A-Za-z_0-9+][A-Za-z.\-_0-9+]{0,13}|\.[A-Za-z\-_0-9+][A-Za-z.\-_0-9+]{0,12}|\.\.[A-Za-z.\-_0-9+]{1,12})`

// TimeZoneRE is a whole spec.timeZone in that shape. loadLocation refuses
// any other zone too: the built-in CronJob does, and such a name (for
// example Europe//Berlin) resolves, if at all, only as a path in the
// machine's zone directory, never in the database embedded in the binary.
const TimeZoneRE = "^" + timeZonePartRE + "(?:/" + timeZonePartRE + ")*$"

// Validation is one x-kubernetes-validations rule.
type Validation struct {
	Rule, Message, MessageExpression string
}

// Names of the cron fields for messages.
const fieldList = "minute 0-59, hour 0-23, day of month 1-31, month 1-12 or JAN-DEC, day of week 0-6 or SUN-SAT"

// ScheduleValidations are the rules on spec.schedule, at most one of which
// fails for any schedule: TZ= first, then the shape (with the H step, which
// must be at most the width of its range), then @every below a second. The
// shape's message names the first field at fault: field i is matched
// after skipping i runs of non-space, so each field's expression is
// priced once.
func ScheduleValidations() []Validation {
	word := notSpace("") + "+"
	fieldMsgs := ""
	for i, f := range celFields {
		prefix := fmt.Sprintf("^%s*(?:%s%s+){%d}", space, word, space, i)
		fieldMsgs += fmt.Sprintf("!self.matches(r'%s(?:%s)(?:%s|$)') ? 'the %s field (the %s) is not a %s within %d-%d' : ",
			prefix, f.fieldRE(), space, f.name, ordinals[i], f.what(), f.lo, f.hi)
	}
	return []Validation{
		{
			Rule:    `!self.contains('TZ=')`,
			Message: "sets a time zone (TZ= or CRON_TZ=): put it in spec.timeZone instead",
		},
		{
			// The H step needs arithmetic, so it is checked here, after the
			// shape, rather than in a rule of its own that would fail beside
			// this one.
			Rule:    `self.contains('TZ=') || self.matches(r'` + ScheduleRE() + `') && ` + hStepOK,
			Message: "not a cron schedule: five fields (" + fieldList + "), a descriptor such as @hourly, or @every and a Go duration",
			// Five fields that each have the shape leave the H step at fault.
			MessageExpression: `self.trim().startsWith('@') ? ` +
				`'a descriptor is one of @yearly, @annually, @monthly, @weekly, @daily, @midnight, @hourly, or @every and a Go duration such as 90s or 1h30m' : ` +
				`!self.matches(r'^` + space + `*` + word + `(?:` + space + `+` + word + `){4}` + space + `*$') ? ` +
				`'needs five fields (` + fieldList + `)' : ` +
				fieldMsgs + `'in H(a-b)/n the step n must be at most b-a+1'`,
		},
		{
			Rule:    `!self.trim().startsWith('@every ') || !self.trim().substring(7).matches(r'^` + durationRE + `$') || duration(self.trim().substring(7)) >= duration('1s')`,
			Message: "@every needs an interval of at least 1s",
		},
	}
}

// hStepOK holds when every H(a-b)/n has n <= b-a+1.
const hStepOK = `self.findAll(r'` + hStepRE + `').map(m, m.findAll('[0-9]+')).all(n, int(n[2]) <= int(n[1]) - int(n[0]) + 1)`

var ordinals = [5]string{"first", "second", "third", "fourth", "fifth"}

// TimeZoneValidations are the rules on spec.timeZone: not empty, not
// Local in any case, and shaped as the built-in CronJob checks it.
func TimeZoneValidations() []Validation {
	return []Validation{
		{
			Rule:    `self != '' && !self.matches('^(?i)local$')`,
			Message: "must name an IANA time zone such as Europe/Berlin; leave spec.timeZone unset for the controller's local time",
		},
		{
			Rule:    `self == '' || self.matches(r'` + TimeZoneRE + `')`,
			Message: "not an IANA time zone name: each /-separated part is 1 to 14 of A-Z a-z 0-9 . - _ +, not . or .., not starting with -",
		},
	}
}
