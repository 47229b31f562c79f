package plugin

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"k8s.io/utils/ptr"

	cronv1 "github.com/cronjob-controller/cronjob-controller/pkg/apis/batch/v1"
)

func TestSuspendAndResumeFlipSpecSuspend(t *testing.T) {
	f := newFakes([]*cronv1.CronJob{newCronJob("nightly", "0 2 * * *")})
	ctx := context.Background()
	steps := []struct {
		suspend     bool
		wantPatches int
		wantOut     string
	}{
		{true, 1, Resource + "/nightly suspended\n"},
		{true, 1, Resource + "/nightly already suspended: unchanged\n"},
		{false, 2, Resource + "/nightly resumed\n"},
		{false, 2, Resource + "/nightly not suspended: unchanged\n"},
	}
	for i, s := range steps {
		var out bytes.Buffer
		if err := Suspend(ctx, f.clients(), &out, "nightly", s.suspend); err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		if got := ptr.Deref(f.cronJob(t, "nightly").Spec.Suspend, false); got != s.suspend {
			t.Errorf("step %d: spec.suspend %v, want %v", i, got, s.suspend)
		}
		if got := f.patches(); got != s.wantPatches {
			t.Errorf("step %d: %d patches in all, want %d", i, got, s.wantPatches)
		}
		if out.String() != s.wantOut {
			t.Errorf("step %d: printed %q, want %q", i, out.String(), s.wantOut)
		}
	}
}

func TestSuspendLeavesTheRestOfTheSpec(t *testing.T) {
	cj := newCronJob("nightly", "0 2 * * *", func(cj *cronv1.CronJob) {
		cj.Spec.TimeZone = ptr.To("Europe/Berlin")
		cj.Spec.ConcurrencyPolicy = cronv1.ForbidConcurrent
	})
	f := newFakes([]*cronv1.CronJob{cj})
	if err := Suspend(context.Background(), f.clients(), &bytes.Buffer{}, "nightly", true); err != nil {
		t.Fatal(err)
	}
	got := f.cronJob(t, "nightly").Spec
	if got.Schedule != "0 2 * * *" || ptr.Deref(got.TimeZone, "") != "Europe/Berlin" || got.ConcurrencyPolicy != cronv1.ForbidConcurrent {
		t.Errorf("spec after suspend: %+v", got)
	}
}

func TestSuspendMissingCronJob(t *testing.T) {
	f := newFakes(nil)
	err := Suspend(context.Background(), f.clients(), &bytes.Buffer{}, "nope", true)
	if err == nil || !strings.Contains(err.Error(), "not found") {
		t.Fatalf("error %v, want not found", err)
	}
}
