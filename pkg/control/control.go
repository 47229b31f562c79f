// Package control puts the controller's writes and live reads behind small
// interfaces: the sync handler decides, these carry it out.
package control

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	batchv1 "k8s.io/api/batch/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
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
	// ReleaseFinalizer removes finalizer from the Job with this name only
	// if it still has this UID, and leaves every other finalizer alone.
	// finalizers are the Job's as last seen, to find ours without a read; a
	// stale view costs one live read. A Job gone, or no longer holding it,
	// is no error.
	ReleaseFinalizer(ctx context.Context, namespace, name string, uid types.UID, finalizer string, finalizers []string) error
}

// CronJobs writes the status of CronJobs.
type CronJobs interface {
	// UpdateStatus writes cj.Status through the status subresource.
	UpdateStatus(ctx context.Context, cj *cronv1.CronJob) (*cronv1.CronJob, error)
	// Get reads a CronJob live, bypassing the informer cache.
	Get(ctx context.Context, namespace, name string) (*cronv1.CronJob, error)
	// List reads every CronJob live, as the API server holds them now (a
	// consistent read, in pages), and calls fn on each.
	List(ctx context.Context, fn func(*cronv1.CronJob)) error
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

func (r realJobs) ReleaseFinalizer(ctx context.Context, namespace, name string, uid types.UID, finalizer string, finalizers []string) error {
	jobs := r.client.BatchV1().Jobs(namespace)
	var err error
	for range 3 {
		i := slices.Index(finalizers, finalizer)
		if i < 0 {
			return nil
		}
		_, err = jobs.Patch(ctx, name, types.JSONPatchType, RemoveFinalizerPatch(uid, finalizer, i), metav1.PatchOptions{})
		if err == nil || apierrors.IsNotFound(err) {
			return nil
		}
		// A test failed (another Job holds the name, or the finalizers
		// moved: the garbage collector adds and removes its own), or the
		// request did: a live read tells which.
		live, getErr := jobs.Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(getErr) {
			return nil
		}
		if getErr != nil {
			return errors.Join(err, getErr)
		}
		if live.UID != uid {
			return nil
		}
		finalizers = live.Finalizers
	}
	return err
}

// RemoveFinalizerPatch is a JSON patch that removes finalizer at index i of
// the Job with this UID: its tests make it fail, rather than remove
// something else, when the UID or the position no longer match. It carries
// no resourceVersion, so a Job the Job controller updates meanwhile still
// takes it at once.
func RemoveFinalizerPatch(uid types.UID, finalizer string, i int) []byte {
	path := fmt.Sprintf("/metadata/finalizers/%d", i)
	patch, err := json.Marshal([]map[string]any{
		{"op": "test", "path": "/metadata/uid", "value": uid},
		{"op": "test", "path": path, "value": finalizer},
		{"op": "remove", "path": path},
	})
	if err != nil {
		panic(err) // strings only
	}
	return patch
}

type realCronJobs struct{ client clientset.Interface }

func (r realCronJobs) UpdateStatus(ctx context.Context, cj *cronv1.CronJob) (*cronv1.CronJob, error) {
	return r.client.BatchV1().CronJobs(cj.Namespace).UpdateStatus(ctx, cj, metav1.UpdateOptions{})
}

func (r realCronJobs) Get(ctx context.Context, namespace, name string) (*cronv1.CronJob, error) {
	return r.client.BatchV1().CronJobs(namespace).Get(ctx, name, metav1.GetOptions{})
}

// listPage bounds one response: a fleet of CronJobs is read in pages, as an
// informer lists it.
const listPage = 500

func (r realCronJobs) List(ctx context.Context, fn func(*cronv1.CronJob)) error {
	opts := metav1.ListOptions{Limit: listPage}
	for {
		list, err := r.client.BatchV1().CronJobs(metav1.NamespaceAll).List(ctx, opts)
		if err != nil {
			return err
		}
		for i := range list.Items {
			fn(&list.Items[i])
		}
		if list.Continue == "" {
			return nil
		}
		opts.Continue = list.Continue
	}
}
