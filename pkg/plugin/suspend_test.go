package plugin

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
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

// suspend --for sets spec.suspendUntil to now plus the duration, rounded
// up to the second it is stored in, leaves spec.suspend alone, and names
// the run after it, which is the controller's next run.
func TestSuspendForSetsSuspendUntil(t *testing.T) {
	f := newFakes([]*cronv1.CronJob{newCronJob("hourly", "0 * * * *", inZone("UTC"))})
	f.clock.SetTime(t0.Add(300 * time.Millisecond))
	var out bytes.Buffer
	if err := SuspendUntil(context.Background(), f.clients(), &out, "hourly", 2*time.Hour, ""); err != nil {
		t.Fatal(err)
	}
	got := f.cronJob(t, "hourly")
	want := utcAt(15, 4).Add(31 * time.Second)
	if got.Spec.SuspendUntil == nil || !got.Spec.SuspendUntil.Time.Equal(want) || got.Spec.Suspend != nil {
		t.Fatalf("spec.suspendUntil %v, spec.suspend %v; want %v and spec.suspend untouched", got.Spec.SuspendUntil, got.Spec.Suspend, want)
	}
	wantOut := Resource + "/hourly suspended until Mon 2026-11-23 15:04:31 UTC (2026-11-23T15:04:31Z) by spec.suspendUntil: runs due before it do not start " +
		"(status.missedRuns counts them under SuspendedUntil), and then it schedules by itself\n" +
		"next run: Mon 2026-11-23 16:00:00 UTC (2026-11-23T16:00:00Z)\n"
	if out.String() != wantOut {
		t.Errorf("printed\n%s\nwant\n%s", out.String(), wantOut)
	}
	plan := decide(got, f.clock.Now())
	if next := plan.Status.NextScheduleTime; next == nil || !next.Time.Equal(utcAt(16, 0)) {
		t.Errorf("the controller's next run is %v, want 16:00", next)
	}
	if reason := readyReason(plan.Status.Conditions); reason != "SuspendedUntil" {
		t.Errorf("the controller's Ready reason is %q, want SuspendedUntil", reason)
	}
}

func readyReason(conds []metav1.Condition) string {
	for _, c := range conds {
		if c.Type == cronv1.ConditionReady {
			return c.Reason
		}
	}
	return ""
}

// --until takes RFC 3339 with any offset, or a wall time or a date in the
// CronJob's zone.
func TestSuspendUntilReadsRFC3339AndTheCronJobsZone(t *testing.T) {
	for _, tc := range []struct {
		until string
		want  time.Time
	}{
		{"2026-11-24T09:00:00+01:00", time.Date(2026, 11, 24, 8, 0, 0, 0, time.UTC)},
		{"2026-11-24 09:00", time.Date(2026, 11, 24, 8, 0, 0, 0, time.UTC)},
		{"2026-11-24T09:00:30", time.Date(2026, 11, 24, 8, 0, 30, 0, time.UTC)},
		{"2026-11-24", time.Date(2026, 11, 23, 23, 0, 0, 0, time.UTC)},
	} {
		f := newFakes([]*cronv1.CronJob{newCronJob("morning", "0 9 * * *", inZone("Europe/Berlin"))})
		var out bytes.Buffer
		if err := SuspendUntil(context.Background(), f.clients(), &out, "morning", 0, tc.until); err != nil {
			t.Fatalf("--until %s: %v", tc.until, err)
		}
		if got := f.cronJob(t, "morning").Spec.SuspendUntil; got == nil || !got.Time.Equal(tc.want) {
			t.Errorf("--until %s: spec.suspendUntil %v, want %v", tc.until, got, tc.want)
		}
	}
}

// A time past, or more than 366 days ahead, is refused in one line, and
// nothing is written.
func TestSuspendUntilRefusesAPastTime(t *testing.T) {
	for _, tc := range []struct {
		forDuration time.Duration
		until, want string
	}{
		{0, "2026-11-23T12:00:00Z", "--until 2026-11-23T12:00:00Z has passed: it is now 2026-11-23T13:04:30Z"},
		{0, "2026-11-23 13:04:30", "--until 2026-11-23T13:04:30Z has passed: it is now 2026-11-23T13:04:30Z"},
		{0, "2027-11-25T00:00:00Z", "--until 2027-11-25T00:00:00Z is more than 366 days ahead; for longer, kubectl cronjob suspend NAME sets spec.suspend"},
		{-time.Hour, "", "--for must be more than 0 and at most 8784h (366 days), not -1h0m0s"},
		{MaxAhead + time.Second, "", "--for must be more than 0 and at most 8784h (366 days), not 8784h0m1s"},
	} {
		f := newFakes([]*cronv1.CronJob{newCronJob("hourly", "0 * * * *", inZone("UTC"))})
		err := SuspendUntil(context.Background(), f.clients(), io.Discard, "hourly", tc.forDuration, tc.until)
		if err == nil || err.Error() != tc.want {
			t.Errorf("--for %v --until %q: error %v, want %q", tc.forDuration, tc.until, err, tc.want)
		}
		if n := f.patches(); n != 0 {
			t.Errorf("--for %v --until %q: %d patches", tc.forDuration, tc.until, n)
		}
	}
}

// With spec.suspend set too, the suspension's end starts nothing: the
// plugin says so.
func TestSuspendForWhileSuspendedSaysSpecSuspendStillHolds(t *testing.T) {
	f := newFakes([]*cronv1.CronJob{newCronJob("hourly", "0 * * * *", inZone("UTC"), suspended)})
	var out bytes.Buffer
	if err := SuspendUntil(context.Background(), f.clients(), &out, "hourly", time.Hour, ""); err != nil {
		t.Fatal(err)
	}
	if !ptr.Deref(f.cronJob(t, "hourly").Spec.Suspend, false) {
		t.Error("spec.suspend cleared")
	}
	if want := "next run: none while spec.suspend is set (kubectl cronjob resume hourly clears both); else Mon 2026-11-23 15:00:00 UTC (2026-11-23T15:00:00Z)\n"; !strings.HasSuffix(out.String(), want) {
		t.Errorf("printed\n%s\nwant it to end\n%s", out.String(), want)
	}
}

// resume clears spec.suspendUntil too, and names it.
func TestResumeClearsSuspendUntil(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts []func(*cronv1.CronJob)
		want string
	}{
		{"suspended until", []func(*cronv1.CronJob){suspendedUntil(utcAt(15, 0))},
			"/nightly resumed (spec.suspendUntil 2026-11-23T15:00:00Z cleared)\n"},
		{"a suspension past", []func(*cronv1.CronJob){suspendedUntil(utcAt(12, 0))},
			"/nightly resumed (spec.suspendUntil 2026-11-23T12:00:00Z cleared, it had passed)\n"},
		{"both", []func(*cronv1.CronJob){suspended, suspendedUntil(utcAt(15, 0))},
			"/nightly resumed (spec.suspend cleared; spec.suspendUntil 2026-11-23T15:00:00Z cleared)\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakes([]*cronv1.CronJob{newCronJob("nightly", "0 2 * * *", tc.opts...)})
			var out bytes.Buffer
			if err := Resume(context.Background(), f.clients(), &out, "nightly"); err != nil {
				t.Fatal(err)
			}
			got := f.cronJob(t, "nightly")
			if got.Spec.SuspendUntil != nil || ptr.Deref(got.Spec.Suspend, false) {
				t.Errorf("spec.suspendUntil %v, spec.suspend %v after resume", got.Spec.SuspendUntil, got.Spec.Suspend)
			}
			if out.String() != Resource+tc.want || f.patches() != 1 {
				t.Errorf("%d patches, printed %q, want %q", f.patches(), out.String(), Resource+tc.want)
			}
		})
	}
}

// An RFC 3339 time needs no zone: --until takes it while spec.timeZone
// names none, and a wall time is refused then.
func TestSuspendUntilWithAnUnknownZone(t *testing.T) {
	f := newFakes([]*cronv1.CronJob{newCronJob("mars", "0 * * * *", inZone("Mars/Olympus"))})
	if err := SuspendUntil(context.Background(), f.clients(), io.Discard, "mars", 0, "2026-11-24T00:00:00Z"); err != nil {
		t.Errorf("--until in RFC 3339: %v", err)
	}
	err := SuspendUntil(context.Background(), f.clients(), io.Discard, "mars", 0, "2026-11-24 00:00")
	if err == nil || !strings.Contains(err.Error(), `"2026-11-24 00:00" has no offset, and `) || !strings.Contains(err.Error(), "Mars/Olympus") {
		t.Errorf("--until a wall time in an unknown zone: %v", err)
	}
}
