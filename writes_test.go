package main

// Tests of the API writes a firing costs, as the README and docs state
// them.

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2/ktesting"
)

// The README's claim: two writes per firing (create, status), as the
// built-in's, also when the status write is deferred behind a busy queue:
// the run-record finalizer is released once the Job finishes, not at the
// status write that records its run.
func TestTwoWritesPerFiringWhenTheStatusIsDeferred(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := newFixture(t, at(time.Second))
	f.cronJob = newCronJob()
	c, kubeFactory, cronFactory := f.newController(ctx)
	key := cache.MetaObjectToName(f.cronJob)
	other := cache.ObjectName{Namespace: "default", Name: "other"}
	c.queue.Add(other) // something waits: the write is deferred
	if _, err := c.syncHandler(ctx, key); err != nil {
		t.Fatal(err)
	}
	// the informers catch up with the created Job
	for _, a := range f.kubeclient.Actions() {
		_ = a
	}
	if j, err := f.kubeclient.BatchV1().Jobs("default").Get(ctx, jobName(topOfHour), metav1.GetOptions{}); err == nil {
		cacheJob(t, kubeFactory, j)
	}
	_ = cronFactory
	for c.queue.Len() > 0 {
		k, _ := c.queue.Get()
		c.queue.Done(k)
		c.queue.Forget(k)
	}
	if _, err := c.syncHandler(ctx, key); err != nil {
		t.Fatal(err)
	}
	got := describe(append(f.kubeclient.Actions(), f.client.Actions()...), true)
	if len(got) != 2 {
		t.Errorf("writes %q, want 2 (create, status)", got)
	}
}

// README/docs: per firing, two API writes when it starts (the Job create,
// the status write). Counted over a firing's whole life, the Job's
// completion makes a second status write (as the built-in controller does,
// whose firing costs three over its life) and the finalizer's release
// after it: four writes, as documented.
func TestFourWritesOverAFiringsLife(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := newFixture(t, at(time.Second))
	f.cronJob = newCronJob(lastScheduled(at(-time.Hour)))
	c, kubeFactory, cronFactory := f.newController(ctx)
	key := cache.MetaObjectToName(f.cronJob)
	if _, err := c.syncHandler(ctx, key); err != nil {
		t.Fatal(err)
	}
	j, err := f.kubeclient.BatchV1().Jobs("default").Get(ctx, jobName(topOfHour), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	done := newJob(topOfHour, succeeded)
	j.Status = done.Status
	j.ResourceVersion = "7"
	cacheJob(t, kubeFactory, j)
	if w := f.writtenStatus(); w != nil {
		w = w.DeepCopy()
		w.ResourceVersion = "8"
		cacheCronJob(t, cronFactory, w)
	}
	f.clock.Step(10 * time.Second)
	if _, err := c.syncHandler(ctx, key); err != nil {
		t.Fatal(err)
	}
	got := describe(append(f.kubeclient.Actions(), f.client.Actions()...), true)
	t.Logf("writes over the firing: %q", got)
	// The start costs two (create, status); the completion costs the
	// status write the built-in makes too, and the release.
	if len(got) != 4 {
		t.Errorf("%d writes over a firing's life, documented as 4: %q", len(got), got)
	}
}

// A Job that finishes before its start's status write (deferred behind a
// busy queue) is written down in one status write, not two: the deferred
// status and the finish go to the API server together.
func TestJobFinishedBeforeItsDeferredStatusCostsOneStatusWrite(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := newFixture(t, at(time.Second))
	f.cronJob = newCronJob()
	c, kubeFactory, _ := f.newController(ctx)
	key := cache.MetaObjectToName(f.cronJob)
	c.queue.Add(cache.ObjectName{Namespace: "default", Name: "other"}) // something waits: the write is deferred
	if _, err := c.syncHandler(ctx, key); err != nil {
		t.Fatal(err)
	}
	if w := f.writtenStatus(); w != nil {
		t.Fatalf("the start's status was written at once (%+v), want it deferred behind the queue", w.Status)
	}
	// The Job runs and completes before the queue drains.
	j, err := f.kubeclient.BatchV1().Jobs("default").Get(ctx, jobName(topOfHour), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	done := newJob(topOfHour, succeeded)
	j.Status, j.ResourceVersion = done.Status, "7"
	cacheJob(t, kubeFactory, j)
	drainQueue(c)
	f.clock.Step(10 * time.Second)
	if _, err := c.syncHandler(ctx, key); err != nil {
		t.Fatal(err)
	}
	statusWrites := f.statusWrites()
	w := f.writtenStatus()
	if statusWrites != 1 || w == nil || len(w.Status.Active) != 0 || w.Status.LastSuccessfulTime == nil {
		t.Errorf("%d status writes, the last %+v; want one, recording the run started and finished", statusWrites, w)
	}
}
