package plugin

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	cronv1 "github.com/cronjob-controller/cronjob-controller/pkg/apis/batch/v1"
	clientset "github.com/cronjob-controller/cronjob-controller/pkg/generated/clientset/versioned"
	"github.com/cronjob-controller/cronjob-controller/pkg/version"
)

// kubeconfig writes a kubeconfig whose context names namespace, and
// points KUBECONFIG at it.
func kubeconfig(t *testing.T, namespace string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "kubeconfig")
	data := `apiVersion: v1
kind: Config
clusters:
- name: c
  cluster: {server: "https://127.0.0.1:1"}
users:
- name: u
  user: {token: t}
contexts:
- name: ctx
  context: {cluster: c, user: u, namespace: ` + namespace + `}
- name: other
  context: {cluster: c, user: u, namespace: from-other-context}
current-context: ctx
`
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("KUBECONFIG", path)
	return path
}

// cli runs the command line on the fakes, and returns the exit code and
// what it printed.
func (f fakes) cli(t *testing.T, args ...string) (code int, stdout, stderr string, namespace string) {
	t.Helper()
	code, stdout, stderr, _ = f.cliConfig(t, args...)
	// The namespace the command used is the one it read the CronJob in.
	for _, a := range f.cron.Actions() {
		namespace = a.GetNamespace()
	}
	return code, stdout, stderr, namespace
}

// cliConfig is cli, returning also the REST configuration the command
// connected with (nil when it did not connect).
func (f fakes) cliConfig(t *testing.T, args ...string) (code int, stdout, stderr string, config *rest.Config) {
	t.Helper()
	var out, errOut bytes.Buffer
	connect := func(cfg *rest.Config) (clientset.Interface, kubernetes.Interface, error) {
		config = cfg
		return f.cron, f.kube, nil
	}
	c := CLI{Stdout: &out, Stderr: &errOut, Connect: connect, Clock: f.clock}
	code = c.Main(context.Background(), args)
	return code, out.String(), errOut.String(), config
}

func TestCLIRunsEachCommandInTheKubeconfigsNamespace(t *testing.T) {
	kubeconfig(t, ns)
	f := newFakes([]*cronv1.CronJob{newCronJob("nightly", "0 2 * * *", func(cj *cronv1.CronJob) { cj.Spec.TimeZone = ptr.To("UTC") })})
	for _, args := range [][]string{
		{"suspend", "nightly"},
		{"resume", "nightly"},
		{"run", "nightly"},
		{"next", "nightly", "--count", "2"},
		{"next", "-c", "1", "nightly"},
		{"history", "nightly"},
		{"history", "nightly", "-o", "yaml"},
		{"next", "nightly", "-o", "json"},
		{"list"},
		{"list", "-o", "json"},
	} {
		code, stdout, stderr, namespace := f.cli(t, args...)
		if code != 0 || stderr != "" || stdout == "" {
			t.Errorf("%q: exit %d, stdout %q, stderr %q", args, code, stdout, stderr)
		}
		if namespace != ns {
			t.Errorf("%q: worked in namespace %q, want the kubeconfig's %q", args, namespace, ns)
		}
	}
	if ptr.Deref(f.cronJob(t, "nightly").Spec.Suspend, false) {
		t.Error("suspend then resume left the CronJob suspended")
	}
	if _, stdout, _, _ := f.cli(t, "next", "nightly", "--count", "2"); strings.Count(stdout, "Z\n") != 2 {
		t.Errorf("--count 2 printed\n%s", stdout)
	}
}

func TestCLINamespaceAndContextFlags(t *testing.T) {
	path := kubeconfig(t, "elsewhere")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"history", "nightly", "-n", ns}, ns},
		{[]string{"--namespace=" + ns, "history", "nightly"}, ns},
		{[]string{"history", "nightly"}, "elsewhere"},
		{[]string{"history", "nightly", "--context", "other"}, "from-other-context"},
		{[]string{"history", "nightly", "--kubeconfig", path, "--context", "other", "-n", ns}, ns},
	} {
		f := newFakes([]*cronv1.CronJob{newCronJob("nightly", "0 2 * * *")})
		_, _, _, namespace := f.cli(t, tc.args...)
		if namespace != tc.want {
			t.Errorf("%q: namespace %q, want %q", tc.args, namespace, tc.want)
		}
	}
}

func TestCLIRefusesABadCommandLine(t *testing.T) {
	kubeconfig(t, ns)
	f := newFakes([]*cronv1.CronJob{newCronJob("nightly", "0 2 * * *")})
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "no command given"},
		{[]string{"start", "nightly"}, `unknown command "start"`},
		{[]string{"run"}, "run takes one CronJob name, got 0 arguments"},
		{[]string{"run", "a", "b"}, "run takes one CronJob name, got 2 arguments"},
		{[]string{"histroy", "nightly"}, `unknown command "histroy" (did you mean history?)`},
		{[]string{"run", "nightly", "--count", "3"}, "unknown flag: --count"},
		{[]string{"next", "nightly", "--bogus"}, "unknown flag: --bogus"},
		{[]string{"next", "nightly", "--count", "0"}, "--count must be between 1 and 1000, not 0"},
		{[]string{"next", "nightly", "--count", "1001"}, "--count must be between 1 and 1000, not 1001"},
		{[]string{"history", "nightly", "-o", "wide"}, `--output "wide" is not one of json, yaml`},
		{[]string{"list", "nightly"}, "list takes no arguments, got 1"},
		{[]string{"list", "--all-namespace"}, "unknown flag: --all-namespace"},
	} {
		code, stdout, stderr, _ := f.cli(t, tc.args...)
		if code != 2 || stdout != "" || !strings.Contains(stderr, "error: "+tc.want) {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want exit 2 and %q", tc.args, code, stdout, stderr, tc.want)
		}
	}
	if n := len(f.cron.Actions()); n != 0 {
		t.Errorf("a bad command line made %d requests", n)
	}
}

func TestCLIReportsAFailedCommand(t *testing.T) {
	kubeconfig(t, ns)
	f := newFakes(nil)
	code, stdout, stderr, _ := f.cli(t, "history", "nope")
	if code != 1 || stdout != "" || stderr != "error: "+Resource+` "nope" not found in namespace "team-a"`+"\n" {
		t.Errorf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	code, _, stderr, _ = f.cli(t, "history", "nope", "--kubeconfig", filepath.Join(t.TempDir(), "missing"))
	if code != 1 || !strings.HasPrefix(stderr, "error: ") || strings.Count(stderr, "\n") != 1 {
		t.Errorf("a missing kubeconfig: exit %d, stderr %q", code, stderr)
	}
}

// kubectl cronjob version prints the build and needs no cluster: it works
// with a kubeconfig that reaches nothing, and calls no API.
func TestVersionPrintsTheBuildWithoutACluster(t *testing.T) {
	kubeconfig(t, ns)
	f := newFakes(nil)
	code, stdout, stderr, _ := f.cli(t, "version")
	if want := "kubectl-cronjob " + version.Get().String() + "\n"; code != 0 || stdout != want || stderr != "" {
		t.Errorf("version: exit %d, stdout %q, stderr %q; want exit 0, stdout %q", code, stdout, stderr, want)
	}
	if n := len(f.cron.Actions()) + len(f.kube.Actions()); n != 0 {
		t.Errorf("version made %d API calls, want none", n)
	}
	if code, _, stderr, _ := f.cli(t, "version", "extra"); code != 2 || !strings.Contains(stderr, "version takes no arguments") {
		t.Errorf("version extra: exit %d, stderr %q; want exit 2 and a usage error", code, stderr)
	}
}
