package main

// Tests of leader election (runAsLeader, the lease flags): the Lease is
// released only after the work stops, and a sync's grace ends before a
// standby may lead.

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

// When the leader's renewals fail, nothing gives the Lease up before the
// work stops: client-go's ReleaseOnCancel would release it before it ends
// the work's context, and the next leader could lead while this replica's
// syncs still run. The Lease is not released on loss at all (the standby
// waits out the lease duration), and the process reports the loss.
func TestLeaseNotReleasedBeforeWorkersStop(t *testing.T) {
	client := fake.NewSimpleClientset()
	var failRenew atomic.Bool
	released := make(chan error, 1)
	var workCtx atomic.Pointer[context.Context]
	client.PrependReactor("update", "leases", func(a k8stesting.Action) (bool, runtime.Object, error) {
		l := a.(k8stesting.UpdateAction).GetObject().(*coordinationv1.Lease)
		if l.Spec.HolderIdentity == nil || *l.Spec.HolderIdentity == "" {
			if c := workCtx.Load(); c != nil {
				select {
				case released <- (*c).Err():
				default:
				}
			}
			return false, nil, nil
		}
		if failRenew.Load() {
			return true, nil, errors.New("API server too slow")
		}
		return false, nil, nil
	})
	o := options{leaderElect: true, leaderElectNamespace: "default", leaderElectID: "leader-test",
		leaseDuration: 1500 * time.Millisecond, renewDeadline: 600 * time.Millisecond, retryPeriod: 100 * time.Millisecond}
	errc := make(chan error, 1)
	go func() {
		errc <- runAsLeader(context.Background(), o, client, func(ctx context.Context) error {
			workCtx.Store(&ctx)
			failRenew.Store(true)
			<-ctx.Done()
			return nil
		})
	}()
	select {
	case err := <-errc:
		if err == nil {
			t.Error("runAsLeader returned no error after losing the Lease")
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the lost Lease did not end runAsLeader")
	}
	select {
	case err := <-released:
		t.Errorf("the Lease was released after it was lost (work context then: %v); the standby must wait it out", err)
	default:
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
		errc <- runAsLeader(ctx, o, client, func(ctx context.Context) error {
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
