package schedule

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/robfig/cron/v3"
	"k8s.io/utils/ptr"
)

// hTokenRE finds an H of ours the way the H syntax defines it, written
// independently of hash.go's tokenizer so the two check each other: an H
// that starts a list element (after the start, whitespace as
// strings.Fields knows it, or a comma) and is followed by the end of the
// element, "(" or "/".
var hTokenRE = regexp.MustCompile(`(?:^|[\t\n\v\f\r\x{85}\p{Z},])H(?:$|[\t\n\v\f\r\x{85}\p{Z},(/])`)

func hasHToken(spec string) bool { return hTokenRE.MatchString(spec) }

// standardForms are schedules robfig/cron v3's ParseStandard accepts and
// that hold no H of ours. Resolve must leave them alone, and through
// Resolve+Parse they must fire exactly when cron says. The day and month
// names come from cron's spec.go (jan…dec, sun…sat, looked up lower-cased,
// so any case works); THU is the only name holding an H, in any case that
// keeps its capital H.
var standardForms = []string{
	// Day names, every case; THU is the one that broke.
	"0 9 * * THU",
	"0 9 * * thu",
	"0 9 * * Thu",
	"0 9 * * tHu",
	"0 9 * * tHU",
	"0 9 * * SUN",
	"0 9 * * mon",
	"0 9 * * Tue",
	"0 9 * * wEd",
	"0 9 * * FRI",
	"0 9 * * sat",
	// Day ranges, lists and steps with names.
	"0 9 * * MON-THU",
	"0 9 * * mon-thu",
	"0 9 * * Mon-Thu",
	"0 9 * * THU-SAT",
	"0 9 * * TUE,THU",
	"0 9 * * tue,thu",
	"0 9 * * THU,SUN",
	"0 9 * * MON-FRI/2",
	"0 9 * * SUN-SAT/3",
	"0 9 * * THU/2",
	"0 9 * * MON,THU-FRI",
	"0 9 * * 1-3,THU",
	// Month names, every case, ranges and lists.
	"0 0 1 JAN *",
	"0 0 1 jan *",
	"0 0 1 Jan *",
	"0 0 1 jan-MAR *",
	"0 0 1 JAN-DEC/3 *",
	"0 0 1 jul,AUG *",
	"0 0 1 Feb,apr,Jun,sep,NOV *",
	"0 0 1 MAY-oct/2 *",
	"0 0 1 dec *",
	"0 12 * JAN-MAR THU",
	"0 12 * mar,jun,sep,dec mon-thu",
	// ? stands for * in the day fields.
	"0 9 ? * MON",
	"0 9 1 * ?",
	"30 * ? ? ?",
	// Numbers, ranges, steps, lists.
	"* * * * *",
	"*/5 * * * *",
	"*/1 9 * * THU",
	"0-59/15 * * * *",
	"5/15 * * * *",
	"0 */2 * * *",
	"0 9-17 * * 1-5",
	"30 6-16/4 * * 1-5",
	"0,15,30,45 * * * *",
	"1,2,3-9/2 */4 1 JAN-DEC SUN-SAT",
	"0 0 29 2 *",
	"0 12 1,15 * *",
	"0 0 31 * *",
	"0 0 * * 0",
	"0 0 * * 6",
	"59 23 28-31 * *",
	"0 0 1-7 * 1",
	"0 0,12 */10 */2 *",
	"1,,2 * * * *",
	// Descriptors: cron knows exactly these, lower case only.
	"@hourly",
	"@daily",
	"@midnight",
	"@weekly",
	"@monthly",
	"@yearly",
	"@annually",
	"@every 1h30m",
	"@every 90m",
	"@every 24h",
	"@every 1h0m30s",
	// Separators: cron splits on any whitespace, as strings.Fields does.
	"0\t9\t*\t*\tTHU",
	"0  9   *    *     THU",
	"0 \t 9 * * mon-THU",
	"0 9 * * TUE,THU\n",
	"  0 9 * * THU  ",
	"\t0 9 * * thu\n",
}

// hashForms hold at least one H of ours, alone or among the standard
// forms above.
var hashForms = []string{
	"H * * * *",
	"H H * * *",
	"H H H H H",
	"H(0-29) * * * *",
	"H/15 * * * *",
	"H(10-20)/5 * * * *",
	"H(0-59)/60 * * * *",
	"0,H * * * *",
	"H,30 * * * *",
	"H,H(30-39),H/20 * * * *",
	"H(1-5) * * * THU",
	"H H(9-17) * * MON-THU",
	"H 9 * * TUE,THU",
	"H 9 * * tue,thu",
	"0 9 * * MON,H",
	"0 9 * * THU,H",
	"0 9 * * H,THU",
	"0 9 * * H(1-5)",
	"0 9 * * H(1-5)/2",
	"0 0 H * *",
	"0 0 1 H *",
	"0 0 1 H,JAN *",
	"0 0 1 jan-MAR,H *",
	"0 0 ? H ?",
	"H/30 H(0-5)/2 * * *",
	"H\tH\t*\t*\tthu",
	"  H 9 * * Thu  ",
	"H  9  *  *  THU",
}

// A year of runs from cron itself and from Resolve+Parse must be the same
// list, for every standard form: Resolve may not misread a name, a list or
// a separator as an H.
func TestResolveKeepsStandardForms(t *testing.T) {
	from := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	until := from.AddDate(1, 0, 0)
	for _, spec := range standardForms {
		t.Run(spec, func(t *testing.T) {
			t.Parallel()
			if hasHToken(spec) {
				t.Fatalf("%q holds an H token: it belongs in hashForms", spec)
			}
			want, err := cron.ParseStandard(spec)
			if err != nil {
				t.Fatalf("cron.ParseStandard(%q): %v; the corpus is for forms cron accepts", spec, err)
			}
			resolved, err := Resolve(spec, "default/corpus")
			if err != nil {
				t.Fatalf("Resolve(%q): %v", spec, err)
			}
			if resolved != spec {
				t.Fatalf("Resolve(%q) = %q, want it unchanged", spec, resolved)
			}
			got, err := Parse(resolved, ptr.To("UTC"))
			if err != nil {
				t.Fatalf("Parse(%q): %v", resolved, err)
			}
			// The walk ends at the first run past a year, compared too, so a
			// form that fires less than once a year (29 February) counts.
			w, g := want.Next(from), got.Next(from)
			for run := 1; ; run++ {
				if !w.Equal(g) {
					t.Fatalf("run %d: cron says %v, Resolve+Parse says %v", run, w, g)
				}
				if w.IsZero() || w.After(until) {
					break
				}
				w, g = want.Next(w), got.Next(g)
			}
		})
	}
}

// Every H form resolves to a schedule that parses, holds no H any more,
// and keeps the fields that had no H exactly as written.
func TestResolveHashForms(t *testing.T) {
	for _, spec := range hashForms {
		t.Run(spec, func(t *testing.T) {
			if !hasHToken(spec) {
				t.Fatalf("%q holds no H token: it belongs in standardForms", spec)
			}
			resolved, err := Resolve(spec, "default/corpus")
			if err != nil {
				t.Fatalf("Resolve(%q): %v", spec, err)
			}
			if hasHToken(resolved) {
				t.Errorf("Resolve(%q) = %q still holds an H", spec, resolved)
			}
			if again, _ := Resolve(spec, "default/corpus"); again != resolved {
				t.Errorf("Resolve(%q) is unstable: %q then %q", spec, resolved, again)
			}
			if _, err := Parse(resolved, ptr.To("UTC")); err != nil {
				t.Fatalf("Resolve(%q) = %q: Parse: %v", spec, resolved, err)
			}
			in, out := strings.Fields(spec), strings.Fields(resolved)
			if len(in) != len(out) {
				t.Fatalf("Resolve(%q) = %q: %d fields became %d", spec, resolved, len(in), len(out))
			}
			for i := range in {
				if !hasHToken(in[i]) && in[i] != out[i] {
					t.Errorf("Resolve(%q) = %q: field %d %q became %q", spec, resolved, i, in[i], out[i])
				}
			}
		})
	}
}
