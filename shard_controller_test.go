package main

import (
	"context"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2/ktesting"

	"github.com/cronjob-controller/cronjob-controller/pkg/shard"
)

// A sharded replica syncs a CronJob only while it holds the CronJob's
// shard: not another replica's shard, and not its own once the hold lapsed
// unrenewed (when another replica may take the shard).
func TestShardedSyncHoldsTheShard(t *testing.T) {
	const shards = 4
	for _, tc := range []struct {
		name       string
		hold       bool
		lapse      bool
		wantJobs   int
		wantQueued int
	}{
		{name: "held", hold: true, wantJobs: 1, wantQueued: 1},
		{name: "another replica's", hold: false, wantJobs: 0},
		{name: "held but lapsed", hold: true, lapse: true, wantJobs: 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, ctx := ktesting.NewTestContext(t)
			cj := newCronJob()
			f := newFixture(t, at(time.Second))
			f.cronJob = cj
			set := shard.NewSet(shards, f.clock)
			if tc.hold {
				set.Acquire(shard.OfUID(cj.UID, shards), f.clock.Now().Add(2*time.Second))
			}
			c, _, _ := f.newController(ctx)
			c.shards = set
			if tc.lapse {
				f.clock.Step(2 * time.Second)
			}
			c.queue.Add(cache.MetaObjectToName(cj))
			c.processNextWorkItem(ctx)
			jobs, err := f.kubeclient.BatchV1().Jobs(cj.Namespace).List(ctx, metav1.ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if len(jobs.Items) != tc.wantJobs {
				t.Errorf("%d Jobs created, want %d", len(jobs.Items), tc.wantJobs)
			}
			// Held: queued again for its next run; not held: dropped.
			if got := c.queue.Len(); got > tc.wantQueued {
				t.Errorf("queue holds %d, want at most %d", got, tc.wantQueued)
			}
		})
	}
}

// A CronJob whose shard left the replica leaves its cache as deleted; that
// is no deletion: its Jobs are not noted as orphans, nothing is queued.
func TestShardLeavingIsNoDelete(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	cj := newCronJob()
	f := newFixture(t, at(time.Second))
	f.cronJob = cj
	c, _, _ := f.newController(ctx)
	c.shards = shard.NewSet(4, f.clock) // holds nothing
	c.deleteCronJob(cj)
	if c.queue.Len() != 0 {
		t.Errorf("a CronJob whose shard left was queued as deleted")
	}
}

func TestValidateSharding(t *testing.T) {
	for _, tc := range []struct {
		name    string
		o       options
		wantErr bool
	}{
		{"off", options{}, false},
		{"on", options{shards: 32, leaseDuration: 15 * time.Second, renewDeadline: 10 * time.Second}, false},
		{"negative", options{shards: -1}, true},
		{"with leader election", options{shards: 32, leaderElect: true, leaseDuration: 15 * time.Second, renewDeadline: 10 * time.Second}, true},
		{"renew deadline not shorter than the lease", options{shards: 32, leaseDuration: 10 * time.Second, renewDeadline: 10 * time.Second}, true},
	} {
		if err := validateLeaseFlags(tc.o); (err != nil) != tc.wantErr {
			t.Errorf("%s: validateLeaseFlags = %v, want error %v", tc.name, err, tc.wantErr)
		}
	}
}

// requeueSpy records how the controller queues a key again: after a
// delay, or through the rate limiter (which backs off per key and, over
// all keys, lets 10 a second through after a burst of 100).
type requeueSpy struct {
	workqueue.TypedRateLimitingInterface[cache.ObjectName]
	after       []time.Duration
	rateLimited int
}

func (s *requeueSpy) AddAfter(key cache.ObjectName, d time.Duration) {
	s.after = append(s.after, d)
	s.TypedRateLimitingInterface.AddAfter(key, d)
}

func (s *requeueSpy) AddRateLimited(key cache.ObjectName) {
	s.rateLimited++
	s.TypedRateLimitingInterface.AddRateLimited(key)
}

// A CronJob of a shard just acquired, whose caches are still filling, is
// tried again soon, at a fixed short delay however often it found the
// shard not ready: not through the error rate limiter, whose backoff grew
// with each try and whose overall bucket, shared by every CronJob of the
// new shards, held them for seconds. A 300-CronJob run every 5 s lost runs
// when a replica joined: the shards moved at once, their CronJobs synced
// three seconds later (TestShardedReplicas, docs/sharding.md).
func TestShardNotReadyRetriesSoon(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	cj := newCronJob()
	f := newFixture(t, at(time.Second))
	f.cronJob = cj
	set := shard.NewSet(4, f.clock)
	// A filter that never lists: the shard's caches never fill.
	shard.NewFilter(set, &batchv1.Job{},
		func(context.Context, metav1.ListOptions) (runtime.Object, error) { return &batchv1.JobList{}, nil },
		func(context.Context, metav1.ListOptions) (watch.Interface, error) { return watch.NewFake(), nil }, "")
	set.Acquire(shard.OfUID(cj.UID, 4), f.clock.Now().Add(time.Hour))
	set.Commit()
	c, _, _ := f.newController(ctx)
	c.shards = set
	spy := &requeueSpy{TypedRateLimitingInterface: c.queue}
	c.queue = spy
	key := cache.MetaObjectToName(cj)
	for try := range 20 {
		spy.Add(key)
		c.processNextWorkItem(ctx)
		if spy.rateLimited != 0 {
			t.Fatalf("try %d: queued again through the rate limiter", try)
		}
		if len(spy.after) != try+1 || spy.after[try] > shardNotReadyRetry {
			t.Fatalf("try %d: queued again after %v, want at most %v", try, spy.after, shardNotReadyRetry)
		}
	}
	if n := spy.NumRequeues(key); n != 0 {
		t.Errorf("the key counts %d failures, want none: a shard filling is no failure", n)
	}
}
