//go:build e2e

package e2e

import (
	"fmt"
	"net/http"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// make build stamps the version it is given (or git describe's) into both
// binaries: -version and kubectl cronjob version print it with the commit
// and the Go version, the controller logs it at start, and /metrics
// exports it as cronjob_controller_build_info.
func TestMakeBuildStampsTheVersionEverywhere(t *testing.T) {
	const stamped = "v0.1.0-e2e.1"
	bin := t.TempDir()
	build := exec.Command("make", "build", "VERSION="+stamped, "OUTPUT_BIN="+bin)
	build.Dir = env.root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("make build: %v\n%s", err, out)
	}
	head, err := exec.Command("git", "-C", env.root, "rev-parse", "HEAD").Output()
	if err != nil {
		t.Fatal(err)
	}
	revision := strings.TrimSpace(string(head))
	info := fmt.Sprintf("version %s, commit %s, %s", stamped, revision, runtime.Version())
	for _, c := range []struct{ binary, arg string }{
		{"cronjob-controller", "-version"},
		{"kubectl-cronjob", "version"},
	} {
		out, err := exec.Command(filepath.Join(bin, c.binary), c.arg).CombinedOutput()
		if want := c.binary + " " + info + "\n"; err != nil || string(out) != want {
			t.Errorf("%s %s: %v, %q; want %q", c.binary, c.arg, err, out, want)
		}
	}

	ns := newNamespace(t)
	metricsAddr := freeAddr(t)
	p := startControllerCmd(t, exec.Command(filepath.Join(bin, "cronjob-controller"),
		controllerArgs(env.kubeconfig, "-metrics-bind-address="+metricsAddr, "-leader-elect", "-leader-elect-namespace="+ns)...))
	want := fmt.Sprintf(`cronjob_controller_build_info{goversion=%q,revision=%q,version=%q} 1`, runtime.Version(), revision, stamped)
	eventually(t, 30*time.Second, "build_info on /metrics", func() (bool, string) {
		code, body := httpGet("http://" + metricsAddr + "/metrics")
		return code == http.StatusOK && strings.Contains(body, want), grepLines(body, "build_info")
	})
	logLine := fmt.Sprintf(`"Starting cronjob-controller" version=%q revision=%q goVersion=%q`, stamped, revision, runtime.Version())
	if !p.logged(logLine) {
		t.Errorf("the controller's log lacks %s", logLine)
	}
}
