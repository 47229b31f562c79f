package main

// The status-shape benchmark (-status-shapes N): what one firing's status
// write costs the API server for what it carries, all sent as a PUT
// (UpdateStatus; of the CRD, as the controller sends it, answered with the
// metadata alone), with a watch open on each kind as a controller keeps one,
// so the watch echo of each write is paid too:
//
//   - "this controller's status": a CronJob of this project's CRD with the
//     status a firing writes: lastScheduleTime, the Job in status.active,
//     activeCount, nextScheduleTime, and the conditions ScheduleValid,
//     JobTemplateValid and LastRunStarted (the last one's message and time
//     moving);
//   - "this controller's status, a run history of 1", "of 5" and "a full
//     run history": the same, with status.recentRuns holding the firing's
//     run (running) and none, four or nine before it (succeeded, with
//     lastSuccessfulTime), as a CronJob firing for the first time, the
//     sixth time, or once it has run ten times (spec.runHistoryLimit's
//     default);
//   - "the built-in's fields on the CRD": the same CRD, only
//     lastScheduleTime and status.active written, as the built-in writes;
//   - "the built-in's kind": a batch/v1 CronJob, its status (the same two
//     fields) sent as protobuf, as kube-controller-manager sends it.
//
// Shapes take turns, round by round (-repeats rounds); medians are reported.
//
//	go run ./hack/loadbench -status-shapes 1000 -repeats 3

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/utils/ptr"

	cronv1 "github.com/cronjob-controller/cronjob-controller/pkg/apis/batch/v1"
	"github.com/cronjob-controller/cronjob-controller/pkg/control"
)

// shape writes the status of object i for firing r.
type shape struct {
	name  string
	setup func(ctx context.Context, n int) error
	write func(ctx context.Context, i, r int) error
}

func statusShapes(n, rounds int) error {
	ctx := context.Background()
	p, err := startWritePlane(ctx)
	if err != nil {
		return err
	}
	defer p.stop()
	cluster, cfg, c, kube := p.cluster, p.cfg, p.cron, p.kube
	ns := "statusshapes"
	if err := p.withCRD(ctx, ns); err != nil {
		return err
	}
	// A controller's watches, so each write's echo is encoded and sent.
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	crw, err := c.BatchV1().CronJobs(ns).Watch(wctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	bw, err := kube.BatchV1().CronJobs(ns).Watch(wctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	go func() {
		for range crw.ResultChan() {
		}
	}()
	go func() {
		for range bw.ResultChan() {
		}
	}()

	template := batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
		RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}}}}
	// The CRD's writes go as the controller sends them: a PUT answered with
	// the metadata alone.
	cronJobs := control.NewCronJobs(c)
	ours := make([]*cronv1.CronJob, n)
	hist := make([]*cronv1.CronJob, n)
	half := make([]*cronv1.CronJob, n)
	first := make([]*cronv1.CronJob, n)
	slim := make([]*cronv1.CronJob, n)
	builtin := make([]*batchv1.CronJob, n)
	createCRD := func(into []*cronv1.CronJob, prefix string) func(context.Context, int) error {
		return func(ctx context.Context, n int) error {
			return parallel(n, func(i int) error {
				cj, err := c.BatchV1().CronJobs(ns).Create(ctx, &cronv1.CronJob{
					ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-%05d", prefix, i)},
					Spec:       cronv1.CronJobSpec{Schedule: "* * * * *", TimeZone: ptr.To("Etc/UTC"), JobTemplate: template},
				}, metav1.CreateOptions{})
				into[i] = cj
				return err
			})
		}
	}
	withHistory := func(name string, into []*cronv1.CronJob, prefix string, runs int) shape {
		return shape{name, createCRD(into, prefix), func(ctx context.Context, i, r int) error {
			cj := into[i].DeepCopy()
			fullStatus(cj, r)
			runHistory(cj, r, runs)
			got, err := cronJobs.UpdateStatus(ctx, cj)
			if err == nil {
				into[i] = got
			}
			return err
		}}
	}
	shapes := []shape{
		{"this controller's status", createCRD(ours, "ours"), func(ctx context.Context, i, r int) error {
			cj := ours[i].DeepCopy()
			fullStatus(cj, r)
			got, err := cronJobs.UpdateStatus(ctx, cj)
			if err == nil {
				ours[i] = got
			}
			return err
		}},
		withHistory("this controller's status, a run history of 1 (a first firing)", first, "first", 1),
		withHistory("this controller's status, a run history of 5", half, "half", 5),
		withHistory("this controller's status, a full run history", hist, "hist", cronv1.DefaultRunHistoryLimit),
		{"the built-in's fields on the CRD", createCRD(slim, "slim"), func(ctx context.Context, i, r int) error {
			cj := slim[i].DeepCopy()
			at := firingAt(r)
			cj.Status.LastScheduleTime = &metav1.Time{Time: at}
			cj.Status.Active = []corev1.ObjectReference{jobRef(ns, cj.Name, at, r)}
			got, err := cronJobs.UpdateStatus(ctx, cj)
			if err == nil {
				slim[i] = got
			}
			return err
		}},
		{"the built-in's kind, protobuf", func(ctx context.Context, n int) error {
			return parallel(n, func(i int) error {
				cj, err := kube.BatchV1().CronJobs(ns).Create(ctx, &batchv1.CronJob{
					ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("builtin-%05d", i)},
					Spec: batchv1.CronJobSpec{Schedule: "* * * * *", TimeZone: ptr.To("Etc/UTC"), Suspend: ptr.To(true),
						JobTemplate: template},
				}, metav1.CreateOptions{})
				builtin[i] = cj
				return err
			})
		}, func(ctx context.Context, i, r int) error {
			cj := builtin[i].DeepCopy()
			at := firingAt(r)
			cj.Status.LastScheduleTime = &metav1.Time{Time: at}
			cj.Status.Active = []corev1.ObjectReference{jobRef(ns, cj.Name, at, r)}
			got, err := kube.BatchV1().CronJobs(ns).UpdateStatus(ctx, cj, metav1.UpdateOptions{})
			if err == nil {
				builtin[i] = got
			}
			return err
		}},
	}
	if strings.Contains(apiserverFeatureGates, "CBORServingAndStorage=true") {
		// The same status as this controller's, sent and answered as CBOR
		// (KEP-4222, alpha in 1.36: the gate on the server, and
		// KUBE_FEATURE_ClientsAllowCBOR=true in this process).
		ccfg := *cfg
		ccfg.ContentType = "application/cbor"
		ccfg.AcceptContentTypes = "application/cbor"
		dyn, err := dynamic.NewForConfig(&ccfg)
		if err != nil {
			return err
		}
		res := dyn.Resource(cronv1.SchemeGroupVersion.WithResource("cronjobs")).Namespace(ns)
		cbor := make([]*cronv1.CronJob, n)
		shapes = append(shapes, shape{"this controller's status, CBOR", createCRD(cbor, "cbor"), func(ctx context.Context, i, r int) error {
			cj := cbor[i].DeepCopy()
			fullStatus(cj, r)
			obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(cj)
			if err != nil {
				return err
			}
			u := &unstructured.Unstructured{Object: obj}
			u.SetGroupVersionKind(cronv1.SchemeGroupVersion.WithKind("CronJob"))
			u, err = res.UpdateStatus(ctx, u, metav1.UpdateOptions{})
			if err != nil {
				return err
			}
			got := &cronv1.CronJob{}
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, got); err != nil {
				return err
			}
			cbor[i] = got
			return nil
		}})
	}
	for _, s := range shapes {
		if err := s.setup(ctx, n); err != nil {
			return fmt.Errorf("%s: %w", s.name, err)
		}
	}
	names := make([]string, len(shapes))
	for k, s := range shapes {
		names[k] = s.name
	}
	perShape, err := inTurns(ctx, cluster, names, rounds, n, "write", func(k, r int) error {
		var profiling sync.WaitGroup
		if profileAPIServer {
			file := filepath.Join(profileDir, fmt.Sprintf("apiserver-shape%d-round%d.pb.gz", k, r))
			profiling.Go(func() {
				data, err := kube.CoreV1().RESTClient().Get().AbsPath("/debug/pprof/profile").
					Param("seconds", strconv.Itoa(profileSeconds)).Timeout(time.Duration(profileSeconds+30) * time.Second).DoRaw(ctx)
				if err == nil {
					err = os.WriteFile(file, data, 0o644)
				}
				if err != nil {
					fmt.Fprintln(os.Stderr, "loadbench: API server profile:", err)
				}
			})
		}
		defer profiling.Wait()
		return parallel(n, func(i int) error { return shapes[k].write(ctx, i, r+1) })
	})
	if err != nil {
		return err
	}
	printMedians(os.Stdout, "status write (a PUT, one watch open)", fmt.Sprintf("API server + etcd CPU per write, ms (median of %d rounds of %d)", rounds, n), names, perShape)
	return nil
}

// fullStatus sets the status this controller writes at firing r of cj.
func fullStatus(cj *cronv1.CronJob, r int) {
	at := firingAt(r)
	st := &cj.Status
	st.LastScheduleTime = &metav1.Time{Time: at}
	st.NextScheduleTime = &metav1.Time{Time: at.Add(time.Minute)}
	st.Active = []corev1.ObjectReference{jobRef(cj.Namespace, cj.Name, at, r)}
	st.ActiveCount = 1
	st.ObservedGeneration = cj.Generation
	st.ResolvedSchedule = cj.Spec.Schedule
	first := metav1.NewTime(firingAt(0))
	st.Conditions = []metav1.Condition{
		{Type: "ScheduleValid", Status: metav1.ConditionTrue, Reason: "Valid", LastTransitionTime: first, ObservedGeneration: cj.Generation},
		{Type: "JobTemplateValid", Status: metav1.ConditionTrue, Reason: "JobCreated", LastTransitionTime: first, ObservedGeneration: cj.Generation},
		{Type: cronv1.ConditionLastRunStarted, Status: metav1.ConditionTrue, Reason: "Started", LastTransitionTime: metav1.NewTime(at),
			Message: "Job " + st.Active[0].Name + " is the run of " + at.Format(time.RFC3339), ObservedGeneration: cj.Generation},
	}
}

// runHistory gives cj the run history of firing r, runs long: the
// firing's run running and those before it succeeded, as the controller
// keeps them (spec.runHistoryLimit's default is 10), and, after a run that
// succeeded, lastSuccessfulTime.
func runHistory(cj *cronv1.CronJob, r, runs int) {
	st := &cj.Status
	st.RecentRuns = nil
	for k := range runs {
		at := firingAt(r - k)
		st.RecentRuns = append(st.RecentRuns, scheduledRun(jobRef(cj.Namespace, cj.Name, at, r-k).Name, at, k > 0))
	}
	st.LastSuccessfulTime = nil
	if runs > 1 {
		st.LastSuccessfulTime = st.RecentRuns[1].CompletionTime
	}
}

// scheduledRun is the run-history entry of the scheduled run of at, its Job
// job created a second after; finished, it succeeded 30 s after at, else it
// is running.
func scheduledRun(job string, at time.Time, finished bool) cronv1.RunRecord {
	run := cronv1.RunRecord{JobName: job, Trigger: cronv1.TriggerScheduled,
		ScheduledTime: &metav1.Time{Time: at}, StartTime: &metav1.Time{Time: at.Add(time.Second)}, Outcome: cronv1.OutcomeRunning}
	if finished {
		run.Outcome, run.CompletionTime = cronv1.OutcomeSucceeded, &metav1.Time{Time: at.Add(30 * time.Second)}
	}
	return run
}

func firingAt(r int) time.Time { return time.Date(2026, 1, 1, 0, r, 0, 0, time.UTC) }

func jobRef(namespace, name string, at time.Time, r int) corev1.ObjectReference {
	job := fmt.Sprintf("%s-%d", name, at.Unix()/60)
	return corev1.ObjectReference{Kind: "Job", Namespace: namespace, Name: job, UID: types.UID(job),
		APIVersion: "batch/v1", ResourceVersion: strconv.Itoa(r + 1)}
}
