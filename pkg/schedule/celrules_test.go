package schedule

import (
	"archive/zip"
	"math/rand/v2"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/cronjob-controller/cronjob-controller/pkg/schedule/corpus"
	"k8s.io/utils/ptr"
)

// celMirror evaluates ScheduleValidations as CEL does, in Go: the same
// expressions through the same regexp package that CEL's matches() and
// findAll use. It returns the index of each rule that fails.
// The end-to-end test TestCELAgreesWithParser runs the real rules in the
// API server; this keeps go test ./... fast and finds a disagreement in
// the expressions long before that.
func celMirror(spec string) []int {
	var failed []int
	tz := strings.Contains(spec, "TZ=")
	if tz {
		failed = append(failed, 0)
	}
	if !tz && (!mirrorRE(ScheduleRE()).MatchString(spec) || !mirrorHStepOK(spec)) {
		failed = append(failed, 1)
	}
	if rest, ok := strings.CutPrefix(strings.TrimSpace(spec), "@every "); ok && mirrorRE("^"+durationRE+"$").MatchString(rest) {
		// CEL's duration() is time.ParseDuration; its error fails the rule.
		if d, err := time.ParseDuration(rest); err != nil || d < time.Second {
			failed = append(failed, 2)
		}
	}
	return failed
}

func mirrorHStepOK(spec string) bool {
	for _, m := range mirrorRE(hStepRE).FindAllString(spec, -1) {
		n := mirrorRE("[0-9]+").FindAllString(m, -1)
		a, _ := strconv.Atoi(n[0])
		b, _ := strconv.Atoi(n[1])
		s, _ := strconv.Atoi(n[2])
		if s > b-a+1 {
			return false
		}
	}
	return true
}

var mirrorCache = map[string]*regexp.Regexp{}

func mirrorRE(expr string) *regexp.Regexp {
	re, ok := mirrorCache[expr]
	if !ok {
		re = regexp.MustCompile(expr)
		mirrorCache[expr] = re
	}
	return re
}

// parserAccepts is what the controller does with a schedule: Resolve, then
// Parse, with the zone left unset.
func parserAccepts(spec, seed string) bool {
	resolved, err := Resolve(spec, seed)
	if err != nil {
		return false
	}
	_, err = Parse(resolved, nil)
	return err == nil
}

// The rules never refuse a schedule the parser accepts, over the corpus
// the end-to-end test uses and many more generated schedules; and they
// catch most of what the parser refuses.
func TestCELMirrorAgreesWithParser(t *testing.T) {
	t.Parallel()
	entries, err := corpus.Load(".", 1, 1_000)
	if err != nil {
		t.Fatal(err)
	}
	refused, caught := 0, 0
	var missed []string
	for _, e := range entries {
		ok := parserAccepts(e.Spec, "default/corpus")
		rules := celMirror(e.Spec)
		if len(rules) > 1 {
			t.Errorf("%q fails rules %v; one at most may fail", e.Spec, rules)
		}
		switch {
		case ok && len(rules) > 0:
			t.Errorf("rules %v refuse %q (%s), which the parser accepts", rules, e.Spec, e.Source)
		case !ok:
			refused++
			if len(rules) > 0 {
				caught++
			} else {
				missed = append(missed, e.Spec)
			}
		}
	}
	share := float64(caught) / float64(refused)
	t.Logf("%d schedules; the parser refuses %d, the rules %d of them (%.1f%%)", len(entries), refused, caught, 100*share)
	for i, s := range missed {
		if i == 30 {
			break
		}
		t.Logf("missed: %q", s)
	}
	if share < 0.95 {
		t.Errorf("the rules catch %.1f%% of the parser's refusals, want at least 95%%", 100*share)
	}
}

// Each rule fails alone, so kubectl prints one reason.
func TestCELRulesFailOneAtATime(t *testing.T) {
	for spec, want := range map[string]int{
		"TZ=UTC 0 * * * *":       0,
		"CRON_TZ=UTC 0 * * * *":  0,
		"every day":              1,
		"0 0 * * * *":            1,
		"61 * * * *":             1,
		"@every 500ms":           2,
		"@every 0.5s":            2,
		"H(0-5)/7 * * * *":       1,
		"0 9 * * 1-5":            -1,
		"H(0-5)/6 * * * *":       -1,
		"@every 1s":              -1,
		"@every 99999999999999h": 2, // CEL's duration() fails: the rule fails
	} {
		got := celMirror(spec)
		if want < 0 && len(got) != 0 || want >= 0 && (len(got) != 1 || got[0] != want) {
			t.Errorf("%q fails rules %v, want only %d", spec, got, want)
		}
	}
}

// The rules' white space is strings.Fields' and strings.TrimSpace's.
func TestCELSpaceIsUnicodeSpace(t *testing.T) {
	re := regexp.MustCompile("^" + space + "$")
	for r := rune(0); r <= unicode.MaxRune; r++ {
		if re.MatchString(string(r)) != unicode.IsSpace(r) {
			t.Errorf("U+%04X: rule says space %v, unicode.IsSpace %v", r, !unicode.IsSpace(r), unicode.IsSpace(r))
		}
	}
}

// A day or month name is what strings.ToLower makes a cron name of. The
// runes that could matter are those Go lower-cases to ASCII and those the
// expressions list (ASCII and U+0130).
func TestCELNamesAreWhatToLowerReads(t *testing.T) {
	var candidates []rune
	for r := rune(0); r <= unicode.MaxRune; r++ {
		if unicode.ToLower(r) <= unicode.MaxASCII || r == '\u0130' {
			candidates = append(candidates, r)
		}
	}
	for _, f := range celFields {
		for _, name := range f.names {
			re := regexp.MustCompile("^" + nameRE(name) + "$")
			for i := range name {
				for _, r := range candidates {
					s := name[:i] + string(r) + name[i+1:]
					if re.MatchString(s) != (strings.ToLower(s) == name) {
						t.Errorf("%q: rule says %v, strings.ToLower %q", s, re.MatchString(s), strings.ToLower(s))
					}
				}
			}
		}
	}
}

// Every zone of Go's embedded database passes the time zone rules; the
// rules and Parse refuse a zone exactly when the built-in CronJob's shape
// check does (builtinZoneShape, written as Kubernetes writes it), or it is
// Local in any case.
func TestCELTimeZoneRules(t *testing.T) {
	zones := []string{"UTC", "Etc/GMT+5", "America/Argentina/ComodRivadavia", "America/Port-au-Prince", "", "Local", "local", "LOCAL",
		"Europe/", "/UTC", "Europe//Berlin", "Europe/./Berlin", "../UTC", "Etc/-5", "Mars Olympus", "America/ThisPartIsTooLong", "...", ".x", "..x"}
	if z, err := zip.OpenReader(filepath.Join(runtime.GOROOT(), "lib", "time", "zoneinfo.zip")); err == nil {
		for _, f := range z.File {
			zones = append(zones, f.Name)
		}
		z.Close()
	}
	pieces := []string{"a", "Z", "0", "9", ".", "..", "-", "_", "+", "/", " ", "é", "Europe", "Berlin_Brandenburg"}
	rng := rand.New(rand.NewPCG(3, 4))
	for range 20_000 {
		var b strings.Builder
		for range 1 + rng.IntN(6) {
			b.WriteString(pieces[rng.IntN(len(pieces))])
		}
		zones = append(zones, b.String())
	}
	accepted := 0
	for _, zone := range zones {
		rules := timeZoneMirror(zone)
		if want := zone != "" && !strings.EqualFold(zone, "Local") && builtinZoneShape(zone); rules != want {
			t.Errorf("rules on %q: %v, the built-in's shape check: %v", zone, rules, want)
		}
		if _, err := Parse("0 * * * *", ptr.To(zone)); err == nil {
			accepted++
			if !rules {
				t.Errorf("the rules refuse %q, which the parser accepts", zone)
			}
		} else if se, _ := AsError(err); !rules && se.Reason != ReasonUnknownTimeZone {
			t.Errorf("Parse(%q): %v", zone, err)
		}
	}
	if accepted < 400 {
		t.Errorf("only %d zones accepted", accepted)
	}
}

// builtinZoneShape is the built-in CronJob's check of spec.timeZone's
// shape (validateTimeZone in Kubernetes' batch validation).
func builtinZoneShape(zone string) bool {
	valid := regexp.MustCompile(`^[A-Za-z\.\-_0-9+]{1,14}$`)
	for _, part := range strings.Split(zone, "/") {
		if part == "." || part == ".." || strings.HasPrefix(part, "-") || !valid.MatchString(part) {
			return false
		}
	}
	return true
}

func timeZoneMirror(zone string) bool {
	return zone != "" && !mirrorRE("^(?i)local$").MatchString(zone) && mirrorRE(TimeZoneRE).MatchString(zone)
}

// The rules stay within the CEL cost budget: CEL prices matches() at the
// schedule's length times the expression's over 40 (Kubernetes allows a
// million per rule), so the longest schedule must stay well under that.
func TestCELRulesCost(t *testing.T) {
	re := ScheduleRE()
	cost := (1 + corpus.MaxLength + 9) / 10 * ((len([]rune(re)) + 3) / 4)
	t.Logf("ScheduleRE: %d characters; matches() on %d characters costs %d", len([]rune(re)), corpus.MaxLength, cost)
	if cost > 500_000 {
		t.Errorf("matches() costs %d on the longest schedule, want at most half the per-rule limit", cost)
	}
}

// The number expressions hold exactly the numbers in their bounds, however
// Atoi may be asked to read them.
func TestCELNumbers(t *testing.T) {
	t.Parallel()
	forms := func(v int) []string {
		s := strconv.Itoa(v)
		return []string{s, "0" + s, "+" + s, "+00" + s, "-" + s}
	}
	for _, b := range [][2]int{{0, 59}, {1, 31}, {1, 28}, {1, 12}, {0, 6}, {5, 5}, {3, 17}} {
		one := regexp.MustCompile("^" + number(b[0], b[1]) + "$")
		pair := regexp.MustCompile("^" + numericRange(b[0], b[1]) + "$")
		for x := -2; x < 64; x++ {
			for _, fx := range forms(x) {
				v, _ := strconv.Atoi(fx)
				if want := b[0] <= v && v <= b[1] && !strings.Contains(fx, "-"); one.MatchString(fx) != want {
					t.Errorf("number(%d, %d) on %q: %v", b[0], b[1], fx, !want)
				}
				if strings.HasPrefix(fx, "0") || strings.HasPrefix(fx, "+00") {
					continue // the pairs take one plain and one signed form
				}
				for y := 0; y < 64; y += 1 + (x+2)%3 {
					for _, fy := range []string{strconv.Itoa(y), "+0" + strconv.Itoa(y)} {
						w, _ := strconv.Atoi(fy)
						s := fx + "-" + fy
						if want := b[0] <= v && v <= w && w <= b[1] && !strings.Contains(fx, "-"); pair.MatchString(s) != want {
							t.Errorf("numericRange(%d, %d) on %q: %v", b[0], b[1], s, !want)
						}
					}
				}
			}
		}
	}
}

// Corners of the grammar, with the parser's verdict. The end-to-end test
// reads them too (it takes every string literal of these files).
var celCorners = []struct {
	spec     string
	accepted bool
}{
	{"*-foo * * * *", true}, // cron ignores what follows a hyphen after * or ?
	{"?-x/5 * * * *", true},
	{"*- * * * *", true},
	{"+5 * * * *", true},
	{"00005 * * * *", true},
	{"*/+5 * * * *", true},
	{"1-+5 * * * *", true},
	{"+01-+059/+02 * * * *", true},
	{"5/59 * * * *", true},
	{"59/1 * * * *", true},
	{"*/9223372036854775807 * * * *", true},
	{"*/9223372036854775808 * * * *", false}, // past int64: the rules allow 19 digits
	{"0 0 ,, * MON", true},                   // no day of month, so the day of week alone
	{"0 0 1 * ,,", true},
	{",,, * * * *", false},
	{"0 9 * * FR\u0130", true}, // strings.ToLower makes fri of it
	{"0 9 * * \u017fun", false},
	{"0 0 1 1-DEC *", true},
	{"0 0 1 JAN-12 *", true},
	{"0 0 * * 0-sat", true},
	{"0 0 * * MON/2", true},
	{"0 0 1 JAN/3 *", true},
	{"0 0 * * 7", false},
	{"0 0 * * sat-sun", false},
	{"@every 1.5s", true},
	{"@every .5s500ms", true},
	{"@every 999999us", false},
	{"@every 1000000\u00b5s", true},
	{"@every 1000000\u03bcs", true},
	{"@every +1h", true},
	{"@every 1h ", true},
	{"@every 1h\u00a0", true},
	{"@every 0", false},
	{"@every -1h", false},
	{"@every 99999999999999999h", false},
	{" \u3000@hourly\u2003", true},
	{"0\u00850 * * *", true}, // U+0085 separates fields, as strings.Fields says
	{"0\u0085 0 * * *", true},
	{"0\u20280\u2029*\u3000*\u205f*", true},
	{"H(+1-+5) * * * *", true},
	{"H(01-05)/05 * * * *", true},
	{"H(01-05)/06 * * * *", false},
	{"H/+5 * * * *", true},
	{"H(0-59)/60 * * * *", true},
	{"H/61 * * * *", false},
	{"0 0 H(1-28) * *", true},
	{"0 0 H(1-29) * *", false},
	{"0 0 * * H(0-6)/7", true},
	{"0 0 * H(2-2) *", true},
	{"*-H(1-5)/9 * * * *", true}, // not an H form: cron's * with ignored text
	{"H(1-5)x * * * *", false},
	{"0 0 29 2 *", true},
	{"0 0 30 2 *", false}, // never fires: the controller's to report
	// The calendar forms of calendar.go, in the day fields only.
	{"0 0 L * *", true},
	{"0 0 l * ?", true},
	{"0 0 L-1 * *", true},
	{"0 0 L-+030 * *", true},
	{"0 0 L-0 * *", false},
	{"0 0 L-31 * *", false},
	{"0 0 LW * *", true},
	{"0 0 lw * *", true},
	{"0 0 15W * *", true},
	{"0 0 015w * *", true},
	{"0 0 1W,L,15 * *", true},
	{",,L, 0 * * *", false},
	{"0 0 ,L, * *", true},
	{"0 0 0W * *", false},
	{"0 0 32W * *", false},
	{"0 0 W * *", false},
	{"0 0 L-3W * *", false},
	{"0 0 L/2 * *", false},
	{"0 0 1-L * *", false},
	{"0 0 ? * 5L", true},
	{"0 0 ? * FRIL", true},
	{"0 0 ? * fRIl", true},
	{"0 0 ? * FRİL", true}, // strings.ToLower makes fri of FRİ, as in cron
	{"0 0 ? * MON#1", true},
	{"0 0 ? * 5#3", true},
	{"0 0 ? * 0#5,6L,WED", true},
	{"0 0 ? * MON#6", false},
	{"0 0 ? * MON#0", false},
	{"0 0 ? * #1", false},
	{"0 0 ? * 7#1", false},
	{"0 0 ? * 7L", false},
	{"0 0 ? * L", false},
	{"0 0 ? * 5W", false},
	{"0 0 ? * MON-FRIL", false},
	{"0 0 L * 5L", true},
	{"L * * * *", false},
	{"0 L * * *", false},
	{"0 0 1 L *", false},
	{"0 0 1 JUL *", true},
	{"0 0 MON#1 * *", false},
	{"0 0 ? 2 FRI#5", false}, // once in 28 years: the controller's to report
	{"0 0 30W 2 *", false},   // never fires: the controller's to report
}

// controllersToReport are the corners the rules cannot refuse.
var controllersToReport = map[string]bool{"0 0 30 2 *": true, "*/9223372036854775808 * * * *": true, "0 0 ? 2 FRI#5": true, "0 0 30W 2 *": true}

func TestCELCorners(t *testing.T) {
	for _, c := range celCorners {
		if got := parserAccepts(c.spec, "default/corners"); got != c.accepted {
			t.Errorf("the parser on %q: %v, want %v", c.spec, got, c.accepted)
		}
		rules := celMirror(c.spec)
		if c.accepted && len(rules) > 0 {
			t.Errorf("rules %v refuse %q, which the parser accepts", rules, c.spec)
		}
		if !c.accepted && len(rules) == 0 && !controllersToReport[c.spec] {
			t.Errorf("the rules accept %q, which the parser refuses", c.spec)
		}
	}
}
