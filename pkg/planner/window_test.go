package planner

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"encoding/json"
	cronv1 "github.com/cronjob-controller/cronjob-controller/pkg/apis/batch/v1"
	"github.com/cronjob-controller/cronjob-controller/pkg/job"
	"github.com/cronjob-controller/cronjob-controller/pkg/schedule"
)

// windowCase is a row of TestDecideWindow and TestDecideSchedules.
type windowCase struct {
	name    string
	cronJob *cronv1.CronJob
	now     time.Time

	wantCreates []string
	wantMissed  map[string]int64
	wantEvents  []string
	wantRequeue time.Duration
	// wantNext is status.nextScheduleTime; zero means unset.
	wantNext time.Time
	// wantExpired is the Expired condition's status; "" means absent.
	wantExpired metav1.ConditionStatus
	// wantResolved, when set, is status.resolvedSchedule.
	wantResolved string
	// wantInvalid, when set, is in the message of ScheduleValid=False.
	wantInvalid string
}

func (tc windowCase) run(t *testing.T) {
	t.Helper()
	p := Decide(Input{CronJob: tc.cronJob, Now: tc.now})
	if got := names(p.Creates, func(c Create) string { return c.Job.Name }); !slices.Equal(got, tc.wantCreates) {
		t.Errorf("creates %q, want %q", got, tc.wantCreates)
	}
	if got := missedOf(p.Status); !mapsEqual(got, tc.wantMissed) {
		t.Errorf("missed %v, want %v", got, tc.wantMissed)
	}
	if got := names(p.Events, func(e Event) string { return e.Type + " " + e.Reason }); !slices.Equal(got, tc.wantEvents) {
		t.Errorf("events %q, want %q", got, tc.wantEvents)
	}
	if p.RequeueAfter != tc.wantRequeue {
		t.Errorf("requeue %v, want %v", p.RequeueAfter, tc.wantRequeue)
	}
	if got := p.Status.NextScheduleTime; (got == nil) != tc.wantNext.IsZero() || (got != nil && !got.Time.Equal(tc.wantNext)) {
		t.Errorf("nextScheduleTime %v, want %v", got, tc.wantNext)
	}
	c := meta.FindStatusCondition(p.Status.Conditions, cronv1.ConditionExpired)
	if got := metav1.ConditionStatus(""); c != nil {
		got = c.Status
		if got != tc.wantExpired {
			t.Errorf("Expired %s (%s: %s), want %q", got, c.Reason, c.Message, tc.wantExpired)
		}
	} else if tc.wantExpired != "" {
		t.Errorf("no Expired condition, want %s", tc.wantExpired)
	}
	if tc.wantResolved != "" && p.Status.ResolvedSchedule != tc.wantResolved {
		t.Errorf("resolvedSchedule %q, want %q", p.Status.ResolvedSchedule, tc.wantResolved)
	}
	valid := meta.FindStatusCondition(p.Status.Conditions, cronv1.ConditionScheduleValid)
	switch {
	case tc.wantInvalid == "" && (valid == nil || valid.Status != metav1.ConditionTrue):
		t.Errorf("ScheduleValid %+v, want True", valid)
	case tc.wantInvalid != "" && (valid == nil || valid.Status != metav1.ConditionFalse || !strings.Contains(valid.Message, tc.wantInvalid)):
		t.Errorf("ScheduleValid %+v, want False saying %q", valid, tc.wantInvalid)
	}
}

func TestDecideWindow(t *testing.T) {
	expiredAt := func(u time.Time) string {
		return "spec.notAfter " + u.UTC().Format(time.RFC3339) + " has passed: no scheduled run starts any more"
	}
	for _, tc := range []windowCase{
		{name: "before notBefore: nothing starts, nothing is missed, the next time is the first in the window",
			cronJob: cronJob(notBefore(at(90 * time.Minute))), now: at(time.Second),
			wantNext: at(2 * time.Hour), wantRequeue: 2*time.Hour - time.Second},
		{name: "notBefore is included",
			cronJob: cronJob(last(at(-time.Hour)), notBefore(ten)), now: at(time.Second),
			wantCreates: hours(10), wantNext: at(time.Hour), wantRequeue: time.Hour - time.Second},
		{name: "catch-up never reaches back before notBefore (All)",
			cronJob: cronJob(notBefore(at(-90*time.Minute)), catchUpAll(10)), now: at(time.Second),
			wantCreates: hours(9, 10), wantNext: at(time.Hour), wantRequeue: time.Hour - time.Second},
		{name: "catch-up never reaches back before notBefore (Latest): the times before it are not superseded",
			cronJob: cronJob(notBefore(at(-90 * time.Minute))), now: at(time.Second),
			wantCreates: hours(10), wantMissed: map[string]int64{cronv1.MissedSuperseded: 1}, wantNext: at(time.Hour), wantRequeue: time.Hour - time.Second},
		{name: "notAfter ahead: runs as usual, Expired False, a wake-up when it passes",
			cronJob: cronJob(last(at(-time.Hour)), notAfter(at(30*time.Minute))), now: at(time.Second),
			wantCreates: hours(10), wantExpired: metav1.ConditionFalse, wantRequeue: 30*time.Minute + time.Second - time.Second},
		{name: "notAfter is included; past it, expired at once: no next time, no wake-up",
			cronJob: cronJob(last(at(-time.Hour)), notAfter(ten)), now: at(time.Second),
			wantCreates: hours(10), wantExpired: metav1.ConditionTrue, wantEvents: []string{"Normal Expired"}},
		{name: "a run owed from inside the window still starts after it closed; later times are not missed",
			cronJob: cronJob(last(at(-2*time.Hour)), notAfter(at(-30*time.Minute))), now: at(time.Second),
			wantCreates: hours(9), wantExpired: metav1.ConditionTrue, wantEvents: []string{"Normal Expired"}},
		{name: "expired and settled: no run, no missed count, no wake-up",
			cronJob: cronJob(last(at(-time.Hour)), notAfter(at(-30*time.Minute))), now: at(5 * time.Hour),
			wantExpired: metav1.ConditionTrue, wantEvents: []string{"Normal Expired"}},
		{name: "expired already said: no second Event",
			cronJob: cronJob(last(at(-time.Hour)), notAfter(at(-30*time.Minute)),
				condition(cronv1.ConditionExpired, metav1.ConditionTrue, ReasonExpired, expiredAt(at(-30*time.Minute)))), now: at(5 * time.Hour),
			wantExpired: metav1.ConditionTrue},
		{name: "expired, suspended too: still no wake-up",
			cronJob: cronJob(last(at(-time.Hour)), notAfter(at(-30*time.Minute)), func(cj *cronv1.CronJob) { cj.Spec.Suspend = new(true) }), now: at(5 * time.Hour),
			wantExpired: metav1.ConditionTrue, wantEvents: []string{"Normal Expired"}},
		{name: "notAfter moved later: alive again, the times since owed under the catch-up policy as after a resume",
			cronJob: cronJob(last(at(-time.Hour)), notAfter(at(5*time.Hour)),
				condition(cronv1.ConditionExpired, metav1.ConditionTrue, ReasonExpired, expiredAt(at(-30*time.Minute)))), now: at(2*time.Hour + time.Second),
			wantCreates: hours(12), wantMissed: map[string]int64{cronv1.MissedSuperseded: 2}, wantExpired: metav1.ConditionFalse,
			wantNext: at(3 * time.Hour), wantRequeue: time.Hour - time.Second},
		{name: "notAfter removed: the condition goes",
			cronJob: cronJob(last(at(-time.Hour)), condition(cronv1.ConditionExpired, metav1.ConditionTrue, ReasonExpired, "x")), now: at(time.Second),
			wantCreates: hours(10), wantNext: at(time.Hour), wantRequeue: time.Hour - time.Second},
		{name: "run-now past notAfter still starts: it is a request by hand",
			cronJob: cronJob(last(at(-time.Hour)), notAfter(at(-30*time.Minute)), func(cj *cronv1.CronJob) {
				cj.Annotations = map[string]string{cronv1.RunNowAnnotation: "now"}
			}), now: at(5 * time.Hour),
			wantCreates: []string{job.ManualName("cj", "cj-uid", "", "now", 1)}, wantExpired: metav1.ConditionTrue, wantEvents: []string{"Normal Expired"}},
		{name: "@every inside a window: on the grid from the last run, none before notBefore",
			cronJob: cronJob(sched("@every 40m"), last(at(-2*time.Hour)), notBefore(at(-30*time.Minute))), now: at(time.Second),
			wantCreates: hours(10), wantNext: at(40 * time.Minute), wantRequeue: 40*time.Minute - time.Second},
		{name: "window in a DST zone: 02:30 on the spring day runs at 03:00, inside a window that starts at 02:59",
			cronJob: cronJob(sched("30 2 * * *"), zone("Europe/Berlin"), func(cj *cronv1.CronJob) {
				cj.CreationTimestamp = metav1.NewTime(time.Date(2026, 3, 28, 12, 0, 0, 0, time.UTC))
			}, notBefore(time.Date(2026, 3, 29, 0, 59, 0, 0, time.UTC))), now: time.Date(2026, 3, 29, 1, 0, 1, 0, time.UTC),
			wantCreates: []string{job.Name("cj", time.Date(2026, 3, 29, 1, 0, 0, 0, time.UTC))},
			wantNext:    time.Date(2026, 3, 30, 0, 30, 0, 0, time.UTC), wantRequeue: time.Date(2026, 3, 30, 0, 30, 0, 0, time.UTC).Sub(time.Date(2026, 3, 29, 1, 0, 1, 0, time.UTC))},
	} {
		t.Run(tc.name, tc.run)
	}
}

func TestDecideSchedules(t *testing.T) {
	seed := "default/cj"
	h9, _ := schedule.Resolve("H 9 * * *", seed)
	h17, _ := schedule.Resolve("H 17 * * *", seed)
	for _, tc := range []windowCase{
		{name: "two schedules naming the same time make one Job",
			cronJob: cronJob(schedules("0 * * * *", "0 */2 * * *"), last(at(-time.Hour))), now: at(time.Second),
			wantCreates: hours(10), wantNext: at(time.Hour), wantRequeue: time.Hour - time.Second,
			wantResolved: "0 * * * * | 0 */2 * * *"},
		{name: "the union of their times, caught up oldest first (All)",
			cronJob: cronJob(schedules("0 9 * * *", "30 9 * * *"), last(at(-2*time.Hour)), catchUpAll(10)), now: at(time.Second),
			wantCreates: []string{job.Name("cj", at(-time.Hour)), job.Name("cj", at(-30*time.Minute))},
			wantNext:    at(23 * time.Hour), wantRequeue: 23*time.Hour - time.Second},
		{name: "H in a list: each entry hashed from namespace/name, whatever its place",
			cronJob: cronJob(schedules("H 17 * * *", "H 9 * * *"), last(ten)), now: at(time.Second),
			wantResolved: h17 + " | " + h9, wantNext: nextOf(t, h9, h17, at(time.Second)), wantRequeue: nextOf(t, h9, h17, at(time.Second)).Sub(at(time.Second))},
		{name: "a bad entry is named by its index",
			cronJob: cronJob(schedules("0 * * * *", "0 0 30 2 *"), last(at(-time.Hour))), now: at(time.Second),
			wantInvalid: "spec.schedules[1]", wantEvents: []string{"Warning InvalidSchedule"}},
		{name: "@every is refused in a list",
			cronJob: cronJob(schedules("0 * * * *", "@every 1h"), last(at(-time.Hour))), now: at(time.Second),
			wantInvalid: "spec.schedules[1]", wantEvents: []string{"Warning InvalidSchedule"}},
		{name: "from schedule to schedules: an edit, judged by both (10:00 both name; 09:30 only the new one, so no run)",
			cronJob: cronJob(schedules("0 * * * *", "30 * * * *"), last(at(-time.Hour)), seen("0 * * * *", "UTC")), now: at(time.Second),
			wantCreates: hours(10), wantNext: at(30 * time.Minute), wantRequeue: 30*time.Minute - time.Second},
		{name: "the same list seen before is no edit: 09:30 was a run, superseded",
			cronJob: cronJob(schedules("0 * * * *", "30 * * * *"), last(at(-time.Hour)), seen("0 * * * * | 30 * * * *", "UTC")), now: at(time.Second),
			wantCreates: hours(10), wantMissed: map[string]int64{cronv1.MissedSuperseded: 1}, wantNext: at(30 * time.Minute), wantRequeue: 30*time.Minute - time.Second},
		{name: "schedules with a window",
			cronJob: cronJob(schedules("0 9 * * *", "0 11 * * *"), last(at(-2*time.Hour)), notAfter(at(30*time.Minute))), now: at(time.Second),
			wantCreates: hours(9), wantExpired: metav1.ConditionFalse, wantRequeue: 30 * time.Minute},
	} {
		t.Run(tc.name, tc.run)
	}
}

// The list forms keep the change detection working: a list edited is a
// schedule change, with the list it replaces kept in previousSchedules.
func TestDecideSchedulesEditRecordsPreviousList(t *testing.T) {
	cj := cronJob(schedules("0 * * * *", "30 * * * *"), last(at(-time.Hour)), seen("0 * * * * | 15 * * * *", "UTC"))
	p := Decide(Input{CronJob: cj, Now: at(time.Second)})
	if got := p.Status.PreviousSchedules; len(got) != 1 || got[0].Schedule != "0 * * * * | 15 * * * *" {
		t.Fatalf("previousSchedules %+v, want the replaced list", got)
	}
	if p.Status.ScheduleChangeTime == nil {
		t.Error("no scheduleChangeTime")
	}
	if p.Status.ResolvedSchedule != "0 * * * * | 30 * * * *" {
		t.Errorf("resolvedSchedule %q", p.Status.ResolvedSchedule)
	}
}

func nextOf(t *testing.T, a, b string, after time.Time) time.Time {
	t.Helper()
	s, err := schedule.ParseList([]string{a, b}, new("UTC"))
	if err != nil {
		t.Fatal(err)
	}
	return s.Next(after)
}

// Adopting a run the status does not record counts the runs it passed over,
// under the schedule they ran under; a time before notBefore is no run, so
// it is not counted, whichever schedule that was. (Model seed 1810004195.)
func TestAdoptedRunCountsNothingBeforeTheWindow(t *testing.T) {
	ten := runOf(at(0), "")
	cj := cronJob(notBefore(at(-50*time.Minute)), func(cj *cronv1.CronJob) {
		cj.CreationTimestamp = metav1.NewTime(at(-2 * time.Hour))
		cj.Status.ResolvedSchedule, cj.Status.ResolvedTimeZone = "0 * * * *", "UTC"
	})
	p := Decide(Input{CronJob: cj, Jobs: []Job{ten}, Now: at(time.Minute)})
	if got := p.Status.LastScheduleTime; got == nil || !got.Time.Equal(at(0)) {
		t.Errorf("lastScheduleTime %v, want 10:00", got)
	}
	if got := missedOf(p.Status); len(got) != 0 {
		t.Errorf("missed %v, want none: 09:00 is before notBefore (09:10)", got)
	}
}

// Schedule edits and adoption count only runs inside the active window.

// A schedule edit counts as ScheduleChanged the old schedule's owed
// times that the new one refuses; times before notBefore are no runs.
func TestEditCountsNoTimeBeforeNotBefore(t *testing.T) {
	cj := cronJob(sched("30 * * * *"), seen("0 * * * *", "UTC"), last(at(-3*time.Hour)), notBefore(at(-30*time.Minute)))
	p := Decide(Input{CronJob: cj, Now: at(5 * time.Minute)})
	// Owed by the old schedule in the window: 10:00 only (08:00, 09:00 before 09:30).
	if got := missedOf(p.Status); got[cronv1.MissedScheduleChanged] > 1 {
		t.Errorf("missed %v, want at most ScheduleChanged:1 (08:00, 09:00 are before notBefore 09:30)", got)
	}
}

// With notBefore in the future and never a run yet, an edit counts nothing.
func TestEditBeforeTheWindowOpensCountsNothing(t *testing.T) {
	cj := cronJob(sched("30 * * * *"), seen("0 * * * *", "UTC"), notBefore(at(2*time.Hour)))
	p := Decide(Input{CronJob: cj, Now: at(5 * time.Minute)})
	if got := missedOf(p.Status); len(got) != 0 {
		t.Errorf("missed %v, want none: the window opens at 12:00", got)
	}
}

// After notAfter, an edit counts nothing past notAfter.
func TestEditAfterTheWindowClosedCountsNothing(t *testing.T) {
	cj := cronJob(sched("30 * * * *"), seen("0 * * * *", "UTC"), last(at(-3*time.Hour)), notAfter(at(-150*time.Minute)))
	p := Decide(Input{CronJob: cj, Now: at(5 * time.Minute)})
	if got := missedOf(p.Status); len(got) != 0 {
		t.Errorf("missed %v, want none: 08:00-10:00 are after notAfter 07:30", got)
	}
}

// More than five edits with the window not yet open: the merge of the
// history counts no barred run outside the window.
func TestHistoryCapCountsNothingBeforeTheWindow(t *testing.T) {
	cj := cronJob(last(at(-24*time.Hour)), notBefore(at(48*time.Hour)))
	for i := range 8 {
		cj.Spec.Schedule = fmt.Sprintf("%d * * * *", i)
		p := Decide(Input{CronJob: cj, Now: at(time.Duration(i) * time.Second)})
		cj.Status = p.Status
	}
	if got := missedOf(cj.Status); len(got) != 0 {
		t.Errorf("missed %v, want none: the window opens in two days", got)
	}
}

// Adopting a Job under an @every schedule counts the runs passed over only
// within the window (notBefore, then notAfter).
func TestAdoptedEveryRunCountsOnlyWithinTheWindow(t *testing.T) {
	// status: @every 20m in force, last 09:00; the lost sync at 10:00 under
	// notBefore 09:30 started 10:00 (grid 09:20, 09:40, 10:00) passing over 09:40.
	cj := cronJob(sched("@every 20m"), seen("@every 20m", "UTC"), last(at(-time.Hour)), notBefore(at(-30*time.Minute)))
	p := Decide(Input{CronJob: cj, Jobs: []Job{runOf(ten, "")}, Now: at(time.Minute)})
	if got := missedOf(p.Status)[cronv1.MissedSuperseded]; got != 1 {
		t.Errorf("missed %v, want Superseded:1 (09:40 only; 09:20 before 09:30)", missedOf(p.Status))
	}
	// notAfter variant: notAfter 09:30: 09:20 counted, 09:40 not.
	cj = cronJob(sched("@every 20m"), seen("@every 20m", "UTC"), last(at(-time.Hour)), notAfter(at(-30*time.Minute)))
	p = Decide(Input{CronJob: cj, Jobs: []Job{runOf(ten, "")}, Now: at(time.Minute)})
	if got := missedOf(p.Status)[cronv1.MissedSuperseded]; got != 1 {
		t.Errorf("notAfter: missed %v, want Superseded:1 (09:20 only)", missedOf(p.Status))
	}
}

// An @every schedule before, a cron schedule now (the edit seen in the
// adopting sync): adoption counts only the passed-over runs in the window.
func TestAdoptionAcrossEveryToCronCountsOnlyWithinTheWindow(t *testing.T) {
	cj := cronJob(sched("0 * * * *"), seen("@every 20m", "UTC"), last(at(-time.Hour)), notBefore(at(-30*time.Minute)))
	p := Decide(Input{CronJob: cj, Jobs: []Job{runOf(ten, "")}, Now: at(time.Minute)})
	if got := missedOf(p.Status); got[cronv1.MissedSuperseded] != 1 || len(got) != 1 {
		t.Errorf("missed %v, want Superseded:1 (09:40 only)", got)
	}
}

// A previous schedule in status (the edit seen earlier), a window and an
// adoption: only the passed-over runs in the window are counted.
func TestAdoptionWithHistoryCountsOnlyWithinTheWindow(t *testing.T) {
	// 0 * * * * until 08:30, then */30 * * * * in force; last 07:00; lost sync at 10:00 started 10:00.
	// Runs: 08:00 (both name it; before until), 09:00, 09:30 (after until). notBefore 08:45.
	cj := cronJob(sched("*/30 * * * *"), seen("*/30 * * * *", "UTC"), history("0 * * * *", "UTC", at(-90*time.Minute)),
		last(at(-3*time.Hour)), notBefore(at(-75*time.Minute)))
	p := Decide(Input{CronJob: cj, Jobs: []Job{runOf(ten, "")}, Now: at(time.Minute)})
	if got := missedOf(p.Status); got[cronv1.MissedSuperseded] != 2 || len(got) != 1 {
		t.Errorf("missed %v, want Superseded:2 (09:00, 09:30)", got)
	}
}

// Both bounds of the active window are included: a scheduled time exactly
// on notBefore or notAfter is a run, also when the walk reaches it from
// before the window (Next jumps to notBefore), on an @every grid, when an
// earlier schedule in force must name it too, and when the window is that
// one instant. A bound read as excluded would silently drop the first or
// the last run a user asked for.
func TestNotBeforeAndNotAfterOnAScheduledTimeIncludeIt(t *testing.T) {
	for _, tc := range []windowCase{
		{name: "notBefore on a scheduled time, reached from before the window",
			cronJob: cronJob(last(at(-2*time.Hour)), notBefore(ten)), now: at(time.Second),
			wantCreates: hours(10), wantNext: at(time.Hour), wantRequeue: time.Hour - time.Second},
		{name: "notBefore on a scheduled time, never run",
			cronJob: cronJob(notBefore(ten)), now: at(time.Second),
			wantCreates: hours(10), wantNext: at(time.Hour), wantRequeue: time.Hour - time.Second},
		{name: "notBefore on a point of the @every grid",
			cronJob: cronJob(sched("@every 30m"), last(at(-time.Hour)), notBefore(ten)), now: at(time.Second),
			wantCreates: hours(10), wantNext: at(30 * time.Minute), wantRequeue: 30*time.Minute - time.Second},
		{name: "notAfter on a scheduled time, reached late: it starts, the one before is superseded",
			cronJob: cronJob(last(at(-2*time.Hour)), notAfter(ten)), now: at(time.Second),
			wantCreates: hours(10), wantMissed: map[string]int64{cronv1.MissedSuperseded: 1},
			wantExpired: metav1.ConditionTrue, wantEvents: []string{"Normal Expired"}},
		{name: "notAfter on a point of the @every grid",
			cronJob: cronJob(sched("@every 30m"), last(at(-time.Hour)), notAfter(ten)), now: at(time.Second),
			wantCreates: hours(10), wantMissed: map[string]int64{cronv1.MissedSuperseded: 1},
			wantExpired: metav1.ConditionTrue, wantEvents: []string{"Normal Expired"}},
		{name: "a window of that one instant",
			cronJob: cronJob(last(at(-2*time.Hour)), notBefore(ten), notAfter(ten)), now: at(time.Second),
			wantCreates: hours(10), wantExpired: metav1.ConditionTrue, wantEvents: []string{"Normal Expired"}},
		{name: "a window of that one instant, an earlier @every in force must name it too",
			cronJob: cronJob(sched("@every 30m"), last(at(-30*time.Minute)), seen("@every 30m", "UTC"),
				history("@every 30m", "Europe/Berlin", at(time.Minute)), notBefore(ten), notAfter(ten)), now: at(2 * time.Minute),
			wantCreates: hours(10), wantExpired: metav1.ConditionTrue, wantEvents: []string{"Normal Expired"}},
	} {
		t.Run(tc.name, tc.run)
	}
}

func TestStatusTimesAfterYear9999AreNotWritten(t *testing.T) {
	for _, c := range []struct {
		schedule  string
		notBefore time.Time
	}{
		{"0 0 * * *", time.Date(9999, 12, 31, 23, 0, 0, 0, time.UTC)},
		{"@every 2h", time.Date(9999, 12, 31, 23, 0, 0, 0, time.UTC)},
		{"@every 2562047h", time.Date(9950, 1, 1, 0, 0, 0, 0, time.UTC)},
	} {
		p := Decide(Input{CronJob: cronJob(sched(c.schedule), notBefore(c.notBefore)), Now: at(0)})
		b, err := json.Marshal(p.Status)
		if err != nil {
			t.Fatal(err)
		}
		var back cronv1.CronJobStatus
		if err := json.Unmarshal(b, &back); err != nil {
			t.Errorf("%s, notBefore %v: nextScheduleTime %v: the status does not read back as RFC 3339: %v",
				c.schedule, c.notBefore, p.Status.NextScheduleTime, err)
		}
	}
}

func TestNotAfterAtYearOneEndsTheSchedule(t *testing.T) {
	cj := cronJob(notAfter(time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC)), last(at(-time.Hour)))
	p := Decide(Input{CronJob: cj, Now: at(5 * time.Second)})
	expired := meta.FindStatusCondition(p.Status.Conditions, cronv1.ConditionExpired)
	if len(p.Creates) != 0 || p.Status.NextScheduleTime != nil {
		t.Errorf("Expired %+v, yet creates %d Job(s), nextScheduleTime %v: the window ended in year 1",
			expired, len(p.Creates), p.Status.NextScheduleTime)
	}
}
