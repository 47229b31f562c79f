package main

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

// ProbeRev2: when the leader's renewals fail, the Lease is given up
// (ReleaseOnCancel) before the workers' context ends: client-go's renew()
// calls release() and only then returns, and Run cancels the `leading`
// context after renew returns. The next leader may take the Lease as soon
// as the release is stored, while this replica's workers still start new
// syncs (their context is live) and then have the grace on top. The docs
// (reliability.md) claim a sync "never writes beside the next leader,
// which cannot take the Lease before the fence has passed".
func TestProbeRev2LeaseReleasedBeforeWorkersStop(t *testing.T) {
	t.Skip("FINDING: runAsLeader's ReleaseOnCancel frees the Lease (LeaseDurationSeconds=1, no holder) on renewal failure before the workers' ctx is cancelled; the next leader can lead while this one's syncs still run")
	client := fake.NewSimpleClientset()
	var failRenew atomic.Bool
	workCtxAtRelease := make(chan error, 1)
	var workCtx atomic.Pointer[context.Context]
	client.PrependReactor("update", "leases", func(a k8stesting.Action) (bool, runtime.Object, error) {
		l := a.(k8stesting.UpdateAction).GetObject().(*coordinationv1.Lease)
		if l.Spec.HolderIdentity == nil || *l.Spec.HolderIdentity == "" {
			// The release: the next leader may take the Lease now.
			if c := workCtx.Load(); c != nil {
				select {
				case workCtxAtRelease <- (*c).Err():
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
	o := options{leaderElect: true, leaderElectNamespace: "default", leaderElectID: "probe",
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
	case err := <-workCtxAtRelease:
		if err == nil {
			t.Error("the Lease was released while the workers' context was still live: syncs go on (and new ones start) beside the next leader")
		}
	case <-time.After(30 * time.Second):
		t.Fatal("no release")
	}
	<-errc
}
