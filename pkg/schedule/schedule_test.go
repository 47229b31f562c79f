package schedule

import (
	"strings"
	"testing"
	"time"

	"k8s.io/utils/ptr"
)

func TestParseRejects(t *testing.T) {
	cases := []struct {
		name, spec string
		zone       *string
		reason     string
		mentions   string
	}{
		{"garbage", "every day", nil, ReasonInvalidSchedule, "every day"},
		{"six fields", "0 0 * * * *", nil, ReasonInvalidSchedule, "expected exactly 5 fields"},
		{"out of range", "61 * * * *", nil, ReasonInvalidSchedule, "61"},
		{"TZ inside", "TZ=UTC 0 * * * *", nil, ReasonInvalidSchedule, "spec.timeZone"},
		{"CRON_TZ inside", "CRON_TZ=Europe/Berlin 0 * * * *", nil, ReasonInvalidSchedule, "spec.timeZone"},
		{"never fires", "59 23 31 2 *", nil, ReasonInvalidSchedule, "never fires"},
		{"every below a second", "@every 500ms", nil, ReasonInvalidSchedule, "at least 1s"},
		{"every negative", "@every -5s", nil, ReasonInvalidSchedule, "at least 1s"},
		{"every garbage", "@every soon", nil, ReasonInvalidSchedule, "soon"},
		{"unknown zone", "0 * * * *", ptr.To("Mars/Olympus_Mons"), ReasonUnknownTimeZone, "Mars/Olympus_Mons"},
		{"Local zone", "0 * * * *", ptr.To("Local"), ReasonUnknownTimeZone, "Local"},
		{"empty zone", "0 * * * *", ptr.To(""), ReasonUnknownTimeZone, "IANA"},
		// Shaped as the built-in CronJob refuses, though the machine's zone
		// directory would open them as paths.
		{"empty zone part", "0 * * * *", ptr.To("Europe//Berlin"), ReasonUnknownTimeZone, "not an IANA time zone name"},
		{"dot zone part", "0 * * * *", ptr.To("Europe/./Berlin"), ReasonUnknownTimeZone, "not an IANA time zone name"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Parse(tc.spec, tc.zone)
			if err == nil {
				t.Fatalf("Parse(%q) = %v, want an error", tc.spec, s)
			}
			se, ok := AsError(err)
			if !ok {
				t.Fatalf("error %v is not a *schedule.Error", err)
			}
			if se.Reason != tc.reason {
				t.Errorf("reason = %q, want %q", se.Reason, tc.reason)
			}
			if !strings.Contains(se.Message, tc.mentions) {
				t.Errorf("message %q does not mention %q", se.Message, tc.mentions)
			}
		})
	}
}

func TestParseAccepts(t *testing.T) {
	for _, spec := range []string{"*/1 * * * *", "0 9 * * 1-5", "@hourly", "@daily", "@every 5s", " 0 * * * * ", "0 0 29 2 *"} {
		if _, err := Parse(spec, nil); err != nil {
			t.Errorf("Parse(%q): %v", spec, err)
		}
	}
	if _, err := Parse("0 * * * *", ptr.To("America/New_York")); err != nil {
		t.Errorf("Parse with America/New_York: %v", err)
	}
}

func TestMostRecent(t *testing.T) {
	hourly := "0 * * * *"
	cases := []struct {
		name       string
		spec       string
		earliest   string
		now        string
		wantTime   string // "" when nothing is due
		wantMissed int
		wantNext   string
	}{
		{"before the first hour", hourly, "2026-05-01T09:30:00Z", "2026-05-01T09:59:59Z", "", 0, "2026-05-01T10:00:00Z"},
		{"on the hour", hourly, "2026-05-01T09:30:00Z", "2026-05-01T10:00:00Z", "2026-05-01T10:00:00Z", 1, "2026-05-01T11:00:00Z"},
		{"just after the hour", hourly, "2026-05-01T09:30:00Z", "2026-05-01T10:00:01Z", "2026-05-01T10:00:00Z", 1, "2026-05-01T11:00:00Z"},
		{"earliest is a run: not due again", hourly, "2026-05-01T10:00:00Z", "2026-05-01T10:30:00Z", "", 0, "2026-05-01T11:00:00Z"},
		{"two hours missed", hourly, "2026-05-01T09:30:00Z", "2026-05-01T11:10:00Z", "2026-05-01T11:00:00Z", 2, "2026-05-01T12:00:00Z"},
		{"exactly 100 missed", hourly, "2026-05-01T00:00:00Z", "2026-05-05T04:00:00Z", "2026-05-05T04:00:00Z", 100, "2026-05-05T05:00:00Z"},
		{"a week overdue", hourly, "2026-05-01T09:30:00Z", "2026-05-08T09:45:00Z", "2026-05-08T09:00:00Z", ManyMissed + 1, "2026-05-08T10:00:00Z"},
		{"every minute, a year overdue", "* * * * *", "2025-05-01T09:30:00Z", "2026-05-01T09:45:30Z", "2026-05-01T09:45:00Z", ManyMissed + 1, "2026-05-01T09:46:00Z"},
		// Friday 2026-05-01: the weekend has no run, so the most recent is Friday's.
		{"weekdays, Sunday", "0 9 * * 1-5", "2026-04-30T09:00:00Z", "2026-05-03T12:00:00Z", "2026-05-01T09:00:00Z", 1, "2026-05-04T09:00:00Z"},
		{"weekdays, months overdue", "0 9 * * 1-5", "2025-11-01T00:00:00Z", "2026-05-03T12:00:00Z", "2026-05-01T09:00:00Z", ManyMissed + 1, "2026-05-04T09:00:00Z"},
		{"every 90s", "@every 90s", "2026-05-01T10:00:00Z", "2026-05-01T10:04:00Z", "2026-05-01T10:03:00Z", 2, "2026-05-01T10:04:30Z"},
		// @every keeps its grid from earliest, also when jumping over many runs.
		{"every 7s, long overdue", "@every 7s", "2026-05-01T10:00:00Z", "2026-05-01T12:00:00Z", "2026-05-01T11:59:56Z", ManyMissed + 1, "2026-05-01T12:00:03Z"},
		{"every, sub-second earliest", "@every 10s", "2026-05-01T10:00:00.250Z", "2026-05-01T10:00:20Z", "2026-05-01T10:00:20Z", 2, "2026-05-01T10:00:30Z"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := mustParse(t, tc.spec, ptr.To("UTC"))
			due, err := s.MostRecent(mustTime(t, time.RFC3339Nano, tc.earliest), utc(t, tc.now))
			if err != nil {
				t.Fatal(err)
			}
			if tc.wantTime == "" {
				if !due.Time.IsZero() {
					t.Errorf("due time = %v, want none", due.Time)
				}
			} else if !due.Time.Equal(utc(t, tc.wantTime)) {
				t.Errorf("due time = %v, want %s", due.Time, tc.wantTime)
			}
			if due.Missed != tc.wantMissed {
				t.Errorf("missed = %d, want %d", due.Missed, tc.wantMissed)
			}
			if due.TooMany() != (tc.wantMissed > ManyMissed) {
				t.Errorf("TooMany() = %v with %d missed", due.TooMany(), due.Missed)
			}
			if !due.Next.Equal(utc(t, tc.wantNext)) {
				t.Errorf("next = %v, want %s", due.Next, tc.wantNext)
			}
		})
	}
}

// Berlin's clocks go 02:00 CET → 03:00 CEST on 2026-03-29 and back
// 03:00 CEST → 02:00 CET on 2026-10-25.
func TestMostRecentInTimeZoneAcrossDST(t *testing.T) {
	berlin := ptr.To("Europe/Berlin")
	cases := []struct {
		name, spec, earliest, now, wantTime, wantNext string
	}{
		{"daily 09:00 local, spring: 23 h apart in UTC", "0 9 * * *", "2026-03-28T08:00:00Z", "2026-03-29T07:30:00Z", "2026-03-29T07:00:00Z", "2026-03-30T07:00:00Z"},
		{"daily 09:00 local, autumn: 25 h apart in UTC", "0 9 * * *", "2026-10-24T07:00:00Z", "2026-10-25T08:00:00Z", "2026-10-25T08:00:00Z", "2026-10-26T08:00:00Z"},
		{"hourly across spring gap", "0 * * * *", "2026-03-29T00:30:00Z", "2026-03-29T01:00:00Z", "2026-03-29T01:00:00Z", "2026-03-29T02:00:00Z"},
		{"daily 09:00 local, after a long outage across spring", "0 9 * * *", "2025-10-01T07:00:00Z", "2026-04-02T06:00:00Z", "2026-04-01T07:00:00Z", "2026-04-02T07:00:00Z"},
		{"daily 09:00 local, after a long outage across autumn", "0 9 * * *", "2026-05-01T07:00:00Z", "2026-11-02T09:00:00Z", "2026-11-02T08:00:00Z", "2026-11-03T08:00:00Z"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := mustParse(t, tc.spec, berlin)
			due, err := s.MostRecent(utc(t, tc.earliest), utc(t, tc.now))
			if err != nil {
				t.Fatal(err)
			}
			if !due.Time.Equal(utc(t, tc.wantTime)) {
				t.Errorf("due time = %v, want %s", due.Time.UTC(), tc.wantTime)
			}
			if !due.Next.Equal(utc(t, tc.wantNext)) {
				t.Errorf("next = %v, want %s", due.Next.UTC(), tc.wantNext)
			}
		})
	}
}

// The jump past ManyMissed must agree with walking every time one by one.
func TestMostRecentAgreesWithWalk(t *testing.T) {
	// horizon keeps the brute-force walk short for frequent schedules.
	specs := []struct {
		spec    string
		horizon time.Duration
	}{
		{"*/7 * * * *", 20 * 24 * time.Hour},
		{"@every 13s", 2 * 24 * time.Hour},
		{"30 6-16/4 * * 1-5", 400 * 24 * time.Hour},
		{"0 0 1 * *", 3000 * 24 * time.Hour},
		{"15 3 * * 0", 1000 * 24 * time.Hour},
		{"0 12 29 2 *", 3000 * 24 * time.Hour},
	}
	zones := []string{"UTC", "America/New_York", "Europe/Berlin", "Asia/Kolkata"}
	earliest := utc(t, "2024-01-01T00:00:00Z")
	for _, sc := range specs {
		for _, zone := range zones {
			s := mustParse(t, sc.spec, ptr.To(zone))
			for _, frac := range []float64{0.01, 0.137, 0.5, 0.861, 1} {
				now := earliest.Add(time.Duration(frac * float64(sc.horizon))).Add(17 * time.Second)
				var want time.Time
				count := 0
				for x := s.Next(earliest); !x.IsZero() && !x.After(now); x = s.Next(x) {
					want, count = x, count+1
				}
				due, err := s.MostRecent(earliest, now)
				if err != nil {
					t.Fatalf("%s in %s at %s: %v", sc.spec, zone, now, err)
				}
				if !due.Time.Equal(want) {
					t.Errorf("%s in %s at %s: due %v, walk found %v", sc.spec, zone, now, due.Time, want)
				}
				if wantMissed := min(count, ManyMissed+1); due.Missed != wantMissed {
					t.Errorf("%s in %s at %s: missed %d, want %d", sc.spec, zone, now, due.Missed, wantMissed)
				}
			}
		}
	}
}

// With exactly ManyMissed+1 times due, the most recent is the last of them,
// never one after now.
func TestMostRecentWithExactlyTheBoundDue(t *testing.T) {
	utc := "UTC"
	s, err := Parse("*/10 * * * *", &utc)
	if err != nil {
		t.Fatal(err)
	}
	earliest := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
	for extra := -2; extra <= 2; extra++ {
		due := ManyMissed + 1 + extra
		now := earliest.Add(time.Duration(due)*10*time.Minute + 5*time.Minute)
		got, err := s.MostRecent(earliest, now)
		if err != nil {
			t.Fatal(err)
		}
		want := earliest.Add(time.Duration(due) * 10 * time.Minute)
		if !got.Time.Equal(want) || got.Time.After(now) {
			t.Errorf("%d times due: most recent %v, want %v (now %v)", due, got.Time, want, now)
		}
	}
}

// An unknown zone's message says why once: "unknown time zone" twice (the
// time package's own text after ours) reads as a stutter.
func TestUnknownZoneSaysItOnce(t *testing.T) {
	_, err := Parse("0 * * * *", ptr.To("Mars/Olympus_Mons"))
	se, ok := AsError(err)
	if !ok {
		t.Fatalf("error %v is not a *schedule.Error", err)
	}
	if n := strings.Count(strings.ToLower(se.Message), "unknown time zone"); n != 1 {
		t.Errorf("message %q says \"unknown time zone\" %d times", se.Message, n)
	}
}
