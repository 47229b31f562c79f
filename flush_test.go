package main

import (
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2/ktesting"
	"k8s.io/utils/ptr"

	cronv1 "github.com/cronjob-controller/cronjob-controller/pkg/apis/batch/v1"
)

// A clean stop (a rolling update) writes no deferred decision that a spec
// edit overtook as it was: a sync at 10:00:30 starts a run-now Job in a
// burst and defers its status, having counted the 10:00 run late (deadline
// 10 s); the user raises the deadline to 600 s before the shutdown flush.
// The flush judges that decision again under the new spec, as a sync does,
// so after the restart the 10:00 run starts.
func TestShutdownFlushRejudgesADecisionAnEditOvertook(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := newFixture(t, at(30*time.Second))
	f.cronJob = newCronJob(lastScheduled(at(-time.Hour)), deadline(10), func(cj *cronv1.CronJob) {
		cj.Annotations = map[string]string{cronv1.RunNowAnnotation: "one"}
	})
	c, _, cronFactory := f.newController(ctx)
	key := cache.MetaObjectToName(f.cronJob)
	c.queue.Add(cache.ObjectName{Namespace: "default", Name: "other"})
	if _, err := c.syncHandler(ctx, key); err != nil {
		t.Fatal(err)
	}
	if f.writtenStatus() != nil {
		t.Fatal("status written at once; the case tests nothing")
	}

	edited := f.cronJob.DeepCopy()
	edited.Generation = 2
	edited.Spec.StartingDeadlineSeconds = ptr.To[int64](600)
	cacheCronJob(t, cronFactory, edited)
	c.flushDeferred(ctx)
	written := f.writtenStatus()
	if written == nil {
		t.Fatal("the flush wrote nothing")
	}
	if n := missedCount(written.Status, cronv1.MissedDeadlineExceeded); n != 0 {
		t.Errorf("flushed status counts %d runs DeadlineExceeded, judged under the old deadline", n)
	}
	if written.Status.LastRunNow != "one" {
		t.Errorf("flushed status lastRunNow %q, want the run-now request handled", written.Status.LastRunNow)
	}

	// The restart: a new controller on the stored status and the Jobs.
	jobs, err := f.kubeclient.BatchV1().Jobs("default").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	g := newFixture(t, at(31*time.Second))
	g.cronJob = edited.DeepCopy()
	g.cronJob.Status = written.Status
	for i := range jobs.Items {
		g.jobs = append(g.jobs, &jobs.Items[i])
	}
	restarted, _, _ := g.newController(ctx)
	if _, err := restarted.syncHandler(ctx, key); err != nil {
		t.Fatal(err)
	}
	created := describe(g.kubeclient.Actions(), true)
	if !slices.Contains(created, "create jobs default/"+jobName(topOfHour)) || slices.ContainsFunc(created, func(s string) bool { return s == "create jobs default/"+jobs.Items[0].Name }) {
		t.Errorf("after the restart the controller did %q, want the 10:00 run started and the run-now Job not again", created)
	}
}
