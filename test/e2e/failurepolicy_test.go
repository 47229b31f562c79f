//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

// The API server refuses a failure policy the controller could not follow,
// at kubectl apply, naming the field: pauseAfter outside 1 to 1000, a
// duration that is not one or lies outside 1s to 8760h, maxResumeAfter
// without resumeAfter or shorter than it. It admits a good policy and the
// example of docs/failures.md. The CronJobs go as JSON, since a duration
// that does not parse has no typed form.
func TestCELRefusesABadFailurePolicy(t *testing.T) {
	ns := newNamespace(t)
	example, err := os.ReadFile(filepath.Join(env.root, "artifacts", "examples", "failing-cronjob.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	exampleJSON, err := yaml.YAMLToJSON(example)
	if err != nil {
		t.Fatal(err)
	}
	const policy = "spec.failurePolicy"
	for _, tc := range []struct {
		name   string
		policy string // spec.failurePolicy as JSON; "" sends the example
		field  string // the field a refusal names; "" when admitted
		reason string // a part of the refusal's message
	}{
		{name: "pauseAfter 0", policy: `{"pauseAfter":0}`, field: policy + ".pauseAfter", reason: "greater than or equal to 1"},
		{name: "pauseAfter 1001", policy: `{"pauseAfter":1001}`, field: policy + ".pauseAfter", reason: "less than or equal to 1000"},
		{name: "pauseAfter missing", policy: `{"resumeAfter":"10m"}`, field: policy + ".pauseAfter", reason: "Required value"},
		{name: "resumeAfter 0s", policy: `{"pauseAfter":3,"resumeAfter":"0s"}`, field: policy + ".resumeAfter", reason: "must be a duration from 1s to 8760h"},
		{name: "resumeAfter not a duration", policy: `{"pauseAfter":3,"resumeAfter":"not-a-duration"}`, field: policy + ".resumeAfter"},
		{name: "resumeAfter past a year", policy: `{"pauseAfter":3,"resumeAfter":"8761h"}`, field: policy + ".resumeAfter", reason: "must be a duration from 1s to 8760h"},
		{name: "maxResumeAfter 0s", policy: `{"pauseAfter":3,"resumeAfter":"1s","maxResumeAfter":"0s"}`, field: policy + ".maxResumeAfter", reason: "must be a duration from 1s to 8760h"},
		{name: "maxResumeAfter without resumeAfter", policy: `{"pauseAfter":3,"maxResumeAfter":"1h"}`, field: policy, reason: "maxResumeAfter needs resumeAfter"},
		{name: "resumeAfter longer than maxResumeAfter", policy: `{"pauseAfter":3,"resumeAfter":"2h","maxResumeAfter":"1h"}`, field: policy, reason: "resumeAfter must not be longer than maxResumeAfter"},
		{name: "pauseAfter alone", policy: `{"pauseAfter":1}`},
		{name: "the bounds", policy: `{"pauseAfter":1000,"resumeAfter":"1s","maxResumeAfter":"8760h"}`},
		{name: "resumeAfter equal to maxResumeAfter", policy: `{"pauseAfter":3,"resumeAfter":"90m","maxResumeAfter":"1h30m"}`},
		{name: "the example of docs/failures.md"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var obj map[string]any
			if err := json.Unmarshal(exampleJSON, &obj); err != nil {
				t.Fatal(err)
			}
			obj["metadata"] = map[string]any{"name": "policy", "namespace": ns}
			if tc.policy != "" {
				var p any
				if err := json.Unmarshal([]byte(tc.policy), &p); err != nil {
					t.Fatal(err)
				}
				obj["spec"].(map[string]any)["failurePolicy"] = p
			}
			body, err := json.Marshal(obj)
			if err != nil {
				t.Fatal(err)
			}
			err = env.cron.BatchV1().RESTClient().Post().Namespace(ns).Resource("cronjobs").
				Param("dryRun", metav1.DryRunAll).Body(body).Do(context.Background()).Error()
			if tc.field == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			var se *apierrors.StatusError
			if !apierrors.IsInvalid(err) || !errors.As(err, &se) {
				t.Fatalf("error %v, want the CronJob refused as invalid", err)
			}
			found := false
			for _, c := range causes(se) {
				found = found || strings.HasPrefix(c, tc.field+": ") && strings.Contains(c, tc.reason)
			}
			if !found {
				t.Errorf("refusal %q names no %s with %q", causes(se), tc.field, tc.reason)
			}
		})
	}
}
