package shard

// Clock skew between replicas. A replica reads another's renewTime, written
// by that replica's clock, against its own; docs/sharding.md says clock skew
// between replicas does not matter. So a Lease seen written counts as a live
// member by the time this replica observed it (lapsedLongAgo applies only to
// a Lease never seen written), and skew neither unbalances the shares nor
// moves shards.

import (
	"testing"
	"time"
)

// Replicas whose clocks differ still balance the shards. A replica that
// read live members' renewTimes by its own clock, ahead of theirs by more
// than two lease durations, would count itself alone, want every shard and
// never release: a replica joining it would never take its share, and one
// whose clock is behind the fleet's would never be made room for. Counting
// members by when this replica observed their Leases written keeps the
// shares even.
func TestSkewedClockStillCountsLiveMembers(t *testing.T) {
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

// A skew close to two lease durations must not make the member count flap.
// Were the member's renewTime read as lapsed in some rounds and not in
// others (here the other replica renews every other round, as a slow or
// conflicting round does), the skewed replica's share would jump between 8
// and 16, releasing and retaking shards, each move a cache refill with its
// runs at risk. A steady fleet moves no shard.
func TestSkewNearThresholdMovesNoShards(t *testing.T) {
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
