package planner

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	cronv1 "github.com/cronjob-controller/cronjob-controller/pkg/apis/batch/v1"
)

// A CronJob that will not run says so in one place, Ready, with the reason
// of what stops it, so kubectl get shows a broken one at a glance: not
// only an empty NEXT SCHEDULE. Several at once: the one to mend first.
func TestReadySaysWhatStopsTheRuns(t *testing.T) {
	suspended := func(cj *cronv1.CronJob) { cj.Spec.Suspend = ptr.To(true) }
	for _, tc := range []struct {
		name   string
		opts   []func(*cronv1.CronJob)
		status metav1.ConditionStatus
		reason string
	}{
		{"schedules normally", nil, metav1.ConditionTrue, ReasonScheduling},
		{"a time zone not in the database", []func(*cronv1.CronJob){zone("Mars/Olympus")}, metav1.ConditionFalse, ReasonUnknownTimeZone},
		{"a schedule that never fires", []func(*cronv1.CronJob){sched("0 0 30 2 *")}, metav1.ConditionFalse, ReasonInvalidSchedule},
		{"a Calendar that is missing", []func(*cronv1.CronJob){excluding("holidays")}, metav1.ConditionFalse, ReasonCalendarNotFound},
		{"past notAfter", []func(*cronv1.CronJob){notAfter(at(-time.Minute))}, metav1.ConditionFalse, ReasonExpired},
		{"suspended", []func(*cronv1.CronJob){suspended}, metav1.ConditionFalse, ReasonSuspended},
		{"paused after failures", []func(*cronv1.CronJob){failurePolicy(1, 0, 0), failing(1, "cj-x"), pausedSince(at(-time.Hour), 1, "")}, metav1.ConditionFalse, ReasonFailureStreak},
		{"suspended with a schedule that never fires", []func(*cronv1.CronJob){suspended, sched("0 0 30 2 *")}, metav1.ConditionFalse, ReasonInvalidSchedule},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cj := cronJob(append([]func(*cronv1.CronJob){last(at(-time.Hour))}, tc.opts...)...)
			p := Decide(Input{CronJob: cj, Now: ten})
			c := meta.FindStatusCondition(p.Status.Conditions, cronv1.ConditionReady)
			if c == nil || c.Status != tc.status || c.Reason != tc.reason {
				t.Fatalf("Ready %+v, want %s %s", c, tc.status, tc.reason)
			}
			if tc.status == metav1.ConditionFalse && c.Message == "" {
				t.Error("Ready is False with no message saying why")
			}
		})
	}
}
