package shard

import (
	"context"
	"fmt"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/sharding"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	cronv1 "github.com/cronjob-controller/cronjob-controller/pkg/apis/batch/v1"
)

// Our shards and the API server's shardSelector agree: a UID is in shard i
// exactly when the selector of shard i (and of any set holding i) matches it,
// matched as the API server does (apimachinery's sharding.Selector; the
// parser of the wire form lives in k8s.io/apiserver, which this module does
// not import: the end-to-end test with the gate on has the API server parse it).
func TestSelectorAgreesWithServer(t *testing.T) {
	for _, tc := range []struct {
		n    int
		sets [][]int
	}{
		{n: 1, sets: [][]int{{0}}},
		{n: 3, sets: [][]int{{0}, {1}, {2}, {0, 2}}},
		{n: 32, sets: [][]int{{0}, {31}, {3, 4, 5, 9}, {0, 1, 30, 31}}},
		{n: 7, sets: [][]int{{6}, {0, 1, 2, 3, 4, 5, 6}}},
	} {
		for _, set := range tc.sets {
			t.Run(fmt.Sprintf("%d of %d", set, tc.n), func(t *testing.T) {
				sel := sharding.NewSelector(ranges(UIDField, set, tc.n)...)
				in := map[int]bool{}
				for _, i := range set {
					in[i] = true
				}
				for k := range 2000 {
					obj := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{UID: types.UID(fmt.Sprintf("%08x-uid-%d", k*2654435761, k))}}
					got, err := sel.Matches(obj)
					if err != nil {
						t.Fatal(err)
					}
					if want := in[OfUID(obj.UID, tc.n)]; got != want {
						t.Fatalf("UID %s (shard %d): server matches %v, want %v", obj.UID, OfUID(obj.UID, tc.n), got, want)
					}
				}
			})
		}
	}
}

func TestSelectorMergesAdjacentShards(t *testing.T) {
	got := Selector(UIDField, []int{3, 1, 2}, 4)
	want := "shardRange(object.metadata.uid, '0x4000000000000000', '0x10000000000000000')"
	if got != want {
		t.Errorf("Selector = %q, want %q", got, want)
	}
	if got := Selector(UIDField, nil, 4); got != "" {
		t.Errorf("Selector of no shards = %q, want empty", got)
	}
}

// A CronJob and its Jobs fall in the same shard: the Job's key is its
// controller's UID.
func TestKeyOfJobIsItsCronJob(t *testing.T) {
	cj := &cronv1.CronJob{ObjectMeta: metav1.ObjectMeta{Name: "cj", UID: "cj-uid"}}
	owned := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{UID: "job-uid", OwnerReferences: []metav1.OwnerReference{{
		APIVersion: cronv1.SchemeGroupVersion.String(), Kind: "CronJob", Name: "cj", UID: "cj-uid", Controller: ptr.To(true),
	}}}}
	foreign := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{UID: "job-uid", OwnerReferences: []metav1.OwnerReference{{
		APIVersion: "batch/v1", Kind: "CronJob", Name: "cj", UID: "cj-uid", Controller: ptr.To(true),
	}}}}
	// A Backfill and its Jobs fall in one shard too: the Backfill's.
	backfill := &cronv1.Backfill{ObjectMeta: metav1.ObjectMeta{Name: "bf", UID: "bf-uid", OwnerReferences: []metav1.OwnerReference{{
		APIVersion: cronv1.SchemeGroupVersion.String(), Kind: "CronJob", Name: "cj", UID: "cj-uid",
	}}}}
	backfillJob := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{UID: "job-uid", OwnerReferences: []metav1.OwnerReference{{
		APIVersion: cronv1.SchemeGroupVersion.String(), Kind: "Backfill", Name: "bf", UID: "bf-uid", Controller: ptr.To(true),
	}}}}
	for _, tc := range []struct {
		name string
		obj  metav1.Object
		want types.UID
	}{
		{"CronJob", cj, "cj-uid"},
		{"its Job", owned, "cj-uid"},
		{"a built-in CronJob's Job", foreign, "job-uid"},
		{"a Job of no CronJob", &batchv1.Job{ObjectMeta: metav1.ObjectMeta{UID: "job-uid"}}, "job-uid"},
		{"a Backfill (owned by its CronJob, not controlled)", backfill, "bf-uid"},
		{"a Backfill's Job", backfillJob, "bf-uid"},
	} {
		if got := KeyOf(tc.obj); got != tc.want {
			t.Errorf("%s: KeyOf = %q, want %q", tc.name, got, tc.want)
		}
	}
}

// fakeSource is a list and watch of Jobs for a Filter.
type fakeSource struct {
	items   []batchv1.Job
	watches chan *watch.FakeWatcher
	opts    []metav1.ListOptions
}

func (s *fakeSource) list(_ context.Context, o metav1.ListOptions) (runtime.Object, error) {
	s.opts = append(s.opts, o)
	return &batchv1.JobList{ListMeta: metav1.ListMeta{ResourceVersion: "1"}, Items: append([]batchv1.Job(nil), s.items...)}, nil
}

func (s *fakeSource) watch(context.Context, metav1.ListOptions) (watch.Interface, error) {
	w := watch.NewFakeWithChanSize(10, false)
	s.watches <- w
	return w, nil
}

func jobIn(t *testing.T, name string, shard, n int) batchv1.Job {
	return batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: uidIn(t, shard, n)}}
}

// The filter passes on only the held shards' objects, lists again when the
// held shards change, and the Set counts a shard ready once its objects
// reached the cache.
func TestFilter(t *testing.T) {
	const n = 4
	clk := clocktesting.NewFakeClock(time.Now())
	set := NewSet(n, clk)
	src := &fakeSource{watches: make(chan *watch.FakeWatcher, 10)}
	for i := range n {
		src.items = append(src.items, jobIn(t, fmt.Sprintf("job-%d", i), i, n))
	}
	f := NewFilter(set, &batchv1.Job{}, src.list, src.watch, UIDField)
	indexer := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	f.SetIndexer(indexer)

	set.Acquire(1, clk.Now().Add(time.Minute))
	set.Commit()
	if _, _, res := set.Hold(src.items[1].UID); res != NotReady {
		t.Fatalf("before any list: Hold = %v, want NotReady", res)
	}
	list, err := f.List(metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got := list.(*batchv1.JobList).Items
	if len(got) != 1 || got[0].Name != "job-1" {
		t.Fatalf("listed %v, want job-1 alone", got)
	}
	if sel := src.opts[len(src.opts)-1].ShardSelector; sel != Selector(UIDField, []int{1}, n) {
		t.Errorf("shardSelector %q, want shard 1's", sel)
	}
	w, err := f.Watch(metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	in := <-src.watches
	if _, _, res := set.Hold(src.items[1].UID); res != NotReady {
		t.Fatalf("listed but not in the cache: Hold = %v, want NotReady", res)
	}
	_ = indexer.Add(&got[0])
	_, done, res := set.Hold(src.items[1].UID)
	if res != Held {
		t.Fatalf("in the cache: Hold = %v, want Held", res)
	}
	done()
	if _, _, res := set.Hold(src.items[2].UID); res != NotHeld {
		t.Errorf("shard 2: Hold = %v, want NotHeld", res)
	}

	// Events of other shards are dropped.
	in.Add(&src.items[2])
	in.Add(&src.items[1])
	if e := <-w.ResultChan(); e.Type != watch.Added || e.Object.(*batchv1.Job).Name != "job-1" {
		t.Errorf("event %v %v, want job-1 added", e.Type, e.Object)
	}
	// A Job that leaves the held shards (its controller reference gone,
	// so its own UID is its key) leaves the cache as deleted.
	moved := jobIn(t, "job-1", 3, n)
	in.Modify(&moved)
	if e := <-w.ResultChan(); e.Type != watch.Deleted {
		t.Errorf("event %v, want Deleted", e.Type)
	}

	// Acquiring shard 2 ends the watch; the next one catches the cache up
	// (job-2 added, job-1 gone from the list: deleted) and goes on.
	_ = indexer.Add(&batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "gone", UID: uidIn(t, 1, n)}})
	set.Acquire(2, clk.Now().Add(time.Minute))
	set.Commit()
	if _, open := <-w.ResultChan(); open {
		t.Fatal("the watch did not end when the held shards changed")
	}
	w, err = f.Watch(metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	<-src.watches
	var got2 []string
	for range 3 {
		e := <-w.ResultChan()
		if _, ok := e.Object.(*batchv1.Job); !ok {
			t.Errorf("catch-up event of %T, want the informer's type", e.Object)
		}
		got2 = append(got2, fmt.Sprintf("%s %s", e.Type, e.Object.(metav1.Object).GetName()))
	}
	if want := []string{"ADDED job-1", "ADDED job-2", "DELETED gone"}; fmt.Sprint(got2) != fmt.Sprint(want) {
		t.Errorf("catch-up events %v, want %v", got2, want)
	}
	if sel := src.opts[len(src.opts)-1].ShardSelector; sel != Selector(UIDField, []int{1, 2}, n) {
		t.Errorf("shardSelector %q, want shards 1 and 2's", sel)
	}
	w.Stop()
}

// A sync's context ends when its shard's hold lapses unrenewed, not at the
// validity the hold had when the sync began; and at once when the shard is
// lost.
func TestHoldLapses(t *testing.T) {
	for _, tc := range []struct {
		name   string
		act    func(s *Set, clk *clocktesting.FakeClock)
		lapsed bool
	}{
		{"renewed in time", func(s *Set, clk *clocktesting.FakeClock) {
			clk.Step(time.Second)
			s.Renew(0, clk.Now().Add(2*time.Second))
			clk.Step(1500 * time.Millisecond)
		}, false},
		{"not renewed", func(s *Set, clk *clocktesting.FakeClock) { clk.Step(2 * time.Second) }, true},
		{"lost", func(s *Set, clk *clocktesting.FakeClock) { go s.Lose(0) }, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clk := clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
			s := NewSet(1, clk)
			s.Acquire(0, clk.Now().Add(2*time.Second))
			s.held[0].ready = true // no informers in this test
			ctx, done, res := s.HoldContext(context.Background(), "any")
			if res != Held {
				t.Fatalf("Hold = %v, want Held", res)
			}
			defer done()
			tc.act(s, clk)
			if tc.lapsed {
				<-ctx.Done() // the test times out if it never ends
			} else if ctx.Err() != nil {
				t.Errorf("the sync's context ended though the hold was renewed")
			}
		})
	}
}
