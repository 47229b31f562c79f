package httpserver

import (
	"context"
	"net"
	"net/http"
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
