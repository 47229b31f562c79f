package main

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"time"

	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
)

// leaseValidity is until when, by this process's clock, the Lease is
// surely still this replica's: the start of its last successful write in
// our name plus the renew deadline and a retry period (the budget the
// grace is cut from: a leader renews a retry period after its last renewal
// returned, within the renew deadline), short of the lease duration after
// which a standby may take it. A read of the Lease in another's name
// withdraws it at once: a process whose clock stood still while it was
// frozen (a paused VM) would otherwise trust it too long. Nil, without
// leader election, fences nothing.
type leaseValidity struct {
	clock clock.PassiveClock
	span  time.Duration

	mu    sync.Mutex
	until time.Time
	lost  chan struct{} // closed when the validity is withdrawn
}

func newLeaseValidity(clk clock.PassiveClock, span time.Duration) *leaseValidity {
	return &leaseValidity{clock: clk, span: span, lost: make(chan struct{})}
}

// renewed moves the validity to start plus the span, for a write of the
// Lease in our name that began at start and succeeded.
func (v *leaseValidity) renewed(start time.Time) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if next := start.Add(v.span); next.After(v.until) {
		v.until = next
	}
}

// withdraw ends the validity now: the Lease was read in another's name.
// The syncs under way are cut (fencedContext); a later write in our name
// makes a new validity.
func (v *leaseValidity) withdraw() {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.until = time.Time{}
	close(v.lost)
	v.lost = make(chan struct{})
}

// current is the validity's end, and a channel closed if it is withdrawn.
func (v *leaseValidity) current() (time.Time, <-chan struct{}) {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.until, v.lost
}

// fence is the validity's end.
func (v *leaseValidity) fence() time.Time {
	until, _ := v.current()
	return until
}

// allows says whether a write may still go out at now, within the grace
// past the validity.
func (v *leaseValidity) allows(now time.Time, grace time.Duration) bool {
	return v == nil || now.Before(v.fence().Add(grace))
}

// graceContext outlives ctx, but when grace > 0 by grace at most, counted
// from the moment ctx ends. Under leader election ctx also ends when the
// Lease is lost, and once the fence has passed (see leaseGrace) another
// replica may lead: a write still in flight then would be beside it. With
// a fence the grace also ends by the fence plus grace, however late the
// loss was noticed: a process frozen past its lease (a paused VM, a long
// stop) notices only when it thaws, when another replica may lead already.
// Cutting a sync short is safe: every step is safe to crash after.
func graceContext(ctx context.Context, grace time.Duration, fence *leaseValidity, clk clock.Clock) (context.Context, context.CancelFunc) {
	g, cancel := context.WithCancel(context.WithoutCancel(ctx))
	if grace <= 0 {
		return g, cancel
	}
	stop := context.AfterFunc(ctx, func() {
		d := grace
		if fence != nil {
			d = min(d, fence.fence().Add(grace).Sub(clk.Now()))
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

// fencedContext ends ctx once the validity plus grace has passed with no
// renewal moving it, or at once when the validity is withdrawn, whether or
// not the election loop has noticed: the thaw of a frozen process wakes its
// workers and its election loop at once, and a sync must not write beside
// the next leader meanwhile. The validity is read again whenever its time
// comes, so a leader that keeps renewing is never cut. (The requests
// themselves are checked as they leave: fencedTransport.)
func fencedContext(ctx context.Context, fence *leaseValidity, grace time.Duration, clk clock.WithDelayedExecution) (context.Context, context.CancelFunc) {
	fenced, cancel := context.WithCancel(ctx)
	if fence == nil {
		return fenced, cancel
	}
	_, lost := fence.current()
	go func() {
		select {
		case <-lost:
			cancel()
		case <-fenced.Done():
		}
	}()
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
		d := fence.fence().Add(grace).Sub(clk.Now())
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

// errFenced is what a write gets that would leave past the Lease's
// validity and grace: the Lease may be another replica's.
var errFenced = errors.New("not sent: the leader-election Lease may be another replica's by now")

// fencedTransport checks each write as it leaves, in the goroutine that
// sends it: a context's cancellation runs on another goroutine, and a
// process thawed after a freeze may send its next request before that one
// runs. Reads go out (a standby reads too); so do the Lease's own writes,
// which decide the validity, and Events, which start no run.
type fencedTransport struct {
	next  http.RoundTripper
	fence *leaseValidity
	grace time.Duration
}

func (t *fencedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	switch req.Method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
	default:
		if !unfenced(req.URL.Path) && !t.fence.allows(t.fence.clock.Now(), t.grace) {
			if req.Body != nil {
				_ = req.Body.Close()
			}
			return nil, errFenced
		}
	}
	return t.next.RoundTrip(req)
}

// unfenced says a request path is the Lease's or an Event's.
func unfenced(path string) bool {
	if strings.HasPrefix(path, "/apis/coordination.k8s.io/") || strings.HasPrefix(path, "/apis/events.k8s.io/") {
		return true
	}
	parts := strings.Split(strings.Trim(path, "/"), "/")
	return len(parts) >= 5 && parts[0] == "api" && parts[2] == "namespaces" && parts[4] == "events"
}

// syncContext is the context one sync runs in: a graceContext, so the item
// in hand is finished when shutdown begins (within the grace under leader
// election), fenced by the Lease, and bounded by syncTimeout from now.
func syncContext(ctx context.Context, grace time.Duration, fence *leaseValidity, clk clock.WithDelayedExecution) (context.Context, context.CancelFunc) {
	g, stop := graceContext(ctx, grace, fence, clk)
	f, unfence := fencedContext(g, fence, grace, clk)
	syncCtx, cancel := context.WithTimeout(f, syncTimeout)
	return syncCtx, func() { cancel(); unfence(); stop() }
}

// fenced says a sync must not start: the Lease may be another's by now.
func fenced(fence *leaseValidity, clk clock.PassiveClock) bool {
	return fence != nil && !clk.Now().Before(fence.fence())
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
