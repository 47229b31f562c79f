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

	mu      sync.Mutex
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
		maps.DeleteFunc(d.uids, func(_ types.UID, expires time.Time) bool { return !expires.After(now) })
	}
	d.uids[uid] = now.Add(d.ttl)
}

// Has reports whether this process deleted the object with uid and the
// cache may still show it.
func (d *Deletes) Has(uid types.UID) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	expires, ok := d.uids[uid]
	return ok && d.clock.Now().Before(expires)
}

// Forget drops uid, once the cache has seen the object go.
func (d *Deletes) Forget(uid types.UID) {
	d.mu.Lock()
	defer d.mu.Unlock()
	delete(d.uids, uid)
}
