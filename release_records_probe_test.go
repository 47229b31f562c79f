package main

import (
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2/ktesting"

	cronv1 "github.com/cronjob-controller/cronjob-controller/pkg/apis/batch/v1"
	"github.com/cronjob-controller/cronjob-controller/pkg/slim"
)

// A CronJob deleted and created again under the same name: a Job detached
// from the old one before it recorded the run is no record of the new one
// (not adopted), and once deleted its finalizer goes (its CronJob is gone).
func TestRecordOfARecreatedCronJobIsNotAdoptedAndIsReleased(t *testing.T) {
	for _, deleted := range []bool{false, true} {
		t.Run(map[bool]string{false: "kept", true: "deleted"}[deleted], func(t *testing.T) {
			_, ctx := ktesting.NewTestContext(t)
			old := newJob(at(-30*time.Minute), succeeded, holdingRecord, detached, func(j *batchv1.Job) {
				j.Annotations[cronv1.CronJobUIDAnnotation] = "old-uid"
				if deleted {
					j.DeletionTimestamp = &metav1.Time{Time: at(4 * time.Second)}
				}
			})
			f := newFixture(t, at(5*time.Second))
			f.cronJob = newCronJob(lastScheduled(at(-time.Hour)))
			f.jobs = []*batchv1.Job{old}
			c, _, _ := f.newController(ctx)
			honourFinalizers(f.kubeclient, f.clock)
			c.addJob(slim.NewJob(old))
			drainSyncs(t, ctx, c)
			if _, err := c.syncHandler(ctx, cache.MetaObjectToName(f.cronJob)); err != nil {
				t.Fatal(err)
			}
			st := f.writtenStatus()
			if st != nil && st.Status.LastScheduleTime != nil && st.Status.LastScheduleTime.Time.Equal(at(-30*time.Minute)) {
				t.Errorf("the new CronJob adopted the old one's record: lastScheduleTime %v", st.Status.LastScheduleTime)
			}
			if deleted && liveJob(t, ctx, f, old.Name) != nil {
				t.Errorf("writes %q: the old CronJob's deleted record keeps its finalizer", describe(f.kubeclient.Actions(), true))
			}
		})
	}
}
