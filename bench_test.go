package main

import (
	"fmt"
	"testing"
	"time"

	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"

	cronv1 "github.com/cronjob-controller/cronjob-controller/pkg/apis/batch/v1"
)

// BenchmarkSync measures one sync of a CronJob that owns n finished Jobs
// within its history limits, on fake clients: the steady state, in which a
// wake-up finds nothing to do but read the caches.
func BenchmarkSync(b *testing.B) {
	for _, n := range []int{0, 10, 1000} {
		b.Run(fmt.Sprintf("jobs=%d", n), func(b *testing.B) {
			ctx := klog.NewContext(b.Context(), klog.Background().V(1))
			f := newFixture(b, at(-15*time.Minute))
			cj := newCronJob(lastScheduled(at(-time.Hour)), func(cj *cronv1.CronJob) {
				cj.Spec.SuccessfulJobsHistoryLimit = ptr.To(int32(n))
			})
			f.cronJob = cj
			for i := range n {
				f.jobs = append(f.jobs, newJob(at(-time.Duration(i+1)*time.Hour), succeeded))
			}
			c, _, cronFactory := f.newController(ctx)
			key := cache.MetaObjectToName(cj)
			// Settle the status so that every measured sync writes nothing.
			if _, err := c.syncHandler(ctx, key); err != nil {
				b.Fatal(err)
			}
			settled := f.writtenStatus()
			if settled != nil {
				cacheCronJob(b, cronFactory, settled)
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := c.syncHandler(ctx, key); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
