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
	"k8s.io/client-go/kubernetes/scheme"

	cronv1 "github.com/cronjob-controller/cronjob-controller/pkg/apis/batch/v1"
	clientset "github.com/cronjob-controller/cronjob-controller/pkg/generated/clientset/versioned"
	cronscheme "github.com/cronjob-controller/cronjob-controller/pkg/generated/clientset/versioned/scheme"
)

// Jobs reads and writes batch/v1 Jobs on the API server.
type Jobs interface {
	// Get reads a Job live, bypassing the informer cache.
	Get(ctx context.Context, namespace, name string) (*batchv1.Job, error)
	// Create creates a Job and returns it with the metadata the server
	// stored (name, UID, resourceVersion, creationTimestamp) and the spec
	// as sent: the server's defaults are not in it, and its status is
	// empty.
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
	// UpdateStatus writes cj.Status through the status subresource, at
	// cj's resourceVersion (a conflict if the CronJob changed since), and
	// returns cj at the version stored, its status as the server keeps it
	// (times in whole seconds). cj is not changed.
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
	rc := restClientOf(r.client.BatchV1().RESTClient())
	if rc == nil {
		return r.client.BatchV1().Jobs(job.Namespace).Create(ctx, job, metav1.CreateOptions{})
	}
	meta, err := answeredMetadata(rc.Post().
		UseProtobufAsDefaultIfPreferred(true). // as the typed client does for a built-in kind
		Namespace(job.Namespace).
		Resource("jobs").
		VersionedParams(&metav1.CreateOptions{}, scheme.ParameterCodec).
		Body(job).
		SetHeader("Accept", metadataAnswer).
		Do(ctx))
	if err != nil {
		return nil, err
	}
	return &batchv1.Job{TypeMeta: job.TypeMeta, ObjectMeta: *meta, Spec: job.Spec}, nil
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
		err = r.patch(ctx, namespace, name, RemoveFinalizerPatch(uid, finalizer, i))
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

// patch applies a JSON patch to a Job. The answer is not read: it asks for
// the metadata alone.
func (r realJobs) patch(ctx context.Context, namespace, name string, patch []byte) error {
	rc := restClientOf(r.client.BatchV1().RESTClient())
	if rc == nil {
		_, err := r.client.BatchV1().Jobs(namespace).Patch(ctx, name, types.JSONPatchType, patch, metav1.PatchOptions{})
		return err
	}
	return rc.Patch(types.JSONPatchType).
		UseProtobufAsDefaultIfPreferred(true).
		Namespace(namespace).
		Resource("jobs").
		Name(name).
		VersionedParams(&metav1.PatchOptions{}, scheme.ParameterCodec).
		Body(patch).
		SetHeader("Accept", metadataAnswer).
		Do(ctx).
		Error()
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
	rc := restClientOf(r.client.BatchV1().RESTClient())
	if rc == nil {
		return r.client.BatchV1().CronJobs(cj.Namespace).UpdateStatus(ctx, cj, metav1.UpdateOptions{})
	}
	meta, err := answeredMetadata(rc.Put().
		Namespace(cj.Namespace).
		Resource("cronjobs").
		Name(cj.Name).
		SubResource("status").
		VersionedParams(&metav1.UpdateOptions{}, cronscheme.ParameterCodec).
		Body(cj).
		SetHeader("Accept", metadataAnswer).
		Do(ctx))
	if err != nil {
		return nil, err
	}
	// The status as stored: a JSON round trip, as the server's (it keeps
	// times in whole seconds, and drops what omitempty drops), so it
	// compares equal with the informer's echo of this write.
	var stored cronv1.CronJobStatus
	data, err := json.Marshal(&cj.Status)
	if err == nil {
		err = json.Unmarshal(data, &stored)
	}
	if err != nil {
		return nil, fmt.Errorf("the status of %s/%s as stored: %w", cj.Namespace, cj.Name, err)
	}
	return &cronv1.CronJob{TypeMeta: cj.TypeMeta, ObjectMeta: *meta, Spec: cj.Spec, Status: stored}, nil
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
