package metrics

import (
	"cmp"
	"slices"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	cronv1 "github.com/cronjob-controller/cronjob-controller/pkg/apis/batch/v1"
	"github.com/cronjob-controller/cronjob-controller/pkg/slim"
)

// Store is what the per-CronJob collector reads: the CronJob informer's
// cache (a cache.Store), holding *slim.CronJob (or *cronv1.CronJob).
type Store interface {
	List() []any
}

// The per-CronJob series, named and labelled as kube-state-metrics names
// and labels those of the built-in kind (kube_cronjob_*{namespace,cronjob}),
// under this controller's prefix, so dashboards and alerts written for the
// built-in kind need only the prefix changed.
var (
	cronJobLabelNames = []string{"namespace", "cronjob"}

	cronJobNextScheduleTime = prometheus.NewDesc(namespace+"_cronjob_next_schedule_time",
		"Unix time of the CronJob's next scheduled run (status.nextScheduleTime); absent while suspended, past spec.notAfter, or while the schedule cannot be used.",
		cronJobLabelNames, nil)
	cronJobLastScheduleTime = prometheus.NewDesc(namespace+"_cronjob_status_last_schedule_time",
		"Unix time of the scheduled time of the CronJob's latest started run (status.lastScheduleTime); absent before the first.",
		cronJobLabelNames, nil)
	cronJobLastSuccessfulTime = prometheus.NewDesc(namespace+"_cronjob_status_last_successful_time",
		"Unix time the CronJob's latest successful Job completed (status.lastSuccessfulTime); absent before the first.",
		cronJobLabelNames, nil)
	cronJobLastFailureTime = prometheus.NewDesc(namespace+"_cronjob_status_last_failure_time",
		"Unix time the CronJob's latest failed run failed (status.lastFailureTime); absent before the first.",
		cronJobLabelNames, nil)
	cronJobActive = prometheus.NewDesc(namespace+"_cronjob_status_active",
		"Jobs of the CronJob not finished (status.active).",
		cronJobLabelNames, nil)
	cronJobSuspend = prometheus.NewDesc(namespace+"_cronjob_spec_suspend",
		"1 when the CronJob is suspended (spec.suspend), else 0.",
		cronJobLabelNames, nil)
	cronJobMissedRuns = prometheus.NewDesc(namespace+"_cronjob_status_missed_runs_total",
		"Scheduled runs of the CronJob that did not start, by reason (status.missedRuns); a reason appears with its first miss.",
		append(cronJobLabelNames[:len(cronJobLabelNames):len(cronJobLabelNames)], "reason"), nil)
	cronJobPaused = prometheus.NewDesc(namespace+"_cronjob_paused",
		"1 while spec.failurePolicy has paused the CronJob's scheduled runs (condition Paused True), else 0; only for CronJobs with spec.failurePolicy.",
		cronJobLabelNames, nil)
	cronJobFailureStreak = prometheus.NewDesc(namespace+"_cronjob_status_failure_streak",
		"Runs of the CronJob failed in a row (status.failureStreak.count); only for CronJobs with spec.failurePolicy.",
		cronJobLabelNames, nil)
)

// CronJobCollector reports the series above for every CronJob in a Store,
// read at scrape time: it makes no API call and keeps no state, so a
// deleted CronJob's series go with its cache entry.
type CronJobCollector struct {
	store  Store
	synced func() bool
}

// NewCronJobCollector returns a collector of the CronJobs in store. Until
// synced reports true it reports nothing, so a scrape during the informer's
// first list never shows a part of the CronJobs as if it were all of them.
func NewCronJobCollector(store Store, synced func() bool) *CronJobCollector {
	return &CronJobCollector{store: store, synced: synced}
}

// Describe implements prometheus.Collector.
func (c *CronJobCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{cronJobNextScheduleTime, cronJobLastScheduleTime, cronJobLastSuccessfulTime,
		cronJobLastFailureTime, cronJobActive, cronJobSuspend, cronJobMissedRuns, cronJobPaused, cronJobFailureStreak} {
		ch <- d
	}
}

// Collect implements prometheus.Collector. It sends the CronJobs in the
// order the registry sorts series in (by the cronjob label, then namespace), which makes
// that sort a linear pass, and the series of one CronJob share its label
// pairs: at 10,000 CronJobs a scrape makes 165k allocations instead of
// 714k and takes 2.4 to 2.8 times less CPU (docs/benchmarks.md).
func (c *CronJobCollector) Collect(ch chan<- prometheus.Metric) {
	if c.synced != nil && !c.synced() {
		return
	}
	objs := c.store.List()
	cronJobs := make([]cronJobView, 0, len(objs))
	for _, obj := range objs {
		switch cj := obj.(type) {
		case *slim.CronJob:
			cronJobs = append(cronJobs, cronJobView{&cj.ObjectMeta, cj.Status(), cj.Suspended(), cj.HasFailurePolicy()})
		case *cronv1.CronJob:
			cronJobs = append(cronJobs, cronJobView{&cj.ObjectMeta, &cj.Status, cj.Spec.Suspend != nil && *cj.Spec.Suspend, cj.Spec.FailurePolicy != nil})
		}
	}
	slices.SortFunc(cronJobs, func(a, b cronJobView) int {
		return cmp.Or(strings.Compare(a.meta.Name, b.meta.Name), strings.Compare(a.meta.Namespace, b.meta.Namespace))
	})
	for _, cj := range cronJobs {
		labels := newCronJobLabels(cj.meta.Namespace, cj.meta.Name)
		status := cj.status
		timestamp(ch, cronJobNextScheduleTime, status.NextScheduleTime, labels)
		timestamp(ch, cronJobLastScheduleTime, status.LastScheduleTime, labels)
		timestamp(ch, cronJobLastSuccessfulTime, status.LastSuccessfulTime, labels)
		timestamp(ch, cronJobLastFailureTime, status.LastFailureTime, labels)
		ch <- newSeries(cronJobActive, prometheus.GaugeValue, float64(len(status.Active)), labels.pairs[:])
		ch <- newSeries(cronJobSuspend, prometheus.GaugeValue, boolValue(cj.suspended), labels.pairs[:])
		// Without a failure policy nothing can pause the CronJob: a series
		// at 0 for each such CronJob would only add to every scrape.
		if cj.failurePolicy {
			ch <- newSeries(cronJobPaused, prometheus.GaugeValue,
				boolValue(meta.IsStatusConditionTrue(status.Conditions, cronv1.ConditionPaused)), labels.pairs[:])
			var streak int32
			if status.FailureStreak != nil {
				streak = status.FailureStreak.Count
			}
			ch <- newSeries(cronJobFailureStreak, prometheus.GaugeValue, float64(streak), labels.pairs[:])
		}
		missed := status.MissedRuns
		if !slices.IsSortedFunc(missed, byReason) {
			missed = slices.Clone(missed)
			slices.SortStableFunc(missed, byReason)
		}
		for i, m := range missed {
			if i > 0 && missed[i-1].Reason == m.Reason {
				continue // the API server keeps reasons unique; a repeat would fail the whole scrape
			}
			ch <- newSeries(cronJobMissedRuns, prometheus.CounterValue, float64(m.Count), labels.withReason(m.Reason))
		}
	}
}

func byReason(a, b cronv1.MissedRuns) int { return strings.Compare(a.Reason, b.Reason) }

// cronJobView is what the collector reads of one cached CronJob.
type cronJobView struct {
	meta          *metav1.ObjectMeta
	status        *cronv1.CronJobStatus
	suspended     bool
	failurePolicy bool
}

var (
	labelCronJob   = "cronjob"
	labelNamespace = "namespace"
	labelReason    = "reason"
)

// cronJobLabels are the label pairs of one CronJob's series, in the order
// of their names, made in one allocation and shared by its series (a
// metric's label pairs are immutable by contract).
type cronJobLabels struct {
	name, namespace string
	pair            [2]dto.LabelPair
	pairs           [2]*dto.LabelPair
}

func newCronJobLabels(namespace, name string) *cronJobLabels {
	l := &cronJobLabels{name: name, namespace: namespace}
	l.pair[0].Name, l.pair[0].Value = &labelCronJob, &l.name
	l.pair[1].Name, l.pair[1].Value = &labelNamespace, &l.namespace
	l.pairs[0], l.pairs[1] = &l.pair[0], &l.pair[1]
	return l
}

// withReason returns the label pairs with a reason added.
func (l *cronJobLabels) withReason(reason string) []*dto.LabelPair {
	r := &struct {
		value string
		pair  dto.LabelPair
	}{value: reason}
	r.pair.Name, r.pair.Value = &labelReason, &r.value
	return []*dto.LabelPair{l.pairs[0], l.pairs[1], &r.pair}
}

// series is one sample of a per-CronJob series: a gauge or a counter.
type series struct {
	desc   *prometheus.Desc
	labels []*dto.LabelPair
	kind   prometheus.ValueType
	value  float64
	gauge  dto.Gauge
	count  dto.Counter
}

func newSeries(desc *prometheus.Desc, kind prometheus.ValueType, value float64, labels []*dto.LabelPair) *series {
	return &series{desc: desc, labels: labels, kind: kind, value: value}
}

func (s *series) Desc() *prometheus.Desc { return s.desc }

func (s *series) Write(m *dto.Metric) error {
	m.Label = s.labels
	if s.kind == prometheus.CounterValue {
		s.count.Value = &s.value
		m.Counter = &s.count
	} else {
		s.gauge.Value = &s.value
		m.Gauge = &s.gauge
	}
	return nil
}

// timestamp sends t as Unix seconds, and nothing when t is unset.
func timestamp(ch chan<- prometheus.Metric, d *prometheus.Desc, t *metav1.Time, labels *cronJobLabels) {
	if t == nil || t.IsZero() {
		return
	}
	ch <- newSeries(d, prometheus.GaugeValue, float64(t.Unix()), labels.pairs[:])
}

func boolValue(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
