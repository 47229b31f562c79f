package ownwrites

import (
	"maps"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
)

// Deletes holds the UIDs of objects this process deleted, until the cache
// drops them (Forget) or a TTL passes, so a sync on a lagging cache does not
// act on an object it has just deleted. It is safe for concurrent use.
type Deletes struct {
	clock clock.PassiveClock
	ttl   time.Duration

	mu sync.Mutex
	// uids holds when each object was deleted.
	uids    map[types.UID]time.Time
	records int
}

// NewDeletes returns a Deletes whose entries live at most ttl.
func NewDeletes(clk clock.PassiveClock, ttl time.Duration) *Deletes {
	return &Deletes{clock: clk, ttl: ttl, uids: map[types.UID]time.Time{}}
}

// Deleted records that this process deleted the object with uid.
func (d *Deletes) Deleted(uid types.UID) {
	d.mu.Lock()
	defer d.mu.Unlock()
	now := d.clock.Now()
	// A sweep costs every entry held: once per sweepEvery records, not at
	// each, or a burst of N releases awaiting their echoes costs N².
	if d.records++; d.records%sweepEvery == 0 {
		maps.DeleteFunc(d.uids, func(_ types.UID, at time.Time) bool { return !at.Add(d.ttl).After(now) })
	}
	d.uids[uid] = now
}

// Has reports whether this process deleted the object with uid and the
// cache may still show it.
func (d *Deletes) Has(uid types.UID) bool {
	_, ok := d.At(uid)
	return ok
}

// At is when this process deleted the object with uid, while the cache
// may still show it; false otherwise.
func (d *Deletes) At(uid types.UID) (time.Time, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	at, ok := d.uids[uid]
	if !ok || !d.clock.Now().Before(at.Add(d.ttl)) {
		return time.Time{}, false
	}
	return at, true
}

// Forget drops uid, once the cache has seen the object go.
func (d *Deletes) Forget(uid types.UID) {
	d.mu.Lock()
	defer d.mu.Unlock()
	delete(d.uids, uid)
}
