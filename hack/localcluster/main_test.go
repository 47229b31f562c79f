package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// One run at a time uses the cluster's state: a second is refused with a
// line saying why, and once the first ends the next may run.
func TestOneRunAtATimeUsesTheState(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "local-cluster")
	unlock, err := lockState(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := lockState(dir); err == nil || !strings.Contains(err.Error(), "another make run") {
		t.Errorf("a second run while the first holds the state: %v, want it refused", err)
	}
	unlock()
	again, err := lockState(dir)
	if err != nil {
		t.Fatalf("after the first run ended: %v", err)
	}
	again()
}
