package plugin

import (
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	k8stesting "k8s.io/client-go/testing"

	cronv1 "github.com/cronjob-controller/cronjob-controller/pkg/apis/batch/v1"
	"github.com/cronjob-controller/cronjob-controller/pkg/job"
)

// stampRunUIDs gives each CronJobRun created the UID the API server would.
func (f fakes) stampRunUIDs() {
	f.cron.PrependReactor("create", "cronjobruns", func(a k8stesting.Action) (bool, runtime.Object, error) {
		r := a.(k8stesting.CreateAction).GetObject().(*cronv1.CronJobRun)
		r.UID = types.UID("uid-" + r.Name)
		return false, nil, nil
	})
}

// runStatuses makes each get of a CronJobRun answer with the next of
// statuses (the last one again once they run out), as the controller
// would write them while the run goes on.
func (f fakes) runStatuses(statuses ...cronv1.CronJobRunStatus) {
	f.cron.PrependReactor("get", "cronjobruns", func(a k8stesting.Action) (bool, runtime.Object, error) {
		obj, err := f.cron.Tracker().Get(a.GetResource(), a.GetNamespace(), a.(k8stesting.GetAction).GetName())
		if err != nil {
			return true, nil, err
		}
		r := obj.(*cronv1.CronJobRun).DeepCopy()
		r.Status = statuses[0]
		if len(statuses) > 1 {
			statuses = statuses[1:]
		}
		return true, r, nil
	})
}

func startedAs(jobName string, outcome cronv1.RunOutcome) cronv1.CronJobRunStatus {
	return cronv1.CronJobRunStatus{JobName: jobName, Outcome: outcome, Conditions: []metav1.Condition{
		{Type: cronv1.ConditionRunStarted, Status: metav1.ConditionTrue, Reason: cronv1.ReasonRunJobCreated}}}
}

// kubectl cronjob run creates a CronJobRun with the env given, touches
// nothing of the CronJob (the user may not have the right), and names the
// Job the controller creates for it.
func TestRunCreatesACronJobRunAndNamesItsJob(t *testing.T) {
	kubeconfig(t, ns)
	f := newFakes([]*cronv1.CronJob{newCronJob("nightly", "0 2 * * *")})
	f.stampRunUIDs()
	code, stdout, stderr, _ := f.cli(t, "run", "nightly", "--env", "DRY_RUN=false", "--env", "GREETING=a=b")
	if code != 0 {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	runs, err := f.cron.BatchV1().CronJobRuns(ns).List(t.Context(), metav1.ListOptions{})
	if err != nil || len(runs.Items) != 1 {
		t.Fatalf("CronJobRuns %v %v, want one", runs, err)
	}
	r := runs.Items[0]
	want := []cronv1.RunEnvVar{{Name: "DRY_RUN", Value: "false"}, {Name: "GREETING", Value: "a=b"}}
	if r.Spec.CronJobName != "nightly" || len(r.Spec.Env) != 2 || r.Spec.Env[0] != want[0] || r.Spec.Env[1] != want[1] || r.Name != "nightly-20261123-130430" {
		t.Errorf("CronJobRun %s spec %+v, want nightly-20261123-130430 for nightly with %v", r.Name, r.Spec, want)
	}
	if jobName := job.RequestName("nightly", r.UID); !strings.Contains(stdout, "Job to expect: "+jobName) {
		t.Errorf("output does not name the Job %s:\n%s", jobName, stdout)
	}
	for _, a := range f.cron.Actions() {
		if a.GetResource().Resource == "cronjobs" {
			t.Errorf("the command %s the CronJob: it needs no right on it", a.GetVerb())
		}
	}
	// A second run in the same second gets a name of its own.
	if code, _, stderr, _ := f.cli(t, "run", "nightly"); code != 0 {
		t.Fatalf("second run: exit %d, stderr %q", code, stderr)
	}
	if runs, _ := f.cron.BatchV1().CronJobRuns(ns).List(t.Context(), metav1.ListOptions{}); len(runs.Items) != 2 {
		t.Errorf("CronJobRuns after two runs in one second: %d, want 2", len(runs.Items))
	}
}

// --wait follows the run to its end: exit 0 when it succeeded, 1 when it
// failed, went away unseen, or was refused (saying why).
func TestRunWaitExitsNonZeroUnlessTheRunSucceeded(t *testing.T) {
	kubeconfig(t, ns)
	defer func(d time.Duration) { waitInterval = d }(waitInterval)
	waitInterval = time.Millisecond
	refused := cronv1.CronJobRunStatus{Conditions: []metav1.Condition{{Type: cronv1.ConditionRunStarted, Status: metav1.ConditionFalse,
		Reason: cronv1.ReasonRunOverrideNotAllowed, Message: "CronJob nightly does not allow setting env PATH"}}}
	pending := cronv1.CronJobRunStatus{Conditions: []metav1.Condition{{Type: cronv1.ConditionRunStarted, Status: metav1.ConditionFalse, Reason: cronv1.ReasonRunPending}}}
	for _, tc := range []struct {
		name     string
		statuses []cronv1.CronJobRunStatus
		code     int
		says     []string
	}{
		{"succeeded", []cronv1.CronJobRunStatus{{}, pending, startedAs("nightly-rx", cronv1.OutcomeRunning), startedAs("nightly-rx", cronv1.OutcomeSucceeded)}, 0,
			[]string{"Job nightly-rx started", "Job nightly-rx succeeded"}},
		{"failed", []cronv1.CronJobRunStatus{startedAs("nightly-rx", cronv1.OutcomeFailed)}, 1, []string{"Job nightly-rx failed"}},
		{"gone unseen", []cronv1.CronJobRunStatus{startedAs("nightly-rx", cronv1.OutcomeUnknown)}, 1, []string{"went away"}},
		{"refused", []cronv1.CronJobRunStatus{refused}, 1, []string{"OverrideNotAllowed", "does not allow setting env PATH"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakes([]*cronv1.CronJob{newCronJob("nightly", "0 2 * * *")})
			f.runStatuses(tc.statuses...)
			code, stdout, stderr, _ := f.cli(t, "run", "nightly", "--wait")
			if code != tc.code {
				t.Errorf("exit %d, want %d; stdout %q stderr %q", code, tc.code, stdout, stderr)
			}
			for _, s := range tc.says {
				if !strings.Contains(stdout+stderr, s) {
					t.Errorf("output does not say %q:\n%s%s", s, stdout, stderr)
				}
			}
		})
	}
}

// --annotation keeps the run-now annotation path; bad flags are refused
// before anything is written.
func TestRunAnnotationAndBadFlags(t *testing.T) {
	kubeconfig(t, ns)
	f := newFakes([]*cronv1.CronJob{newCronJob("nightly", "0 2 * * *")})
	if code, stdout, stderr, _ := f.cli(t, "run", "nightly", "--annotation"); code != 0 || !strings.Contains(stdout, cronv1.RunNowAnnotation) {
		t.Fatalf("--annotation: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	if f.cronJob(t, "nightly").Annotations[cronv1.RunNowAnnotation] == "" {
		t.Error("--annotation did not set the run-now annotation")
	}
	f.cron.ClearActions()
	for _, args := range [][]string{
		{"run", "nightly", "--env", "NOEQUALS"},
		{"run", "nightly", "--env", "1BAD=x"},
		{"run", "nightly", "--env", "A=1", "--env", "A=2"},
		{"run", "nightly", "--annotation", "--env", "A=1"},
		{"run", "nightly", "--annotation", "--wait"},
		{"run", "nightly", "--wait", "--timeout", "0s"},
		{"run", "nightly", "--wait", "--timeout", "25h"},
	} {
		if code, _, stderr, _ := f.cli(t, args...); code != 2 || stderr == "" {
			t.Errorf("%q: exit %d, stderr %q, want 2 and why", args, code, stderr)
		}
	}
	if n := len(f.cron.Actions()); n != 0 {
		t.Errorf("bad command lines made %d requests, want none", n)
	}
}

// Without the CronJobRun CRD (an install from before it), the command says
// so, and how to run anyway.
func TestRunWithoutTheCronJobRunCRDSaysUseAnnotation(t *testing.T) {
	kubeconfig(t, ns)
	f := newFakes([]*cronv1.CronJob{newCronJob("nightly", "0 2 * * *")})
	f.cron.PrependReactor("create", "cronjobruns", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewNotFound(schema.GroupResource{}, "")
	})
	code, _, stderr, _ := f.cli(t, "run", "nightly")
	if code != 1 || !strings.Contains(stderr, "--annotation") {
		t.Errorf("exit %d, stderr %q, want 1 and a hint of --annotation", code, stderr)
	}
}
