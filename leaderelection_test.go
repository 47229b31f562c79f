package main

// Tests of leader election (runAsLeader, the lease flags): a lost Lease
// stops the work and the replica campaigns again, the Lease is released
// only after the work stops, and a sync's grace ends before a standby may
// lead.

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr/funcr"
	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/goleak"
	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	testingclock "k8s.io/utils/clock/testing"

	cronv1 "github.com/cronjob-controller/cronjob-controller/pkg/apis/batch/v1"
	cronfake "github.com/cronjob-controller/cronjob-controller/pkg/generated/clientset/versioned/fake"
	"github.com/cronjob-controller/cronjob-controller/pkg/liveness"
)

// leaseOutage is a fake API server whose Lease writes can be made to fail,
// as an API server that stopped answering would, and that tells which
// writes released the Lease (no holder).
type leaseOutage struct {
	client   *fake.Clientset
	down     atomic.Bool
	releases atomic.Int32
}

func newLeaseOutage(objects ...runtime.Object) *leaseOutage {
	o := &leaseOutage{client: fake.NewClientset(objects...)}
	o.client.PrependReactor("*", "leases", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if u, ok := a.(k8stesting.UpdateAction); ok {
			if l := u.GetObject().(*coordinationv1.Lease); l.Spec.HolderIdentity == nil || *l.Spec.HolderIdentity == "" {
				o.releases.Add(1)
			}
		}
		if o.down.Load() {
			return true, nil, errors.New("API server too slow")
		}
		return false, nil, nil
	})
	return o
}

// fastLease are durations that make a lost Lease quick to see: a lease
// of 1.5 s, renewals given up after 0.6 s.
func fastLease(id string) options {
	return options{leaderElect: true, leaderElectNamespace: "default", leaderElectID: id,
		leaseDuration: 1500 * time.Millisecond, renewDeadline: 600 * time.Millisecond, retryPeriod: 100 * time.Millisecond}
}

// waitForRole waits until the probe says role.
func waitForRole(t *testing.T, probe *liveness.Probe, role liveness.Role) {
	t.Helper()
	err := wait.PollUntilContextTimeout(context.Background(), 10*time.Millisecond, wait.ForeverTestTimeout, true, func(context.Context) (bool, error) {
		r, _ := probe.Role()
		return r == role, nil
	})
	if err != nil {
		r, _ := probe.Role()
		t.Fatalf("the process never became %q; it is %q", role, r)
	}
}

// A leader whose renewals fail past the renew deadline (an API server
// outage, a frozen process) stops its work, campaigns again, and leads
// again once the API server answers: it never stays up neither leading nor
// campaigning. The terms never overlap, the Lease is not given up on the
// loss (client-go's ReleaseOnCancel would give it up before the work's
// context ends, and the next leader could lead beside our last syncs), and
// /healthz says alive all along.
func TestALostLeaseStopsTheWorkAndCampaignsAgain(t *testing.T) {
	api := newLeaseOutage()
	probe := liveness.New(clock.RealClock{}, livenessBounds(fastLease("x")))
	ctx, shutdown := context.WithCancel(context.Background())
	defer shutdown()
	var terms, running, overlaps atomic.Int32
	secondTerm := make(chan struct{})
	errc := make(chan error, 1)
	go func() {
		errc <- runAsLeader(ctx, fastLease("leader-test"), api.client, probe, nil, func(ctx context.Context) error {
			if running.Add(1) > 1 {
				overlaps.Add(1)
			}
			defer running.Add(-1)
			if terms.Add(1) == 2 {
				close(secondTerm)
			}
			<-ctx.Done()
			return nil
		})
	}()
	waitForRole(t, probe, liveness.Leading)
	api.down.Store(true)
	waitForRole(t, probe, liveness.Campaigning)
	if n := api.releases.Load(); n != 0 {
		t.Errorf("the Lease was released %d times on the loss; the standby must wait it out", n)
	}
	if _, err := probe.Check(); err != nil {
		t.Errorf("campaigning after the loss, /healthz fails: %v", err)
	}
	api.down.Store(false)
	select {
	case <-secondTerm:
	case err := <-errc:
		t.Fatalf("runAsLeader returned %v instead of leading again", err)
	case <-time.After(wait.ForeverTestTimeout):
		t.Fatal("the replica did not lead again once the API server answered")
	}
	if overlaps.Load() != 0 {
		t.Error("a term began before the one before it had stopped")
	}
	shutdown()
	if err := <-errc; err != nil {
		t.Errorf("shutdown: %v", err)
	}
}

// Work that does not stop once the Lease is lost (a worker stuck outside
// its context) cannot be fenced by contexts alone: the process exits, so
// its restart ends it, within a lease duration of the loss.
func TestWorkThatDoesNotStopEndsTheProcess(t *testing.T) {
	api := newLeaseOutage()
	stuck := make(chan struct{})
	defer close(stuck)
	errc := make(chan error, 1)
	go func() {
		errc <- runAsLeader(context.Background(), fastLease("leader-test"), api.client, nil, nil, func(ctx context.Context) error {
			api.down.Store(true)
			<-stuck // ignores ctx
			return nil
		})
	}()
	select {
	case err := <-errc:
		if err == nil || !strings.Contains(err.Error(), "did not stop") {
			t.Errorf("runAsLeader returned %v, want the work not stopping", err)
		}
	case <-time.After(wait.ForeverTestTimeout):
		t.Fatal("stuck work after a lost Lease kept the process up")
	}
}

// On shutdown the work stops first, then the Lease is released, so a
// standby takes over at once.
func TestLeaseReleasedOnShutdownAfterTheWork(t *testing.T) {
	client := fake.NewSimpleClientset()
	var workDone atomic.Bool
	releasedAfterWork := make(chan bool, 1)
	client.PrependReactor("update", "leases", func(a k8stesting.Action) (bool, runtime.Object, error) {
		l := a.(k8stesting.UpdateAction).GetObject().(*coordinationv1.Lease)
		if l.Spec.HolderIdentity == nil || *l.Spec.HolderIdentity == "" {
			select {
			case releasedAfterWork <- workDone.Load():
			default:
			}
		}
		return false, nil, nil
	})
	o := options{leaderElect: true, leaderElectNamespace: "default", leaderElectID: "leader-test",
		leaseDuration: 15 * time.Second, renewDeadline: 10 * time.Second, retryPeriod: 2 * time.Second}
	ctx, shutdown := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		errc <- runAsLeader(ctx, o, client, nil, nil, func(ctx context.Context) error {
			shutdown()
			<-ctx.Done()
			workDone.Store(true)
			return nil
		})
	}()
	select {
	case err := <-errc:
		if err != nil {
			t.Fatalf("shutdown: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("runAsLeader did not return after shutdown")
	}
	select {
	case after := <-releasedAfterWork:
		if !after {
			t.Error("the Lease was released before the work stopped")
		}
	default:
		t.Error("the Lease was not released on shutdown")
	}
}

// The grace a sync has after the Lease is lost ends before a standby may
// lead: a leader notices the loss a retry period and a renew deadline after
// its last renewal at the latest, a standby may lead a lease duration after
// it. Flags that leave no such gap are refused.
func TestLeaseGraceWithinTheFence(t *testing.T) {
	for _, tc := range []struct {
		lease, renew, retry time.Duration
		refused             bool
	}{
		{15 * time.Second, 10 * time.Second, 2 * time.Second, false}, // the defaults
		{6 * time.Second, 4 * time.Second, time.Second, false},       // the e2e tests'
		{15 * time.Second, 10 * time.Second, 8 * time.Second, true},  // client-go accepts it
		{60 * time.Second, 30 * time.Second, 20 * time.Second, false},
	} {
		o := options{leaderElect: true, leaseDuration: tc.lease, renewDeadline: tc.renew, retryPeriod: tc.retry}
		if err := validateLeaseFlags(o); (err != nil) != tc.refused {
			t.Errorf("lease %v, renew %v, retry %v: validation %v, want refused %v", tc.lease, tc.renew, tc.retry, err, tc.refused)
		}
		if tc.refused {
			continue
		}
		grace := leaseGrace(o)
		if lastWrite := tc.retry + tc.renew + grace; grace <= 0 || lastWrite >= tc.lease {
			t.Errorf("lease %v, renew %v, retry %v: grace %v; a sync may write until %v after the last renewal, a standby may lead from %v",
				tc.lease, tc.renew, tc.retry, grace, lastWrite, tc.lease)
		}
	}
}

// The whole process through a lost Lease, on fake API servers: the first
// term's controllers stop and come off the caches, the replica campaigns
// and leads again on the same caches, and the new term works both what it
// finds in them and what arrives later. No Job is created but while
// leading, and once shut down nothing the process started is left.
func TestALostLeaseLeavesNoGoroutineAndTheNextTermWorks(t *testing.T) {
	before := goleak.IgnoreCurrent()
	api := newLeaseOutage()
	cron := cronfake.NewClientset()
	o := fastLease("whole-process")
	o.workers, o.metricsAddr, o.healthAddr = 2, "0", "0"
	probe := liveness.New(clock.RealClock{}, livenessBounds(o))
	var createdWhileNotLeading atomic.Int32
	api.client.PrependReactor("create", "jobs", func(k8stesting.Action) (bool, runtime.Object, error) {
		if r, _ := probe.Role(); r != liveness.Leading {
			createdWhileNotLeading.Add(1)
		}
		return false, nil, nil
	})
	ctx, shutdown := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		errc <- runWith(ctx, o, clients{kube: api.client, cron: cron, recorder: &record.FakeRecorder{}, registry: prometheus.NewRegistry()}, probe)
	}()
	runNow := func(name string) {
		t.Helper()
		cj := newCronJob(func(cj *cronv1.CronJob) {
			cj.Name, cj.UID = name, types.UID(name+"-uid")
			cj.Annotations = map[string]string{cronv1.RunNowAnnotation: "now"}
		})
		if err := cron.Tracker().Add(cj); err != nil {
			t.Fatal(err)
		}
	}
	hasJob := func(name string) {
		t.Helper()
		err := wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, wait.ForeverTestTimeout, true, func(ctx context.Context) (bool, error) {
			jobs, err := api.client.BatchV1().Jobs(metav1.NamespaceDefault).List(ctx, metav1.ListOptions{})
			if err != nil {
				return false, err
			}
			for _, j := range jobs.Items {
				if ref := metav1.GetControllerOf(&j); ref != nil && ref.Name == name {
					return true, nil
				}
			}
			return false, nil
		})
		if err != nil {
			t.Fatalf("no Job of %s: %v", name, err)
		}
	}

	waitForRole(t, probe, liveness.Leading)
	runNow("first-term")
	hasJob("first-term")
	api.down.Store(true)
	waitForRole(t, probe, liveness.Campaigning)
	runNow("while-campaigning") // in the caches before the next term begins
	api.down.Store(false)
	waitForRole(t, probe, liveness.Leading)
	hasJob("while-campaigning")
	runNow("second-term") // an event the new term's handlers get
	hasJob("second-term")
	if n := createdWhileNotLeading.Load(); n != 0 {
		t.Errorf("%d Jobs created while not leading", n)
	}

	shutdown()
	select {
	case err := <-errc:
		if err != nil {
			t.Errorf("shutdown: %v", err)
		}
	case <-time.After(wait.ForeverTestTimeout):
		t.Fatal("the process did not return after shutdown")
	}
	goleak.VerifyNone(t, before)
}

// A lost Lease sends the replica back to campaigning however quickly its
// work stops: client-go ends the leading context before it returns, so
// work that has already returned must not read as work that quit while
// leading (which would make the process exit). A slow log sink holds
// client-go at its "No longer leading" line to widen the window.
func TestALostLeaseCampaignsAgainHoweverFastTheWorkStops(t *testing.T) {
	api := newLeaseOutage()
	workReturned := make(chan struct{}, 1)
	logger := funcr.New(func(_, args string) {
		if strings.Contains(args, "No longer leading") {
			select {
			case <-workReturned:
			case <-time.After(wait.ForeverTestTimeout):
			}
			time.Sleep(50 * time.Millisecond) // the work's deferred endElection runs meanwhile
		}
	}, funcr.Options{})
	ctx := klog.NewContext(context.Background(), logger)
	o := fastLease("leader-race")
	lock := &observedLock{
		Interface: &resourcelock.LeaseLock{
			LeaseMeta:  metav1.ObjectMeta{Namespace: "default", Name: o.leaderElectID},
			Client:     api.client.CoordinationV1(),
			LockConfig: resourcelock.ResourceLockConfig{Identity: "me"},
		},
		timeout: o.renewDeadline,
	}
	lost, err := leadOnce(ctx, o, lock, nil, func(ctx context.Context) error {
		api.down.Store(true) // renewals fail from now on
		<-ctx.Done()
		workReturned <- struct{}{}
		return nil
	})
	if !lost || err != nil {
		t.Errorf("leadOnce after a lost Lease = (lost %v, %v); want (true, nil): runAsLeader would return the error and the process exit 1", lost, err)
	}
}

// A signal while a term waits for its caches or its live read of the
// CronJobs (a rollout during an API-server outage) is a clean shutdown:
// exit 0, as the exit table in docs/deploying.md says.
func TestASignalWhileATermWaitsForTheAPIServerExitsZero(t *testing.T) {
	api := newLeaseOutage()
	cron := cronfake.NewClientset()
	cron.PrependReactor("list", "cronjobs", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, errors.New("API server too slow")
	})
	o := fastLease("signal-while-waiting")
	o.workers, o.metricsAddr, o.healthAddr = 1, "0", "0"
	probe := liveness.New(clock.RealClock{}, livenessBounds(o))
	ctx, shutdown := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		errc <- runWith(ctx, o, clients{kube: api.client, cron: cron, recorder: &record.FakeRecorder{}, registry: prometheus.NewRegistry()}, probe)
	}()
	waitForRole(t, probe, liveness.Leading)
	shutdown() // SIGTERM
	select {
	case err := <-errc:
		if err != nil {
			t.Errorf("a signal while the term waited for the API server: runWith returned %q, so the process would exit 1", err)
		}
	case <-time.After(wait.ForeverTestTimeout):
		t.Fatal("no return after the signal")
	}
}

// Only a write of the Lease in our name that succeeds moves the fence the
// syncs obey: not a release, not a write the API server refused.
func TestOnlyALeaseWriteInOurNameMovesTheFence(t *testing.T) {
	api := newLeaseOutage()
	clk := testingclock.NewFakeClock(time.Unix(1_700_000_000, 0))
	v := newLeaseValidity(clk, 10*time.Second)
	lock := &observedLock{
		Interface: &resourcelock.LeaseLock{
			LeaseMeta:  metav1.ObjectMeta{Namespace: "default", Name: "fence"},
			Client:     api.client.CoordinationV1(),
			LockConfig: resourcelock.ResourceLockConfig{Identity: "me"},
		},
		timeout:  time.Second,
		validity: v,
	}
	ctx := context.Background()
	ours := resourcelock.LeaderElectionRecord{HolderIdentity: "me", LeaseDurationSeconds: 15}
	if err := lock.Create(ctx, ours); err != nil {
		t.Fatal(err)
	}
	if want := clk.Now().Add(10 * time.Second); !v.fence().Equal(want) {
		t.Fatalf("fence %v after acquiring, want %v", v.fence(), want)
	}
	acquired := v.fence()
	clk.Step(2 * time.Second)
	api.down.Store(true)
	if err := lock.Update(ctx, ours); err == nil {
		t.Fatal("the refused renewal succeeded")
	}
	if !v.fence().Equal(acquired) {
		t.Errorf("a refused renewal moved the fence to %v", v.fence())
	}
	api.down.Store(false)
	if err := lock.Update(ctx, resourcelock.LeaderElectionRecord{LeaseDurationSeconds: 1}); err != nil {
		t.Fatal(err)
	}
	if !v.fence().Equal(acquired) {
		t.Errorf("a release moved the fence to %v", v.fence())
	}
	if err := lock.Update(ctx, ours); err != nil {
		t.Fatal(err)
	}
	if want := clk.Now().Add(10 * time.Second); !v.fence().Equal(want) {
		t.Errorf("fence %v after a renewal, want %v", v.fence(), want)
	}
}

// A read of the Lease in another's name withdraws the validity at once,
// and cuts the syncs under way: a process whose clock stood still while
// it was frozen (a paused VM) would otherwise trust its last renewal for a
// renew deadline more, beside the standby that took the Lease.
func TestALeaseReadInAnotherNameFencesTheSyncs(t *testing.T) {
	api := newLeaseOutage()
	clk := testingclock.NewFakeClock(time.Unix(1_700_000_000, 0))
	v := newLeaseValidity(clk, 10*time.Second)
	lockFor := func(id string) *resourcelock.LeaseLock {
		return &resourcelock.LeaseLock{
			LeaseMeta:  metav1.ObjectMeta{Namespace: "default", Name: "fence"},
			Client:     api.client.CoordinationV1(),
			LockConfig: resourcelock.ResourceLockConfig{Identity: id},
		}
	}
	lock := &observedLock{Interface: lockFor("me"), timeout: time.Second, validity: v}
	ctx := context.Background()
	if err := lock.Create(ctx, resourcelock.LeaderElectionRecord{HolderIdentity: "me", LeaseDurationSeconds: 15}); err != nil {
		t.Fatal(err)
	}
	syncCtx, cancel := syncContext(context.Background(), 1500*time.Millisecond, v, clk)
	defer cancel()
	// Paused: the standby waited the lease out and took it; our clock
	// stood still.
	other := lockFor("other")
	if _, _, err := other.Get(ctx); err != nil {
		t.Fatal(err)
	}
	if err := other.Update(ctx, resourcelock.LeaderElectionRecord{HolderIdentity: "other", LeaseDurationSeconds: 15, LeaderTransitions: 1}); err != nil {
		t.Fatal(err)
	}
	// Resumed: client-go's renewal is refused, and it reads the Lease.
	if rec, _, err := lock.Get(ctx); err != nil || rec.HolderIdentity != "other" {
		t.Fatalf("read %+v, %v", rec, err)
	}
	if !fenced(v, clk) {
		t.Errorf("the Lease was read in another's name, yet syncs may start until %v", v.fence())
	}
	select {
	case <-syncCtx.Done():
	case <-time.After(wait.ForeverTestTimeout):
		t.Error("a sync in flight goes on beside the leader read in the Lease")
	}
	// A later write in our name (the Lease won back) makes a new validity,
	// and the syncs started under it are not cut by the old withdrawal.
	if err := lock.Update(ctx, resourcelock.LeaderElectionRecord{HolderIdentity: "me", LeaseDurationSeconds: 15, LeaderTransitions: 2}); err != nil {
		t.Fatal(err)
	}
	if fenced(v, clk) {
		t.Error("won back, the Lease still fences the syncs")
	}
	next, cancelNext := syncContext(context.Background(), 1500*time.Millisecond, v, clk)
	defer cancelNext()
	if next.Err() != nil {
		t.Error("a sync started after the Lease was won back was cut at once")
	}
}

// A leader whose renewals all succeed, if slowly (each Lease write taking
// a good part of the renew deadline), is never fenced: its syncs start and
// run as long as client-go sees no loss.
func TestSlowButSuccessfulRenewalsNeverFenceTheLeader(t *testing.T) {
	o := options{leaderElect: true, leaderElectNamespace: "default", leaderElectID: "slow",
		leaseDuration: 4 * time.Second, renewDeadline: 1200 * time.Millisecond, retryPeriod: 600 * time.Millisecond}
	api := newLeaseOutage()
	var slow atomic.Bool
	api.client.PrependReactor("update", "leases", func(k8stesting.Action) (bool, runtime.Object, error) {
		if slow.Load() {
			time.Sleep(500 * time.Millisecond) // the API server's latency, not a synchronisation
		}
		return false, nil, nil
	})
	v := newLeaseValidity(clock.RealClock{}, leaseValiditySpan(o))
	ctx, shutdown := context.WithCancel(context.Background())
	defer shutdown()
	var terms atomic.Int32
	var samples, refused int
	var cut bool
	errc := make(chan error, 1)
	go func() {
		errc <- runAsLeader(ctx, o, api.client, nil, v, func(work context.Context) error {
			terms.Add(1)
			slow.Store(true)
			syncCtx, cancel := syncContext(work, leaseGrace(o), v, clock.RealClock{})
			defer cancel()
			end := time.NewTimer(5 * time.Second)
			defer end.Stop()
			tick := time.NewTicker(10 * time.Millisecond)
			defer tick.Stop()
			for {
				select {
				case <-work.Done():
					return nil
				case <-end.C:
					slow.Store(false)
					shutdown()
					return nil
				case <-tick.C:
					samples++
					if fenced(v, clock.RealClock{}) {
						refused++
					}
					cut = cut || syncCtx.Err() != nil
				}
			}
		})
	}()
	select {
	case err := <-errc:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("runAsLeader did not return")
	}
	if n := terms.Load(); n != 1 {
		t.Fatalf("%d terms: the Lease was lost; the case needs renewals that succeed", n)
	}
	if refused > 0 {
		t.Errorf("the Lease was held all along, yet a sync could not start in %d of %d samples", refused, samples)
	}
	if cut {
		t.Error("the Lease was held all along, yet the sync in flight was cut")
	}
}
