package main

import (
	"slices"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2/ktesting"

	cronv1 "github.com/cronjob-controller/cronjob-controller/pkg/apis/batch/v1"
	"github.com/cronjob-controller/cronjob-controller/pkg/job"
)

// A CronJob deleted and recreated under the same name (GitOps re-applies a
// manifest that carries the run-now annotation) starts its own first
// run-now request while the old CronJob's run-now Job still exists, held
// in Terminating by the run-record finalizer or orphaned by
// --cascade=orphan: the new CronJob's Job has a name of its own.
func TestRecreatedCronJobStartsItsFirstRunNow(t *testing.T) {
	for _, lingering := range []string{"terminating", "orphaned"} {
		t.Run(lingering, func(t *testing.T) {
			_, ctx := ktesting.NewTestContext(t)
			withRunNow := func(cj *cronv1.CronJob) { cj.Annotations = map[string]string{cronv1.RunNowAnnotation: "deploy-1"} }
			old := newCronJob(withRunNow, func(cj *cronv1.CronJob) { cj.UID = "old-uid" })
			oldJob := job.NewManual(old, "", "deploy-1", "deploy-1", 1)
			oldJob.UID = "old-job-uid"
			switch lingering {
			case "terminating":
				oldJob.DeletionTimestamp = &metav1.Time{Time: at(-time.Minute)}
			case "orphaned":
				oldJob.OwnerReferences = nil
			}

			f := newFixture(t, at(-30*time.Minute))
			f.cronJob = newCronJob(withRunNow, func(cj *cronv1.CronJob) {
				cj.UID = types.UID("new-uid")
				cj.CreationTimestamp = metav1.NewTime(at(-31 * time.Minute))
			})
			f.jobs = []*batchv1.Job{oldJob}
			c, _, _ := f.newController(ctx)
			if _, err := c.syncHandler(ctx, cache.MetaObjectToName(f.cronJob)); err != nil {
				t.Fatal(err)
			}
			mine := job.NewManual(f.cronJob, "", "deploy-1", "deploy-1", 1).Name
			if mine == oldJob.Name {
				t.Fatalf("the recreated CronJob's first run-now Job is named %s, as the old one's", mine)
			}
			if writes := describe(f.kubeclient.Actions(), true); !slices.Contains(writes, "create jobs default/"+mine) {
				t.Errorf("writes %q, want the new CronJob's run-now Job %s", writes, mine)
			}
			st := f.writtenStatus()
			if st == nil || missedCount(st.Status, cronv1.MissedNameTaken) != 0 || st.Status.LastRunNow != "deploy-1" {
				t.Errorf("status %+v, want the request handled by a Job of its own, nothing NameTaken", st)
			}
		})
	}
}
