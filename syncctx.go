package main

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
)

// leaseFence says until when, by this process's clock, the Lease is
// surely still this replica's: the start of its last successful renewal
// plus the renew deadline, short of the lease duration after which a
// standby may take it. Nil without leader election.
type leaseFence func() time.Time

// leaseValidity keeps the fence as the election loop renews the Lease
// (observedLock).
type leaseValidity struct {
	clock         clock.PassiveClock
	renewDeadline time.Duration
	until         atomic.Int64 // UnixNano; 0 before the Lease is first held
}

// renewed moves the fence to start plus the renew deadline, for a write of
// the Lease in our name that began at start and succeeded.
func (v *leaseValidity) renewed(start time.Time) {
	next := start.Add(v.renewDeadline).UnixNano()
	for {
		cur := v.until.Load()
		if cur >= next || v.until.CompareAndSwap(cur, next) {
			return
		}
	}
}

// fence is the current fence.
func (v *leaseValidity) fence() time.Time { return time.Unix(0, v.until.Load()) }

// graceContext outlives ctx, but when grace > 0 by grace at most, counted
// from the moment ctx ends. Under leader election ctx also ends when the
// Lease is lost, and once the fence has passed (see leaseGrace) another
// replica may lead: a write still in flight then would be beside it. With
// a fence the grace also ends by the fence plus grace, however late the
// loss was noticed: a process frozen past its lease (a paused VM, a long
// stop) notices only when it thaws, when another replica may lead already.
// Cutting a sync short is safe: every step is safe to crash after.
func graceContext(ctx context.Context, grace time.Duration, fence leaseFence, clk clock.Clock) (context.Context, context.CancelFunc) {
	g, cancel := context.WithCancel(context.WithoutCancel(ctx))
	if grace <= 0 {
		return g, cancel
	}
	stop := context.AfterFunc(ctx, func() {
		d := grace
		if fence != nil {
			d = min(d, fence().Add(grace).Sub(clk.Now()))
		}
		if d <= 0 {
			cancel()
			return
		}
		t := clk.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C():
			cancel()
		case <-g.Done():
		}
	})
	return g, func() { stop(); cancel() }
}

// fencedContext ends ctx once the fence plus grace has passed with no
// renewal moving it, whether or not the election loop has noticed: the
// thaw of a frozen process wakes its workers and its election loop at
// once, and a sync must not write beside the next leader meanwhile. The
// fence is read again whenever its time comes, so a leader that keeps
// renewing is never cut.
func fencedContext(ctx context.Context, fence leaseFence, grace time.Duration, clk clock.WithDelayedExecution) (context.Context, context.CancelFunc) {
	fenced, cancel := context.WithCancel(ctx)
	if fence == nil {
		return fenced, cancel
	}
	var (
		mu      sync.Mutex
		stopped bool
		timer   clock.Timer
	)
	var arm func()
	arm = func() {
		mu.Lock()
		defer mu.Unlock()
		if stopped {
			return
		}
		d := fence().Add(grace).Sub(clk.Now())
		if d <= 0 {
			cancel()
			return
		}
		// In a goroutine of its own: a fake clock runs the func with its
		// lock held, and arm reads the clock.
		timer = clk.AfterFunc(d, func() { go arm() })
	}
	arm()
	return fenced, func() {
		mu.Lock()
		stopped = true
		if timer != nil {
			timer.Stop()
		}
		mu.Unlock()
		cancel()
	}
}

// syncContext is the context one sync runs in: a graceContext, so the item
// in hand is finished when shutdown begins (within the grace under leader
// election), fenced by the Lease, and bounded by syncTimeout from now.
func syncContext(ctx context.Context, grace time.Duration, fence leaseFence, clk clock.WithDelayedExecution) (context.Context, context.CancelFunc) {
	g, stop := graceContext(ctx, grace, fence, clk)
	f, unfence := fencedContext(g, fence, grace, clk)
	syncCtx, cancel := context.WithTimeout(f, syncTimeout)
	return syncCtx, func() { cancel(); unfence(); stop() }
}

// fenced says a sync must not start: the Lease may be another's by now.
func fenced(fence leaseFence, clk clock.PassiveClock) bool {
	return fence != nil && !clk.Now().Before(fence())
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
