// Package schedule holds the time arithmetic of a CronJob: parsing its
// schedule and time zone, and finding which run is due at a given instant.
// Everything here is a pure function of its arguments; the controller passes
// in "now" from its clock.
package schedule

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

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
	return &Error{Reason: ReasonInvalidSchedule, Message: fmt.Sprintf(format, args...)}
}

// Schedule is a parsed cron schedule bound to the time zone it is read in.
type Schedule struct {
	cron cron.Schedule
	loc  *time.Location
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
		return nil, invalidSchedule("schedule %q sets a time zone inside the schedule; use spec.timeZone instead", spec)
	}
	if rest, ok := strings.CutPrefix(trimmed, "@every "); ok {
		// cron rounds sub-second intervals up to a second without a word;
		// refusing them says plainly what will happen.
		d, err := time.ParseDuration(strings.TrimSpace(rest))
		if err != nil {
			return nil, invalidSchedule("schedule %q: %v", spec, err)
		}
		if d < time.Second {
			return nil, invalidSchedule("schedule %q: @every needs an interval of at least 1s", spec)
		}
	}
	sched, err := parseStandard(trimmed)
	if err != nil {
		return nil, invalidSchedule("schedule %q: %v", spec, err)
	}
	s := &Schedule{cron: sched, loc: loc}
	// Every cron pattern that fires at all fires within four years (29
	// February is the rarest day), and Next looks five years ahead.
	if s.Next(time.Unix(0, 0)).IsZero() {
		return nil, invalidSchedule("schedule %q never fires", spec)
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
	return nextWithDST(s.cron, s.loc, t)
}

var (
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
		return nil, &Error{Reason: ReasonUnknownTimeZone, Message: fmt.Sprintf("time zone %q is not an IANA time zone name; leave spec.timeZone unset for the controller's local time", zone)}
	}
	zonesMu.RLock()
	loc, ok := zones[zone]
	zonesMu.RUnlock()
	if ok {
		return loc, nil
	}
	loc, err := time.LoadLocation(zone)
	if err != nil {
		return nil, &Error{Reason: ReasonUnknownTimeZone, Message: fmt.Sprintf("unknown time zone %q: %v", zone, err)}
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
