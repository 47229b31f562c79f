package schedule

import (
	"fmt"
	"strings"
	"testing"
)

// The values are pinned: a CronJob must keep its slot across releases.
func TestResolve(t *testing.T) {
	cases := []struct{ spec, want string }{
		{"*/5 * * * *", "*/5 * * * *"},
		{"@hourly", "@hourly"},
		{"H * * * *", "3 * * * *"},
		{"H H(0-7) * * *", "3 4 * * *"},
		{"H/15 * * * *", "3-59/15 * * * *"},
		{"H(10-20)/5 H * * 1-5", "13-20/5 4 * * 1-5"},
		{"0,H 12 * * *", "0,32 12 * * *"},
		{"0 0 H H *", "0 0 10 3 *"},
	}
	for _, tc := range cases {
		got, err := Resolve(tc.spec, "default/hourly-report")
		if err != nil {
			t.Errorf("Resolve(%q): %v", tc.spec, err)
			continue
		}
		if got != tc.want {
			t.Errorf("Resolve(%q) = %q, want %q", tc.spec, got, tc.want)
		}
		if _, err := Parse(got, nil); err != nil {
			t.Errorf("resolved %q does not parse: %v", got, err)
		}
	}
}

func TestResolveRejects(t *testing.T) {
	for _, spec := range []string{"@every H", "H * * *", "H(5) * * * *", "H(30-10) * * * *", "H(0-99) * * * *", "H/0 * * * *", "H/x * * * *", "xH * * * *", "H(1-2 * * * *", "Hx * * * *"} {
		if got, err := Resolve(spec, "default/x"); err == nil {
			t.Errorf("Resolve(%q) = %q, want an error", spec, got)
		} else if se, ok := AsError(err); !ok || se.Reason != ReasonInvalidSchedule {
			t.Errorf("Resolve(%q): %v is not an InvalidSchedule error", spec, err)
		}
	}
}

// Each CronJob keeps its slot (the hash is stable), and a fleet spreads:
// 6000 CronJobs written "H * * * *" put 100 on each minute, give or take.
func TestResolveSpreadsAFleet(t *testing.T) {
	perMinute := map[string]int{}
	for i := range 6000 {
		seed := fmt.Sprintf("team-%d/report-%d", i%17, i)
		a, _ := Resolve("H * * * *", seed)
		b, _ := Resolve("H * * * *", seed)
		if a != b {
			t.Fatalf("unstable: %q then %q", a, b)
		}
		perMinute[strings.Fields(a)[0]]++
	}
	if len(perMinute) != 60 {
		t.Fatalf("only %d minutes used", len(perMinute))
	}
	for minute, n := range perMinute {
		if n < 60 || n > 140 {
			t.Errorf("minute %s has %d CronJobs, want about 100", minute, n)
		}
	}
}
