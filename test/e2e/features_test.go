//go:build e2e

package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	cronv1 "github.com/cronjob-controller/cronjob-controller/pkg/apis/batch/v1"
	"github.com/cronjob-controller/cronjob-controller/pkg/job"
	"github.com/cronjob-controller/cronjob-controller/pkg/schedule"
)

// kubectl annotate …/run-now starts one Job per value, across restarts.
func TestRunNowAnnotation(t *testing.T) {
	ns := newNamespace(t)
	ctrl := startController(t)
	cj := createCronJob(t, cronJob(ns, "manual", "0 0 1 1 *", func(cj *cronv1.CronJob) { cj.Spec.Suspend = ptr.To(true) }))
	annotate := func(value string) {
		t.Helper()
		if out, err := kubectl("annotate", "-n", ns, "cronjobs.batch.tutorial.kubebuilder.io", cj.Name, cronv1.RunNowAnnotation+"="+value, "--overwrite"); err != nil {
			t.Fatalf("kubectl annotate: %v\n%s", err, out)
		}
	}
	annotate("1001")
	eventually(t, 20*time.Second, "the run-now Job", func() (bool, string) {
		cur := getCronJob(t, ns, cj.Name)
		return cur.Status.LastRunNow == "1001" && len(jobsOf(t, ns, cj)) == 1, fmt.Sprintf("lastRunNow %q", cur.Status.LastRunNow)
	})
	j := jobsOf(t, ns, cj)[0]
	if j.Name != job.ManualName(cj.Name, cj.UID, "", "1001", 1) || j.Annotations[cronv1.InstantiateAnnotation] != "manual" {
		t.Errorf("run-now Job %s with annotations %v", j.Name, j.Annotations)
	}

	// The same value after a restart starts nothing; a new value does.
	ctrl.stop(t)
	startController(t)
	annotate("1002")
	eventually(t, 20*time.Second, "the second run-now Job", func() (bool, string) {
		n := len(jobsOf(t, ns, cj))
		return getCronJob(t, ns, cj.Name).Status.LastRunNow == "1002" && n == 2, fmt.Sprintf("%d Jobs", n)
	})
	if n := len(jobsOf(t, ns, cj)); n != 2 {
		t.Errorf("%d Jobs for two run-now values", n)
	}
}

// Missed runs show in status, in a condition and in the metric.
func TestMissedRunsVisible(t *testing.T) {
	ns := newNamespace(t)
	metricsAddr := freeAddr(t)
	startController(t, "-metrics-bind-address="+metricsAddr)
	cj := createCronJob(t, cronJob(ns, "late", "0 * * * *", func(cj *cronv1.CronJob) {
		cj.Spec.TimeZone = ptr.To("UTC")
		cj.Spec.Suspend = ptr.To(true)
		cj.Spec.StartingDeadlineSeconds = ptr.To[int64](10)
	}))
	// As if the controller had been down for five hours.
	lastHour := time.Now().UTC().Truncate(time.Hour)
	resumeAsIfLastRan(t, ns, cj.Name, metav1.NewTime(lastHour.Add(-5*time.Hour)))
	eventually(t, 20*time.Second, "missed runs in status", func() (bool, string) {
		cur := getCronJob(t, ns, cj.Name)
		counts := map[string]int64{}
		for _, m := range cur.Status.MissedRuns {
			counts[m.Reason] = m.Count
		}
		cond := meta.FindStatusCondition(cur.Status.Conditions, cronv1.ConditionLastRunStarted)
		return counts[cronv1.MissedSuperseded] == 4 && counts[cronv1.MissedDeadlineExceeded] == 1 &&
				cond != nil && cond.Status == metav1.ConditionFalse && cond.Reason == cronv1.MissedDeadlineExceeded,
			fmt.Sprintf("%+v %+v", cur.Status.MissedRuns, cond)
	})
	if v := metricValue(t, metricsAddr, `cronjob_controller_missed_schedules_total{reason="DeadlineExceeded"}`); v < 1 {
		t.Errorf("missed_schedules_total{DeadlineExceeded} = %v", v)
	}
	if out, err := kubectl("get", "-n", ns, "cronjobs.batch.tutorial.kubebuilder.io", cj.Name, "-o", "jsonpath={.status.missedRuns}"); err != nil || !strings.Contains(out, "Superseded") {
		t.Errorf("kubectl does not show status.missedRuns: %v %s", err, out)
	}
}

// Editing the schedule does not start the runs the new schedule named
// before the edit.
func TestScheduleEditStartsNothing(t *testing.T) {
	ns := newNamespace(t)
	startController(t)
	// Last ran a year ago on a yearly schedule: nothing is due.
	cj := createCronJob(t, cronJob(ns, "edited", "0 0 1 1 *", func(cj *cronv1.CronJob) {
		cj.Spec.TimeZone = ptr.To("UTC")
		cj.Spec.Suspend = ptr.To(true)
	}))
	newYear := time.Date(time.Now().UTC().Year(), 1, 1, 0, 0, 0, 0, time.UTC)
	resumeAsIfLastRan(t, ns, cj.Name, metav1.NewTime(newYear))
	eventually(t, 20*time.Second, "the schedule observed", func() (bool, string) {
		cur := getCronJob(t, ns, cj.Name)
		return cur.Status.ResolvedSchedule == "0 0 1 1 *" && cur.Status.ObservedGeneration == cur.Generation, fmt.Sprintf("%+v", cur.Status)
	})
	// Now hourly: the built-in controller would start the most recent hour
	// at once, because hours have passed since the last run.
	updateSpec(t, ns, cj.Name, func(cj *cronv1.CronJob) { cj.Spec.Schedule = "0 * * * *" })
	eventually(t, 20*time.Second, "the edit observed", func() (bool, string) {
		cur := getCronJob(t, ns, cj.Name)
		return cur.Status.ScheduleChangeTime != nil && cur.Status.ObservedGeneration == cur.Generation, fmt.Sprintf("%+v", cur.Status)
	})
	if n := len(jobsOf(t, ns, cj)); n != 0 {
		t.Errorf("the edit started %d Jobs", n)
	}
	cur := getCronJob(t, ns, cj.Name)
	if next := cur.Status.NextScheduleTime; next == nil || !next.After(time.Now()) {
		t.Errorf("next schedule time %v is not in the future", next)
	}
}

// H spreads a schedule by a hash of the CronJob's name; status shows it.
func TestHashedScheduleAccepted(t *testing.T) {
	ns := newNamespace(t)
	startController(t)
	cj := createCronJob(t, cronJob(ns, "spread", "H H(0-7) * * *"))
	want, err := schedule.Resolve("H H(0-7) * * *", ns+"/spread")
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, 20*time.Second, "the resolved schedule", func() (bool, string) {
		out, _ := kubectl("get", "-n", ns, "cronjobs.batch.tutorial.kubebuilder.io", cj.Name, "-o", "jsonpath={.status.resolvedSchedule}")
		return out == want, out
	})
	cond := meta.FindStatusCondition(getCronJob(t, ns, cj.Name).Status.Conditions, cronv1.ConditionScheduleValid)
	if cond == nil || cond.Status != metav1.ConditionTrue {
		t.Errorf("ScheduleValid = %+v", cond)
	}
}

// catchUpPolicy All starts each missed run, oldest first.
func TestCatchUpAll(t *testing.T) {
	ns := newNamespace(t)
	startController(t)
	cj := createCronJob(t, cronJob(ns, "catchup", "0 * * * *", func(cj *cronv1.CronJob) {
		cj.Spec.TimeZone = ptr.To("UTC")
		cj.Spec.Suspend = ptr.To(true)
		cj.Spec.CatchUpPolicy = cronv1.CatchUpAll
		cj.Spec.CatchUpLimit = ptr.To[int32](3)
		cj.Spec.JobTemplate.Spec.Suspend = ptr.To(true)
	}))
	lastHour := time.Now().UTC().Truncate(time.Hour)
	resumeAsIfLastRan(t, ns, cj.Name, metav1.NewTime(lastHour.Add(-5*time.Hour)))
	eventually(t, 20*time.Second, "three catch-up Jobs", func() (bool, string) {
		times := scheduledTimes(t, jobsOf(t, ns, cj))
		return len(times) == 3 && times[0].Equal(lastHour.Add(-2*time.Hour)) && times[2].Equal(lastHour), fmt.Sprint(times)
	})
	if ok, seen := eventHappens(t, ns, cj.Name, corev1.EventTypeNormal, "SuccessfulCreate"); !ok {
		t.Errorf("no SuccessfulCreate: %s", seen)
	}
	// The status is written after the creates (deferred while other CronJobs of
	// the shared cluster wait in the queue).
	eventually(t, 20*time.Second, "lastScheduleTime at the last catch-up run", func() (bool, string) {
		cur := getCronJob(t, ns, cj.Name)
		return cur.Status.LastScheduleTime != nil && cur.Status.LastScheduleTime.Time.Equal(lastHour), fmt.Sprint(cur.Status.LastScheduleTime)
	})
}
