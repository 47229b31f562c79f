package main

import (
	"bytes"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

const (
	rulesPath    = "../../artifacts/prometheus/rules.yaml"
	generated    = "../../artifacts/monitoring/prometheusrule/prometheusrule.yaml"
	runbooksPath = "../../docs/runbooks.md"
	runbookBase  = "https://github.com/cronjob-controller/cronjob-controller/blob/main/docs/runbooks.md#"
)

func read(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// The checked-in PrometheusRule is what the rule file generates now: an
// edit of rules.yaml without make prometheusrule fails here.
func TestPrometheusRuleIsGeneratedFromTheRuleFile(t *testing.T) {
	want, err := Generate(read(t, rulesPath))
	if err != nil {
		t.Fatal(err)
	}
	if got := read(t, generated); !bytes.Equal(got, want) {
		t.Errorf("%s differs from what %s generates: run make prometheusrule", generated, rulesPath)
	}
}

// The PrometheusRule's spec.groups are the rule file's groups, every rule,
// expression, for:, label and annotation: nothing lost or reordered.
func TestPrometheusRuleHoldsTheRuleFileGroupsUnchanged(t *testing.T) {
	var file struct {
		Groups []any `json:"groups"`
	}
	if err := yaml.Unmarshal(read(t, rulesPath), &file); err != nil {
		t.Fatal(err)
	}
	var rule struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
		Spec       struct {
			Groups []any `json:"groups"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal(read(t, generated), &rule); err != nil {
		t.Fatal(err)
	}
	if rule.APIVersion != "monitoring.coreos.com/v1" || rule.Kind != "PrometheusRule" {
		t.Errorf("generated %s %s, want monitoring.coreos.com/v1 PrometheusRule", rule.APIVersion, rule.Kind)
	}
	if len(file.Groups) == 0 || !reflect.DeepEqual(rule.Spec.Groups, file.Groups) {
		t.Errorf("spec.groups\n  %v\nwant the rule file's\n  %v", rule.Spec.Groups, file.Groups)
	}
	if _, err := Generate([]byte("groups: []\n")); err == nil {
		t.Error("a rule file without groups generated a PrometheusRule")
	}
	if _, err := Generate([]byte("group: []\n")); err == nil {
		t.Error("a rule file with an unknown field generated a PrometheusRule")
	}
}

// Every alert says how bad it is (severity), what (summary, description)
// and where its runbook is: a section of docs/runbooks.md named after it,
// with what to check and what to do; and docs/runbooks.md has no section
// for an alert that is gone.
func TestEveryAlertHasASeverityAnnotationsAndARunbook(t *testing.T) {
	var file struct {
		Groups []struct {
			Rules []struct {
				Alert       string            `json:"alert"`
				Labels      map[string]string `json:"labels"`
				Annotations map[string]string `json:"annotations"`
			} `json:"rules"`
		} `json:"groups"`
	}
	if err := yaml.Unmarshal(read(t, rulesPath), &file); err != nil {
		t.Fatal(err)
	}
	sections := runbookSections(string(read(t, runbooksPath)))
	var alerts []string
	for _, g := range file.Groups {
		for _, r := range g.Rules {
			if r.Alert == "" {
				continue
			}
			alerts = append(alerts, r.Alert)
			if s := r.Labels["severity"]; !slices.Contains([]string{"critical", "warning", "info"}, s) {
				t.Errorf("%s: severity %q, want critical, warning or info", r.Alert, s)
			}
			for _, a := range []string{"summary", "description"} {
				if strings.TrimSpace(r.Annotations[a]) == "" {
					t.Errorf("%s has no %s", r.Alert, a)
				}
			}
			if got, want := r.Annotations["runbook_url"], runbookBase+strings.ToLower(r.Alert); got != want {
				t.Errorf("%s: runbook_url %q, want %q", r.Alert, got, want)
			}
			body, ok := sections[r.Alert]
			if !ok {
				t.Errorf("docs/runbooks.md has no section ## %s", r.Alert)
				continue
			}
			for _, part := range []string{"What to check", "What to do"} {
				if !strings.Contains(body, part) {
					t.Errorf("docs/runbooks.md's %s does not say %q", r.Alert, part)
				}
			}
		}
	}
	if len(alerts) == 0 {
		t.Fatal("no alerts in the rule file")
	}
	for name := range sections {
		if !slices.Contains(alerts, name) {
			t.Errorf("docs/runbooks.md has a section for %s, which no rule defines", name)
		}
	}
}

// runbookSections are the ## sections of the runbooks page, by heading.
func runbookSections(page string) map[string]string {
	heading := regexp.MustCompile(`(?m)^## (\S+)\s*$`)
	out := map[string]string{}
	idx := heading.FindAllStringSubmatchIndex(page, -1)
	for i, m := range idx {
		end := len(page)
		if i+1 < len(idx) {
			end = idx[i+1][0]
		}
		out[page[m[2]:m[3]]] = page[m[1]:end]
	}
	return out
}
