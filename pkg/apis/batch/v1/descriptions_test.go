package v1

import (
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// What `kubectl explain` prints of this API speaks to users: no package,
// file or function names of the code behind it, no line breaks inside a
// paragraph (kubectl wraps to the terminal; a comment's own breaks would
// cut sentences short), every bound and default of a field the user sets
// named in its words, and the schedule naming every form it takes, the H
// forms among them.
func TestDescriptionsSpeakToUsers(t *testing.T) {
	data, err := os.ReadFile("../../../../artifacts/examples/crd.yaml")
	if err != nil {
		t.Fatal(err)
	}
	code := regexp.MustCompile(`pkg/|\.go\b|\b[a-z]+\.[A-Z][A-Za-z]+\b|\b[A-Za-z]+\(\)|\bfunc\b|\b(?:Validations|Controller|syncHandler|planner)\b`)
	descriptions := map[string]string{}
	var unnamed []string
	var walk func(path, parent string, node any)
	walk = func(path, parent string, node any) {
		m, ok := node.(map[string]any)
		if !ok {
			return
		}
		d, _ := m["description"].(string)
		if d != "" {
			descriptions[path] = d
		} else if strings.HasSuffix(path, "[]") {
			d = parent // a list's items are described with the list
		}
		// The bounds and defaults of what a user writes: not status, not
		// the Job template (the Job API's own).
		if strings.Contains(path, ".spec.") && !strings.Contains(path, ".jobTemplate") {
			for _, k := range []string{"maximum", "maxItems", "maxLength", "default"} {
				v, ok := m[k]
				if f, isFloat := v.(float64); isFloat && f == float64(int64(f)) {
					v = int64(f)
				}
				if ok && !strings.Contains(strings.ToLower(d), strings.ToLower(fmt.Sprint(v))) {
					unnamed = append(unnamed, fmt.Sprintf("%s: %s %v", path, k, v))
				}
			}
		}
		if props, ok := m["properties"].(map[string]any); ok {
			for name, p := range props {
				walk(path+"."+name, d, p)
			}
		}
		for _, k := range []string{"items", "additionalProperties"} {
			walk(path+"[]", d, m[k])
		}
	}
	for _, doc := range strings.Split(string(data), "\n---\n") {
		var crd map[string]any
		if err := yaml.Unmarshal([]byte(doc), &crd); err != nil || crd == nil {
			continue
		}
		spec, _ := crd["spec"].(map[string]any)
		names, _ := spec["names"].(map[string]any)
		versions, _ := spec["versions"].([]any)
		for _, v := range versions {
			schema, _ := v.(map[string]any)["schema"].(map[string]any)
			walk(names["kind"].(string), "", schema["openAPIV3Schema"])
		}
	}
	for _, u := range unnamed {
		t.Errorf("the description does not name the bound or default %s", u)
	}
	if len(descriptions) < 100 {
		t.Fatalf("read %d descriptions from the CRD, want the API's", len(descriptions))
	}
	for path, d := range descriptions {
		if m := code.FindString(d); m != "" {
			t.Errorf("%s names code (%q): %s", path, m, d)
		}
		for _, p := range strings.Split(d, "\n\n") {
			for _, l := range strings.Split(p, "\n")[1:] {
				if !strings.HasPrefix(l, "- ") && !strings.HasPrefix(l, "* ") && !strings.HasPrefix(l, " ") {
					t.Errorf("%s breaks a line inside a paragraph, before %q", path, l)
				}
			}
		}
	}
	schedule := descriptions["CronJob.spec.schedule"]
	for _, form := range []string{"five fields", "@hourly", "@every", "H * * * *", "H(0-7)", "H/15", "1024"} {
		if !strings.Contains(schedule, form) {
			t.Errorf("spec.schedule's description does not name %q: %s", form, schedule)
		}
	}
}
