package main

import (
	"context"
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2/ktesting"

	cronv1 "github.com/cronjob-controller/cronjob-controller/pkg/apis/batch/v1"
	"github.com/cronjob-controller/cronjob-controller/pkg/backfill"
	"github.com/cronjob-controller/cronjob-controller/pkg/slim"
)

// A Backfill's Job whose create's status write was lost (so no status
// records it) loses its controller reference while the Backfill still
// exists (a user's edit; kubectl apply of a manifest without it), and is
// then deleted (its TTL). releaseUncontrolled releases it at once, the API
// server removes it, and the Backfill, which never recorded the time, finds
// the name free and runs the time a second time. Releasing an uncontrolled
// Job only once no live Backfill of its backfill label can still record
// it (or recording it first) would keep the run single.
func TestProbeRev2UncontrolledJobOfALiveBackfillReleasedEarly(t *testing.T) {
	t.Skip("FINDING (minor, needs a user edit): an unrecorded Job whose controller reference is removed is released on delete while its Backfill lives; the Backfill then creates the time again")
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
}
