package main

import (
	"context"
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2/ktesting"
	testingclock "k8s.io/utils/clock/testing"

	cronv1 "github.com/cronjob-controller/cronjob-controller/pkg/apis/batch/v1"
	"github.com/cronjob-controller/cronjob-controller/pkg/backfill"
	"github.com/cronjob-controller/cronjob-controller/pkg/shard"
	"github.com/cronjob-controller/cronjob-controller/pkg/slim"
)

// A Backfill's Job whose create's status write was lost (so no status
// records it) loses its controller reference while the Backfill still
// exists (a user's edit; kubectl apply of a manifest without it), and is
// then deleted (its TTL). releaseUncontrolled releases it at once, the API
// server removes it, and the Backfill, which never recorded the time, finds
// the name free and runs the time a second time. Releasing an uncontrolled
// Job only once no live Backfill of its backfill label can still record
// it (or recording it first) would keep the run single. (A finding of
// review 2, fixed: it is released under its Backfill's key once recorded.)
func TestProbeRev2UncontrolledJobOfALiveBackfillReleasedEarly(t *testing.T) {
	now := at(10 * time.Minute)
	cj := newCronJob(createdAt(at(-6*time.Hour)), lastScheduled(at(0)))
	j := backfillJobAt(at(-5*time.Hour), "bf-uid")
	j.Labels = map[string]string{cronv1.BackfillLabel: "bf"}
	j.Status.Conditions = nil
	j.OwnerReferences = nil                       // the edit
	j.DeletionTimestamp = &metav1.Time{Time: now} // then its TTL
	f := newBackfillFixture(t, now, cj, newBackfill(at(-5*time.Hour), at(-4*time.Hour), 1), j)
	_, ctx := ktesting.NewTestContext(t)
	f.c.enqueueController(slim.NewJob(j))
	for f.c.queue.Len() > 0 {
		f.c.processNextWorkItem(ctx)
	}
	if fin := f.finalizersOf(j.Name); !slices.Contains(fin, backfill.Finalizer) {
		// Released: the API server now removes the Job.
		if err := f.kubeclient.BatchV1().Jobs(metav1.NamespaceDefault).Delete(context.Background(), j.Name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		if err := f.kubeFactory.Batch().V1().Jobs().Informer().GetIndexer().Delete(slim.NewJob(j)); err != nil {
			t.Fatal(err)
		}
	}
	f.sync()
	if got := f.createdJobs(); slices.Contains(got, j.Name) {
		t.Errorf("the time of %s, whose Job ran, was created again: %v", j.Name, got)
	}
	// The Backfill's sync passed its time (the Job, no longer its own,
	// counted skipped) and, the status stored, released it.
	if live, err := f.kubeclient.BatchV1().Jobs(metav1.NamespaceDefault).Get(context.Background(), j.Name, metav1.GetOptions{}); err == nil &&
		slices.Contains(live.Finalizers, backfill.Finalizer) {
		t.Errorf("the uncontrolled Job still holds %v once its Backfill's status covers its time", live.Finalizers)
	}
}

// With -shards a Backfill's shard moves away: the Backfill cache drops it
// before the Job cache drops its Jobs, and a Job event queues it here. The
// sync runs unheld (no cached Backfill to hold a shard by) and must not
// release the Jobs of a Backfill that lives on another replica, unrecorded
// as they may be: the live read says it exists.
func TestProbeRev2ShardMovedAwayKeepsTheJobs(t *testing.T) {
	now := at(10 * time.Minute)
	cj := newCronJob(createdAt(at(-6*time.Hour)), lastScheduled(at(0)))
	bf := newBackfill(at(-5*time.Hour), at(-4*time.Hour), 1)
	j := backfillJobAt(at(-5*time.Hour), bf.UID)
	f := newBackfillFixture(t, now, cj, bf, j)
	if err := f.cronFactory.Batch().V1().Backfills().Informer().GetIndexer().Delete(bf); err != nil {
		t.Fatal(err)
	}
	f.c.shards = shard.NewSet(4, testingclock.NewFakeClock(now)) // holds no shard now
	_, ctx := ktesting.NewTestContext(t)
	f.c.enqueueController(slim.NewJob(j))
	for f.c.queue.Len() > 0 {
		f.c.processNextWorkItem(ctx)
	}
	if fin := f.finalizersOf(j.Name); !slices.Contains(fin, backfill.Finalizer) {
		t.Errorf("the Job of a Backfill on another replica lost its finalizer: %v", fin)
	}
	if got := f.createdJobs(); len(got) != 0 {
		t.Errorf("a replica not holding the Backfill's shard created %v", got)
	}
}
