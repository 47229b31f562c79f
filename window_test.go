package main

import (
	"slices"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2/ktesting"

	cronv1 "github.com/cronjob-controller/cronjob-controller/pkg/apis/batch/v1"
)

// Through the controller (informer cache, slim form, apply): a CronJob with
// several schedules and an active window starts one Job for the time two
// entries share, whose pod carries the scheduled time; past notAfter it
// expires with one Event and no next time.
func TestSchedulesAndWindowThroughTheController(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := newFixture(t, at(time.Second)) // 10:00:01
	f.cronJob = newCronJob(lastScheduled(at(-time.Hour)), func(cj *cronv1.CronJob) {
		cj.Spec.Schedule = ""
		cj.Spec.Schedules = []cronv1.ScheduleEntry{"0 * * * *", "0 */2 * * *", "30 * * * *"}
		cj.Spec.NotBefore = &metav1.Time{Time: at(-45 * time.Minute)}
		cj.Spec.NotAfter = &metav1.Time{Time: at(20 * time.Minute)}
	})
	c, _, cronFactory := f.newController(ctx)
	cj := syncs(t, ctx, f, c, cronFactory)
	if writes := describe(f.kubeclient.Actions(), true); !slices.Equal(writes, []string{"create jobs default/" + jobName(at(0))}) {
		t.Errorf("writes %q, want the 10:00 run alone (09:30 is a run too, superseded)", writes)
	}
	j, err := f.kubeclient.BatchV1().Jobs("default").Get(ctx, jobName(at(0)), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if env := j.Spec.Template.Spec.Containers[0].Env; len(env) == 0 || env[0].Name != cronv1.ScheduledTimeEnv ||
		j.Spec.Template.Annotations[cronv1.ScheduledAtAnnotation] != j.Annotations[cronv1.ScheduledAtAnnotation] {
		t.Errorf("pod template: annotations %v, env %+v", j.Spec.Template.Annotations, env)
	}
	if cj.Status.NextScheduleTime != nil {
		t.Errorf("next %v: 10:30 is past notAfter 10:20", cj.Status.NextScheduleTime)
	}
	if c := meta.FindStatusCondition(cj.Status.Conditions, cronv1.ConditionExpired); c == nil || c.Status != metav1.ConditionFalse {
		t.Errorf("Expired %+v, want False", c)
	}

	f.kubeclient.ClearActions()
	f.clock.SetTime(at(25 * time.Minute))
	cj = syncs(t, ctx, f, c, cronFactory)
	if c := meta.FindStatusCondition(cj.Status.Conditions, cronv1.ConditionExpired); c == nil || c.Status != metav1.ConditionTrue {
		t.Errorf("Expired %+v, want True", c)
	}
	f.clock.Step(time.Hour)
	syncs(t, ctx, f, c, cronFactory)
	if writes := describe(f.kubeclient.Actions(), true); len(writes) != 0 {
		t.Errorf("expired, yet %q", writes)
	}
	var expired int
	for _, e := range f.events() {
		if e == "Normal Expired" || len(e) > 14 && e[:14] == "Normal Expired" {
			expired++
		}
	}
	if expired != 1 {
		t.Errorf("%d Expired events, want 1: %q", expired, f.events())
	}
}
