package plugin

import (
	"context"
	"fmt"
	"io"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

// Suspend sets spec.suspend to suspend with a merge patch, and says
// whether anything changed. Jobs already started are left alone, as the
// field says.
func Suspend(ctx context.Context, c Clients, w io.Writer, name string, suspend bool) error {
	cj, err := c.get(ctx, name)
	if err != nil {
		return err
	}
	verb := map[bool]string{true: "suspended", false: "resumed"}[suspend]
	if ptr.Deref(cj.Spec.Suspend, false) == suspend {
		state := map[bool]string{true: "already suspended", false: "not suspended"}[suspend]
		fmt.Fprintf(w, "%s/%s %s: unchanged\n", Resource, name, state)
		return nil
	}
	patch := fmt.Sprintf(`{"spec":{"suspend":%t}}`, suspend)
	if _, err := c.Cron.BatchV1().CronJobs(c.Namespace).Patch(ctx, name, types.MergePatchType, []byte(patch), patchOptions); err != nil {
		return err
	}
	fmt.Fprintf(w, "%s/%s %s\n", Resource, name, verb)
	return nil
}
