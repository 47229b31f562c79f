package liveness

import (
	"strings"
	"testing"
	"time"

	testingclock "k8s.io/utils/clock/testing"
)

var bounds = Bounds{Election: 25 * time.Second, StepDown: 15 * time.Second, Sync: 2 * time.Minute}

func alive(t *testing.T, p *Probe, want bool, why string) {
	t.Helper()
	state, err := p.Check()
	if (err == nil) != want {
		t.Errorf("%s: alive %v (%s, %v), want %v", why, err == nil, state, err, want)
	}
}

// A process that campaigns, leads or works its shards is alive while its
// election loop keeps trying the Lease, however the API server answers,
// and not once the loop has stopped trying.
func TestAliveWhileTheElectionLoopTries(t *testing.T) {
	for _, role := range []Role{Campaigning, Leading, Sharing} {
		clk := testingclock.NewFakeClock(time.Unix(0, 0))
		p := New(clk, bounds)
		p.Set(role)
		for range 10 {
			clk.Step(20 * time.Second)
			p.ElectionAttempt() // a call that timed out still counts as a try
			alive(t, p, true, string(role)+", trying every 20 s")
		}
		clk.Step(26 * time.Second)
		alive(t, p, false, string(role)+", no try for 26 s")
		p.ElectionAttempt()
		alive(t, p, true, string(role)+", trying again")
	}
}

// Losing the Lease is alive while the work stops, within its bound, and
// not past it: the process neither leads nor campaigns then.
func TestSteppingDownIsAliveOnlyWithinItsBound(t *testing.T) {
	clk := testingclock.NewFakeClock(time.Unix(0, 0))
	p := New(clk, bounds)
	p.Set(Leading)
	p.Set(SteppingDown)
	clk.Step(15 * time.Second)
	alive(t, p, true, "stepping down for 15 s")
	clk.Step(time.Second)
	alive(t, p, false, "stepping down for 16 s")
	p.Set(Campaigning)
	alive(t, p, true, "campaigning again")
}

// A sync that outlives its bound means a stuck worker, whatever the role;
// syncs that finish, however many, leave nothing behind.
func TestAStuckSyncFailsLiveness(t *testing.T) {
	clk := testingclock.NewFakeClock(time.Unix(0, 0))
	p := New(clk, bounds)
	p.Set(Working)
	for range 1000 {
		p.SyncStarted()()
	}
	done := p.SyncStarted()
	clk.Step(2 * time.Minute)
	alive(t, p, true, "a sync of 2 minutes")
	clk.Step(time.Second)
	_, err := p.Check()
	if err == nil || !strings.Contains(err.Error(), "worker is stuck") {
		t.Errorf("a sync of 2m1s: %v, want a stuck worker", err)
	}
	done()
	alive(t, p, true, "the stuck sync returned")
}

// Shutting down on a signal is alive, and for good: a Lease lost on the
// way out does not turn it into stepping down.
func TestShuttingDownStays(t *testing.T) {
	clk := testingclock.NewFakeClock(time.Unix(0, 0))
	p := New(clk, bounds)
	p.Set(Leading)
	p.Set(ShuttingDown)
	p.Set(SteppingDown)
	if r, _ := p.Role(); r != ShuttingDown {
		t.Errorf("role %q after a signal and a lost Lease, want %q", r, ShuttingDown)
	}
	clk.Step(time.Hour)
	alive(t, p, true, "shutting down for an hour")
}

// The check says what the process does, so a person reading /healthz
// learns which of its states it is in.
func TestCheckNamesTheRole(t *testing.T) {
	clk := testingclock.NewFakeClock(time.Unix(0, 0))
	p := New(clk, bounds)
	p.Set(Campaigning)
	clk.Step(3 * time.Second)
	if state, _ := p.Check(); state != "campaigning for 3s" {
		t.Errorf("state %q", state)
	}
	var none *Probe
	if _, err := none.Check(); err != nil {
		t.Errorf("a nil probe: %v", err)
	}
	none.Set(Leading)
	none.SyncStarted()()
	none.ElectionAttempt()
}
