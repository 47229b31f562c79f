package main

import (
	"fmt"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2/ktesting"

	cronv1 "github.com/cronjob-controller/cronjob-controller/pkg/apis/batch/v1"
	"github.com/cronjob-controller/cronjob-controller/pkg/job"
	"github.com/cronjob-controller/cronjob-controller/pkg/shard"
	"github.com/cronjob-controller/cronjob-controller/pkg/slim"
)

// otherShardUID gives j a UID whose shard is not the CronJob's.
func otherShardUID(t *testing.T, j *batchv1.Job, cronJobUID types.UID) {
	t.Helper()
	for i := 0; i < 100; i++ {
		j.UID = types.UID(fmt.Sprintf("uid-%s-%d", j.Name, i))
		if shard.OfUID(j.UID, replicaShards) != shard.OfUID(cronJobUID, replicaShards) {
			return
		}
	}
	t.Fatal("no UID of another shard")
}

// Sharded, the replica holding a CronJob must see the Jobs detached from it
// before its status recorded their runs: they are its Records (a restart
// with the record only must not start the run again), and its sync is the
// one that releases them. The Job filter keeps a Job by shard.KeyOf.
func TestShardedDetachedRecordIsInItsCronJobsShard(t *testing.T) {
	cj := newCronJob()
	rec := newJob(topOfHour, running, holdingRecord, detached)
	otherShardUID(t, rec, cj.UID)
	for name, obj := range map[string]metav1.Object{"API form": rec, "cache form": slim.NewJob(rec)} {
		if got, want := shard.OfUID(shard.KeyOf(obj), replicaShards), shard.OfUID(cj.UID, replicaShards); got != want {
			t.Errorf("%s: a detached record of CronJob %s is in shard %d, its CronJob in %d: the replica holding the CronJob never sees it", name, cj.UID, got, want)
		}
	}
}

// Sharded, a detached record deleted once the stored status records its run
// is released: the replica that sees it (its Job UID's shard) notes it under
// the CronJob's key, and must not drop it because that CronJob's shard is
// another replica's, which does not see the Job.
func TestShardedDeletedDetachedRecordIsReleased(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := newFixture(t, at(5*time.Second))
	f.cronJob = newCronJob(lastScheduled(topOfHour))
	rec := newJob(topOfHour, succeeded, holdingRecord, detached, func(j *batchv1.Job) {
		j.DeletionTimestamp = &metav1.Time{Time: at(4 * time.Second)}
	})
	otherShardUID(t, rec, f.cronJob.UID)
	f.jobs = []*batchv1.Job{rec}
	c, _, cronFactory := f.newController(ctx)
	honourFinalizers(f.kubeclient, f.clock)
	// Replica B: holds the Job's shard, not the CronJob's, so its CronJob
	// cache does not hold the CronJob.
	set := shard.NewSet(replicaShards, f.clock)
	set.Acquire(shard.OfUID(rec.UID, replicaShards), f.clock.Now().Add(15*time.Second))
	c.shards = set
	if err := cronFactory.Batch().V1().CronJobs().Informer().GetIndexer().Delete(f.cronJob); err != nil {
		t.Fatal(err)
	}
	c.addJob(slim.NewJob(rec))
	drainSyncs(t, ctx, c)
	key := cache.MetaObjectToName(f.cronJob)
	noted := c.orphans.take(key)
	if liveJob(t, ctx, f, rec.Name) != nil && len(noted) == 0 {
		t.Errorf("writes %q: the deleted record's finalizer stays, and it is noted nowhere: no replica will release it (stuck Terminating)",
			describe(f.kubeclient.Actions(), true))
	}
}

// Sharded, the replica holding the CronJob: a run-now Job "a" detached
// before any status recorded it is still the record of "a", and the Job
// of "b" after it already runs; b must not start a second time. The
// replica's Job cache holds what the shard filter keeps (shard.KeyOf).
func TestShardedDetachedRunNowJobKeepsTheChainOfTheRequestsAfterIt(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := newFixture(t, at(time.Minute))
	f.cronJob = newCronJob(lastScheduled(at(0)), func(cj *cronv1.CronJob) {
		cj.Annotations = map[string]string{cronv1.RunNowAnnotation: "b"}
	})
	ja := job.NewManual(f.cronJob, "", "a", "a", 1)
	jb := job.NewManual(f.cronJob, "a", "b", "b", 2)
	jb.UID = "uid-b"
	detached(ja) // by a user, before any status recorded "a"
	otherShardUID(t, ja, f.cronJob.UID)
	set := shard.NewSet(replicaShards, f.clock)
	set.Acquire(shard.OfUID(f.cronJob.UID, replicaShards), f.clock.Now().Add(15*time.Second))
	for _, j := range []*batchv1.Job{ja, jb} {
		if set.Owns(shard.KeyOf(j)) {
			f.jobs = append(f.jobs, j)
		} else {
			f.uncachedJobs = append(f.uncachedJobs, j)
		}
	}
	c, _, _ := f.newController(ctx)
	c.shards = set
	if _, err := c.syncHandler(ctx, cache.MetaObjectToName(f.cronJob)); err != nil {
		t.Fatal(err)
	}
	for _, a := range describe(f.kubeclient.Actions(), true) {
		if strings.HasPrefix(a, "create jobs") {
			t.Errorf("sharded: %s, but run-now b already has Job %s: b runs twice", a, jb.Name)
		}
	}
}
