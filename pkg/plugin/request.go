package plugin

import (
	"context"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	cronv1 "github.com/cronjob-controller/cronjob-controller/pkg/apis/batch/v1"
	"github.com/cronjob-controller/cronjob-controller/pkg/job"
)

// RunResource is how the plugin names a CronJobRun.
const RunResource = "cronjobruns.batch.tutorial.kubebuilder.io"

// MaxWait bounds --timeout of kubectl cronjob run --wait.
const MaxWait = 24 * time.Hour

// waitInterval is how often --wait reads the CronJobRun: a get, which the
// example Role grants, where a watch would need its own verb.
var waitInterval = 2 * time.Second

var envName = regexp.MustCompile(`^[-._a-zA-Z][-._a-zA-Z0-9]*$`)

// ParseEnv reads --env values, K=V each, into a CronJobRun's env: names as
// the API accepts them, each once, at most cronv1.MaxRunEnv.
func ParseEnv(values []string) ([]cronv1.RunEnvVar, error) {
	if len(values) > cronv1.MaxRunEnv {
		return nil, badUsage("at most %d --env, got %d", cronv1.MaxRunEnv, len(values))
	}
	var env []cronv1.RunEnvVar
	for _, v := range values {
		name, value, ok := strings.Cut(v, "=")
		switch {
		case !ok:
			return nil, badUsage("--env %q: want NAME=VALUE", v)
		case !envName.MatchString(name) || len(name) > 128:
			return nil, badUsage("--env %q: %q is not a valid variable name (letters, digits, '-', '.', '_', not starting with a digit, at most 128)", v, name)
		case len(value) > cronv1.MaxRunEnvValue:
			return nil, badUsage("--env %s: the value is longer than %d characters", name, cronv1.MaxRunEnvValue)
		}
		for _, e := range env {
			if e.Name == name {
				return nil, badUsage("--env %s given twice", name)
			}
		}
		env = append(env, cronv1.RunEnvVar{Name: name, Value: value})
	}
	return env, nil
}

// RequestResult is what Request did.
type RequestResult struct {
	// Run is the CronJobRun created, as last read.
	Run *cronv1.CronJobRun
	// Job is the name of the Job the controller creates for it.
	Job string
}

// Request starts one run of the CronJob name by creating a CronJobRun for
// it, named after the CronJob and the time. It needs no right on the
// CronJob itself: only create on cronjobruns.
func Request(ctx context.Context, c Clients, w io.Writer, name string, env []cronv1.RunEnvVar) (RequestResult, error) {
	base := fmt.Sprintf("%s-%s", name, c.Clock.Now().UTC().Format("20060102-150405"))
	for i := 1; ; i++ {
		runName := base
		if i > 1 {
			runName += "-" + strconv.Itoa(i)
		}
		run := &cronv1.CronJobRun{
			ObjectMeta: metav1.ObjectMeta{Name: runName, Namespace: c.Namespace},
			Spec:       cronv1.CronJobRunSpec{CronJobName: name, Env: env},
		}
		created, err := c.Cron.BatchV1().CronJobRuns(c.Namespace).Create(ctx, run, metav1.CreateOptions{})
		switch {
		case apierrors.IsAlreadyExists(err) && i < 10:
			continue
		case apierrors.IsNotFound(err) && notServed(err):
			return RequestResult{}, fmt.Errorf("the API server does not serve %s (installed before they existed?): install the CRDs again, or use --annotation", RunResource)
		case err != nil:
			return RequestResult{}, err
		}
		res := RequestResult{Run: created, Job: job.RequestName(name, created.UID)}
		fmt.Fprintf(w, "%s/%s created\n", RunResource, created.Name)
		fmt.Fprintf(w, "Job to expect: %s (kubectl get cjr %s follows it)\n", res.Job, created.Name)
		return res, nil
	}
}

// notServed tells a NotFound about the resource itself (its CRD missing)
// from one about the namespace.
func notServed(err error) bool {
	var status apierrors.APIStatus
	if !errors.As(err, &status) {
		return false
	}
	d := status.Status().Details
	return d == nil || d.Kind == "cronjobruns" || d.Kind == "" && d.Name == ""
}

// errRunFailed is a run that ended without succeeding.
var errRunFailed = errors.New("the run did not succeed")

// WaitForRun reads the CronJobRun name until its run has finished or it was
// refused, saying so on w as it goes. It returns nil when the run
// succeeded, an error wrapping errRunFailed when it failed, went away
// unseen or was refused, and another error when timeout passed first.
func WaitForRun(ctx context.Context, c Clients, w io.Writer, name string, timeout time.Duration) error {
	var lastJob string
	var result error
	err := wait.PollUntilContextTimeout(ctx, waitInterval, timeout, true, func(ctx context.Context) (bool, error) {
		r, err := c.Cron.BatchV1().CronJobRuns(c.Namespace).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		st := r.Status
		if st.JobName != "" && st.JobName != lastJob {
			lastJob = st.JobName
			fmt.Fprintf(w, "Job %s started\n", st.JobName)
		}
		started := meta.FindStatusCondition(st.Conditions, cronv1.ConditionRunStarted)
		switch {
		case st.Outcome == cronv1.OutcomeSucceeded:
			fmt.Fprintf(w, "Job %s succeeded\n", st.JobName)
			return true, nil
		case st.Outcome == cronv1.OutcomeFailed:
			result = fmt.Errorf("%w: Job %s failed", errRunFailed, st.JobName)
			return true, nil
		case st.Outcome == cronv1.OutcomeUnknown:
			result = fmt.Errorf("%w: Job %s went away before it was seen to finish", errRunFailed, st.JobName)
			return true, nil
		case started != nil && started.Status == metav1.ConditionFalse && started.Reason != cronv1.ReasonRunPending && started.Reason != cronv1.ReasonRunCronJobNotFound:
			result = fmt.Errorf("%w: not started (%s): %s", errRunFailed, started.Reason, started.Message)
			return true, nil
		}
		return false, nil
	})
	if err != nil {
		if wait.Interrupted(err) {
			return fmt.Errorf("%s/%s has not finished after %v", RunResource, name, timeout)
		}
		return err
	}
	return result
}
