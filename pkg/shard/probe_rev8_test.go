package shard

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"
)

// Review rev8: lapsedLongAgo (cec31eb) reads another replica's renewTime,
// written by that replica's clock, against this replica's clock. Before it,
// counting members used only the observed-time rule, and docs/sharding.md
// says "clock skew between replicas does not matter". Both probes failed on
// cec31eb; since, lapsedLongAgo applies only to a Lease never seen written.

// skewedClock is a replica's own clock: the fleet's, off by skew.
type skewedClock struct {
	*clocktesting.FakeClock
	skew time.Duration
}

func (c skewedClock) Now() time.Time                  { return c.FakeClock.Now().Add(c.skew) }
func (c skewedClock) Since(t time.Time) time.Duration { return c.Now().Sub(t) }

type countMoves struct{ acquired, released, lost atomic.Int64 }

func (m *countMoves) Acquired()   { m.acquired.Add(1) }
func (m *countMoves) Released()   { m.released.Add(1) }
func (m *countMoves) Lost()       { m.lost.Add(1) }
func (m *countMoves) Held(int)    {}
func (m *countMoves) gone() int64 { return m.released.Load() + m.lost.Load() }

type skewReplica struct {
	m     *Manager
	clock skewedClock
	moves *countMoves
	every int // ticks every this many rounds
}

func addSkewed(f *fleet, skew time.Duration, every int) *skewReplica {
	c := skewedClock{FakeClock: f.clock, skew: skew}
	mv := &countMoves{}
	r := &skewReplica{clock: c, moves: mv, every: every, m: &Manager{
		Client: f.api.CoordinationV1(), Namespace: testNS, Name: "cj",
		Identity:      fmt.Sprintf("replica-%d", len(f.replicas)),
		LeaseDuration: leaseDuration, RenewDeadline: renewDeadline, RetryPeriod: retryPeriod,
		Clock: c, Set: NewSet(f.n, c), Moves: mv,
	}}
	f.replicas = append(f.replicas, &replica{m: r.m, up: false}) // not ticked by f.round
	return r
}

// skewRounds ticks the replicas (each on its own clock) for d, checking the
// fence in each replica's own frame, and returns the shares.
func skewRounds(t *testing.T, f *fleet, rs []*skewReplica, d time.Duration) []int {
	t.Helper()
	for round := range int(d / retryPeriod) {
		for _, r := range rs {
			if round%r.every == 0 {
				_ = r.m.Tick(context.Background())
				r.m.Settle()
			}
		}
		f.clock.Step(retryPeriod)
		workable := map[int]string{}
		for _, r := range rs {
			held, _ := r.m.Set.Held()
			for _, i := range held {
				if until, _ := r.m.Set.ValidUntil(i); r.clock.Now().Before(until) {
					if o, ok := workable[i]; ok {
						t.Fatalf("shard %d workable by %s and %s", i, o, r.m.Identity)
					}
					workable[i] = r.m.Identity
				}
			}
		}
	}
	var out []int
	for _, r := range rs {
		held, _ := r.m.Set.Held()
		out = append(out, len(held))
	}
	return out
}

// A replica whose clock is ahead of the others' by more than two lease
// durations (30 s with the defaults) reads every live member's renewTime as
// lapsed long ago, counts itself alone, wants every shard and never
// releases: a replica that joins it never takes its share, and one whose
// clock is behind the fleet's is never made room for. Before cec31eb the
// count used only the observed-time rule and the shares balanced.
func TestProbeRev8SkewedClockIgnoresLiveMembers(t *testing.T) {
	for _, tc := range []struct {
		name        string
		first, join time.Duration // each one's clock skew
	}{
		{name: "first replica's clock 10 s ahead, joiner right", first: 10 * time.Second},
		{name: "joiner's clock 10 s behind", join: -10 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFleet(t, 16)
			a := addSkewed(f, tc.first, 1)
			skewRounds(t, f, []*skewReplica{a}, 2*leaseDuration)
			b := addSkewed(f, tc.join, 1)
			s := skewRounds(t, f, []*skewReplica{a, b}, 10*leaseDuration)
			if !balanced(s) || s[0]+s[1] != 16 {
				t.Errorf("shares %v ten lease durations after the join, want 8 and 8", s)
			}
		})
	}
}

// A skew close to two lease durations makes the count flap: the member's
// renewTime is read as lapsed in some rounds and not in others (here the
// other replica renews every other round, as a slow or conflicting round
// does), and the skewed replica's share jumps between 8 and 16, releasing
// and retaking shards, each move a cache refill with its runs at risk.
func TestProbeRev8SkewNearThresholdFlaps(t *testing.T) {
	f := newFleet(t, 16)
	// b renews every 2 rounds (1 s); a reads b's renewTime as 5.75 s or
	// 6.25 s old: either side of 2 × 3 s.
	a := addSkewed(f, 5250*time.Millisecond, 1)
	b := addSkewed(f, 0, 2)
	skewRounds(t, f, []*skewReplica{a, b}, 4*leaseDuration)
	before := a.moves.gone() + b.moves.gone()
	s := skewRounds(t, f, []*skewReplica{a, b}, 20*leaseDuration)
	moves := a.moves.gone() + b.moves.gone() - before
	if moves != 0 {
		t.Errorf("%d shard releases/losses in 20 lease durations of a steady fleet (shares now %v), want none", moves, s)
	}
}
