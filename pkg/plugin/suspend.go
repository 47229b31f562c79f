package plugin

import (
	"context"
	"encoding/json"
	"fmt"
	"io"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"

	cronv1 "github.com/cronjob-controller/cronjob-controller/pkg/apis/batch/v1"
)

// Suspend sets spec.suspend to suspend with a merge patch, and says
// whether anything changed. Jobs already started are left alone, as the
// field says. Resuming also ends a pause of spec.failurePolicy (Resume).
func Suspend(ctx context.Context, c Clients, w io.Writer, name string, suspend bool) error {
	if !suspend {
		return Resume(ctx, c, w, name)
	}
	cj, err := c.get(ctx, name)
	if err != nil {
		return err
	}
	if ptr.Deref(cj.Spec.Suspend, false) {
		fmt.Fprintf(w, "%s/%s already suspended: unchanged\n", Resource, name)
		return nil
	}
	if _, err := c.Cron.BatchV1().CronJobs(c.Namespace).Patch(ctx, name, types.MergePatchType, []byte(`{"spec":{"suspend":true}}`), patchOptions); err != nil {
		return err
	}
	fmt.Fprintf(w, "%s/%s suspended\n", Resource, name)
	return nil
}

// Resume clears spec.suspend and, while spec.failurePolicy has paused the
// CronJob (status.failureStreak.pausedAt is set), sets the resume
// annotation to a fresh value in the same patch: a user who says resume
// wants runs to start, whichever of the two stopped them. The patch then
// carries the resourceVersion read, so that a pause the controller ended
// or began in between is read again rather than acted on as it was.
func Resume(ctx context.Context, c Clients, w io.Writer, name string) error {
	var (
		suspended bool
		paused    *cronv1.FailureStreak
		policy    bool
		value     string
	)
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cj, err := c.get(ctx, name)
		if err != nil {
			return err
		}
		suspended, paused, policy, value = ptr.Deref(cj.Spec.Suspend, false), nil, cj.Spec.FailurePolicy != nil, ""
		if s := cj.Status.FailureStreak; s != nil && s.PausedAt != nil {
			paused = s.DeepCopy()
		}
		if !suspended && paused == nil {
			return nil
		}
		body := map[string]any{}
		if suspended {
			body["spec"] = map[string]any{"suspend": false}
		}
		if paused != nil {
			value = freshValue(c.Clock.Now(), cj.Annotations[cronv1.ResumeAnnotation], paused.LastResume)
			body["metadata"] = map[string]any{
				"resourceVersion": cj.ResourceVersion,
				"annotations":     map[string]string{cronv1.ResumeAnnotation: value},
			}
		}
		patch, err := json.Marshal(body)
		if err != nil {
			return err
		}
		_, err = c.Cron.BatchV1().CronJobs(c.Namespace).Patch(ctx, name, types.MergePatchType, patch, patchOptions)
		return err
	})
	if err != nil {
		return err
	}
	switch {
	case paused != nil:
		what := "resumed"
		if suspended {
			what = "resumed (spec.suspend cleared)"
		}
		fmt.Fprintf(w, "%s/%s %s: its pause after %d failed runs in a row ends (annotated %s=%s); the controller records it in status.failureStreak.lastResume\n",
			Resource, name, what, paused.Count, cronv1.ResumeAnnotation, value)
	case suspended:
		fmt.Fprintf(w, "%s/%s resumed\n", Resource, name)
	case policy:
		fmt.Fprintf(w, "%s/%s neither suspended nor paused: unchanged\n", Resource, name)
	default:
		fmt.Fprintf(w, "%s/%s not suspended: unchanged\n", Resource, name)
	}
	return nil
}
