package main

import (
	"sync/atomic"
	"testing"

	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
)

// depthProvider counts a queue's depth as workqueue_depth does.
type depthProvider struct {
	workqueue.MetricsProvider
	depth atomic.Int64
}

type depthGauge struct{ d *atomic.Int64 }

func (g depthGauge) Inc() { g.d.Add(1) }
func (g depthGauge) Dec() { g.d.Add(-1) }

func (p *depthProvider) NewDepthMetric(string) workqueue.GaugeMetric { return depthGauge{&p.depth} }

type noMetric struct{}

func (noMetric) Inc()                                               {}
func (noMetric) Dec()                                               {}
func (noMetric) Set(float64)                                        {}
func (noMetric) Observe(float64)                                    {}
func (noMetric) SetToCurrentTime()                                  {}
func (noMetric) Add(float64)                                        {}
func (noMetric) Sub(float64)                                        {}
func (noMetric) Update(float64)                                     {}
func (*depthProvider) NewAddsMetric(string) workqueue.CounterMetric { return noMetric{} }
func (*depthProvider) NewLatencyMetric(string) workqueue.HistogramMetric {
	return noMetric{}
}
func (*depthProvider) NewWorkDurationMetric(string) workqueue.HistogramMetric {
	return noMetric{}
}
func (*depthProvider) NewUnfinishedWorkSecondsMetric(string) workqueue.SettableGaugeMetric {
	return noMetric{}
}
func (*depthProvider) NewLongestRunningProcessorSecondsMetric(string) workqueue.SettableGaugeMetric {
	return noMetric{}
}
func (*depthProvider) NewRetriesMetric(string) workqueue.CounterMetric { return noMetric{} }

// A term that ends with CronJobs still queued (a lost Lease in a burst)
// leaves none counted in workqueue_depth: the next term's queue counts
// them again, and the old count would stay for the life of the process.
func TestAnEndedTermLeavesNothingCountedInItsQueue(t *testing.T) {
	p := &depthProvider{}
	q := workqueue.NewTypedRateLimitingQueueWithConfig(newRateLimiter(),
		workqueue.TypedRateLimitingQueueConfig[cache.ObjectName]{Name: "cronjob", MetricsProvider: p})
	for _, n := range []string{"a", "b", "c"} {
		q.Add(cache.ObjectName{Namespace: "default", Name: n})
	}
	q.ShutDown()
	if d := p.depth.Load(); d != 3 {
		t.Fatalf("depth %d before the drain, want 3", d)
	}
	drain(q)
	if d := p.depth.Load(); d != 0 {
		t.Errorf("depth %d after the term ended, want 0", d)
	}
}
