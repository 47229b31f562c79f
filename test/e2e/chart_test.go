//go:build e2e

package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// The Helm chart at its defaults, rendered by Helm's own engine (hack/helm),
// installs on the embedded control plane with kubectl apply, and a
// controller holding only the chart's ServiceAccount and roles does its job:
// creates a CronJob's Jobs, writes its status, holds its Lease.
func TestChartDefaultsInstallAndRun(t *testing.T) {
	ns := newNamespaceFor(t, "release")
	const release = "cc-chart"
	render := exec.Command("go", "run", ".", "template", "-release", release, "-namespace", ns)
	render.Dir = filepath.Join(env.root, "hack", "helm")
	manifest, err := render.Output()
	if err != nil {
		t.Fatalf("rendering the chart: %v\n%s", err, errOutput(err))
	}
	path := filepath.Join(t.TempDir(), "chart.yaml")
	if err := os.WriteFile(path, manifest, 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := kubectl("apply", "-f", path); err != nil {
		t.Fatalf("kubectl apply of the rendered chart: %v\n%s", err, out)
	}
	t.Cleanup(func() {
		_, _ = kubectl("delete", "clusterrole,clusterrolebinding", "-l", "app.kubernetes.io/instance="+release)
	})
	for _, object := range []string{"deployment/" + release + "-cronjob-controller", "service/" + release + "-cronjob-controller-metrics",
		"poddisruptionbudget/" + release + "-cronjob-controller", "serviceaccount/" + release + "-cronjob-controller"} {
		if out, err := kubectl("get", "-n", ns, object); err != nil {
			t.Errorf("%s after the install: %v\n%s", object, err, out)
		}
	}

	kubeconfig := serviceAccountKubeconfig(t, ns, release+"-cronjob-controller")
	startControllerWith(t, kubeconfig, "-leader-elect", "-leader-elect-namespace="+ns, "-leader-elect-id=chart-test")
	work := newNamespace(t)
	cj := createCronJob(t, cronJob(work, "charted", "@every 2s"))
	eventually(t, 60*time.Second, "a Job run and its success recorded", func() (bool, string) {
		cur := getCronJob(t, work, cj.Name)
		return cur.Status.LastSuccessfulTime != nil, fmt.Sprintf("%+v", cur.Status)
	})
	if out, err := kubectl("get", "lease", "-n", ns, "chart-test"); err != nil {
		t.Errorf("the Lease in the release's namespace: %v\n%s", err, out)
	}
}

func errOutput(err error) string {
	if ee, ok := err.(*exec.ExitError); ok {
		return string(ee.Stderr)
	}
	return ""
}
