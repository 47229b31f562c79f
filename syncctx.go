package main

import (
	"context"
	"time"

	"k8s.io/utils/clock"
)

// graceContext outlives ctx, but when grace > 0 by grace at most, counted
// from the moment ctx ends. Under leader election ctx also ends when the
// Lease is lost, and once the fence has passed (see leaseGrace) another
// replica may lead: a write still in flight then would be beside it.
// Cutting a sync short is safe: every step is safe to crash after.
func graceContext(ctx context.Context, grace time.Duration, clk clock.Clock) (context.Context, context.CancelFunc) {
	g, cancel := context.WithCancel(context.WithoutCancel(ctx))
	if grace <= 0 {
		return g, cancel
	}
	stop := context.AfterFunc(ctx, func() {
		t := clk.NewTimer(grace)
		defer t.Stop()
		select {
		case <-t.C():
			cancel()
		case <-g.Done():
		}
	})
	return g, func() { stop(); cancel() }
}

// syncContext is the context one sync runs in: a graceContext, so the item
// in hand is finished when shutdown begins (within the grace under leader
// election), bounded by syncTimeout from now.
func syncContext(ctx context.Context, grace time.Duration, clk clock.Clock) (context.Context, context.CancelFunc) {
	g, stop := graceContext(ctx, grace, clk)
	syncCtx, cancel := context.WithTimeout(g, syncTimeout)
	return syncCtx, func() { cancel(); stop() }
}
