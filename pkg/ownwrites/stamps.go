package ownwrites

import (
	"maps"
	"sync"
	"time"

	"k8s.io/utils/clock"
)

// stamps holds when each key was recorded, for a TTL: the shared part of
// Deletes (by UID) and Absences (by name). Safe for concurrent use.
type stamps[K comparable] struct {
	clock clock.PassiveClock
	ttl   time.Duration

	mu      sync.Mutex
	at      map[K]time.Time
	records int
}

func newStamps[K comparable](clk clock.PassiveClock, ttl time.Duration) stamps[K] {
	return stamps[K]{clock: clk, ttl: ttl, at: map[K]time.Time{}}
}

// record stamps k now.
func (s *stamps[K]) record(k K) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.clock.Now()
	// A sweep costs every entry held: once per sweepEvery records, not at
	// each, or a burst of N records awaiting their echoes costs N².
	if s.records++; s.records%sweepEvery == 0 {
		maps.DeleteFunc(s.at, func(_ K, at time.Time) bool { return !at.Add(s.ttl).After(now) })
	}
	s.at[k] = now
}

// stamp is when k was recorded, within the TTL; false otherwise.
func (s *stamps[K]) stamp(k K) (time.Time, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	at, ok := s.at[k]
	if !ok || !s.clock.Now().Before(at.Add(s.ttl)) {
		return time.Time{}, false
	}
	return at, true
}

// forget drops k.
func (s *stamps[K]) forget(k K) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.at, k)
}
