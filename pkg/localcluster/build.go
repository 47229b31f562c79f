// Package localcluster runs a real Kubernetes control plane on a bare
// machine: etcd, kube-apiserver, kube-controller-manager (without its
// CronJob controller), kube-scheduler and kwok's simulated node, all built
// from the Go module proxy and listening on loopback only. `make run`, the
// end-to-end tests and the benchmarks share it.
package localcluster

import (
	"context"
	"embed"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// Versions of the components, as the Go module proxy serves them.
const (
	KubernetesVersion = "v1.36.3"
	EtcdVersion       = "v3.6.8"
	KwokVersion       = "v0.8.0"
)

// Binaries are the paths of the control plane's programs.
type Binaries struct {
	Etcd, APIServer, ControllerManager, Scheduler, Kwok string
	// KwokStages are kwok's stage files: node and pod lifecycles.
	KwokStages []string
}

// binaryNames carry their version so that a version bump rebuilds.
func binariesIn(dir string) Binaries {
	return Binaries{
		Etcd:              filepath.Join(dir, "etcd-"+EtcdVersion),
		APIServer:         filepath.Join(dir, "kube-apiserver-"+KubernetesVersion),
		ControllerManager: filepath.Join(dir, "kube-controller-manager-"+KubernetesVersion),
		Scheduler:         filepath.Join(dir, "kube-scheduler-"+KubernetesVersion),
		Kwok:              filepath.Join(dir, "kwok-"+KwokVersion),
	}
}

// EnsureBinaries builds the programs missing from binDir (the project's
// _output/bin) and returns their paths. root is the repository root, whose
// hack/cluster holds the modules that pin the versions. The first build
// takes about ten minutes on two cores; later calls find everything built.
func EnsureBinaries(ctx context.Context, root, binDir string, progress io.Writer) (Binaries, error) {
	b := binariesIn(binDir)
	if err := os.MkdirAll(binDir, 0o755); err != nil {
		return b, err
	}
	kubeLDFlags := strings.Join([]string{
		"-X k8s.io/component-base/version.gitVersion=" + KubernetesVersion,
		"-X k8s.io/component-base/version.gitMajor=1",
		"-X k8s.io/component-base/version.gitMinor=36",
		"-X k8s.io/component-base/version.gitTreeState=clean",
		"-X k8s.io/client-go/pkg/version.gitVersion=" + KubernetesVersion,
	}, " ")
	kubeDir := filepath.Join(root, "hack", "cluster", "kube")
	steps := []struct {
		what, dir string
		outputs   map[string]string // built name -> final path
		args      []string
		env       []string
		estimate  string
	}{
		{
			what: "etcd " + EtcdVersion, dir: filepath.Join(root, "hack", "cluster", "etcd"),
			outputs: map[string]string{"etcd": b.Etcd}, args: []string{"build", "-o", "{tmp}/etcd", "."}, estimate: "under a minute",
		},
		{
			what: "kube-apiserver, kube-controller-manager and kube-scheduler " + KubernetesVersion, dir: kubeDir,
			outputs: map[string]string{"kube-apiserver": b.APIServer, "kube-controller-manager": b.ControllerManager, "kube-scheduler": b.Scheduler},
			args: []string{"build", "-ldflags", kubeLDFlags, "-o", "{tmp}/",
				"k8s.io/kubernetes/cmd/kube-apiserver", "k8s.io/kubernetes/cmd/kube-controller-manager", "k8s.io/kubernetes/cmd/kube-scheduler"},
			estimate: "about 10 minutes on 2 cores",
		},
		{
			what: "kwok " + KwokVersion, dir: root,
			outputs: map[string]string{"kwok": b.Kwok}, args: []string{"install", "sigs.k8s.io/kwok/cmd/kwok@" + KwokVersion},
			env: []string{"GOBIN={tmp}"}, estimate: "about 2 minutes",
		},
	}
	for _, s := range steps {
		if allExist(s.outputs) {
			continue
		}
		tmp, err := os.MkdirTemp(binDir, ".build-")
		if err != nil {
			return b, err
		}
		fmt.Fprintf(progress, "localcluster: building %s (once; %s; later runs reuse %s)\n", s.what, s.estimate, binDir)
		start := time.Now()
		cmd := exec.CommandContext(ctx, "go", expand(s.args, tmp)...)
		cmd.Dir = s.dir
		cmd.Env = append(os.Environ(), expand(s.env, tmp)...)
		cmd.Stdout, cmd.Stderr = progress, progress
		if err := cmd.Run(); err != nil {
			os.RemoveAll(tmp)
			return b, fmt.Errorf("building %s: %w", s.what, err)
		}
		for name, final := range s.outputs {
			if err := os.Rename(filepath.Join(tmp, name), final); err != nil {
				os.RemoveAll(tmp)
				return b, err
			}
		}
		os.RemoveAll(tmp)
		fmt.Fprintf(progress, "localcluster: built %s in %s\n", s.what, time.Since(start).Round(time.Second))
	}

	stages, err := kwokStages(ctx, binDir)
	if err != nil {
		return b, err
	}
	b.KwokStages = stages
	return b, nil
}

func allExist(paths map[string]string) bool {
	for _, p := range paths {
		if _, err := os.Stat(p); err != nil {
			return false
		}
	}
	return true
}

func expand(args []string, tmp string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = strings.ReplaceAll(a, "{tmp}", tmp)
	}
	return out
}

// ownStages are the stage files this project adds to kwok's: how a Job's
// pod ends, read from its spec (stages/pod-exit.yaml).
//
//go:embed stages/*.yaml
var ownStages embed.FS

// kwokStages finds kwok's stage files in its module, fetched through the
// module proxy like everything else, and writes this project's own beside
// the binaries in binDir.
func kwokStages(ctx context.Context, binDir string) ([]string, error) {
	out, err := exec.CommandContext(ctx, "go", "mod", "download", "-json", "sigs.k8s.io/kwok@"+KwokVersion).Output()
	if err != nil {
		return nil, fmt.Errorf("downloading kwok's module for its stage files: %w", err)
	}
	var mod struct{ Dir string }
	if err := json.Unmarshal(out, &mod); err != nil || mod.Dir == "" {
		return nil, fmt.Errorf("reading `go mod download` output: %v", err)
	}
	stage := filepath.Join(mod.Dir, "kustomize", "stage")
	files := []string{
		filepath.Join(stage, "node", "fast", "node-initialize.yaml"),
		filepath.Join(stage, "node", "heartbeat-with-lease", "node-heartbeat-with-lease.yaml"),
		filepath.Join(stage, "pod", "fast", "pod-ready.yaml"),
		filepath.Join(stage, "pod", "fast", "pod-delete.yaml"),
	}
	for _, f := range files {
		if _, err := os.Stat(f); err != nil {
			return nil, fmt.Errorf("kwok stage file: %w", err)
		}
	}
	own, err := ownStages.ReadDir("stages")
	if err != nil {
		return nil, err
	}
	dir := filepath.Join(binDir, "kwok-stages")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	for _, e := range own {
		data, err := ownStages.ReadFile("stages/" + e.Name())
		if err != nil {
			return nil, err
		}
		path := filepath.Join(dir, e.Name())
		if err := os.WriteFile(path, data, 0o644); err != nil {
			return nil, err
		}
		files = append(files, path)
	}
	return files, nil
}
