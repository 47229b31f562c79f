// Package plugin is the library behind the kubectl plugin kubectl-cronjob
// (cmd/kubectl-cronjob): one function per command, each taking the typed
// clientsets, a writer and a clock, so each is tested on the fake
// clientsets. The commands only read the API and patch the CronJob, as a
// user with kubectl would; everything else is the controller's job.
package plugin

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/clock"

	cronv1 "github.com/cronjob-controller/cronjob-controller/pkg/apis/batch/v1"
	clientset "github.com/cronjob-controller/cronjob-controller/pkg/generated/clientset/versioned"
)

// Resource is how the plugin names a CronJob of this API in what it
// prints: the form kubectl prints, and the one a user must type, since the
// plural alone resolves to the built-in kind.
const Resource = "cronjobs.batch.tutorial.kubebuilder.io"

// Clients is what every command works with.
type Clients struct {
	// Cron reads and patches CronJobs.
	Cron clientset.Interface
	// Kube reads Jobs.
	Kube kubernetes.Interface
	// Namespace is the namespace of the CronJob named on the command line.
	Namespace string
	// Clock is the time the commands compute and print against.
	Clock clock.PassiveClock
}

// get reads the named CronJob, saying in one line which one is missing.
func (c Clients) get(ctx context.Context, name string) (*cronv1.CronJob, error) {
	cj, err := c.Cron.BatchV1().CronJobs(c.Namespace).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, fmt.Errorf("%s %q not found in namespace %q", Resource, name, c.Namespace)
	}
	return cj, err
}

// patchOptions are the options of every patch: the plugin names
// itself as the field manager, as kubectl does.
var patchOptions = metav1.PatchOptions{FieldManager: "kubectl-cronjob"}
