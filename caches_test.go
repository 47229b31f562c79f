package main

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	kubeinformers "k8s.io/client-go/informers"
	k8sfake "k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/cronjob-controller/cronjob-controller/pkg/generated/clientset/versioned/fake"
	informers "github.com/cronjob-controller/cronjob-controller/pkg/generated/informers/externalversions"
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

// A term cut while it reads the CronJobs live before its first sync (a
// Lease lost again during an outage) leaves none of the CronJobs its
// handlers queued counted in the queue either.
func TestATermLostDuringItsCatchUpLeavesNothingCountedInItsQueue(t *testing.T) {
	kube := k8sfake.NewClientset()
	cron := fake.NewClientset(newCronJob())
	var down atomic.Bool
	var failedLists atomic.Int32
	cron.PrependReactor("list", "cronjobs", func(k8stesting.Action) (bool, runtime.Object, error) {
		if down.Load() {
			failedLists.Add(1)
			return true, nil, errors.New("API server too slow")
		}
		return false, nil, nil
	})
	kubeFactory := kubeinformers.NewSharedInformerFactory(kube, 0)
	cronFactory := informers.NewSharedInformerFactory(cron, 0)
	jobs, cronJobs := kubeFactory.Batch().V1().Jobs(), cronFactory.Batch().V1().CronJobs()
	if err := prepareCaches(jobs.Informer(), cronJobs.Informer()); err != nil {
		t.Fatal(err)
	}
	informerCtx, stopInformers := context.WithCancel(context.Background())
	defer func() { stopInformers(); kubeFactory.Shutdown(); cronFactory.Shutdown() }()
	kubeFactory.Start(informerCtx.Done())
	cronFactory.Start(informerCtx.Done())
	if !cache.WaitForCacheSync(informerCtx.Done(), jobs.Informer().HasSynced, cronJobs.Informer().HasSynced) {
		t.Fatal("caches did not sync")
	}
	down.Store(true)
	// A later term: a new controller on the warm caches.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c, err := NewController(ctx, kube, cron, jobs, cronJobs, testingclock.NewFakeClock(time.Now()),
		WithEventRecorder(record.NewFakeRecorder(10)), WithPreparedCaches())
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = c.Detach() }()
	runErr := make(chan error, 1)
	go func() { runErr <- c.Run(ctx, 1) }()
	if err := wait.PollUntilContextTimeout(context.Background(), 10*time.Millisecond, wait.ForeverTestTimeout, true, func(context.Context) (bool, error) {
		return failedLists.Load() > 0 && c.queue.Len() > 0, nil
	}); err != nil {
		t.Fatalf("the catch-up never ran with the CronJob queued: lists %d, queued %d", failedLists.Load(), c.queue.Len())
	}
	cancel() // the Lease is lost
	if err := <-runErr; err != nil {
		t.Errorf("a term cut before its first sync: Run returned %v, want nil", err)
	}
	if n := c.queue.Len(); n != 0 {
		t.Errorf("%d CronJobs still counted in the ended term's queue (workqueue_depth), want 0", n)
	}
}
