package main

import (
	"testing"

	"go.uber.org/goleak"
)

// The controller stops everything it starts: no test may leave a goroutine.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
