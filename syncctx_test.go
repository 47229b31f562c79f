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

// The context of the last writes at shutdown (Run's flush) is made when
// the workers start: however long the controller runs before ctx ends, it
// is still live then, and ends only the grace after. (It was a
// syncContext, whose one-minute timeout ran from the start: the flush of
// a controller up for more than a minute wrote nothing.)
func TestGraceContextOutlivesAnyRunBeforeItsParentEnds(t *testing.T) {
	clk := testingclock.NewFakeClock(time.Now())
	lease, lost := context.WithCancel(context.Background())
	g, cancel := graceContext(lease, 2*time.Second, clk)
	defer cancel()
	if _, ok := g.Deadline(); ok {
		t.Fatal("the grace context has a deadline before its parent ends")
	}
	clk.Step(24 * time.Hour)
	if g.Err() != nil {
		t.Fatal("the grace context ended while its parent was live")
	}
	lost()
	for !clk.HasWaiters() {
		time.Sleep(time.Millisecond)
	}
	if g.Err() != nil {
		t.Fatal("the grace context ended at once with its parent")
	}
	clk.Step(2 * time.Second)
	select {
	case <-g.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the grace context outlived its parent by more than the grace")
	}
}
