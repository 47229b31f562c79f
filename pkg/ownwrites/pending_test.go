package ownwrites

import (
	"fmt"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
	testingclock "k8s.io/utils/clock/testing"
)

func TestPending(t *testing.T) {
	p := NewPending[string]()
	key := cache.ObjectName{Namespace: "ns", Name: "a"}
	p.Put(key, "uid-1", "decided")
	if _, ok := p.Take(key, "uid-2"); ok {
		t.Error("a value kept for an earlier object of the same name was returned")
	}
	if _, ok := p.Take(key, "uid-1"); ok {
		t.Error("a value taken for the wrong UID was kept")
	}
	p.Put(key, "uid-1", "decided")
	if v, ok := p.Take(key, "uid-1"); !ok || v != "decided" {
		t.Errorf("Take = %q, %v", v, ok)
	}
	if _, ok := p.Take(key, "uid-1"); ok {
		t.Error("a value was taken twice")
	}
	p.Put(key, "uid-1", "x")
	p.Put(cache.ObjectName{Namespace: "ns", Name: "b"}, "uid-b", "y")
	if got := p.Drain(); len(got) != 2 || got[key].Value != "x" {
		t.Errorf("Drain = %+v", got)
	}
	if got := p.Drain(); len(got) != 0 {
		t.Errorf("Drain after Drain = %+v", got)
	}
}

func TestDeletes(t *testing.T) {
	clk := testingclock.NewFakeClock(time.Unix(0, 0))
	d := NewDeletes(clk, time.Minute)
	d.Deleted("a")
	if !d.Has("a") || d.Has("b") {
		t.Error("Has does not answer for what was deleted")
	}
	clk.Step(time.Second)
	if at, ok := d.At("a"); !ok || !at.Equal(time.Unix(0, 0)) {
		t.Errorf("At(a) = %v, %v; want when it was deleted", at, ok)
	}
	if _, ok := d.At("b"); ok {
		t.Error("At answers for what was never deleted")
	}
	d.Forget("a")
	if d.Has("a") {
		t.Error("a forgotten delete is still held")
	}
	d.Deleted("a")
	clk.Step(time.Minute)
	if _, ok := d.At("a"); d.Has("a") || ok {
		t.Error("a delete outlived its TTL")
	}
	for i := range sweepEvery {
		d.Deleted(typesUID(i))
	}
	clk.Step(time.Minute)
	// Swept once per sweepEvery records (a sweep at each would cost a burst
	// of N releases N²): after that many more, none of the expired is held.
	for i := range sweepEvery {
		d.Deleted(typesUID(sweepEvery + i))
	}
	if len(d.s.at) > sweepEvery {
		t.Errorf("expired deletes are not swept: %d held", len(d.s.at))
	}
}

func typesUID(i int) types.UID { return types.UID(fmt.Sprint("uid-", i)) }
