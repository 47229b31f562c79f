// Package metrics defines the controller's Prometheus metrics and plugs
// client-go's workqueue, REST client and leader-election instrumentation
// into the same registry. Names follow the Kubernetes instrumentation
// conventions: a subsystem prefix, base units, _total for counters.
package metrics

import (
	"context"
	"net/url"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"k8s.io/client-go/tools/leaderelection"
	clientmetrics "k8s.io/client-go/tools/metrics"
	"k8s.io/client-go/util/workqueue"

	cronv1 "github.com/cronjob-controller/cronjob-controller/pkg/apis/batch/v1"
	"github.com/cronjob-controller/cronjob-controller/pkg/planner"
	"github.com/cronjob-controller/cronjob-controller/pkg/version"
)

const namespace = "cronjob_controller"

var (
	// JobCreationSkew is how late Jobs are: creation time minus scheduled
	// time. The buckets resolve tens of milliseconds and reach ten minutes.
	JobCreationSkew = prometheus.NewHistogram(prometheus.HistogramOpts{
		Namespace: namespace,
		Name:      "job_creation_skew_seconds",
		Help:      "Time between a run's scheduled time and the creation of its Job.",
		Buckets:   []float64{0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 20, 30, 60, 120, 300, 600},
	})
	// JobsCreated counts Jobs created, scheduled and run-now.
	JobsCreated = prometheus.NewCounter(prometheus.CounterOpts{
		Namespace: namespace, Name: "jobs_created_total",
		Help: "Jobs created, for scheduled runs and for run-now requests alike.",
	})
	// JobsDeleted counts Jobs deleted, by reason (history, replace).
	JobsDeleted = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: namespace, Name: "jobs_deleted_total",
		Help: "Jobs deleted, by reason: history (beyond the history limits) or replace (concurrencyPolicy Replace).",
	}, []string{"reason"})
	// MissedSchedules counts runs that did not start, by reason.
	MissedSchedules = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: namespace, Name: "missed_schedules_total",
		Help: "Scheduled runs that were not started, by reason: DeadlineExceeded, ConcurrencyForbidden, Superseded, NameTaken, JobRejected, ScheduleChanged, Excluded, CalendarUnresolved, Paused, SuspendedUntil or Skipped (as in status.missedRuns).",
	}, []string{"reason"})
	// SyncErrors counts syncs that failed and were retried.
	SyncErrors = prometheus.NewCounter(prometheus.CounterOpts{
		Namespace: namespace, Name: "sync_errors_total",
		Help: "Syncs that returned an error and were requeued with backoff.",
	})
	// SyncDuration is how long one sync of a CronJob takes.
	SyncDuration = prometheus.NewHistogram(prometheus.HistogramOpts{
		Namespace: namespace, Name: "sync_duration_seconds",
		Help:    "Duration of one sync of a CronJob.",
		Buckets: prometheus.ExponentialBuckets(0.0005, 2, 16),
	})
	// ShardsHeld is how many shards this replica holds (with -shards).
	ShardsHeld = prometheus.NewGauge(prometheus.GaugeOpts{
		Namespace: namespace, Name: "shards_held",
		Help: "Shards this replica holds and works (with -shards; 0 otherwise).",
	})
	// ShardMoves counts shards this replica acquired, released or lost.
	ShardMoves = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: namespace, Name: "shard_moves_total",
		Help: "Shards this replica took (acquired), gave up to balance or at shutdown (released), or lost because it could not renew their Lease in time (lost).",
	}, []string{"direction"})
)

// NewBuildInfo returns the build_info gauge: one series at 1 whose labels
// name the build, so a query can join any series to the version that made it
// (as kube-state-metrics' and Prometheus's own build_info do).
func NewBuildInfo(v version.Info) prometheus.Collector {
	g := prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Namespace: namespace, Name: "build_info",
		Help: "1, labelled with the running build's version, the commit it was built from (revision) and the Go version that built it.",
	}, []string{"version", "revision", "goversion"})
	g.WithLabelValues(v.Version, v.Revision, v.GoVersion).Set(1)
	return g
}

// ShardDirections are the direction labels of ShardMoves.
var ShardDirections = []string{"acquired", "released", "lost"}

// DeleteReasons are the reason labels of JobsDeleted.
var DeleteReasons = []string{string(planner.DeleteHistory), string(planner.DeleteReplace)}

// MissedReasons are the reason labels of MissedSchedules: the reasons of
// status.missedRuns.
var MissedReasons = []string{cronv1.MissedDeadlineExceeded, cronv1.MissedConcurrencyForbidden, cronv1.MissedSuperseded,
	cronv1.MissedNameTaken, cronv1.MissedJobRejected, cronv1.MissedScheduleChanged,
	cronv1.MissedExcluded, cronv1.MissedCalendarUnresolved, cronv1.MissedPaused, cronv1.MissedSuspendedUntil, cronv1.MissedSkipped}

var registerOnce sync.Once

// Register adds every metric to reg and makes client-go report its
// workqueue, REST client and leader-election metrics there. Call it once,
// before any client or queue is made.
func Register(reg prometheus.Registerer) {
	registerOnce.Do(func() {
		// Each known reason is a series from the start, at 0, so that
		// rate() and increase() see its first event.
		for _, reason := range DeleteReasons {
			JobsDeleted.WithLabelValues(reason)
		}
		for _, reason := range MissedReasons {
			MissedSchedules.WithLabelValues(reason)
		}
		for _, d := range ShardDirections {
			ShardMoves.WithLabelValues(d)
		}
		reg.MustRegister(NewBuildInfo(version.Get()), JobCreationSkew, JobsCreated, JobsDeleted, MissedSchedules, SyncErrors, SyncDuration, ShardsHeld, ShardMoves,
			collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
		workqueue.SetProvider(newQueueProvider(reg))
		requestLatency := prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "rest_client_request_duration_seconds",
			Help:    "Request latency to the API server, by verb and host.",
			Buckets: prometheus.ExponentialBuckets(0.001, 2, 15),
		}, []string{"verb", "host"})
		requestResult := prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "rest_client_requests_total",
			Help: "Requests to the API server, by status code, method and host.",
		}, []string{"code", "method", "host"})
		rateLimiterLatency := prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "rest_client_rate_limiter_duration_seconds",
			Help:    "Time requests waited on the client-side rate limiter, by verb and host.",
			Buckets: prometheus.ExponentialBuckets(0.001, 2, 15),
		}, []string{"verb", "host"})
		reg.MustRegister(requestLatency, requestResult, rateLimiterLatency)
		clientmetrics.Register(clientmetrics.RegisterOpts{
			RequestLatency:     latencyAdapter{requestLatency},
			RateLimiterLatency: latencyAdapter{rateLimiterLatency},
			RequestResult:      resultAdapter{requestResult},
		})
		leader := prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "leader_election_master_status",
			Help: "1 while this replica holds the lease of the named election, 0 otherwise.",
		}, []string{"name"})
		reg.MustRegister(leader)
		leaderelection.SetProvider(leaderProvider{leader})
	})
}

type latencyAdapter struct{ h *prometheus.HistogramVec }

func (a latencyAdapter) Observe(_ context.Context, verb string, u url.URL, latency time.Duration) {
	a.h.WithLabelValues(verb, u.Host).Observe(latency.Seconds())
}

type resultAdapter struct{ c *prometheus.CounterVec }

func (a resultAdapter) Increment(_ context.Context, code, method, host string) {
	a.c.WithLabelValues(code, method, host).Inc()
}

type leaderProvider struct{ g *prometheus.GaugeVec }

func (p leaderProvider) NewLeaderMetric() leaderelection.LeaderMetric { return leaderMetric(p) }

type leaderMetric struct{ g *prometheus.GaugeVec }

func (m leaderMetric) On(name string)           { m.g.WithLabelValues(name).Set(1) }
func (m leaderMetric) Off(name string)          { m.g.WithLabelValues(name).Set(0) }
func (m leaderMetric) SlowpathExercised(string) {}

// queueProvider reports every workqueue under the workqueue_ prefix with a
// name label, as client-go's own components do.
type queueProvider struct {
	depth, longest, unfinished *prometheus.GaugeVec
	adds, retries              *prometheus.CounterVec
	latency, work              *prometheus.HistogramVec
}

func newQueueProvider(reg prometheus.Registerer) queueProvider {
	buckets := prometheus.ExponentialBuckets(1e-6, 10, 10)
	p := queueProvider{
		depth:      prometheus.NewGaugeVec(prometheus.GaugeOpts{Subsystem: "workqueue", Name: "depth", Help: "Current depth of the workqueue."}, []string{"name"}),
		adds:       prometheus.NewCounterVec(prometheus.CounterOpts{Subsystem: "workqueue", Name: "adds_total", Help: "Adds handled by the workqueue."}, []string{"name"}),
		latency:    prometheus.NewHistogramVec(prometheus.HistogramOpts{Subsystem: "workqueue", Name: "queue_duration_seconds", Help: "Time an item waits in the workqueue before it is processed.", Buckets: buckets}, []string{"name"}),
		work:       prometheus.NewHistogramVec(prometheus.HistogramOpts{Subsystem: "workqueue", Name: "work_duration_seconds", Help: "Time processing an item takes.", Buckets: buckets}, []string{"name"}),
		unfinished: prometheus.NewGaugeVec(prometheus.GaugeOpts{Subsystem: "workqueue", Name: "unfinished_work_seconds", Help: "Seconds of work in progress not yet observed by work_duration."}, []string{"name"}),
		longest:    prometheus.NewGaugeVec(prometheus.GaugeOpts{Subsystem: "workqueue", Name: "longest_running_processor_seconds", Help: "Seconds the longest-running processor has been running."}, []string{"name"}),
		retries:    prometheus.NewCounterVec(prometheus.CounterOpts{Subsystem: "workqueue", Name: "retries_total", Help: "Retries handled by the workqueue."}, []string{"name"}),
	}
	reg.MustRegister(p.depth, p.adds, p.latency, p.work, p.unfinished, p.longest, p.retries)
	return p
}

func (p queueProvider) NewDepthMetric(name string) workqueue.GaugeMetric {
	return p.depth.WithLabelValues(name)
}
func (p queueProvider) NewAddsMetric(name string) workqueue.CounterMetric {
	return p.adds.WithLabelValues(name)
}
func (p queueProvider) NewLatencyMetric(name string) workqueue.HistogramMetric {
	return p.latency.WithLabelValues(name)
}
func (p queueProvider) NewWorkDurationMetric(name string) workqueue.HistogramMetric {
	return p.work.WithLabelValues(name)
}
func (p queueProvider) NewUnfinishedWorkSecondsMetric(name string) workqueue.SettableGaugeMetric {
	return p.unfinished.WithLabelValues(name)
}
func (p queueProvider) NewLongestRunningProcessorSecondsMetric(name string) workqueue.SettableGaugeMetric {
	return p.longest.WithLabelValues(name)
}
func (p queueProvider) NewRetriesMetric(name string) workqueue.CounterMetric {
	return p.retries.WithLabelValues(name)
}
