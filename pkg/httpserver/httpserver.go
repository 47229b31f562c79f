// Package httpserver serves the controller's /metrics, /healthz and /readyz,
// and /debug/pprof when asked.
package httpserver

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/pprof"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"k8s.io/klog/v2"
)

// Disabled is the bind address that turns an endpoint off.
const Disabled = "0"

// Config says where each endpoint listens. Equal addresses share one
// listener; Disabled leaves the endpoints out.
type Config struct {
	MetricsAddr string
	HealthAddr  string
	Gatherer    prometheus.Gatherer
	// Ready reports readiness for /readyz (caches synced).
	Ready func() bool
	// Live reports liveness for /healthz: what the process does, and an
	// error when it is stuck (see pkg/liveness). Nil: always alive.
	Live func() (string, error)
	// Profiling adds Go's /debug/pprof handlers beside /metrics.
	Profiling bool
}

// Start listens on the configured addresses and serves until ctx ends. It
// returns once the listeners are bound, so a taken port is an error here.
func Start(ctx context.Context, cfg Config) error {
	muxes := map[string]*http.ServeMux{}
	mux := func(addr string) *http.ServeMux {
		if muxes[addr] == nil {
			muxes[addr] = http.NewServeMux()
		}
		return muxes[addr]
	}
	if cfg.MetricsAddr != Disabled && cfg.MetricsAddr != "" {
		m := mux(cfg.MetricsAddr)
		m.Handle("/metrics", promhttp.HandlerFor(cfg.Gatherer, promhttp.HandlerOpts{}))
		if cfg.Profiling {
			// Registered by hand: the package's init adds them to
			// http.DefaultServeMux, which this server does not use.
			m.HandleFunc("/debug/pprof/", pprof.Index)
			m.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
			m.HandleFunc("/debug/pprof/profile", pprof.Profile)
			m.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
			m.HandleFunc("/debug/pprof/trace", pprof.Trace)
		}
	}
	if cfg.HealthAddr != Disabled && cfg.HealthAddr != "" {
		m := mux(cfg.HealthAddr)
		m.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) {
			if cfg.Live == nil {
				fmt.Fprintln(w, "ok")
				return
			}
			state, err := cfg.Live()
			if err != nil {
				http.Error(w, state+": "+err.Error(), http.StatusServiceUnavailable)
				return
			}
			fmt.Fprintln(w, "ok:", state)
		})
		m.HandleFunc("/readyz", func(w http.ResponseWriter, _ *http.Request) {
			if !cfg.Ready() {
				http.Error(w, "informer caches not synced", http.StatusServiceUnavailable)
				return
			}
			fmt.Fprintln(w, "ok")
		})
	}
	for addr, m := range muxes {
		l, err := net.Listen("tcp", addr)
		if err != nil {
			return fmt.Errorf("listening on %s: %w", addr, err)
		}
		srv := &http.Server{Handler: m, ReadHeaderTimeout: 10 * time.Second}
		go func() {
			if err := srv.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
				klog.FromContext(ctx).Error(err, "HTTP server stopped", "address", addr)
			}
		}()
		context.AfterFunc(ctx, func() {
			shutdownCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			_ = srv.Shutdown(shutdownCtx)
		})
		klog.FromContext(ctx).Info("Serving", "address", l.Addr().String())
	}
	return nil
}
