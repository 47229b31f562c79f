// Package shard splits CronJobs over a fixed number of virtual shards and
// tracks which of them this replica works.
//
// The shard key is the UID of the CronJob: a CronJob's own metadata.uid, a
// Job's controller reference to its CronJob. A CronJob and its Jobs so
// always fall in the same shard, and the Job's shard is computed from the Job
// alone. The hash is the API server's (FNV-1a 64 of the key, see
// k8s.io/apimachinery/pkg/sharding) and shard i is the contiguous range
// [i·2⁶⁴/n, (i+1)·2⁶⁴/n) of it, so a set of shards is also a server-side
// shardSelector on object.metadata.uid.
package shard

import (
	"context"
	"fmt"
	"hash/fnv"
	"math/bits"
	"slices"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/sharding"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"

	cronv1 "github.com/cronjob-controller/cronjob-controller/pkg/apis/batch/v1"
	"github.com/cronjob-controller/cronjob-controller/pkg/job"
)

// UIDField is the field the API server's shardSelector hashes for us.
const UIDField = "object.metadata.uid"

// Hash is the API server's shard hash of a key.
func Hash(key string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(key))
	return h.Sum64()
}

// Of returns the shard, of n, that hash falls in: floor(hash·n / 2⁶⁴).
func Of(hash uint64, n int) int {
	hi, _ := bits.Mul64(hash, uint64(n))
	return int(hi)
}

// OfUID returns the shard of a UID.
func OfUID(uid types.UID, n int) int { return Of(Hash(string(uid)), n) }

// KeyOf returns the shard key of a CronJob, a Backfill or a Job: the UID
// of the CronJob or Backfill that controls a Job, else the object's own UID
// (a CronJob, a Backfill, or a Job neither controls, which only ever
// matters for releasing a run-record finalizer once it is deleted). So a
// CronJob and its Jobs share a shard, and a Backfill and its Jobs another.
func KeyOf(obj metav1.Object) types.UID {
	if ref := job.ControllerOf(obj); ref != nil {
		return ref.UID
	}
	if uid := job.RecordOf(obj); uid != "" {
		// Detached before its run was recorded: still the record of a run
		// of that CronJob, kept where the CronJob is worked.
		return uid
	}
	if ref := metav1.GetControllerOfNoCopy(obj); ref != nil && ref.Kind == "Backfill" && ref.APIVersion == cronv1.SchemeGroupVersion.String() {
		return ref.UID
	}
	return obj.GetUID()
}

// bound is the first hash of shard i of n, as the API server writes it.
func bound(i, n int) string {
	if i >= n {
		return "0x10000000000000000"
	}
	q, r := bits.Div64(uint64(i), 0, uint64(n))
	if r != 0 {
		q++
	}
	return fmt.Sprintf("0x%016x", q)
}

// Selector is the API server's shardSelector for the given shards of n on
// field, adjacent shards merged into one range; "" for no shards.
func Selector(field string, shards []int, n int) string {
	reqs := ranges(field, shards, n)
	if len(reqs) == 0 {
		return ""
	}
	return sharding.NewSelector(reqs...).String()
}

// ranges are the hash ranges of shards, adjacent ones merged.
func ranges(field string, shards []int, n int) []sharding.ShardRangeRequirement {
	s := slices.Clone(shards)
	slices.Sort(s)
	var reqs []sharding.ShardRangeRequirement
	for i := 0; i < len(s); {
		j := i
		for j+1 < len(s) && s[j+1] == s[j]+1 {
			j++
		}
		reqs = append(reqs, sharding.ShardRangeRequirement{Key: field, Start: bound(s[i], n), End: bound(s[j]+1, n)})
		i = j + 1
	}
	return reqs
}

// Set is the shards this replica holds. The lease manager adds and drops
// shards; the controller holds a shard for each sync (Hold), and the
// informer filters keep in their caches only what Owns says.
//
// A shard is workable from its acquisition until validUntil, which the
// lease manager moves forward on each renewal to the renewal's start plus
// the renew deadline, short of the lease duration after which another
// replica may take the shard: that gap fences this replica's writes.
type Set struct {
	n     int
	clock clock.WithTickerAndDelayedExecution

	mu        sync.Mutex
	gen       uint64
	committed uint64
	held      map[int]*holding
	filters   []*Filter
	changed   []func()
}

type holding struct {
	// ctx ends when the hold lapses (validUntil passes unrenewed): the
	// syncs holding the shard stop writing then.
	ctx        context.Context
	lapse      context.CancelFunc
	timer      clock.Timer
	validUntil time.Time
	gen        uint64 // the Set's generation when acquired
	ready      bool   // the caches hold the shard since acquisition
	inFlight   int
	idle       *sync.Cond
}

// NewSet returns an empty set of shards of n.
func NewSet(n int, clk clock.WithTickerAndDelayedExecution) *Set {
	return &Set{n: n, clock: clk, held: map[int]*holding{}}
}

// N is the number of shards.
func (s *Set) N() int { return s.n }

// Generation counts the changes of the held shards.
func (s *Set) Generation() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.gen
}

// OnChange registers f to be called after each change of the held shards.
func (s *Set) OnChange(f func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.changed = append(s.changed, f)
}

// Commit tells the informer filters about the acquisitions and drops since
// the last Commit, at once: each change of the held shards costs a list.
func (s *Set) Commit() {
	s.mu.Lock()
	if s.gen == s.committed {
		s.mu.Unlock()
		return
	}
	s.committed = s.gen
	fs := slices.Clone(s.changed)
	s.mu.Unlock()
	for _, f := range fs {
		f()
	}
}

// Held returns the held shards, sorted, and the generation they are of.
func (s *Set) Held() ([]int, uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]int, 0, len(s.held))
	for i := range s.held {
		out = append(out, i)
	}
	slices.Sort(out)
	return out, s.gen
}

// Owns reports whether the object with shard key uid is in a held shard:
// whether the caches keep it.
func (s *Set) Owns(uid types.UID) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.held[OfUID(uid, s.n)]
	return ok
}

// Acquired returns the generation at which the shard of the object with
// shard key uid was acquired, and whether it is held. A shard lost and
// acquired again has a new one: what was decided under the old hold may
// have been overtaken by another replica's work in between.
func (s *Set) Acquired(uid types.UID) (uint64, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	h, ok := s.held[OfUID(uid, s.n)]
	if !ok {
		return 0, false
	}
	return h.gen, true
}

// Acquire adds shard i, workable until validUntil once the caches hold it
// (after Commit).
func (s *Set) Acquire(i int, validUntil time.Time) {
	s.mu.Lock()
	s.gen++
	ctx, lapse := context.WithCancel(context.Background())
	h := &holding{ctx: ctx, lapse: lapse, validUntil: validUntil, gen: s.gen, idle: sync.NewCond(&s.mu)}
	h.timer = s.clock.AfterFunc(validUntil.Sub(s.clock.Now()), lapse)
	s.held[i] = h
	s.mu.Unlock()
}

// Renew moves the validity of a held shard forward.
func (s *Set) Renew(i int, validUntil time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	h, ok := s.held[i]
	if !ok || !validUntil.After(h.validUntil) || h.ctx.Err() != nil {
		return // a lapsed hold stays lapsed: the manager drops it
	}
	h.validUntil = validUntil
	h.timer.Stop()
	h.timer = s.clock.AfterFunc(validUntil.Sub(s.clock.Now()), h.lapse)
}

// ValidUntil returns when the hold of shard i ends unless renewed.
func (s *Set) ValidUntil(i int) (time.Time, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	h, ok := s.held[i]
	if !ok {
		return time.Time{}, false
	}
	return h.validUntil, true
}

// Drop removes shard i: no new sync holds it from now on, and Drop returns
// once the syncs that hold it have finished. (Each ends by the shard's
// validity at the latest: its context's deadline.)
func (s *Set) Drop(i int) {
	s.mu.Lock()
	h, ok := s.held[i]
	if !ok {
		s.mu.Unlock()
		return
	}
	delete(s.held, i)
	s.gen++
	for h.inFlight > 0 {
		h.idle.Wait()
	}
	s.mu.Unlock()
}

// Lose drops shard i at once: its Lease is another's, or lapsed. The syncs
// holding it are cancelled, and Lose returns once they have returned.
func (s *Set) Lose(i int) {
	s.mu.Lock()
	if h, ok := s.held[i]; ok {
		h.lapse()
	}
	s.mu.Unlock()
	s.Drop(i)
}

// HoldResult says why Hold refused.
type HoldResult int

const (
	// Held: the sync may go ahead until the deadline.
	Held HoldResult = iota
	// NotHeld: another replica's shard, or this replica's past its validity.
	NotHeld
	// NotReady: held, but the caches do not hold the shard yet.
	NotReady
)

// Hold holds the shard of the CronJob with the given UID for one sync. On
// Held, the sync must stop writing when lapsed ends (the hold lapsed
// unrenewed) and call done after.
func (s *Set) Hold(uid types.UID) (lapsed context.Context, done func(), _ HoldResult) {
	i := OfUID(uid, s.n)
	s.mu.Lock()
	defer s.mu.Unlock()
	h, ok := s.held[i]
	if !ok || !s.clock.Now().Before(h.validUntil) || h.ctx.Err() != nil {
		return nil, nil, NotHeld
	}
	if !h.ready {
		for _, f := range s.filters {
			if !f.caughtUp(h.gen) {
				return nil, nil, NotReady
			}
		}
		h.ready = true
	}
	h.inFlight++
	return h.ctx, func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		h.inFlight--
		if h.inFlight == 0 {
			h.idle.Broadcast()
		}
	}, Held
}

// HoldContext is Hold with the lapse applied to ctx: the returned context
// ends when ctx does or the hold lapses.
func (s *Set) HoldContext(ctx context.Context, uid types.UID) (context.Context, func(), HoldResult) {
	lapsed, done, res := s.Hold(uid)
	if res != Held {
		return ctx, func() {}, res
	}
	ctx, cancel := context.WithCancel(ctx)
	stop := context.AfterFunc(lapsed, cancel)
	return ctx, func() { stop(); cancel(); done() }, res
}
