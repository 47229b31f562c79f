package main

import (
	"context"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	core "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2/ktesting"
	testingclock "k8s.io/utils/clock/testing"

	cronv1 "github.com/cronjob-controller/cronjob-controller/pkg/apis/batch/v1"
	"github.com/cronjob-controller/cronjob-controller/pkg/backfill"
	"github.com/cronjob-controller/cronjob-controller/pkg/shard"
	"github.com/cronjob-controller/cronjob-controller/pkg/slim"
)

// Probes of the review of the backfill-record finalizer (70bd562). A probe
// that fails as written is skipped with "FINDING: ...".

var backfillKey = cache.ObjectName{Namespace: metav1.NamespaceDefault, Name: "bf"}

// kubectl delete backfill bf --cascade=orphan: the garbage collector
// removes the Backfill's owner reference from its Jobs, then the Backfill
// goes. A Job still holding backfill-record is then controlled by nothing,
// and no Backfill will record it: deleted later (its TTL, by hand), its
// finalizer must go. (A finding of the review: it hung in Terminating.)
func TestBackfillOrphanCascadeJobIsReleased(t *testing.T) {
	for _, tc := range []struct {
		name    string
		label   bool // the Job names its Backfill in its label
		sharded bool // with -shards, holding no shard: the release runs unheld
	}{
		{name: "labelled", label: true},
		{name: "no label"},
		{name: "no label, sharded", sharded: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			now := at(10 * time.Minute)
			cj := newCronJob(createdAt(at(-6*time.Hour)), lastScheduled(at(0)))
			orphaned := backfillJobAt(at(-5*time.Hour), "bf-uid")
			if tc.label {
				orphaned.Labels = map[string]string{cronv1.BackfillLabel: "bf"}
			}
			orphaned.OwnerReferences = nil // the garbage collector's orphan step
			kept := orphaned.DeepCopy()
			kept.Name, kept.UID = "not-deleted", "not-deleted-uid"
			orphaned.DeletionTimestamp = &metav1.Time{Time: now} // then its TTL
			f := newBackfillFixture(t, now, cj, newBackfill(at(-5*time.Hour), at(-4*time.Hour), 1), orphaned, kept)
			if err := f.client.Tracker().Delete(cronv1.SchemeGroupVersion.WithResource("backfills"), metav1.NamespaceDefault, "bf"); err != nil {
				t.Fatal(err)
			}
			if err := f.cronFactory.Batch().V1().Backfills().Informer().GetIndexer().Delete(newBackfill(at(0), at(0), 1)); err != nil {
				t.Fatal(err)
			}
			if tc.sharded {
				f.c.shards = shard.NewSet(4, testingclock.NewFakeClock(now))
			}
			// The Job update event (deletion timestamp set) queues its release.
			_, ctx := ktesting.NewTestContext(t)
			f.c.enqueueController(slim.NewJob(orphaned))
			f.c.enqueueController(slim.NewJob(kept))
			if f.c.queue.Len() == 0 {
				t.Fatal("the delete of an uncontrolled Job holding backfill-record queued nothing")
			}
			for f.c.queue.Len() > 0 {
				f.c.processNextWorkItem(ctx)
			}
			if fin := f.finalizersOf(orphaned.Name); slices.Contains(fin, backfill.Finalizer) {
				t.Errorf("the orphaned Job still holds %v after its Backfill is gone", fin)
			}
			if fin := f.finalizersOf(kept.Name); !slices.Contains(fin, backfill.Finalizer) {
				t.Errorf("an orphaned Job nobody deleted lost its finalizer: %v", fin)
			}
		})
	}
}

// kubectl delete backfill bf --cascade=foreground: the Backfill stays,
// with a deletionTimestamp, until its Jobs are gone. Decide ignores the
// deletionTimestamp: each active Job the garbage collector deletes counts
// as failed and frees a slot, and the controller creates the next time,
// which the garbage collector deletes in turn: every remaining time of the
// range gets a Job (its pods start) while the user is deleting the
// Backfill.
func TestProbeBackfillBeingDeletedStillCreates(t *testing.T) {
	now := at(10 * time.Minute)
	cj := newCronJob(createdAt(at(-6*time.Hour)), lastScheduled(at(0)))
	bf := newBackfill(at(-5*time.Hour), at(-2*time.Hour), 1)
	bf.DeletionTimestamp = &metav1.Time{Time: now}
	bf.Finalizers = []string{metav1.FinalizerDeleteDependents}
	f := newBackfillFixture(t, now, cj, bf)
	f.sync()
	if got := f.createdJobs(); len(got) != 0 {
		t.Errorf("a Backfill being deleted created %v", got)
	}
}

// A sync created the Job of a time and crashed (or lost its status write)
// before a status recorded it; then the CronJob was deleted with
// --cascade=orphan, so the Backfill stays, CronJobNotFound. Decide returns
// before the walk, the only place that records a Job of the range not in
// status.active, so the Job is never recorded and never released: once it
// finishes and its TTL deletes it, it hangs in Terminating while the
// Backfill lives.
func TestProbeBackfillCronJobGoneUnrecordedJobHangs(t *testing.T) {
	now := at(10 * time.Minute)
	j := backfillJobAt(at(-5*time.Hour), "bf-uid")
	j.Status.Conditions = []batchv1.JobCondition{{Type: batchv1.JobComplete, Status: "True"}}
	j.DeletionTimestamp = &metav1.Time{Time: now}            // its TTL
	bf := newBackfill(at(-5*time.Hour), at(-4*time.Hour), 1) // no owner: the CronJob's delete orphaned it
	f := newBackfillFixture(t, now, nil, bf, j)
	var st cronv1.BackfillStatus
	for range 3 {
		st = f.sync().Status
	}
	if fin := f.finalizersOf(j.Name); slices.Contains(fin, backfill.Finalizer) {
		t.Errorf("the Job of the lost status write still holds %v (status %+v)", fin, st)
	}
}

// Each sync releases again every recorded Job the Job cache still shows
// holding the finalizer: the status write's own echo queues the next sync,
// usually before the release patches' echoes arrive, and each repeat costs
// a failed JSON patch and a live read per Job (the CronJob controller
// remembers what it released: releasedJobs).
func TestProbeBackfillReleasesAgainBeforeTheEcho(t *testing.T) {
	now := at(10 * time.Minute)
	cj := newCronJob(createdAt(at(-6*time.Hour)), lastScheduled(at(0)))
	f := newBackfillFixture(t, now, cj, newBackfill(at(-5*time.Hour), at(-2*time.Hour), 3))
	f.sync()
	for _, name := range f.createdJobs() {
		finish(t, f, name, batchv1.JobComplete)
	}
	f.sync() // counts them, writes the status, releases all three
	if got := len(f.released()); got != 3 {
		t.Fatalf("released %d Jobs, want 3", got)
	}
	// The status write's echo queues a sync; the Jobs' echoes are not in yet.
	f.kubeclient.ClearActions()
	if err := f.c.syncBackfill(context.Background(), backfillKey); err != nil {
		t.Fatal(err)
	}
	if n := len(f.kubeclient.Actions()); n != 0 {
		t.Errorf("a sync with nothing new made %d Job API calls (%d release patches)", n, len(f.released()))
	}
}

// README's Uninstalling one-liner removes run-record only; a Backfill's
// Job holds backfill-record, and with the controller gone it hangs once
// deleted just the same.
func TestProbeReadmeUninstallCoversBackfillRecord(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(readme), "### Uninstalling")
	if !ok {
		t.Fatal("README has no Uninstalling section")
	}
	section, _, _ = strings.Cut(section, "\n## ")
	if !strings.Contains(section, backfill.Finalizer) {
		t.Errorf("the Uninstalling section does not name %s", backfill.Finalizer)
	}
}

// Passes: the Backfill deleted while a sync creates its Job (after the live
// read): the status write fails NotFound, and the next sync, from the
// Backfill's delete event, releases the Job the garbage collector deletes.
func TestProbeBackfillDeletedWhileCreatingReleasesItsJob(t *testing.T) {
	now := at(10 * time.Minute)
	cj := newCronJob(createdAt(at(-6*time.Hour)), lastScheduled(at(0)))
	f := newBackfillFixture(t, now, cj, newBackfill(at(-5*time.Hour), at(-4*time.Hour), 1))
	backfills := cronv1.SchemeGroupVersion.WithResource("backfills")
	f.kubeclient.PrependReactor("create", "jobs", func(a core.Action) (bool, runtime.Object, error) {
		_ = f.client.Tracker().Delete(backfills, metav1.NamespaceDefault, "bf")
		return false, nil, nil
	})
	if err := f.c.syncBackfill(context.Background(), backfillKey); err == nil {
		t.Fatal("the status write of a deleted Backfill reported no error")
	}
	name := jobName(at(-5 * time.Hour))
	if fin := f.finalizersOf(name); !slices.Contains(fin, backfill.Finalizer) {
		t.Fatalf("the created Job holds %v", fin)
	}
	// The garbage collector deletes it; the Backfill's delete reaches the cache.
	live, err := f.kubeclient.BatchV1().Jobs(metav1.NamespaceDefault).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	live.DeletionTimestamp = &metav1.Time{Time: now}
	if _, err := f.kubeclient.BatchV1().Jobs(metav1.NamespaceDefault).Update(context.Background(), live, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	cacheJob(t, f.kubeFactory, live)
	if err := f.cronFactory.Batch().V1().Backfills().Informer().GetIndexer().Delete(newBackfill(at(0), at(0), 1)); err != nil {
		t.Fatal(err)
	}
	if err := f.c.syncBackfill(context.Background(), backfillKey); err != nil {
		t.Fatal(err)
	}
	if fin := f.finalizersOf(name); slices.Contains(fin, backfill.Finalizer) {
		t.Errorf("the Job of the deleted Backfill still holds %v", fin)
	}
}

// Passes: the CronJob controller leaves a Backfill's Job alone. Its event
// handlers see a Job holding a finalizer, controlled by no CronJob and
// being deleted; noteOrphan looks at run-record only, so neither the sync
// of the CronJob's key nor that of the Job's own name releases
// backfill-record (only the Backfill's stored status may).
func TestProbeCronJobControllerLeavesBackfillJobsAlone(t *testing.T) {
	now := at(10 * time.Minute)
	f := newFixture(t, now)
	f.cronJob = newCronJob(createdAt(at(-6 * time.Hour)))
	j := backfillJobAt(at(-5*time.Hour), "bf-uid")
	j.DeletionTimestamp = &metav1.Time{Time: now}
	f.jobs = []*batchv1.Job{j}
	_, ctx := ktesting.NewTestContext(t)
	c, _, _ := f.newController(ctx)
	s := slim.NewJob(j)
	c.addJob(s)
	unowned := j.DeepCopy()
	unowned.OwnerReferences = nil
	c.updateJob(s, slim.NewJob(unowned))
	for _, name := range []string{"cj", j.Name, "bf"} {
		if _, err := c.syncHandler(ctx, cache.ObjectName{Namespace: metav1.NamespaceDefault, Name: name}); err != nil {
			t.Fatal(err)
		}
	}
	for _, a := range f.kubeclient.Actions() {
		if a.GetVerb() == "patch" && a.(core.PatchAction).GetName() == j.Name {
			t.Errorf("the CronJob controller patched the Backfill's Job %s", j.Name)
		}
	}
}
