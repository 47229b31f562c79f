package httpserver

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

func status(t *testing.T, url string) int {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// /debug/pprof is there only with Profiling, on the metrics address.
func TestProfilingOnlyWhenAsked(t *testing.T) {
	for _, on := range []bool{false, true} {
		ctx, cancel := context.WithCancel(context.Background())
		addr := freeAddr(t)
		if err := Start(ctx, Config{MetricsAddr: addr, HealthAddr: Disabled, Gatherer: prometheus.NewRegistry(), Profiling: on}); err != nil {
			t.Fatal(err)
		}
		want := http.StatusNotFound
		if on {
			want = http.StatusOK
		}
		if got := status(t, "http://"+addr+"/debug/pprof/"); got != want {
			t.Errorf("Profiling=%v: /debug/pprof/ answered %d, want %d", on, got, want)
		}
		if got := status(t, "http://"+addr+"/metrics"); got != http.StatusOK {
			t.Errorf("Profiling=%v: /metrics answered %d", on, got)
		}
		cancel()
	}
}

// /healthz answers what Live says: 200 with the state while alive, 503
// with the reason once stuck; /readyz answers only for the caches.
func TestHealthzTellsWhatLiveSays(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	addr := freeAddr(t)
	var stuck atomic.Bool
	live := func() (string, error) {
		if stuck.Load() {
			return "leading for 3s", errors.New("a worker is stuck")
		}
		return "leading for 3s", nil
	}
	if err := Start(ctx, Config{MetricsAddr: Disabled, HealthAddr: addr, Ready: func() bool { return true }, Live: live}); err != nil {
		t.Fatal(err)
	}
	get := func(path string) (int, string) {
		resp, err := http.Get("http://" + addr + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, strings.TrimSpace(string(body))
	}
	if code, body := get("/healthz"); code != http.StatusOK || body != "ok: leading for 3s" {
		t.Errorf("alive: /healthz %d %q", code, body)
	}
	stuck.Store(true)
	if code, body := get("/healthz"); code != http.StatusServiceUnavailable || !strings.Contains(body, "a worker is stuck") {
		t.Errorf("stuck: /healthz %d %q", code, body)
	}
	if code, _ := get("/readyz"); code != http.StatusOK {
		t.Errorf("stuck but synced: /readyz %d, want 200", code)
	}
}
