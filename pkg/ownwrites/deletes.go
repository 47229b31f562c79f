package ownwrites

import (
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
)

// Deletes holds the UIDs of objects this process deleted, until the cache
// drops them (Forget) or a TTL passes, so a sync on a lagging cache does not
// act on an object it has just deleted. It is safe for concurrent use.
type Deletes struct{ s stamps[types.UID] }

// NewDeletes returns a Deletes whose entries live at most ttl.
func NewDeletes(clk clock.PassiveClock, ttl time.Duration) *Deletes {
	return &Deletes{newStamps[types.UID](clk, ttl)}
}

// Deleted records that this process deleted the object with uid.
func (d *Deletes) Deleted(uid types.UID) { d.s.record(uid) }

// Has reports whether this process deleted the object with uid and the
// cache may still show it.
func (d *Deletes) Has(uid types.UID) bool {
	_, ok := d.At(uid)
	return ok
}

// At is when this process deleted the object with uid, while the cache
// may still show it; false otherwise.
func (d *Deletes) At(uid types.UID) (time.Time, bool) { return d.s.stamp(uid) }

// Forget drops uid, once the cache has seen the object go.
func (d *Deletes) Forget(uid types.UID) { d.s.forget(uid) }
