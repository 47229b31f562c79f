package metrics

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/cronjob-controller/cronjob-controller/pkg/version"
)

// registered is a registry Register filled: Register takes effect once per
// process, as client-go's metric providers can be set once.
var registered = sync.OnceValue(func() *prometheus.Registry {
	reg := prometheus.NewRegistry()
	Register(reg)
	return reg
})

// Every registry Register fills says which build is running: one
// cronjob_controller_build_info series at 1, labelled as version.Get says.
func TestBuildInfoNamesTheRunningBuild(t *testing.T) {
	v := version.Get()
	want := fmt.Sprintf(`
# HELP cronjob_controller_build_info 1, labelled with the running build's version, the commit it was built from (revision) and the Go version that built it.
# TYPE cronjob_controller_build_info gauge
cronjob_controller_build_info{goversion=%q,revision=%q,version=%q} 1
`, v.GoVersion, v.Revision, v.Version)
	if err := testutil.GatherAndCompare(registered(), strings.NewReader(want), "cronjob_controller_build_info"); err != nil {
		t.Error(err)
	}
	stamped := prometheus.NewRegistry()
	stamped.MustRegister(NewBuildInfo(version.Info{Version: "v0.1.0", Revision: "0123abc", GoVersion: "go1.26.8"}))
	want = `
# HELP cronjob_controller_build_info 1, labelled with the running build's version, the commit it was built from (revision) and the Go version that built it.
# TYPE cronjob_controller_build_info gauge
cronjob_controller_build_info{goversion="go1.26.8",revision="0123abc",version="v0.1.0"} 1
`
	if err := testutil.GatherAndCompare(stamped, strings.NewReader(want)); err != nil {
		t.Error(err)
	}
}

// A counter with a reason label shows every known reason at 0 from the
// start: rate() and increase() then see the first event of each, and an
// alert on one has a series to evaluate before anything went wrong.
func TestReasonCountersStartAtZero(t *testing.T) {
	reg := registered()
	want := `
# HELP cronjob_controller_jobs_deleted_total Jobs deleted, by reason: history (beyond the history limits) or replace (concurrencyPolicy Replace).
# TYPE cronjob_controller_jobs_deleted_total counter
cronjob_controller_jobs_deleted_total{reason="history"} 0
cronjob_controller_jobs_deleted_total{reason="replace"} 0
# HELP cronjob_controller_missed_schedules_total Scheduled runs that were not started, by reason: DeadlineExceeded, ConcurrencyForbidden, Superseded, NameTaken, JobRejected, ScheduleChanged, Excluded, CalendarUnresolved, Paused, SuspendedUntil or Skipped (as in status.missedRuns).
# TYPE cronjob_controller_missed_schedules_total counter
cronjob_controller_missed_schedules_total{reason="CalendarUnresolved"} 0
cronjob_controller_missed_schedules_total{reason="ConcurrencyForbidden"} 0
cronjob_controller_missed_schedules_total{reason="DeadlineExceeded"} 0
cronjob_controller_missed_schedules_total{reason="Excluded"} 0
cronjob_controller_missed_schedules_total{reason="JobRejected"} 0
cronjob_controller_missed_schedules_total{reason="NameTaken"} 0
cronjob_controller_missed_schedules_total{reason="Paused"} 0
cronjob_controller_missed_schedules_total{reason="ScheduleChanged"} 0
cronjob_controller_missed_schedules_total{reason="Skipped"} 0
cronjob_controller_missed_schedules_total{reason="Superseded"} 0
cronjob_controller_missed_schedules_total{reason="SuspendedUntil"} 0
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want),
		"cronjob_controller_jobs_deleted_total", "cronjob_controller_missed_schedules_total"); err != nil {
		t.Error(err)
	}
}

// The known reasons are every reason the code defines: the string constants
// Missed* of the API types and the DeleteReason constants of the planner. A
// reason added there and not here would appear only after its first event.
func TestKnownReasonsAreTheCodes(t *testing.T) {
	missed := stringConsts(t, filepath.Join("..", "apis", "batch", "v1"), func(name, typ string) bool {
		return strings.HasPrefix(name, "Missed") && typ == ""
	})
	if got := slices.Sorted(slices.Values(MissedReasons)); !slices.Equal(got, missed) {
		t.Errorf("MissedReasons %q, the API types define %q", got, missed)
	}
	deleted := stringConsts(t, filepath.Join("..", "planner"), func(_, typ string) bool { return typ == "DeleteReason" })
	if got := slices.Sorted(slices.Values(DeleteReasons)); !slices.Equal(got, deleted) {
		t.Errorf("DeleteReasons %q, the planner defines %q", got, deleted)
	}
}

// stringConsts returns the sorted values of the string constants of the
// package in dir (test files aside) that keep reports true for, given the
// constant's name and its declared type ("" when untyped).
func stringConsts(t *testing.T, dir string, keep func(name, typ string) bool) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	fset := token.NewFileSet()
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, decl := range f.Decls {
			g, ok := decl.(*ast.GenDecl)
			if !ok || g.Tok != token.CONST {
				continue
			}
			for _, spec := range g.Specs {
				v := spec.(*ast.ValueSpec)
				typ := ""
				if id, ok := v.Type.(*ast.Ident); ok {
					typ = id.Name
				}
				for i, name := range v.Names {
					if i >= len(v.Values) || !keep(name.Name, typ) {
						continue
					}
					lit, ok := v.Values[i].(*ast.BasicLit)
					if !ok || lit.Kind != token.STRING {
						continue
					}
					s, err := strconv.Unquote(lit.Value)
					if err != nil {
						t.Fatal(err)
					}
					out = append(out, s)
				}
			}
		}
	}
	if len(out) == 0 {
		t.Fatalf("no matching string constants in %s", dir)
	}
	slices.Sort(out)
	return out
}
