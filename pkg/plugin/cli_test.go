package plugin

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

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
		{[]string{"suspend", "nightly", "--for", "2h", "--until", "2026-11-24T00:00:00Z"}, "--for and --until exclude one another"},
		{[]string{"suspend", "nightly", "--for", "0s"}, "--for must be more than 0 and at most 8784h (366 days), not 0s"},
		{[]string{"suspend", "nightly", "--for", "8785h"}, "--for must be more than 0 and at most 8784h (366 days), not 8785h0m0s"},
		{[]string{"suspend", "nightly", "--for", "2d"}, `invalid argument "2d" for "--for" flag`},
		{[]string{"suspend", "nightly", "--until", "noon"}, `--until: "noon" is neither an RFC 3339 time`},
		{[]string{"resume", "nightly", "--for", "2h"}, "unknown flag: --for"},
		{[]string{"skip", "nightly", "--next", "2", "--at", "2026-11-24T02:00:00Z"}, "--next, --at and --clear exclude one another"},
		{[]string{"skip", "nightly", "--at", "2026-11-24T02:00:00Z", "--clear"}, "--next, --at and --clear exclude one another"},
		{[]string{"skip", "nightly", "--next", "0"}, "--next must be between 1 and 20, not 0"},
		{[]string{"skip", "nightly", "--next", "21"}, "--next must be between 1 and 20, not 21"},
		{[]string{"skip", "nightly", "--at", "24/11/2026"}, `--at: "24/11/2026" is neither an RFC 3339 time`},
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

// The standard kubectl flags are cli-runtime's: each reaches the REST
// configuration the plugin connects with, as it would in kubectl.
func TestNamespaceFlagComesFromCliRuntime(t *testing.T) {
	kubeconfig(t, "elsewhere")
	f := newFakes([]*cronv1.CronJob{newCronJob("nightly", "0 2 * * *")})
	code, _, stderr, cfg := f.cliConfig(t, "history", "nightly", "-n", ns, "--server", "https://api.example.test:6443", "--token", "s3cret",
		"--request-timeout", "7s", "--as", "alice", "--insecure-skip-tls-verify", "--tls-server-name", "api.internal")
	if code != 0 || cfg == nil {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	if cfg.Host != "https://api.example.test:6443" || cfg.BearerToken != "s3cret" || cfg.Timeout != 7*time.Second ||
		cfg.Impersonate.UserName != "alice" || !cfg.Insecure || cfg.ServerName != "api.internal" {
		t.Errorf("the flags gave host %q, token %q, timeout %v, impersonating %q, insecure %v, server name %q",
			cfg.Host, cfg.BearerToken, cfg.Timeout, cfg.Impersonate.UserName, cfg.Insecure, cfg.ServerName)
	}
	if _, _, _, namespace := f.cli(t, "history", "nightly", "-n", ns); namespace != ns {
		t.Errorf("-n %s read the CronJob in %q", ns, namespace)
	}
	// A user and cluster of the kubeconfig by name, as kubectl's --user and --cluster.
	path := filepath.Join(t.TempDir(), "two-clusters")
	if err := os.WriteFile(path, []byte(`apiVersion: v1
kind: Config
clusters:
- {name: c1, cluster: {server: "https://one.example.test"}}
- {name: c2, cluster: {server: "https://two.example.test"}}
users:
- {name: u1, user: {token: one}}
- {name: u2, user: {token: two}}
contexts:
- {name: ctx, context: {cluster: c1, user: u1}}
current-context: ctx
`), 0o600); err != nil {
		t.Fatal(err)
	}
	_, _, stderr, cfg = f.cliConfig(t, "history", "nightly", "--kubeconfig", path, "--cluster", "c2", "--user", "u2", "-n", ns)
	if cfg == nil || cfg.Host != "https://two.example.test" || cfg.BearerToken != "two" {
		t.Errorf("--cluster c2 --user u2: %+v, stderr %q", cfg, stderr)
	}
}

// --help lists every command and kubectl's flags, on stdout, as kubectl's
// help does.
func TestHelpListsEveryCommandAndKubectlsFlags(t *testing.T) {
	f := newFakes(nil)
	code, stdout, stderr, _ := f.cli(t, "--help")
	if code != 0 || stderr != "" {
		t.Fatalf("--help: exit %d, stderr %q", code, stderr)
	}
	for _, want := range []string{"kubectl cronjob [command]", "\n  list ", "\n  run ", "\n  next ", "\n  suspend ", "\n  resume ", "\n  skip ", "\n  history ",
		"\n  version ", "\n  completion ", "-n, --namespace", "--context", "--kubeconfig", "--token", "--request-timeout"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("--help does not show %q:\n%s", want, stdout)
		}
	}
	if _, stdout, _, _ := f.cli(t, "list", "--help"); !strings.Contains(stdout, "-A, --all-namespaces") || !strings.Contains(stdout, "-o, --output") {
		t.Errorf("list --help:\n%s", stdout)
	}
	if _, stdout, _, _ := f.cli(t, "suspend", "--help"); !strings.Contains(stdout, "--for duration") || !strings.Contains(stdout, "--until string") {
		t.Errorf("suspend --help:\n%s", stdout)
	}
	if _, stdout, _, _ := f.cli(t, "skip", "--help"); !strings.Contains(stdout, "--next int") || !strings.Contains(stdout, "--at string") || !strings.Contains(stdout, "--clear") {
		t.Errorf("skip --help:\n%s", stdout)
	}
	// No command: the usage on stderr, and a bad command line.
	if code, stdout, stderr, _ := f.cli(t); code != 2 || stdout != "" || !strings.Contains(stderr, "Available Commands:") {
		t.Errorf("no command: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
}

// completion bash prints cobra's bash completion script for
// kubectl-cronjob, which bash reads without error; zsh and fish get
// theirs.
func TestCompletionBashIsAScript(t *testing.T) {
	f := newFakes(nil)
	code, stdout, stderr, _ := f.cli(t, "completion", "bash")
	if code != 0 || stderr != "" || !strings.HasPrefix(stdout, "# bash completion V2 for kubectl-cronjob") ||
		!strings.Contains(stdout, "__complete") || !strings.Contains(stdout, "complete -o default -F __start_kubectl-cronjob kubectl-cronjob") {
		t.Fatalf("completion bash: exit %d, stderr %q, printed\n%.400s", code, stderr, stdout)
	}
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash to read the script")
	}
	script := filepath.Join(t.TempDir(), "kubectl-cronjob.bash")
	if err := os.WriteFile(script, []byte(stdout), 0o600); err != nil {
		t.Fatal(err)
	}
	// Sourced, it defines the completion function and registers it.
	out, err := exec.Command(bash, "-c", "source "+script+" && complete -p kubectl-cronjob && declare -F __start_kubectl-cronjob").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "-F __start_kubectl-cronjob kubectl-cronjob") {
		t.Errorf("bash could not use the script: %v\n%s", err, out)
	}
}

func TestCompletionZshFishAndPowershellAreScripts(t *testing.T) {
	f := newFakes(nil)
	for shell, want := range map[string]string{"zsh": "#compdef kubectl-cronjob", "fish": "complete -c kubectl-cronjob",
		"powershell": "Register-ArgumentCompleter -CommandName 'kubectl-cronjob'"} {
		if code, stdout, _, _ := f.cli(t, "completion", shell); code != 0 || !strings.Contains(stdout, want) || !strings.Contains(stdout, "__complete") {
			t.Errorf("completion %s: exit %d, printed\n%.300s", shell, code, stdout)
		}
	}
}

// complete parses cobra's __complete answer: the candidates, then the
// directive line.
func complete(t *testing.T, f fakes, args ...string) (candidates []string, directive string) {
	t.Helper()
	code, stdout, _, _ := f.cli(t, append([]string{"__complete"}, args...)...)
	lines := strings.Split(strings.TrimSuffix(stdout, "\n"), "\n")
	if code != 0 || len(lines) == 0 {
		t.Fatalf("__complete %q: exit %d, printed %q", args, code, stdout)
	}
	return lines[:len(lines)-1], lines[len(lines)-1]
}

// NAME completes to the CronJobs of the namespace -n (or the kubeconfig)
// names, and never to file names; -o to the formats; -n to namespaces;
// --at and --until to the CronJob's next times that no skip holds.
func TestCompletionOffersTheNamespacesCronJobs(t *testing.T) {
	kubeconfig(t, ns)
	f := newFakes([]*cronv1.CronJob{newCronJob("nightly", "0 2 * * *", inZone("UTC")), newCronJob("nine", "0 9 * * *"),
		newCronJob("report", "0 6 * * *", inZone("UTC"), skipping(time.Date(2026, 11, 24, 6, 0, 0, 0, time.UTC))),
		newCronJob("elsewhere", "0 1 * * *", func(cj *cronv1.CronJob) { cj.Namespace = "team-b" })})
	for _, name := range []string{ns, "kube-system"} {
		if _, err := f.kube.CoreV1().Namespaces().Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	noFiles := ":" + strconv.Itoa(int(cobra.ShellCompDirectiveNoFileComp))
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"history", ""}, "nightly nine report"},
		{[]string{"run", "ni"}, "nightly nine"},
		{[]string{"next", "-n", "team-b", ""}, "elsewhere"},
		{[]string{"suspend", "nightly", ""}, ""},
		{[]string{"history", "nightly", "-o", ""}, "json yaml kyaml"},
		{[]string{"list", "-n", "team-"}, ns},
		{[]string{"skip", "ni"}, "nightly nine"},
		// Cobra leaves fixed lists to the shell to filter.
		{[]string{"suspend", "nightly", "--for", ""}, "30m 1h 2h 6h 12h 24h 48h 168h"},
		{[]string{"skip", "nightly", "--next", ""}, "1 2 3 5 10"},
		// The next times of the CronJob that no skip holds yet, in UTC.
		{[]string{"skip", "nightly", "--at", ""}, daily(2, 0, 10)},
		{[]string{"skip", "report", "--at", "2026-11-2"}, daily(6, 1, 5)},
		{[]string{"suspend", "nightly", "--until", "2026-11-24"}, daily(2, 0, 1)},
		{[]string{"skip", "--at", ""}, ""},
	} {
		got, directive := complete(t, f, tc.args...)
		if strings.Join(got, " ") != tc.want || directive != noFiles {
			t.Errorf("__complete %q: %q %s, want %q %s", tc.args, got, directive, tc.want, noFiles)
		}
	}
}

// daily is n times at h:00 UTC a day apart from the day that is from
// days after 2026-11-24, in RFC 3339, apart by spaces.
func daily(h, from, n int) string {
	var times []string
	for d := from; d < from+n; d++ {
		times = append(times, time.Date(2026, 11, 24+d, h, 0, 0, 0, time.UTC).Format(time.RFC3339))
	}
	return strings.Join(times, " ")
}

// Without a cluster to ask, completion offers nothing rather than fail.
func TestCompletionWithoutAClusterOffersNothing(t *testing.T) {
	kubeconfig(t, ns)
	f := newFakes(nil)
	got, _ := complete(t, f, "history", "--kubeconfig", filepath.Join(t.TempDir(), "missing"), "")
	if len(got) != 0 {
		t.Errorf("offered %q", got)
	}
}
