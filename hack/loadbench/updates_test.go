package main

import (
	"testing"
	"time"
)

// The status writes counted against the last Job are those seen within the
// window, its ends included, whatever order they arrived in; a watch that
// failed says its count may be short.
func TestStatusWritesAreCountedInTheWindowAndAFailedWatchSaysSo(t *testing.T) {
	due := time.Date(2026, 11, 29, 8, 0, 0, 0, time.UTC)
	at := func(s float64) time.Time { return due.Add(time.Duration(s * float64(time.Second))) }
	u := &updateWatch{drained: &drained{}, at: []time.Time{at(5), at(-1), at(2), at(0), at(3.5), at(7)}}

	n, first, ok := u.between(due, at(3.5))
	if n != 3 || !first.Equal(due) || !ok {
		t.Errorf("between(0 s, 3.5 s) = %d, first at %v, ok %v; want 3 from 0 s, ok", n, first.Sub(due), ok)
	}
	if n, first, _ := u.between(at(8), at(9)); n != 0 || !first.IsZero() {
		t.Errorf("an empty window gave %d, first at %v; want none", n, first)
	}
	u.failed = true
	if _, _, ok := u.between(due, at(9)); ok {
		t.Error("a failed watch's count was given as complete")
	}
}
