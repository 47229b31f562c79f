package main

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	cronv1 "github.com/cronjob-controller/cronjob-controller/pkg/apis/batch/v1"
	"github.com/cronjob-controller/cronjob-controller/pkg/backfill"
	"github.com/cronjob-controller/cronjob-controller/pkg/job"
	"github.com/cronjob-controller/cronjob-controller/pkg/metrics"
	"github.com/cronjob-controller/cronjob-controller/pkg/planner"
)

// The claims of README.md and docs/*.md that name code: metric label values
// and Event reasons (docs/metrics.md) and the tests cited as proof. Docs that
// drift from the code are defects.
func TestReadmeNamesWhatTheCodeHas(t *testing.T) {
	read := func(path string) string {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	docs := map[string]string{"README.md": read("README.md")}
	pages, err := filepath.Glob("docs/*.md")
	if err != nil || len(pages) == 0 {
		t.Fatalf("no docs/*.md: %v", err)
	}
	for _, p := range pages {
		docs[p] = read(p)
	}
	metricsPage := docs["docs/metrics.md"]
	ticked := regexp.MustCompile("`([A-Za-z]+)`")
	line := func(marker string) string {
		for l := range strings.SplitSeq(metricsPage, "\n") {
			if strings.Contains(l, marker) {
				return l
			}
		}
		t.Fatalf("docs/metrics.md has no line with %q", marker)
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

	missed := slices.Sorted(slices.Values(metrics.MissedReasons))
	if got := words(line("cronjob_controller_missed_schedules_total{reason}` | counter")); !slices.Equal(got, missed) {
		t.Errorf("docs/metrics.md's missed-run reasons %q, the code's %q", got, missed)
	}

	events := []string{planner.ReasonSuccessfulCreate, planner.ReasonSawCompletedJob, planner.ReasonSuccessfulDelete,
		planner.ReasonMissSchedule, planner.ReasonJobAlreadyActive, planner.ReasonTooManyMissedTimes, planner.ReasonInvalidSchedule,
		planner.ReasonUnknownTimeZone, planner.ReasonFailedCreate, planner.ReasonFailedDelete, planner.ReasonUnexpectedJob, planner.ReasonMissingJob,
		planner.ReasonRunExcluded, planner.ReasonRunHeld, planner.ReasonRunSkipped, planner.ReasonCalendarNotFound, planner.ReasonCalendarInvalid, planner.ReasonExpired,
		planner.ReasonMaxRunsReached, planner.ReasonPaused, planner.ReasonTrialRun, planner.ReasonResumed}
	slices.Sort(events)
	i := strings.Index(metricsPage, "through its Events:")
	if i < 0 {
		t.Fatal("docs/metrics.md lists no Event reasons")
	}
	if got := words(metricsPage[i : i+strings.Index(metricsPage[i:], ".\n")]); !slices.Equal(got, events) {
		t.Errorf("docs/metrics.md's Event reasons %q, the code's %q", got, events)
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
	cited := regexp.MustCompile("`((?:Test|Benchmark|Fuzz)[A-Z]\\w*)")
	for path, text := range docs {
		for _, m := range cited.FindAllStringSubmatch(text, -1) {
			if !tests[m[1]] {
				t.Errorf("%s cites %s, which no test file declares", path, m[1])
			}
		}
	}
}

// The docs' Uninstalling section must remove backfill-record as well as
// run-record: a Backfill's Job holds backfill-record, and with the
// controller gone it hangs once deleted just the same.
func TestUninstallDocsCoverBackfillRecord(t *testing.T) {
	page, err := os.ReadFile("docs/deploying.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(page), "## Uninstalling")
	if !ok {
		t.Fatal("docs/deploying.md has no Uninstalling section")
	}
	section, _, _ = strings.Cut(section, "\n## ")
	for _, f := range []string{job.RunRecordFinalizer, backfill.Finalizer} {
		if !strings.Contains(section, f) {
			t.Errorf("the Uninstalling section does not name %s", f)
		}
	}
}

// docs/failures.md walks through artifacts/examples/failing-cronjob.yaml:
// the page shows the file as it is, and the file is what the page says it
// is, a minutely CronJob whose Job fails at once, paused after three
// failures and tried again after two minutes.
func TestDocsFailuresExampleIsTheFile(t *testing.T) {
	file, err := os.ReadFile("artifacts/examples/failing-cronjob.yaml")
	if err != nil {
		t.Fatal(err)
	}
	page, err := os.ReadFile("docs/failures.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(page), "```yaml\n"+string(file)+"```\n") {
		t.Error("docs/failures.md does not show artifacts/examples/failing-cronjob.yaml as it is")
	}
	var cj cronv1.CronJob
	if err := yaml.UnmarshalStrict(file, &cj); err != nil {
		t.Fatal(err)
	}
	p, tmpl := cj.Spec.FailurePolicy, cj.Spec.JobTemplate.Spec
	if cj.Spec.Schedule != "*/1 * * * *" || p == nil || p.PauseAfter != 3 || p.ResumeAfter == nil || p.ResumeAfter.Duration != 2*time.Minute ||
		p.MaxResumeAfter != nil || tmpl.BackoffLimit == nil || *tmpl.BackoffLimit != 0 ||
		len(tmpl.Template.Spec.Containers) != 1 || !strings.HasSuffix(strings.Join(tmpl.Template.Spec.Containers[0].Args, " "), "exit 1") {
		t.Errorf("the example is not the CronJob docs/failures.md describes: %+v", cj.Spec)
	}
}
