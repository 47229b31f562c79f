package main

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2/ktesting"
	testingclock "k8s.io/utils/clock/testing"
)

// A sync outlives the workers' context (shutdown finishes the item in
// hand), but under leader election by grace at most: past it another
// replica may lead.
func TestSyncContextEndsGraceAfterTheLease(t *testing.T) {
	clk := testingclock.NewFakeClock(time.Now())
	lease, lost := context.WithCancel(context.Background())
	syncCtx, cancel := syncContext(lease, 2*time.Second, nil, clk)
	defer cancel()
	lost()
	// The timer is armed by a goroutine of its own: wait until it is.
	for !clk.HasWaiters() {
		time.Sleep(time.Millisecond)
	}
	if syncCtx.Err() != nil {
		t.Fatal("the sync was cut at once; it has the grace to finish")
	}
	clk.Step(1999 * time.Millisecond)
	if syncCtx.Err() != nil {
		t.Fatal("the sync was cut before its grace ran out")
	}
	clk.Step(time.Millisecond)
	select {
	case <-syncCtx.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the sync outlived the lease by more than its grace")
	}
}

// Without a grace (no leader election) the item in hand is finished
// whatever happens to the workers' context.
func TestSyncContextWithoutGraceOutlivesShutdown(t *testing.T) {
	clk := testingclock.NewFakeClock(time.Now())
	workers, stop := context.WithCancel(context.Background())
	syncCtx, cancel := syncContext(workers, 0, nil, clk)
	defer cancel()
	stop()
	clk.Step(time.Hour)
	if syncCtx.Err() != nil {
		t.Errorf("the sync ended with the workers' context: %v", syncCtx.Err())
	}
}

// The context of the last writes at shutdown (Run's flush) is made when
// the workers start: however long the controller runs before ctx ends, it
// is still live then, and ends only the grace after. (It was a
// syncContext, whose one-minute timeout ran from the start: the flush of
// a controller up for more than a minute wrote nothing.)
func TestGraceContextOutlivesAnyRunBeforeItsParentEnds(t *testing.T) {
	clk := testingclock.NewFakeClock(time.Now())
	lease, lost := context.WithCancel(context.Background())
	g, cancel := graceContext(lease, 2*time.Second, nil, clk)
	defer cancel()
	if _, ok := g.Deadline(); ok {
		t.Fatal("the grace context has a deadline before its parent ends")
	}
	clk.Step(24 * time.Hour)
	if g.Err() != nil {
		t.Fatal("the grace context ended while its parent was live")
	}
	lost()
	for !clk.HasWaiters() {
		time.Sleep(time.Millisecond)
	}
	if g.Err() != nil {
		t.Fatal("the grace context ended at once with its parent")
	}
	clk.Step(2 * time.Second)
	select {
	case <-g.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the grace context outlived its parent by more than the grace")
	}
}

// Under leader election a sync ends by the Lease's validity plus the
// grace, whether or not the election loop has noticed the loss: a process
// thawed after a freeze wakes its workers and its election loop at once.
// A renewal moves the end, so a leader that keeps renewing is never cut.
func TestASyncEndsAtTheLeaseFenceWhetherOrNotTheLossWasNoticed(t *testing.T) {
	clk := testingclock.NewFakeClock(time.Unix(1_700_000_000, 0))
	t0 := clk.Now()
	v := newLeaseValidity(clk, 10*time.Second)
	v.renewed(t0)
	leading := context.Background() // the loss never noticed
	syncCtx, cancel := syncContext(leading, 1500*time.Millisecond, v, clk)
	defer cancel()
	clk.Step(5 * time.Second)
	v.renewed(clk.Now()) // the fence is now t0+15s
	clk.Step(6500 * time.Millisecond)
	// Past the first fence and grace (t0+11.5s): its timer fired, read
	// the fence again and armed itself for t0+16.5s.
	for !clk.HasWaiters() {
		time.Sleep(time.Millisecond)
	}
	if err := syncCtx.Err(); err != nil {
		t.Fatalf("cut at t0+11.5s though a renewal moved the fence to t0+15s: %v", err)
	}
	for clk.Now().Before(t0.Add(16500 * time.Millisecond)) {
		clk.Step(100 * time.Millisecond)
	}
	select {
	case <-syncCtx.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the sync outlived the Lease's validity plus the grace with no loss noticed")
	}
}

// A loss noticed late (a thaw long after the fence) leaves no grace: the
// sync in hand is cut at once, since another replica may lead already.
func TestALossNoticedPastTheFenceLeavesNoGrace(t *testing.T) {
	clk := testingclock.NewFakeClock(time.Unix(1_700_000_000, 0))
	v := newLeaseValidity(clk, 10*time.Second)
	v.renewed(clk.Now())
	lease, lost := context.WithCancel(context.Background())
	g, cancel := graceContext(lease, 1500*time.Millisecond, v, clk)
	defer cancel()
	clk.Step(30 * time.Second) // frozen for half a minute
	lost()
	select {
	case <-g.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("a sync got its grace after a loss noticed past the fence")
	}
}

// No sync starts once the fence has passed, and one starts before it.
func TestNoSyncStartsPastTheLeaseFence(t *testing.T) {
	clk := testingclock.NewFakeClock(time.Unix(1_700_000_000, 0))
	v := newLeaseValidity(clk, 10*time.Second)
	if !fenced(v, clk) {
		t.Error("a sync may start before the Lease was ever held")
	}
	v.renewed(clk.Now())
	if fenced(v, clk) {
		t.Error("no sync may start right after a renewal")
	}
	clk.Step(10 * time.Second)
	if !fenced(v, clk) {
		t.Error("a sync may start at the fence")
	}
	if fenced(nil, clk) {
		t.Error("without leader election a sync may not start")
	}
}

// A controller past its Lease's fence (a leader thawed after a freeze,
// before its election loop noticed) starts no sync: the run due is left
// for whoever holds the Lease, and a renewal lets it start.
func TestAFencedControllerStartsNoRun(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := newFixture(t, at(time.Second))
	f.cronJob = newCronJob()
	c, _, _ := f.newController(ctx)
	v := newLeaseValidity(f.clock, 10*time.Second)
	c.fence = v // never renewed: past
	c.queue.Add(cache.MetaObjectToName(f.cronJob))
	c.processNextWorkItem(ctx)
	for _, a := range f.kubeclient.Actions() {
		if a.GetVerb() == "create" {
			t.Fatalf("a fenced controller created %s", a.GetResource().Resource)
		}
	}
	v.renewed(f.clock.Now())
	f.clock.Step(shardNotReadyRetry)
	c.processNextWorkItem(ctx)
	created := false
	for _, a := range f.kubeclient.Actions() {
		created = created || (a.GetVerb() == "create" && a.GetResource().Resource == "jobs")
	}
	if !created {
		t.Error("after a renewal the run due did not start")
	}
}

// A write leaving a leader thawed past its Lease's validity and grace is
// refused as it leaves, in the goroutine that sends it, before any
// cancellation elsewhere has run; reads, the Lease's own writes and Events
// still go out.
func TestNoWriteLeavesAThawedLeaderPastItsFence(t *testing.T) {
	var posts atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && !unfenced(r.URL.Path) {
			posts.Add(1)
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"apiVersion":"batch/v1","kind":"Job","metadata":{"name":"j","namespace":"ns"}}`))
	}))
	defer srv.Close()
	clk := testingclock.NewFakeClock(time.Unix(1_700_000_000, 0))
	v := newLeaseValidity(clk, 10*time.Second)
	v.renewed(clk.Now())
	cfg := &rest.Config{Host: srv.URL, QPS: -1}
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return &fencedTransport{next: rt, fence: v, grace: 1500 * time.Millisecond}
	})
	client := kubernetes.NewForConfigOrDie(cfg)
	ctx := context.Background()
	job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "j"}}
	if _, err := client.BatchV1().Jobs("ns").Create(ctx, job, metav1.CreateOptions{}); err != nil {
		t.Fatalf("within the validity: %v", err)
	}
	clk.Step(30 * time.Second) // frozen half a minute; a standby leads since t0+15s
	if _, err := client.BatchV1().Jobs("ns").Create(ctx, job, metav1.CreateOptions{}); !errors.Is(err, errFenced) {
		t.Errorf("past the fence and grace: %v, want it refused as it leaves", err)
	}
	if n := posts.Load(); n != 1 {
		t.Errorf("%d creates reached the API server, want the one within the validity", n)
	}
	if _, err := client.BatchV1().Jobs("ns").Get(ctx, "j", metav1.GetOptions{}); err != nil {
		t.Errorf("a read past the fence: %v", err)
	}
	if _, err := client.CoreV1().Events("ns").Create(ctx, &corev1.Event{ObjectMeta: metav1.ObjectMeta{Name: "e"}}, metav1.CreateOptions{}); errors.Is(err, errFenced) {
		t.Error("an Event was fenced")
	}
	for _, p := range []string{"/apis/coordination.k8s.io/v1/namespaces/ns/leases/x", "/api/v1/namespaces/ns/events", "/apis/events.k8s.io/v1/namespaces/ns/events"} {
		if !unfenced(p) {
			t.Errorf("%s is fenced", p)
		}
	}
	for _, p := range []string{"/apis/batch/v1/namespaces/leases/jobs", "/apis/batch.tutorial.kubebuilder.io/v1/namespaces/ns/cronjobs/leases/status", "/api/v1/namespaces/events/pods"} {
		if unfenced(p) {
			t.Errorf("%s is not fenced", p)
		}
	}
}
