package main

import (
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2/ktesting"

	cronv1 "github.com/cronjob-controller/cronjob-controller/pkg/apis/batch/v1"
	"github.com/cronjob-controller/cronjob-controller/pkg/job"
	"github.com/cronjob-controller/cronjob-controller/pkg/slim"
)

// Run-now "a" then "b", both started, no stored status records either
// (the writes lost or deferred). A user detaches both and deletes b's Job.
// b's finalizer must stay until a stored status records b: b follows a on
// the chain, and a is a record too (detached), not a Job the CronJob
// controls. Released early, a restart finds only a's record and starts b
// again, under the same name.
func TestDetachedRunNowJobDeletedAfterADetachedOneKeepsItsRecord(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := newFixture(t, at(time.Minute))
	f.cronJob = newCronJob(lastScheduled(at(0)), func(cj *cronv1.CronJob) {
		cj.Annotations = map[string]string{cronv1.RunNowAnnotation: "b"}
	})
	ja := job.NewManual(f.cronJob, "", "a", "a", 1)
	ja.UID = "uid-a"
	jb := job.NewManual(f.cronJob, "a", "b", "b", 2)
	jb.UID = "uid-b"
	detached(ja)
	detached(jb)
	jb.DeletionTimestamp = &metav1.Time{Time: at(50 * time.Second)}
	f.jobs = []*batchv1.Job{ja, jb}
	c, _, _ := f.newController(ctx)
	honourFinalizers(f.kubeclient, f.clock)
	key := cache.MetaObjectToName(f.cronJob)

	// The handler sees b's delete; the orphans of the key are released
	// (as every sync's tidy does, whether its status write landed or not).
	c.addJob(slim.NewJob(jb))
	if err := c.releaseOrphans(ctx, key); err != nil {
		t.Fatal(err)
	}
	if liveJob(t, ctx, f, jb.Name) == nil {
		t.Errorf("writes %q: b's finalizer went while no stored status records b", describe(f.kubeclient.Actions(), true))
	}

	// A restart on the stored state and what is left.
	c2, _, _ := restart(t, ctx, f)
	f.kubeclient.ClearActions()
	if _, err := c2.syncHandler(ctx, key); err != nil {
		t.Fatal(err)
	}
	for _, a := range describe(f.kubeclient.Actions(), true) {
		if strings.HasPrefix(a, "create jobs") {
			t.Errorf("after the restart: %s: run-now b runs twice", a)
		}
	}
}

// As above, but b is only detached (not deleted): the detach itself must
// not release b's finalizer (a TTL would then delete b, and a restart start
// it again) while a, detached before, is the only other record of the chain.
func TestDetachingARunNowJobAfterADetachedOneKeepsItsRecord(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := newFixture(t, at(time.Minute))
	f.cronJob = newCronJob(lastScheduled(at(0)), func(cj *cronv1.CronJob) {
		cj.Annotations = map[string]string{cronv1.RunNowAnnotation: "b"}
	})
	ja := job.NewManual(f.cronJob, "", "a", "a", 1)
	ja.UID = "uid-a"
	jb := job.NewManual(f.cronJob, "a", "b", "b", 2)
	jb.UID = "uid-b"
	jb.ResourceVersion = "1"
	detached(ja)
	f.jobs = []*batchv1.Job{ja, jb}
	c, kubeFactory, _ := f.newController(ctx)
	key := cache.MetaObjectToName(f.cronJob)
	owned := jb.DeepCopy()
	detached(jb)
	jb.ResourceVersion = "2"
	cacheJob(t, kubeFactory, jb)
	c.updateJob(slim.NewJob(owned), slim.NewJob(jb))
	if err := c.releaseOrphans(ctx, key); err != nil {
		t.Fatal(err)
	}
	for _, a := range describe(f.kubeclient.Actions(), true) {
		if a == "patch jobs default/"+jb.Name {
			t.Errorf("writes %q: b's finalizer went at its detach while no stored status records b", describe(f.kubeclient.Actions(), true))
		}
	}
}
