package plugin

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"slices"
	"text/tabwriter"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/duration"

	cronv1 "github.com/cronjob-controller/cronjob-controller/pkg/apis/batch/v1"
	"github.com/cronjob-controller/cronjob-controller/pkg/planner"
)

// States of a CronJob in list, from its Ready condition.
const (
	StateOK        = "ok"
	StateSuspended = "suspended"
	StateExpired   = "expired"
	// StatePending: the controller has not yet written a status for the
	// CronJob's current spec (it is not running, or has not synced since
	// the last edit), so nothing is known of its state.
	StatePending = "pending"
)

// ListCronJobs reads the CronJobs of the namespace, or of every namespace,
// ordered by namespace and name, with their apiVersion and kind set so
// they print as kubectl get prints them.
func ListCronJobs(ctx context.Context, c Clients, allNamespaces bool) (*cronv1.CronJobList, error) {
	namespace := c.Namespace
	if allNamespaces {
		namespace = metav1.NamespaceAll
	}
	list, err := c.Cron.BatchV1().CronJobs(namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	slices.SortFunc(list.Items, func(a, b cronv1.CronJob) int {
		return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
	})
	list.SetGroupVersionKind(cronv1.SchemeGroupVersion.WithKind("CronJobList"))
	for i := range list.Items {
		list.Items[i].SetGroupVersionKind(cronv1.SchemeGroupVersion.WithKind("CronJob"))
	}
	return list, nil
}

// PrintList prints the table of list: NAMESPACE (with -A), NAME, SCHEDULE,
// NEXT RUN, LAST RESULT and STATE, each read from what the controller
// wrote in the status.
func PrintList(w io.Writer, list *cronv1.CronJobList, c Clients, allNamespaces bool) error {
	if len(list.Items) == 0 {
		if allNamespaces {
			_, err := fmt.Fprintf(w, "No %s in any namespace.\n", Resource)
			return err
		}
		_, err := fmt.Fprintf(w, "No %s in namespace %s.\n", Resource, c.Namespace)
		return err
	}
	now := c.Clock.Now()
	tw := tabwriter.NewWriter(w, 0, 0, 3, ' ', 0)
	if allNamespaces {
		fmt.Fprint(tw, "NAMESPACE\t")
	}
	fmt.Fprintln(tw, "NAME\tSCHEDULE\tNEXT RUN\tLAST RESULT\tSTATE")
	for i := range list.Items {
		cj := &list.Items[i]
		if allNamespaces {
			fmt.Fprintf(tw, "%s\t", cj.Namespace)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", cj.Name, planner.ScheduleText(cj), NextRun(cj, now), LastResult(cj, now), State(cj, now))
	}
	return tw.Flush()
}

// synced reports whether the status was written for the current spec.
func synced(cj *cronv1.CronJob) bool {
	return cj.Status.ObservedGeneration >= cj.Generation && meta.FindStatusCondition(cj.Status.Conditions, cronv1.ConditionReady) != nil
}

// State is list's STATE of the CronJob at now, its Ready condition in a
// word: ok (True), suspended, suspended until a time (spec.suspendUntil,
// while it is ahead), paused (after failures, or while a trial runs),
// expired (past spec.notAfter), broken with the reason (an invalid
// schedule, an unknown time zone, an unresolved Calendar), or pending
// while the controller has not written the condition for the current spec.
func State(cj *cronv1.CronJob, now time.Time) string {
	ready := meta.FindStatusCondition(cj.Status.Conditions, cronv1.ConditionReady)
	if !synced(cj) {
		return StatePending
	}
	switch {
	case ready.Status == metav1.ConditionTrue:
		return StateOK
	case ready.Status != metav1.ConditionFalse:
		return fmt.Sprintf("unknown (%s)", ready.Reason)
	}
	switch ready.Reason {
	case planner.ReasonSuspended:
		return StateSuspended
	case planner.ReasonSuspendedUntil:
		if su := cj.Spec.SuspendUntil; su != nil && now.Before(su.Time) {
			return StateSuspended + " until " + su.UTC().Format(utcLayout)
		}
		// The suspension ended, and the controller has not written the
		// condition since: its next sync does, at once.
		return StatePending
	case planner.ReasonExpired, planner.ReasonMaxRunsReached:
		return StateExpired
	case planner.ReasonTrialRunning:
		return "paused (trial running)"
	case planner.ReasonFailureStreak:
		if s := cj.Status.FailureStreak; s != nil {
			return fmt.Sprintf("paused after %d failures", s.Count)
		}
		return "paused after failures"
	}
	return fmt.Sprintf("broken (%s)", ready.Reason)
}

// NextRun is list's NEXT RUN: status.nextScheduleTime from now, "-" when
// the controller schedules none (suspended, expired, broken, paused with
// no trial due) or has not synced the current spec.
func NextRun(cj *cronv1.CronJob, now time.Time) string {
	next := cj.Status.NextScheduleTime
	if next == nil || !synced(cj) {
		return "-"
	}
	if d := next.Sub(now); d > 0 {
		return "in " + duration.HumanDuration(d)
	}
	return "due"
}

// LastResult is list's LAST RESULT: the outcome of the newest finished run
// in status.recentRuns (a failed run's reason with it) and how long ago it
// ended; without one, the later of status.lastSuccessfulTime and
// status.lastFailureTime; "-" when no run has finished.
func LastResult(cj *cronv1.CronJob, now time.Time) string {
	ago := func(t *metav1.Time) string {
		if t == nil {
			return ""
		}
		return ", " + duration.HumanDuration(now.Sub(t.Time)) + " ago"
	}
	for _, r := range cj.Status.RecentRuns {
		if r.Outcome == cronv1.OutcomeRunning {
			continue
		}
		result := string(r.Outcome)
		if r.Outcome == cronv1.OutcomeFailed && r.Reason != "" {
			result += " (" + r.Reason + ")"
		}
		return result + ago(cmp.Or(r.CompletionTime, r.StartTime))
	}
	success, failure := cj.Status.LastSuccessfulTime, cj.Status.LastFailureTime
	switch {
	case success == nil && failure == nil:
		return "-"
	case failure == nil || success != nil && success.After(failure.Time):
		return string(cronv1.OutcomeSucceeded) + ago(success)
	default:
		return string(cronv1.OutcomeFailed) + ago(failure)
	}
}
