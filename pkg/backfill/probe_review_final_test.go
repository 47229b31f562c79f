package backfill

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// README: "the CronJob's excludeCalendars and notBefore/notAfter do not
// thin [a Backfill] out". A CronJob whose notAfter has passed never starts
// or counts another time, so planner.SettledUntil stops at its last run;
// the Backfill must still create the times after notAfter (a finding of
// the final review: it waited, WaitingForCronJob, for ever).
func TestProbeBackfillAfterNotAfterNeverRuns(t *testing.T) {
	last := hour(2)
	cj := cronJob(hour(-1), &last)
	cj.Spec.NotAfter = &metav1.Time{Time: hour(2)}
	bf := backfillOf(hour(3), hour(6), 1)
	p := Decide(Input{Backfill: bf, CronJob: cj, Job: lookup(), Now: hour(20)})
	if got := createdTimes(p); len(got) != 1 || !got[0].Equal(hour(3)) {
		t.Errorf("creates %v, want the time %v (the CronJob expired at %v and will never pass it); status %+v",
			got, hour(3), hour(2), p.Status.Conditions)
	}
}

// Likewise before notBefore: a CronJob created before its window opens
// never runs the times until then, so a Backfill of them need not wait for
// the window.
func TestBackfillBeforeNotBeforeRuns(t *testing.T) {
	cj := cronJob(hour(-1), nil)
	cj.Spec.NotBefore = &metav1.Time{Time: hour(10)}
	bf := backfillOf(hour(0), hour(3), 1)
	p := Decide(Input{Backfill: bf, CronJob: cj, Job: lookup(), Now: hour(5)})
	if got := createdTimes(p); len(got) != 1 || !got[0].Equal(hour(0)) {
		t.Errorf("creates %v, want the time %v (before the CronJob's notBefore %v)", got, hour(0), hour(10))
	}
}
