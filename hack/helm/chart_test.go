package main

import (
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/lint"
	"helm.sh/helm/v3/pkg/lint/support"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/yaml"
	sigsyaml "sigs.k8s.io/yaml"
)

var root = filepath.Join(ChartDir(), "..", "..")

// helm lint --strict passes (no warning, no error) at the chart's defaults
// and with every optional object on, as Helm's own linter (the one helm lint
// runs) sees it, values.schema.json included.
func TestChartLintsClean(t *testing.T) {
	kube, err := chartutil.ParseKubeVersion("v1.36.3")
	if err != nil {
		t.Fatal(err)
	}
	for name, values := range map[string]map[string]any{
		"defaults":      nil,
		"everything on": {"serviceMonitor": map[string]any{"enabled": true}, "prometheusRule": map[string]any{"enabled": true}, "shards": 8},
	} {
		linter := lint.AllWithKubeVersion(ChartDir(), values, "cronjob-controller-system", kube)
		for _, m := range linter.Messages {
			if m.Severity >= support.WarningSev {
				t.Errorf("%s: helm lint: %s", name, m)
			}
		}
	}
}

// decode returns the objects of a YAML stream.
func decode(t *testing.T, text string) []*unstructured.Unstructured {
	t.Helper()
	var objs []*unstructured.Unstructured
	dec := yaml.NewYAMLOrJSONDecoder(strings.NewReader(text), 4096)
	for {
		o := &unstructured.Unstructured{}
		if err := dec.Decode(&o.Object); errors.Is(err, io.EOF) {
			return objs
		} else if err != nil {
			t.Fatal(err)
		}
		if len(o.Object) > 0 {
			objs = append(objs, o)
		}
	}
}

func find(objs []*unstructured.Unstructured, kind, name string) *unstructured.Unstructured {
	for _, o := range objs {
		if o.GetKind() == kind && o.GetName() == name {
			return o
		}
	}
	return nil
}

func field(t *testing.T, o *unstructured.Unstructured, path ...string) any {
	t.Helper()
	if o == nil {
		t.Fatalf("no object for %v", path)
	}
	v, ok, err := unstructured.NestedFieldNoCopy(o.Object, path...)
	if err != nil || !ok {
		t.Fatalf("%s %s has no %v: %v", o.GetKind(), o.GetName(), path, err)
	}
	return v
}

// At its defaults the chart grants the same RBAC rules, runs the same
// arguments with the same security contexts and resources, keeps the same
// PodDisruptionBudget and metrics port, and installs the same CRDs as
// artifacts/deploy: the two install paths do not drift apart. The chart's
// copies of the CRDs and the alerting rules are the files they copy.
func TestChartAtItsDefaultsMatchesArtifactsDeploy(t *testing.T) {
	r, err := Render("cronjob-controller", "cronjob-controller-system", nil)
	if err != nil {
		t.Fatal(err)
	}
	chart := decode(t, r.YAML())
	cmd := exec.Command("kubectl", "kustomize", filepath.Join(root, "artifacts", "deploy"))
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("kubectl kustomize artifacts/deploy: %v\n%s", err, stderr.String())
	}
	deploy := decode(t, out.String())

	for _, c := range []struct {
		kind, suffix string
		path         []string
	}{
		{"ClusterRole", "", []string{"rules"}},
		{"ClusterRole", "-view", []string{"rules"}},
		{"ClusterRole", "-edit", []string{"rules"}},
		{"ClusterRole", "-view", []string{"metadata", "labels", "rbac.authorization.k8s.io/aggregate-to-view"}},
		{"ClusterRole", "-edit", []string{"metadata", "labels", "rbac.authorization.k8s.io/aggregate-to-edit"}},
		{"Role", "-leader-election", []string{"rules"}},
		{"Deployment", "", []string{"spec", "replicas"}},
		{"Deployment", "", []string{"spec", "template", "spec", "securityContext"}},
		{"Deployment", "", []string{"spec", "template", "spec", "containers"}}, // compared below, field by field
		{"PodDisruptionBudget", "", []string{"spec", "maxUnavailable"}},
		{"Service", "-metrics", []string{"spec", "ports"}},
	} {
		name := "cronjob-controller" + c.suffix // the release's name is the chart's, as artifacts/deploy's objects are named
		got, want := field(t, find(chart, c.kind, name), c.path...), field(t, find(deploy, c.kind, name), c.path...)
		if c.path[len(c.path)-1] == "containers" {
			gc, wc := got.([]any)[0].(map[string]any), want.([]any)[0].(map[string]any)
			for _, k := range []string{"args", "securityContext", "resources", "ports", "livenessProbe", "readinessProbe"} {
				if !reflect.DeepEqual(gc[k], wc[k]) {
					t.Errorf("the Deployment's container %s: the chart's %v, artifacts/deploy's %v", k, gc[k], wc[k])
				}
			}
			continue
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s%s %v: the chart's\n  %v\nartifacts/deploy's\n  %v", c.kind, c.suffix, c.path, got, want)
		}
	}

	for copyPath, source := range map[string]string{
		filepath.Join(ChartDir(), "crds", "crds.yaml"):   filepath.Join(root, "artifacts", "examples", "crd.yaml"),
		filepath.Join(ChartDir(), "files", "rules.yaml"): filepath.Join(root, "artifacts", "prometheus", "rules.yaml"),
	} {
		a, errA := os.ReadFile(copyPath)
		b, errB := os.ReadFile(source)
		if errA != nil || errB != nil || !bytes.Equal(a, b) {
			t.Errorf("%s is not %s (%v, %v): run make manifests prometheusrule", copyPath, source, errA, errB)
		}
	}
	if !strings.Contains(r.Notes, "kubectl get tcj") {
		t.Errorf("NOTES.txt does not say what to do next:\n%s", r.Notes)
	}
}

// The values a user sets reach the objects: shards replace leader
// election, extra arguments follow, the image and scheduling settings apply,
// objects switched off are gone and the optional ones appear; the
// PrometheusRule holds the rule file's groups.
func TestChartValuesReachTheObjects(t *testing.T) {
	r, err := Render("ops", "batch", map[string]any{
		"shards":              8,
		"extraArgs":           []any{"-workers=40"},
		"image":               map[string]any{"repository": "registry.example.com/cc", "tag": "v9.9.9"},
		"nodeSelector":        map[string]any{"pool": "system"},
		"priorityClassName":   "system-cluster-critical",
		"podDisruptionBudget": map[string]any{"enabled": false},
		"rbac":                map[string]any{"aggregatedRoles": false},
		"serviceMonitor":      map[string]any{"enabled": true, "interval": "30s"},
		"prometheusRule":      map[string]any{"enabled": true, "labels": map[string]any{"release": "prom"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	objs := decode(t, r.YAML())
	var kinds []string
	for _, o := range objs {
		kinds = append(kinds, o.GetKind())
		if ns := o.GetNamespace(); ns != "" && ns != "batch" {
			t.Errorf("%s %s in %s, want the release's namespace", o.GetKind(), o.GetName(), ns)
		}
	}
	for _, gone := range []string{"PodDisruptionBudget"} {
		if slices.Contains(kinds, gone) {
			t.Errorf("%s rendered though switched off", gone)
		}
	}
	if n := strings.Count(strings.Join(kinds, ","), "ClusterRole,"); n != 1 {
		t.Errorf("%d ClusterRoles without the aggregated roles, want the controller's alone", n)
	}
	const fullname = "ops-cronjob-controller"
	dep := find(objs, "Deployment", fullname)
	c := field(t, dep, "spec", "template", "spec", "containers").([]any)[0].(map[string]any)
	if want := []any{"-shards=8", "-metrics-bind-address=:8080", "-health-probe-bind-address=:8081", "-workers=40"}; !reflect.DeepEqual(c["args"], want) {
		t.Errorf("args %v, want %v", c["args"], want)
	}
	if c["image"] != "registry.example.com/cc:v9.9.9" {
		t.Errorf("image %v", c["image"])
	}
	if got := field(t, dep, "spec", "template", "spec", "priorityClassName"); got != "system-cluster-critical" {
		t.Errorf("priorityClassName %v", got)
	}
	if got := field(t, dep, "spec", "template", "spec", "nodeSelector"); !reflect.DeepEqual(got, map[string]any{"pool": "system"}) {
		t.Errorf("nodeSelector %v", got)
	}
	sm := find(objs, "ServiceMonitor", fullname)
	svc := find(objs, "Service", fullname+"-metrics")
	selector := field(t, sm, "spec", "selector", "matchLabels").(map[string]any)
	for k, v := range selector {
		if svc.GetLabels()[k] != v {
			t.Errorf("the ServiceMonitor selects %s=%v, the Service has %v", k, v, svc.GetLabels())
		}
	}
	rule := find(objs, "PrometheusRule", fullname)
	if rule.GetLabels()["release"] != "prom" {
		t.Errorf("PrometheusRule labels %v", rule.GetLabels())
	}
	var file struct {
		Groups []any `json:"groups"`
	}
	data, err := os.ReadFile(filepath.Join(root, "artifacts", "prometheus", "rules.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := sigsyaml.Unmarshal(data, &file); err != nil {
		t.Fatal(err)
	}
	// Through JSON both sides, so numbers and maps compare alike.
	gotJSON, _ := sigsyaml.Marshal(field(t, rule, "spec", "groups"))
	wantJSON, _ := sigsyaml.Marshal(file.Groups)
	if !bytes.Equal(gotJSON, wantJSON) {
		t.Errorf("the PrometheusRule's groups are not the rule file's:\n%s\nwant\n%s", gotJSON, wantJSON)
	}
}

// values.schema.json refuses what the chart cannot render sensibly, with
// the field named: a negative replica count, shards that are not a number,
// an unknown value (a typo), an argument that is not a flag.
func TestChartSchemaRefusesBadValues(t *testing.T) {
	for name, values := range map[string]map[string]any{
		"replicas":  {"replicas": -1},
		"shards":    {"shards": "many"},
		"typo":      {"replica": 3},
		"extraArgs": {"extraArgs": []any{"workers=40"}},
		"pull":      {"image": map[string]any{"pullPolicy": "Sometimes"}},
	} {
		if _, err := Render("cronjob-controller", "cronjob-controller-system", values); err == nil {
			t.Errorf("%s: %v rendered", name, values)
		}
	}
}

// The packaged chart carries the release's version (SemVer, without the v),
// appVersion and image repository, and loads and renders as the chart does.
func TestPackageCarriesTheReleaseVersionAndImage(t *testing.T) {
	path, err := Package("v0.2.0", "registry.example.com/team/cc", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Base(path) != "cronjob-controller-0.2.0.tgz" {
		t.Errorf("package %s, want cronjob-controller-0.2.0.tgz", path)
	}
	ch, err := loader.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if ch.Metadata.Version != "0.2.0" || ch.Metadata.AppVersion != "v0.2.0" {
		t.Errorf("version %s, appVersion %s", ch.Metadata.Version, ch.Metadata.AppVersion)
	}
	r, err := render(ch, "cronjob-controller", "cronjob-controller-system", nil)
	if err != nil {
		t.Fatal(err)
	}
	dep := find(decode(t, r.YAML()), "Deployment", "cronjob-controller")
	c := field(t, dep, "spec", "template", "spec", "containers").([]any)[0].(map[string]any)
	if c["image"] != "registry.example.com/team/cc:v0.2.0" {
		t.Errorf("the packaged chart's image %v, want registry.example.com/team/cc:v0.2.0", c["image"])
	}
	if len(r.CRDs) == 0 {
		t.Error("the packaged chart has no CRDs")
	}
}
