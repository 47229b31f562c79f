package ownwrites

import (
	"sync"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
)

// Pending holds, per object, a value decided but not written yet (for the
// controller: a status whose write waits behind other work), with the UID
// of the object it belongs to. It is safe for concurrent use; values are
// stored and returned as given, so callers pass copies they own.
type Pending[T any] struct {
	mu      sync.Mutex
	entries map[cache.ObjectName]PendingEntry[T]
}

// PendingEntry is a value kept for the object with UID.
type PendingEntry[T any] struct {
	UID   types.UID
	Value T
}

// NewPending returns an empty Pending.
func NewPending[T any]() *Pending[T] {
	return &Pending[T]{entries: map[cache.ObjectName]PendingEntry[T]{}}
}

// Put keeps v for the object key with this UID, replacing what was kept.
func (p *Pending[T]) Put(key cache.ObjectName, uid types.UID, v T) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.entries[key] = PendingEntry[T]{UID: uid, Value: v}
}

// Take removes and returns the value kept for key if it belongs to the
// object with this UID; one kept for an earlier object of the same name is
// dropped.
func (p *Pending[T]) Take(key cache.ObjectName, uid types.UID) (T, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	e, ok := p.entries[key]
	delete(p.entries, key)
	if !ok || e.UID != uid {
		var zero T
		return zero, false
	}
	return e.Value, true
}

// Drain removes and returns everything kept.
func (p *Pending[T]) Drain() map[cache.ObjectName]PendingEntry[T] {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := p.entries
	p.entries = map[cache.ObjectName]PendingEntry[T]{}
	return out
}
