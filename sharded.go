package main

import (
	"context"
	"fmt"
	"os"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	batchlisters "k8s.io/client-go/listers/batch/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/prometheus/client_golang/prometheus"

	cronv1 "github.com/cronjob-controller/cronjob-controller/pkg/apis/batch/v1"
	clientset "github.com/cronjob-controller/cronjob-controller/pkg/generated/clientset/versioned"
	cronlisters "github.com/cronjob-controller/cronjob-controller/pkg/generated/listers/batch/v1"
	"github.com/cronjob-controller/cronjob-controller/pkg/liveness"
	"github.com/cronjob-controller/cronjob-controller/pkg/metrics"
	"github.com/cronjob-controller/cronjob-controller/pkg/shard"
)

// shardedInformers are the Job, CronJob and Backfill informers of a
// sharded replica: fed through shard.Filters, so their caches hold only the
// held shards.
type shardedInformers struct {
	jobs, cronJobs, backfills cache.SharedIndexInformer
	jobFilter                 *shard.Filter
	cronJobFilter             *shard.Filter
	backfillFilter            *shard.Filter
}

func newShardedInformers(set *shard.Set, kube kubernetes.Interface, cron clientset.Interface, serverSide bool) *shardedInformers {
	var cronField string
	if serverSide {
		// The API server can select CronJobs by their UID's hash; a Job's
		// shard key is in its ownerReferences, which it cannot select by.
		cronField = shard.UIDField
	}
	s := &shardedInformers{
		jobFilter: shard.NewFilter(set, &batchv1.Job{},
			func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
				return kube.BatchV1().Jobs(metav1.NamespaceAll).List(ctx, o)
			},
			func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
				return kube.BatchV1().Jobs(metav1.NamespaceAll).Watch(ctx, o)
			}, ""),
		cronJobFilter: shard.NewFilter(set, &cronv1.CronJob{},
			func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
				return cron.BatchV1().CronJobs(metav1.NamespaceAll).List(ctx, o)
			},
			func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
				return cron.BatchV1().CronJobs(metav1.NamespaceAll).Watch(ctx, o)
			}, cronField),
		// A Backfill's key is its own UID (its CronJob owns it but does not
		// control it), which the API server can select by too.
		backfillFilter: shard.NewFilter(set, &cronv1.Backfill{},
			func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
				return cron.BatchV1().Backfills(metav1.NamespaceAll).List(ctx, o)
			},
			func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
				return cron.BatchV1().Backfills(metav1.NamespaceAll).Watch(ctx, o)
			}, cronField),
	}
	s.jobs = cache.NewSharedIndexInformer(s.jobFilter, &batchv1.Job{}, 0, cache.Indexers{})
	s.cronJobs = cache.NewSharedIndexInformer(s.cronJobFilter, &cronv1.CronJob{}, 0, cache.Indexers{})
	s.backfills = cache.NewSharedIndexInformer(s.backfillFilter, &cronv1.Backfill{}, 0,
		cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	s.jobFilter.SetIndexer(s.jobs.GetIndexer())
	s.cronJobFilter.SetIndexer(s.cronJobs.GetIndexer())
	s.backfillFilter.SetIndexer(s.backfills.GetIndexer())
	return s
}

func (s *shardedInformers) start(ctx context.Context) {
	go s.jobs.RunWithContext(ctx)
	go s.cronJobs.RunWithContext(ctx)
	go s.backfills.RunWithContext(ctx)
}

// jobInformer and cronJobInformer give NewController the sharded informers.
type jobInformer struct{ cache.SharedIndexInformer }

func (i jobInformer) Informer() cache.SharedIndexInformer { return i.SharedIndexInformer }
func (i jobInformer) Lister() batchlisters.JobLister {
	return batchlisters.NewJobLister(i.GetIndexer())
}

type cronJobInformer struct{ cache.SharedIndexInformer }

func (i cronJobInformer) Informer() cache.SharedIndexInformer { return i.SharedIndexInformer }
func (i cronJobInformer) Lister() cronlisters.CronJobLister {
	return cronlisters.NewCronJobLister(i.GetIndexer())
}

type backfillInformer struct{ cache.SharedIndexInformer }

func (i backfillInformer) Informer() cache.SharedIndexInformer { return i.SharedIndexInformer }
func (i backfillInformer) Lister() cronlisters.BackfillLister {
	return cronlisters.NewBackfillLister(i.GetIndexer())
}

// registerShardMetrics adds the sizes of a sharded replica's caches, read
// at each scrape, and whether the API server selects its CronJobs.
func registerShardMetrics(reg prometheus.Registerer, inf *shardedInformers) {
	for kind, informer := range map[string]cache.SharedIndexInformer{"cronjobs": inf.cronJobs, "jobs": inf.jobs, "backfills": inf.backfills} {
		reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Namespace: "cronjob_controller", Name: "cached_objects",
			Help:        "Objects in this replica's informer cache, by kind (with -shards: its shards' share).",
			ConstLabels: prometheus.Labels{"kind": kind},
		}, func() float64 { return float64(len(informer.GetStore().ListKeys())) }))
	}
	reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Namespace: "cronjob_controller", Name: "shard_selected_by_api_server",
		Help: "1 when the API server applied the last CronJob list's shardSelector (feature gate ShardedListAndWatch), 0 when this replica filters alone.",
	}, func() float64 {
		if inf.cronJobFilter.ServerSelected() {
			return 1
		}
		return 0
	}))
}

// shardMoves reports shard moves as metrics.
type shardMoves struct{}

func (shardMoves) Acquired() { metrics.ShardMoves.WithLabelValues("acquired").Inc() }
func (shardMoves) Released() { metrics.ShardMoves.WithLabelValues("released").Inc() }
func (shardMoves) Lost()     { metrics.ShardMoves.WithLabelValues("lost").Inc() }
func (shardMoves) Held(n int) {
	metrics.ShardsHeld.Set(float64(n))
}

// shardNotReadyRetry is how soon a CronJob (or Backfill) of a shard whose
// caches are still filling is tried again. A fixed short delay, not the
// error rate limiter: a shard's caches fill within one list, and the
// limiter's backoff, and its overall bucket shared by every CronJob of the
// shards just acquired, held them for seconds, long enough for a run due
// every few seconds to be superseded by the next.
const shardNotReadyRetry = 100 * time.Millisecond

// holdForSync holds the shard of the object with shard key uid for one
// sync of key, whose context then ends when the hold does: past it,
// another replica may hold the shard. An object of another replica's
// shard is dropped from the queue (its cache entry is on its way out); one
// of a shard whose caches are still filling is tried again shortly.
func holdForSync(ctx context.Context, set *shard.Set, uid types.UID,
	queue workqueue.TypedRateLimitingInterface[cache.ObjectName], key cache.ObjectName) (context.Context, func(), bool) {
	held, done, res := set.HoldContext(ctx, uid)
	switch res {
	case shard.NotHeld:
		queue.Forget(key)
		return nil, nil, false
	case shard.NotReady:
		queue.AddAfter(key, shardNotReadyRetry)
		return nil, nil, false
	}
	return held, done, true
}

// runSharded runs work while a shard.Manager holds this replica's share of
// the shards in set. The workers stop first; the shards are released after,
// so the replicas that take them over never overlap our last writes. A
// shard whose Lease lapses (an API server outage, a frozen process) is
// dropped and its syncs cut; the manager takes a share again once the API
// server answers, so the workers never stop for it.
func runSharded(ctx context.Context, o options, client kubernetes.Interface, set *shard.Set, probe *liveness.Probe, work func(context.Context) error) error {
	namespace := o.leaderElectNamespace
	if namespace == "" {
		namespace = podNamespace()
	}
	host, err := os.Hostname()
	if err != nil {
		return err
	}
	m := &shard.Manager{
		Client:        client.CoordinationV1(),
		Namespace:     namespace,
		Name:          o.leaderElectID,
		Identity:      host + "_" + string(uuid.NewUUID()),
		LeaseDuration: o.leaseDuration,
		RenewDeadline: o.renewDeadline,
		RetryPeriod:   o.retryPeriod,
		Clock:         clock.RealClock{},
		Set:           set,
		Moves:         shardMoves{},
		Probe:         probe,
	}
	probe.Set(liveness.Sharing)
	klog.FromContext(ctx).Info("Sharing the CronJobs with other replicas", "shards", set.N(),
		"leases", klog.KRef(namespace, o.leaderElectID+"-*"), "identity", m.Identity)
	leaseCtx, stopLeases := context.WithCancel(context.WithoutCancel(ctx))
	defer stopLeases()
	released := make(chan struct{})
	go func() {
		defer close(released)
		m.Run(leaseCtx)
	}()
	err = work(ctx)
	stopLeases()
	<-released
	return err
}

// validateLeaseFlags refuses -shards and leader-election flags that
// leave no fence between an old holder's last writes and a new holder.
func validateLeaseFlags(o options) error {
	switch {
	case o.shards < 0:
		return fmt.Errorf("-shards must be 0 (off) or more, not %d", o.shards)
	case o.shards > 0 && o.leaderElect:
		return fmt.Errorf("-shards and -leader-elect exclude each other: with -shards every replica works its share")
	case o.shards > 0 && o.renewDeadline >= o.leaseDuration:
		return fmt.Errorf("-leader-elect-renew-deadline (%v) must be shorter than -leader-elect-lease-duration (%v): the gap fences a replica's writes", o.renewDeadline, o.leaseDuration)
	case o.leaderElect && leaseGrace(o) <= 0:
		return fmt.Errorf("-leader-elect-lease-duration (%v) must be longer than -leader-elect-renew-deadline (%v) plus -leader-elect-retry-period (%v): the gap fences the old leader's writes",
			o.leaseDuration, o.renewDeadline, o.retryPeriod)
	}
	return nil
}

// leaseValiditySpan is how long after the start of a successful write of
// the Lease in our name it is surely still ours (leaseValidity): the renew
// deadline and a retry period, what a leader may take to notice a loss.
// Plus the grace it is the lease duration less the grace, short of when a
// standby may take it.
func leaseValiditySpan(o options) time.Duration {
	return o.renewDeadline + o.retryPeriod
}

// leaseGrace is how long, under leader election, a sync may go on once the
// workers' context ends (syncContext): half the fence. A leader notices a
// lost Lease a retry period and a renew deadline after its last renewal at
// the latest; a standby may take it a lease duration after that renewal.
func leaseGrace(o options) time.Duration {
	return (o.leaseDuration - o.renewDeadline - o.retryPeriod) / 2
}
