package main

import (
	"runtime/debug"
	"testing"

	"go.uber.org/goleak"
)

// The controller stops everything it starts: no test may leave a goroutine.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

func TestGCPercent(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	unset := func(string) (string, bool) { return "", false }
	if got := setGCPercent(unset); got != gcPercent {
		t.Errorf("without GOGC: %d, want %d", got, gcPercent)
	}
	if now := debug.SetGCPercent(gcPercent); now != gcPercent {
		t.Errorf("the runtime runs with GOGC %d, want %d", now, gcPercent)
	}

	debug.SetGCPercent(200) // as the runtime would have it from GOGC=200
	set := func(string) (string, bool) { return "200", true }
	if got := setGCPercent(set); got != 200 {
		t.Errorf("with GOGC=200: %d, want it left alone", got)
	}
	if now := debug.SetGCPercent(200); now != 200 {
		t.Errorf("the runtime runs with GOGC %d, want 200", now)
	}
}
