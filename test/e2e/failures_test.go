//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	cronv1 "github.com/cronjob-controller/cronjob-controller/pkg/apis/batch/v1"
	"github.com/cronjob-controller/cronjob-controller/pkg/job"
	"github.com/cronjob-controller/cronjob-controller/pkg/planner"
)

// spec.failurePolicy: a CronJob whose Jobs fail pauses after pauseAfter
// failed runs (Paused=True, a Warning Event Paused, the runs due meanwhile
// counted under Paused); once the cool-down has passed one trial run
// starts, and its success resumes the CronJob (Paused=False/Resumed) and
// the next run starts.
func TestFailingCronJobPausesAndItsTrialResumesIt(t *testing.T) {
	ns := newNamespace(t)
	startController(t)
	// Each Job fails a second after it starts: its pod is never scheduled
	// and activeDeadlineSeconds ends it.
	cj := createCronJob(t, cronJob(ns, "breaker", "@every 3s", stuck, func(cj *cronv1.CronJob) {
		cj.Spec.JobTemplate.Spec.ActiveDeadlineSeconds = ptr.To[int64](1)
		cj.Spec.FailurePolicy = &cronv1.FailurePolicy{PauseAfter: 2, ResumeAfter: &metav1.Duration{Duration: 10 * time.Second}}
	}))

	var paused *cronv1.CronJob
	eventually(t, 60*time.Second, "paused after two failed runs", func() (bool, string) {
		paused = getCronJob(t, ns, cj.Name)
		cond := meta.FindStatusCondition(paused.Status.Conditions, cronv1.ConditionPaused)
		fs := paused.Status.FailureStreak
		return fs != nil && fs.PausedAt != nil && cond != nil && cond.Status == metav1.ConditionTrue && cond.Reason == planner.ReasonFailureStreak,
			fmt.Sprintf("failureStreak %+v, condition %+v", fs, cond)
	})
	// The next run is to succeed: a template edit neither ends the pause
	// nor starts a run (R8), and the cool-down leaves time for it.
	updateSpec(t, ns, cj.Name, func(cj *cronv1.CronJob) {
		cj.Spec.JobTemplate.Spec.ActiveDeadlineSeconds = nil
		cj.Spec.JobTemplate.Spec.Template.Spec.NodeSelector = nil
	})
	fs := paused.Status.FailureStreak
	pausedAt := fs.PausedAt.Time
	if fs.Count < 2 || fs.Pauses != 1 || fs.ResumeAt == nil || !fs.ResumeAt.Time.Equal(pausedAt.Add(10*time.Second)) {
		t.Errorf("failureStreak on pausing: %+v, want count 2, pauses 1, resumeAt pausedAt+10s", fs)
	}
	if ok, seen := eventHappens(t, ns, cj.Name, corev1.EventTypeWarning, planner.ReasonPaused); !ok {
		t.Errorf("no Warning Event Paused: %s", seen)
	}
	// The run history holds the failures with their Jobs' reason, and
	// kubectl shows the last result.
	failed := 0
	for _, r := range paused.Status.RecentRuns {
		if r.Outcome == cronv1.OutcomeFailed && r.Reason == "DeadlineExceeded" && r.CompletionTime != nil {
			failed++
		}
	}
	if failed < 2 || paused.Status.LastFailureTime == nil {
		t.Errorf("recentRuns %+v, lastFailureTime %v: want two failed runs (DeadlineExceeded) and the last failure's time", paused.Status.RecentRuns, paused.Status.LastFailureTime)
	}
	if out, err := kubectl("get", "cronjobs.batch.tutorial.kubebuilder.io", "-n", ns, cj.Name); err != nil || !strings.Contains(out, "Failed") {
		t.Errorf("kubectl get shows no LAST RESULT Failed: %v\n%s", err, out)
	}

	var resumed *cronv1.CronJob
	eventually(t, 60*time.Second, "resumed by the trial's success", func() (bool, string) {
		resumed = getCronJob(t, ns, cj.Name)
		cond := meta.FindStatusCondition(resumed.Status.Conditions, cronv1.ConditionPaused)
		return cond != nil && cond.Status == metav1.ConditionFalse && cond.Reason == planner.ReasonResumed,
			fmt.Sprintf("failureStreak %+v, condition %+v", resumed.Status.FailureStreak, cond)
	})
	if fs := resumed.Status.FailureStreak; fs == nil || fs.Count != 0 || fs.PausedAt != nil || fs.TrialJob != "" {
		t.Errorf("failureStreak after the trial's success: %+v", fs)
	}
	if !slices.ContainsFunc(resumed.Status.RecentRuns, func(r cronv1.RunRecord) bool {
		return r.Trigger == cronv1.TriggerTrial && r.Outcome == cronv1.OutcomeSucceeded
	}) {
		t.Errorf("recentRuns %+v: want the trial, succeeded", resumed.Status.RecentRuns)
	}
	held := int64(0)
	for _, m := range resumed.Status.MissedRuns {
		if m.Reason == cronv1.MissedPaused {
			held = m.Count
		}
	}
	// Runs every 3 s, the trial the first at or after pausedAt+10s: at
	// least two came due before it.
	if held < 2 {
		t.Errorf("missedRuns %+v: want at least 2 under %s for the runs due while paused", resumed.Status.MissedRuns, cronv1.MissedPaused)
	}

	// One trial: of the runs due after the pause, the first to start is
	// at or after resumeAt and completed; then the runs go on.
	var after []batchv1.Job
	eventually(t, 30*time.Second, "a run after the trial", func() (bool, string) {
		after = nil
		for _, j := range jobsOf(t, ns, cj) {
			// Strictly after: pausedAt has whole seconds, and a run due in
			// the second of the pause may have started before it.
			if at, ok := job.ScheduledAt(&j); ok && at.After(pausedAt) {
				after = append(after, j)
			}
		}
		return len(after) >= 2, fmt.Sprintf("%d runs since the pause", len(after))
	})
	slices.SortFunc(after, func(a, b batchv1.Job) int {
		x, _ := job.ScheduledAt(&a)
		y, _ := job.ScheduledAt(&b)
		return x.Compare(y)
	})
	trial := after[0]
	trialAt, _ := job.ScheduledAt(&trial)
	if trialAt.Before(pausedAt.Add(10 * time.Second)) {
		t.Errorf("the first run since the pause, %s, is due at %v, before resumeAt %v", trial.Name, trialAt, pausedAt.Add(10*time.Second))
	}
	if ok, seen := eventHappens(t, ns, cj.Name, corev1.EventTypeNormal, planner.ReasonTrialRun); !ok {
		t.Errorf("no Event TrialRun: %s", seen)
	}
	// The trial started once: no other run started from the pause until
	// the trial completed.
	trial = getJob(t, ns, trial.Name)
	if job.Finished(&trial) != batchv1.JobComplete || trial.Status.CompletionTime == nil {
		t.Fatalf("the trial %s has not completed: %+v", trial.Name, trial.Status)
	}
	for _, j := range after[1:] {
		if j.CreationTimestamp.Time.Before(trial.Status.CompletionTime.Time) {
			t.Errorf("Job %s started at %v, while the trial %s ran (completed %v)", j.Name, j.CreationTimestamp, trial.Name, trial.Status.CompletionTime)
		}
	}
}

func getJob(t *testing.T, ns, name string) batchv1.Job {
	t.Helper()
	j, err := env.kube.BatchV1().Jobs(ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return *j
}
