package plugin

import (
	"bytes"
	"context"
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	cronv1 "github.com/cronjob-controller/cronjob-controller/pkg/apis/batch/v1"
	"github.com/cronjob-controller/cronjob-controller/pkg/planner"
	"github.com/cronjob-controller/cronjob-controller/pkg/schedule"
)

// ready is the Ready condition the controller wrote for the CronJob's
// current spec.
func ready(status metav1.ConditionStatus, reason string) func(*cronv1.CronJob) {
	return func(cj *cronv1.CronJob) {
		cj.Status.ObservedGeneration = cj.Generation
		cj.Status.Conditions = append(cj.Status.Conditions, metav1.Condition{Type: cronv1.ConditionReady, Status: status, Reason: reason})
	}
}

func inNamespace(namespace string) func(*cronv1.CronJob) {
	return func(cj *cronv1.CronJob) { cj.Namespace = namespace }
}

func nextAt(t time.Time) func(*cronv1.CronJob) {
	return func(cj *cronv1.CronJob) { cj.Status.NextScheduleTime = &metav1.Time{Time: t} }
}

// columns splits list's table into rows of cells (cells are apart by
// three spaces or more, as tabwriter pads them).
func columns(out string) [][]string {
	var rows [][]string
	for _, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		rows = append(rows, regexp.MustCompile(`\s{3,}`).Split(strings.TrimSpace(line), -1))
	}
	return rows
}

// list -A shows every namespace's CronJobs, each with its state read from
// the Ready condition: ok, suspended, paused after failures, expired, the
// broken ones with the reason, and pending where the controller has not
// written a status for the current spec.
func TestListShowsBrokenCronJobsAcrossNamespaces(t *testing.T) {
	kubeconfig(t, ns)
	f := newFakes([]*cronv1.CronJob{
		newCronJob("sample", "*/1 * * * *", ready(metav1.ConditionTrue, planner.ReasonScheduling), nextAt(t0.Add(30*time.Second))),
		newCronJob("mars", "0 * * * *", inNamespace("team-b"), func(cj *cronv1.CronJob) { cj.Spec.TimeZone = ptr.To("Mars/Olympus") },
			ready(metav1.ConditionFalse, schedule.ReasonUnknownTimeZone)),
		newCronJob("feb30", "0 0 30 2 *", inNamespace("team-b"), ready(metav1.ConditionFalse, schedule.ReasonInvalidSchedule)),
		newCronJob("held", "0 2 * * *", func(cj *cronv1.CronJob) { cj.Spec.Suspend = ptr.To(true) }, ready(metav1.ConditionFalse, planner.ReasonSuspended)),
		newCronJob("failing", "*/5 * * * *", func(cj *cronv1.CronJob) {
			cj.Status.FailureStreak = &cronv1.FailureStreak{Count: 3, PausedAt: &metav1.Time{Time: t0.Add(-time.Minute)}}
		}, ready(metav1.ConditionFalse, planner.ReasonFailureStreak)),
		newCronJob("done", "0 0 * * *", ready(metav1.ConditionFalse, planner.ReasonExpired)),
		newCronJob("once", "0 0 * * *", ready(metav1.ConditionFalse, planner.ReasonMaxRunsReached)),
		newCronJob("new", "H 6 * * 1-5", inNamespace("team-c"), func(cj *cronv1.CronJob) {
			cj.Spec.Schedules = []cronv1.ScheduleEntry{"0 9 * * 1-5", "0 12 * * 6"}
			cj.Spec.Schedule = ""
		}),
		// A status of the spec before the last edit says nothing of this one.
		newCronJob("edited", "0 3 * * *", ready(metav1.ConditionTrue, planner.ReasonScheduling), nextAt(t0.Add(time.Hour)),
			func(cj *cronv1.CronJob) { cj.Generation = 2 }),
	})
	code, stdout, stderr, _ := f.cli(t, "list", "-A")
	if code != 0 || stderr != "" {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	want := [][]string{
		{"NAMESPACE", "NAME", "SCHEDULE", "NEXT RUN", "LAST RESULT", "STATE"},
		{"team-a", "done", "0 0 * * *", "-", "-", "expired"},
		{"team-a", "edited", "0 3 * * *", "-", "-", "pending"},
		{"team-a", "failing", "*/5 * * * *", "-", "-", "paused after 3 failures"},
		{"team-a", "held", "0 2 * * *", "-", "-", "suspended"},
		{"team-a", "once", "0 0 * * *", "-", "-", "expired"},
		{"team-a", "sample", "*/1 * * * *", "in 30s", "-", "ok"},
		{"team-b", "feb30", "0 0 30 2 *", "-", "-", "broken (InvalidSchedule)"},
		{"team-b", "mars", "0 * * * *", "-", "-", "broken (UnknownTimeZone)"},
		{"team-c", "new", "0 9 * * 1-5 | 0 12 * * 6", "-", "-", "pending"},
	}
	if got := columns(stdout); !equalRows(got, want) {
		t.Errorf("list -A printed\n%s\nwant rows %q", stdout, want)
	}
}

func equalRows(a, b [][]string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if strings.Join(a[i], "\x00") != strings.Join(b[i], "\x00") {
			return false
		}
	}
	return true
}

// Without -A, list shows the CronJobs of the namespace -n (or the
// kubeconfig) names, without a NAMESPACE column, and says when there are
// none.
func TestListShowsOnlyTheNamespaceWithoutAllNamespaces(t *testing.T) {
	kubeconfig(t, ns)
	f := newFakes([]*cronv1.CronJob{
		newCronJob("here", "0 1 * * *", ready(metav1.ConditionTrue, planner.ReasonScheduling), nextAt(t0.Add(90*time.Minute))),
		newCronJob("there", "0 1 * * *", inNamespace("team-b")),
	})
	_, stdout, _, _ := f.cli(t, "list")
	if want := [][]string{{"NAME", "SCHEDULE", "NEXT RUN", "LAST RESULT", "STATE"}, {"here", "0 1 * * *", "in 90m", "-", "ok"}}; !equalRows(columns(stdout), want) {
		t.Errorf("list printed\n%s\nwant rows %q", stdout, want)
	}
	_, stdout, _, _ = f.cli(t, "list", "-n", "team-c")
	if want := "No " + Resource + " in namespace team-c.\n"; stdout != want {
		t.Errorf("list in an empty namespace printed %q, want %q", stdout, want)
	}
}

// LAST RESULT is the newest finished run of status.recentRuns, a running
// one skipped, with a failed run's reason; without one in the history,
// the later of lastSuccessfulTime and lastFailureTime.
func TestListLastResultIsTheNewestFinishedRun(t *testing.T) {
	mt := func(d time.Duration) *metav1.Time { return &metav1.Time{Time: t0.Add(-d)} }
	for _, tc := range []struct {
		name   string
		status cronv1.CronJobStatus
		want   string
	}{
		{"no run yet", cronv1.CronJobStatus{}, "-"},
		{"a failure after a running run", cronv1.CronJobStatus{RecentRuns: []cronv1.RunRecord{
			{JobName: "a-3", Outcome: cronv1.OutcomeRunning, StartTime: mt(time.Minute)},
			{JobName: "a-2", Outcome: cronv1.OutcomeFailed, Reason: "BackoffLimitExceeded", StartTime: mt(7 * time.Minute), CompletionTime: mt(5 * time.Minute)},
			{JobName: "a-1", Outcome: cronv1.OutcomeSucceeded, StartTime: mt(12 * time.Minute), CompletionTime: mt(11 * time.Minute)},
		}}, "Failed (BackoffLimitExceeded), 5m ago"},
		{"a success", cronv1.CronJobStatus{RecentRuns: []cronv1.RunRecord{
			{JobName: "a-1", Outcome: cronv1.OutcomeSucceeded, StartTime: mt(3 * time.Minute), CompletionTime: mt(2 * time.Minute)},
		}}, "Succeeded, 2m ago"},
		{"a Job gone before it finished", cronv1.CronJobStatus{RecentRuns: []cronv1.RunRecord{
			{JobName: "a-1", Outcome: cronv1.OutcomeUnknown, StartTime: mt(time.Hour)},
		}}, "Unknown, 60m ago"},
		{"no history, a later failure", cronv1.CronJobStatus{LastSuccessfulTime: mt(2 * time.Hour), LastFailureTime: mt(time.Hour)}, "Failed, 60m ago"},
		{"no history, a later success", cronv1.CronJobStatus{LastSuccessfulTime: mt(time.Minute), LastFailureTime: mt(time.Hour)}, "Succeeded, 60s ago"},
	} {
		cj := newCronJob("a", "* * * * *", func(cj *cronv1.CronJob) { cj.Status = tc.status })
		if got := LastResult(cj, t0); got != tc.want {
			t.Errorf("%s: LAST RESULT %q, want %q", tc.name, got, tc.want)
		}
	}
}

// list -o json prints the CronJobs as kubectl get -o json does: a
// CronJobList whose items carry their apiVersion and kind.
func TestListPrintsJSON(t *testing.T) {
	kubeconfig(t, ns)
	f := newFakes([]*cronv1.CronJob{newCronJob("b", "0 1 * * *"), newCronJob("a", "0 2 * * *"), newCronJob("c", "0 3 * * *", inNamespace("team-b"))})
	code, stdout, stderr, _ := f.cli(t, "list", "-o", "json")
	if code != 0 || stderr != "" {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	var list cronv1.CronJobList
	if err := json.Unmarshal([]byte(stdout), &list); err != nil {
		t.Fatalf("%v in\n%s", err, stdout)
	}
	if list.APIVersion != "batch.tutorial.kubebuilder.io/v1" || list.Kind != "CronJobList" || len(list.Items) != 2 {
		t.Fatalf("printed %s %s with %d items, want a CronJobList of the 2 CronJobs of %s:\n%s", list.APIVersion, list.Kind, len(list.Items), ns, stdout)
	}
	for i, name := range []string{"a", "b"} {
		if it := list.Items[i]; it.Name != name || it.Kind != "CronJob" || it.APIVersion != "batch.tutorial.kubebuilder.io/v1" || it.Spec.Schedule == "" {
			t.Errorf("item %d is %s %s %q, want CronJob %q with its spec", i, it.APIVersion, it.Kind, it.Name, name)
		}
	}
}

// STATE says until when spec.suspendUntil holds the runs; once that time
// has passed and the controller has not written Ready since, it is
// pending.
func TestListShowsSuspendedUntil(t *testing.T) {
	f := newFakes([]*cronv1.CronJob{
		newCronJob("later", "0 * * * *", suspendedUntil(utcAt(15, 30)), ready(metav1.ConditionFalse, planner.ReasonSuspendedUntil), nextAt(utcAt(16, 0))),
		newCronJob("ended", "0 * * * *", suspendedUntil(utcAt(13, 0)), ready(metav1.ConditionFalse, planner.ReasonSuspendedUntil), nextAt(utcAt(14, 0))),
	})
	list, err := ListCronJobs(context.Background(), f.clients(), false)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := PrintList(&out, list, f.clients(), false); err != nil {
		t.Fatal(err)
	}
	want := [][]string{
		{"NAME", "SCHEDULE", "NEXT RUN", "LAST RESULT", "STATE"},
		{"ended", "0 * * * *", "in 55m", "-", "pending"},
		{"later", "0 * * * *", "in 175m", "-", "suspended until 2026-11-23T15:30:00Z"},
	}
	if got := columns(out.String()); !equalRows(got, want) {
		t.Errorf("list printed\n%s\nwant %q", out.String(), want)
	}
}
