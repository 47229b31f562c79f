package schedule

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"k8s.io/utils/ptr"
)

// The controller copies these messages into the ScheduleValid condition
// and into Events. A schedule from before the schema's 1024 cap, or one
// that bypassed validation, can be megabytes long; its message must still
// be short, or the status write carrying it fails.
const messageLimit = 512

func TestMessagesAreBounded(t *testing.T) {
	long := strings.Repeat("x", 20_000)
	digits := strings.Repeat("9", 20_000)
	// Bytes that %q escapes to four times their size: a bound on the input
	// quoted is not a bound on the message.
	nasty := strings.Repeat("\x00\xff€\u200b", 2_000)
	cases := []struct {
		name     string
		resolve  bool // Resolve the spec; otherwise Parse it
		spec     string
		zone     *string
		reason   string
		mentions string
	}{
		{"one long word", false, long, nil, ReasonInvalidSchedule, `"xxxxxxxx`},
		{"ten thousand fields", false, strings.Repeat("* ", 10_000), nil, ReasonInvalidSchedule, "expected exactly 5 fields"},
		{"long bad value", false, "0 9 * * " + long, nil, ReasonInvalidSchedule, "failed to parse int from x"},
		{"long list with a bad value", false, "0 9 * * " + strings.Repeat("1,", 10_000) + "x", nil, ReasonInvalidSchedule, "(20009 characters)"},
		{"TZ inside", false, "TZ=" + long + " * * * * *", nil, ReasonInvalidSchedule, "spec.timeZone"},
		{"@every long number", false, "@every " + digits + "h", nil, ReasonInvalidSchedule, "@every 999"},
		{"@every long garbage", false, "@every " + long, nil, ReasonInvalidSchedule, "invalid duration"},
		{"never fires", false, "59 23 " + strings.Repeat("31,30,", 3_400) + "31 2 *", nil, ReasonInvalidSchedule, "never fires"},
		{"escapes", false, nasty, nil, ReasonInvalidSchedule, `"\x00\xff€`},
		{"long zone", false, "0 * * * *", ptr.To(long), ReasonUnknownTimeZone, "(20000 characters)"},
		{"long zone of escapes", false, "0 * * * *", ptr.To(nasty), ReasonUnknownTimeZone, `"\x00\xff€`},
		{"long zone and schedule", false, long, ptr.To(long), ReasonUnknownTimeZone, "unknown time zone"},
		// Resolve refuses anything past the schema's cap first; below it, every
		// error path still quotes long input.
		{"H, 20,000 characters", true, "H * * * * " + long, nil, ReasonInvalidSchedule, "at most 1024 characters"},
		{"no H, 20,000 characters", true, long, nil, ReasonInvalidSchedule, "(20000 characters)"},
		{"escapes, 8,000 characters", true, "H(" + nasty + ") * * * *", nil, ReasonInvalidSchedule, "at most 1024 characters"},
		{"H with too many fields", true, "H * * * * " + long[:1000], nil, ReasonInvalidSchedule, "five-field form"},
		{"H with a long range start", true, "H(" + digits[:1000] + "-1) * * * *", nil, ReasonInvalidSchedule, "range start"},
		{"H with a long step", true, "H/" + digits[:1000] + " * * * *", nil, ReasonInvalidSchedule, "step"},
		{"H with long text after it", true, "H(1-5)/" + long[:1000] + " * * * *", nil, ReasonInvalidSchedule, "step"},
		{"H unclosed", true, "H(1-2" + long[:1000] + " * * * *", nil, ReasonInvalidSchedule, "unclosed"},
		{"long list, bad H last", true, strings.Repeat("H,", 490) + "H(0-99) * * * *", nil, ReasonInvalidSchedule, "outside 0-59"},
		{"H and escapes", true, "H(" + nasty[:1000] + ") * * * *", nil, ReasonInvalidSchedule, "minute field"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var err error
			if tc.resolve {
				_, err = Resolve(tc.spec, "default/long")
			} else {
				_, err = Parse(tc.spec, tc.zone)
			}
			se, ok := AsError(err)
			if !ok {
				t.Fatalf("error %v is not a *schedule.Error", err)
			}
			if se.Reason != tc.reason {
				t.Errorf("reason = %q, want %q", se.Reason, tc.reason)
			}
			if len(se.Message) >= messageLimit {
				t.Errorf("message is %d bytes, want under %d: %.600q", len(se.Message), messageLimit, se.Message)
			}
			if testing.Verbose() {
				t.Logf("%d bytes: %s", len(se.Message), se.Message)
			}
			if !utf8.ValidString(se.Message) {
				t.Errorf("message is not valid UTF-8: %q", se.Message)
			}
			if !strings.Contains(se.Message, tc.mentions) {
				t.Errorf("message %q does not mention %q", se.Message, tc.mentions)
			}
		})
	}
}
func TestQuote(t *testing.T) {
	exactly := strings.Repeat("a", maxQuoted)
	cases := []struct{ in, want string }{
		{"", `""`},
		{"0 9 * * THU", `"0 9 * * THU"`},
		{"tab\there", `"tab\there"`},
		{exactly, `"` + exactly + `"`},
		{exactly + "b", `"` + exactly + `"… (129 characters)`},
		{strings.Repeat("€", 50), `"` + strings.Repeat("€", 42) + `"… (50 characters)`},
		{strings.Repeat("\x00", 40), `"` + strings.Repeat(`\x00`, 32) + `"… (40 characters)`},
		{strings.Repeat("\xff", 33), `"` + strings.Repeat(`\xff`, 32) + `"… (33 characters)`},
	}
	for _, tc := range cases {
		if got := quote(tc.in); got != tc.want {
			t.Errorf("quote(%.40q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// Whatever a later message puts together, the constructors keep it under
// the limit.
func TestMessageLastResort(t *testing.T) {
	for _, e := range []*Error{
		invalidSchedule("%s", strings.Repeat("€", 10_000)),
		unknownTimeZone("%s", strings.Repeat("x", 10_000)),
	} {
		if len(e.Message) > maxMessage || !utf8.ValidString(e.Message) || !strings.HasSuffix(e.Message, "…") {
			t.Errorf("%s message is %d bytes (limit %d), valid UTF-8 %v: %.60q", e.Reason, len(e.Message), maxMessage, utf8.ValidString(e.Message), e.Message)
		}
	}
}

// The controller copies what Resolve returns into status.resolvedSchedule.
// A valid schedule of a megabyte ("0,0,0,…", from before the schema's cap)
// would double the object in every status write, past what etcd stores, so
// Resolve holds spec.schedule to the schema's cap, counted in characters
// as the API server counts them.
func TestResolveRefusesLongSchedules(t *testing.T) {
	list := func(n int) string { // a valid schedule of n characters
		return "0 " + strings.Repeat("0,", (n-9)/2) + []string{"0 * * *", "00 * * *"}[(n-9)%2]
	}
	cases := []struct {
		name    string
		spec    string
		chars   int // utf8.RuneCountInString(spec), to check the spec is what the name says
		refused bool
	}{
		{"1024 characters", list(1024), 1024, false},
		{"1025 characters", list(1025), 1025, true},
		{"20,000 characters", list(20_000), 20_000, true},
		{"a megabyte", list(1 << 20), 1 << 20, true},
		{"a megabyte of H", strings.Repeat("H,", 1<<19) + "H * * * *", 1<<20 + 9, true},
		{"1024 characters in 3072 bytes", strings.Repeat("€", 1024), 1024, false},
		{"1025 characters in 3075 bytes", strings.Repeat("€", 1025), 1025, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if n := utf8.RuneCountInString(tc.spec); n != tc.chars {
				t.Fatalf("the test's schedule has %d characters, want %d", n, tc.chars)
			}
			if tc.spec[0] == '0' {
				if _, err := Parse(tc.spec, nil); err != nil {
					t.Fatalf("the test's schedule does not parse: %v", err)
				}
			}
			got, err := Resolve(tc.spec, "default/long")
			if !tc.refused {
				if err != nil || got != tc.spec {
					t.Fatalf("Resolve = %.40q…, %v; want it unchanged", got, err)
				}
				return
			}
			se, ok := AsError(err)
			if !ok || se.Reason != ReasonInvalidSchedule {
				t.Fatalf("Resolve = %.40q…, %v; want an InvalidSchedule error", got, err)
			}
			if want := fmt.Sprintf("%d characters", utf8.RuneCountInString(tc.spec)); !strings.Contains(se.Message, want) || !strings.Contains(se.Message, "at most 1024") {
				t.Errorf("message %q does not say %q and the limit", se.Message, want)
			}
		})
	}
}
