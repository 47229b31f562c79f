package schedule

import (
	"math/rand/v2"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"k8s.io/utils/ptr"
)

var fuzzZones = []string{"UTC", "America/New_York", "Europe/Berlin", "Asia/Kolkata", "Australia/Lord_Howe", "Pacific/Chatham"}

// Parsing any input returns a schedule or a *schedule.Error with a short
// message; never a panic.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"* * * * *", "0 9 * * 1-5", "@every 1h30m", "@hourly", "TZ=UTC * * * * *", "59 23 31 2 *",
		"*/0 * * * *", "0-59/61 * * * *", "@every 0s", "1,2,3-9/2 */4 1 JAN-DEC SUN-SAT", "?", "@every -1s", "0 0 0 0 0",
		"0 0 L-2,15W * MON#1", "0 0 ? * 5L", "0 0 32W * *", "0 0 * 2 FRI#5"} {
		f.Add(s, uint8(0))
	}
	for _, s := range fuzzSpecs() {
		f.Add(s, uint8(len(s)))
	}
	f.Fuzz(func(t *testing.T, spec string, zone uint8) {
		s, err := Parse(spec, ptr.To(fuzzZones[int(zone)%len(fuzzZones)]))
		if err != nil {
			if se, ok := AsError(err); !ok {
				t.Fatalf("Parse(%q) error %v is not a *schedule.Error", spec, err)
			} else if len(se.Message) >= messageLimit {
				t.Fatalf("Parse(%q): message of %d bytes", spec, len(se.Message))
			}
			return
		}
		// A schedule that parses fires within the next five years.
		from := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		if next := s.Next(from); next.IsZero() || !next.After(from) {
			t.Fatalf("Parse(%q) accepted a schedule whose next run after %v is %v", spec, from, next)
		}
	})
}

// fuzzSpecs are the corpus of corpus_test.go and the specs the hash tests
// name, as seeds for FuzzParse and FuzzResolve.
func fuzzSpecs() []string {
	specs := append(append([]string{}, standardForms...), hashForms...)
	return append(specs, "Hx * * * *", "xH * * * *", "H-5 * * * *", "0 9 * * THU-H", "h * * * *", "h/15 * * * *",
		"0 9 * * h", "@HOURLY", "@every 1H", "TZ=Europe/Helsinki 0 9 * * *", "CRON_TZ=Asia/Ho_Chi_Minh H * * * *",
		"@every H", "H(1-2 * * * *", "H(1-5)) * * * *", "H/ * * * *", "H,,H * * * *", ",H * * * *", "H\u00a0* * * *",
		" @hourly", "\t@weekly\n", "@every\t1h")
}

// Resolve never panics, refuses a spec past MaxScheduleLength, leaves a
// spec without an H form exactly as it is, and otherwise returns a
// *schedule.Error with a short message or a spec with no H form left whose
// other fields are as written.
func FuzzResolve(f *testing.F) {
	for _, s := range fuzzSpecs() {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, spec string) {
		checkResolve(t, spec)
	})
}

func checkResolve(t *testing.T, spec string) {
	t.Helper()
	got, err := Resolve(spec, "default/fuzz")
	if utf8.RuneCountInString(spec) > MaxScheduleLength {
		if se, ok := AsError(err); !ok || len(se.Message) >= messageLimit {
			t.Fatalf("Resolve(%.40q…) = %.40q…, %v; want a short *schedule.Error past the length cap", spec, got, err)
		}
		return
	}
	if !hasHToken(spec) {
		if err != nil || got != spec {
			t.Fatalf("Resolve(%q) = %q, %v; a spec without an H form must come back unchanged", spec, got, err)
		}
		return
	}
	if err != nil {
		if se, ok := AsError(err); !ok {
			t.Fatalf("Resolve(%q) error %v is not a *schedule.Error", spec, err)
		} else if len(se.Message) >= messageLimit {
			t.Fatalf("Resolve(%q): message of %d bytes", spec, len(se.Message))
		}
		return
	}
	if hasHToken(got) {
		t.Fatalf("Resolve(%q) = %q still holds an H form", spec, got)
	}
	in, out := strings.Fields(spec), strings.Fields(got)
	if len(in) != len(out) {
		t.Fatalf("Resolve(%q) = %q: %d fields became %d", spec, got, len(in), len(out))
	}
	for i := range in {
		if !hasHToken(in[i]) && in[i] != out[i] {
			t.Fatalf("Resolve(%q) = %q: field %q became %q", spec, got, in[i], out[i])
		}
	}
}

// The fuzz property on every run of go test, not only under -fuzz: many
// random specs built from cron's own pieces (names in mixed case, H and h,
// brackets, separators of every kind).
func TestResolveProperty(t *testing.T) {
	pieces := []string{"H", "h", "T", "U", "THU", "thu", "tHu", "MON", "jan", "@", "@hourly", "@every ", "1h", "TZ=", "x",
		"0", "5", "59", "*", "?", "-", "/", ",", "(", ")", " ", "  ", "\t", "\n", "\u00a0", "\u2003"}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 50_000 {
		var b strings.Builder
		for range 1 + rng.IntN(16) {
			b.WriteString(pieces[rng.IntN(len(pieces))])
		}
		checkResolve(t, b.String())
	}
}

// MostRecent keeps its invariants, and agrees with a walk over every
// scheduled time where that walk is short.
func FuzzMostRecent(f *testing.F) {
	specs := []string{"* * * * *", "*/7 * * * *", "0 * * * *", "30 2 * * *", "0 9 * * 1-5", "15 3 * * 0", "0 0 1 * *", "0 12 29 2 *", "@every 13s", "@every 1h7m", "0 2,3 * * *",
		"0 9 L * *", "30 2 ? * SUN#2", "0 * LW * FRIL"}
	f.Add(uint8(0), uint8(0), int64(1_777_000_000), uint32(600))
	f.Add(uint8(3), uint8(1), int64(1_793_500_000), uint32(90_000))
	f.Add(uint8(10), uint8(2), int64(1_774_745_000), uint32(7200))
	f.Add(uint8(4), uint8(4), int64(1_700_000_000), uint32(4_000_000))
	f.Fuzz(func(t *testing.T, specIndex, zoneIndex uint8, earliestUnix int64, span uint32) {
		spec, zone := specs[int(specIndex)%len(specs)], fuzzZones[int(zoneIndex)%len(fuzzZones)]
		s, err := Parse(spec, ptr.To(zone))
		if err != nil {
			t.Fatal(err)
		}
		// Keep to the years around now, where the zone database is exact.
		earliest := time.Unix(1_600_000_000+(earliestUnix%400_000_000+400_000_000)%400_000_000, int64(span%1000)*1e6)
		now := earliest.Add(time.Duration(span%50_000_000) * time.Second)
		due, err := s.MostRecent(earliest, now)
		if err != nil {
			t.Fatalf("%s in %s from %v to %v: %v", spec, zone, earliest, now, err)
		}
		if !due.Time.IsZero() && (!due.Time.After(earliest) || due.Time.After(now)) {
			t.Fatalf("%s in %s: due %v outside (%v, %v]", spec, zone, due.Time, earliest, now)
		}
		if due.Next.IsZero() || !due.Next.After(now) {
			t.Fatalf("%s in %s: next %v not after now %v", spec, zone, due.Next, now)
		}
		if due.Time.IsZero() != (due.Missed == 0) {
			t.Fatalf("%s in %s: due %v with %d missed", spec, zone, due.Time, due.Missed)
		}

		var walked time.Time
		count := 0
		for x := s.Next(earliest); !x.IsZero() && !x.After(now); x = s.Next(x) {
			walked, count = x, count+1
			if count > 5000 {
				return // too long to walk in a fuzz iteration
			}
		}
		if !due.Time.Equal(walked) || due.Missed != min(count, ManyMissed+1) {
			t.Fatalf("%s in %s from %v to %v: due %v (%d missed), walk found %v (%d)", spec, zone, earliest, now, due.Time, due.Missed, walked, count)
		}
	})
}
