// Command cronjob-controller runs CronJobs of batch.tutorial.kubebuilder.io/v1
// as batch/v1 Jobs.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"os"
	"os/signal"
	"runtime/debug"
	"sync"
	"syscall"
	"time"
	_ "time/tzdata" // spec.timeZone must resolve even where the image has no zone database

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/uuid"
	kubeinformers "k8s.io/client-go/informers"
	batchinformers "k8s.io/client-go/informers/batch/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	"k8s.io/client-go/tools/record"
	logsapi "k8s.io/component-base/logs/api/v1"
	_ "k8s.io/component-base/logs/json/register" // -logging-format=json
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/cronjob-controller/cronjob-controller/pkg/control"
	clientset "github.com/cronjob-controller/cronjob-controller/pkg/generated/clientset/versioned"
	informers "github.com/cronjob-controller/cronjob-controller/pkg/generated/informers/externalversions"
	croninformers "github.com/cronjob-controller/cronjob-controller/pkg/generated/informers/externalversions/batch/v1"
	"github.com/cronjob-controller/cronjob-controller/pkg/httpserver"
	"github.com/cronjob-controller/cronjob-controller/pkg/liveness"
	"github.com/cronjob-controller/cronjob-controller/pkg/metrics"
	"github.com/cronjob-controller/cronjob-controller/pkg/shard"
	"github.com/cronjob-controller/cronjob-controller/pkg/version"
)

// The default client limits are a safety net against a runaway loop, not
// the pace of a burst: N CronJobs due at once make 3N writes (create, status,
// release), and a client-side bucket that paces them only makes Jobs wait
// while the API server has capacity to spare. What paces a burst is the API
// server itself: its priority and fairness answers 429 with Retry-After when
// it is full, and client-go waits that out and retries (up to 10 times).
// The burst lets a firing of 10,000 CronJobs through unpaced; the sustained
// rate refills it within half a minute.
const (
	defaultKubeAPIQPS   = 1000
	defaultKubeAPIBurst = 30000
)

// options are the command-line flags.
type options struct {
	kubeconfig   string
	masterURL    string
	workers      int
	kubeAPIQPS   float64
	kubeAPIBurst int

	metricsAddr       string
	healthAddr        string
	profiling         bool
	perCronJobMetrics bool

	leaderElect          bool
	leaseDuration        time.Duration
	renewDeadline        time.Duration
	retryPeriod          time.Duration
	leaderElectNamespace string
	leaderElectID        string

	shards         int
	shardSelectors bool
}

// gcPercent is the GOGC this process runs with when the environment sets
// none. Nearly all of its heap is the informer caches, which live as long as
// the process, while the garbage a sync makes is small and short-lived. Go's
// default of 100 lets the heap grow by the size of those caches before each
// collection; 50 halves that headroom for more frequent, equally small
// collections. docs/benchmarks.md has what each costs.
const gcPercent = 50

// setGCPercent applies gcPercent unless GOGC is set, and returns the GOGC
// in effect.
func setGCPercent(lookupEnv func(string) (string, bool)) int {
	if _, set := lookupEnv("GOGC"); set {
		p := debug.SetGCPercent(-1)
		debug.SetGCPercent(p)
		return p
	}
	debug.SetGCPercent(gcPercent)
	return gcPercent
}

func main() {
	gogc := setGCPercent(os.LookupEnv)
	// Logging as Kubernetes components offer it: -v, -vmodule and
	// -logging-format (text, or json for a log pipeline).
	logging := logsapi.NewLoggingConfiguration()
	logsapi.AddGoFlags(logging, flag.CommandLine)
	var o options
	flag.StringVar(&o.kubeconfig, "kubeconfig", "", "Path to a kubeconfig. Defaults to $KUBECONFIG; in-cluster configuration when neither is set.")
	flag.StringVar(&o.masterURL, "master", "", "The address of the Kubernetes API server. Overrides any value in kubeconfig.")
	flag.IntVar(&o.workers, "workers", 20, "How many CronJobs are synced concurrently.")
	flag.Float64Var(&o.kubeAPIQPS, "kube-api-qps", defaultKubeAPIQPS, "Requests per second to the API server, sustained: a safety net; the API server's 429s pace a burst.")
	flag.IntVar(&o.kubeAPIBurst, "kube-api-burst", defaultKubeAPIBurst, "Requests to the API server allowed in a burst above -kube-api-qps.")
	flag.StringVar(&o.metricsAddr, "metrics-bind-address", ":8080", "Address of /metrics; 0 disables it.")
	flag.StringVar(&o.healthAddr, "health-probe-bind-address", ":8081", "Address of /healthz and /readyz; 0 disables them.")
	flag.BoolVar(&o.profiling, "profiling", false, "Serve Go's /debug/pprof profiles on the -metrics-bind-address.")
	flag.BoolVar(&o.perCronJobMetrics, "per-cronjob-metrics", true, "Serve the cronjob_controller_cronjob_* series, about five per CronJob; false leaves them out.")
	flag.BoolVar(&o.leaderElect, "leader-elect", false, "Run as one of several replicas: only the holder of a Lease works.")
	flag.DurationVar(&o.leaseDuration, "leader-elect-lease-duration", 15*time.Second, "How long a standby waits after the last renewal before taking over.")
	flag.DurationVar(&o.renewDeadline, "leader-elect-renew-deadline", 10*time.Second, "How long the leader keeps retrying a renewal before it gives up leading.")
	flag.DurationVar(&o.retryPeriod, "leader-elect-retry-period", 2*time.Second, "How often to try to acquire or renew the Lease.")
	flag.StringVar(&o.leaderElectNamespace, "leader-elect-namespace", "", "Namespace of the Lease; defaults to the pod's namespace in a cluster, else default.")
	flag.StringVar(&o.leaderElectID, "leader-elect-id", "cronjob-controller", "Name of the Lease.")
	flag.IntVar(&o.shards, "shards", 0, "Share the CronJobs with the other replicas over this many shards, each held through a Lease (named after -leader-elect-id, timed by the -leader-elect-* durations); 0 runs unsharded. Every replica must use the same number. Excludes -leader-elect.")
	flag.BoolVar(&o.shardSelectors, "shard-selectors", true, "With -shards, also ask the API server for only the held shards' CronJobs (shardSelector, feature gate ShardedListAndWatch); an API server without the gate ignores it, and the replica filters alone.")
	printVersion := flag.Bool("version", false, "Print the version, the commit and the Go version, and exit.")
	flag.Parse()
	if *printVersion {
		fmt.Println("cronjob-controller", version.Get())
		return
	}
	if err := logsapi.ValidateAndApply(logging, nil); err != nil {
		fmt.Fprintln(os.Stderr, "cronjob-controller:", err)
		os.Exit(1)
	}

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	logger := klog.FromContext(ctx)
	ctx = klog.NewContext(ctx, logger)
	logger.Info("Starting cronjob-controller", version.Get().KeysAndValues()...)
	logger.V(2).Info("Garbage collector", "GOGC", gogc)

	if err := run(ctx, o); err != nil {
		// One line a person can act on; no stack trace.
		fmt.Fprintln(os.Stderr, "cronjob-controller:", err)
		klog.Flush()
		os.Exit(1)
	}
	klog.Flush()
}

func run(ctx context.Context, o options) error {
	if o.workers < 1 {
		return fmt.Errorf("-workers must be at least 1, not %d", o.workers)
	}
	if err := validateLeaseFlags(o); err != nil {
		return err
	}
	// Before any client or queue exists: client-go binds its metrics then.
	registry := prometheus.NewRegistry()
	metrics.Register(registry)
	cfg, err := restConfig(o)
	if err != nil {
		return err
	}
	cfg.QPS, cfg.Burst = float32(o.kubeAPIQPS), o.kubeAPIBurst
	cfg.UserAgent = controllerAgentName
	// Under leader election every write but the Lease's own is checked
	// against the Lease's validity as it leaves (fencedTransport).
	var validity *leaseValidity
	if o.leaderElect {
		validity = newLeaseValidity(clock.RealClock{}, leaseValiditySpan(o))
		grace := leaseGrace(o)
		cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
			return &fencedTransport{next: rt, fence: validity, grace: grace}
		})
	}

	// Built-in kinds travel as protobuf, as kube-controller-manager's do:
	// cheaper to encode and decode, here and on the API server, which is
	// what Jobs due at once wait for. CronJobs, a CRD, travel as JSON.
	kubeCfg := rest.CopyConfig(cfg)
	kubeCfg.ContentType = runtime.ContentTypeProtobuf
	kubeCfg.AcceptContentTypes = runtime.ContentTypeProtobuf + "," + runtime.ContentTypeJSON
	kubeClient, err := kubernetes.NewForConfig(kubeCfg)
	if err != nil {
		return fmt.Errorf("building kubernetes client: %w", err)
	}
	cronClient, err := clientset.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("building CronJob client: %w", err)
	}
	if err := checkAPI(ctx, cronClient); err != nil {
		return err
	}

	// Events go through a client of their own, so a burst of Events never
	// takes client rate-limit tokens from creating Jobs.
	eventClient, err := kubernetes.NewForConfig(rest.CopyConfig(kubeCfg))
	if err != nil {
		return fmt.Errorf("building events client: %w", err)
	}
	broadcaster := newEventBroadcaster(ctx)
	defer broadcaster.Shutdown()
	startEventLogging(broadcaster, klog.FromContext(ctx))
	broadcaster.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: eventClient.CoreV1().Events("")})
	recorder := broadcaster.NewRecorder(scheme.Scheme, corev1.EventSource{Component: controllerAgentName})

	probe := liveness.New(clock.RealClock{}, livenessBounds(o))
	// A signal is a way out, whatever the process was doing.
	context.AfterFunc(ctx, func() { probe.Set(liveness.ShuttingDown) })
	return runWith(ctx, o, clients{kube: kubeClient, cron: cronClient, recorder: recorder, registry: registry, validity: validity}, probe)
}

// clients are what run builds for runWith: the API clients, the Event
// recorder, the metrics registry.
type clients struct {
	kube     kubernetes.Interface
	cron     clientset.Interface
	recorder record.EventRecorder
	registry *prometheus.Registry
	// validity, under leader election, is the Lease's as the clients'
	// transports check it (fencedTransport); nil otherwise.
	validity *leaseValidity
}

// runWith runs the controllers on c until ctx ends, or until something
// makes the process exit. Whatever ends it, the informers stop when it
// returns: nothing it started keeps the process from exiting.
func runWith(ctx context.Context, o options, c clients, probe *liveness.Probe) error {
	if o.shards > 0 {
		return runShardedController(ctx, o, c.registry, c.kube, c.cron, c.recorder, probe)
	}
	kubeInformerFactory := kubeinformers.NewSharedInformerFactory(c.kube, 0)
	cronInformerFactory := informers.NewSharedInformerFactory(c.cron, 0)
	inf := termInformers{
		jobs:      kubeInformerFactory.Batch().V1().Jobs(),
		cronJobs:  cronInformerFactory.Batch().V1().CronJobs(),
		calendars: cronInformerFactory.Batch().V1().Calendars(),
		backfills: cronInformerFactory.Batch().V1().Backfills(),
		runs:      cronInformerFactory.Batch().V1().CronJobRuns(),
	}
	// The caches outlive every term as leader (caches.go): shaped once,
	// before they start.
	if err := prepareCaches(inf.jobs.Informer(), inf.cronJobs.Informer()); err != nil {
		return err
	}
	if err := prepareBackfillCaches(inf.jobs.Informer(), inf.backfills.Informer()); err != nil {
		return err
	}
	if err := prepareRunCaches(inf.runs.Informer()); err != nil {
		return err
	}
	// A factory starts only the informers asked for before its Start.
	inf.calendars.Informer()
	cronJobs := inf.cronJobs.Informer()
	registerPerCronJobMetrics(c.registry, o.perCronJobMetrics, cronJobs.GetStore(), cronJobs.HasSynced)
	if err := httpserver.Start(ctx, httpserver.Config{
		MetricsAddr: o.metricsAddr, HealthAddr: o.healthAddr,
		Gatherer: c.registry, Ready: inf.synced, Live: probe.Check, Profiling: o.profiling,
	}); err != nil {
		return err
	}
	// Informers warm up at once, also on a standby, so a takeover starts
	// from full caches. They stop when runWith returns, whether a signal or
	// an error ends it: a factory's Shutdown waits for its informers.
	informerCtx, stopInformers := context.WithCancel(ctx)
	kubeInformerFactory.Start(informerCtx.Done())
	cronInformerFactory.Start(informerCtx.Done())
	defer kubeInformerFactory.Shutdown()
	defer cronInformerFactory.Shutdown()
	defer stopInformers()

	// Under leader election a sync goes on after the Lease is lost for half
	// the fence at most: past the fence another replica may lead. And no
	// sync starts, or writes, past the Lease's validity by our own clock.
	var grace time.Duration
	if o.leaderElect {
		grace = leaseGrace(o)
	}
	validity := c.validity
	if o.leaderElect && validity == nil {
		validity = newLeaseValidity(clock.RealClock{}, leaseValiditySpan(o))
	}
	// Both controllers work under the same Lease: a standby makes no Job.
	term := func(ctx context.Context) error { return runTerm(ctx, o, c, inf, grace, validity, probe) }
	if !o.leaderElect {
		probe.Set(liveness.Working)
		return term(ctx)
	}
	return runAsLeader(ctx, o, c.kube, probe, validity, term)
}

// termInformers are the shared informers every term's controllers read.
type termInformers struct {
	jobs      batchinformers.JobInformer
	cronJobs  croninformers.CronJobInformer
	calendars croninformers.CalendarInformer
	backfills croninformers.BackfillInformer
	runs      croninformers.CronJobRunInformer
}

// synced reports whether every cache has listed once: /readyz.
func (i termInformers) synced() bool {
	return i.jobs.Informer().HasSynced() && i.cronJobs.Informer().HasSynced() &&
		i.calendars.Informer().HasSynced() && i.backfills.Informer().HasSynced() && i.runs.Informer().HasSynced()
}

// runTerm is one term of work: new controllers on the warm caches, run
// until ctx ends, then taken off the caches. A term knows nothing of the
// one before: what a previous term (or another replica) wrote, it reads
// back from the API server before its first sync (catchUpWithAPIServer).
func runTerm(ctx context.Context, o options, c clients, inf termInformers, grace time.Duration, fence *leaseValidity, probe *liveness.Probe) error {
	controller, err := NewController(ctx, c.kube, c.cron, inf.jobs, inf.cronJobs, clock.RealClock{},
		WithEventRecorder(c.recorder),
		WithCalendars(inf.calendars),
		WithCronJobRuns(inf.runs),
		WithLeaseGrace(grace),
		WithLeaseFence(fence),
		WithPreparedCaches(),
		WithProbe(probe))
	if err != nil {
		return stoppedOr(ctx, err)
	}
	defer func() { _ = controller.Detach() }()
	backfills, err := NewBackfillController(ctx, control.NewJobs(c.kube), c.cron,
		inf.jobs, inf.cronJobs, inf.backfills, c.recorder, clock.RealClock{},
		WithBackfillLeaseGrace(grace),
		WithBackfillLeaseFence(fence),
		WithBackfillPreparedCaches(),
		WithBackfillProbe(probe))
	if err != nil {
		controller.queue.ShutDown()
		drain(controller.queue)
		return stoppedOr(ctx, err)
	}
	defer func() { _ = backfills.Detach() }()
	return runBoth(ctx, controller, backfills, o.workers)
}

// stoppedOr is err, unless ctx has ended: a term built as the process
// shuts down (its informers stopped, so no handler can be added) is no
// failure.
func stoppedOr(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return nil
	}
	return err
}

// livenessBounds are how long each kind of progress may pause before
// /healthz fails (pkg/liveness). The election loop tries the Lease every
// retry period, each try cut at the renew deadline (observedLock), so a
// lease duration plus a renew deadline without a try is a loop that
// stopped. The work stops within the lease grace of a lost Lease; a lease
// duration is far past it (and the process exits then, runAsLeader). A
// sync's context ends at syncTimeout.
func livenessBounds(o options) liveness.Bounds {
	b := liveness.Bounds{Sync: 2 * syncTimeout}
	if o.leaderElect || o.shards > 0 {
		b.Election = o.leaseDuration + o.renewDeadline
		b.StepDown = o.leaseDuration
	}
	return b
}

// runBoth runs the CronJob and Backfill controllers until ctx ends, and
// returns the CronJob controller's error. The Backfill controller gets one
// worker: Backfills are few, and their Jobs wait on each other anyway.
func runBoth(ctx context.Context, cronJobs *Controller, backfills *BackfillController, workers int) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := backfills.Run(ctx, 1); err != nil {
			klog.FromContext(ctx).Error(err, "Backfill controller stopped")
		}
	}()
	err := cronJobs.Run(ctx, workers)
	cancel()
	<-done
	return err
}

// runShardedController is run's sharded half: informers that cache only
// the held shards, and a controller that works only those.
func runShardedController(ctx context.Context, o options, registry *prometheus.Registry,
	kubeClient kubernetes.Interface, cronClient clientset.Interface, recorder record.EventRecorder, probe *liveness.Probe) error {
	set := shard.NewSet(o.shards, clock.RealClock{})
	inf := newShardedInformers(set, kubeClient, cronClient, o.shardSelectors)
	// Calendars are cluster-scoped and few: every replica caches them all.
	// Without them each CronJob naming one would hold its runs. So are
	// CronJobRuns: only the replica syncing a CronJob acts on them.
	calendars := informers.NewSharedInformerFactory(cronClient, 0)
	controller, err := NewController(ctx, kubeClient, cronClient,
		jobInformer{inf.jobs}, cronJobInformer{inf.cronJobs},
		clock.RealClock{}, WithEventRecorder(recorder), WithShards(set),
		WithCalendars(calendars.Batch().V1().Calendars()), WithCronJobRuns(calendars.Batch().V1().CronJobRuns()), WithProbe(probe))
	if err != nil {
		return err
	}
	backfills, err := NewBackfillController(ctx, control.NewJobs(kubeClient), cronClient,
		jobInformer{inf.jobs}, cronJobInformer{inf.cronJobs}, backfillInformer{inf.backfills},
		recorder, clock.RealClock{}, WithBackfillShards(set), WithBackfillProbe(probe))
	if err != nil {
		return err
	}
	registerPerCronJobMetrics(registry, o.perCronJobMetrics, inf.cronJobs.GetStore(), inf.cronJobs.HasSynced)
	registerShardMetrics(registry, inf)
	if err := httpserver.Start(ctx, httpserver.Config{
		MetricsAddr: o.metricsAddr, HealthAddr: o.healthAddr,
		Gatherer: registry, Ready: controller.HasSynced, Live: probe.Check, Profiling: o.profiling,
	}); err != nil {
		return err
	}
	informerCtx, stopInformers := context.WithCancel(context.WithoutCancel(ctx))
	defer stopInformers()
	inf.start(informerCtx)
	calendars.Start(informerCtx.Done()) // stops with informerCtx
	return runSharded(ctx, o, kubeClient, set, probe, func(ctx context.Context) error { return runBoth(ctx, controller, backfills, o.workers) })
}

// registerPerCronJobMetrics adds the per-CronJob series to reg when on,
// read at each scrape from the CronJob informer's cache.
func registerPerCronJobMetrics(reg prometheus.Registerer, on bool, cronJobs metrics.Store, synced func() bool) {
	if on {
		reg.MustRegister(metrics.NewCronJobCollector(cronJobs, synced))
	}
}

// runAsLeader runs work only while this replica holds the Lease, one term
// at a time. On shutdown the work stops first and the Lease is released
// after, so a standby takes over at once and never overlaps with our last
// writes. Losing the Lease (renewals failing past the renew deadline: an
// API server outage, a frozen process) stops the work and the replica
// campaigns again, with its caches warm: it is a standby again, and leads
// again as soon as the Lease is free. The Lease is then not released:
// client-go would release it before it ends the work's context, and a
// standby could lead beside our last syncs; it waits out the lease
// duration instead. Work that does not stop within a lease duration of the
// loss makes runAsLeader return an error: the process exits, and its
// restart ends whatever was stuck.
func runAsLeader(ctx context.Context, o options, client kubernetes.Interface, probe *liveness.Probe, validity *leaseValidity, work func(context.Context) error) error {
	logger := klog.FromContext(ctx)
	namespace := o.leaderElectNamespace
	if namespace == "" {
		namespace = podNamespace()
	}
	host, err := os.Hostname()
	if err != nil {
		return err
	}
	// One identity for the life of the process: a replica that lost the
	// Lease and finds it still in its own name (no standby took it) leads
	// again at once, without waiting the lease out against itself.
	identity := host + "_" + string(uuid.NewUUID())
	lock := &observedLock{
		Interface: &resourcelock.LeaseLock{
			LeaseMeta:  metav1.ObjectMeta{Namespace: namespace, Name: o.leaderElectID},
			Client:     client.CoordinationV1(),
			LockConfig: resourcelock.ResourceLockConfig{Identity: identity},
		},
		probe:    probe,
		timeout:  o.renewDeadline,
		validity: validity,
	}
	for {
		lost, err := leadOnce(ctx, o, lock, probe, work)
		if !lost {
			return err
		}
		logger.Info("The work has stopped after the lost Lease; campaigning again with warm caches")
	}
}

// leadOnce campaigns for the Lease, runs work while it holds it, and
// returns once the work has stopped: lost says the Lease was lost (and not
// that ctx ended or the work returned on its own), so the caller may
// campaign again.
func leadOnce(ctx context.Context, o options, lock resourcelock.Interface, probe *liveness.Probe, work func(context.Context) error) (lost bool, _ error) {
	logger := klog.FromContext(ctx)
	// electionCtx outlives ctx until the work has stopped.
	electionCtx, endElection := context.WithCancel(context.WithoutCancel(ctx))
	defer endElection()
	var (
		mu      sync.Mutex
		started bool // the work began
		closed  bool // the election is over: the work may no longer begin
		quit    bool // the work returned while the Lease was still held
		workErr error
		done    = make(chan struct{})
	)
	stopWaiting := context.AfterFunc(ctx, func() {
		mu.Lock()
		defer mu.Unlock()
		if !started {
			endElection()
		}
	})
	defer stopWaiting()

	elector, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
		Lock:            lock,
		Name:            o.leaderElectID,
		LeaseDuration:   o.leaseDuration,
		RenewDeadline:   o.renewDeadline,
		RetryPeriod:     o.retryPeriod,
		ReleaseOnCancel: false, // released below, once the work has stopped
		Callbacks: leaderelection.LeaderCallbacks{
			OnStartedLeading: func(leading context.Context) {
				mu.Lock()
				if closed {
					// Acquired as the election ended: too late to begin.
					mu.Unlock()
					return
				}
				started = true
				mu.Unlock()
				defer close(done)
				defer endElection()
				workCtx, cancel := context.WithCancel(leading)
				defer cancel()
				defer context.AfterFunc(ctx, cancel)()
				probe.Set(liveness.Leading)
				logger.Info("Acquired the Lease; starting work")
				workErr = work(workCtx)
				// Read before the deferred endElection: client-go ends the
				// leading context before it returns on a lost Lease, so
				// whether it ended tells a loss from work that quit.
				mu.Lock()
				quit = leading.Err() == nil
				mu.Unlock()
			},
			OnStoppedLeading: func() { logger.Info("No longer leading") },
		},
	})
	if err != nil {
		return false, err
	}
	probe.Set(liveness.Campaigning)
	logger.Info("Waiting to acquire the Lease", "lease", lock.Describe(), "identity", lock.Identity())
	elector.Run(electionCtx)
	mu.Lock()
	closed = true
	led := started
	// The elector returns when a renewal failed past the renew deadline
	// (the Lease is lost), or when we ended it: the work quit while
	// leading, or ctx ended before the work began.
	renewFailed := !quit
	mu.Unlock()
	if !led {
		if ctx.Err() == nil {
			// Acquired, and lost before the work could begin (a process
			// frozen right after acquiring): campaign again.
			return true, nil
		}
		// Shut down while campaigning; the Lease may have been acquired
		// just before the work could begin.
		releaseLease(lock, lock.Identity(), o.renewDeadline, logger)
		return false, nil
	}
	if renewFailed && ctx.Err() == nil {
		probe.Set(liveness.SteppingDown)
		logger.Info("Lost the Lease; stopping the work")
		bound := time.NewTimer(o.leaseDuration)
		defer bound.Stop()
		select {
		case <-done:
		case <-bound.C:
			return false, fmt.Errorf("the work did not stop within %v of losing the Lease; exiting so that a restart ends it", o.leaseDuration)
		}
	} else {
		<-done
	}
	if ctx.Err() != nil {
		// Shut down: the work has stopped; let a standby take over now.
		releaseLease(lock, lock.Identity(), o.renewDeadline, logger)
		return false, workErr
	}
	if !renewFailed {
		// The work returned while the Lease was held: it cannot go on.
		if workErr == nil {
			workErr = errors.New("the work stopped while leading")
		}
		return false, workErr
	}
	if workErr != nil {
		logger.Info("The work ended with an error as the Lease was lost", "err", workErr)
	}
	return true, nil
}

// observedLock is the Lease lock as the election loop uses it, with each
// call reported to the liveness probe (as it starts and as it ends) and cut
// at timeout: client-go bounds a leader's renewals by the renew deadline,
// but not a standby's attempts, and a call to an API server that stopped
// answering would hang until the connection's health check gives up.
type observedLock struct {
	resourcelock.Interface
	probe   *liveness.Probe
	timeout time.Duration
	// validity, when set, learns of each write of the Lease in our name
	// that succeeded, and of each read of it in another's name: the fence
	// of the syncs (leaseValidity).
	validity *leaseValidity
}

func (l *observedLock) attempt(ctx context.Context) (context.Context, context.CancelFunc) {
	l.probe.ElectionAttempt()
	ctx, cancel := context.WithTimeout(ctx, l.timeout)
	return ctx, func() { cancel(); l.probe.ElectionAttempt() }
}

func (l *observedLock) Get(ctx context.Context) (*resourcelock.LeaderElectionRecord, []byte, error) {
	ctx, done := l.attempt(ctx)
	defer done()
	rec, raw, err := l.Interface.Get(ctx)
	if err == nil && l.validity != nil && rec.HolderIdentity != "" && rec.HolderIdentity != l.Identity() {
		// Another holds it: whatever our clock says, we no longer do.
		l.validity.withdraw()
	}
	return rec, raw, err
}

func (l *observedLock) Create(ctx context.Context, r resourcelock.LeaderElectionRecord) error {
	return l.write(ctx, r, l.Interface.Create)
}

func (l *observedLock) Update(ctx context.Context, r resourcelock.LeaderElectionRecord) error {
	return l.write(ctx, r, l.Interface.Update)
}

// write is a Create or an Update of the Lease; one in our name that
// succeeds moves the fence to its start plus the renew deadline.
func (l *observedLock) write(ctx context.Context, r resourcelock.LeaderElectionRecord,
	do func(context.Context, resourcelock.LeaderElectionRecord) error) error {
	var start time.Time
	if l.validity != nil {
		start = l.validity.clock.Now()
	}
	ctx, done := l.attempt(ctx)
	defer done()
	err := do(ctx, r)
	if err == nil && l.validity != nil && r.HolderIdentity == l.Identity() {
		l.validity.renewed(start)
	}
	return err
}

// releaseLease gives up the Lease if this replica (identity) still holds
// it, as client-go's release does: no holder, and a lease duration of one
// second for any reader of the old record.
func releaseLease(lock resourcelock.Interface, identity string, timeout time.Duration, logger klog.Logger) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	rec, _, err := lock.Get(ctx)
	if err != nil || rec.HolderIdentity != identity {
		return
	}
	now := metav1.Now()
	if err := lock.Update(ctx, resourcelock.LeaderElectionRecord{
		LeaderTransitions: rec.LeaderTransitions, LeaseDurationSeconds: 1, RenewTime: now, AcquireTime: now,
	}); err != nil {
		logger.Info("Releasing the Lease failed; a standby takes it once it expires", "err", err)
		return
	}
	logger.Info("Released the Lease")
}

// podNamespace is the namespace of the pod we run in, or default outside a
// cluster.
func podNamespace() string {
	if data, err := os.ReadFile("/var/run/secrets/kubernetes.io/serviceaccount/namespace"); err == nil && len(data) > 0 {
		return string(data)
	}
	return metav1.NamespaceDefault
}

// restConfig follows sample-controller: -kubeconfig or $KUBECONFIG, and
// in-cluster configuration when neither is given.
func restConfig(o options) (*rest.Config, error) {
	kubeconfig := o.kubeconfig
	if kubeconfig == "" {
		kubeconfig = os.Getenv(clientcmd.RecommendedConfigPathEnvVar)
	}
	if kubeconfig == "" && o.masterURL == "" {
		cfg, err := rest.InClusterConfig()
		if err != nil {
			return nil, fmt.Errorf("no -kubeconfig, $KUBECONFIG or -master given, and not running in a cluster: %w", err)
		}
		return cfg, nil
	}
	loading := clientcmd.NewDefaultClientConfigLoadingRules()
	loading.ExplicitPath = o.kubeconfig
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(loading,
		&clientcmd.ConfigOverrides{ClusterInfo: clientcmdapi.Cluster{Server: o.masterURL}}).ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("loading kubeconfig %q: %w", kubeconfig, err)
	}
	return cfg, nil
}

// checkAPI fails fast, with a hint, when the API server is unreachable or
// the CronJob or Calendar CRD is not installed.
func checkAPI(ctx context.Context, client clientset.Interface) error {
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	_, err := client.BatchV1().CronJobs(metav1.NamespaceAll).List(ctx, metav1.ListOptions{Limit: 1})
	switch {
	case err == nil:
	case apierrors.IsNotFound(err):
		return errors.New("the API server does not serve cronjobs.batch.tutorial.kubebuilder.io: install the CRD with `kubectl apply -f artifacts/examples/crd.yaml`")
	default:
		return fmt.Errorf("cannot reach the Kubernetes API server: %w", err)
	}
	// Without the Calendar CRD the Calendar informer would never sync, and
	// the controller never become ready: say so now.
	if _, err := client.BatchV1().Calendars().List(ctx, metav1.ListOptions{Limit: 1}); apierrors.IsNotFound(err) {
		return errors.New("the API server does not serve calendars.batch.tutorial.kubebuilder.io: install the CRDs with `kubectl apply -f artifacts/examples/crd.yaml`")
	}
	if _, err := client.BatchV1().CronJobRuns(metav1.NamespaceAll).List(ctx, metav1.ListOptions{Limit: 1}); apierrors.IsNotFound(err) {
		return errors.New("the API server does not serve cronjobruns.batch.tutorial.kubebuilder.io: install the CRDs with `kubectl apply -f artifacts/examples/crd.yaml`")
	}
	return nil
}
