package main

import (
	"bufio"
	"context"
	"fmt"
	"os/exec"
	"strings"
	"sync"
	"time"
)

// watcher is who sees the Jobs for the skew (-watcher): "harness", the
// harness's own watch in its process, or "kubectl", a separate `kubectl get
// jobs --watch` as a user measures from outside: its own process, its own
// connection, the server's table form of each Job. The harness's watch still
// counts the missing and the duplicates.
var watcher = "harness"

// lead, when positive (-lead), is how long before the due minute the
// CronJobs must all exist, so that the controller is idle at the minute; by
// default they are created in the minute before it.
var lead time.Duration

// dueAfterLead is the first minute at least lead plus the time n creates
// take from now.
func dueAfterLead(now time.Time, n int) time.Time {
	return now.Add(lead + createTime(n)).Truncate(time.Minute).Add(time.Minute)
}

// createTime is how long n CronJobs take to create, with a margin.
func createTime(n int) time.Duration {
	return time.Duration(15+n/250) * time.Second
}

// outsideWatch is a `kubectl get jobs --watch` in its own process.
type outsideWatch struct {
	cmd  *exec.Cmd
	mu   sync.Mutex
	seen map[string]time.Time
	more chan struct{}
}

// watchFromOutside starts kubectl watching the namespace's Jobs and returns
// once its first line (the empty list) has been read or it has had a
// second to get there: the watch is open before the minute.
func watchFromOutside(ctx context.Context, kubeconfig, ns string) (*outsideWatch, error) {
	cmd := exec.CommandContext(ctx, "kubectl", "--kubeconfig", kubeconfig, "get", "jobs", "-n", ns, "--watch", "--no-headers")
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("kubectl get jobs --watch: %w", err)
	}
	w := &outsideWatch{cmd: cmd, seen: map[string]time.Time{}, more: make(chan struct{}, 1)}
	go func() {
		lines := bufio.NewScanner(out)
		for lines.Scan() {
			at := time.Now()
			name, _, _ := strings.Cut(lines.Text(), " ")
			w.mu.Lock()
			if _, ok := w.seen[name]; !ok && name != "" {
				w.seen[name] = at
			}
			w.mu.Unlock()
			select {
			case w.more <- struct{}{}:
			default:
			}
		}
	}()
	return w, nil
}

// wait returns the Jobs seen once keep holds for n of them, or at deadline.
func (w *outsideWatch) wait(n int, keep func(string) bool, deadline time.Time) map[string]time.Time {
	timer := time.NewTimer(time.Until(deadline))
	defer timer.Stop()
	for {
		w.mu.Lock()
		kept := map[string]time.Time{}
		for name, at := range w.seen {
			if keep(name) {
				kept[name] = at
			}
		}
		w.mu.Unlock()
		if len(kept) >= n {
			return kept
		}
		select {
		case <-w.more:
		case <-timer.C:
			return kept
		}
	}
}

func (w *outsideWatch) stop() {
	_ = w.cmd.Process.Kill()
	_ = w.cmd.Wait()
}

// outsidePid is the separate watch's process, or 0 (no process) without one.
func outsidePid(w *outsideWatch) int {
	if w == nil {
		return 0
	}
	return w.cmd.Process.Pid
}
