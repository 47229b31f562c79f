//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	cronv1 "github.com/cronjob-controller/cronjob-controller/pkg/apis/batch/v1"
	"github.com/cronjob-controller/cronjob-controller/pkg/planner"
)

// Every file of artifacts/examples, applied at once as a user tries them,
// does on the embedded control plane what its docs say: the sample runs
// every minute (README); the failing one fails three times, pauses, and
// tries once more after its two-minute cool-down, which fails too and
// pauses it again (docs/failures.md, An example); the Backfill makes a Job
// for each minute of its hour (docs/backfill.md); the Calendar is accepted
// as written (docs/calendars.md).
func TestExamplesDoWhatTheirDocsSay(t *testing.T) {
	ns := newNamespace(t)
	ctx := context.Background()
	startController(t)
	if out, err := kubectl("apply", "-n", ns, "-f", filepath.Join(env.root, "artifacts", "examples")); err != nil {
		t.Fatalf("kubectl apply -f artifacts/examples/: %v\n%s", err, out)
	}
	t.Cleanup(func() {
		_, _ = kubectl("delete", "calendar.batch.tutorial.kubebuilder.io", "holidays-2026", "--ignore-not-found")
	})

	// The sample: a Job for the next minute.
	eventually(t, 2*time.Minute, "a Job of cronjob-sample", func() (bool, string) {
		return len(jobsOf(t, ns, getCronJob(t, ns, "cronjob-sample"))) > 0, ""
	})

	// The Backfill: one Job for each minute of 08:00-09:00, end excluded.
	eventually(t, 3*time.Minute, "the Backfill complete", func() (bool, string) {
		bf, err := env.cron.BatchV1().Backfills(ns).Get(ctx, "cronjob-sample-backfill", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		return meta.IsStatusConditionTrue(bf.Status.Conditions, cronv1.ConditionBackfillComplete) && bf.Status.Total == 60 && bf.Status.Created == 60,
			fmt.Sprintf("%+v", bf.Status)
	})

	// The Calendar, as written.
	cal, err := env.cron.BatchV1().Calendars().Get(ctx, "holidays-2026", metav1.GetOptions{})
	if err != nil || len(cal.Spec.Dates) != 2 || len(cal.Spec.Ranges) != 2 {
		t.Errorf("the Calendar example: %+v, %v", cal, err)
	}

	// The failing one: paused after its third failed run, then a trial once
	// the cool-down has passed, which fails and pauses it again.
	var cj *cronv1.CronJob
	eventually(t, 5*time.Minute, "failing-sample paused after three failed runs", func() (bool, string) {
		cj = getCronJob(t, ns, "failing-sample")
		fs := cj.Status.FailureStreak
		return fs != nil && fs.Count == 3 && fs.PausedAt != nil && meta.IsStatusConditionTrue(cj.Status.Conditions, cronv1.ConditionPaused),
			fmt.Sprintf("failureStreak %+v", fs)
	})
	if c := meta.FindStatusCondition(cj.Status.Conditions, cronv1.ConditionReady); c == nil || c.Status != metav1.ConditionFalse || c.Reason != planner.ReasonFailureStreak {
		t.Errorf("paused, Ready is %+v; want False, %s", c, planner.ReasonFailureStreak)
	}
	eventually(t, 4*time.Minute, "the trial after the cool-down, failed, pausing again", func() (bool, string) {
		cj = getCronJob(t, ns, "failing-sample")
		fs := cj.Status.FailureStreak
		return fs != nil && fs.Pauses >= 2, fmt.Sprintf("failureStreak %+v", fs)
	})
	if ok, seen := eventHappens(t, ns, "failing-sample", "Normal", planner.ReasonTrialRun); !ok {
		t.Errorf("no TrialRun Event; %s", seen)
	}
}
