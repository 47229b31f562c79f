package main

import (
	"context"
	"testing"
	"time"

	testingclock "k8s.io/utils/clock/testing"
)

// A sync outlives the workers' context (shutdown finishes the item in
// hand), but under leader election by grace at most: past it another
// replica may lead.
func TestSyncContextEndsGraceAfterTheLease(t *testing.T) {
	clk := testingclock.NewFakeClock(time.Now())
	lease, lost := context.WithCancel(context.Background())
	syncCtx, cancel := syncContext(lease, 2*time.Second, clk)
	defer cancel()
	lost()
	// The timer is armed by a goroutine of its own: wait until it is.
	for !clk.HasWaiters() {
		time.Sleep(time.Millisecond)
	}
	if syncCtx.Err() != nil {
		t.Fatal("the sync was cut at once; it has the grace to finish")
	}
	clk.Step(1999 * time.Millisecond)
	if syncCtx.Err() != nil {
		t.Fatal("the sync was cut before its grace ran out")
	}
	clk.Step(time.Millisecond)
	select {
	case <-syncCtx.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the sync outlived the lease by more than its grace")
	}
}

// Without a grace (no leader election) the item in hand is finished
// whatever happens to the workers' context.
func TestSyncContextWithoutGraceOutlivesShutdown(t *testing.T) {
	clk := testingclock.NewFakeClock(time.Now())
	workers, stop := context.WithCancel(context.Background())
	syncCtx, cancel := syncContext(workers, 0, clk)
	defer cancel()
	stop()
	clk.Step(time.Hour)
	if syncCtx.Err() != nil {
		t.Errorf("the sync ended with the workers' context: %v", syncCtx.Err())
	}
}
