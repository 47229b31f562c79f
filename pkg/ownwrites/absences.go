package ownwrites

import (
	"time"

	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/clock"
)

// Absences holds the names a live read found no object under, for a TTL:
// a sync that must read many objects before it decides (and fails when one
// read does) keeps the answers it had across its retries, so each retry
// reads only what is still unknown and a read that fails now and then
// cannot hold the decision back for ever. An answer is good while nothing
// but this process could create the object, and this process's own creates
// are its own writes. Safe for concurrent use.
type Absences struct{ s stamps[cache.ObjectName] }

// NewAbsences returns an Absences whose answers hold for ttl.
func NewAbsences(clk clock.PassiveClock, ttl time.Duration) *Absences {
	return &Absences{newStamps[cache.ObjectName](clk, ttl)}
}

// Absent records that a live read found nothing under key.
func (a *Absences) Absent(key cache.ObjectName) { a.s.record(key) }

// Known reports whether a live read found nothing under key within the TTL.
func (a *Absences) Known(key cache.ObjectName) bool {
	_, ok := a.s.stamp(key)
	return ok
}

// Forget drops the answer for key: the object may exist now.
func (a *Absences) Forget(key cache.ObjectName) { a.s.forget(key) }
