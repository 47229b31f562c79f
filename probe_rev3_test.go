package main

import (
	"context"
	"testing"
	"time"

	kubeinformers "k8s.io/client-go/informers"
	k8sfake "k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2/ktesting"
	"k8s.io/utils/clock"
	testingclock "k8s.io/utils/clock/testing"

	cronv1 "github.com/cronjob-controller/cronjob-controller/pkg/apis/batch/v1"
	"github.com/cronjob-controller/cronjob-controller/pkg/control"
	"github.com/cronjob-controller/cronjob-controller/pkg/generated/clientset/versioned/fake"
	informers "github.com/cronjob-controller/cronjob-controller/pkg/generated/informers/externalversions"
)

type getSpy struct {
	workqueue.TypedRateLimitingInterface[cache.ObjectName]
	started chan struct{}
}

func (s *getSpy) Get() (cache.ObjectName, bool) {
	select {
	case s.started <- struct{}{}:
	default:
	}
	return s.TypedRateLimitingInterface.Get()
}

// clockTimerSpy says the duration of each timer made on its clock.
type clockTimerSpy struct {
	*testingclock.FakeClock
	made chan time.Duration
}

func (s *clockTimerSpy) NewTimer(d time.Duration) clock.Timer {
	t := s.FakeClock.NewTimer(d)
	select {
	case s.made <- d:
	default:
	}
	return t
}

// blockingStatus hands each UpdateStatus's context to the test and waits
// for the test's go-ahead.
type blockingStatus struct {
	control.CronJobs
	called chan context.Context
	goOn   chan struct{}
}

func (b *blockingStatus) UpdateStatus(ctx context.Context, cj *cronv1.CronJob) (*cronv1.CronJob, error) {
	b.called <- ctx
	<-b.goOn
	return b.CronJobs.UpdateStatus(ctx, cj)
}

// Under leader election Run's ctx ends when the Lease is lost, and the
// docs promise no write later than the lease grace after that (past the
// fence another replica leads). flushDeferred, run after the workers stop,
// wrote the deferred statuses (and released finalizers) under a context
// of its own, 10 s long, that knew nothing of the grace (review 3; now the
// flush runs under Run's last-writes context, cut with the grace).
func TestProbeDeferredFlushOutlivesLeaseGrace(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	runCtx, loseLease := context.WithCancel(ctx)
	defer loseLease()
	f := newFixture(t, at(time.Second))
	f.kubeclient = k8sfake.NewClientset()
	f.kubeclient.PrependReactor("create", "jobs", f.stampCreatedJob)
	f.client = fake.NewClientset(newCronJob())
	kubeFactory := kubeinformers.NewSharedInformerFactory(f.kubeclient, 0)
	cronFactory := informers.NewSharedInformerFactory(f.client, 0)
	const grace = time.Second
	clk := &clockTimerSpy{FakeClock: f.clock, made: make(chan time.Duration, 16)}
	c, err := NewController(ctx, f.kubeclient, f.client, kubeFactory.Batch().V1().Jobs(),
		cronFactory.Batch().V1().CronJobs(), clk, WithEventRecorder(f.recorder), WithLeaseGrace(grace))
	if err != nil {
		t.Fatal(err)
	}
	infCtx, stopInformers := context.WithCancel(ctx)
	kubeFactory.Start(infCtx.Done())
	cronFactory.Start(infCtx.Done())
	defer kubeFactory.Shutdown()
	defer cronFactory.Shutdown()
	defer stopInformers()
	cache.WaitForCacheSync(ctx.Done(), c.cachesSynced...)

	// A sync that defers its status (another key waits), as under load.
	key := cache.ObjectName{Namespace: "default", Name: "cj"}
	c.queue.Add(cache.ObjectName{Namespace: "default", Name: "other"})
	if _, err := c.syncHandler(ctx, key); err != nil {
		t.Fatal(err)
	}
	if f.writtenStatus() != nil {
		t.Fatal("status written at once; the case tests nothing")
	}
	b := &blockingStatus{CronJobs: c.cronJobs, called: make(chan context.Context, 1), goOn: make(chan struct{})}
	c.cronJobs = b

	// Nothing in the queue: the deferred status waits for the flush.
	for c.queue.Len() > 0 {
		k, _ := c.queue.Get()
		c.queue.Done(k)
		c.queue.Forget(k)
	}
	spy := &getSpy{TypedRateLimitingInterface: c.queue, started: make(chan struct{}, 1)}
	c.queue = spy
	done := make(chan error, 1)
	go func() { done <- c.Run(runCtx, 1) }()
	select {
	case <-spy.started:
	case <-time.After(30 * time.Second):
		t.Fatal("no worker started")
	}
	loseLease()
	var writeCtx context.Context
	select {
	case writeCtx = <-b.called:
	case <-time.After(30 * time.Second):
		t.Fatal("no deferred status written after the workers stopped")
	}
	// The grace timer starts in a goroutine of its own once the Lease is
	// lost: stepping the clock before it exists would pass it by.
	for made := false; !made; {
		select {
		case d := <-clk.made:
			made = d == grace
		case <-time.After(30 * time.Second):
			t.Fatal("no grace timer started after the Lease was lost")
		}
	}
	// The fence passes while the write is in flight.
	f.clock.Step(2 * grace)
	alive := true
	select { // a grace timer, if any, cuts the write
	case <-writeCtx.Done():
		alive = false
	case <-time.After(2 * time.Second):
	}
	close(b.goOn)
	<-done
	if alive {
		t.Errorf("the deferred status write outlived the lease grace")
	}
}
