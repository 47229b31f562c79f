package main

import (
	"slices"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2/ktesting"
)

// A Job the controller never made for a run (a copy made by hand of one of
// its Jobs, under another name, the owner reference left out) is no record
// of the run it names: the 10:00 run, due, starts, and under its own name.
func TestCopiedJobUnderAnotherNameDoesNotSilenceTheDueRun(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	copied := newJob(topOfHour, running, holdingRecord, detached, func(j *batchv1.Job) {
		j.Name = "by-hand"
		j.UID = "uid-by-hand"
	})
	f := newFixture(t, at(5*time.Second))
	f.cronJob = newCronJob(lastScheduled(at(-time.Hour)))
	f.jobs = []*batchv1.Job{copied}
	c, _, _ := f.newController(ctx)
	if _, err := c.syncHandler(ctx, cache.MetaObjectToName(f.cronJob)); err != nil {
		t.Fatal(err)
	}
	if writes := describe(f.kubeclient.Actions(), true); !slices.Contains(writes, "create jobs default/"+jobName(topOfHour)) {
		t.Errorf("writes %q, events %q: the due 10:00 run did not start; a Job named %s, no run's Job, took its place", writes, f.events(), copied.Name)
	}
}
