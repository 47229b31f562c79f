package shard

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	coordinationclient "k8s.io/client-go/kubernetes/typed/coordination/v1"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"

	"github.com/cronjob-controller/cronjob-controller/pkg/liveness"
)

const (
	// GroupLabel marks the Leases of one sharded deployment, by its name.
	GroupLabel = "cronjob-controller.io/shard-group"
	// RoleLabel tells shard Leases ("shard") from member Leases ("member").
	RoleLabel = "cronjob-controller.io/shard-role"
	// IndexLabel is the shard a shard Lease is for.
	IndexLabel = "cronjob-controller.io/shard"
	// CountLabel is the number of shards (-shards) of the replica that last
	// wrote a Lease: replicas that split the hash range differently would
	// work one CronJob at once.
	CountLabel = "cronjob-controller.io/shard-count"
)

// Moves counts shard moves by direction; the metrics package plugs in.
type Moves interface {
	Acquired()
	Released()
	Lost()
	Held(n int)
}

type noMoves struct{}

func (noMoves) Acquired() {}
func (noMoves) Released() {}
func (noMoves) Lost()     {}
func (noMoves) Held(int)  {}

// Manager holds this replica's share of the shard Leases.
//
// Each shard i has a Lease <Name>-<i>; each replica has a member Lease
// <Name>-member-<hash of Identity>, renewed like a held shard, by which the
// replicas count each other. Every RetryPeriod a replica lists the group's
// Leases, renews its own, and moves towards its fair share: of the live
// members sorted by identity, the first n mod R hold ⌈n/R⌉ shards, the rest
// ⌊n/R⌋. A replica above its share releases shards (its work on them
// stopped first); one below takes free ones: a Lease with no holder, or one
// whose record this replica has seen unchanged for LeaseDuration (its own
// clock, as client-go's leader election does, so clock skew between
// replicas does not matter).
//
// Fencing is leader election's: a shard is workable until the start of its
// last successful renewal plus RenewDeadline, shorter than LeaseDuration,
// and each sync's context ends then. A replica cut off from the API server
// stops writing for a shard before any other replica may take it.
type Manager struct {
	Client        coordinationclient.LeasesGetter
	Namespace     string
	Name          string
	Identity      string
	LeaseDuration time.Duration
	RenewDeadline time.Duration
	RetryPeriod   time.Duration
	Clock         clock.WithTicker
	Set           *Set
	Moves         Moves
	// Probe, when set, hears of each round as it starts and as it ends,
	// so /healthz can tell a lease loop that stopped (pkg/liveness).
	Probe *liveness.Probe

	// observed is, by Lease name, the record last seen and when it changed.
	observed map[string]observation
	// releasing counts the releases under way.
	releasing sync.WaitGroup
	// otherCount is the group's shard count while it differs from ours
	// (said once per change); 0 otherwise.
	otherCount int
}

type observation struct {
	resourceVersion string
	at              time.Time
	// changed says this replica has seen the Lease written since it
	// first saw it: its writer is live, whatever its clock says.
	changed bool
}

// shardLease is the name of shard i's Lease.
func (m *Manager) shardLease(i int) string { return m.Name + "-" + strconv.Itoa(i) }

// memberLease is the name of this replica's member Lease.
func (m *Manager) memberLease() string {
	return fmt.Sprintf("%s-member-%016x", m.Name, Hash(m.Identity))
}

// Run works the shard Leases until ctx ends, then releases every shard
// (after Set.Drop, so no sync of ours overlaps the next holder's) and its
// member Lease. Stop the controller's workers before ctx ends, so the
// releases follow the last writes.
func (m *Manager) Run(ctx context.Context) {
	logger := klog.FromContext(ctx)
	t := m.Clock.NewTicker(m.RetryPeriod)
	defer t.Stop()
	for {
		if err := m.round(ctx); err != nil {
			logger.V(2).Info("Shard lease round failed", "err", err)
		}
		select {
		case <-ctx.Done():
			m.ReleaseAll(context.WithoutCancel(ctx))
			return
		case <-t.C():
		}
	}
}

// round is one Tick, reported to the liveness probe as it starts and ends.
func (m *Manager) round(ctx context.Context) error {
	m.Probe.ElectionAttempt()
	defer m.Probe.ElectionAttempt()
	return m.Tick(ctx)
}

// call bounds one request of a round by the renew deadline, and reports it
// to the liveness probe: a request to an API server that stopped answering
// would otherwise hang until the connection's health check gives up, and
// with it the round that drops the lapsed shards and, once the API server
// is back, takes a share again. Each request has the whole deadline: one
// for the round would cut the renewals of an API server that is slow but
// answers.
func (m *Manager) call(ctx context.Context) (context.Context, context.CancelFunc) {
	m.Probe.ElectionAttempt()
	ctx, cancel := context.WithTimeout(ctx, m.RenewDeadline)
	return ctx, func() { cancel(); m.Probe.ElectionAttempt() }
}

// Tick is one round: observe, renew, and move towards the fair share.
// Shards given up are released in the background; Settle waits for them.
func (m *Manager) Tick(ctx context.Context) error {
	if m.observed == nil {
		m.observed = map[string]observation{}
	}
	if m.Moves == nil {
		m.Moves = noMoves{}
	}
	defer m.Set.Commit()
	logger := klog.FromContext(ctx)
	now := m.Clock.Now()
	listCtx, done := m.call(ctx)
	list, err := m.Client.Leases(m.Namespace).List(listCtx, metav1.ListOptions{
		LabelSelector: labels.SelectorFromSet(labels.Set{GroupLabel: m.Name}).String(),
	})
	done()
	if err != nil {
		m.dropExpired()
		return fmt.Errorf("listing shard Leases: %w", err)
	}
	leases := map[string]*coordinationv1.Lease{}
	for i := range list.Items {
		l := &list.Items[i]
		leases[l.Name] = l
		if o, ok := m.observed[l.Name]; !ok || o.resourceVersion != l.ResourceVersion {
			m.observed[l.Name] = observation{resourceVersion: l.ResourceVersion, at: now, changed: ok}
		}
	}

	var errs []error
	if err := m.renewMember(ctx, leases[m.memberLease()]); err != nil {
		errs = append(errs, err)
	}
	if err := m.checkCount(ctx, leases, now); err != nil {
		return errors.Join(append(errs, err)...)
	}

	held, _ := m.Set.Held()
	want := m.share(leases, now)
	// Above the share: the highest shards go. They are not renewed, so the
	// wait for their syncs in Drop is bounded by their last renewal, and the
	// shards kept are renewed first.
	var release []int
	if len(held) > want {
		held, release = held[:want], held[want:]
	}
	// Renew what we keep, all at once: a round must fit in the renew
	// deadline however many shards it renews. A shard whose Lease is
	// another's now is lost.
	kept := held[:0:0]
	var wg sync.WaitGroup
	var mu sync.Mutex
	for _, i := range held {
		l := leases[m.shardLease(i)]
		if l == nil || ptr.Deref(l.Spec.HolderIdentity, "") != m.Identity {
			logger.Info("Lost a shard", "shard", i)
			m.Set.Lose(i)
			m.Moves.Lost()
			continue
		}
		kept = append(kept, i)
		wg.Go(func() {
			start := m.Clock.Now()
			_, err := m.write(ctx, l, m.Identity)
			if err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
				return
			}
			m.Set.Renew(i, start.Add(m.RenewDeadline))
		})
	}
	wg.Wait()
	held = kept
	// Given up in the background: Drop waits for the shard's syncs, and the
	// shards kept must not wait with it for their next renewal.
	for _, i := range release {
		l := leases[m.shardLease(i)]
		m.releasing.Add(1)
		go func() {
			defer m.releasing.Done()
			m.Set.Drop(i)
			if l != nil && ptr.Deref(l.Spec.HolderIdentity, "") == m.Identity {
				if _, err := m.write(context.WithoutCancel(ctx), l, ""); err != nil {
					logger.Info("Releasing a shard failed; it moves when its Lease expires", "shard", i, "err", err)
				}
			}
			m.Moves.Released()
			logger.Info("Released a shard to balance", "shard", i, "share", want)
		}()
	}
	m.dropExpired()
	held, _ = m.Set.Held()
	// Below it: take free shards, lowest first.
	for i := 0; i < m.Set.N() && len(held) < want; i++ {
		if slices.Contains(held, i) {
			continue
		}
		l := leases[m.shardLease(i)]
		if l != nil && !m.free(l, now) {
			continue
		}
		start := m.Clock.Now()
		var err error
		if l == nil {
			createCtx, done := m.call(ctx)
			_, err = m.Client.Leases(m.Namespace).Create(createCtx, m.newLease(m.shardLease(i), "shard", strconv.Itoa(i), start), metav1.CreateOptions{})
			done()
		} else {
			_, err = m.write(ctx, l, m.Identity)
		}
		if err != nil {
			if !apierrors.IsConflict(err) && !apierrors.IsAlreadyExists(err) {
				errs = append(errs, err)
			}
			continue // someone else was quicker
		}
		m.Set.Acquire(i, start.Add(m.RenewDeadline))
		held = append(held, i)
		m.Moves.Acquired()
		logger.Info("Acquired a shard", "shard", i, "share", want)
	}
	m.Moves.Held(len(held))
	return errors.Join(errs...)
}

// checkCount makes a replica whose shard count differs from the group's
// work nothing: the group's is the count on the lowest-indexed shard Lease
// someone holds, so all replicas agree which count wins (during a rolling
// change of -shards, the old one until its Leases run out). Such a replica
// drops and releases what it holds and takes nothing.
func (m *Manager) checkCount(ctx context.Context, leases map[string]*coordinationv1.Lease, now time.Time) error {
	group, lowest := 0, -1
	for _, l := range leases {
		if l.Labels[RoleLabel] != "shard" || m.free(l, now) {
			continue
		}
		i, err1 := strconv.Atoi(l.Labels[IndexLabel])
		c, err2 := strconv.Atoi(l.Labels[CountLabel])
		if err1 != nil || err2 != nil || (lowest >= 0 && i >= lowest) {
			continue
		}
		group, lowest = c, i
	}
	logger := klog.FromContext(ctx)
	if group == 0 || group == m.Set.N() {
		if m.otherCount != 0 {
			logger.Info("The shard Leases agree with -shards again; taking a share", "shards", m.Set.N())
			m.otherCount = 0
		}
		return nil
	}
	if m.otherCount != group {
		logger.Error(nil, "The other replicas run with another -shards; working nothing until they are gone",
			"shards", m.Set.N(), "group", group)
		m.otherCount = group
	}
	held, _ := m.Set.Held()
	for _, i := range held {
		m.Set.Lose(i)
		m.Moves.Lost()
		if l := leases[m.shardLease(i)]; l != nil && ptr.Deref(l.Spec.HolderIdentity, "") == m.Identity {
			_, _ = m.write(ctx, l, "")
		}
	}
	m.Moves.Held(0)
	return fmt.Errorf("-shards is %d, the group's Leases say %d", m.Set.N(), group)
}

// Settle waits for the releases under way.
func (m *Manager) Settle() { m.releasing.Wait() }

// dropExpired drops the shards whose validity passed without a renewal.
func (m *Manager) dropExpired() {
	held, _ := m.Set.Held()
	for _, i := range held {
		if until, ok := m.Set.ValidUntil(i); ok && !m.Clock.Now().Before(until) {
			klog.Background().Info("A shard's Lease lapsed unrenewed", "shard", i)
			m.Set.Lose(i)
			m.Moves.Lost()
		}
	}
}

// free reports whether a Lease may be taken: no holder, or its record
// unchanged for LeaseDuration as this replica has seen it.
func (m *Manager) free(l *coordinationv1.Lease, now time.Time) bool {
	if ptr.Deref(l.Spec.HolderIdentity, "") == "" {
		return true
	}
	o := m.observed[l.Name]
	return !now.Before(o.at.Add(m.LeaseDuration))
}

// lapsedLongAgo reports whether a Lease's own record says it lapsed: not
// renewed, by its writer's clock, for two lease durations (one of them
// slack for clocks that disagree). Only for counting members, and only for
// a Lease this replica has not seen written since it first saw it: a
// replica that has just started has not watched the others' Leases for a
// lease duration yet (free), and would count a replica dead long ago as a
// member, take too small a share, and leave unheld the shards the others
// release to make room for it. A Lease seen written is live, however far
// its writer's clock is from ours: comparing the clocks alone would leave
// a joiner without its share, or make the count flap, when they disagree
// by about two lease durations. Taking a Lease still waits for
// it to be free as this replica has seen it.
func (m *Manager) lapsedLongAgo(l *coordinationv1.Lease, now time.Time) bool {
	if l.Spec.RenewTime == nil {
		return false
	}
	d := max(time.Duration(ptr.Deref(l.Spec.LeaseDurationSeconds, 0))*time.Second, m.LeaseDuration)
	return now.After(l.Spec.RenewTime.Add(2 * d))
}

// share is how many shards this replica should hold.
func (m *Manager) share(leases map[string]*coordinationv1.Lease, now time.Time) int {
	members := []string{m.Identity}
	for _, l := range leases {
		holder := ptr.Deref(l.Spec.HolderIdentity, "")
		if l.Labels[RoleLabel] != "member" || holder == "" || holder == m.Identity || m.free(l, now) ||
			(!m.observed[l.Name].changed && m.lapsedLongAgo(l, now)) {
			continue
		}
		if c, ok := l.Labels[CountLabel]; ok && c != strconv.Itoa(m.Set.N()) {
			continue // works nothing beside us (checkCount)
		}
		members = append(members, holder)
	}
	slices.Sort(members)
	members = slices.Compact(members)
	n, r := m.Set.N(), len(members)
	want := n / r
	if slices.Index(members, m.Identity) < n%r {
		want++
	}
	return want
}

func (m *Manager) renewMember(ctx context.Context, l *coordinationv1.Lease) error {
	if l == nil {
		ctx, done := m.call(ctx)
		defer done()
		_, err := m.Client.Leases(m.Namespace).Create(ctx, m.newLease(m.memberLease(), "member", "", m.Clock.Now()), metav1.CreateOptions{})
		return err
	}
	_, err := m.write(ctx, l, m.Identity)
	return err
}

func (m *Manager) newLease(name, role, index string, now time.Time) *coordinationv1.Lease {
	l := &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: m.Namespace,
			Labels: map[string]string{GroupLabel: m.Name, RoleLabel: role, CountLabel: strconv.Itoa(m.Set.N())}},
		Spec: coordinationv1.LeaseSpec{
			HolderIdentity:       ptr.To(m.Identity),
			LeaseDurationSeconds: ptr.To(int32(m.LeaseDuration.Round(time.Second) / time.Second)),
			AcquireTime:          &metav1.MicroTime{Time: now},
			RenewTime:            &metav1.MicroTime{Time: now},
		},
	}
	if index != "" {
		l.Labels[IndexLabel] = index
	}
	return l
}

// write renews l for holder, or releases it when holder is "". The update
// carries l's resourceVersion: it fails if anyone wrote l since we read it.
func (m *Manager) write(ctx context.Context, l *coordinationv1.Lease, holder string) (*coordinationv1.Lease, error) {
	l = l.DeepCopy()
	now := metav1.MicroTime{Time: m.Clock.Now()}
	if ptr.Deref(l.Spec.HolderIdentity, "") != holder {
		l.Spec.AcquireTime = &now
		l.Spec.LeaseTransitions = ptr.To(ptr.Deref(l.Spec.LeaseTransitions, 0) + 1)
	}
	l.Spec.HolderIdentity = ptr.To(holder)
	if holder != "" {
		if l.Labels == nil {
			l.Labels = map[string]string{}
		}
		l.Labels[CountLabel] = strconv.Itoa(m.Set.N())
	}
	l.Spec.RenewTime = &now
	l.Spec.LeaseDurationSeconds = ptr.To(int32(m.LeaseDuration.Round(time.Second) / time.Second))
	ctx, done := m.call(ctx)
	defer done()
	return m.Client.Leases(m.Namespace).Update(ctx, l, metav1.UpdateOptions{})
}

// ReleaseAll drops and releases every held shard and deletes the member
// Lease, so the other replicas take the shards at once.
func (m *Manager) ReleaseAll(ctx context.Context) {
	m.releasing.Wait()
	ctx, cancel := context.WithTimeout(ctx, m.RenewDeadline)
	defer cancel()
	if m.Moves == nil {
		m.Moves = noMoves{}
	}
	held, _ := m.Set.Held()
	for _, i := range held {
		m.Set.Drop(i)
		leases := m.Client.Leases(m.Namespace)
		if l, err := leases.Get(ctx, m.shardLease(i), metav1.GetOptions{}); err == nil && ptr.Deref(l.Spec.HolderIdentity, "") == m.Identity {
			if _, err := m.write(ctx, l, ""); err != nil {
				klog.FromContext(ctx).Info("Releasing a shard failed; it moves when its Lease expires", "shard", i, "err", err)
			}
		}
		m.Moves.Released()
	}
	m.Set.Commit()
	m.Moves.Held(0)
	_ = m.Client.Leases(m.Namespace).Delete(ctx, m.memberLease(), metav1.DeleteOptions{})
}
