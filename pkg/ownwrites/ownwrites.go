// Package ownwrites remembers the objects this controller has just written
// until its informer cache shows them. An informer lags the API server by a
// watch round trip; a sync that runs in that window would otherwise act on
// state older than its own last write: look for a Job it has just created
// with a live GET, or write a status over one it has just written and get a
// conflict. Under a burst of due CronJobs those extra requests and retries
// are what the last Jobs wait behind.
//
// Versions are compared as the API server's resource versions
// (k8s.io/apimachinery/pkg/util/resourceversion): an entry stays only while
// it is newer than what the cache holds, and at most a TTL, so a cache that
// skipped past a write (after a relist) never hides a newer object.
package ownwrites

import (
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/resourceversion"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/clock"
)

// Store holds, per namespace/name, the newest object this process wrote and
// the cache has not shown yet. It is safe for concurrent use.
type Store[T metav1.Object] struct {
	clock clock.PassiveClock
	ttl   time.Duration
	// owner, when set, indexes entries by the UID it returns (for Jobs: the
	// controlling CronJob), so OwnedBy costs the owner's entries only.
	owner func(T) types.UID

	// versions, when set, keeps the version of each object last written
	// past the TTL, until the cache shows it: see Behind.
	versions map[cache.ObjectName]version

	mu      sync.Mutex
	entries map[cache.ObjectName]entry[T]
	byOwner map[types.UID]map[cache.ObjectName]struct{}
	writes  int
}

// version is what the versioned store keeps of an object past the TTL: its
// UID too, so the delete of an older object of the same name does not drop
// it (see ForgetUID).
type version struct {
	rv  string
	uid types.UID
}

type entry[T metav1.Object] struct {
	obj     T
	owner   types.UID
	expires time.Time
}

// New returns a Store whose entries live at most ttl. owner may be nil.
func New[T metav1.Object](clk clock.PassiveClock, ttl time.Duration, owner func(T) types.UID) *Store[T] {
	return &Store[T]{
		clock:   clk,
		ttl:     ttl,
		owner:   owner,
		entries: map[cache.ObjectName]entry[T]{},
		byOwner: map[types.UID]map[cache.ObjectName]struct{}{},
	}
}

// NewVersioned returns a Store that also remembers, past ttl, the version
// of each object it last wrote until the cache shows that version or a
// newer one (Behind). It holds one version per object written, so it suits
// objects that live long and are few next to the writes (CronJobs), not
// ones created by the thousand (Jobs).
func NewVersioned[T metav1.Object](clk clock.PassiveClock, ttl time.Duration, owner func(T) types.UID) *Store[T] {
	s := New(clk, ttl, owner)
	s.versions = map[cache.ObjectName]version{}
	return s
}

// Behind reports whether cached is older than the version this process
// last wrote under its name, also past the TTL: a cache that stalled (a
// hung watch) must not be trusted over a write of ours, however old. It is
// always false for a Store made by New.
func (s *Store[T]) Behind(cached metav1.Object) bool {
	key := cache.MetaObjectToName(cached)
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := s.versions[key]
	if !ok {
		return false
	}
	if newerVersion(v.rv, cached.GetResourceVersion()) {
		return true
	}
	delete(s.versions, key)
	return false
}

// sweepEvery is how many writes pass between sweeps of expired entries, so
// entries the cache never confirms (a write whose watch event was skipped)
// cannot pile up.
const sweepEvery = 1024

// Wrote records obj as the API server returned it after a write by this
// process. An older version than the one already held is ignored.
func (s *Store[T]) Wrote(obj T) {
	key := cache.MetaObjectToName(obj)
	s.mu.Lock()
	defer s.mu.Unlock()
	if old, ok := s.entries[key]; ok && newer(old.obj, obj) {
		return
	}
	s.remove(key)
	if s.versions != nil {
		s.versions[key] = version{rv: obj.GetResourceVersion(), uid: obj.GetUID()}
	}
	e := entry[T]{obj: obj, expires: s.clock.Now().Add(s.ttl)}
	if s.owner != nil {
		e.owner = s.owner(obj)
		if e.owner != "" {
			if s.byOwner[e.owner] == nil {
				s.byOwner[e.owner] = map[cache.ObjectName]struct{}{}
			}
			s.byOwner[e.owner][key] = struct{}{}
		}
	}
	s.entries[key] = e
	if s.writes++; s.writes%sweepEvery == 0 {
		now := s.clock.Now()
		for k, e := range s.entries {
			if !now.Before(e.expires) {
				s.remove(k)
			}
		}
	}
}

// Fresher returns what this process wrote under cached's name if that is
// newer than cached, else cached (and forgets the write the cache now
// covers).
func (s *Store[T]) Fresher(cached T) T {
	key := cache.MetaObjectToName(cached)
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.live(key)
	if !ok {
		return cached
	}
	if newer(e.obj, cached) {
		return e.obj
	}
	s.remove(key)
	return cached
}

// Get returns the object this process wrote under key, if the cache may not
// show it yet.
func (s *Store[T]) Get(key cache.ObjectName) (T, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.live(key)
	return e.obj, ok
}

// OwnedBy returns the objects written for owner that the cache may not show
// yet.
func (s *Store[T]) OwnedBy(owner types.UID) []T {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []T
	for key := range s.byOwner[owner] {
		if e, ok := s.live(key); ok {
			out = append(out, e.obj)
		}
	}
	return out
}

// Seen tells the store the cache now holds obj: a write it covers is
// forgotten. Informer event handlers call it with the cache's form of the
// object, which need not be T. It reports whether obj is the very version
// this process wrote: the echo of its own write, which tells the controller
// nothing it did not know when it wrote it.
func (s *Store[T]) Seen(obj metav1.Object) (own bool) {
	key := cache.MetaObjectToName(obj)
	s.mu.Lock()
	defer s.mu.Unlock()
	if v, ok := s.versions[key]; ok && !newerVersion(v.rv, obj.GetResourceVersion()) {
		delete(s.versions, key)
	}
	e, ok := s.entries[key]
	if !ok || newer(e.obj, obj) {
		return false
	}
	s.remove(key)
	return e.obj.GetResourceVersion() == obj.GetResourceVersion()
}

// Forget drops what is held under key, as after deleting that object.
func (s *Store[T]) Forget(key cache.ObjectName) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.remove(key)
	delete(s.versions, key)
}

// ForgetUID drops what is held under key for the object with this UID, as
// after that object's delete event. What was written for another object of
// the same name is kept: a lagging watch delivers the delete of an older
// CronJob after this process read its successor live (at takeover), and
// dropping that read would let the successor's first version, older than
// the read, stand for it. An empty uid forgets all, as Forget does.
func (s *Store[T]) ForgetUID(key cache.ObjectName, uid types.UID) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if e, ok := s.entries[key]; ok && (uid == "" || e.obj.GetUID() == uid) {
		s.remove(key)
	}
	if v, ok := s.versions[key]; ok && (uid == "" || v.uid == uid) {
		delete(s.versions, key)
	}
}

// Len is the number of entries held, expired ones included until swept.
func (s *Store[T]) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.entries)
}

// live returns the unexpired entry under key, dropping an expired one.
// s.mu must be held.
func (s *Store[T]) live(key cache.ObjectName) (entry[T], bool) {
	e, ok := s.entries[key]
	if !ok {
		return e, false
	}
	if !s.clock.Now().Before(e.expires) {
		s.remove(key)
		return entry[T]{}, false
	}
	return e, true
}

// remove drops key and its owner index entry. s.mu must be held.
func (s *Store[T]) remove(key cache.ObjectName) {
	e, ok := s.entries[key]
	if !ok {
		return
	}
	delete(s.entries, key)
	if keys := s.byOwner[e.owner]; keys != nil {
		delete(keys, key)
		if len(keys) == 0 {
			delete(s.byOwner, e.owner)
		}
	}
}

// newer reports whether a is a later version than b. Versions that cannot
// be compared count as not newer, so the cache wins.
func newer(a, b metav1.Object) bool {
	return newerVersion(a.GetResourceVersion(), b.GetResourceVersion())
}

func newerVersion(a, b string) bool {
	cmp, err := resourceversion.CompareResourceVersion(a, b)
	return err == nil && cmp > 0
}
