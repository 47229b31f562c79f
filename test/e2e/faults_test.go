//go:build e2e

package e2e

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"

	cronv1 "github.com/cronjob-controller/cronjob-controller/pkg/apis/batch/v1"
	"github.com/cronjob-controller/cronjob-controller/pkg/job"
	"github.com/cronjob-controller/cronjob-controller/test/faultproxy"
)

// faultSeed replaces the fault tests' fixed seeds, to replay a run or to try
// a fresh one (-fault.seed=$(date +%s)).
var faultSeed = flag.Uint64("fault.seed", 0, "seed of the fault proxy; 0: each test's fixed seed")

// faultLogs keeps the controller's log and the proxy's log of a fault run,
// for a write-up of what went wrong.
var faultLogs = flag.String("fault.logs", "", "directory to keep each fault test's controller log and proxy log in")

// Under 10% of the controller's requests faulted, spread over every kind the
// proxy has (a write applied whose answer is lost among them): no scheduled
// time gets two Jobs, every due time gets its Job unless every attempt to
// create it was faulted, retries stay bounded, and the controller neither
// exits nor stalls.
func TestSurvivesAPIFaults(t *testing.T) {
	n, d := 60, 75*time.Second
	if *soak {
		n, d = 200, 5*time.Minute
	}
	// A client holds two watches for hours, so 10% of requests would cut
	// one about never: every watch the other faults spare is cut within
	// 30 s (the proxy's MaxWatchAge), and the watches that follow meet
	// the other faults again.
	rules := append(faultproxy.Spread(0.10), faultproxy.Rule{Kind: faultproxy.WatchCut, Rate: 1})
	runUnderFaults(t, faultLoad{name: "api-faults", seed: 1, cronJobs: n, duration: d, rules: rules})
}

// The worst fault for a controller that must start each run once: the Job
// is created, the create call fails. 30% of Job creates answered 500 after
// the API server applied them, and 10% of every other request throttled.
func TestSurvivesLostCreateAnswers(t *testing.T) {
	d := 60 * time.Second
	if *soak {
		d = 3 * time.Minute
	}
	// No latency fault here, so no sync may come too late for a run: every
	// due time has its Job.
	runUnderFaults(t, faultLoad{name: "lost-create-answers", seed: 2, cronJobs: 50, duration: d, noLateRuns: true, rules: []faultproxy.Rule{
		{Kind: faultproxy.AppliedError, Rate: 0.30, Verbs: []string{"create"}, Resources: []string{"jobs"}},
		{Kind: faultproxy.Throttle, Rate: 0.10},
	}})
}

// A storm of 429s at the controller's default client limits, which leave
// the pace of a burst to the API server: half of every request it makes
// (creates, status writes, releases, Events, reads and watches) answered
// 429 with a Retry-After of one second, as the API server's priority and
// fairness answers, for a minute. client-go waits each one out and retries
// it: no run starts twice and none is lost. A CronJob of the fleet is due
// every 5 s, and a sync whose requests meet several 429s in a row can come
// after its next run is due: that run is superseded and counted in
// status.missedRuns (a handful in a run), never dropped silently.
func TestSurvivesThrottleStorm(t *testing.T) {
	runUnderFaults(t, faultLoad{name: "throttle-storm", seed: 3, cronJobs: 20, duration: 60 * time.Second,
		maxRetryAfter: time.Second,
		// Half of the attempts refused: each request is made twice on
		// average.
		requestsPerFiring: 12,
		rules: []faultproxy.Rule{
			{Kind: faultproxy.Throttle, Rate: 0.5},
		}})
}

// faultLoad is one run of a fleet through the fault proxy.
type faultLoad struct {
	name     string
	seed     uint64
	cronJobs int
	duration time.Duration
	// maxRetryAfter bounds a 429's Retry-After (the proxy's default when
	// zero).
	maxRetryAfter time.Duration
	rules         []faultproxy.Rule
	// noLateRuns fails a run missed because its sync came after the next
	// run was due; otherwise such a run need only be counted missed.
	noLateRuns bool
	// requestsPerFiring bounds the requests per firing through the proxy,
	// retries included (6 when zero).
	requestsPerFiring float64
}

// watchedJob is a Job as the test's own watch first saw it.
type watchedJob struct {
	uid, name, owner string
	scheduled        time.Time
	// seen is when the watch delivered it.
	seen time.Time
}

// addedJobs records every Job added in a namespace, straight from the API
// server (not through the proxy), so a Job created and deleted again still
// counts.
type addedJobs struct {
	mu   sync.Mutex
	jobs map[string]watchedJob // by UID
	bad  []string
}

func recordAddedJobs(t *testing.T, ns string) *addedJobs {
	t.Helper()
	w := &addedJobs{jobs: map[string]watchedJob{}}
	factory := informers.NewSharedInformerFactoryWithOptions(env.kube, 0, informers.WithNamespace(ns))
	informer := factory.Batch().V1().Jobs().Informer()
	if _, err := informer.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: func(obj any) {
		j, ok := obj.(*batchv1.Job)
		if !ok {
			return
		}
		w.add(j)
	}}); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	t.Cleanup(func() { close(stop); factory.Shutdown() })
	factory.Start(stop)
	if !cache.WaitForCacheSync(stop, informer.HasSynced) {
		t.Fatal("the test's Job watch did not sync")
	}
	return w
}

func (w *addedJobs) add(j *batchv1.Job) {
	w.mu.Lock()
	defer w.mu.Unlock()
	ref := metav1.GetControllerOf(j)
	at, ok := job.ScheduledAt(j)
	if ref == nil || !ok {
		w.bad = append(w.bad, j.Name)
		return
	}
	w.jobs[string(j.UID)] = watchedJob{uid: string(j.UID), name: j.Name, owner: string(ref.UID), scheduled: at, seen: time.Now()}
}

// countAt is how many Jobs seen so far are for the run at t.
func (w *addedJobs) countAt(t time.Time) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := 0
	for _, j := range w.jobs {
		if j.scheduled.Equal(t) {
			n++
		}
	}
	return n
}

// lastAddedAt is when the watch delivered the last Job for the run at t.
func (w *addedJobs) lastAddedAt(t time.Time) time.Time {
	w.mu.Lock()
	defer w.mu.Unlock()
	var last time.Time
	for _, j := range w.jobs {
		if j.scheduled.Equal(t) && j.seen.After(last) {
			last = j.seen
		}
	}
	return last
}

// byOwner returns each CronJob's runs, oldest first, and the Jobs that
// share a CronJob's scheduled time with another.
func (w *addedJobs) byOwner() (map[string][]watchedJob, []string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := map[string][]watchedJob{}
	for _, j := range w.jobs {
		out[j.owner] = append(out[j.owner], j)
	}
	var duplicates []string
	for _, runs := range out {
		sort.Slice(runs, func(a, b int) bool { return runs[a].scheduled.Before(runs[b].scheduled) })
		for i := 1; i < len(runs); i++ {
			if runs[i].scheduled.Equal(runs[i-1].scheduled) {
				duplicates = append(duplicates, fmt.Sprintf("%s (uid %s) and %s (uid %s)", runs[i-1].name, runs[i-1].uid, runs[i].name, runs[i].uid))
			}
		}
	}
	return out, duplicates
}

// everyRunAfter waits until each CronJob has a Job scheduled after the
// given time, as the test's watch sees them: listing thousands of Jobs
// every poll would load the API server the test measures.
func (w *addedJobs) everyRunAfter(t *testing.T, cronJobs []*cronv1.CronJob, after time.Time, timeout time.Duration) {
	t.Helper()
	eventually(t, timeout, fmt.Sprintf("a run after %s for every CronJob", after.Format(time.TimeOnly)), func() (bool, string) {
		latest := map[string]time.Time{}
		w.mu.Lock()
		for _, j := range w.jobs {
			if j.scheduled.After(latest[j.owner]) {
				latest[j.owner] = j.scheduled
			}
		}
		w.mu.Unlock()
		behind := 0
		for _, cj := range cronJobs {
			if !latest[string(cj.UID)].After(after) {
				behind++
			}
		}
		return behind == 0, fmt.Sprintf("%d of %d behind", behind, len(cronJobs))
	})
}

// proxyKubeconfig writes a kubeconfig like the test cluster's, the same
// token, pointing at the proxy, whose certificate is its own.
func proxyKubeconfig(t *testing.T, proxyURL string) string {
	t.Helper()
	cfg, err := clientcmd.LoadFromFile(env.kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cfg.Clusters {
		c.Server = proxyURL
		c.CertificateAuthorityData = nil
		c.CertificateAuthority = ""
		c.InsecureSkipTLSVerify = true
	}
	path := filepath.Join(t.TempDir(), "kubeconfig-faultproxy")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
	return path
}

func runUnderFaults(t *testing.T, load faultLoad) {
	seed := load.seed
	if *faultSeed != 0 {
		seed = *faultSeed
	}
	t.Logf("fault seed %d (replay: go test -tags e2e -run '^%s$' ./test/e2e -args -fault.seed=%d)", seed, t.Name(), seed)
	ns := newNamespace(t)
	proxy, err := faultproxy.New(faultproxy.Config{
		Target: env.cluster.APIServerURL, Seed: seed, Rules: load.rules, MaxRetryAfter: load.maxRetryAfter,
		// The controller's start-up check fails fast on purpose (one line,
		// exit 1, for a Deployment to restart): faults start once it is
		// past it.
		Disarmed: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(proxy.Close)
	watch := recordAddedJobs(t, ns)
	cronJobs := fleet(t, ns, load.cronJobs)

	metricsAddr := freeAddr(t)
	ctrl := startControllerWith(t, proxyKubeconfig(t, proxy.URL), "-metrics-bind-address="+metricsAddr)
	eventually(t, 30*time.Second, "the controller past its start-up check", func() (bool, string) {
		return ctrl.logged("Starting CronJob controller"), ""
	})
	proxy.Arm()
	armed := time.Now()
	// The informers' watches opened before the faults: they meet them too.
	proxy.CutWatches()

	// The load itself: a fixed stretch of wall-clock time under faults,
	// watching that the controller stays up.
	select {
	case <-ctrl.done:
		t.Fatalf("the controller exited under faults: %v", ctrl.err)
	case <-time.After(load.duration):
	}
	// (workqueue_retries_total counts every delayed add, the wake-ups at
	// each next run too: sync errors are the retries.)
	syncErrors := metricValue(t, metricsAddr, `cronjob_controller_sync_errors_total`)
	missedByController := metricSum(t, metricsAddr, `cronjob_controller_missed_schedules_total`)
	created := metricValue(t, metricsAddr, `cronjob_controller_jobs_created_total`)
	proxy.Disarm()
	disarmed := time.Now()

	// Without faults, every CronJob catches up at once; then the
	// controller stops, cleanly, and the Jobs and statuses are final.
	watch.everyRunAfter(t, cronJobs, time.Now(), 30*time.Second)
	ctrl.stop(t)
	stopped := time.Now()
	entries := proxy.Entries()
	keepLogs(t, ctrl, entries)
	// The test's watch has every Job the API server holds.
	eventually(t, 30*time.Second, "the test's watch to catch up", func() (bool, string) {
		jobs := listJobs(t, ns)
		watch.mu.Lock()
		defer watch.mu.Unlock()
		return len(watch.jobs)+len(watch.bad) >= len(jobs), fmt.Sprintf("watch %d, list %d", len(watch.jobs), len(jobs))
	})

	runs, duplicates := watch.byOwner()
	for _, d := range duplicates {
		t.Errorf("two Jobs for one scheduled time: %s", d)
	}
	if len(watch.bad) > 0 {
		t.Errorf("Jobs without a controller or a scheduled time: %v", watch.bad)
	}

	// Job creates through the proxy, by Job name.
	creates := map[string][]faultproxy.Entry{}
	for _, e := range entries {
		if e.Verb == "create" && e.Resource == "jobs" {
			creates[e.Name] = append(creates[e.Name], e)
		}
	}
	total, excused, late, lost := 0, 0, 0, 0
	for _, cj := range cronJobs {
		times := runs[string(cj.UID)]
		total += len(times)
		if len(times) == 0 {
			t.Errorf("CronJob %s never ran", cj.Name)
			continue
		}
		// Runs are due every interval from the CronJob's creation: each
		// time without a Job is a run that never started. (Those before
		// the first Job were due before the controller started, or while
		// its first syncs were faulted.)
		var missing []time.Time
		for at := cj.CreationTimestamp.Add(fleetInterval); at.Before(times[0].scheduled); at = at.Add(fleetInterval) {
			missing = append(missing, at)
		}
		for i := 1; i < len(times); i++ {
			for at := times[i-1].scheduled.Add(fleetInterval); at.Before(times[i].scheduled); at = at.Add(fleetInterval) {
				missing = append(missing, at)
			}
		}
		// A CronJob whose Jobs stopped before the end stalled.
		if last := times[len(times)-1].scheduled; last.Before(stopped.Add(-3 * fleetInterval)) {
			t.Errorf("CronJob %s: last run at %s, the controller stopped at %s: it stalled", cj.Name, last.Format(time.TimeOnly), stopped.Format(time.TimeOnly))
		}
		for _, at := range missing {
			name := job.Name(cj.Name, at)
			attempts := creates[name]
			switch {
			case allFaulted(attempts):
				// Every create was refused before the next run superseded
				// this one: missed because of the faults.
				excused++
				t.Logf("missed, every create faulted: %s at %s: %s", name, at.Format(time.TimeOnly), describe(attempts))
			case len(attempts) == 0:
				// The CronJob's sync came after its next run was due (a
				// slow request held its worker, a retry backed off, the
				// queue was long): under catchUpPolicy Latest the older run
				// is superseded, as with the built-in controller. It must
				// be counted below, never silently dropped.
				late++
				if load.noLateRuns {
					t.Errorf("missed, handled after the next run was due: %s at %s", name, at.Format(time.TimeOnly+".000"))
				} else {
					t.Logf("missed, handled after the next run was due: %s at %s", name, at.Format(time.TimeOnly))
				}
			default:
				lost++
				t.Errorf("lost run: %s (CronJob %s, scheduled %s, faults from %s to %s); create attempts: %s",
					name, cj.Name, at.Format(time.TimeOnly+".000"), armed.Format(time.TimeOnly), disarmed.Format(time.TimeOnly), describe(attempts))
			}
		}
		// Each missed run is counted in status.missedRuns, once.
		var counted int64
		for _, m := range getCronJob(t, ns, cj.Name).Status.MissedRuns {
			counted += m.Count
		}
		if counted != int64(len(missing)) {
			lost++
			t.Errorf("CronJob %s: %d runs without a Job (%v), status.missedRuns counts %d", cj.Name, len(missing), missing, counted)
		}
	}

	// Bounded retries: a fault fails at most the sync that met it, and an
	// answer lost to a status write one more (a conflict, until the cache
	// has the write); never a loop.
	_, faults := proxy.Counts()
	injected := 0
	for _, k := range faultproxy.Kinds {
		injected += faults[k]
	}
	if limit := 2*float64(injected) + 20; syncErrors > limit {
		t.Errorf("%v failed syncs for %d faults injected, more than %v", syncErrors, injected, limit)
	}
	requests, perSecond, peak := requestRate(entries, armed, disarmed)
	// Steady state is a create, a status write and an Event per firing;
	// client-go's own retries of throttled requests and re-lists after cut
	// watches come on top, but not in multiples.
	firings := float64(load.cronJobs) * disarmed.Sub(armed).Seconds() / fleetInterval.Seconds()
	limit := load.requestsPerFiring
	if limit == 0 {
		limit = 6
	}
	if perFiring := float64(requests) / firings; perFiring > limit {
		t.Errorf("%d requests for %.0f firings: %.1f per firing, want at most %v", requests, firings, perFiring, limit)
	}

	var kinds []string
	for _, k := range faultproxy.Kinds {
		if faults[k] > 0 {
			kinds = append(kinds, fmt.Sprintf("%s=%d", k, faults[k]))
		}
	}
	appliedLost := 0
	for _, es := range creates {
		for _, e := range es {
			if e.Fault == faultproxy.AppliedError || e.Fault == faultproxy.AppliedReset {
				appliedLost++
			}
		}
	}
	t.Logf("REPORT %s: seed=%d cronjobs=%d faulted-for=%v jobs=%d duplicates=%d lost=%d missed-all-creates-faulted=%d missed-late=%d requests=%d (%.1f/s, peak %d/s) faults=%d [%s] job-creates-applied-answer-lost=%d created-by-controller=%v sync-errors=%v missed-by-controller=%v",
		load.name, seed, load.cronJobs, disarmed.Sub(armed).Round(time.Second), total, len(duplicates),
		lost, excused, late, requests, perSecond, peak, injected, strings.Join(kinds, " "), appliedLost, created, syncErrors, missedByController)
}

// keepLogs copies the controller's log and writes the proxy's log of every
// request into -fault.logs, if given.
func keepLogs(t *testing.T, ctrl *controllerProcess, entries []faultproxy.Entry) {
	t.Helper()
	if *faultLogs == "" {
		return
	}
	if err := os.MkdirAll(*faultLogs, 0o755); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(ctrl.log)
	if err != nil {
		t.Fatal(err)
	}
	base := filepath.Join(*faultLogs, t.Name())
	if err := os.WriteFile(base+"-controller.log", data, 0o644); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, e := range entries {
		fmt.Fprintf(&b, "%d %s %s %s %s/%s fault=%q forwarded=%v upstream=%d client=%d\n", e.Seq, e.Time.Format(time.StampMicro),
			e.Verb, e.FullResource(), e.Namespace, e.Name, e.Fault, e.Forwarded, e.UpstreamCode, e.Code)
	}
	if err := os.WriteFile(base+"-proxy.log", []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("logs kept in %s-{controller,proxy}.log", base)
}

// metricSum adds up every sample of a metric of the controller's /metrics.
func metricSum(t *testing.T, addr, name string) float64 {
	t.Helper()
	code, body := httpGet("http://" + addr + "/metrics")
	if code != 200 {
		t.Fatalf("/metrics answered %d", code)
	}
	sum := 0.0
	for _, line := range strings.Split(body, "\n") {
		if !strings.HasPrefix(line, name+"{") && !strings.HasPrefix(line, name+" ") {
			continue
		}
		var v float64
		if _, err := fmt.Sscan(line[strings.LastIndexByte(line, ' ')+1:], &v); err != nil {
			t.Fatal(err)
		}
		sum += v
	}
	return sum
}

// allFaulted reports whether there were create attempts and the proxy
// refused or faulted every one without the API server creating the Job.
func allFaulted(attempts []faultproxy.Entry) bool {
	return len(attempts) > 0 && !slices.ContainsFunc(attempts, func(e faultproxy.Entry) bool {
		return e.Fault == faultproxy.None || e.Applied()
	})
}

// describe is the timeline of a Job's create attempts, from the proxy's log.
func describe(attempts []faultproxy.Entry) string {
	if len(attempts) == 0 {
		return "none"
	}
	var parts []string
	for _, e := range attempts {
		fault := string(e.Fault)
		if fault == "" {
			fault = "none"
		}
		parts = append(parts, fmt.Sprintf("#%d %s fault=%s upstream=%d client=%d", e.Seq, e.Time.Format(time.TimeOnly+".000"), fault, e.UpstreamCode, e.Code))
	}
	return strings.Join(parts, "; ")
}

// requestRate is the number, mean and peak per second of requests through
// the proxy between from and to.
func requestRate(entries []faultproxy.Entry, from, to time.Time) (int, float64, int) {
	perSecond := map[int64]int{}
	n := 0
	for _, e := range entries {
		if e.Time.Before(from) || e.Time.After(to) {
			continue
		}
		perSecond[e.Time.Unix()]++
		n++
	}
	peak := 0
	for _, c := range perSecond {
		peak = max(peak, c)
	}
	return n, float64(n) / to.Sub(from).Seconds(), peak
}
