package plugin

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"

	cronv1 "github.com/cronjob-controller/cronjob-controller/pkg/apis/batch/v1"
	"github.com/cronjob-controller/cronjob-controller/pkg/job"
	"github.com/cronjob-controller/cronjob-controller/pkg/planner"
)

// RunResult is what Run did.
type RunResult struct {
	// Value is the run-now value written.
	Value string
	// Job is the name of the Job the controller will create for it, or ""
	// when it cannot be known (an earlier value is still unhandled).
	Job string
}

// Run asks the controller for one Job of the CronJob now: it sets the
// run-now annotation to a value neither the annotation nor
// status.lastRunNow holds, with a merge patch that carries the
// resourceVersion read, so the Job name it predicts is computed from the
// state the patch lands on.
func Run(ctx context.Context, c Clients, w io.Writer, name string) (RunResult, error) {
	var res RunResult
	var pending string
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cj, err := c.get(ctx, name)
		if err != nil {
			return err
		}
		current := cj.Annotations[cronv1.RunNowAnnotation]
		last := cj.Status.LastRunNow
		res.Value = freshValue(c.Clock.Now(), current, last)
		patch, err := json.Marshal(map[string]any{"metadata": map[string]any{
			"resourceVersion": cj.ResourceVersion,
			"annotations":     map[string]string{cronv1.RunNowAnnotation: res.Value},
		}})
		if err != nil {
			return err
		}
		if _, err := c.Cron.BatchV1().CronJobs(c.Namespace).Patch(ctx, name, types.MergePatchType, patch, patchOptions); err != nil {
			return err
		}
		// The controller names the Job after the value it handled last,
		// the new one and the number of the request (one more than the
		// values handled). While an earlier value waits to be handled, the
		// controller may start that one first or go straight to ours.
		pending, res.Job = "", ""
		if current != "" && planner.RunNowKey(current) != last {
			pending = current
		} else {
			res.Job = job.ManualName(cj.Name, cj.UID, last, res.Value, cj.Status.RunNowCount+1)
		}
		return nil
	})
	if err != nil {
		return RunResult{}, err
	}
	fmt.Fprintf(w, "%s/%s annotated %s=%s\n", Resource, name, cronv1.RunNowAnnotation, res.Value)
	if res.Job != "" {
		fmt.Fprintf(w, "Job to expect: %s (kubectl cronjob history %s shows its outcome)\n", res.Job, name)
	} else {
		fmt.Fprintf(w, "The earlier value %q is not handled yet (is the controller running?), so the Job's name is not known: watch kubectl cronjob history %s\n", pending, name)
	}
	return res, nil
}

// freshValue is a run-now value for now that differs from the annotation's
// current value and from the last value handled, so it starts a Job even
// when two runs ask within one clock tick.
func freshValue(now time.Time, current, last string) string {
	base := now.UTC().Format(time.RFC3339Nano)
	v := base
	for i := 2; v == current || planner.RunNowKey(v) == last; i++ {
		v = base + "-" + strconv.Itoa(i)
	}
	return v
}
