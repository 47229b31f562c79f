//go:build e2e

package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	cronv1 "github.com/cronjob-controller/cronjob-controller/pkg/apis/batch/v1"
)

// dashboard is what the test reads of a Grafana dashboard's JSON model.
type dashboard struct {
	Title         string `json:"title"`
	UID           string `json:"uid"`
	SchemaVersion int    `json:"schemaVersion"`
	Templating    struct {
		List []struct {
			Type  string `json:"type"`
			Name  string `json:"name"`
			Query any    `json:"query"`
		} `json:"list"`
	} `json:"templating"`
	Panels []struct {
		ID         int    `json:"id"`
		Type       string `json:"type"`
		Title      string `json:"title"`
		Datasource *struct {
			UID string `json:"uid"`
		} `json:"datasource"`
		GridPos struct{ H, W, X, Y int } `json:"gridPos"`
		Targets []struct {
			RefID string `json:"refId"`
			Expr  string `json:"expr"`
		} `json:"targets"`
	} `json:"panels"`
}

// artifacts/grafana/cronjob-controller.json is a well-formed dashboard
// (a title and uid, panels with unique ids inside the 24-column grid, each
// query on the datasource variable, the namespace and cronjob variables),
// and every metric its queries name is one a running controller exports:
// the test scrapes one that works a CronJob that succeeds under a failure
// policy and one whose runs are missed.
func TestGrafanaDashboardQueriesWhatTheControllerExports(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(env.root, "artifacts", "grafana", "cronjob-controller.json"))
	if err != nil {
		t.Fatal(err)
	}
	var d dashboard
	dec := json.NewDecoder(strings.NewReader(string(data)))
	if err := dec.Decode(&d); err != nil {
		t.Fatal(err)
	}
	if d.Title == "" || d.UID == "" || d.SchemaVersion == 0 {
		t.Errorf("title %q, uid %q, schemaVersion %d: want all three", d.Title, d.UID, d.SchemaVersion)
	}
	var variables []string
	var exprs []string
	for _, v := range d.Templating.List {
		variables = append(variables, v.Name)
		if q, ok := v.Query.(map[string]any); ok {
			exprs = append(exprs, fmt.Sprint(q["query"]))
		}
	}
	for _, want := range []string{"datasource", "namespace", "cronjob"} {
		if !slices.Contains(variables, want) {
			t.Errorf("no variable %s among %v", want, variables)
		}
	}
	ids := map[int]bool{}
	for _, p := range d.Panels {
		if ids[p.ID] {
			t.Errorf("panel id %d twice", p.ID)
		}
		ids[p.ID] = true
		if p.GridPos.W < 1 || p.GridPos.X < 0 || p.GridPos.X+p.GridPos.W > 24 || p.GridPos.H < 1 {
			t.Errorf("panel %q outside the grid: %+v", p.Title, p.GridPos)
		}
		if p.Type == "row" {
			continue
		}
		if p.Title == "" || len(p.Targets) == 0 || p.Datasource == nil || p.Datasource.UID != "${datasource}" {
			t.Errorf("panel %d %q: a title, targets and the datasource variable wanted", p.ID, p.Title)
		}
		refs := map[string]bool{}
		for _, tg := range p.Targets {
			if tg.Expr == "" || tg.RefID == "" || refs[tg.RefID] {
				t.Errorf("panel %q: target %+v without a query or with a repeated refId", p.Title, tg)
			}
			refs[tg.RefID] = true
			exprs = append(exprs, tg.Expr)
		}
	}

	// A controller with every family in its scrape.
	ns := newNamespace(t)
	metricsAddr := freeAddr(t)
	startController(t, "-metrics-bind-address="+metricsAddr, "-leader-elect", "-leader-elect-namespace="+ns)
	ok := createCronJob(t, cronJob(ns, "succeeds", "@every 2s", func(cj *cronv1.CronJob) {
		cj.Spec.FailurePolicy = &cronv1.FailurePolicy{PauseAfter: 3}
	}))
	held := createCronJob(t, cronJob(ns, "held", "@every 2s", stuck, func(cj *cronv1.CronJob) {
		cj.Spec.ConcurrencyPolicy = cronv1.ForbidConcurrent
	}))
	eventually(t, 60*time.Second, "a success and a missed run", func() (bool, string) {
		s, h := getCronJob(t, ns, ok.Name), getCronJob(t, ns, held.Name)
		return s.Status.LastSuccessfulTime != nil && len(h.Status.MissedRuns) > 0, fmt.Sprintf("%+v / %+v", s.Status, h.Status)
	})
	var exported map[string]bool
	eventually(t, 30*time.Second, "a scrape with the CronJobs' series", func() (bool, string) {
		code, body := httpGet("http://" + metricsAddr + "/metrics")
		if code != http.StatusOK {
			return false, body
		}
		parser := expfmt.NewTextParser(model.UTF8Validation)
		families, err := parser.TextToMetricFamilies(strings.NewReader(body))
		if err != nil {
			return false, err.Error()
		}
		exported = map[string]bool{}
		for name, f := range families {
			exported[name] = true
			if f.GetType().String() == "HISTOGRAM" {
				for _, suffix := range []string{"_bucket", "_sum", "_count"} {
					exported[name+suffix] = true
				}
			}
		}
		return exported["cronjob_controller_cronjob_status_missed_runs_total"] && exported["cronjob_controller_cronjob_status_last_successful_time"], ""
	})

	named := map[string]bool{}
	for _, e := range exprs {
		for _, name := range metricNames(e) {
			named[name] = true
		}
	}
	if len(named) == 0 {
		t.Fatal("the dashboard's queries name no metric")
	}
	var missing []string
	for name := range named {
		if !exported[name] {
			missing = append(missing, name)
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("the dashboard queries metrics the controller does not export: %v", missing)
	}
	t.Logf("%d queries name %d metrics", len(exprs), len(named))
}

// promqlWords are the functions, aggregations and keywords the dashboard's
// queries use: every other identifier left in a query is a metric name.
var promqlWords = []string{"sum", "max", "min", "avg", "count", "rate", "increase", "irate", "histogram_quantile",
	"time", "label_values", "by", "without", "on", "ignoring", "group_left", "group_right", "and", "or", "unless",
	"offset", "bool"}

// metricNames returns the metric names a PromQL expression (or a Grafana
// label_values query) selects: what is left once label matchers, grouping
// clauses, ranges, strings and numbers are taken out, less promqlWords.
func metricNames(expr string) []string {
	for _, strip := range []*regexp.Regexp{
		regexp.MustCompile(`"[^"]*"`),
		regexp.MustCompile(`\{[^}]*\}`),
		regexp.MustCompile(`\[[^\]]*\]`),
		regexp.MustCompile(`\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)`),
		regexp.MustCompile(`,\s*[a-zA-Z_]+\s*\)`), // label_values(metric, label)
	} {
		expr = strip.ReplaceAllString(expr, " ")
	}
	var names []string
	for _, id := range regexp.MustCompile(`[a-zA-Z_:][a-zA-Z0-9_:]*`).FindAllString(expr, -1) {
		if !slices.Contains(promqlWords, id) {
			names = append(names, id)
		}
	}
	return names
}
