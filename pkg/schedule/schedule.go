// Package schedule holds the time arithmetic of a CronJob: parsing its
// schedule and time zone, and finding which run is due at a given instant.
// Everything here is a pure function of its arguments; the controller passes
// in "now" from its clock.
package schedule

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/robfig/cron/v3"
)

// Reasons a schedule cannot be used. They double as Event reasons and as the
// reason of the ScheduleValid condition.
const (
	ReasonInvalidSchedule = "InvalidSchedule"
	ReasonUnknownTimeZone = "UnknownTimeZone"
)

// Error says why a schedule or time zone cannot be used. Retrying does not
// help: only a change of the spec does.
type Error struct {
	// Reason is ReasonInvalidSchedule or ReasonUnknownTimeZone.
	Reason string
	// Message is for people: it quotes the input and the parser's words.
	Message string
}

func (e *Error) Error() string { return e.Message }

func invalidSchedule(format string, args ...any) *Error {
	return &Error{Reason: ReasonInvalidSchedule, Message: cut(fmt.Sprintf(format, args...), maxMessage)}
}

func unknownTimeZone(format string, args ...any) *Error {
	return &Error{Reason: ReasonUnknownTimeZone, Message: cut(fmt.Sprintf(format, args...), maxMessage)}
}

// The controller copies an Error's message into the ScheduleValid
// condition (whose message the API server caps at 32768 bytes) and into
// Events. The schema caps spec.schedule at 1024 characters, but an object
// from before the cap, or one written past validation, can hold a schedule
// or zone of any length; quoted whole, it would make every status write of
// that CronJob fail. So a message quotes a bounded prefix of the input.
const (
	// maxQuoted bounds the quoted form of the user's text, in bytes
	// between the quotes; escapes count in full.
	maxQuoted = 128
	// maxDetail bounds the text of an error from cron or time, which often
	// repeats the input unquoted (cron's "found 3: [a b c]").
	maxDetail = 160
	// maxMessage is the last resort, never reached by the messages here
	// (quote and detail keep each well below it), for one written later.
	maxMessage = 480
)

// quote is %q of s when that is at most maxQuoted bytes between the quotes,
// and otherwise the longest such quoted prefix, then "…" and the length of
// s in characters, as the schema counts them: "xxxx"… (20000 characters).
func quote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); {
		_, size := utf8.DecodeRuneInString(s[i:])
		// Quoting one rune, or one invalid byte, alone gives the very
		// text strconv.Quote gives it inside s.
		q := strconv.Quote(s[i : i+size])
		q = q[1 : len(q)-1]
		if b.Len()-1+len(q) > maxQuoted {
			fmt.Fprintf(&b, `"… (%d characters)`, utf8.RuneCountInString(s))
			return b.String()
		}
		b.WriteString(q)
		i += size
	}
	b.WriteByte('"')
	return b.String()
}

// detail is the text of err from cron or time, bounded. Those packages echo
// the input's bytes as they are, so anything unprintable or invalid UTF-8
// becomes U+FFFD: a message must be text an Event can carry.
func detail(err error) string {
	text := strings.Map(func(r rune) rune {
		if r == utf8.RuneError || !unicode.IsPrint(r) {
			return utf8.RuneError
		}
		return r
	}, err.Error())
	return cut(text, maxDetail)
}

// cut shortens s to at most n bytes, ending with "…", at a rune boundary.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	end := n - len("…")
	for end > 0 && !utf8.RuneStart(s[end]) {
		end--
	}
	return s[:end] + "…"
}

// Schedule is a parsed cron schedule bound to the time zone it is read in.
type Schedule struct {
	cron cron.Schedule
	loc  *time.Location
	// more are the other entries of a list (union.go): the schedule names
	// the times any of them names.
	more []cron.Schedule
	// notBefore and notAfter bound the times it names (window.go); zero
	// leaves that side open.
	notBefore, notAfter time.Time
}

// Parse reads a CronJob's schedule and optional IANA time zone. A nil zone
// means the controller's local time, as with the built-in CronJob.
func Parse(spec string, timeZone *string) (*Schedule, error) {
	loc, err := loadLocation(timeZone)
	if err != nil {
		return nil, err
	}
	trimmed := strings.TrimSpace(spec)
	if strings.Contains(trimmed, "TZ=") {
		return nil, invalidSchedule("schedule %s sets a time zone inside the schedule; use spec.timeZone instead", quote(spec))
	}
	if rest, ok := strings.CutPrefix(trimmed, "@every "); ok {
		// cron rounds sub-second intervals up to a second without a word;
		// refusing them says plainly what will happen.
		d, err := time.ParseDuration(strings.TrimSpace(rest))
		if err != nil {
			return nil, invalidSchedule("schedule %s: %s", quote(spec), detail(err))
		}
		if d < time.Second {
			return nil, invalidSchedule("schedule %s: @every needs an interval of at least 1s", quote(spec))
		}
	}
	sched, err := parseFields(trimmed)
	if err != nil {
		return nil, invalidSchedule("schedule %s: %s", quote(spec), detail(err))
	}
	s := &Schedule{cron: sched, loc: loc}
	// Every cron pattern that fires at all fires within four years (29
	// February is the rarest day; parseFields refuses the fifth weekday
	// of February alone), and Next looks five years ahead.
	if s.Next(time.Unix(0, 0)).IsZero() {
		return nil, invalidSchedule("schedule %s never fires", quote(spec))
	}
	return s, nil
}

// parseStandard turns a panic inside the cron parser into an error, so bad
// input can never take the controller down.
func parseStandard(spec string) (s cron.Schedule, err error) {
	defer func() {
		if r := recover(); r != nil {
			s, err = nil, fmt.Errorf("parser failed: %v", r)
		}
	}()
	return cron.ParseStandard(spec)
}

// Location is the zone the schedule is read in.
func (s *Schedule) Location() *time.Location { return s.loc }

// Next is the first run strictly after t, or the zero time if the schedule
// has none within five years (for example "59 23 31 2 *"). Around daylight
// saving changes it follows the rules in dst.go.
func (s *Schedule) Next(t time.Time) time.Time {
	if !s.notBefore.IsZero() || !s.notAfter.IsZero() {
		return s.nextInWindow(t)
	}
	return s.nextUnbounded(t)
}

// nextUnbounded is Next without the window.
func (s *Schedule) nextUnbounded(t time.Time) time.Time {
	if len(s.more) > 0 {
		return nextOfAll(s.cron, s.more, s.loc, t)
	}
	return nextWithDST(s.cron, s.loc, t)
}

var (
	timeZoneShape = regexp.MustCompile(TimeZoneRE)

	zonesMu sync.RWMutex
	zones   = map[string]*time.Location{}
)

// loadLocation resolves an IANA zone name, caching the result because
// time.LoadLocation reads the zone database on every call and the sync
// handler runs for every CronJob on every wake-up.
func loadLocation(name *string) (*time.Location, error) {
	if name == nil {
		return time.Local, nil
	}
	zone := *name
	if zone == "" || zone == "Local" {
		return nil, unknownTimeZone("time zone %s is not an IANA time zone name; leave spec.timeZone unset for the controller's local time", quote(zone))
	}
	zonesMu.RLock()
	loc, ok := zones[zone]
	zonesMu.RUnlock()
	if ok {
		return loc, nil
	}
	if !timeZoneShape.MatchString(zone) {
		return nil, unknownTimeZone("unknown time zone %s: not an IANA time zone name (each /-separated part is 1 to 14 of A-Z a-z 0-9 . - _ +, not . or .., not starting with -)", quote(zone))
	}
	loc, err := time.LoadLocation(zone)
	if err != nil {
		why := detail(err)
		if strings.HasPrefix(why, "unknown time zone") {
			// The time package's text repeats what ours says.
			why = "not in the time zone database"
		}
		return nil, unknownTimeZone("unknown time zone %s: %s", quote(zone), why)
	}
	zonesMu.Lock()
	zones[zone] = loc
	zonesMu.Unlock()
	return loc, nil
}

// AsError returns the *Error inside err, if any.
func AsError(err error) (*Error, bool) {
	var e *Error
	ok := errors.As(err, &e)
	return e, ok
}
