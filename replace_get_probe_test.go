package main

import (
	"slices"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	core "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2/ktesting"

	cronv1 "github.com/cronjob-controller/cronjob-controller/pkg/apis/batch/v1"
)

// Replace's live read of the running Job fails once: the 10:00 run waits
// (the running Job is neither deleted unread nor run beside), and the
// retry replaces it and starts 10:00 once.
func TestReplaceWhoseLiveReadFailsStartsTheRunOnceOnRetry(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := newFixture(t, at(5*time.Second))
	old := withRunningJob(f, cronv1.ReplaceConcurrent)
	c, _, _ := f.newController(ctx)
	fail := true
	f.kubeclient.PrependReactor("get", "jobs", func(core.Action) (bool, runtime.Object, error) {
		if fail {
			fail = false
			return true, nil, apierrors.NewServiceUnavailable("down")
		}
		return false, nil, nil
	})
	key := cache.MetaObjectToName(f.cronJob)
	if _, err := c.syncHandler(ctx, key); err == nil {
		t.Errorf("first sync: no error after the live read failed")
	}
	first := describe(f.kubeclient.Actions(), true)
	if slices.ContainsFunc(first, func(w string) bool { return strings.HasPrefix(w, "create jobs") || strings.HasPrefix(w, "delete jobs") }) {
		t.Errorf("first sync %q: acted on a Job it could not read", first)
	}
	f.kubeclient.ClearActions()
	if _, err := c.syncHandler(ctx, key); err != nil {
		t.Fatal(err)
	}
	got := describe(f.kubeclient.Actions(), true)
	if !slices.Contains(got, "delete jobs default/"+old.Name) || !slices.Contains(got, "create jobs default/"+jobName(topOfHour)) {
		t.Errorf("retry %q: want %s replaced by the 10:00 run", got, old.Name)
	}
}
