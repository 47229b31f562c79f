package plugin

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"slices"
	"text/tabwriter"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/duration"

	cronv1 "github.com/cronjob-controller/cronjob-controller/pkg/apis/batch/v1"
	"github.com/cronjob-controller/cronjob-controller/pkg/job"
)

// Outcomes of a Job in History.
const (
	OutcomeComplete = "Complete"
	OutcomeFailed   = "Failed"
	OutcomeRunning  = "Running"
	// OutcomeUnknown: a run the history records whose Job went away before
	// the controller saw it finish.
	OutcomeUnknown = "Unknown"
)

// Kinds of run in History.
const (
	KindScheduled = "scheduled"
	KindRunNow    = "run-now"
	KindTrial     = "trial"
	KindCatchUp   = "catch-up"
	// KindRequested is a run a CronJobRun asked for.
	KindRequested = "requested"
	// KindOther is a Job the CronJob controls that the controller did not
	// create (adopted by hand).
	KindOther = "other"
)

// Entry is one Job in a CronJob's history.
type Entry struct {
	Name string
	// Kind is KindScheduled, KindCatchUp, KindTrial, KindRunNow,
	// KindRequested or KindOther.
	Kind string
	// Scheduled is the scheduled time of a scheduled run; zero otherwise.
	Scheduled time.Time
	// Outcome is OutcomeComplete, OutcomeFailed or OutcomeRunning.
	Outcome string
	// Duration is from the Job's start to its end, or to now while it
	// runs; zero before it starts.
	Duration time.Duration
	// Started reports whether the Job has a start time.
	Started bool
	Created time.Time
	// Reason is why a failed run failed, as the run history recorded it.
	Reason string
	// Gone says the Job is gone (pruned, deleted, TTL): the entry is the
	// run history's record of it (status.recentRuns).
	Gone bool
}

// kinds are the run history's triggers as History names them.
var kinds = map[cronv1.RunTrigger]string{
	cronv1.TriggerScheduled: KindScheduled, cronv1.TriggerCatchUp: KindCatchUp,
	cronv1.TriggerTrial: KindTrial, cronv1.TriggerRunNow: KindRunNow,
	cronv1.TriggerRequested: KindRequested,
}

// outcomes are the run history's outcomes as History names them.
var outcomes = map[cronv1.RunOutcome]string{
	cronv1.OutcomeSucceeded: OutcomeComplete, cronv1.OutcomeFailed: OutcomeFailed,
	cronv1.OutcomeRunning: OutcomeRunning, cronv1.OutcomeUnknown: OutcomeUnknown,
}

// HistoryOf lists the Jobs cj controls (by controller reference to its
// UID, as the controller finds them) and the runs its status.recentRuns
// records whose Jobs are gone, newest first: by creation time, then
// scheduled time, then name. A Job the history records takes from it how
// its run started and why it failed.
func HistoryOf(ctx context.Context, c Clients, cj *cronv1.CronJob) ([]Entry, error) {
	entries, _, err := historyOf(ctx, c, cj)
	return entries, err
}

// historyOf is HistoryOf, with the Jobs the entries name.
func historyOf(ctx context.Context, c Clients, cj *cronv1.CronJob) ([]Entry, map[string]*batchv1.Job, error) {
	list, err := c.Kube.BatchV1().Jobs(cj.Namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, nil, err
	}
	now := c.Clock.Now()
	var entries []Entry
	jobs := map[string]*batchv1.Job{}
	for i := range list.Items {
		j := &list.Items[i]
		if !job.IsControlledBy(j, string(cj.UID)) {
			continue
		}
		jobs[j.Name] = j
		e := Entry{Name: j.Name, Kind: KindOther, Created: j.CreationTimestamp.Time}
		if at, ok := job.ScheduledAt(j); ok {
			e.Kind, e.Scheduled = KindScheduled, at
		} else if _, requested := j.Annotations[cronv1.CronJobRunAnnotation]; requested && j.Annotations[cronv1.InstantiateAnnotation] == job.Manual {
			e.Kind = KindRequested
		} else if j.Annotations[cronv1.InstantiateAnnotation] == job.Manual {
			e.Kind = KindRunNow
		}
		var end time.Time
		switch job.Finished(j) {
		case batchv1.JobComplete:
			e.Outcome, end = OutcomeComplete, finishedAt(j, batchv1.JobComplete)
		case batchv1.JobFailed:
			e.Outcome, end = OutcomeFailed, finishedAt(j, batchv1.JobFailed)
		default:
			e.Outcome, end = OutcomeRunning, now
		}
		if j.Status.StartTime != nil && !end.IsZero() {
			e.Started = true
			e.Duration = max(0, end.Sub(j.Status.StartTime.Time))
		}
		entries = append(entries, e)
	}
	for _, r := range cj.Status.RecentRuns {
		i := slices.IndexFunc(entries, func(e Entry) bool { return e.Name == r.JobName })
		if i < 0 {
			entries = append(entries, recordedRun(r))
			continue
		}
		entries[i].Kind = cmp.Or(kinds[r.Trigger], entries[i].Kind)
		if entries[i].Outcome == OutcomeFailed {
			entries[i].Reason = r.Reason
		}
	}
	slices.SortFunc(entries, func(a, b Entry) int {
		return cmp.Or(b.Created.Compare(a.Created), b.Scheduled.Compare(a.Scheduled), cmp.Compare(b.Name, a.Name))
	})
	return entries, jobs, nil
}

// HistoryList is what history -o json|yaml prints: a List (apiVersion v1,
// as kubectl get prints several kinds at once) whose first item is the
// CronJob, its run history in status.recentRuns and its failure streak in
// status.failureStreak, followed by the Jobs it controls, newest first, as
// the table orders them. A run whose Job is gone is only in recentRuns.
func HistoryList(ctx context.Context, c Clients, name string) (*corev1.List, error) {
	cj, err := c.get(ctx, name)
	if err != nil {
		return nil, err
	}
	entries, jobs, err := historyOf(ctx, c, cj)
	if err != nil {
		return nil, err
	}
	cj.SetGroupVersionKind(cronv1.SchemeGroupVersion.WithKind("CronJob"))
	list := &corev1.List{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "List"},
		Items:    []runtime.RawExtension{{Object: cj}},
	}
	for _, e := range entries {
		if j := jobs[e.Name]; j != nil && !e.Gone {
			j.SetGroupVersionKind(batchv1.SchemeGroupVersion.WithKind("Job"))
			list.Items = append(list.Items, runtime.RawExtension{Object: j})
		}
	}
	return list, nil
}

// recordedRun is the entry of a run the history records whose Job is gone.
func recordedRun(r cronv1.RunRecord) Entry {
	e := Entry{Name: r.JobName, Kind: cmp.Or(kinds[r.Trigger], KindOther), Outcome: cmp.Or(outcomes[r.Outcome], OutcomeUnknown), Reason: r.Reason, Gone: true}
	if r.ScheduledTime != nil {
		e.Scheduled = r.ScheduledTime.Time
	}
	if r.StartTime != nil {
		e.Created = r.StartTime.Time
		if r.CompletionTime != nil {
			e.Started, e.Duration = true, max(0, r.CompletionTime.Sub(r.StartTime.Time))
		}
	}
	return e
}

// finishedAt is when j ended: its completion time when it completed, else
// when its final condition became true.
func finishedAt(j *batchv1.Job, outcome batchv1.JobConditionType) time.Time {
	if outcome == batchv1.JobComplete && j.Status.CompletionTime != nil {
		return j.Status.CompletionTime.Time
	}
	for _, c := range j.Status.Conditions {
		if c.Type == outcome && c.Status == corev1.ConditionTrue {
			return c.LastTransitionTime.Time
		}
	}
	return time.Time{}
}

// History prints the Jobs of the CronJob and the runs its history records
// whose Jobs are gone (marked "(gone)"), newest first: name, how the run
// started (with the scheduled time in the CronJob's zone), outcome (and
// why a run failed), duration and age.
func History(ctx context.Context, c Clients, w io.Writer, name string) error {
	cj, err := c.get(ctx, name)
	if err != nil {
		return err
	}
	entries, err := HistoryOf(ctx, c, cj)
	if err != nil {
		return err
	}
	// The scheduled-at annotation is written in the CronJob's zone; it is
	// shown in that zone by name when this machine knows it.
	loc := time.UTC
	if tz := cj.Spec.TimeZone; tz != nil {
		if l, err := time.LoadLocation(*tz); err == nil {
			loc = l
		}
	}
	now := c.Clock.Now()
	for _, l := range streakLines(cj, now, loc) {
		fmt.Fprintln(w, l)
	}
	if last := cj.Status.LastFailureTime; last != nil {
		fmt.Fprintf(w, "Last failure: %s (%s ago)\n", last.In(loc).Format(zoneLayout), duration.HumanDuration(now.Sub(last.Time)))
	}
	if len(entries) == 0 {
		fmt.Fprintf(w, "No Jobs of %s/%s in namespace %s.\n", Resource, name, cj.Namespace)
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 0, 3, ' ', 0)
	fmt.Fprintln(tw, "NAME\tRUN\tSCHEDULED\tOUTCOME\tDURATION\tAGE")
	for _, e := range entries {
		scheduled := "-"
		if !e.Scheduled.IsZero() {
			if cj.Spec.TimeZone != nil {
				scheduled = e.Scheduled.In(loc).Format(zoneLayout)
			} else {
				scheduled = e.Scheduled.Format(zoneLayout)
			}
		}
		took := "-"
		if e.Started {
			took = duration.HumanDuration(e.Duration)
		}
		name, outcome := e.Name, e.Outcome
		if e.Gone {
			name += " (gone)"
		}
		if e.Reason != "" {
			outcome += " (" + e.Reason + ")"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", name, e.Kind, scheduled, outcome, took,
			duration.HumanDuration(now.Sub(e.Created)))
	}
	return tw.Flush()
}

// streakLines says what spec.failurePolicy keeps of the CronJob's runs:
// the runs failed in a row against the limit, and while scheduled runs are
// paused, since when and what ends the pause. Nothing without a policy.
func streakLines(cj *cronv1.CronJob, now time.Time, loc *time.Location) []string {
	policy := cj.Spec.FailurePolicy
	if policy == nil {
		return nil
	}
	streak := cj.Status.FailureStreak
	if streak == nil {
		streak = &cronv1.FailureStreak{}
	}
	line := fmt.Sprintf("Failed in a row: %d (pauseAfter %d)", streak.Count, policy.PauseAfter)
	if streak.LastFailedJob != "" {
		line += ", last failed Job " + streak.LastFailedJob
	}
	lines := []string{line}
	if streak.PausedAt == nil {
		return append(lines, "Paused: no")
	}
	line = fmt.Sprintf("Paused: since %s (%s ago)", streak.PausedAt.In(loc).Format(zoneLayout), duration.HumanDuration(now.Sub(streak.PausedAt.Time)))
	if failed := streak.Pauses - 1; failed == 1 {
		line += ", again after a failed trial"
	} else if failed > 1 {
		line += fmt.Sprintf(", again after %d failed trials", failed)
	}
	switch {
	case streak.TrialJob != "":
		line += fmt.Sprintf("; trial run %s running: its success ends the pause, its failure pauses again for longer", streak.TrialJob)
	case streak.ResumeAt != nil:
		when := "due"
		if d := streak.ResumeAt.Sub(now); d > 0 {
			when = "in " + duration.HumanDuration(d)
		}
		line += fmt.Sprintf("; the first run due at or after %s (%s) is a trial", streak.ResumeAt.In(loc).Format(zoneLayout), when)
	default:
		line += fmt.Sprintf("; until resumed (kubectl cronjob resume %s) or a run-now succeeds", cj.Name)
	}
	return append(lines, line)
}
