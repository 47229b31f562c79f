package v1

import (
	"bytes"
	"os"
	"reflect"
	"testing"

	"k8s.io/client-go/util/jsonpath"
	"sigs.k8s.io/yaml"
)

// kubectl get tcj shows the schedule in one column whichever form is set:
// spec.schedule's string, or spec.schedules' list. The API server reads a
// column as the CRD's JSONPath's first result (tableconvertor), which is
// what cell does here.
func TestScheduleColumnShowsWhicheverFormIsSet(t *testing.T) {
	data, err := os.ReadFile("../../../../artifacts/examples/crd.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var path string
	for _, doc := range bytes.Split(data, []byte("\n---\n")) {
		var crd struct {
			Spec struct {
				Names    struct{ Kind string }
				Versions []struct {
					Columns []struct{ Name, JSONPath string } `json:"additionalPrinterColumns"`
				}
			}
		}
		if err := yaml.Unmarshal(doc, &crd); err != nil {
			t.Fatal(err)
		}
		if crd.Spec.Names.Kind != "CronJob" {
			continue
		}
		for _, c := range crd.Spec.Versions[0].Columns {
			if c.Name == "Schedules" {
				t.Errorf("a second column %q stays empty for a single schedule", c.Name)
			}
			if c.Name == "Schedule" {
				path = c.JSONPath
			}
		}
	}
	if path == "" {
		t.Fatal("the CronJob CRD has no Schedule column")
	}
	cell := func(spec map[string]any) string {
		j := jsonpath.New("Schedule")
		if err := j.Parse("{" + path + "}"); err != nil {
			t.Fatalf("column path %q: %v", path, err)
		}
		j.AllowMissingKeys(true)
		results, err := j.FindResults(map[string]any{"spec": spec})
		if err != nil || len(results) == 0 || len(results[0]) == 0 {
			return ""
		}
		var buf bytes.Buffer
		if err := j.PrintResults(&buf, []reflect.Value{reflect.ValueOf(results[0][0].Interface())}); err != nil {
			t.Fatal(err)
		}
		return buf.String()
	}
	if got := cell(map[string]any{"schedule": "*/5 * * * *"}); got != "*/5 * * * *" {
		t.Errorf("a single schedule shows as %q", got)
	}
	if got := cell(map[string]any{"schedules": []any{"0 9 * * MON-FRI", "0 12 * * SAT"}}); got != `["0 9 * * MON-FRI","0 12 * * SAT"]` {
		t.Errorf("a list of schedules shows as %q", got)
	}
}
