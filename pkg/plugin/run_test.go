package plugin

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	k8stesting "k8s.io/client-go/testing"

	cronv1 "github.com/cronjob-controller/cronjob-controller/pkg/apis/batch/v1"
)

// handled is the status the controller writes once it has handled the
// run-now value the CronJob carries.
func handled(cj *cronv1.CronJob) {
	cj.Status.LastRunNow = cj.Annotations[cronv1.RunNowAnnotation]
}

func TestRunSetsAFreshValueAndNamesTheJobTheControllerCreates(t *testing.T) {
	for _, tc := range []struct {
		name string
		cj   *cronv1.CronJob
	}{
		{"never run by hand", newCronJob("nightly", "0 2 * * *")},
		{"run by hand before", newCronJob("nightly", "0 2 * * *", func(cj *cronv1.CronJob) {
			cj.Annotations = map[string]string{cronv1.RunNowAnnotation: "1700000000"}
			handled(cj)
		})},
		{"annotation removed after its run", newCronJob("nightly", "0 2 * * *", func(cj *cronv1.CronJob) {
			cj.Status.LastRunNow = "1700000000"
		})},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakes([]*cronv1.CronJob{tc.cj})
			var out bytes.Buffer
			res, err := Run(context.Background(), f.clients(), &out, "nightly")
			if err != nil {
				t.Fatal(err)
			}
			cj := f.cronJob(t, "nightly")
			if got := cj.Annotations[cronv1.RunNowAnnotation]; got != res.Value || got == tc.cj.Annotations[cronv1.RunNowAnnotation] || got == tc.cj.Status.LastRunNow {
				t.Fatalf("annotation %q, result %q: want a new value", got, res.Value)
			}
			plan := decide(cj, t0)
			if len(plan.Creates) != 1 || !plan.Creates[0].Manual {
				t.Fatalf("the controller plans %+v for the new value, want one run-now Job", plan.Creates)
			}
			if want := plan.Creates[0].Job.Name; res.Job != want {
				t.Errorf("predicted Job %q, the controller creates %q", res.Job, want)
			}
			if !strings.Contains(out.String(), "Job to expect: "+res.Job) || !strings.Contains(out.String(), res.Value) {
				t.Errorf("output does not name the value and the Job:\n%s", out.String())
			}
		})
	}
}

func TestRunTwiceInOneClockTickStartsTwoJobs(t *testing.T) {
	f := newFakes([]*cronv1.CronJob{newCronJob("nightly", "0 2 * * *")})
	ctx := context.Background()
	first, err := Run(ctx, f.clients(), &bytes.Buffer{}, "nightly")
	if err != nil {
		t.Fatal(err)
	}
	// The controller handles the first value before the second run.
	cj := f.cronJob(t, "nightly")
	handled(cj)
	if _, err := f.cron.BatchV1().CronJobs(ns).UpdateStatus(ctx, cj, metav1UpdateOptions); err != nil {
		t.Fatal(err)
	}
	second, err := Run(ctx, f.clients(), &bytes.Buffer{}, "nightly")
	if err != nil {
		t.Fatal(err)
	}
	if second.Value == first.Value || second.Job == "" || second.Job == first.Job {
		t.Fatalf("second run %+v after first %+v: want a new value and a new Job", second, first)
	}
	plan := decide(f.cronJob(t, "nightly"), t0)
	if len(plan.Creates) != 1 || plan.Creates[0].Job.Name != second.Job {
		t.Errorf("the controller plans %+v, want the Job %s", plan.Creates, second.Job)
	}
}

func TestRunWhileAnEarlierValueIsUnhandledNamesNoJob(t *testing.T) {
	cj := newCronJob("nightly", "0 2 * * *", func(cj *cronv1.CronJob) {
		cj.Annotations = map[string]string{cronv1.RunNowAnnotation: "pending-value"}
	})
	f := newFakes([]*cronv1.CronJob{cj})
	var out bytes.Buffer
	res, err := Run(context.Background(), f.clients(), &out, "nightly")
	if err != nil {
		t.Fatal(err)
	}
	if res.Job != "" {
		t.Errorf("predicted Job %q while an earlier value waits: the name depends on the controller", res.Job)
	}
	if !strings.Contains(out.String(), `"pending-value" is not handled yet`) || !strings.Contains(out.String(), "history nightly") {
		t.Errorf("output does not explain the unknown name:\n%s", out.String())
	}
}

func TestRunPatchCarriesTheResourceVersionAndRetriesAConflict(t *testing.T) {
	f := newFakes([]*cronv1.CronJob{newCronJob("nightly", "0 2 * * *")})
	var bodies []map[string]any
	conflicts := 1
	f.cron.PrependReactor("patch", "cronjobs", func(a k8stesting.Action) (bool, runtime.Object, error) {
		var body map[string]any
		if err := json.Unmarshal(a.(k8stesting.PatchAction).GetPatch(), &body); err != nil {
			t.Fatal(err)
		}
		bodies = append(bodies, body)
		if conflicts > 0 {
			conflicts--
			return true, nil, apierrors.NewConflict(schema.GroupResource{Group: cronv1.GroupName, Resource: "cronjobs"}, "nightly", nil)
		}
		return false, nil, nil
	})
	res, err := Run(context.Background(), f.clients(), &bytes.Buffer{}, "nightly")
	if err != nil {
		t.Fatal(err)
	}
	if len(bodies) != 2 {
		t.Fatalf("%d patches, want a conflict and a retry", len(bodies))
	}
	meta := bodies[1]["metadata"].(map[string]any)
	if meta["resourceVersion"] != "10" {
		t.Errorf("patch %v does not carry the resourceVersion read", bodies[1])
	}
	if got := f.cronJob(t, "nightly").Annotations[cronv1.RunNowAnnotation]; got != res.Value {
		t.Errorf("annotation %q after the retry, want %q", got, res.Value)
	}
}

func TestRunMissingCronJob(t *testing.T) {
	f := newFakes(nil)
	_, err := Run(context.Background(), f.clients(), &bytes.Buffer{}, "nope")
	if err == nil || !strings.Contains(err.Error(), `"nope" not found in namespace "team-a"`) {
		t.Fatalf("error %v, want one naming the CronJob and namespace", err)
	}
}

func TestFreshValue(t *testing.T) {
	base := t0.Format("2006-01-02T15:04:05Z07:00")
	for _, tc := range []struct{ current, last, want string }{
		{"", "", base},
		{base, "", base + "-2"},
		{"", base, base + "-2"},
		{base, base + "-2", base + "-3"},
	} {
		if got := freshValue(t0, tc.current, tc.last); got != tc.want {
			t.Errorf("freshValue(current %q, last %q) = %q, want %q", tc.current, tc.last, got, tc.want)
		}
	}
}
