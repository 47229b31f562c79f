package ownwrites

import (
	"testing"
	"time"

	"k8s.io/client-go/tools/cache"
	testingclock "k8s.io/utils/clock/testing"
)

// An absence read holds for the TTL and no longer, and Forget drops it.
func TestAnAbsenceHoldsForItsTTL(t *testing.T) {
	clk := testingclock.NewFakeClock(time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC))
	a := NewAbsences(clk, time.Minute)
	key := cache.ObjectName{Namespace: "default", Name: "cj-1"}
	if a.Known(key) {
		t.Fatal("known before any read")
	}
	a.Absent(key)
	clk.Step(59 * time.Second)
	if !a.Known(key) {
		t.Error("forgotten within the TTL")
	}
	clk.Step(time.Second)
	if a.Known(key) {
		t.Error("still known at the TTL")
	}
	a.Absent(key)
	a.Forget(key)
	if a.Known(key) {
		t.Error("known after Forget")
	}
}
