package main

import (
	"context"
	"errors"
	"time"

	"k8s.io/klog/v2"
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

// errNextRunDue ends the part of a sync that follows its creates (the
// status write, releasing finalizers, pruning the history) when the
// CronJob's next run comes due first.
var errNextRunDue = errors.New("the CronJob's next run is due")

// minTidyTime is how long the part of a sync after its creates may always
// take, even when the next run is due sooner: the status write gets its
// chance when the creates themselves were slow.
const minTidyTime = time.Second

// untilNextRun bounds ctx, on clk, to end with errNextRunDue at next (but
// not before minTidyTime from now); a zero next leaves it unbounded. The
// work a sync does after starting its runs is bookkeeping that the next
// sync redoes from what it finds, while client-go waits out each 429's
// Retry-After inside the call: a request the API server keeps refusing
// would otherwise hold the CronJob's worker, and its next run, for as long.
func untilNextRun(ctx context.Context, clk clock.WithDelayedExecution, next time.Time) (context.Context, context.CancelFunc) {
	bounded, cancel := context.WithCancelCause(ctx)
	if next.IsZero() {
		return bounded, func() { cancel(nil) }
	}
	t := clk.AfterFunc(max(next.Sub(clk.Now()), minTidyTime), func() { cancel(errNextRunDue) })
	return bounded, func() { t.Stop(); cancel(nil) }
}

// leftForNextRun says err is what a request got because untilNextRun ended
// ctx: the work is left for the next sync, and is no failure.
func leftForNextRun(ctx context.Context, err error) bool {
	return err != nil && errors.Is(context.Cause(ctx), errNextRunDue)
}

// leftOrFailed drops err when untilNextRun ended ctx: what failed is left
// for the next sync, due now.
func leftOrFailed(ctx context.Context, err error) error {
	if leftForNextRun(ctx, err) {
		klog.FromContext(ctx).V(2).Info("Left for the next sync: the next run is due", "err", err)
		return nil
	}
	return err
}
