// Package corpus gathers the schedules that test the CRD's CEL rules
// against the controller's parser (pkg/schedule): every string literal in
// pkg/schedule's tests (the schedules of the unit tests and the fuzz seeds
// given with f.Add), the fuzz corpus files in testdata/fuzz, and schedules
// generated from a seed, valid and invalid. The unit test in pkg/schedule
// and the end-to-end test against the API server read the same corpus.
package corpus

import (
	"bufio"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// MaxLength is the schema's maxLength of spec.schedule; longer schedules
// are the schema's to refuse, not CEL's, and are left out.
const MaxLength = 1024

// Entry is one schedule and where it came from.
type Entry struct {
	Spec, Source string
}

// keep says whether s goes into the corpus: not empty (the schema's
// minLength), not longer than MaxLength, valid UTF-8 (JSON carries no
// other), and not a format string of the tests' messages.
func keep(s string) bool {
	return s != "" && utf8.RuneCountInString(s) <= MaxLength && utf8.ValidString(s) && !strings.Contains(s, "%")
}

// FromTests returns every string literal in the _test.go files of dir
// (pkg/schedule), import paths left out, in file order.
func FromTests(dir string) ([]Entry, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*_test.go"))
	if err != nil {
		return nil, err
	}
	slices.Sort(files)
	var out []Entry
	fset := token.NewFileSet()
	for _, file := range files {
		f, err := parser.ParseFile(fset, file, nil, parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		imports := map[*ast.BasicLit]bool{}
		for _, spec := range f.Imports {
			imports[spec.Path] = true
		}
		ast.Inspect(f, func(n ast.Node) bool {
			lit, ok := n.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING || imports[lit] {
				return true
			}
			s, err := strconv.Unquote(lit.Value)
			if err == nil && keep(s) {
				out = append(out, Entry{s, "tests: " + filepath.Base(file)})
			}
			return true
		})
	}
	return out, nil
}

// FuzzSeeds returns the string arguments of the fuzz corpus files under
// dir/testdata/fuzz (go test's "go test fuzz v1" format); none when there
// is no such directory.
func FuzzSeeds(dir string) ([]Entry, error) {
	files, err := filepath.Glob(filepath.Join(dir, "testdata", "fuzz", "*", "*"))
	if err != nil {
		return nil, err
	}
	slices.Sort(files)
	var out []Entry
	for _, file := range files {
		f, err := os.Open(file)
		if err != nil {
			return nil, err
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			line := sc.Text()
			if arg, ok := strings.CutPrefix(line, "string("); ok && strings.HasSuffix(arg, ")") {
				if s, err := strconv.Unquote(strings.TrimSuffix(arg, ")")); err == nil && keep(s) {
					out = append(out, Entry{s, "fuzz corpus: " + filepath.Base(filepath.Dir(file))})
				}
			}
		}
		f.Close()
		if err := sc.Err(); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// Load is FromTests and FuzzSeeds of dir, then n generated schedules from
// seed, each schedule once (the first source named).
func Load(dir string, seed uint64, n int) ([]Entry, error) {
	tests, err := FromTests(dir)
	if err != nil {
		return nil, err
	}
	fuzz, err := FuzzSeeds(dir)
	if err != nil {
		return nil, err
	}
	all := append(append(append(tests, fuzz...), Long()...), Generate(seed, n)...)
	seen := map[string]bool{}
	var out []Entry
	for _, e := range all {
		if !seen[e.Spec] {
			seen[e.Spec] = true
			out = append(out, e)
		}
	}
	return out, nil
}

// Long returns schedules of MaxLength characters, valid and not: the rules
// must stay within the API server's cost limit on the longest.
func Long() []Entry {
	fill := func(prefix, element, suffix string) string {
		var b strings.Builder
		b.WriteString(prefix)
		for i := 0; utf8.RuneCountInString(b.String())+len(element)+1+len(suffix) <= MaxLength; i++ {
			if i > 0 {
				b.WriteString(",")
			}
			b.WriteString(element)
		}
		for utf8.RuneCountInString(b.String())+len(suffix) < MaxLength {
			b.WriteString(",")
		}
		return b.String() + suffix
	}
	pad := func(s string) string {
		return s + strings.Repeat(" ", MaxLength-utf8.RuneCountInString(s))
	}
	specs := []string{
		fill("", "59", " 23 31 12 6"),
		fill("", "0-59/7", " * * * *"),
		fill("0 ", "H(0-23)/2", " * * *"),
		fill("0 0 * ", "jan-DEC", " *"),
		fill("0 0 * * ", "Mon-fri", ""),
		fill("", "59", " 23 31 12 7"),    // day of week out of range
		fill("", "60", " * * * *"),       // minute out of range
		fill("", "H(0-5)/7", " * * * *"), // H step wider than its range
		pad("@hourly"),
		pad("@every 1h30m"),
		pad("@every 500ms"),
		pad("0 9 * * THU"),
		pad("0 9 * * THURSDAY"),
		strings.Repeat("\u00a0", MaxLength-9) + "* * * * *",
		"TZ=" + fill("", "1", " * * * *")[3:],
	}
	out := make([]Entry, len(specs))
	for i, s := range specs {
		out[i] = Entry{s, "long"}
	}
	return out
}

// Generate returns n schedules built at random from seed: mostly the forms
// cron and the H syntax accept, with a share of near misses (values out of
// range, reversed ranges, zero steps, names misspelt, wrong field counts,
// @every below a second, TZ= inside, stray characters).
func Generate(seed uint64, n int) []Entry {
	g := gen{rand.New(rand.NewPCG(seed, 0x5eed))}
	out := make([]Entry, 0, n)
	for len(out) < n {
		s := g.schedule()
		if g.r.IntN(8) == 0 {
			s = g.mutate(s)
		}
		if keep(s) {
			out = append(out, Entry{s, "generated"})
		}
	}
	return out
}

type gen struct{ r *rand.Rand }

var bounds = [5][2]int{{0, 59}, {0, 23}, {1, 31}, {1, 12}, {0, 6}}
var hBounds = [5][2]int{{0, 59}, {0, 23}, {1, 28}, {1, 12}, {0, 6}}
var names = [5][]string{3: {"jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"},
	4: {"sun", "mon", "tue", "wed", "thu", "fri", "sat"}}

func (g gen) pick(options ...string) string { return options[g.r.IntN(len(options))] }

func (g gen) schedule() string {
	switch g.r.IntN(20) {
	case 0:
		return g.pick("@yearly", "@annually", "@monthly", "@weekly", "@daily", "@midnight", "@hourly",
			"@Hourly", "@DAILY", "@week", "@every", "@reboot", " @daily ", "@hourly *")
	case 1:
		return "@every " + g.duration()
	case 2:
		return g.pick("TZ=UTC ", "CRON_TZ=Europe/Berlin ", "TZ= ") + g.fields(5)
	case 3:
		return g.fields(g.pick2(4, 6, 3, 1))
	}
	return g.fields(5)
}

func (g gen) pick2(options ...int) int { return options[g.r.IntN(len(options))] }

func (g gen) duration() string {
	units := []string{"ns", "us", "µs", "ms", "s", "m", "h"}
	var b strings.Builder
	if g.r.IntN(10) == 0 {
		b.WriteString(g.pick("+", "-"))
	}
	for range 1 + g.r.IntN(3) {
		fmt.Fprint(&b, g.r.IntN(1500))
		if g.r.IntN(5) == 0 {
			fmt.Fprintf(&b, ".%d", g.r.IntN(100))
		}
		b.WriteString(units[g.r.IntN(len(units))])
	}
	if g.r.IntN(12) == 0 {
		return g.pick("0", "soon", "1H", "1d", "", " 1h", "1.5")
	}
	return b.String()
}

func (g gen) fields(count int) string {
	var parts []string
	for i := range count {
		parts = append(parts, g.field(i%5))
	}
	sep := " "
	if g.r.IntN(10) == 0 {
		sep = g.pick("\t", "  ", "\u00a0", " \n")
	}
	return strings.Join(parts, sep)
}

func (g gen) field(i int) string {
	if g.r.IntN(3) == 0 {
		return g.pick("*", "*", "?", "*/"+g.num(1, 30))
	}
	var elems []string
	for range 1 + g.r.IntN(3) {
		elems = append(elems, g.element(i))
	}
	return strings.Join(elems, ",")
}

// num is a number in lo..hi, sometimes just outside, sometimes written
// with a plus sign or leading zeros.
func (g gen) num(lo, hi int) string {
	v := lo + g.r.IntN(hi-lo+1)
	switch g.r.IntN(40) {
	case 0:
		v = hi + 1 + g.r.IntN(3)
	case 1:
		v = lo - 1
	}
	s := strconv.Itoa(v)
	switch g.r.IntN(15) {
	case 0:
		s = "0" + s
	case 1:
		s = "+" + s
	}
	return s
}

func (g gen) value(i int) string {
	lo, hi := bounds[i][0], bounds[i][1]
	if names[i] != nil && g.r.IntN(3) == 0 {
		name := names[i][g.r.IntN(len(names[i]))]
		switch g.r.IntN(4) {
		case 0:
			name = strings.ToUpper(name)
		case 1:
			name = strings.ToUpper(name[:1]) + name[1:]
		case 2:
			if g.r.IntN(8) == 0 {
				name = name[:2] // misspelt
			}
		}
		return name
	}
	return g.num(lo, hi)
}

func (g gen) element(i int) string {
	if (i == 2 || i == 4) && g.r.IntN(6) == 0 {
		return g.calendarForm(i)
	}
	lo, hi := bounds[i][0], bounds[i][1]
	switch g.r.IntN(16) {
	case 0, 1, 2, 8, 9, 10, 11, 12, 13, 14:
		return g.value(i)
	case 3, 4:
		if g.r.IntN(4) > 0 {
			a := lo + g.r.IntN(hi-lo+1)
			return strconv.Itoa(a) + "-" + strconv.Itoa(a+g.r.IntN(hi-a+1))
		}
		return g.value(i) + "-" + g.value(i)
	case 5:
		return g.value(i) + "-" + g.value(i) + "/" + g.num(1, hi-lo+1)
	case 6:
		return g.value(i) + "/" + g.num(1, 10)
	case 7:
		hlo, hhi := hBounds[i][0], hBounds[i][1]
		switch g.r.IntN(4) {
		case 0:
			return "H"
		case 1:
			return "H/" + g.num(1, hhi-hlo+1)
		case 2:
			return "H(" + g.num(hlo, hhi) + "-" + g.num(hlo, hhi) + ")"
		default:
			return "H(" + g.num(hlo, hhi) + "-" + g.num(hlo, hhi) + ")/" + g.num(1, hhi-hlo+1)
		}
	default:
		return g.pick("*", "?", "*/"+g.num(0, hi), "*-"+g.value(i), "x", "h", "H-1", "L", "#", "")
	}
}

// calendarForm is an L, W or # form of the day of month (i == 2) or the
// day of week, in either case, sometimes out of bounds or misplaced.
func (g gen) calendarForm(i int) string {
	l, w := g.pick("L", "L", "l"), g.pick("W", "W", "w")
	if i == 2 {
		switch g.r.IntN(6) {
		case 0:
			return l
		case 1:
			return l + "-" + g.num(1, 30)
		case 2:
			return l + w
		case 3:
			return g.pick("0W", "32W", "W", "L-0", "1-L", "L/2", "MON#1", "L-3W")
		}
		return g.num(1, 31) + w
	}
	switch g.r.IntN(5) {
	case 0, 1:
		return g.value(i) + l
	case 2:
		return g.pick("L", "5W", "LW", "#1", "MON#6", "MON#0", "1-5#2")
	}
	return g.value(i) + "#" + g.num(1, 5)
}

// mutate inserts, deletes or replaces one character.
func (g gen) mutate(s string) string {
	runes := []rune(s)
	pos := g.r.IntN(len(runes) + 1)
	c := []rune(g.pick("0", "9", "*", ",", "-", "/", " ", "H", "(", ")", "x", "\t"))[0]
	switch g.r.IntN(3) {
	case 0:
		runes = slices.Insert(runes, pos, c)
	case 1:
		if pos < len(runes) {
			runes = slices.Delete(runes, pos, pos+1)
		}
	default:
		if pos < len(runes) {
			runes[pos] = c
		}
	}
	return string(runes)
}
