package planner

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// README: "Editing a Calendar takes effect at the next due time of each
// CronJob naming it ... times already due were decided under the Calendar
// as it was then." The run of 10:00 was due before the Calendar gained
// Friday (at 10:00:02); the sync that decides it comes at 10:00:05 and
// reads only the Calendar as it is now, so the run is Excluded instead of
// started.
func TestProbeCalendarEditAfterDueTime(t *testing.T) {
	t.Skip("FINDING: a Calendar edited between a run's due time and its sync excludes that run (planner reads only the Calendar as it is at the sync); README claims times already due keep the Calendar as it was then")
	edited := at(2 * time.Second)
	cal := calendarOf("freeze", "UTC", []string{"2026-05-01"})
	cal.CreationTimestamp = metav1.NewTime(at(-30 * 24 * time.Hour))
	cal.Generation = 2
	cal.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "kubectl", Operation: metav1.ManagedFieldsOperationUpdate, Time: &metav1.Time{Time: edited}}}
	p := Decide(Input{CronJob: cronJob(last(at(-time.Hour)), excluding("freeze")), Now: at(5 * time.Second), Calendars: calendarsOf(cal)})
	if got := names(p.Creates, func(c Create) string { return c.Job.Name }); len(got) != 1 || got[0] != hours(10)[0] {
		t.Errorf("creates %q, want the run of 10:00 (due before the edit); missed %v", got, missedOf(p.Status))
	}
}

// Every sync parses every Calendar a CronJob names afresh (each of up to
// 1000 dates and 200 ranges, and its zone), although a Calendar changes
// rarely: work on the sync hot path that grows with the Calendar.
func TestProbeCalendarParsedEverySync(t *testing.T) {
	t.Skip("FINDING: resolveCalendars re-parses every named Calendar (a 1000-date Calendar: ~55 KB more per sync, 57 KB vs 1.7 KB) on every sync of every CronJob; nothing caches the parsed form by resourceVersion")
	var dates []string
	day := time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range 1000 {
		dates = append(dates, day.AddDate(0, 0, i).Format("2006-01-02"))
	}
	big := calendarOf("big", "UTC", dates)
	big.ResourceVersion = "7"
	cj := cronJob(last(at(0)), excluding("big"))
	plain := cronJob(last(at(0)))
	now := at(5 * time.Minute)
	cals := calendarsOf(big)
	with := bytesPerRun(func() { Decide(Input{CronJob: cj, Now: now, Calendars: cals}) })
	without := bytesPerRun(func() { Decide(Input{CronJob: plain, Now: now}) })
	if with-without > 8<<10 {
		t.Errorf("%s", fmt.Sprintf("a sync with a 1000-date Calendar allocates %d bytes, without %d: the unchanged Calendar is parsed again each sync", with, without))
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
