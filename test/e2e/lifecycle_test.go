//go:build e2e

package e2e

// How the process loses its footing and what it does then: the API server
// frozen past the renew deadline, the leader frozen past its lease, the
// shard Leases lapsing, a signal, a missing CRD, an unreachable API server.
// Each ends in a clean exit or a return to work (docs/deploying.md, "How the
// process ends"), and /healthz says which.

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	cronv1 "github.com/cronjob-controller/cronjob-controller/pkg/apis/batch/v1"
)

// The lease timing of these tests: a lease of 6 s, renewals given up
// after 4 s, tried every second.
var lifecycleLease = []string{"-leader-elect-lease-duration=6s", "-leader-elect-renew-deadline=4s", "-leader-elect-retry-period=1s"}

const lifecycleLeaseDuration = 6 * time.Second

// freeze stops the process pid (SIGSTOP) for d, as a frozen VM, a long
// GC pause or a throttled cgroup would, then lets it go on. The wait is the
// fault itself, not a synchronisation.
func freeze(t *testing.T, what string, pid int, d time.Duration) (thawed time.Time) {
	t.Helper()
	if pid == 0 {
		t.Fatalf("no %s to freeze", what)
	}
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatalf("freezing %s: %v", what, err)
	}
	var once sync.Once
	thaw := func() { once.Do(func() { _ = syscall.Kill(pid, syscall.SIGCONT) }) }
	t.Cleanup(thaw) // whatever fails meanwhile, nothing stays frozen
	time.Sleep(d)
	thaw()
	return time.Now()
}

// logCount is how many times the controller's log holds s.
func (p *controllerProcess) logCount(s string) int {
	data, err := os.ReadFile(p.log)
	if err != nil {
		return 0
	}
	return strings.Count(string(data), s)
}

// running reports whether the process has not exited.
func (p *controllerProcess) running() bool {
	select {
	case <-p.done:
		return false
	default:
		return true
	}
}

// healthz is a replica's /healthz answer: its status code and body.
func healthz(port int) (int, string) {
	resp, err := (&http.Client{Timeout: 2 * time.Second}).Get(fmt.Sprintf("http://127.0.0.1:%d/healthz", port))
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	var b bytes.Buffer
	_, _ = b.ReadFrom(resp.Body)
	return resp.StatusCode, strings.TrimSpace(b.String())
}

// watchHealth polls /healthz every half second until the test ends, and
// fails the test on any answer but 200: an API server that stops answering
// is no reason for the kubelet to restart the controller.
func watchHealth(t *testing.T, port int) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	var bad []string
	go func() {
		defer close(done)
		tick := time.NewTicker(500 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			if code, body := healthz(port); code != http.StatusOK {
				bad = append(bad, fmt.Sprintf("%s: %d %s", time.Now().Format(time.TimeOnly), code, body))
			}
		}
	}()
	t.Cleanup(func() {
		cancel()
		<-done
		for _, b := range bad {
			t.Errorf("/healthz failed while the process was working or campaigning: %s", b)
		}
	})
}

// onceEach fails the test for every scheduled time with two Jobs, and for
// every minute in [from, to] a CronJob has no Job for.
func onceEach(t *testing.T, added *addedJobs, cronJobs []*cronv1.CronJob, from, to time.Time) (runs, twice, missing int) {
	t.Helper()
	byOwner, duplicates := added.byOwner()
	for _, d := range duplicates {
		t.Errorf("two Jobs for one run: %s", d)
	}
	for _, cj := range cronJobs {
		have := map[int64]bool{}
		for _, r := range byOwner[string(cj.UID)] {
			have[r.scheduled.Unix()] = true
		}
		for m := from; !m.After(to); m = m.Add(time.Minute) {
			runs++
			if !have[m.Unix()] {
				missing++
				t.Errorf("%s: no Job for %s", cj.Name, m.Format(time.TimeOnly))
			}
		}
	}
	return runs, len(duplicates), missing
}

// (a) One replica, the API server frozen past the renew deadline, twice:
// the replica loses its Lease each time, campaigns while the API server is
// away, and leads again within a lease duration of its answering; the run
// due while it was frozen starts late, once (no startingDeadlineSeconds:
// the catch-up rules start it), and /healthz says alive throughout.
func TestOneReplicaLeadsAgainAfterAPIServerFreezes(t *testing.T) {
	ns := newNamespace(t)
	added := recordAddedJobs(t, ns)
	port := freePort(t)
	p := startController(t, append([]string{"-leader-elect", "-leader-elect-namespace=" + ns, "-leader-elect-id=freeze",
		fmt.Sprintf("-health-probe-bind-address=127.0.0.1:%d", port)}, lifecycleLease...)...)
	eventually(t, 30*time.Second, "a leader", func() (bool, string) { return p.logged("Acquired the Lease"), "" })
	watchHealth(t, port)
	cronJobs := fleetOf(t, ns, 20, "* * * * *", func(cj *cronv1.CronJob) {
		cj.Spec.JobTemplate.Spec.TTLSecondsAfterFinished = ptr.To[int32](0)
	})
	first := time.Now().Add(15 * time.Second).Truncate(time.Minute).Add(time.Minute)
	minute := first
	var backAfter []time.Duration
	for round := 1; round <= 2; round++ {
		// Frozen from 3 s before the minute for 9 s: past the renew
		// deadline, and the minute's runs fall due meanwhile.
		time.Sleep(time.Until(minute.Add(-3 * time.Second)))
		thawed := freeze(t, "kube-apiserver", env.cluster.Pid("kube-apiserver"), 9*time.Second)
		eventually(t, 30*time.Second, fmt.Sprintf("round %d: the loss seen", round), func() (bool, string) {
			return p.logCount("Lost the Lease; stopping the work") >= round, ""
		})
		eventually(t, 30*time.Second, fmt.Sprintf("round %d: leading again", round), func() (bool, string) {
			return p.logCount("Acquired the Lease") >= round+1, ""
		})
		backAfter = append(backAfter, time.Since(thawed))
		if !p.running() {
			t.Fatalf("round %d: the controller exited: %v", round, p.err)
		}
		if code, body := healthz(port); code != http.StatusOK || !strings.Contains(body, "leading") {
			t.Errorf("round %d: /healthz %d %q, want leading", round, code, body)
		}
		added.everyRunAfter(t, cronJobs, minute.Add(-time.Second), 90*time.Second)
		minute = minute.Add(time.Minute)
	}
	// The minute after the last freeze too: a run of a frozen minute whose
	// Job the TTL controller deleted before its status recorded it would
	// start again.
	added.everyRunAfter(t, cronJobs, minute.Add(-time.Second), 90*time.Second)
	runs, twice, missing := onceEach(t, added, cronJobs, first, minute)
	for i, d := range backAfter {
		if d > lifecycleLeaseDuration {
			t.Errorf("round %d: leading again %v after the API server answered, want within the lease duration %v", i+1, d, lifecycleLeaseDuration)
		}
	}
	t.Logf("REPORT apiserver-freeze: cronjobs=%d runs=%d twice=%d missing=%d leading-again-after-thaw=%v", len(cronJobs), runs, twice, missing, backAfter)
}

// (b) Two replicas, the leader frozen past its lease in the middle of a
// burst whose Jobs the TTL controller deletes at once, twice, so that each
// replica loses the Lease once: the standby takes over, the thawed one
// stops its work and becomes the standby. No run starts twice or is lost,
// and afterwards both replicas are up and one leads.
func TestFrozenLeaderComesBackAsStandby(t *testing.T) {
	n := 200
	if *soak {
		n = 600
	}
	ns := newNamespace(t)
	added := recordAddedJobs(t, ns)
	args := append([]string{"-leader-elect", "-leader-elect-namespace=" + ns, "-leader-elect-id=frozen-leader"}, lifecycleLease...)
	type replica struct {
		p    *controllerProcess
		port int
	}
	start := func() replica {
		port := freePort(t)
		return replica{startController(t, append(args, fmt.Sprintf("-health-probe-bind-address=127.0.0.1:%d", port))...), port}
	}
	a := start()
	eventually(t, 30*time.Second, "a leader", func() (bool, string) { return a.p.logged("Acquired the Lease"), "" })
	b := start()
	eventually(t, 30*time.Second, "the standby campaigning", func() (bool, string) { return b.p.logged("Waiting to acquire"), "" })
	cronJobs := fleetOf(t, ns, n, "* * * * *", func(cj *cronv1.CronJob) {
		cj.Spec.JobTemplate.Spec.TTLSecondsAfterFinished = ptr.To[int32](0)
	})
	first := time.Now().Add(20 * time.Second).Truncate(time.Minute).Add(time.Minute)
	minute := first
	leader, standby := a, b
	for round := 1; round <= 2; round++ {
		eventually(t, time.Until(minute)+90*time.Second, fmt.Sprintf("round %d: the burst under way", round), func() (bool, string) {
			c := added.countAt(minute)
			return c >= n/3, fmt.Sprintf("%d of %d", c, n)
		})
		acquired := standby.p.logCount("Acquired the Lease")
		freeze(t, "the leader", leader.p.cmd.Process.Pid, lifecycleLeaseDuration+4*time.Second)
		eventually(t, 30*time.Second, fmt.Sprintf("round %d: the standby leading", round), func() (bool, string) {
			return standby.p.logCount("Acquired the Lease") > acquired, ""
		})
		eventually(t, 30*time.Second, fmt.Sprintf("round %d: the thawed leader stepping down", round), func() (bool, string) {
			return leader.p.logCount("Lost the Lease; stopping the work") >= 1, ""
		})
		eventually(t, 30*time.Second, fmt.Sprintf("round %d: the thawed leader campaigning", round), func() (bool, string) {
			code, body := healthz(leader.port)
			return code == http.StatusOK && strings.Contains(body, "campaigning"), fmt.Sprintf("%d %s", code, body)
		})
		added.everyRunAfter(t, cronJobs, minute.Add(-time.Second), 120*time.Second)
		leader, standby = standby, leader
		minute = minute.Add(time.Minute)
	}
	added.everyRunAfter(t, cronJobs, minute.Add(-time.Second), 120*time.Second)
	runs, twice, missing := onceEach(t, added, cronJobs, first, minute)
	for _, r := range []replica{a, b} {
		if !r.p.running() {
			t.Errorf("a replica exited: %v", r.p.err)
		}
	}
	var roles []string
	for _, r := range []replica{a, b} {
		code, body := healthz(r.port)
		if code != http.StatusOK {
			t.Errorf("/healthz %d %q", code, body)
		}
		roles = append(roles, body)
	}
	leading := 0
	for _, r := range roles {
		if strings.Contains(r, "leading") {
			leading++
		}
	}
	if leading != 1 {
		t.Errorf("replicas say %q: want one leading", roles)
	}
	t.Logf("REPORT frozen-leader: cronjobs=%d runs=%d twice=%d missing=%d roles=%q", n, runs, twice, missing, roles)
}

// (c) Three sharded replicas through an API-server freeze past the lease:
// every shard Lease lapses, every replica drops its shards, and takes a
// share again once the API server answers, without a restart. Afterwards
// every shard is worked by exactly one replica, and no run starts twice.
func TestShardedReplicasShareAgainAfterAPIServerFreeze(t *testing.T) {
	ns := newNamespace(t)
	added := recordAddedJobs(t, ns)
	type replica struct {
		p    *controllerProcess
		port int
	}
	var replicas []replica
	for range 3 {
		port := freePort(t)
		p := startController(t, append([]string{"-shards=" + strconv.Itoa(testShards), "-leader-elect-namespace=" + ns, "-leader-elect-id=shards",
			fmt.Sprintf("-metrics-bind-address=127.0.0.1:%d", port), fmt.Sprintf("-health-probe-bind-address=127.0.0.1:%d", freePort(t))},
			lifecycleLease...)...)
		replicas = append(replicas, replica{p, port})
	}
	balancedAmong(t, ns, 3)
	cronJobs := fleetOf(t, ns, 60, "@every 5s", func(cj *cronv1.CronJob) {
		cj.Spec.JobTemplate.Spec.Completions = ptr.To[int32](0)
		cj.Spec.JobTemplate.Spec.TTLSecondsAfterFinished = ptr.To[int32](0)
	})
	added.everyRunAfter(t, cronJobs, time.Now().Add(10*time.Second), 60*time.Second)
	moves := func(direction string) (n float64) {
		for _, r := range replicas {
			n += scrape(t, r.port)[`cronjob_controller_shard_moves_total{direction="`+direction+`"}`]
		}
		return n
	}
	lostBefore, acquiredBefore := moves("lost"), moves("acquired")
	thawed := freeze(t, "kube-apiserver", env.cluster.Pid("kube-apiserver"), lifecycleLeaseDuration+4*time.Second)
	// Every shard dropped as lapsed and taken again, each replica its share.
	eventually(t, 60*time.Second, "every shard dropped and taken again", func() (bool, string) {
		lost, acquired := moves("lost")-lostBefore, moves("acquired")-acquiredBefore
		var held []float64
		var sum float64
		for _, r := range replicas {
			h := scrape(t, r.port)["cronjob_controller_shards_held"]
			held, sum = append(held, h), sum+h
		}
		state := fmt.Sprintf("lost %v, acquired %v, held %v", lost, acquired, held)
		if lost < testShards || acquired < testShards || sum != testShards {
			return false, state
		}
		for _, h := range held {
			if h < testShards/3 || h > testShards/3+1 {
				return false, state
			}
		}
		return true, state
	})
	rebalanced := time.Since(thawed)
	balancedAmong(t, ns, 3)
	added.everyRunAfter(t, cronJobs, time.Now().Add(5*time.Second), 60*time.Second)
	for _, r := range replicas {
		if !r.p.running() {
			t.Fatalf("a replica exited: %v", r.p.err)
		}
	}
	lostInFreeze := moves("lost") - lostBefore
	_, duplicates := added.byOwner()
	for _, d := range duplicates {
		t.Errorf("two Jobs for one scheduled time: %s", d)
	}
	t.Logf("REPORT sharded-freeze: cronjobs=%d shards=%d lost-in-freeze=%v shared-again-after-thaw=%v twice=%d",
		len(cronJobs), testShards, lostInFreeze, rebalanced.Round(10*time.Millisecond), len(duplicates))
}

// Every way the process ends, and its exit code: 0 on SIGTERM and SIGINT
// (work stopped, Lease released); 1 with one line when the CRDs are not
// installed or the API server cannot be reached at start
// (TestClearErrorWithoutCluster). A lost Lease and lost shard Leases do not
// end it: the tests above.
func TestEveryWayOutHasItsExitCode(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		t.Run(sig.String(), func(t *testing.T) {
			ns := newNamespace(t)
			p := startController(t, append([]string{"-leader-elect", "-leader-elect-namespace=" + ns, "-leader-elect-id=signal"}, lifecycleLease...)...)
			eventually(t, 30*time.Second, "a leader", func() (bool, string) { return p.logged("Acquired the Lease"), "" })
			_ = p.cmd.Process.Signal(sig)
			select {
			case <-p.done:
			case <-time.After(30 * time.Second):
				t.Fatalf("still running 30 s after %v", sig)
			}
			if p.err != nil {
				t.Errorf("exit after %v: %v, want 0", sig, p.err)
			}
			lease, err := env.kube.CoordinationV1().Leases(ns).Get(context.Background(), "signal", metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if h := ptr.Deref(lease.Spec.HolderIdentity, ""); h != "" {
				t.Errorf("the Lease is still held by %q after %v: a standby would wait it out", h, sig)
			}
		})
	}
	// The CRDs not installed and an unreachable API server at start:
	// TestClearErrorWithoutCluster.
}
