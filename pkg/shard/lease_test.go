package shard

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
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

func TestManagerBalances(t *testing.T) {
	for _, tc := range []struct {
		shards, replicas int
	}{
		{shards: 1, replicas: 1},
		{shards: 8, replicas: 1},
		{shards: 8, replicas: 3},
		{shards: 32, replicas: 3},
		{shards: 32, replicas: 4},
		{shards: 3, replicas: 5},
	} {
		t.Run(fmt.Sprintf("%d shards %d replicas", tc.shards, tc.replicas), func(t *testing.T) {
			f := newFleet(t, tc.shards)
			for range tc.replicas {
				f.add()
			}
			// Fresh Leases are free at once; member Leases need a round to be seen.
			f.rounds(2 * leaseDuration)
			if s := f.shares(); !balanced(s) {
				t.Errorf("shares %v, want within one of each other", s)
			}
		})
	}
}

// A replica that dies: its shards move within the lease duration (plus
// the rounds it takes to notice), never while it could still work them; a
// replica that joins: it takes its share from the others.
func TestManagerFailoverAndJoin(t *testing.T) {
	f := newFleet(t, 32)
	for range 3 {
		f.add()
	}
	f.rounds(2 * leaseDuration)
	dead := f.replicas[1]
	deadHeld, _ := dead.m.Set.Held()
	dead.up = false // stops ticking, as a SIGKILLed process would
	killed := f.clock.Now()

	var movedAfter time.Duration
	for f.clock.Since(killed) < 4*leaseDuration {
		f.round()
		h := f.api.holders(t)
		moved := true
		for _, i := range deadHeld {
			if h[i] == dead.m.Identity {
				moved = false
			}
		}
		if moved {
			movedAfter = f.clock.Since(killed)
			break
		}
	}
	if movedAfter == 0 {
		t.Fatalf("the dead replica's shards did not move within %v", 4*leaseDuration)
	}
	t.Logf("the dead replica's shards moved %v after the kill (lease duration %v)", movedAfter, leaseDuration)
	if movedAfter > leaseDuration+2*retryPeriod {
		t.Errorf("shards moved %v after the kill, want within the lease duration %v and a round", movedAfter, leaseDuration)
	}
	// The dead replica's own Set still says held, but past its validity.
	for _, i := range deadHeld {
		if until, _ := dead.m.Set.ValidUntil(i); f.clock.Now().Before(until) {
			t.Errorf("shard %d still workable by the dead replica", i)
		}
	}
	f.rounds(2 * leaseDuration)
	if s := f.shares(); !balanced(s) || len(s) != 2 {
		t.Errorf("after the kill: shares %v, want two balanced", s)
	}

	joined := f.add()
	f.rounds(3 * leaseDuration)
	s := f.shares()
	if !balanced(s) || len(s) != 3 {
		t.Errorf("after the join: shares %v, want three balanced", s)
	}
	if held, _ := joined.m.Set.Held(); len(held) < 32/3 {
		t.Errorf("the new replica holds %d shards, want its share of %d", len(held), 32/3)
	}
}

// A replica that joins after another died long ago takes its fair share
// at once: it does not count the dead replica's member Lease, whose own
// record says it lapsed long ago, as a member for its first lease
// duration. Counting it, the joiner took too small a share while the
// others released theirs down to the right one, and the shards between
// stayed unheld until its next rounds: in TestShardedReplicas (300
// CronJobs every 5 s) two shards waited four seconds, and their runs were
// superseded.
func TestManagerJoinerIgnoresALongDeadMember(t *testing.T) {
	f := newFleet(t, 16)
	for range 3 {
		f.add()
	}
	f.rounds(2 * leaseDuration)
	f.replicas[1].up = false
	f.rounds(4 * leaseDuration)
	f.add()
	// Two rounds: the joiner's member Lease is seen, the others release,
	// the joiner takes; nothing may stay unheld after.
	f.round()
	f.round()
	f.round()
	if s := f.shares(); !balanced(s) || len(s) != 3 {
		t.Errorf("shares %v a round after the others released, want three balanced", s)
	}
}

// A replica cut off from the API server stops working its shards at the
// renew deadline, before the lease duration after which others take them.
func TestManagerCutOffStopsBeforeTakeover(t *testing.T) {
	f := newFleet(t, 4)
	a, b := f.add(), f.add()
	f.rounds(2 * leaseDuration)
	aHeld, _ := a.m.Set.Held()
	if len(aHeld) != 2 {
		t.Fatalf("a holds %v, want 2 shards", aHeld)
	}
	f.api.setDown(a.m.Identity, true)
	cut := f.clock.Now()
	// round() checks the fence at every step: a's validity must end before
	// b may take a's shards.
	f.rounds(3 * leaseDuration)
	if held, _ := b.m.Set.Held(); len(held) != 4 {
		t.Errorf("b holds %v after a was cut off for %v, want all 4", held, f.clock.Since(cut))
	}
	if _, _, res := a.m.Set.Hold(uidIn(t, aHeld[0], 4)); res != NotHeld {
		t.Errorf("a cut off: Hold = %v, want NotHeld", res)
	}
}

// A replica giving a shard up to balance stops its syncs on it first: the
// Lease stays its own until the sync in flight is done.
func TestManagerReleaseWaitsForSyncs(t *testing.T) {
	f := newFleet(t, 2)
	a := f.add()
	f.rounds(2 * leaseDuration)
	uid := uidIn(t, 1, 2)
	_, done, res := a.m.Set.Hold(uid)
	if res != Held {
		t.Fatalf("Hold = %v, want Held", res)
	}
	f.add()
	// b's member Lease appears; a's next tick gives shard 1 up.
	if err := f.replicas[1].m.Tick(context.Background()); err != nil {
		t.Fatal(err)
	}
	f.clock.Step(retryPeriod)
	ticked := make(chan error)
	go func() {
		err := a.m.Tick(context.Background())
		a.m.Settle()
		ticked <- err
	}()
	// The tick blocks in Drop: no new sync holds the shard meanwhile.
	waitFor(t, func() bool {
		_, d, r := a.m.Set.Hold(uid)
		if r == Held {
			d()
		}
		return r == NotHeld
	})
	if h := f.api.holders(t)[1]; h != a.m.Identity {
		t.Fatalf("shard 1's Lease is %q's while a sync of a's holds it", h)
	}
	select {
	case err := <-ticked:
		t.Fatalf("tick returned (%v) before the sync finished", err)
	default:
	}
	done()
	if err := <-ticked; err != nil {
		t.Fatal(err)
	}
	if h := f.api.holders(t)[1]; h != "" {
		t.Errorf("shard 1's Lease is %q's after a released it, want no holder", h)
	}
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

// A replica started with another -shards than the group's splits the hash
// range differently: it would work CronJobs another replica works. It
// works nothing while the group's Leases (the lowest-indexed held one
// decides) say another count, and takes its share once they are gone.
func TestManagerRefusesAnotherShardCount(t *testing.T) {
	f := newFleet(t, 8)
	f.add()
	f.add()
	odd := f.add()
	odd.m.Set = NewSet(16, f.clock)
	f.rounds(2 * leaseDuration)
	if held, _ := odd.m.Set.Held(); len(held) != 0 {
		t.Errorf("the replica with -shards=16 holds %v beside replicas with 8", held)
	}
	total := 0
	for _, r := range f.replicas[:2] {
		held, _ := r.m.Set.Held()
		total += len(held)
	}
	if total != 8 {
		t.Errorf("the replicas with -shards=8 hold %d shards, want all 8", total)
	}
	// The group's replicas go (a rolling change of -shards): once their
	// Leases run out, the new count takes over.
	f.replicas[0].up, f.replicas[1].up = false, false
	f.rounds(3 * leaseDuration)
	if held, _ := odd.m.Set.Held(); len(held) != 16 {
		t.Errorf("alone, the replica with -shards=16 holds %d shards, want 16", len(held))
	}
}
