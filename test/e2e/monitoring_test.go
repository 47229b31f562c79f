//go:build e2e

package e2e

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// artifacts/deploy-monitoring adds the Prometheus Operator's objects to
// artifacts/deploy, and they fit what they point at: the ServiceMonitor
// selects the metrics Service, which selects the Deployment's pods and
// targets their metrics port; the PodMonitor component, used instead,
// selects the pods and their port; both keep the CronJobs' namespace label
// (honorLabels); the PodDisruptionBudget covers the Deployment's pods; and
// every object lands in the controller's namespace.
func TestMonitoringComponentsSelectTheController(t *testing.T) {
	withServiceMonitor, err := renderKustomization(filepath.Join(env.root, "artifacts", "deploy-monitoring"))
	if err != nil {
		t.Fatal(err)
	}
	// The PodMonitor component in a user's kustomization, as its comment says.
	// kustomize takes relative paths only.
	user := t.TempDir()
	rel := func(elem ...string) string {
		p, err := filepath.Rel(user, filepath.Join(append([]string{env.root, "artifacts"}, elem...)...))
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	kustomization := "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n- " +
		rel("deploy") + "\ncomponents:\n- " + rel("monitoring", "podmonitor") + "\n"
	if err := os.WriteFile(filepath.Join(user, "kustomization.yaml"), []byte(kustomization), 0o644); err != nil {
		t.Fatal(err)
	}
	withPodMonitor, err := renderKustomization(user)
	if err != nil {
		t.Fatal(err)
	}

	for name, objs := range map[string][]*unstructured.Unstructured{"deploy-monitoring": withServiceMonitor, "podmonitor": withPodMonitor} {
		byKind := map[string]*unstructured.Unstructured{}
		for _, o := range objs {
			if o.GetNamespace() != "" && o.GetNamespace() != deployNamespace {
				t.Errorf("%s: %s %s in namespace %s, want %s", name, o.GetKind(), o.GetName(), o.GetNamespace(), deployNamespace)
			}
			byKind[o.GetKind()] = o
		}
		dep := byKind["Deployment"]
		if dep == nil {
			t.Fatalf("%s renders no Deployment", name)
		}
		podLabels, _, _ := unstructured.NestedStringMap(dep.Object, "spec", "template", "metadata", "labels")
		var ports []string
		containers, _, _ := unstructured.NestedSlice(dep.Object, "spec", "template", "spec", "containers")
		for _, c := range containers {
			cports, _, _ := unstructured.NestedSlice(c.(map[string]any), "ports")
			for _, p := range cports {
				ports = append(ports, p.(map[string]any)["name"].(string))
			}
		}
		pdb := byKind["PodDisruptionBudget"]
		if pdb == nil {
			t.Fatalf("%s renders no PodDisruptionBudget", name)
		}
		pdbSelector, _, _ := unstructured.NestedStringMap(pdb.Object, "spec", "selector", "matchLabels")
		if !selects(pdbSelector, podLabels) {
			t.Errorf("%s: the PodDisruptionBudget selects %v, not the pods %v", name, pdbSelector, podLabels)
		}
		svc := byKind["Service"]
		if svc == nil {
			t.Fatalf("%s renders no Service", name)
		}
		svcSelector, _, _ := unstructured.NestedStringMap(svc.Object, "spec", "selector")
		if !selects(svcSelector, podLabels) {
			t.Errorf("%s: the Service selects %v, not the pods %v", name, svcSelector, podLabels)
		}
		svcPorts, _, _ := unstructured.NestedSlice(svc.Object, "spec", "ports")
		var svcPortNames []string
		for _, p := range svcPorts {
			pm := p.(map[string]any)
			svcPortNames = append(svcPortNames, pm["name"].(string))
			if target, _ := pm["targetPort"].(string); !slices.Contains(ports, target) {
				t.Errorf("%s: the Service targets port %v, not one of the container's %v", name, pm["targetPort"], ports)
			}
		}

		var endpoints []any
		switch name {
		case "deploy-monitoring":
			if byKind["PodMonitor"] != nil {
				t.Errorf("deploy-monitoring renders a PodMonitor beside its ServiceMonitor: every replica scraped twice")
			}
			if byKind["PrometheusRule"] == nil {
				t.Error("deploy-monitoring renders no PrometheusRule")
			}
			sm := byKind["ServiceMonitor"]
			if sm == nil {
				t.Fatal("deploy-monitoring renders no ServiceMonitor")
			}
			smSelector, _, _ := unstructured.NestedStringMap(sm.Object, "spec", "selector", "matchLabels")
			if !selects(smSelector, svc.GetLabels()) {
				t.Errorf("the ServiceMonitor selects %v, not the Service's labels %v", smSelector, svc.GetLabels())
			}
			endpoints, _, _ = unstructured.NestedSlice(sm.Object, "spec", "endpoints")
			for _, e := range endpoints {
				if port := e.(map[string]any)["port"]; !slices.Contains(svcPortNames, port.(string)) {
					t.Errorf("the ServiceMonitor scrapes port %v, not one of the Service's %v", port, svcPortNames)
				}
			}
		case "podmonitor":
			pm := byKind["PodMonitor"]
			if pm == nil {
				t.Fatal("the podmonitor component renders no PodMonitor")
			}
			pmSelector, _, _ := unstructured.NestedStringMap(pm.Object, "spec", "selector", "matchLabels")
			if !selects(pmSelector, podLabels) {
				t.Errorf("the PodMonitor selects %v, not the pods %v", pmSelector, podLabels)
			}
			endpoints, _, _ = unstructured.NestedSlice(pm.Object, "spec", "podMetricsEndpoints")
			for _, e := range endpoints {
				if port := e.(map[string]any)["port"]; !slices.Contains(ports, port.(string)) {
					t.Errorf("the PodMonitor scrapes port %v, not one of the container's %v", port, ports)
				}
			}
		}
		if len(endpoints) == 0 {
			t.Errorf("%s: no endpoint to scrape", name)
		}
		for _, e := range endpoints {
			if honor, _ := e.(map[string]any)["honorLabels"].(bool); !honor {
				t.Errorf("%s: endpoint %v without honorLabels: the target's namespace would replace the CronJobs'", name, e)
			}
		}
	}
}

// selects says whether a non-empty matchLabels selector matches labels.
func selects(selector, labels map[string]string) bool {
	if len(selector) == 0 {
		return false
	}
	for k, v := range selector {
		if labels[k] != v {
			return false
		}
	}
	return true
}
