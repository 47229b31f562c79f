package backfill

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	cronv1 "github.com/cronjob-controller/cronjob-controller/pkg/apis/batch/v1"
)

// Times outside the CronJob's notBefore/notAfter window wait for the
// CronJob like any time it has not passed. Backfilling them at once would
// let a run happen twice: if the window widens later, the CronJob owes
// those times, and the Backfill's Job, the only lock, may be gone by then.
// Past an expired notAfter the condition says why it waits.
func TestBackfillWaitsOutsideTheCronJobsWindow(t *testing.T) {
	last := hour(2)
	for _, tc := range []struct {
		name     string
		cj       *cronv1.CronJob
		wantNote string
	}{
		{name: "after an expired notAfter", cj: func() *cronv1.CronJob {
			cj := cronJob(hour(-1), &last)
			cj.Spec.NotAfter = &metav1.Time{Time: hour(2)}
			return cj
		}(), wantNote: "spec.notAfter 2026-11-01T02:00:00Z has passed"},
		{name: "before notBefore", cj: func() *cronv1.CronJob {
			cj := cronJob(hour(-1), nil)
			cj.Spec.NotBefore = &metav1.Time{Time: hour(10)}
			return cj
		}()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := Decide(Input{Backfill: backfillOf(hour(3), hour(6), 1), CronJob: tc.cj, Job: lookup(), Now: hour(5)})
			c := meta.FindStatusCondition(p.Status.Conditions, cronv1.ConditionBackfillComplete)
			if got := createdTimes(p); len(got) != 0 || c == nil || c.Reason != ReasonWaitingForCronJob || !strings.Contains(c.Message, tc.wantNote) {
				t.Errorf("creates %v, condition %+v; want none, WaitingForCronJob saying %q", got, c, tc.wantNote)
			}
		})
	}
}

// Times before the CronJob's creation are never its runs, whatever its
// window says, so widening the window cannot make it owe them: a Backfill
// creates them even when they are also before notBefore, as docs/backfill.md
// says.
func TestBackfillCreatesTimesBeforeTheCronJobsCreationOutsideItsWindow(t *testing.T) {
	cj := cronJob(hour(10), nil)
	cj.Spec.NotBefore = &metav1.Time{Time: hour(20)}
	p := Decide(Input{Backfill: backfillOf(hour(3), hour(5), 2), CronJob: cj, Job: lookup(), Now: hour(12)})
	if got := createdTimes(p); len(got) != 2 {
		t.Errorf("creates %v, want the two times before the CronJob's creation", got)
	}
}
