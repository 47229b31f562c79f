package planner

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	cronv1 "github.com/cronjob-controller/cronjob-controller/pkg/apis/batch/v1"
)

func TestStaleDecision(t *testing.T) {
	prev := func(s string, h int) cronv1.PreviousSchedule {
		return cronv1.PreviousSchedule{Schedule: s, TimeZone: "UTC", Until: metav1.NewTime(at(time.Duration(h) * time.Hour))}
	}
	written := cronv1.CronJobStatus{
		LastScheduleTime:  &metav1.Time{Time: at(-3 * time.Hour)},
		ResolvedSchedule:  "0 * * * *",
		ResolvedTimeZone:  "UTC",
		PreviousSchedules: []cronv1.PreviousSchedule{prev("1 * * * *", -5), prev("2 * * * *", -4)},
		MissedRuns:        []cronv1.MissedRuns{{Reason: cronv1.MissedSuperseded, Count: 4, LastTime: metav1.NewTime(at(-4 * time.Hour))}},
	}
	kept := cronv1.CronJobStatus{
		LastScheduleTime: &metav1.Time{Time: ten},
		ResolvedSchedule: "",
		LastRunNow:       "key",
		RunNowCount:      7,
		// The decision pruned the two older entries and saw an edit.
		PreviousSchedules: []cronv1.PreviousSchedule{prev("0 * * * *", 0)},
		MissedRuns: []cronv1.MissedRuns{
			{Reason: cronv1.MissedSuperseded, Count: 6, LastTime: metav1.NewTime(at(-time.Hour))},
			{Reason: cronv1.MissedScheduleChanged, Count: 1, LastTime: metav1.NewTime(at(-time.Hour))},
		},
		Conditions: []metav1.Condition{{Type: cronv1.ConditionScheduleValid, Status: metav1.ConditionFalse, Reason: "InvalidSchedule"}},
	}
	got := StaleDecision(&written, &kept)
	if !got.LastScheduleTime.Time.Equal(at(-3 * time.Hour)) {
		t.Errorf("lastScheduleTime %v, want the written one", got.LastScheduleTime)
	}
	if got.ResolvedSchedule != "" || got.LastRunNow != "key" || got.RunNowCount != 7 {
		t.Errorf("resolved %q, lastRunNow %q, runNowCount %d: want what the decision saw", got.ResolvedSchedule, got.LastRunNow, got.RunNowCount)
	}
	if c := meta.FindStatusCondition(got.Conditions, cronv1.ConditionScheduleValid); c == nil || c.Status != metav1.ConditionFalse {
		t.Errorf("ScheduleValid %+v, want the decision's False: an unusable schedule was in force", c)
	}
	if n := len(got.PreviousSchedules); n != 3 || got.PreviousSchedules[0].Schedule != "1 * * * *" || got.PreviousSchedules[2].Schedule != "0 * * * *" {
		t.Errorf("previous schedules %+v, want the written two, then the decision's", got.PreviousSchedules)
	}
	if m := missedOf(got); m[cronv1.MissedSuperseded] != 4 || m[cronv1.MissedScheduleChanged] != 1 {
		t.Errorf("missed %v, want the written Superseded (4) and the decision's ScheduleChanged (1)", m)
	}
	// More than five previous schedules merge the oldest, as the cap does.
	for h := 1; h <= 5; h++ {
		kept.PreviousSchedules = append(kept.PreviousSchedules, prev("3 * * * *", h))
	}
	if got := StaleDecision(&written, &kept); len(got.PreviousSchedules) != maxPreviousSchedules || got.PreviousSchedules[0].Schedule != "" {
		t.Errorf("previous schedules %+v, want %d, the oldest naming nothing", got.PreviousSchedules, maxPreviousSchedules)
	}
}

// A stale decision's run history: the written entries stay as written; a
// run the decision entered that the written status lacks comes back
// running, so the next sync enters its outcome (and counts it) once.
func TestStaleDecisionReopensTheRunsOnlyItEntered(t *testing.T) {
	run := func(name string, h int, outcome cronv1.RunOutcome) cronv1.RunRecord {
		return cronv1.RunRecord{JobName: name, Trigger: cronv1.TriggerScheduled, ScheduledTime: &metav1.Time{Time: at(time.Duration(h) * time.Hour)},
			Outcome: outcome, CompletionTime: &metav1.Time{Time: at(time.Duration(h)*time.Hour + time.Minute)}, Reason: "r"}
	}
	written := cronv1.CronJobStatus{RecentRuns: []cronv1.RunRecord{run("a", -2, cronv1.OutcomeFailed)}}
	kept := cronv1.CronJobStatus{RecentRuns: []cronv1.RunRecord{run("b", -1, cronv1.OutcomeSucceeded), run("a", -2, cronv1.OutcomeFailed)}}
	got := StaleDecision(&written, &kept).RecentRuns
	if len(got) != 2 || got[0].JobName != "b" || got[0].Outcome != cronv1.OutcomeRunning || got[0].CompletionTime != nil || got[0].Reason != "" ||
		got[1].JobName != "a" || got[1].Outcome != cronv1.OutcomeFailed {
		t.Errorf("recentRuns %+v, want b running again (only the decision entered it), then a as written", got)
	}
}
