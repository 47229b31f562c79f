package main

import (
	"context"
	"slices"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	cronv1 "github.com/cronjob-controller/cronjob-controller/pkg/apis/batch/v1"
	"github.com/cronjob-controller/cronjob-controller/pkg/planner"
)

// Events in a burst. When many CronJobs are due at once, an Event is a write
// on the API server like a Job's create, and the creates go first: a sync
// that starts a Job while other CronJobs wait in the queue holds its Events
// (as its status write waits, see syncHandler). A feeder records them once
// the queue drains, and every heldEventsMaxWait while it stays busy, paced:
// client-go's broadcaster queues at most 1000 Events and drops what comes on
// top while its sink writes them one at a time.
//
// A CronJob with Events held has its later Events held behind them, so its
// Events are recorded in the order they happened (the recorder stamps an
// Event when it is recorded).
const (
	heldEventsPerSecond = 200
	heldEventsBurst     = 500
	heldEventsMaxWait   = 10 * time.Second
	// maxHeldEvents bounds what is held; past it Events are recorded at once,
	// but for a CronJob with Events held, whose order comes first (so the bound
	// can be passed by one sync's Events per such CronJob).
	maxHeldEvents = 100_000
)

// heldEvents holds Events for later. It is safe for concurrent use.
type heldEvents struct {
	mu     sync.Mutex
	events []heldEvent
	// perCronJob counts each CronJob's Events held or being recorded.
	perCronJob map[types.UID]int
	// ready is signalled when the queue drains with Events held.
	ready chan struct{}
	// pace spaces out the Events handed to the recorder; only the feeder
	// (or a test in its place) uses it.
	pace *pacer
}

func newHeldEvents(clk clock.Clock) *heldEvents {
	return &heldEvents{
		perCronJob: map[types.UID]int{},
		ready:      make(chan struct{}, 1),
		pace:       newPacer(clk, heldEventsPerSecond, heldEventsBurst),
	}
}

type heldEvent struct {
	// about is a reference, not the CronJob: a burst holds thousands.
	about *corev1.ObjectReference
	event planner.Event
	// at is when it was held.
	at time.Time
}

// hold keeps events about cj when burst says so or cj has Events held
// already, and says whether it did.
func (h *heldEvents) hold(cj *cronv1.CronJob, events []planner.Event, burst bool, now time.Time) bool {
	if len(events) == 0 {
		return true
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if !burst && h.perCronJob[cj.UID] == 0 {
		return false
	}
	if h.perCronJob[cj.UID] == 0 && len(h.events)+len(events) > maxHeldEvents {
		return false // full: recorded at once (one with Events held still waits behind them)
	}
	if last := len(h.events) - 1; last >= 0 && now.Before(h.events[last].at) {
		now = h.events[last].at // held in order, for take's search
	}
	about := cronJobRef(cj)
	for _, e := range events {
		h.events = append(h.events, heldEvent{about: about, event: e, at: now})
	}
	h.perCronJob[cj.UID] += len(events)
	return true
}

// drained says the queue is empty: held Events may go.
func (h *heldEvents) drained() {
	h.mu.Lock()
	held := len(h.events) > 0
	h.mu.Unlock()
	if held {
		select {
		case h.ready <- struct{}{}:
		default:
		}
	}
}

// take returns the Events held at or before heldBy (all: the zero time),
// oldest first, and forgets them; each counts as held for its CronJob until
// recorded says it went.
func (h *heldEvents) take(heldBy time.Time) []heldEvent {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := len(h.events)
	if !heldBy.IsZero() {
		// Held in order (put back ones first, and they are older).
		n, _ = slices.BinarySearchFunc(h.events, heldBy, func(e heldEvent, t time.Time) int {
			if e.at.After(t) {
				return 1
			}
			return -1
		})
	}
	out := h.events[:n:n]
	h.events = slices.Clone(h.events[n:])
	return out
}

// putBack holds events again, before any held since.
func (h *heldEvents) putBack(events []heldEvent) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.events = append(events, h.events...)
}

// recorded says one taken Event went to the recorder.
func (h *heldEvents) recorded(e heldEvent) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.perCronJob[e.about.UID]--; h.perCronJob[e.about.UID] <= 0 {
		delete(h.perCronJob, e.about.UID)
	}
}

// cronJobRef is what an Event about cj names.
func cronJobRef(cj *cronv1.CronJob) *corev1.ObjectReference {
	return &corev1.ObjectReference{
		APIVersion: cronv1.SchemeGroupVersion.String(), Kind: "CronJob",
		Namespace: cj.Namespace, Name: cj.Name, UID: cj.UID, ResourceVersion: cj.ResourceVersion,
	}
}

// report emits the plan's Events, or holds them in a burst (hold).
func (c *Controller) report(cj *cronv1.CronJob, plan *planner.Plan, hold bool) {
	if c.heldEvents.hold(cj, plan.Events, hold, c.clock.Now()) {
		return
	}
	for _, e := range plan.Events {
		c.recorder.Event(cj, e.Type, e.Reason, e.Message)
	}
}

// feedHeldEvents records held Events, paced, each time the queue drains,
// and those held heldEventsMaxWait or longer on a tick of that period (not
// a burst's young ones: the burst's creates still go first), until ctx
// ends; what is left then is recorded at shutdown (flushDeferred).
func (c *Controller) feedHeldEvents(ctx context.Context) {
	tick := c.clock.NewTicker(heldEventsMaxWait)
	defer tick.Stop()
	for {
		var heldBy time.Time
		select {
		case <-ctx.Done():
			return
		case <-c.heldEvents.ready:
		case <-tick.C():
			heldBy = c.clock.Now().Add(-heldEventsMaxWait)
		}
		if !c.recordHeldEvents(ctx, heldBy) {
			return
		}
	}
}

// recordHeldEvents records the Events held at or before heldBy (all: the
// zero time), paced, while ctx lasts; it says whether it recorded them all
// (if not, the rest are held again).
func (c *Controller) recordHeldEvents(ctx context.Context, heldBy time.Time) bool {
	events := c.heldEvents.take(heldBy)
	for i, h := range events {
		if c.heldEvents.pace.wait(ctx) != nil {
			c.heldEvents.putBack(events[i:])
			return false
		}
		c.recorder.Event(h.about, h.event.Type, h.event.Reason, h.event.Message)
		c.heldEvents.recorded(h)
	}
	return true
}

// flushHeldEvents records every Event still held, at once: the workers
// have stopped, and shutdown does not wait on the pace. The broadcaster
// writes what it can until the process ends; it may drop some of a large
// burst (Events are best effort).
func (c *Controller) flushHeldEvents(ctx context.Context) {
	events := c.heldEvents.take(time.Time{})
	if len(events) > heldEventsBurst {
		klog.FromContext(ctx).Info("Recording held Events at shutdown; the broadcaster may drop some", "events", len(events))
	}
	for _, h := range events {
		c.recorder.Event(h.about, h.event.Type, h.event.Reason, h.event.Message)
		c.heldEvents.recorded(h)
	}
}

// pacer is a token bucket on the injected clock: rate tokens a second, at
// most burst at once. It is not safe for concurrent use.
type pacer struct {
	clock  clock.Clock
	rate   float64
	burst  float64
	tokens float64
	last   time.Time
}

func newPacer(clk clock.Clock, rate, burst float64) *pacer {
	return &pacer{clock: clk, rate: rate, burst: burst, tokens: burst, last: clk.Now()}
}

// wait takes a token, waiting for one while ctx lasts.
func (p *pacer) wait(ctx context.Context) error {
	for {
		now := p.clock.Now()
		if elapsed := now.Sub(p.last); elapsed > 0 {
			p.tokens = min(p.burst, p.tokens+elapsed.Seconds()*p.rate)
		}
		p.last = now
		if p.tokens >= 1 {
			p.tokens--
			return nil
		}
		need := time.Duration((1 - p.tokens) / p.rate * float64(time.Second))
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-p.clock.After(need):
		}
	}
}

// newEventBroadcaster returns a broadcaster that lives until its Shutdown,
// not until ctx ends: the syncs that finish after a SIGTERM, and the Events
// held in a burst (flushed when the workers stop), still record theirs.
func newEventBroadcaster(ctx context.Context) record.EventBroadcaster {
	return record.NewBroadcaster(record.WithContext(context.WithoutCancel(ctx)))
}

// followedEventVerbosity is the -v at which the Events a user follows a
// CronJob by are logged, one line each: a Job finished, a run missed.
// make run passes it, so its terminal shows a CronJob's life. A Job created
// is logged at this -v by the create itself ("Created Job"), so its Event,
// as every other, is logged at eventLogVerbosity.
const followedEventVerbosity = 2

// followedEventReasons are the Events logged at followedEventVerbosity.
var followedEventReasons = map[string]bool{
	planner.ReasonSawCompletedJob:    true,
	planner.ReasonMissSchedule:       true,
	planner.ReasonTooManyMissedTimes: true,
	planner.ReasonRunExcluded:        true,
	planner.ReasonRunHeld:            true,
	planner.ReasonPaused:             true,
	planner.ReasonTrialRun:           true,
	planner.ReasonResumed:            true,
}

// startEventLogging logs each Event the broadcaster records, as
// StartStructuredLogging does, at followedEventVerbosity for the
// followedEventReasons and at eventLogVerbosity for the others.
func startEventLogging(b record.EventBroadcaster, logger klog.Logger) watch.Interface {
	return b.StartEventWatcher(func(e *corev1.Event) { logEvent(logger, e) })
}

func logEvent(logger klog.Logger, e *corev1.Event) {
	v := eventLogVerbosity
	if followedEventReasons[e.Reason] {
		v = followedEventVerbosity
	}
	if l := logger.V(v); l.Enabled() {
		l.Info("Event occurred", "object", klog.KRef(e.InvolvedObject.Namespace, e.InvolvedObject.Name),
			"kind", e.InvolvedObject.Kind, "type", e.Type, "reason", e.Reason, "message", e.Message)
	}
}
