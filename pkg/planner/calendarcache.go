package planner

import (
	"sync"

	"k8s.io/apimachinery/pkg/types"

	cronv1 "github.com/cronjob-controller/cronjob-controller/pkg/apis/batch/v1"
)

// CalendarCache keeps each Calendar parsed as of one version, so a sync
// does not parse again (up to 1000 dates, 200 ranges and a zone) a
// Calendar that has not changed since the last sync that read it.
//
// It holds one entry per Calendar name: the version of another UID or
// resourceVersion replaces it, and Forget drops it when the Calendar is
// deleted, so edits do not make it grow. Decisions do not depend on it:
// the API server gives an object a new resourceVersion (or, created
// again, a new UID) whenever its spec changes, so a hit is exactly what
// parsing again would give; an object without a resourceVersion (never
// served) is parsed each time. Safe for concurrent use; the zero value is
// not ready, use NewCalendarCache; a nil cache parses each time.
type CalendarCache struct {
	mu     sync.Mutex
	byName map[string]parsedCalendar
	// parses counts the parses done, for tests.
	parses int
}

// parsedCalendar is a Calendar as parseCalendar read one version of it.
// cal is shared by every sync that hits it: read only.
type parsedCalendar struct {
	uid             types.UID
	resourceVersion string
	cal             calendar
	err             error
}

// NewCalendarCache returns an empty cache.
func NewCalendarCache() *CalendarCache {
	return &CalendarCache{byName: map[string]parsedCalendar{}}
}

// parse returns cal parsed, from the cache when this version of it was
// parsed before. The parse runs outside the lock: two syncs missing at
// once both parse, and either result is the same.
func (c *CalendarCache) parse(cal *cronv1.Calendar) (calendar, error) {
	if c == nil {
		return parseCalendar(cal)
	}
	versioned := cal.ResourceVersion != ""
	c.mu.Lock()
	e, ok := c.byName[cal.Name]
	c.mu.Unlock()
	if versioned && ok && e.uid == cal.UID && e.resourceVersion == cal.ResourceVersion {
		return e.cal, e.err
	}
	parsed, err := parseCalendar(cal)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.parses++
	if versioned {
		c.byName[cal.Name] = parsedCalendar{uid: cal.UID, resourceVersion: cal.ResourceVersion, cal: parsed, err: err}
	}
	return parsed, err
}

// Forget drops the Calendar named name, deleted or no longer found.
func (c *CalendarCache) Forget(name string) {
	if c == nil {
		return
	}
	c.mu.Lock()
	delete(c.byName, name)
	c.mu.Unlock()
}

// Len is the number of Calendars the cache holds.
func (c *CalendarCache) Len() int {
	if c == nil {
		return 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.byName)
}

// parsed is the number of parses the cache did (tests read it).
func (c *CalendarCache) parsed() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.parses
}
