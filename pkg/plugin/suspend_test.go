package plugin

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	k8stesting "k8s.io/client-go/testing"
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

// pausedAfter gives cj a failure policy that has paused it after count
// failed runs.
func pausedAfter(count int32) func(*cronv1.CronJob) {
	return func(cj *cronv1.CronJob) {
		cj.Spec.FailurePolicy = &cronv1.FailurePolicy{PauseAfter: count}
		cj.Status.FailureStreak = &cronv1.FailureStreak{Count: count, LastFailedJob: cj.Name + "-1", PausedAt: &metav1.Time{Time: t0.Add(-time.Hour)}, Pauses: 1}
	}
}

func TestResumeEndsAPauseAfterFailuresInTheSamePatch(t *testing.T) {
	value := t0.Format(time.RFC3339Nano)
	ended := func(what string) string {
		return Resource + "/nightly " + what + ": its pause after 3 failed runs in a row ends (annotated " +
			cronv1.ResumeAnnotation + "=%s); the controller records it in status.failureStreak.lastResume\n"
	}
	for _, tc := range []struct {
		name          string
		opts          []func(*cronv1.CronJob)
		wantPatches   int
		wantSuspend   bool
		wantValue     string // the resume annotation after the command
		wantOut       string // %s is the value written
		wantNoVersion bool   // the patch need not carry the resourceVersion
	}{
		{name: "suspended", opts: []func(*cronv1.CronJob){suspended},
			wantPatches: 1, wantOut: Resource + "/nightly resumed\n", wantNoVersion: true},
		{name: "paused", opts: []func(*cronv1.CronJob){pausedAfter(3)},
			wantPatches: 1, wantValue: value, wantOut: ended("resumed")},
		{name: "paused, its trial running", opts: []func(*cronv1.CronJob){pausedAfter(3), func(cj *cronv1.CronJob) {
			cj.Status.FailureStreak.TrialJob = "nightly-2"
			cj.Status.FailureStreak.ResumeAt = &metav1.Time{Time: t0.Add(-time.Minute)}
		}}, wantPatches: 1, wantValue: value, wantOut: ended("resumed")},
		{name: "suspended and paused", opts: []func(*cronv1.CronJob){suspended, pausedAfter(3)},
			wantPatches: 1, wantValue: value, wantOut: ended("resumed (spec.suspend cleared)")},
		// The value handled last, or one written in the same clock tick
		// and not handled yet, would not resume again.
		{name: "paused, this value handled before", opts: []func(*cronv1.CronJob){pausedAfter(3), func(cj *cronv1.CronJob) {
			cj.Status.FailureStreak.LastResume = value
		}}, wantPatches: 1, wantValue: value + "-2", wantOut: ended("resumed")},
		{name: "paused, this value pending", opts: []func(*cronv1.CronJob){pausedAfter(3), func(cj *cronv1.CronJob) {
			cj.Annotations = map[string]string{cronv1.ResumeAnnotation: value}
		}}, wantPatches: 1, wantValue: value + "-2", wantOut: ended("resumed")},
		// Failures below the limit are no pause: the streak is left as
		// it is.
		{name: "failing, not paused", opts: []func(*cronv1.CronJob){func(cj *cronv1.CronJob) {
			cj.Spec.FailurePolicy = &cronv1.FailurePolicy{PauseAfter: 3}
			cj.Status.FailureStreak = &cronv1.FailureStreak{Count: 2, LastFailedJob: "nightly-1"}
		}}, wantOut: Resource + "/nightly neither suspended nor paused: unchanged\n"},
		{name: "neither", wantOut: Resource + "/nightly not suspended: unchanged\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakes([]*cronv1.CronJob{newCronJob("nightly", "0 2 * * *", tc.opts...)})
			var bodies []map[string]any
			f.cron.PrependReactor("patch", "cronjobs", func(a k8stesting.Action) (bool, runtime.Object, error) {
				var body map[string]any
				if err := json.Unmarshal(a.(k8stesting.PatchAction).GetPatch(), &body); err != nil {
					t.Fatal(err)
				}
				bodies = append(bodies, body)
				return false, nil, nil
			})
			var out bytes.Buffer
			if err := Resume(context.Background(), f.clients(), &out, "nightly"); err != nil {
				t.Fatal(err)
			}
			got := f.cronJob(t, "nightly")
			if s := ptr.Deref(got.Spec.Suspend, false); s != tc.wantSuspend {
				t.Errorf("spec.suspend %v, want %v", s, tc.wantSuspend)
			}
			if v := got.Annotations[cronv1.ResumeAnnotation]; v != tc.wantValue {
				t.Errorf("resume annotation %q, want %q", v, tc.wantValue)
			}
			if n := f.patches(); n != tc.wantPatches {
				t.Errorf("%d patches, want %d", n, tc.wantPatches)
			}
			if want := strings.ReplaceAll(tc.wantOut, "%s", tc.wantValue); out.String() != want {
				t.Errorf("printed %q, want %q", out.String(), want)
			}
			if tc.wantPatches > 0 && !tc.wantNoVersion {
				meta, _ := bodies[0]["metadata"].(map[string]any)
				if meta["resourceVersion"] != "10" {
					t.Errorf("patch %v does not carry the resourceVersion read", bodies[0])
				}
			}
		})
	}
}

// The controller may end the pause between the read and the patch (a
// run-now succeeded): the patch conflicts, the CronJob is read again, and
// a resume no longer needed is not written, since a value handled when
// not paused would start the streak afresh.
func TestResumeRereadsAPauseThatEndedMeanwhile(t *testing.T) {
	f := newFakes([]*cronv1.CronJob{newCronJob("nightly", "0 2 * * *", pausedAfter(3))})
	conflicts := 1
	f.cron.PrependReactor("patch", "cronjobs", func(k8stesting.Action) (bool, runtime.Object, error) {
		if conflicts == 0 {
			return false, nil, nil
		}
		conflicts--
		// The tracker, not the clientset: the fake holds its lock while a
		// reactor runs.
		gvr := cronv1.SchemeGroupVersion.WithResource("cronjobs")
		obj, err := f.cron.Tracker().Get(gvr, ns, "nightly")
		if err != nil {
			t.Fatal(err)
		}
		cj := obj.(*cronv1.CronJob).DeepCopy()
		cj.Status.FailureStreak = &cronv1.FailureStreak{}
		cj.ResourceVersion = "11"
		if err := f.cron.Tracker().Update(gvr, cj, ns); err != nil {
			t.Fatal(err)
		}
		return true, nil, apierrors.NewConflict(schema.GroupResource{Group: cronv1.GroupName, Resource: "cronjobs"}, "nightly", nil)
	})
	var out bytes.Buffer
	if err := Resume(context.Background(), f.clients(), &out, "nightly"); err != nil {
		t.Fatal(err)
	}
	if v, ok := f.cronJob(t, "nightly").Annotations[cronv1.ResumeAnnotation]; ok {
		t.Errorf("resume annotation %q written after the pause ended", v)
	}
	if want := Resource + "/nightly neither suspended nor paused: unchanged\n"; out.String() != want {
		t.Errorf("printed %q, want %q", out.String(), want)
	}
}

func suspended(cj *cronv1.CronJob) { cj.Spec.Suspend = ptr.To(true) }
