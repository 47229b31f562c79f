package main

// The Job-shape benchmark (-job-shapes N): what one Job create costs the API
// server and etcd for what the Job carries, all created suspended as
// protobuf (as this controller and kube-controller-manager send them, 20 in
// flight), with a watch of Jobs over all namespaces open as a controller
// keeps one, so the watch echo of each create is paid too. It tells what
// stands between this controller's burst and the bare floor's
// (docs/benchmarks.md), item by item of what a Job of this controller
// carries:
//
//   - "the bare floor's Job": as the floor variant of the load runs creates
//     it, a name and a one-container pod template;
//   - "the built-in's Job": the same, owned by a batch/v1 CronJob
//     (controller, blockOwnerDeletion) and with the scheduled-timestamp
//     annotation, as kube-controller-manager's CronJob controller makes it;
//   - "this controller's Job, less the scheduled time in the pod": job.New's
//     Job without CRONJOB_SCHEDULED_TIME and the pod template's annotation
//     it reads from;
//   - "this controller's Job, less the run-record finalizer";
//   - "this controller's Job": job.New's, as the controller creates it.
//
// Shapes take turns, round by round (-repeats rounds), so each meets a
// store as full as the others (deleting the Jobs between measures left the
// server busier than its request counts show); medians are reported.
//
//	go run ./hack/loadbench -job-shapes 2000 -repeats 5

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	cronv1 "github.com/cronjob-controller/cronjob-controller/pkg/apis/batch/v1"
	"github.com/cronjob-controller/cronjob-controller/pkg/job"
)

// jobShape builds Job i of round r.
type jobShape struct {
	name string
	job  func(i, r int) *batchv1.Job
}

func jobShapes(n, rounds int) error {
	ctx := context.Background()
	p, err := startWritePlane(ctx)
	if err != nil {
		return err
	}
	defer p.stop()
	cluster, c, kube := p.cluster, p.cron, p.kube
	ns := "jobshapes"
	if err := p.withCRD(ctx, ns); err != nil {
		return err
	}
	// A controller's watch, so each create's echo is encoded and sent;
	// resumed where it was when the server closes it, as an informer's is.
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	jw, err := watchJobs(wctx, kube, "")
	if err != nil {
		return err
	}
	// A watch that ends before the measures do leaves later shapes without
	// the echo: the run says so and fails.
	watching := drain(jw, nil)
	defer watching.stop()

	template := batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{Suspend: ptr.To(true), Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
		RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}}}}
	// One owner of each kind: what a create costs does not depend on how
	// many Jobs an owner has.
	ours, err := c.BatchV1().CronJobs(ns).Create(ctx, &cronv1.CronJob{
		ObjectMeta: metav1.ObjectMeta{Name: "ours"},
		Spec:       cronv1.CronJobSpec{Schedule: "* * * * *", TimeZone: ptr.To("Etc/UTC"), JobTemplate: template},
	}, metav1.CreateOptions{})
	if err != nil {
		return err
	}
	builtin, err := kube.BatchV1().CronJobs(ns).Create(ctx, &batchv1.CronJob{
		ObjectMeta: metav1.ObjectMeta{Name: "builtin"},
		Spec:       batchv1.CronJobSpec{Schedule: "* * * * *", TimeZone: ptr.To("Etc/UTC"), Suspend: ptr.To(true), JobTemplate: template},
	}, metav1.CreateOptions{})
	if err != nil {
		return err
	}
	name := func(prefix string, i, r int) string { return fmt.Sprintf("%s-%d-%05d", prefix, r, i) }
	at := func(i int) time.Time { return firingAt(0).Add(time.Duration(i) * time.Minute) }
	controllers := func(prefix string, keepFinalizer, scheduledTimeInPod bool) func(i, r int) *batchv1.Job {
		return func(i, r int) *batchv1.Job {
			j := job.New(ours, at(i), time.UTC)
			j.Name = name(prefix, i, r)
			if !keepFinalizer {
				j.Finalizers = slices.DeleteFunc(j.Finalizers, func(f string) bool { return f == job.RunRecordFinalizer })
			}
			if !scheduledTimeInPod {
				delete(j.Spec.Template.Annotations, cronv1.ScheduledAtAnnotation)
				if len(j.Spec.Template.Annotations) == 0 {
					j.Spec.Template.Annotations = nil
				}
				for k := range j.Spec.Template.Spec.Containers {
					cs := &j.Spec.Template.Spec.Containers[k]
					cs.Env = slices.DeleteFunc(cs.Env, func(e corev1.EnvVar) bool { return e.Name == cronv1.ScheduledTimeEnv })
					if len(cs.Env) == 0 {
						cs.Env = nil
					}
				}
			}
			return j
		}
	}
	shapes := []jobShape{
		{"the bare floor's Job", func(i, r int) *batchv1.Job {
			return &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: name("bare", i, r)}, Spec: *template.Spec.DeepCopy()}
		}},
		{"the built-in's Job", func(i, r int) *batchv1.Job {
			return &batchv1.Job{ObjectMeta: metav1.ObjectMeta{
				Name:            name("builtin", i, r),
				Annotations:     map[string]string{batchv1.CronJobScheduledTimestampAnnotation: at(i).Format(time.RFC3339)},
				OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(builtin, batchv1.SchemeGroupVersion.WithKind("CronJob"))},
			}, Spec: *template.Spec.DeepCopy()}
		}},
		{"this controller's Job, less the scheduled time in the pod", controllers("plain", true, false)},
		{"this controller's Job, less the run-record finalizer", controllers("nofin", false, true)},
		{"this controller's Job", controllers("ours", true, true)},
	}
	names := make([]string, len(shapes))
	for k, s := range shapes {
		names[k] = s.name
	}
	perShape, err := inTurns(ctx, cluster, names, rounds, n, "create", func(k, r int) error {
		// As the floor and the controller's 20 workers send them.
		return parallelN(n, floorConcurrency, func(i int) error {
			_, err := kube.BatchV1().Jobs(ns).Create(ctx, shapes[k].job(i, r), metav1.CreateOptions{})
			return err
		})
	})
	if err != nil {
		return err
	}
	if !watching.ok() {
		return errors.New("the Job watch ended during the measures")
	}
	printMedians(os.Stdout, "Job create (protobuf, suspended, a Job watch open)", fmt.Sprintf("API server + etcd CPU per create, ms (median of %d rounds of %d)", rounds, n), names, perShape)
	return nil
}
