package shard

// The package's fakes: an API server for Leases with optimistic concurrency
// (leaseAPI), a fleet of Managers on one fake clock (fleet), and replicas
// whose clocks are skewed from the fleet's (skewReplica).

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	clocktesting "k8s.io/utils/clock/testing"
)

const testNS = "ns"

// leaseAPI is a fake API server for Leases with the optimistic concurrency
// the real one has: an update with a stale resourceVersion conflicts, and
// every write bumps it. It keeps the Leases itself; the fake clientset's
// tracker has no such checks and is slow.
type leaseAPI struct {
	*fake.Clientset
	mu     sync.Mutex
	rv     int
	leases map[string]*coordinationv1.Lease
	down   map[string]bool // identities whose writes fail
}

func newLeaseAPI() *leaseAPI {
	api := &leaseAPI{Clientset: fake.NewClientset(), leases: map[string]*coordinationv1.Lease{}, down: map[string]bool{}}
	gr := coordinationv1.Resource("leases")
	api.PrependReactor("*", "leases", func(a k8stesting.Action) (bool, runtime.Object, error) {
		api.mu.Lock()
		defer api.mu.Unlock()
		switch a.GetVerb() {
		case "list":
			a := a.(k8stesting.ListAction)
			out := &coordinationv1.LeaseList{}
			for _, l := range api.leases {
				if a.GetListRestrictions().Labels.Matches(labels.Set(l.Labels)) {
					out.Items = append(out.Items, *l.DeepCopy())
				}
			}
			return true, out, nil
		case "get":
			a := a.(k8stesting.GetAction)
			if l, ok := api.leases[a.GetName()]; ok {
				return true, l.DeepCopy(), nil
			}
			return true, nil, apierrors.NewNotFound(gr, a.GetName())
		case "delete":
			a := a.(k8stesting.DeleteAction)
			delete(api.leases, a.GetName())
			return true, nil, nil
		case "create":
			l := a.(k8stesting.CreateAction).GetObject().(*coordinationv1.Lease).DeepCopy()
			if api.down[identityOf(l)] {
				return true, nil, errors.New("connection refused")
			}
			if _, ok := api.leases[l.Name]; ok {
				return true, nil, apierrors.NewAlreadyExists(gr, l.Name)
			}
			api.rv++
			l.ResourceVersion = strconv.Itoa(api.rv)
			api.leases[l.Name] = l
			return true, l.DeepCopy(), nil
		case "update":
			l := a.(k8stesting.UpdateAction).GetObject().(*coordinationv1.Lease).DeepCopy()
			old, ok := api.leases[l.Name]
			if !ok {
				return true, nil, apierrors.NewNotFound(gr, l.Name)
			}
			if api.down[writerOf(old, l)] {
				return true, nil, errors.New("connection refused")
			}
			if old.ResourceVersion != l.ResourceVersion {
				return true, nil, apierrors.NewConflict(gr, l.Name, errors.New("stale"))
			}
			api.rv++
			l.ResourceVersion = strconv.Itoa(api.rv)
			api.leases[l.Name] = l
			return true, l.DeepCopy(), nil
		}
		return false, nil, nil
	})
	return api
}

func identityOf(l *coordinationv1.Lease) string {
	if l.Spec.HolderIdentity == nil {
		return ""
	}
	return *l.Spec.HolderIdentity
}

// writerOf guesses who writes new over old: the new holder, or the old one
// releasing.
func writerOf(old, new *coordinationv1.Lease) string {
	if id := identityOf(new); id != "" {
		return id
	}
	return identityOf(old)
}

func (api *leaseAPI) setDown(identity string, down bool) {
	api.mu.Lock()
	defer api.mu.Unlock()
	api.down[identity] = down
}

// holders returns the holder of each shard Lease.
func (api *leaseAPI) holders(t *testing.T) map[int]string {
	t.Helper()
	list, err := api.CoordinationV1().Leases(testNS).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	out := map[int]string{}
	for _, l := range list.Items {
		if l.Labels[RoleLabel] == "shard" {
			i, _ := strconv.Atoi(l.Labels[IndexLabel])
			out[i] = identityOf(&l)
		}
	}
	return out
}

type replica struct {
	m  *Manager
	up bool
}

type fleet struct {
	t        *testing.T
	api      *leaseAPI
	clock    *clocktesting.FakeClock
	n        int
	replicas []*replica
}

const (
	leaseDuration = 3 * time.Second
	renewDeadline = 2 * time.Second
	retryPeriod   = 500 * time.Millisecond
)

func newFleet(t *testing.T, n int) *fleet {
	return &fleet{t: t, api: newLeaseAPI(), clock: clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)), n: n}
}

func (f *fleet) add() *replica {
	r := &replica{up: true, m: &Manager{
		Client: f.api.CoordinationV1(), Namespace: testNS, Name: "cj",
		Identity:      fmt.Sprintf("replica-%d", len(f.replicas)),
		LeaseDuration: leaseDuration, RenewDeadline: renewDeadline, RetryPeriod: retryPeriod,
		Clock: f.clock, Set: NewSet(f.n, f.clock),
	}}
	f.replicas = append(f.replicas, r)
	return r
}

// round ticks every live replica once, then lets a retry period pass, and
// checks the fence after each step: no shard workable by two replicas.
func (f *fleet) round() {
	f.t.Helper()
	for _, r := range f.replicas {
		if r.up {
			// Errors are the cut-off replica's, or lost races: the
			// outcome is what the checks look at.
			_ = r.m.Tick(context.Background())
			r.m.Settle()
			f.checkFence()
		}
	}
	f.clock.Step(retryPeriod)
	f.checkFence()
}

// checkFence fails if two replicas may work one shard at this instant.
func (f *fleet) checkFence() {
	f.t.Helper()
	now := f.clock.Now()
	workable := map[int]string{}
	for _, r := range f.replicas {
		held, _ := r.m.Set.Held()
		for _, i := range held {
			if until, _ := r.m.Set.ValidUntil(i); now.Before(until) {
				if other, ok := workable[i]; ok {
					f.t.Fatalf("at %v shard %d is workable by %s and %s", now, i, other, r.m.Identity)
				}
				workable[i] = r.m.Identity
			}
		}
	}
}

// rounds runs rounds for d of fake time.
func (f *fleet) rounds(d time.Duration) {
	for range int(d / retryPeriod) {
		f.round()
	}
}

// shares returns how many shards each live replica holds, and fails unless
// every shard is held by exactly one.
func (f *fleet) shares() []int {
	f.t.Helper()
	owner := map[int]string{}
	var out []int
	for _, r := range f.replicas {
		if !r.up {
			continue
		}
		held, _ := r.m.Set.Held()
		out = append(out, len(held))
		for _, i := range held {
			if o, ok := owner[i]; ok {
				f.t.Fatalf("shard %d held by %s and %s", i, o, r.m.Identity)
			}
			owner[i] = r.m.Identity
		}
	}
	if len(owner) != f.n {
		f.t.Fatalf("%d of %d shards held: %v", len(owner), f.n, owner)
	}
	return out
}

func balanced(shares []int) bool {
	lo, hi := shares[0], shares[0]
	for _, s := range shares {
		lo, hi = min(lo, s), max(hi, s)
	}
	return hi-lo <= 1
}

// waitFor waits for cond, which another goroutine makes true.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met in 10 s")
		}
		time.Sleep(time.Millisecond)
	}
}

// uidIn returns a UID that falls in shard i of n.
func uidIn(t *testing.T, i, n int) types.UID {
	t.Helper()
	for k := range 100000 {
		uid := types.UID(fmt.Sprintf("uid-%d", k))
		if OfUID(uid, n) == i {
			return uid
		}
	}
	t.Fatalf("no UID in shard %d of %d", i, n)
	return ""
}

// skewedClock is a replica's own clock: the fleet's, off by skew.
type skewedClock struct {
	*clocktesting.FakeClock
	skew time.Duration
}

func (c skewedClock) Now() time.Time                  { return c.FakeClock.Now().Add(c.skew) }
func (c skewedClock) Since(t time.Time) time.Duration { return c.Now().Sub(t) }

type countMoves struct{ acquired, released, lost atomic.Int64 }

func (m *countMoves) Acquired()   { m.acquired.Add(1) }
func (m *countMoves) Released()   { m.released.Add(1) }
func (m *countMoves) Lost()       { m.lost.Add(1) }
func (m *countMoves) Held(int)    {}
func (m *countMoves) gone() int64 { return m.released.Load() + m.lost.Load() }

type skewReplica struct {
	m     *Manager
	clock skewedClock
	moves *countMoves
	every int // ticks every this many rounds
}

func addSkewed(f *fleet, skew time.Duration, every int) *skewReplica {
	c := skewedClock{FakeClock: f.clock, skew: skew}
	mv := &countMoves{}
	r := &skewReplica{clock: c, moves: mv, every: every, m: &Manager{
		Client: f.api.CoordinationV1(), Namespace: testNS, Name: "cj",
		Identity:      fmt.Sprintf("replica-%d", len(f.replicas)),
		LeaseDuration: leaseDuration, RenewDeadline: renewDeadline, RetryPeriod: retryPeriod,
		Clock: c, Set: NewSet(f.n, c), Moves: mv,
	}}
	f.replicas = append(f.replicas, &replica{m: r.m, up: false}) // not ticked by f.round
	return r
}

// skewRounds ticks the replicas (each on its own clock) for d, checking the
// fence in each replica's own frame, and returns the shares.
func skewRounds(t *testing.T, f *fleet, rs []*skewReplica, d time.Duration) []int {
	t.Helper()
	for round := range int(d / retryPeriod) {
		for _, r := range rs {
			if round%r.every == 0 {
				_ = r.m.Tick(context.Background())
				r.m.Settle()
			}
		}
		f.clock.Step(retryPeriod)
		workable := map[int]string{}
		for _, r := range rs {
			held, _ := r.m.Set.Held()
			for _, i := range held {
				if until, _ := r.m.Set.ValidUntil(i); r.clock.Now().Before(until) {
					if o, ok := workable[i]; ok {
						t.Fatalf("shard %d workable by %s and %s", i, o, r.m.Identity)
					}
					workable[i] = r.m.Identity
				}
			}
		}
	}
	var out []int
	for _, r := range rs {
		held, _ := r.m.Set.Held()
		out = append(out, len(held))
	}
	return out
}
