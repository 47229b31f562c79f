//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	cronv1 "github.com/cronjob-controller/cronjob-controller/pkg/apis/batch/v1"
	"github.com/cronjob-controller/cronjob-controller/pkg/planner"
)

// createCalendar creates a cluster-scoped Calendar, deleted after the test.
func createCalendar(t *testing.T, cal *cronv1.Calendar) *cronv1.Calendar {
	t.Helper()
	created, err := env.cron.BatchV1().Calendars().Create(context.Background(), cal, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = env.cron.BatchV1().Calendars().Delete(context.Background(), cal.Name, metav1.DeleteOptions{})
	})
	return created
}

func missedFor(cj *cronv1.CronJob, reason string) int64 {
	for _, m := range cj.Status.MissedRuns {
		if m.Reason == reason {
			return m.Count
		}
	}
	return 0
}

func calendarsResolved(cj *cronv1.CronJob) string {
	if c := meta.FindStatusCondition(cj.Status.Conditions, cronv1.ConditionCalendarsResolved); c != nil {
		return string(c.Status) + " " + c.Reason
	}
	return ""
}

// A Calendar's range holds every run of a CronJob naming it, counted as
// Excluded; lifting it lets the next due time run. A CronJob naming a
// Calendar that does not exist holds its runs, loudly, until it exists.
func TestCalendarExcludesRuns(t *testing.T) {
	ns := newNamespace(t)
	startController(t)
	suffix := ns[strings.LastIndex(ns, "-")+1:]
	now := time.Now().UTC()
	freeze := createCalendar(t, &cronv1.Calendar{
		ObjectMeta: metav1.ObjectMeta{Name: "e2e-freeze-" + suffix},
		Spec: cronv1.CalendarSpec{Ranges: []cronv1.CalendarRange{{
			Start: cronv1.CalendarTime(now.Add(-time.Hour).Format("2006-01-02T15:04")),
			End:   cronv1.CalendarTime(now.Add(time.Hour).Format("2006-01-02T15:04")),
		}}},
	})
	if freeze.Spec.TimeZone != "UTC" {
		t.Errorf("spec.timeZone defaulted to %q, want UTC", freeze.Spec.TimeZone)
	}
	frozen := createCronJob(t, cronJob(ns, "frozen", "@every 2s", func(cj *cronv1.CronJob) {
		cj.Spec.ExcludeCalendars = []string{freeze.Name}
	}))
	missingName := "e2e-missing-" + suffix
	orphan := createCronJob(t, cronJob(ns, "orphan", "@every 2s", func(cj *cronv1.CronJob) {
		cj.Spec.ExcludeCalendars = []string{missingName}
	}))

	eventually(t, 30*time.Second, "two excluded runs and a held one", func() (bool, string) {
		f, o := getCronJob(t, ns, frozen.Name), getCronJob(t, ns, orphan.Name)
		return missedFor(f, cronv1.MissedExcluded) >= 2 && calendarsResolved(f) == "True Resolved" &&
				missedFor(o, cronv1.MissedCalendarUnresolved) >= 1 && calendarsResolved(o) == "False "+planner.ReasonCalendarNotFound,
			fmt.Sprintf("frozen %+v %q; orphan %+v %q", f.Status.MissedRuns, calendarsResolved(f), o.Status.MissedRuns, calendarsResolved(o))
	})
	if jobs := listJobs(t, ns); len(jobs) != 0 {
		t.Fatalf("%d Jobs while every run is excluded or held", len(jobs))
	}
	eventually(t, 10*time.Second, "the Events", func() (bool, string) {
		if ok, seen := hasEvent(t, ns, frozen.Name, "Normal", planner.ReasonRunExcluded); !ok {
			return false, "frozen: " + seen
		}
		if ok, seen := hasEvent(t, ns, orphan.Name, "Warning", planner.ReasonCalendarNotFound); !ok {
			return false, "orphan: " + seen
		}
		return true, ""
	})
	if ok, _ := hasEvent(t, ns, frozen.Name, "Warning", planner.ReasonMissSchedule); ok {
		t.Error("an excluded run was announced as missed")
	}

	// Lift the freeze, create the missing Calendar: the next due times run.
	cur, err := env.cron.BatchV1().Calendars().Get(context.Background(), freeze.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cur.Spec.Ranges = nil
	if _, err := env.cron.BatchV1().Calendars().Update(context.Background(), cur, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	createCalendar(t, &cronv1.Calendar{ObjectMeta: metav1.ObjectMeta{Name: missingName}})
	eventually(t, 20*time.Second, "runs of both after the edit", func() (bool, string) {
		f, o := jobsOf(t, ns, frozen), jobsOf(t, ns, orphan)
		return len(f) >= 1 && len(o) >= 1 && calendarsResolved(getCronJob(t, ns, orphan.Name)) == "True Resolved",
			fmt.Sprintf("%d and %d Jobs", len(f), len(o))
	})
	// Every run started is after the last excluded time: none was owed.
	f := getCronJob(t, ns, frozen.Name)
	var lastExcluded time.Time
	for _, m := range f.Status.MissedRuns {
		if m.Reason == cronv1.MissedExcluded {
			lastExcluded = m.LastTime.Time
		}
	}
	for _, at := range scheduledTimes(t, jobsOf(t, ns, frozen)) {
		if !at.After(lastExcluded) {
			t.Errorf("a Job for %v, at or before the last excluded time %v", at, lastExcluded)
		}
	}

	out, err := kubectl("get", "calendars.batch.tutorial.kubebuilder.io", freeze.Name)
	if header := strings.Fields(strings.SplitN(out, "\n", 2)[0]); err != nil || !slices.Equal(header, []string{"NAME", "TIMEZONE", "DATES", "AGE"}) {
		t.Errorf("kubectl get calendars: %v\n%s", err, out)
	}
	out, err = kubectl("get", "-n", ns, "cronjobs.batch.tutorial.kubebuilder.io", frozen.Name, "-o", "wide")
	if err != nil || !strings.Contains(out, "CALENDARS") || !strings.Contains(out, freeze.Name) {
		t.Errorf("kubectl get -o wide shows no Calendars column: %v\n%s", err, out)
	}
	out, err = kubectl("explain", "calendars.spec.ranges")
	if err != nil || !strings.Contains(out, "exclusive") {
		t.Errorf("kubectl explain calendars.spec.ranges: %v\n%s", err, out)
	}
}

// The API server refuses a Calendar the controller could not read, one
// line per mistake.
func TestCalendarValidation(t *testing.T) {
	cases := []struct{ spec, want string }{
		{`dates: ["2026-02-30"]`, `spec.dates[0]: Invalid value: "2026-02-30": is not a day of that month`},
		{`dates: ["2028-02-29"]`, ``},
		{`dates: ["2027-02-29"]`, `is not a day of that month`},
		{`dates: ["26-12-24"]`, `must be a date YYYY-MM-DD`},
		{`ranges: [{start: "2026-12-24", end: "2026-12-23"}]`, `start must not be after end`},
		{`ranges: [{start: "2026-12-24T10:00", end: "2026-12-24T10:00"}]`, `start must not be after end`},
		{`ranges: [{start: "2026-12-24T10:00", end: "2026-12-24"}]`, ``},
		{`ranges: [{start: "2026-12-24T25:00", end: "2026-12-25"}]`, `must be a date YYYY-MM-DD or a time`},
		{`ranges: [{start: "2026-12-24T10:00+01:00", end: "2026-12-25"}]`, `spec.ranges[0].start: Invalid value: "2026-12-24T10:00+01:00": must be a date YYYY-MM-DD or a time`},
		{`timeZone: Local`, `must name an IANA time zone`},
		{`timeZone: "Europe/Berlin "`, `not an IANA time zone name`},
	}
	example := filepath.Join(env.root, "artifacts", "examples", "calendar.yaml")
	if out, err := kubectl("apply", "-f", example); err != nil {
		t.Errorf("applying %s: %v\n%s", example, err, out)
	} else {
		_, _ = kubectl("delete", "-f", example)
	}
	for i, tc := range cases {
		name := fmt.Sprintf("e2e-validation-%d-%d", i, time.Now().UnixNano()%100000)
		out, err := kubectlApply(fmt.Sprintf("apiVersion: batch.tutorial.kubebuilder.io/v1\nkind: Calendar\nmetadata:\n  name: %s\nspec:\n  %s\n", name, tc.spec))
		if tc.want == "" {
			if err != nil {
				t.Errorf("%s: refused: %v\n%s", tc.spec, err, out)
			}
			_ = env.cron.BatchV1().Calendars().Delete(context.Background(), name, metav1.DeleteOptions{})
			continue
		}
		if err == nil {
			t.Errorf("%s: accepted", tc.spec)
			_ = env.cron.BatchV1().Calendars().Delete(context.Background(), name, metav1.DeleteOptions{})
			continue
		}
		if !strings.Contains(out, tc.want) {
			t.Errorf("%s: refused with\n%s\nwant it to say %q", tc.spec, out, tc.want)
		}
		if strings.Contains(out, "some validation rules were not checked") || strings.Contains(out, "compilation") || strings.Contains(out, "evaluation") {
			t.Errorf("%s: more than one line, or a CEL error:\n%s", tc.spec, out)
		}
	}
}
