package main

import (
	"context"
	"time"

	"k8s.io/utils/clock"
)

// syncContext is the context one sync runs in, bounded by syncTimeout. It
// outlives ctx, the workers' context, so the item in hand is finished when
// shutdown begins; but when grace > 0, for grace at most after ctx ends.
// Under leader election ctx also ends when the Lease is lost, and once the
// fence has passed (the lease duration minus the renew deadline) another
// replica may lead: a sync still writing then would work beside it.
// Cutting a sync short is safe: every step is safe to crash after.
func syncContext(ctx context.Context, grace time.Duration, clk clock.Clock) (context.Context, context.CancelFunc) {
	syncCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), syncTimeout)
	if grace <= 0 {
		return syncCtx, cancel
	}
	stop := context.AfterFunc(ctx, func() {
		t := clk.NewTimer(grace)
		defer t.Stop()
		select {
		case <-t.C():
			cancel()
		case <-syncCtx.Done():
		}
	})
	return syncCtx, func() { stop(); cancel() }
}
