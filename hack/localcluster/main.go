// Command localcluster builds and runs the embedded local control plane
// (see pkg/localcluster).
//
//	localcluster build                          build the control plane's binaries
//	localcluster up [-fresh]                    run the control plane until Ctrl-C
//	localcluster run [-fresh] -- CMD [ARGS...]  run it, apply the CRD and the sample
//	                                            CronJob, and run CMD with KUBECONFIG set
//
// The cluster's state (_output/local-cluster) is kept from one run to the
// next; -fresh starts from an empty one. One run at a time uses it.
// Every component dies with this process, however it ends.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/cronjob-controller/cronjob-controller/pkg/localcluster"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "localcluster:", err)
		os.Exit(1)
	}
}

func run() error {
	if len(os.Args) < 2 {
		return errors.New("usage: localcluster build | up [-fresh] | run [-fresh] -- CMD [ARGS...]")
	}
	root, err := repoRoot()
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()

	bins, err := localcluster.EnsureBinaries(ctx, root, filepath.Join(root, "_output", "bin"), os.Stderr)
	if err != nil {
		return err
	}
	if os.Args[1] == "build" {
		return nil
	}

	dir := filepath.Join(root, "_output", "local-cluster")
	unlock, err := lockState(dir)
	if err != nil {
		return err
	}
	defer unlock()
	fresh := len(os.Args) > 2 && os.Args[2] == "-fresh"
	if _, err := os.Stat(filepath.Join(dir, "etcd")); err == nil {
		if fresh {
			fmt.Fprintf(os.Stderr, "localcluster: -fresh: deleting %s, and with it everything the last run made\n", dir)
			if err := os.RemoveAll(dir); err != nil {
				return err
			}
		} else {
			fmt.Fprintf(os.Stderr, "localcluster: reusing %s: what the last run made is still there (make run-fresh starts from nothing)\n", dir)
		}
	}
	cluster, err := localcluster.Start(ctx, localcluster.Config{Binaries: bins, Dir: dir, Progress: os.Stderr})
	if err != nil {
		return err
	}
	defer cluster.Stop()

	switch os.Args[1] {
	case "up":
		// Nothing is installed yet: say how to, before how to look.
		fmt.Fprintf(os.Stderr, "localcluster: install the CRD with: kubectl --kubeconfig %s apply -f artifacts/examples/crd.yaml\n", cluster.Kubeconfig)
		fmt.Fprintf(os.Stderr, "localcluster: then look around with: kubectl --kubeconfig %s get cronjobs.batch.tutorial.kubebuilder.io,jobs,pods\n", cluster.Kubeconfig)
		fmt.Fprintln(os.Stderr, "localcluster: running; Ctrl-C stops it")
		<-ctx.Done()
		return nil
	case "run":
		args := os.Args[2:]
		if len(args) > 0 && args[0] == "-fresh" {
			args = args[1:]
		}
		if len(args) > 0 && args[0] == "--" {
			args = args[1:]
		}
		if len(args) == 0 {
			return errors.New("run needs a command after --")
		}
		fmt.Fprintf(os.Stderr, "localcluster: look around with: kubectl --kubeconfig %s get cronjobs.batch.tutorial.kubebuilder.io,jobs,pods\n", cluster.Kubeconfig)
		return runWorkload(ctx, root, cluster.Kubeconfig, args)
	default:
		return fmt.Errorf("unknown command %q", os.Args[1])
	}
}

// runWorkload applies the CRD and the sample, then runs the command until
// it exits or a signal arrives, which it passes on.
func runWorkload(ctx context.Context, root, kubeconfig string, args []string) error {
	kubectl := func(a ...string) error {
		cmd := exec.CommandContext(ctx, "kubectl", append([]string{"--kubeconfig", kubeconfig}, a...)...)
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
		return cmd.Run()
	}
	examples := filepath.Join(root, "artifacts", "examples")
	if err := kubectl("apply", "-f", filepath.Join(examples, "crd.yaml")); err != nil {
		return err
	}
	// kubectl wait fails while the new CRD has no conditions yet; give the
	// API server a moment to set them. Those early failures are expected,
	// so only the last one is shown, and only if waiting fails for good.
	var err error
	var out []byte
	for range 20 {
		wait := exec.CommandContext(ctx, "kubectl", "--kubeconfig", kubeconfig,
			"wait", "--for=condition=Established", "--timeout=30s", "crd/cronjobs.batch.tutorial.kubebuilder.io")
		if out, err = wait.CombinedOutput(); err == nil {
			break
		}
		time.Sleep(500 * time.Millisecond)
	}
	if err != nil {
		os.Stderr.Write(out)
		return err
	}
	if err := kubectl("apply", "-f", filepath.Join(examples, "cronjob.yaml")); err != nil {
		return err
	}

	cmd := exec.Command(args[0], args[1:]...)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+kubeconfig)
	cmd.Stdout, cmd.Stderr, cmd.Stdin = os.Stdout, os.Stderr, os.Stdin
	// Its own process group: Ctrl-C reaches it once, from us, after which
	// it stops the way it would in production.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return err
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	select {
	case err := <-exited:
		return err
	case <-ctx.Done():
		_ = cmd.Process.Signal(syscall.SIGTERM)
		return <-exited
	}
}

// lockState takes the lock of the cluster state in dir, or says which
// other run holds it: two runs on one etcd data directory would corrupt
// it, and a -fresh one would delete the other's.
func lockState(dir string) (unlock func(), _ error) {
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(dir+".lock", os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("another make run (or localcluster up) is using %s: stop it first (Ctrl-C in its terminal)", dir)
		}
		return nil, err
	}
	return func() { f.Close() }, nil
}

// repoRoot is the directory of the main module's go.mod.
func repoRoot() (string, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("finding the repository root: %w", err)
	}
	gomod := string(out)
	if len(gomod) > 0 && gomod[len(gomod)-1] == '\n' {
		gomod = gomod[:len(gomod)-1]
	}
	if gomod == "" || gomod == os.DevNull {
		return "", errors.New("run from inside the repository")
	}
	return filepath.Dir(gomod), nil
}
