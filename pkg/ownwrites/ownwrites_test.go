package ownwrites

import (
	"fmt"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
	testingclock "k8s.io/utils/clock/testing"
)

func obj(name, rv string, owner types.UID) *batchv1.Job {
	j := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, ResourceVersion: rv, UID: types.UID("uid-" + name)}}
	if owner != "" {
		j.OwnerReferences = []metav1.OwnerReference{{UID: owner, Controller: new(true)}}
	}
	return j
}

func ownerOf(j *batchv1.Job) types.UID {
	if ref := metav1.GetControllerOf(j); ref != nil {
		return ref.UID
	}
	return ""
}

func newStore() (*Store[*batchv1.Job], *testingclock.FakeClock) {
	clk := testingclock.NewFakeClock(time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC))
	return New(clk, time.Minute, ownerOf), clk
}

func TestFresherPrefersTheNewerVersion(t *testing.T) {
	s, _ := newStore()
	written := obj("a", "20", "")
	s.Wrote(written)

	if got := s.Fresher(obj("a", "10", "")); got != written {
		t.Errorf("cache at 10, write at 20: got version %s, want the write", got.ResourceVersion)
	}
	caughtUp := obj("a", "20", "")
	if got := s.Fresher(caughtUp); got != caughtUp {
		t.Errorf("cache caught up: got %p, want the cache's object", got)
	}
	if s.Len() != 0 {
		t.Errorf("a write the cache covers is still held (%d entries)", s.Len())
	}
}

func TestOlderWriteIsIgnored(t *testing.T) {
	s, _ := newStore()
	s.Wrote(obj("a", "30", ""))
	s.Wrote(obj("a", "20", ""))
	if got := s.Fresher(obj("a", "10", "")); got.ResourceVersion != "30" {
		t.Errorf("got version %s, want 30: a late, older write must not replace a newer one", got.ResourceVersion)
	}
}

func TestIncomparableVersionsTrustTheCache(t *testing.T) {
	s, _ := newStore()
	s.Wrote(obj("a", "20", ""))
	cached := obj("a", "not-a-number", "")
	if got := s.Fresher(cached); got != cached {
		t.Error("versions that cannot be compared must leave the cache's object")
	}
}

func TestEntriesExpire(t *testing.T) {
	s, clk := newStore()
	s.Wrote(obj("a", "20", "owner"))
	clk.Step(59 * time.Second)
	if _, ok := s.Get(cache.ObjectName{Namespace: "ns", Name: "a"}); !ok {
		t.Fatal("entry gone before its TTL")
	}
	clk.Step(time.Second)
	if _, ok := s.Get(cache.ObjectName{Namespace: "ns", Name: "a"}); ok {
		t.Error("entry outlived its TTL")
	}
	if got := s.OwnedBy("owner"); len(got) != 0 {
		t.Errorf("OwnedBy returned %d expired entries", len(got))
	}
}

func TestExpiredEntriesAreSwept(t *testing.T) {
	s, clk := newStore()
	for i := range sweepEvery - 1 {
		s.Wrote(obj(fmt.Sprintf("old-%d", i), "5", "owner"))
	}
	clk.Step(2 * time.Minute)
	s.Wrote(obj("new", "6", "owner"))
	if got := s.Len(); got != 1 {
		t.Errorf("%d entries after a sweep, want only the unexpired one", got)
	}
}

func TestOwnedByAndSeen(t *testing.T) {
	s, _ := newStore()
	s.Wrote(obj("a", "20", "cj1"))
	s.Wrote(obj("b", "21", "cj1"))
	s.Wrote(obj("c", "22", "cj2"))
	if got := len(s.OwnedBy("cj1")); got != 2 {
		t.Fatalf("OwnedBy(cj1) = %d objects, want 2", got)
	}
	if s.Seen(obj("a", "19", "cj1")) { // an older version: the write still stands
		t.Error("an older version counted as this process's own write")
	}
	if got := len(s.OwnedBy("cj1")); got != 2 {
		t.Errorf("an older version in the cache dropped a write: %d left", got)
	}
	if !s.Seen(obj("a", "20", "cj1")) {
		t.Error("the version written did not count as this process's own write")
	}
	if s.Seen(obj("a", "20", "cj1")) {
		t.Error("a write counted as own twice")
	}
	if s.Seen(obj("c", "30", "cj2")) {
		t.Error("a newer version than the write counted as this process's own write")
	}
	s.Wrote(obj("c", "22", "cj2"))
	s.Forget(cache.ObjectName{Namespace: "ns", Name: "b"})
	if got := s.OwnedBy("cj1"); len(got) != 0 {
		t.Errorf("OwnedBy(cj1) = %d objects after Seen and Forget, want none", len(got))
	}
	if got := s.OwnedBy("cj2"); len(got) != 1 || got[0].Name != "c" {
		t.Errorf("OwnedBy(cj2) = %v, want c", got)
	}
	if s.Len() != 1 {
		t.Errorf("%d entries held, want 1", s.Len())
	}
}

// Past the TTL a write no longer stands in for the cache, but a cache older
// than it is still reported, until the cache shows it.
func TestBehindOutlivesTheTTL(t *testing.T) {
	clk := testingclock.NewFakeClock(time.Unix(1000, 0))
	s := NewVersioned[*batchv1.Job](clk, time.Minute, nil)
	s.Wrote(obj("a", "20", ""))
	clk.Step(10 * time.Minute)
	stale := obj("a", "10", "")
	if got := s.Fresher(stale); got != stale {
		t.Errorf("an expired write stood in for the cache: %v", got.ResourceVersion)
	}
	if !s.Behind(stale) {
		t.Error("a cache older than our write, past the TTL, not reported behind")
	}
	if s.Behind(obj("b", "10", "")) {
		t.Error("another object reported behind")
	}
	s.Seen(obj("a", "25", ""))
	if s.Behind(stale) {
		t.Error("still behind after the cache showed a newer version")
	}
	plain := New[*batchv1.Job](clk, time.Minute, nil)
	plain.Wrote(obj("a", "20", ""))
	if plain.Behind(stale) {
		t.Error("a Store made by New keeps versions")
	}
}

// The delete of one object forgets only what was written for it, not for a
// successor of the same name read live before the delete event arrived.
func TestForgetUIDKeepsASuccessorsWrite(t *testing.T) {
	successor := func() *batchv1.Job {
		j := obj("a", "30", "")
		j.UID = "uid-successor"
		return j
	}
	for _, tc := range []struct {
		name     string
		uid      types.UID
		wantHeld bool
	}{
		{name: "the predecessor's delete", uid: "uid-a", wantHeld: true},
		{name: "the successor's own delete", uid: "uid-successor", wantHeld: false},
		{name: "a tombstone without the object", uid: "", wantHeld: false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clk := testingclock.NewFakeClock(time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC))
			s := NewVersioned(clk, time.Minute, ownerOf)
			s.Wrote(successor())
			s.ForgetUID(cache.ObjectName{Namespace: "ns", Name: "a"}, tc.uid)
			first := obj("a", "20", "") // the successor as the cache first shows it
			first.UID = "uid-successor"
			if got := s.Fresher(first); (got != first) != tc.wantHeld {
				t.Errorf("Fresher gave resourceVersion %s; want the write held: %v", got.ResourceVersion, tc.wantHeld)
			}
			clk.Step(2 * time.Minute) // past the TTL the version still says the cache is behind
			if got := s.Behind(first); got != tc.wantHeld {
				t.Errorf("Behind past the TTL = %v, want %v", got, tc.wantHeld)
			}
		})
	}
}
