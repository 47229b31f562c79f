package v1_test

import (
	"flag"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"sort"
	"strings"
	"testing"

	"github.com/cronjob-controller/cronjob-controller/pkg/schedule"
)

var update = flag.Bool("update", false, "rewrite the CEL rule markers in types.go from pkg/schedule")

const xvalidation = "// +kubebuilder:validation:XValidation:"

// markers are the marker lines of rules, as controller-gen reads them.
func markers(rules []schedule.Validation) []string {
	var out []string
	for _, r := range rules {
		line := xvalidation + "rule=`" + r.Rule + "`"
		if r.Message != "" {
			line += ",message=`" + r.Message + "`"
		}
		if r.MessageExpression != "" {
			line += ",messageExpression=`" + r.MessageExpression + "`"
		}
		out = append(out, line)
	}
	return out
}

// The CEL rules on spec.schedule and spec.timeZone are pkg/schedule's,
// verbatim: the markers on the fields are written from them (go test
// ./pkg/apis/batch/v1 -run TestValidationMarkers -update, then make
// manifests), and this test fails when they differ.
func TestValidationMarkers(t *testing.T) {
	const file = "types.go"
	src, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, file, src, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{
		"Schedule": markers(schedule.ScheduleValidations()),
		"TimeZone": markers(schedule.TimeZoneValidations()),
	}
	lines := strings.Split(string(src), "\n")
	// Rewrite from the bottom so line numbers above stay right.
	type edit struct {
		first, last int // lines of the field's marker block, 0-based, last exclusive
		field       string
	}
	var edits []edit
	// block finds the marker lines of a doc comment, or the line before
	// pos when it has none yet.
	block := func(doc *ast.CommentGroup, pos token.Pos) (first, last int) {
		first, last = -1, -1
		for _, c := range doc.List {
			if strings.HasPrefix(c.Text, xvalidation) {
				line := fset.Position(c.Pos()).Line - 1
				if first < 0 {
					first = line
				}
				last = line + 1
			}
		}
		if first < 0 {
			first = fset.Position(pos).Line - 1
			last = first
		}
		return first, last
	}
	// The entries of spec.schedules carry the rules of spec.schedule on
	// their type, ScheduleEntry.
	const entryType = "ScheduleEntry"
	want[entryType] = want["Schedule"]
	for _, d := range f.Decls {
		gd, ok := d.(*ast.GenDecl)
		if !ok || gd.Tok != token.TYPE || gd.Doc == nil || gd.Specs[0].(*ast.TypeSpec).Name.Name != entryType {
			continue
		}
		first, last := block(gd.Doc, gd.Pos())
		if strings.Join(lines[first:last], "\n") != strings.Join(want[entryType], "\n") {
			if !*update {
				t.Errorf("%s: the rule markers in types.go differ from pkg/schedule's rules; run go test ./pkg/apis/batch/v1 -run TestValidationMarkers -update, then make manifests", entryType)
			}
			edits = append(edits, edit{first, last, entryType})
		}
	}
	ast.Inspect(f, func(n ast.Node) bool {
		ts, ok := n.(*ast.TypeSpec)
		if !ok || ts.Name.Name != "CronJobSpec" {
			return true
		}
		for _, field := range ts.Type.(*ast.StructType).Fields.List {
			name := field.Names[0].Name
			if want[name] == nil {
				continue
			}
			if field.Doc == nil {
				t.Fatalf("CronJobSpec.%s has no doc comment", name)
			}
			first, last := -1, -1
			for _, c := range field.Doc.List {
				if strings.HasPrefix(c.Text, xvalidation) {
					line := fset.Position(c.Pos()).Line - 1
					if first < 0 {
						first = line
					}
					last = line + 1
				}
			}
			if first < 0 { // none yet: before the field itself
				first = fset.Position(field.Pos()).Line - 1
				last = first
			}
			got := lines[first:last]
			if strings.Join(got, "\n") != strings.Join(indent(want[name]), "\n") {
				if !*update {
					t.Errorf("CronJobSpec.%s: the rule markers in types.go differ from pkg/schedule's rules; run go test ./pkg/apis/batch/v1 -run TestValidationMarkers -update, then make manifests", name)
				}
				edits = append(edits, edit{first, last, name})
			}
		}
		return false
	})
	if !*update || len(edits) == 0 {
		return
	}
	sort.Slice(edits, func(i, j int) bool { return edits[i].first < edits[j].first })
	for i := len(edits) - 1; i >= 0; i-- {
		e := edits[i]
		rules := indent(want[e.field])
		if e.field == entryType {
			rules = want[e.field]
		}
		lines = append(lines[:e.first], append(append([]string{}, rules...), lines[e.last:]...)...)
	}
	if err := os.WriteFile(file, []byte(strings.Join(lines, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("rewrote the markers of %d fields in %s", len(edits), file)
}

func indent(lines []string) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = "\t" + l
	}
	return out
}
