package main

import (
	"context"
	"net"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/util/flowcontrol"
	testingclock "k8s.io/utils/clock/testing"
	"sigs.k8s.io/yaml"
)

// The controller stops everything it starts: no test may leave a goroutine.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

func TestGCPercent(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	unset := func(string) (string, bool) { return "", false }
	if got := setGCPercent(unset); got != gcPercent {
		t.Errorf("without GOGC: %d, want %d", got, gcPercent)
	}
	if now := debug.SetGCPercent(gcPercent); now != gcPercent {
		t.Errorf("the runtime runs with GOGC %d, want %d", now, gcPercent)
	}

	debug.SetGCPercent(200) // as the runtime would have it from GOGC=200
	set := func(string) (string, bool) { return "200", true }
	if got := setGCPercent(set); got != 200 {
		t.Errorf("with GOGC=200: %d, want it left alone", got)
	}
	if now := debug.SetGCPercent(200); now != 200 {
		t.Errorf("the runtime runs with GOGC %d, want 200", now)
	}
}

// The default client limits are a safety net, not the pace: a firing of
// 10,000 CronJobs (a create, a status write and a release each) passes
// without waiting on the client, and what paces a burst is the API server,
// whose priority and fairness answers 429 with Retry-After (see
// TestSurvivesThrottleStorm in test/e2e).
func TestDefaultClientLimitsDoNotPaceAFiring(t *testing.T) {
	limiter := flowcontrol.NewTokenBucketRateLimiterWithClock(float32(defaultKubeAPIQPS), defaultKubeAPIBurst, testingclock.NewFakeClock(time.Unix(0, 0)))
	for i := range 3 * 10000 {
		if !limiter.TryAccept() {
			t.Fatalf("request %d of a firing of 10,000 CronJobs waits on the client", i+1)
		}
	}
}

// Events recorded after the signal (the last syncs, the held Events flushed
// at shutdown) still reach the sink: the broadcaster stops at its Shutdown,
// not with the signal's context.
func TestEventBroadcasterOutlivesTheSignal(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	b := newEventBroadcaster(ctx)
	defer b.Shutdown()
	got := make(chan *corev1.Event, 1)
	b.StartEventWatcher(func(e *corev1.Event) { got <- e })
	cancel() // SIGTERM
	b.NewRecorder(scheme.Scheme, corev1.EventSource{Component: controllerAgentName}).
		Event(&corev1.ObjectReference{Kind: "CronJob", Namespace: "default", Name: "cj"}, corev1.EventTypeNormal, "Late", "after the signal")
	select {
	case e := <-got:
		if e.Reason != "Late" {
			t.Errorf("event %q, want Late", e.Reason)
		}
	case <-time.After(wait.ForeverTestTimeout):
		t.Fatal("an Event recorded after the signal never reached the sink")
	}
}

// The shipped Deployment asks /healthz for liveness and /readyz for
// readiness, on the port its -health-probe-bind-address serves, and gives
// a stuck process (docs/deploying.md, "What the probes say") no more than
// three failed probes, ten seconds apart.
func TestShippedProbesAskWhatTheProcessAnswers(t *testing.T) {
	data, err := os.ReadFile("artifacts/deploy/20-deployment.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var d appsv1.Deployment
	if err := yaml.UnmarshalStrict(data, &d); err != nil {
		t.Fatal(err)
	}
	c := d.Spec.Template.Spec.Containers[0]
	var healthPort int32
	for _, a := range c.Args {
		if addr, ok := strings.CutPrefix(a, "-health-probe-bind-address="); ok {
			_, port, err := net.SplitHostPort(addr)
			if err != nil {
				t.Fatal(err)
			}
			p, _ := strconv.Atoi(port)
			healthPort = int32(p)
		}
	}
	port := func(p *corev1.Probe) int32 {
		for _, cp := range c.Ports {
			if cp.Name == p.HTTPGet.Port.String() || cp.ContainerPort == p.HTTPGet.Port.IntVal {
				return cp.ContainerPort
			}
		}
		return 0
	}
	live, ready := c.LivenessProbe, c.ReadinessProbe
	if live == nil || live.HTTPGet == nil || live.HTTPGet.Path != "/healthz" || port(live) != healthPort {
		t.Errorf("liveness probe %+v, want /healthz on %d", live, healthPort)
	}
	if ready == nil || ready.HTTPGet == nil || ready.HTTPGet.Path != "/readyz" || port(ready) != healthPort {
		t.Errorf("readiness probe %+v, want /readyz on %d", ready, healthPort)
	}
	if live != nil && (live.PeriodSeconds != 10 || live.FailureThreshold != 3) {
		t.Errorf("liveness every %d s, %d failures, want every 10 s, 3 failures (docs/deploying.md)", live.PeriodSeconds, live.FailureThreshold)
	}
}
