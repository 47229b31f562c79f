// Package control puts the controller's writes and live reads behind small
// interfaces: the sync handler decides, these carry it out.
package control

import (
	"context"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	cronv1 "github.com/cronjob-controller/cronjob-controller/pkg/apis/batch/v1"
	clientset "github.com/cronjob-controller/cronjob-controller/pkg/generated/clientset/versioned"
)

// Jobs reads and writes batch/v1 Jobs on the API server.
type Jobs interface {
	// Get reads a Job live, bypassing the informer cache.
	Get(ctx context.Context, namespace, name string) (*batchv1.Job, error)
	// Create creates a Job and returns it as the server stored it.
	Create(ctx context.Context, job *batchv1.Job) (*batchv1.Job, error)
	// Delete deletes the Job with this name only if it still has this UID,
	// letting the garbage collector remove its pods in the background.
	Delete(ctx context.Context, namespace, name string, uid types.UID) error
}

// CronJobs writes the status of CronJobs.
type CronJobs interface {
	// UpdateStatus writes cj.Status through the status subresource.
	UpdateStatus(ctx context.Context, cj *cronv1.CronJob) (*cronv1.CronJob, error)
}

// NewJobs returns Jobs backed by a clientset.
func NewJobs(client kubernetes.Interface) Jobs { return realJobs{client} }

// NewCronJobs returns CronJobs backed by the generated clientset.
func NewCronJobs(client clientset.Interface) CronJobs { return realCronJobs{client} }

type realJobs struct{ client kubernetes.Interface }

func (r realJobs) Get(ctx context.Context, namespace, name string) (*batchv1.Job, error) {
	return r.client.BatchV1().Jobs(namespace).Get(ctx, name, metav1.GetOptions{})
}

func (r realJobs) Create(ctx context.Context, job *batchv1.Job) (*batchv1.Job, error) {
	return r.client.BatchV1().Jobs(job.Namespace).Create(ctx, job, metav1.CreateOptions{})
}

func (r realJobs) Delete(ctx context.Context, namespace, name string, uid types.UID) error {
	background := metav1.DeletePropagationBackground
	return r.client.BatchV1().Jobs(namespace).Delete(ctx, name, metav1.DeleteOptions{
		PropagationPolicy: &background,
		Preconditions:     &metav1.Preconditions{UID: &uid},
	})
}

type realCronJobs struct{ client clientset.Interface }

func (r realCronJobs) UpdateStatus(ctx context.Context, cj *cronv1.CronJob) (*cronv1.CronJob, error) {
	return r.client.BatchV1().CronJobs(cj.Namespace).UpdateStatus(ctx, cj, metav1.UpdateOptions{})
}
