package localcluster

import (
	"os/exec"
	"testing"
)

// Pid names a running component's process, and none once it has exited:
// its pid may belong to another process by then.
func TestPidOfRunningAndExitedComponents(t *testing.T) {
	cmd := exec.Command("sleep", "60")
	if err := cmd.Start(); err != nil {
		t.Skipf("no sleep to run: %v", err)
	}
	p := &proc{cmd: cmd, done: make(chan struct{})}
	c := &Cluster{procs: map[string]*proc{"etcd": p}}

	if got, want := c.Pid("etcd"), cmd.Process.Pid; got != want {
		t.Errorf("Pid of the running component = %d, want %d", got, want)
	}
	if got := c.Pid("kube-apiserver"); got != 0 {
		t.Errorf("Pid of a component never started = %d, want 0", got)
	}
	_ = cmd.Process.Kill()
	p.err = cmd.Wait()
	close(p.done)
	if got := c.Pid("etcd"); got != 0 {
		t.Errorf("Pid of an exited component = %d, want 0", got)
	}
}
