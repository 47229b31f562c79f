//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	cronv1 "github.com/cronjob-controller/cronjob-controller/pkg/apis/batch/v1"
)

const perCronJobPrefix = "cronjob_controller_cronjob_"

// The per-CronJob series say what each CronJob's status says, follow it as
// it changes, and go when the CronJob goes; -per-cronjob-metrics=false
// serves none of them.
func TestPerCronJobMetrics(t *testing.T) {
	ns := newNamespace(t)
	metricsAddr, healthAddr := freeAddr(t), freeAddr(t)
	startController(t, "-metrics-bind-address="+metricsAddr, "-health-probe-bind-address="+healthAddr,
		"-leader-elect", "-leader-elect-namespace="+ns)

	// ok runs and succeeds; held has a Job that never finishes, so under
	// Forbid the runs after it are missed; paused is suspended.
	ok := createCronJob(t, cronJob(ns, "ok", "@every 3s"))
	held := createCronJob(t, cronJob(ns, "held", "@every 3s", stuck, func(cj *cronv1.CronJob) {
		cj.Spec.ConcurrencyPolicy = cronv1.ForbidConcurrent
	}))
	paused := createCronJob(t, cronJob(ns, "paused", "@every 3s", func(cj *cronv1.CronJob) { cj.Spec.Suspend = ptr.To(true) }))

	eventually(t, 60*time.Second, "ok to succeed, held to miss a run", func() (bool, string) {
		o, h := getCronJob(t, ns, ok.Name), getCronJob(t, ns, held.Name)
		done := o.Status.LastSuccessfulTime != nil && len(h.Status.Active) == 1 && missedRunCount(h.Status, cronv1.MissedConcurrencyForbidden) > 0
		return done, fmt.Sprintf("ok %+v; held %+v", o.Status, h.Status)
	})

	for _, cj := range []*cronv1.CronJob{ok, held, paused} {
		seriesMatchStatus(t, metricsAddr, cj)
	}
	// The values follow the status: held's count of missed runs grows.
	before := missedRunCount(getCronJob(t, ns, held.Name).Status, cronv1.MissedConcurrencyForbidden)
	eventually(t, 30*time.Second, "held to miss another run", func() (bool, string) {
		n := missedRunCount(getCronJob(t, ns, held.Name).Status, cronv1.MissedConcurrencyForbidden)
		return n > before, fmt.Sprint(n)
	})
	seriesMatchStatus(t, metricsAddr, held)

	if err := env.cron.BatchV1().CronJobs(ns).Delete(context.Background(), ok.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "ok's series to go", func() (bool, string) {
		series, err := scrapeCronJobSeries(metricsAddr, ns, ok.Name)
		return err == nil && len(series) == 0, fmt.Sprint(series, err)
	})
	if series, err := scrapeCronJobSeries(metricsAddr, ns, paused.Name); err != nil || len(series) == 0 {
		t.Errorf("paused's series went with ok's: %v %v", series, err)
	}

	// A standby with the flag off: once its caches have synced it serves
	// the controller's own metrics, the reasons at 0 among them, and no
	// per-CronJob series.
	offMetrics, offHealth := freeAddr(t), freeAddr(t)
	startController(t, "-metrics-bind-address="+offMetrics, "-health-probe-bind-address="+offHealth,
		"-leader-elect", "-leader-elect-namespace="+ns, "-per-cronjob-metrics=false")
	eventually(t, 30*time.Second, "the standby's /readyz", func() (bool, string) {
		code, body := httpGet("http://" + offHealth + "/readyz")
		return code == http.StatusOK, fmt.Sprint(code, body)
	})
	code, body := httpGet("http://" + offMetrics + "/metrics")
	if code != http.StatusOK {
		t.Fatalf("/metrics answered %d: %s", code, body)
	}
	if !strings.Contains(body, `cronjob_controller_missed_schedules_total{reason="JobRejected"} 0`) {
		t.Error("the standby's /metrics lacks missed_schedules_total{reason=\"JobRejected\"} at 0")
	}
	if strings.Contains(body, perCronJobPrefix) {
		t.Errorf("-per-cronjob-metrics=false serves per-CronJob series:\n%s", grepLines(body, perCronJobPrefix))
	}
}

// seriesMatchStatus waits until one scrape, read between two reads of the
// CronJob that find it unchanged, shows exactly the series its status
// implies.
func seriesMatchStatus(t *testing.T, addr string, cj *cronv1.CronJob) {
	t.Helper()
	var matched map[string]float64
	eventually(t, 30*time.Second, cj.Name+"'s series to match its status", func() (bool, string) {
		first := getCronJob(t, cj.Namespace, cj.Name)
		got, err := scrapeCronJobSeries(addr, cj.Namespace, cj.Name)
		if err != nil {
			return false, err.Error()
		}
		if again := getCronJob(t, cj.Namespace, cj.Name); again.ResourceVersion != first.ResourceVersion {
			return false, "the CronJob changed during the scrape"
		}
		want := wantSeries(first)
		matched = got
		return maps.Equal(got, want), fmt.Sprintf("scraped %v, the status says %v", got, want)
	})
	t.Logf("%s: %v", cj.Name, matched)
}

// wantSeries is what the per-CronJob series of cj should be.
func wantSeries(cj *cronv1.CronJob) map[string]float64 {
	want := map[string]float64{
		"status_active": float64(len(cj.Status.Active)),
		"spec_suspend":  0,
	}
	if ptr.Deref(cj.Spec.Suspend, false) {
		want["spec_suspend"] = 1
	}
	for name, t := range map[string]*metav1.Time{
		"next_schedule_time":          cj.Status.NextScheduleTime,
		"status_last_schedule_time":   cj.Status.LastScheduleTime,
		"status_last_successful_time": cj.Status.LastSuccessfulTime,
		"status_last_failure_time":    cj.Status.LastFailureTime,
	} {
		if t != nil {
			want[name] = float64(t.Unix())
		}
	}
	for _, m := range cj.Status.MissedRuns {
		want["status_missed_runs_total/"+m.Reason] = float64(m.Count)
	}
	return want
}

// scrapeCronJobSeries returns the per-CronJob series of one CronJob from a
// scrape, by name without the prefix (and "/reason" for missed runs).
func scrapeCronJobSeries(addr, namespace, name string) (map[string]float64, error) {
	code, body := httpGet("http://" + addr + "/metrics")
	if code != http.StatusOK {
		return nil, fmt.Errorf("/metrics answered %d: %s", code, body)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(strings.NewReader(body))
	if err != nil {
		return nil, err
	}
	out := map[string]float64{}
	for _, family := range families {
		short, ok := strings.CutPrefix(family.GetName(), perCronJobPrefix)
		if !ok {
			continue
		}
		for _, m := range family.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if labels["namespace"] != namespace || labels["cronjob"] != name {
				continue
			}
			key := short
			if reason, ok := labels["reason"]; ok {
				key += "/" + reason
			}
			switch {
			case m.GetGauge() != nil:
				out[key] = m.GetGauge().GetValue()
			case m.GetCounter() != nil:
				out[key] = m.GetCounter().GetValue()
			}
		}
	}
	return out, nil
}

func missedRunCount(status cronv1.CronJobStatus, reason string) int64 {
	i := slices.IndexFunc(status.MissedRuns, func(m cronv1.MissedRuns) bool { return m.Reason == reason })
	if i < 0 {
		return 0
	}
	return status.MissedRuns[i].Count
}

func grepLines(s, substr string) string {
	var out []string
	for l := range strings.SplitSeq(s, "\n") {
		if strings.Contains(l, substr) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// With -logging-format=json (component-base's, as Kubernetes components
// offer it) every log line is one JSON object with the message and the
// structured values a text line carries, the CronJob's key among them.
func TestLogsCanBeJSON(t *testing.T) {
	ns := newNamespace(t)
	p := startController(t, "-logging-format=json")
	createCronJob(t, cronJob(ns, "json-logs", "@every 2s"))
	eventually(t, 60*time.Second, "a Created Job line", func() (bool, string) { return p.logged(`"msg":"Created Job"`), "" })
	p.stop(t)
	data, err := os.ReadFile(p.log)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	sawKey := false
	for _, line := range lines {
		var entry map[string]any
		if err := json.Unmarshal([]byte(line), &entry); err != nil {
			t.Errorf("not a JSON object: %s", line)
			continue
		}
		if _, ok := entry["msg"]; !ok {
			t.Errorf("no msg: %s", line)
		}
		if entry["msg"] == "Created Job" && entry["cronjob"] != nil {
			sawKey = true
		}
	}
	if !sawKey {
		t.Errorf("no Created Job line carries the CronJob's key; %d lines", len(lines))
	}
}
