package main

import (
	"context"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/resourceversion"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	cronv1 "github.com/cronjob-controller/cronjob-controller/pkg/apis/batch/v1"
	"github.com/cronjob-controller/cronjob-controller/pkg/slim"
)

// catchUpWithAPIServer is the barrier a process passes before its first
// sync: it reads every CronJob live and lets each one the cache shows older
// stand in for the cache (as this process's own writes do) until the cache
// catches up.
//
// A standby's caches were filled long before it took the Lease, and a watch
// may lag: the status the old leader wrote last, recording a run, may not be
// there yet. A sync deciding from the older status would start that run
// again once its Job was released and deleted (by TTL or history), so the
// run would happen twice. Only a read from the API server after the Lease
// is held can say what the old leader wrote; one paged list does it for all
// CronJobs at once. It is retried until it succeeds or ctx ends: no sync
// starts before it.
func (c *Controller) catchUpWithAPIServer(ctx context.Context) error {
	logger := klog.FromContext(ctx)
	for wait := 100 * time.Millisecond; ; wait = min(2*wait, 10*time.Second) {
		var seen, behind int
		err := c.cronJobs.List(ctx, func(live *cronv1.CronJob) {
			if !c.owns(live.UID) {
				// Another replica's shard. A shard this replica takes later
				// is listed afresh into its caches before it is worked.
				return
			}
			seen++
			if c.cacheBehind(live) {
				behind++
				c.writtenCronJobs.Wrote(slim.NewCronJob(live))
			}
		})
		if err == nil {
			logger.Info("Caches checked against the API server", "cronJobs", seen, "behind", behind)
			return nil
		}
		logger.Info("Reading the CronJobs live before the first sync failed; trying again", "err", err, "in", wait)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-c.clock.After(wait):
		}
	}
}

// cacheBehind reports whether the cache holds live's CronJob at an older
// version than live, or not at all: a watch that lags delivers the older
// versions first.
func (c *Controller) cacheBehind(live *cronv1.CronJob) bool {
	obj, exists, err := c.cronJobIndexer.GetByKey(cache.MetaObjectToName(live).String())
	if err != nil || !exists {
		return true
	}
	cached, ok := obj.(metav1.Object)
	if !ok || cached.GetUID() != live.UID {
		return true
	}
	cmp, err := resourceversion.CompareResourceVersion(live.ResourceVersion, cached.GetResourceVersion())
	return err == nil && cmp > 0
}
