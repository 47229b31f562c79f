package main

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	cronv1 "github.com/cronjob-controller/cronjob-controller/pkg/apis/batch/v1"
)

// A status shape's run history is newest first, the firing's run running
// and the earlier ones succeeded; lastSuccessfulTime is the newest finished
// run's, and a history of the firing's run alone carries none, whatever the
// object held before.
func TestARunHistoryHasTheFiringRunningAndOnlyFinishedRunsSucceeded(t *testing.T) {
	for _, runs := range []int{1, 2, 5, cronv1.DefaultRunHistoryLimit} {
		cj := &cronv1.CronJob{ObjectMeta: metav1.ObjectMeta{Name: "cj", Namespace: "ns"}}
		cj.Status.LastSuccessfulTime = &metav1.Time{Time: firingAt(-100)}
		runHistory(cj, 7, runs)
		rr := cj.Status.RecentRuns
		if len(rr) != runs {
			t.Fatalf("runs %d: %d entries", runs, len(rr))
		}
		for k, run := range rr {
			if !run.ScheduledTime.Time.Equal(firingAt(7 - k)) {
				t.Errorf("runs %d: entry %d scheduled %v, want %v", runs, k, run.ScheduledTime, firingAt(7-k))
			}
			finished := run.CompletionTime != nil
			if want := k > 0; finished != want || (run.Outcome == cronv1.OutcomeSucceeded) != want || (run.Outcome == cronv1.OutcomeRunning) == want {
				t.Errorf("runs %d: entry %d outcome %s, finished %v", runs, k, run.Outcome, finished)
			}
		}
		last := cj.Status.LastSuccessfulTime
		switch {
		case runs == 1 && last != nil:
			t.Errorf("a history of the firing alone carries lastSuccessfulTime %v", last)
		case runs > 1 && (last == nil || !last.Equal(rr[1].CompletionTime)):
			t.Errorf("runs %d: lastSuccessfulTime %v, want the newest finished run's %v", runs, last, rr[1].CompletionTime)
		}
	}
}
