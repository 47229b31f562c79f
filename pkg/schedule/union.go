package schedule

import (
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/robfig/cron/v3"
)

// Several schedules (spec.schedules) are one Schedule whose times are the
// union of theirs. A time two entries name is one time: the planner makes
// one Job per time, named after it.

// ListSeparator joins the resolved entries of spec.schedules in
// status.resolvedSchedule and status.previousSchedules. A token "|" between
// blanks is no cron field and no descriptor, so no single schedule the
// parser accepts contains the separator: a resolved text holding it is a
// list, one without it a single schedule.
const ListSeparator = " | "

// MaxSchedules is the most entries spec.schedules may have, and
// MaxEntryLength the most characters of each, as the schema's MaxItems
// and MaxLength say.
const (
	MaxSchedules   = 10
	MaxEntryLength = 128
)

// ResolveList resolves each entry as Resolve does, with the same seed, so
// an entry's H values do not depend on its place in the list. An error
// names the entry by its index. JoinList makes the status text of the
// result once ParseList has accepted it.
func ResolveList(entries []string, seed string) ([]string, error) {
	if len(entries) == 0 {
		return nil, invalidSchedule("spec.schedules is empty")
	}
	if len(entries) > MaxSchedules {
		return nil, invalidSchedule("spec.schedules has %d entries, at most %d are allowed", len(entries), MaxSchedules)
	}
	resolved := make([]string, len(entries))
	for i, e := range entries {
		if n := utf8.RuneCountInString(e); n > MaxEntryLength {
			return nil, invalidSchedule("spec.schedules[%d]: %s: an entry takes at most %d characters", i, quote(e), MaxEntryLength)
		}
		r, err := Resolve(e, seed)
		if err != nil {
			return nil, entryError(i, err)
		}
		resolved[i] = strings.TrimSpace(r)
	}
	return resolved, nil
}

// JoinList is the text status.resolvedSchedule keeps of resolved entries
// ParseList accepts (none of which then holds ListSeparator).
func JoinList(resolved []string) string { return strings.Join(resolved, ListSeparator) }

// ParseResolved parses a resolved schedule: a single one as Parse does, or
// the entries ResolveList joined, as one Schedule naming the union of their
// times.
func ParseResolved(resolved string, timeZone *string) (*Schedule, error) {
	if !strings.Contains(resolved, ListSeparator) {
		return Parse(resolved, timeZone)
	}
	return ParseList(strings.Split(resolved, ListSeparator), timeZone)
}

// ParseList parses the resolved entries of spec.schedules, each as Parse
// does, into one Schedule naming the union of their times. @every is
// refused: its times count from the last run, which a union has no one of.
func ParseList(entries []string, timeZone *string) (*Schedule, error) {
	var union *Schedule
	for i, e := range entries {
		if strings.HasPrefix(strings.TrimSpace(e), "@every") {
			return nil, invalidSchedule("spec.schedules[%d]: %s: @every cannot be one of several schedules (its times count from the last run); use spec.schedule", i, quote(e))
		}
		s, err := Parse(e, timeZone)
		if err != nil {
			if se, ok := AsError(err); ok && se.Reason == ReasonUnknownTimeZone {
				return nil, err
			}
			return nil, entryError(i, err)
		}
		if union == nil {
			union = s
			continue
		}
		union.more = append(union.more, s.cron)
	}
	if union == nil {
		return nil, invalidSchedule("spec.schedules is empty")
	}
	return union, nil
}

// entryError prefixes err's message with the entry's place in the list.
func entryError(i int, err error) error {
	se, ok := AsError(err)
	if !ok {
		return invalidSchedule("spec.schedules[%d]: %s", i, detail(err))
	}
	return &Error{Reason: se.Reason, Message: cut(fmt.Sprintf("spec.schedules[%d]: %s", i, se.Message), maxMessage)}
}

// nextOfAll is the first time after t any of the schedules names.
func nextOfAll(first cron.Schedule, more []cron.Schedule, loc *time.Location, t time.Time) time.Time {
	n := nextWithDST(first, loc, t)
	for _, c := range more {
		if m := nextWithDST(c, loc, t); !m.IsZero() && (n.IsZero() || m.Before(n)) {
			n = m
		}
	}
	return n
}
