package metrics

import (
	"github.com/prometheus/client_golang/prometheus"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	cronv1 "github.com/cronjob-controller/cronjob-controller/pkg/apis/batch/v1"
	"github.com/cronjob-controller/cronjob-controller/pkg/slim"
)

// Store is what the per-CronJob collector reads: the CronJob informer's
// cache (a cache.Store), holding *slim.CronJob (or *cronv1.CronJob).
type Store interface {
	List() []any
}

// The per-CronJob series, named as kube-state-metrics names those of the
// built-in kind (kube_cronjob_*), under this controller's prefix.
var (
	cronJobLabels = []string{"namespace", "name"}

	cronJobNextScheduleTime = prometheus.NewDesc(namespace+"_cronjob_next_schedule_time",
		"Unix time of the CronJob's next scheduled run (status.nextScheduleTime); absent while suspended or while the schedule cannot be used.",
		cronJobLabels, nil)
	cronJobLastScheduleTime = prometheus.NewDesc(namespace+"_cronjob_status_last_schedule_time",
		"Unix time of the scheduled time of the CronJob's latest started run (status.lastScheduleTime); absent before the first.",
		cronJobLabels, nil)
	cronJobLastSuccessfulTime = prometheus.NewDesc(namespace+"_cronjob_status_last_successful_time",
		"Unix time the CronJob's latest successful Job completed (status.lastSuccessfulTime); absent before the first.",
		cronJobLabels, nil)
	cronJobActive = prometheus.NewDesc(namespace+"_cronjob_status_active",
		"Jobs of the CronJob not finished (status.active).",
		cronJobLabels, nil)
	cronJobSuspend = prometheus.NewDesc(namespace+"_cronjob_spec_suspend",
		"1 when the CronJob is suspended (spec.suspend), else 0.",
		cronJobLabels, nil)
	cronJobMissedRuns = prometheus.NewDesc(namespace+"_cronjob_status_missed_runs_total",
		"Scheduled runs of the CronJob that did not start, by reason (status.missedRuns); a reason appears with its first miss.",
		append(cronJobLabels[:len(cronJobLabels):len(cronJobLabels)], "reason"), nil)
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
		cronJobActive, cronJobSuspend, cronJobMissedRuns} {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (c *CronJobCollector) Collect(ch chan<- prometheus.Metric) {
	if c.synced != nil && !c.synced() {
		return
	}
	for _, obj := range c.store.List() {
		var (
			meta      *metav1.ObjectMeta
			status    *cronv1.CronJobStatus
			suspended bool
		)
		switch cj := obj.(type) {
		case *slim.CronJob:
			meta, status, suspended = &cj.ObjectMeta, cj.Status(), cj.Suspended()
		case *cronv1.CronJob:
			meta, status, suspended = &cj.ObjectMeta, &cj.Status, cj.Spec.Suspend != nil && *cj.Spec.Suspend
		default:
			continue
		}
		ns, name := meta.Namespace, meta.Name
		timestamp(ch, cronJobNextScheduleTime, status.NextScheduleTime, ns, name)
		timestamp(ch, cronJobLastScheduleTime, status.LastScheduleTime, ns, name)
		timestamp(ch, cronJobLastSuccessfulTime, status.LastSuccessfulTime, ns, name)
		ch <- prometheus.MustNewConstMetric(cronJobActive, prometheus.GaugeValue, float64(len(status.Active)), ns, name)
		ch <- prometheus.MustNewConstMetric(cronJobSuspend, prometheus.GaugeValue, boolValue(suspended), ns, name)
		for i, m := range status.MissedRuns {
			if repeatedReason(status.MissedRuns[:i], m.Reason) {
				continue // the API server keeps reasons unique; a repeat would fail the whole scrape
			}
			ch <- prometheus.MustNewConstMetric(cronJobMissedRuns, prometheus.CounterValue, float64(m.Count), ns, name, m.Reason)
		}
	}
}

// timestamp sends t as Unix seconds, and nothing when t is unset.
func timestamp(ch chan<- prometheus.Metric, d *prometheus.Desc, t *metav1.Time, ns, name string) {
	if t == nil || t.IsZero() {
		return
	}
	ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, float64(t.Unix()), ns, name)
}

func repeatedReason(earlier []cronv1.MissedRuns, reason string) bool {
	for _, m := range earlier {
		if m.Reason == reason {
			return true
		}
	}
	return false
}

func boolValue(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
