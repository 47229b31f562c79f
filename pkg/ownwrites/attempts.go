package ownwrites

import (
	"maps"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/clock"
)

// Attempts holds the objects this process tried to create whose outcome it
// does not know: the create failed, but a failure after the API server
// applied it (a lost response, a timeout) looks the same as one before. A
// sync must look such an object up before it decides its run never
// started. An entry lives until it is resolved (Forget) or a TTL passes, by
// when the cache shows the object if it exists. Safe for concurrent use.
type Attempts struct {
	clock clock.PassiveClock
	ttl   time.Duration

	mu      sync.Mutex
	entries map[cache.ObjectName]attempt
	records int
}

type attempt struct {
	owner   types.UID
	expires time.Time
}

// NewAttempts returns an Attempts whose entries live at most ttl.
func NewAttempts(clk clock.PassiveClock, ttl time.Duration) *Attempts {
	return &Attempts{clock: clk, ttl: ttl, entries: map[cache.ObjectName]attempt{}}
}

// Failed records that creating key, controlled by owner, failed.
func (a *Attempts) Failed(key cache.ObjectName, owner types.UID) {
	a.mu.Lock()
	defer a.mu.Unlock()
	now := a.clock.Now()
	// Once per sweepEvery records, as in Deletes.Deleted.
	if a.records++; a.records%sweepEvery == 0 {
		maps.DeleteFunc(a.entries, func(_ cache.ObjectName, e attempt) bool { return !e.expires.After(now) })
	}
	a.entries[key] = attempt{owner: owner, expires: now.Add(a.ttl)}
}

// Of returns the unresolved attempts for owner.
func (a *Attempts) Of(owner types.UID) []cache.ObjectName {
	a.mu.Lock()
	defer a.mu.Unlock()
	now := a.clock.Now()
	var out []cache.ObjectName
	for key, e := range a.entries {
		if e.owner == owner && now.Before(e.expires) {
			out = append(out, key)
		}
	}
	return out
}

// Forget drops key: the object was seen, or is known not to exist.
func (a *Attempts) Forget(key cache.ObjectName) {
	a.mu.Lock()
	defer a.mu.Unlock()
	delete(a.entries, key)
}
