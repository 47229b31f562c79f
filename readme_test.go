package main

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	cronv1 "github.com/cronjob-controller/cronjob-controller/pkg/apis/batch/v1"
	"github.com/cronjob-controller/cronjob-controller/pkg/planner"
)

// The README's claims that name code: metric label values, Event reasons and
// the tests cited as proof. Docs that drift from the code are defects.
func TestReadmeNamesWhatTheCodeHas(t *testing.T) {
	b, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)
	ticked := regexp.MustCompile("`([A-Za-z]+)`")
	line := func(marker string) string {
		for l := range strings.SplitSeq(readme, "\n") {
			if strings.Contains(l, marker) {
				return l
			}
		}
		t.Fatalf("README has no line with %q", marker)
		return ""
	}
	words := func(s string) []string {
		var out []string
		for _, m := range ticked.FindAllStringSubmatch(s, -1) {
			out = append(out, m[1])
		}
		slices.Sort(out)
		return out
	}

	missed := []string{cronv1.MissedDeadlineExceeded, cronv1.MissedConcurrencyForbidden, cronv1.MissedSuperseded, cronv1.MissedNameTaken, cronv1.MissedJobRejected, cronv1.MissedScheduleChanged,
		cronv1.MissedExcluded, cronv1.MissedCalendarUnresolved}
	slices.Sort(missed)
	if got := words(line("cronjob_controller_missed_schedules_total{reason}` | counter")); !slices.Equal(got, missed) {
		t.Errorf("README's missed-run reasons %q, the code's %q", got, missed)
	}

	events := []string{planner.ReasonSuccessfulCreate, planner.ReasonSawCompletedJob, planner.ReasonSuccessfulDelete,
		planner.ReasonMissSchedule, planner.ReasonJobAlreadyActive, planner.ReasonTooManyMissedTimes, planner.ReasonInvalidSchedule,
		planner.ReasonUnknownTimeZone, planner.ReasonFailedCreate, planner.ReasonFailedDelete, planner.ReasonUnexpectedJob, planner.ReasonMissingJob,
		planner.ReasonRunExcluded, planner.ReasonRunHeld, planner.ReasonCalendarNotFound, planner.ReasonCalendarInvalid, planner.ReasonExpired}
	slices.Sort(events)
	i := strings.Index(readme, "through its Events:")
	if i < 0 {
		t.Fatal("README lists no Event reasons")
	}
	if got := words(readme[i : i+strings.Index(readme[i:], ".\n")]); !slices.Equal(got, events) {
		t.Errorf("README's Event reasons %q, the code's %q", got, events)
	}

	tests := map[string]bool{}
	decl := regexp.MustCompile(`(?m)^func (Test\w+|Benchmark\w+|Fuzz\w+)\(`)
	err = filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() && (d.Name() == "_output" || d.Name() == ".git") {
			return fs.SkipDir
		}
		if strings.HasSuffix(path, "_test.go") {
			src, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			for _, m := range decl.FindAllStringSubmatch(string(src), -1) {
				tests[m[1]] = true
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range regexp.MustCompile("`((?:Test|Benchmark|Fuzz)[A-Z]\\w*)`").FindAllStringSubmatch(readme, -1) {
		if !tests[m[1]] {
			t.Errorf("README cites %s, which no test file declares", m[1])
		}
	}
}
