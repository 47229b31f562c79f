package planner

import (
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	cronv1 "github.com/cronjob-controller/cronjob-controller/pkg/apis/batch/v1"
)

const (
	// ReasonScheduling is the Ready condition's reason while the CronJob
	// schedules its runs normally.
	ReasonScheduling = "Scheduling"
	// ReasonSuspended is the Ready condition's reason while spec.suspend
	// holds every scheduled run.
	ReasonSuspended = "Suspended"
)

// noteReady sums the plan's status up in the Ready condition, so that a
// CronJob that will not run shows it in kubectl get: True while it
// schedules normally; False, with the reason and message of what stops it,
// in the order a user would mend them: the schedule or time zone, a
// Calendar, the active window, suspend, suspendUntil, then a pause after
// failures.
func (p *Plan) noteReady() {
	if p.cj.DeletionTimestamp != nil {
		return
	}
	conds := p.Status.Conditions
	blocking := func(t string, s metav1.ConditionStatus) *metav1.Condition {
		if c := meta.FindStatusCondition(conds, t); c != nil && c.Status == s {
			return c
		}
		return nil
	}
	var c *metav1.Condition
	for _, b := range []struct {
		typ    string
		status metav1.ConditionStatus
	}{
		{cronv1.ConditionScheduleValid, metav1.ConditionFalse},
		{cronv1.ConditionCalendarsResolved, metav1.ConditionFalse},
		{cronv1.ConditionExpired, metav1.ConditionTrue},
	} {
		if c = blocking(b.typ, b.status); c != nil {
			break
		}
	}
	switch {
	case c != nil:
		p.setCondition(cronv1.ConditionReady, metav1.ConditionFalse, c.Reason, c.Message)
	case ptr.Deref(p.cj.Spec.Suspend, false):
		p.setCondition(cronv1.ConditionReady, metav1.ConditionFalse, ReasonSuspended, "spec.suspend holds every scheduled run")
	case p.suspendedUntil():
		p.setCondition(cronv1.ConditionReady, metav1.ConditionFalse, ReasonSuspendedUntil,
			"spec.suspendUntil holds every scheduled run due before "+formatTime(p.cj.Spec.SuspendUntil.Time))
	case blocking(cronv1.ConditionPaused, metav1.ConditionTrue) != nil:
		c = blocking(cronv1.ConditionPaused, metav1.ConditionTrue)
		p.setCondition(cronv1.ConditionReady, metav1.ConditionFalse, c.Reason, c.Message)
	default:
		p.setCondition(cronv1.ConditionReady, metav1.ConditionTrue, ReasonScheduling, "")
	}
}
