package main

import (
	"context"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2/ktesting"

	cronv1 "github.com/cronjob-controller/cronjob-controller/pkg/apis/batch/v1"
	"github.com/cronjob-controller/cronjob-controller/pkg/control"
)

// landedTimeout stores the status, then answers a timeout: the write landed,
// its answer lost.
type landedTimeout struct {
	control.CronJobs
	lose bool
}

func (s *landedTimeout) UpdateStatus(ctx context.Context, cj *cronv1.CronJob) (*cronv1.CronJob, error) {
	updated, err := s.CronJobs.UpdateStatus(ctx, cj)
	if err != nil || !s.lose {
		return updated, err
	}
	return nil, apierrors.NewTimeoutError("injected: answer lost", 1)
}

// Review 14: a status write that landed but whose answer was lost, decided
// again unchanged by the next sync, which then writes nothing: the metric
// must still count the misses the landed write stored. It failed before
// the metric counted from a kept decision with nothing to write
// (countMissed in syncHandler). The same after a shard move is not
// probed: a dropped decision loses its count as a restart does.
func TestProbeRev14LandedWriteEqualDecisionCounted(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	before := missedMetric(t, cronv1.MissedDeadlineExceeded)
	f := newFixture(t, at(36*time.Minute))
	f.cronJob = newCronJob(lastScheduled(at(-time.Hour)), catchUp(cronv1.CatchUpNone, nil), func(cj *cronv1.CronJob) { cj.ResourceVersion = "1" })
	c, _, cronFactory := f.newController(ctx)
	lost := &landedTimeout{CronJobs: c.cronJobs, lose: true}
	c.cronJobs = lost
	key := cache.MetaObjectToName(f.cronJob)
	if _, err := c.syncHandler(ctx, key); err == nil {
		t.Fatal("the lost answer was not reported")
	}
	lost.lose = false
	stored, err := f.client.BatchV1().CronJobs("default").Get(ctx, "cj", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if missedCount(stored.Status, cronv1.MissedDeadlineExceeded) == 0 {
		t.Fatal("the landed write counted nothing; the case tests nothing")
	}
	cacheCronJob(t, cronFactory, stored) // the informer shows the landed write
	for n := 0; n < 3; n++ {
		f.clock.Step(time.Second)
		if _, err := c.syncHandler(ctx, key); err != nil {
			t.Fatal(err)
		}
		if w := f.writtenStatus(); w != nil {
			cacheCronJob(t, cronFactory, w)
		}
	}
	stored, _ = f.client.BatchV1().CronJobs("default").Get(ctx, "cj", metav1.GetOptions{})
	inStatus := missedCount(stored.Status, cronv1.MissedDeadlineExceeded)
	if grew := missedMetric(t, cronv1.MissedDeadlineExceeded) - before; grew != float64(inStatus) {
		t.Errorf("missed_schedules_total{DeadlineExceeded} grew by %v, status.missedRuns says %d", grew, inStatus)
	}
}
