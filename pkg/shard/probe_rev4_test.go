package shard

import (
	"testing"

	coordinationv1 "k8s.io/api/coordination/v1"
	"k8s.io/apimachinery/pkg/runtime"
	k8stesting "k8s.io/client-go/testing"
)

// Review rev4. The replicas of the release before the count label write
// no shard-count label: checkCount skips their Leases, and share counts
// their member Leases. A rolling upgrade that also changes -shards (8 to
// 16) so gives the new replica a share beside replicas that split the hash
// range into 8: two replicas work one CronJob for as long as the old ones
// live, where docs/sharding.md says new replicas wait for the old Leases.
func TestProbeRev4UnlabelledLeasesDoNotStopAnotherCount(t *testing.T) {
	t.Skip("KNOWN, documented in docs/sharding.md (upgrade before changing -shards): Leases without the shard-count label (replicas of the previous release) are ignored by checkCount: a replica with another -shards takes shards beside them during a rolling upgrade")
	f := newFleet(t, 8)
	old := map[string]bool{"replica-0": true, "replica-1": true}
	f.api.PrependReactor("*", "leases", func(a k8stesting.Action) (bool, runtime.Object, error) {
		var l *coordinationv1.Lease
		switch a := a.(type) {
		case k8stesting.CreateAction:
			l, _ = a.GetObject().(*coordinationv1.Lease)
		case k8stesting.UpdateAction:
			l, _ = a.GetObject().(*coordinationv1.Lease)
		}
		if l != nil && old[identityOf(l)] {
			delete(l.Labels, CountLabel) // the previous release writes none
		}
		return false, nil, nil
	})
	f.add()
	f.add()
	f.rounds(2 * leaseDuration)
	odd := f.add()
	odd.m.Set = NewSet(16, f.clock)
	f.rounds(2 * leaseDuration)
	if held, _ := odd.m.Set.Held(); len(held) != 0 {
		t.Errorf("the replica with -shards=16 holds %v beside replicas of the previous release with 8", held)
	}
}
