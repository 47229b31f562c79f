package planner

import (
	"fmt"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"

	cronv1 "github.com/cronjob-controller/cronjob-controller/pkg/apis/batch/v1"
)

// versioned is cal as the API server serves it: with a UID and a
// resourceVersion.
func versioned(cal *cronv1.Calendar, uid types.UID, rv string) *cronv1.Calendar {
	cal.UID, cal.ResourceVersion = uid, rv
	return cal
}

// A Calendar that has not changed is parsed once, whatever the number of
// syncs: a 1000-date Calendar then costs a sync little more than none,
// where parsing it again each sync costs ~55 KB.
func TestCalendarParsedOncePerVersion(t *testing.T) {
	var dates []string
	day := time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range 1000 {
		dates = append(dates, day.AddDate(0, 0, i).Format("2006-01-02"))
	}
	big := versioned(calendarOf("big", "UTC", dates), "big-uid", "7")
	cj := cronJob(last(at(0)), excluding("big"))
	plain := cronJob(last(at(0)))
	now := at(5 * time.Minute)
	cals := calendarsOf(big)
	cache := NewCalendarCache()
	with := bytesPerRun(func() { Decide(Input{CronJob: cj, Now: now, Calendars: cals, CalendarCache: cache}) })
	without := bytesPerRun(func() { Decide(Input{CronJob: plain, Now: now, CalendarCache: cache}) })
	if with-without > 8<<10 {
		t.Errorf("%s", fmt.Sprintf("a sync with a 1000-date Calendar allocates %d bytes, without %d: the unchanged Calendar is parsed again each sync", with, without))
	}
	if got := cache.parsed(); got != 1 {
		t.Errorf("the Calendar was parsed %d times over 21 syncs, want once", got)
	}
}

// bytesPerRun is the heap bytes f allocates, averaged over 20 runs.
func bytesPerRun(f func()) int64 {
	f()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range 20 {
		f()
	}
	runtime.ReadMemStats(&after)
	return int64(after.TotalAlloc-before.TotalAlloc) / 20
}

// A Calendar changed in any way the API server records (an edit: a new
// resourceVersion; deleted and created again: a new UID) is parsed again,
// so the change takes effect at once; an object with no resourceVersion
// (built by hand, never served) is never cached.
func TestCalendarCacheParsesAChangedCalendarAgain(t *testing.T) {
	friday := func() *cronv1.Calendar { return calendarOf("cal", "UTC", []string{"2026-05-01"}) }
	none := func() *cronv1.Calendar { return calendarOf("cal", "UTC", []string{"2026-05-02"}) }
	cases := []struct {
		name          string
		before, after *cronv1.Calendar
		wantCreates   []string
		wantParses    int
	}{
		{"edited: new resourceVersion, Friday dropped",
			versioned(friday(), "u1", "1"), versioned(none(), "u1", "2"), hours(10), 2},
		{"edited: new resourceVersion, Friday added",
			versioned(none(), "u1", "1"), versioned(friday(), "u1", "2"), nil, 2},
		{"deleted and created again: new UID, same resourceVersion",
			versioned(friday(), "u1", "5"), versioned(none(), "u2", "5"), hours(10), 2},
		{"unchanged: parsed once",
			versioned(friday(), "u1", "1"), versioned(friday(), "u1", "1"), nil, 1},
		{"no resourceVersion: never cached",
			friday(), none(), hours(10), 2},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cache := NewCalendarCache()
			cj := cronJob(last(at(-time.Hour)), excluding("cal"))
			Decide(Input{CronJob: cj, Now: at(5 * time.Second), Calendars: calendarsOf(tc.before), CalendarCache: cache})
			p := Decide(Input{CronJob: cj, Now: at(5 * time.Second), Calendars: calendarsOf(tc.after), CalendarCache: cache})
			if got := names(p.Creates, func(c Create) string { return c.Job.Name }); !slices.Equal(got, tc.wantCreates) {
				t.Errorf("after the change: creates %q, want %q", got, tc.wantCreates)
			}
			if got := cache.parsed(); got != tc.wantParses {
				t.Errorf("parsed %d times, want %d", got, tc.wantParses)
			}
		})
	}
}

// The cache keeps one entry per Calendar name: an edit replaces the
// entry of the version before, an unusable Calendar is kept (and not
// parsed again) like a usable one, and Forget drops a deleted Calendar.
func TestCalendarCacheStaysBounded(t *testing.T) {
	cache := NewCalendarCache()
	cj := cronJob(last(at(0)), excluding("cal", "mars"))
	mars := versioned(calendarOf("mars", "Mars/Olympus_Mons", nil), "m", "1")
	for i := range 100 {
		cal := versioned(calendarOf("cal", "UTC", []string{"2026-05-01"}), "u", strconv.Itoa(i+1))
		Decide(Input{CronJob: cj, Now: at(5 * time.Minute), Calendars: calendarsOf(cal, mars), CalendarCache: cache})
		if n := cache.Len(); n != 2 {
			t.Fatalf("after edit %d: %d entries, want 2 (one per Calendar)", i+1, n)
		}
	}
	if got := cache.parsed(); got != 101 {
		t.Errorf("parsed %d times, want 101 (each of 100 versions once, the invalid one once)", got)
	}
	cache.Forget("cal")
	cache.Forget("never-seen")
	if n := cache.Len(); n != 1 {
		t.Errorf("after forgetting one: %d entries, want 1", n)
	}
	var nilCache *CalendarCache
	nilCache.Forget("cal") // a controller without a cache forgets nothing
	if nilCache.Len() != 0 {
		t.Error("a nil cache holds entries")
	}
}

// Syncs of many CronJobs share one cache from several workers (run it
// with -race); each decides as it would alone.
func TestCalendarCacheSharedByWorkers(t *testing.T) {
	cache := NewCalendarCache()
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Go(func() {
			for i := range 50 {
				rv := strconv.Itoa(i%3 + 1)
				cal := versioned(calendarOf("cal", "UTC", []string{"2026-05-01"}), "u", rv)
				if w%2 == 1 {
					cache.Forget("cal")
				}
				cj := cronJob(last(at(-time.Hour)), excluding("cal"))
				p := Decide(Input{CronJob: cj, Now: at(5 * time.Second), Calendars: calendarsOf(cal), CalendarCache: cache})
				if len(p.Creates) != 0 {
					t.Errorf("worker %d, sync %d: creates %d, want the Friday run excluded", w, i, len(p.Creates))
					return
				}
			}
		})
	}
	wg.Wait()
	if n := cache.Len(); n > 1 {
		t.Errorf("%d entries, want at most 1", n)
	}
}
