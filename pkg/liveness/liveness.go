// Package liveness is what /healthz answers: whether this process is doing
// one of the things it may be doing (working, leading, campaigning for the
// Lease, working its shards, stepping down, shutting down on a signal), and
// whether what it does still moves. A process that is none of these, or
// whose syncs or election loop stopped moving, is not alive: the kubelet's
// liveness probe then restarts it. An API server that does not answer is no
// reason to fail: a restart would not bring it back, and it would throw away
// warm caches just when they are worth most.
package liveness

import (
	"fmt"
	"sync"
	"time"

	"k8s.io/utils/clock"
)

// Role is what the process is doing.
type Role string

const (
	// Starting: checking the API server and filling the caches.
	Starting Role = "starting"
	// Working: running without leader election or shards; every replica works.
	Working Role = "working"
	// Campaigning: a standby, trying to acquire the Lease.
	Campaigning Role = "campaigning"
	// Leading: holding the Lease and working.
	Leading Role = "leading"
	// SteppingDown: the Lease was lost; the work is stopping before the
	// process campaigns again.
	SteppingDown Role = "stepping down"
	// Sharing: with -shards, working the shards whose Leases it holds.
	Sharing Role = "working its shards"
	// ShuttingDown: a signal came; the process is on its way out.
	ShuttingDown Role = "shutting down"
)

// Bounds say how long each kind of progress may pause before the process
// counts as stuck. Zero turns a check off.
type Bounds struct {
	// Election is the longest the election loop (or, with -shards, the
	// shard lease loop) may go without trying to read or write a Lease,
	// while it campaigns, leads or works its shards.
	Election time.Duration
	// StepDown is the longest the work may take to stop once the Lease
	// is lost.
	StepDown time.Duration
	// Sync is the longest one sync may run: far past the timeout its
	// context carries, so only a worker stuck outside it trips it.
	Sync time.Duration
}

// Probe tracks the process's role and progress. A nil *Probe ignores
// everything and is always alive, so code under test needs none.
type Probe struct {
	clock  clock.PassiveClock
	bounds Bounds

	mu       sync.Mutex
	role     Role
	since    time.Time
	election time.Time // the last election attempt, started or finished
	nextSync uint64
	syncs    map[uint64]time.Time // the syncs under way, by when they started
}

// New returns a probe in role Starting.
func New(clk clock.PassiveClock, b Bounds) *Probe {
	now := clk.Now()
	return &Probe{clock: clk, bounds: b, role: Starting, since: now, election: now, syncs: map[uint64]time.Time{}}
}

// Set changes the role. ShuttingDown is for good: nothing after it changes
// the role back.
func (p *Probe) Set(r Role) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.role == ShuttingDown || p.role == r {
		return
	}
	now := p.clock.Now()
	p.role, p.since = r, now
	// A loop that just began has made no attempt yet: its bound starts now.
	p.election = now
}

// Role returns the current role and since when it holds.
func (p *Probe) Role() (Role, time.Time) {
	if p == nil {
		return Working, time.Time{}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.role, p.since
}

// ElectionAttempt records that the election loop tried to read or write a
// Lease (at the start of the call and again at its end).
func (p *Probe) ElectionAttempt() {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.election = p.clock.Now()
}

// SyncStarted records a sync under way until the returned func is called.
func (p *Probe) SyncStarted() (done func()) {
	if p == nil {
		return func() {}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	id := p.nextSync
	p.nextSync++
	p.syncs[id] = p.clock.Now()
	return func() {
		p.mu.Lock()
		defer p.mu.Unlock()
		delete(p.syncs, id)
	}
}

// Check says what the process does, and an error when it is stuck.
func (p *Probe) Check() (string, error) {
	if p == nil {
		return string(Working), nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.clock.Now()
	state := fmt.Sprintf("%s for %s", p.role, now.Sub(p.since).Round(time.Second))
	switch p.role {
	case ShuttingDown, Starting:
		return state, nil
	case SteppingDown:
		if b := p.bounds.StepDown; b > 0 && now.Sub(p.since) > b {
			return state, fmt.Errorf("lost the Lease %s ago and the work has not stopped (bound %s)", now.Sub(p.since).Round(time.Second), b)
		}
	case Campaigning, Leading, Sharing:
		if b := p.bounds.Election; b > 0 && now.Sub(p.election) > b {
			return state, fmt.Errorf("%s, but no Lease was read or written for %s (bound %s)", p.role, now.Sub(p.election).Round(time.Second), b)
		}
	}
	if b := p.bounds.Sync; b > 0 {
		for _, started := range p.syncs {
			if now.Sub(started) > b {
				return state, fmt.Errorf("a sync has run for %s (bound %s): a worker is stuck", now.Sub(started).Round(time.Second), b)
			}
		}
	}
	return state, nil
}
