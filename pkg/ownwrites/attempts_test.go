package ownwrites

import (
	"testing"
	"time"

	"k8s.io/client-go/tools/cache"
	testingclock "k8s.io/utils/clock/testing"
)

func TestAttempts(t *testing.T) {
	clk := testingclock.NewFakeClock(time.Unix(1000, 0))
	a := NewAttempts(clk, time.Minute)
	x := cache.ObjectName{Namespace: "ns", Name: "x"}
	y := cache.ObjectName{Namespace: "ns", Name: "y"}
	a.Failed(x, "owner-1")
	a.Failed(y, "owner-2")
	if got := a.Of("owner-1"); len(got) != 1 || got[0] != x {
		t.Fatalf("Of(owner-1) = %v, want [x]", got)
	}
	a.Forget(x)
	if got := a.Of("owner-1"); len(got) != 0 {
		t.Errorf("after Forget: %v", got)
	}
	clk.Step(time.Minute)
	if got := a.Of("owner-2"); len(got) != 0 {
		t.Errorf("after the TTL: %v", got)
	}
}
