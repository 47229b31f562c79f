package plugin

import (
	"context"
	"fmt"
	"io"
	"slices"
	"text/tabwriter"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	cronv1 "github.com/cronjob-controller/cronjob-controller/pkg/apis/batch/v1"
	"github.com/cronjob-controller/cronjob-controller/pkg/planner"
	"github.com/cronjob-controller/cronjob-controller/pkg/schedule"
)

// Layouts of the times the commands print: in the CronJob's zone for
// people, and UTC in RFC 3339, as status.nextScheduleTime is written.
const (
	zoneLayout = "Mon 2006-01-02 15:04:05 MST"
	utcLayout  = time.RFC3339
)

// NextTimes is the schedule of cj as the controller reads it, and its next
// count times after now: the first is the one the controller writes to
// status.nextScheduleTime.
//
// The schedule is read as the planner's observeSchedule reads it
// (planner.ResolveSchedule: spec.schedule or the union of spec.schedules,
// every H resolved with the seed namespace/name, then parsed in
// spec.timeZone, the local zone of this process when unset, as the
// controller uses its own), bounded to spec.notBefore and spec.notAfter,
// and no more times than spec.maxRuns leaves runs.
// The first time follows the planner's planRuns: the first scheduled time
// after now counting from the time the CronJob's runs are settled until
// (its last run, a later missed one, or its creation), which matters for
// @every, whose times count from there.
func NextTimes(cj *cronv1.CronJob, now time.Time, count int) (*schedule.Schedule, string, []time.Time, error) {
	resolved, sched, err := planner.ResolveSchedule(cj)
	if err != nil {
		return nil, "", nil, err
	}
	if cj.Spec.NotBefore != nil || cj.Spec.NotAfter != nil {
		sched = sched.Within(timeOf(cj.Spec.NotBefore), timeOf(cj.Spec.NotAfter))
	}
	due, err := sched.MostRecent(settledUntil(cj), now)
	if err != nil {
		return nil, "", nil, fmt.Errorf("schedule %q: %w", planner.ScheduleText(cj), err)
	}
	if left, limited := runsLeft(cj); limited {
		// No more times than spec.maxRuns leaves runs.
		count = int(min(int64(count), left))
	}
	var times []time.Time
	for t := due.Next; !t.IsZero() && len(times) < count; t = sched.Next(t) {
		times = append(times, t)
	}
	return sched, resolved, times, nil
}

// runsLeft is how many scheduled runs spec.maxRuns still lets start, as
// status.scheduledRunCount says; false when it is unset.
func runsLeft(cj *cronv1.CronJob) (int64, bool) {
	if m := cj.Spec.MaxRuns; m != nil {
		return max(*m-cj.Status.ScheduledRunCount, 0), true
	}
	return 0, false
}

func timeOf(t *metav1.Time) *time.Time {
	if t == nil {
		return nil
	}
	return &t.Time
}

// settledUntil is the time after which the controller looks for runs: the
// last run started, or a later run counted missed for any reason but a
// schedule change, or else the CronJob's creation. It is the planner's
// Plan.settledUntil on a status as written.
func settledUntil(cj *cronv1.CronJob) time.Time {
	return planner.SettledUntil(cj.CreationTimestamp.Time, &cj.Status)
}

// Next prints the next count times the CronJob runs, in its zone and in
// UTC, and says when the controller's status disagrees or the CronJob is
// suspended.
func Next(ctx context.Context, c Clients, w io.Writer, name string, count int) error {
	if count < 1 {
		return fmt.Errorf("the count must be at least 1, not %d", count)
	}
	cj, err := c.get(ctx, name)
	if err != nil {
		return err
	}
	sched, resolved, times, err := NextTimes(cj, c.Clock.Now(), count)
	if err != nil {
		return fmt.Errorf("%s/%s: %w", Resource, name, err)
	}
	text := planner.ScheduleText(cj)
	what := "schedule"
	if len(cj.Spec.Schedules) > 0 {
		what = "schedules"
	}
	fmt.Fprintf(w, "%s %q", what, text)
	if resolved != text {
		fmt.Fprintf(w, " (resolved %q)", resolved)
	}
	zone := ptr.Deref(cj.Spec.TimeZone, "")
	if cj.Spec.TimeZone == nil {
		// The controller's local zone is not known here.
		zone = "Local"
		fmt.Fprintf(w, " in the controller's local time zone (spec.timeZone is unset); shown in this machine's (%s)\n",
			c.Clock.Now().In(sched.Location()).Format("MST, UTC-07:00"))
	} else {
		fmt.Fprintf(w, " in %s\n", zone)
	}
	if len(times) == 0 {
		if left, limited := runsLeft(cj); limited && left == 0 {
			fmt.Fprintf(w, "expired: spec.maxRuns (%d) scheduled runs have started\n", *cj.Spec.MaxRuns)
		} else if na := cj.Spec.NotAfter; na != nil && c.Clock.Now().After(na.Time) {
			fmt.Fprintf(w, "expired: spec.notAfter %s has passed\n", na.UTC().Format(utcLayout))
		}
		fmt.Fprintln(w, "no further runs")
		return nil
	}
	pause := pauseOf(cj)
	var trial time.Time
	if pause != nil && pause.TrialJob == "" && pause.ResumeAt != nil {
		trial = trialTime(&cj.Spec, sched, times, pause.ResumeAt.Time)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 3, ' ', 0)
	fmt.Fprintf(tw, "%s\tUTC\n", zone)
	for _, t := range times {
		fmt.Fprintf(tw, "%s\t%s", t.In(sched.Location()).Format(zoneLayout), t.UTC().Format(utcLayout))
		// What the spec holds is no run at all, so no trial either: it
		// wins over the pause, as in the planner.
		switch mark := holdMark(&cj.Spec, t); {
		case mark != "":
			fmt.Fprint(tw, "\t"+mark)
		case pause == nil:
		case trial.IsZero() || t.Before(trial):
			fmt.Fprint(tw, "\tpaused")
		case t.Equal(trial):
			fmt.Fprint(tw, "\ttrial")
		}
		fmt.Fprintln(tw)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if ptr.Deref(cj.Spec.Suspend, false) {
		fmt.Fprintf(w, "suspended: none of these starts until kubectl cronjob resume %s\n", name)
	}
	// status.nextScheduleTime is the first time the spec does not hold;
	// while paused, the trial's time, and unset when no trial is due (no
	// resumeAfter, or a trial running).
	expected := planner.UnheldFrom(&cj.Spec, sched, times[0])
	if until := cj.Spec.SuspendUntil; until != nil && c.Clock.Now().Before(until.Time) {
		fmt.Fprintf(w, "suspended until %s by spec.suspendUntil: runs due before it do not start (status.missedRuns counts them under %s); ",
			showTime(until.Time, sched.Location()), cronv1.MissedSuspendedUntil)
		if expected.IsZero() {
			fmt.Fprintln(w, "no run is due after it")
		} else {
			fmt.Fprintf(w, "the first run then is %s\n", showTime(expected, sched.Location()))
		}
	}
	if skips, idle := pendingSkips(&cj.Spec, sched, times[0], c.Clock.Now()); skips+idle > 0 {
		fmt.Fprintf(w, "skipped: spec.skipTimes skips %d %s to come (status.missedRuns counts them under %s as they pass)", skips, plural(skips, "run", "runs"), cronv1.MissedSkipped)
		if idle > 0 {
			fmt.Fprintf(w, "; %d of its times %s no run of the schedule and %s nothing", idle, plural(idle, "names", "name"), plural(idle, "skips", "skip"))
		}
		fmt.Fprintf(w, "; kubectl cronjob skip %s --clear removes every skip\n", name)
	}
	if pause != nil {
		expected = trial
		fmt.Fprintf(w, "paused after %d failed runs in a row: ", pause.Count)
		switch {
		case pause.TrialJob != "":
			fmt.Fprintf(w, "trial run %s is running, and no run starts before its outcome: its success ends the pause, its failure pauses again for longer\n", pause.TrialJob)
		case pause.ResumeAt != nil && trial.IsZero():
			fmt.Fprintf(w, "no run is due at or after %s to be the trial, so none starts until kubectl cronjob resume %s, or a run-now succeeds\n",
				pause.ResumeAt.UTC().Format(utcLayout), name)
		case pause.ResumeAt != nil:
			fmt.Fprintf(w, "runs due before %s do not start (status.missedRuns counts them under Paused); the first due then or later, %s, is a trial run, and its success ends the pause\n",
				pause.ResumeAt.UTC().Format(utcLayout), trial.UTC().Format(utcLayout))
		default:
			fmt.Fprintf(w, "none of these starts until kubectl cronjob resume %s, or a run-now succeeds\n", name)
		}
	}
	if next := cj.Status.NextScheduleTime; next != nil && cj.Status.ObservedGeneration == cj.Generation && !expected.IsZero() && !next.Time.Equal(expected) &&
		!ptr.Deref(cj.Spec.Suspend, false) {
		fmt.Fprintf(w, "status.nextScheduleTime says %s: the controller has not synced since, or its clock or local zone differs from this machine's\n",
			next.UTC().Format(utcLayout))
	}
	return nil
}

// pauseOf is the CronJob's failure streak while spec.failurePolicy has
// paused its scheduled runs, else nil.
func pauseOf(cj *cronv1.CronJob) *cronv1.FailureStreak {
	if s := cj.Status.FailureStreak; cj.Spec.FailurePolicy != nil && s != nil && s.PausedAt != nil {
		return s
	}
	return nil
}

// trialTime is the paused CronJob's trial run: the first time due at or
// after resumeAt that spec does not hold, counting from the first of
// times (runs before it are settled); zero when the schedule has none.
func trialTime(spec *cronv1.CronJobSpec, sched *schedule.Schedule, times []time.Time, resumeAt time.Time) time.Time {
	if len(times) == 0 {
		return time.Time{}
	}
	// Scheduled times fall on whole seconds, and resumeAt, as written in
	// the status, too: the first time after the nanosecond before it is
	// the first at or after it.
	t := sched.Next(resumeAt.Add(-time.Nanosecond))
	if i := slices.IndexFunc(times, func(t time.Time) bool { return !t.Before(resumeAt) }); i >= 0 {
		t = times[i]
	}
	if t.IsZero() {
		return t
	}
	return planner.UnheldFrom(spec, sched, t)
}

// Marks of the times next lists that the spec holds.
const (
	markSkipped   = "skipped"
	markSuspended = "suspended"
)

// holdMark is how next marks a time the spec holds (planner.SpecHold):
// skipped (spec.skipTimes), suspended (before spec.suspendUntil), or ""
// for a time it leaves to run.
func holdMark(spec *cronv1.CronJobSpec, t time.Time) string {
	switch planner.SpecHold(spec, t) {
	case cronv1.MissedSkipped:
		return markSkipped
	case cronv1.MissedSuspendedUntil:
		return markSuspended
	}
	return ""
}

// pendingSkips counts the entries of spec.skipTimes after now: those that
// are times of the schedule from first on, which skip a run, and the idle
// ones, which name none and skip nothing.
func pendingSkips(spec *cronv1.CronJobSpec, sched *schedule.Schedule, first, now time.Time) (skips, idle int) {
	for _, s := range spec.SkipTimes {
		switch {
		case !s.Time.After(now):
		case scheduled(sched, first, s.Time):
			skips++
		default:
			idle++
		}
	}
	return skips, idle
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// MaxNextCount bounds next --count: more times than anyone reads, and few
// enough that computing them is instant.
const MaxNextCount = 1000

// NextRuns is what next -o json|yaml prints: the CronJob's schedule as
// written and as resolved, its zone, and its next times in UTC (RFC 3339),
// the first being status.nextScheduleTime's when the controller agrees.
type NextRuns struct {
	Namespace        string `json:"namespace"`
	Name             string `json:"name"`
	Schedule         string `json:"schedule"`
	ResolvedSchedule string `json:"resolvedSchedule"`
	// TimeZone is spec.timeZone; empty for the controller's local zone.
	TimeZone string `json:"timeZone,omitempty"`
	// Suspended: spec.suspend is set, and none of Times starts until resumed.
	Suspended bool `json:"suspended"`
	// Paused: spec.failurePolicy has paused scheduled runs; none of Times
	// before Trial starts.
	Paused bool `json:"paused"`
	// Trial is the paused CronJob's trial run, one of Times; empty when no
	// trial is due among them.
	Trial string `json:"trial,omitempty"`
	// SuspendedUntil is spec.suspendUntil while it is ahead: none of Times
	// before it starts.
	SuspendedUntil string `json:"suspendedUntil,omitempty"`
	// Held maps each of Times the spec holds to why: skipped
	// (spec.skipTimes) or suspended (before spec.suspendUntil). Those
	// times start no run, and are never the trial.
	Held map[string]string `json:"held,omitempty"`
	// Times are the next scheduled times, empty when no run is due again
	// (past spec.notAfter, or a schedule that names no future time).
	Times []string `json:"times"`
}

// NextRunsOf is the data next prints for the named CronJob.
func NextRunsOf(ctx context.Context, c Clients, name string, count int) (*NextRuns, error) {
	cj, err := c.get(ctx, name)
	if err != nil {
		return nil, err
	}
	sched, resolved, times, err := NextTimes(cj, c.Clock.Now(), count)
	if err != nil {
		return nil, fmt.Errorf("%s/%s: %w", Resource, name, err)
	}
	runs := &NextRuns{
		Namespace: cj.Namespace, Name: cj.Name, Schedule: planner.ScheduleText(cj), ResolvedSchedule: resolved,
		TimeZone: ptr.Deref(cj.Spec.TimeZone, ""), Suspended: ptr.Deref(cj.Spec.Suspend, false), Times: []string{},
	}
	if pause := pauseOf(cj); pause != nil {
		runs.Paused = true
		if pause.TrialJob == "" && pause.ResumeAt != nil {
			if trial := trialTime(&cj.Spec, sched, times, pause.ResumeAt.Time); !trial.IsZero() && len(times) > 0 && !trial.After(times[len(times)-1]) {
				runs.Trial = trial.UTC().Format(utcLayout)
			}
		}
	}
	if until := cj.Spec.SuspendUntil; until != nil && c.Clock.Now().Before(until.Time) {
		runs.SuspendedUntil = until.UTC().Format(utcLayout)
	}
	for _, t := range times {
		runs.Times = append(runs.Times, t.UTC().Format(utcLayout))
		if mark := holdMark(&cj.Spec, t); mark != "" {
			if runs.Held == nil {
				runs.Held = map[string]string{}
			}
			runs.Held[t.UTC().Format(utcLayout)] = mark
		}
	}
	return runs, nil
}
