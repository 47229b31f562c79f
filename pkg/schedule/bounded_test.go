package schedule

import (
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
		{"H with too many fields", true, "H * * * * " + long, nil, ReasonInvalidSchedule, "five-field form"},
		{"H with a long range start", true, "H(" + digits + "-1) * * * *", nil, ReasonInvalidSchedule, "range start"},
		{"H with a long step", true, "H/" + digits + " * * * *", nil, ReasonInvalidSchedule, "step"},
		{"H with long text after it", true, "H(1-5)/" + long + " * * * *", nil, ReasonInvalidSchedule, "step"},
		{"H unclosed", true, "H(1-2" + long + " * * * *", nil, ReasonInvalidSchedule, "unclosed"},
		{"long list, bad H last", true, strings.Repeat("H,", 10_000) + "H(0-99) * * * *", nil, ReasonInvalidSchedule, "outside 0-59"},
		{"H and escapes", true, "H(" + nasty + ") * * * *", nil, ReasonInvalidSchedule, "minute field"},
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
