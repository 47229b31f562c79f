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
		// Names stay as written; only the H forms change.
		{"H(1-5) * * * THU", "4 * * * THU"},
		{"0 9 * * MON,H", "0 9 * * MON,0"},
		{"H\t9 * * TUE,THU", "3 9 * * TUE,THU"},
		{"0 0 1 jan-MAR,H *", "0 0 1 jan-MAR,10 *"},
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
	for _, spec := range []string{"@every H", "H * * *", "H(5) * * * *", "H(30-10) * * * *", "H(0-99) * * * *", "H/0 * * * *", "H/x * * * *", "H(1-2 * * * *",
		"H/ * * * *", "H() * * * *", "H(1-5)) * * * *", "H(1-5)/2/3 * * * *", "@every 1h H", "0 9 * * THU,H(1-9)", "H(1-5) * * * THU *"} {
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

// A capital H anywhere else is not ours: inside a name (THU), a descriptor
// or a zone, or followed by anything but "(" or "/". Resolve leaves such a
// spec exactly as written, so the cron parser judges it and its message
// names the real problem. A lowercase h is never an H form (Jenkins has
// none either): no cron name starts with h, so the parser refuses it.
func TestResolveLeavesOtherHsToParse(t *testing.T) {
	cases := []struct{ spec, mentions string }{
		{"Hx * * * *", "failed to parse int from Hx"},
		{"xH * * * *", "failed to parse int from xH"},
		{"HH * * * *", "failed to parse int from HH"},
		{"H-5 * * * *", "failed to parse int from H"},
		{"0 9 * * THU-H", "failed to parse int from H"},
		{"0 9 * * THURSDAY", "THURSDAY"},
		{"h * * * *", "failed to parse int from h"},
		{"h/15 * * * *", "failed to parse int from h"},
		{"h(0-29) * * * *", "failed to parse int from h(0"},
		{"0 9 * * h", "failed to parse int from h"},
		{"@HOURLY", "unrecognized descriptor: @HOURLY"},
		{"@Hourly", "unrecognized descriptor: @Hourly"},
		{"@every 1H", `unknown unit "H"`},
		{"TZ=Europe/Helsinki 0 9 * * *", "spec.timeZone"},
		{"CRON_TZ=Asia/Ho_Chi_Minh 0 9 * * THU", "spec.timeZone"},
		// cron wants "@every " with one space; Parse reads the spec as cron does.
		{"@every\t1h", "unrecognized descriptor"},
		{"@every  1h", "invalid duration"},
	}
	for _, tc := range cases {
		t.Run(tc.spec, func(t *testing.T) {
			resolved, err := Resolve(tc.spec, "default/x")
			if err != nil || resolved != tc.spec {
				t.Fatalf("Resolve(%q) = %q, %v; want it unchanged", tc.spec, resolved, err)
			}
			s, err := Parse(resolved, nil)
			if err == nil {
				t.Fatalf("Parse(%q) = %v, want an error", resolved, s)
			}
			se, ok := AsError(err)
			if !ok || se.Reason != ReasonInvalidSchedule {
				t.Fatalf("Parse(%q): %v is not an InvalidSchedule error", resolved, err)
			}
			if !strings.Contains(se.Message, tc.mentions) {
				t.Errorf("message %q does not mention %q", se.Message, tc.mentions)
			}
		})
	}
}

// Parse trims the spec, so a descriptor with spaces around it works,
// though cron alone refuses it; Resolve must leave it so.
func TestResolveKeepsPaddedDescriptors(t *testing.T) {
	for _, spec := range []string{" @hourly", "@daily ", "\t@weekly\n", "  @every 1h30m  "} {
		resolved, err := Resolve(spec, "default/x")
		if err != nil || resolved != spec {
			t.Errorf("Resolve(%q) = %q, %v; want it unchanged", spec, resolved, err)
			continue
		}
		if _, err := Parse(resolved, nil); err != nil {
			t.Errorf("Parse(%q): %v", resolved, err)
		}
	}
}
