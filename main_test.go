package main

import (
	"context"
	"runtime/debug"
	"testing"
	"time"

	"go.uber.org/goleak"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/util/flowcontrol"
	testingclock "k8s.io/utils/clock/testing"
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
