//go:build e2e

package e2e

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	cronv1 "github.com/cronjob-controller/cronjob-controller/pkg/apis/batch/v1"
	"github.com/cronjob-controller/cronjob-controller/pkg/shard"
)

var shardLogs = flag.String("shard.logs", "", "directory to keep TestShardedReplicas' controller logs in")

var shardCronJobs = flag.Int("shard.cronjobs", 60, "CronJobs (@every 5s) in TestShardedReplicas; the issue's full run is 300")

const (
	testShards       = 16
	shardLeaseLength = 6 * time.Second
)

type shardReplica struct {
	p    *controllerProcess
	port int
	name string
}

// Three replicas share 16 shards of CronJobs due every 5 s; one is
// SIGKILLed, then a fourth joins. Counted from the test's own watch: no
// scheduled time with two Jobs, none without its Job, how late the latest
// Job came; the shards balanced after each change; and each replica's
// caches hold its share (the sum over replicas is every object once).
// Run it with -apiserver.feature-gates=ShardedListAndWatch=true as well:
// the API server then selects each replica's CronJobs.
func TestShardedReplicas(t *testing.T) {
	n := *shardCronJobs
	ns := newNamespace(t)
	added := recordAddedJobs(t, ns)
	serverSide := strings.Contains(*apiserverFeatureGates, "ShardedListAndWatch=true")
	start := func(name string) *shardReplica {
		port := freePort(t)
		p := startController(t, "-shards="+strconv.Itoa(testShards), "-leader-elect-namespace="+ns, "-leader-elect-id=shards",
			"-leader-elect-lease-duration=6s", "-leader-elect-renew-deadline=4s", "-leader-elect-retry-period=1s",
			fmt.Sprintf("-metrics-bind-address=127.0.0.1:%d", port))
		if *shardLogs != "" {
			// Registered after startController's cleanup, so run before it.
			t.Cleanup(func() {
				p.kill()
				if data, err := os.ReadFile(p.log); err == nil {
					_ = os.WriteFile(fmt.Sprintf("%s/%s.log", *shardLogs, name), data, 0o644)
				}
			})
		}
		return &shardReplica{p: p, port: port, name: name}
	}
	replicas := []*shardReplica{start("r1"), start("r2"), start("r3")}
	balancedAmong(t, ns, 3)

	// Jobs of no completions: the Job controller completes each at once,
	// with no pod, and the TTL controller deletes it. The test is of the
	// replicas; with pods, 300 CronJobs every 5 s are also 60 pods a second
	// created, scheduled, run and deleted, more than the two cores that run
	// this whole plane keep up with (docs/sharding.md).
	cronJobs := fleetOf(t, ns, n, "@every 5s", func(cj *cronv1.CronJob) {
		cj.Spec.JobTemplate.Spec.Completions = ptr.To[int32](0)
		cj.Spec.JobTemplate.Spec.TTLSecondsAfterFinished = ptr.To[int32](0)
	})
	began := time.Now()
	t.Logf("%d CronJobs @every 5s over %d shards", n, testShards)
	added.everyRunAfter(t, cronJobs, began.Add(15*time.Second), 60*time.Second)

	replicas[1].p.kill()
	killed := time.Now()
	balancedAmong(t, ns, 2)
	rebalancedAfterKill := time.Since(killed)
	added.everyRunAfter(t, cronJobs, time.Now().Add(10*time.Second), 60*time.Second)

	joining := time.Now() // its start (lists of every object) loads the machine at once
	replicas = append(replicas, start("r4"))
	joined := time.Now()
	balancedAmong(t, ns, 3)
	rebalancedAfterJoin := time.Since(joined)
	added.everyRunAfter(t, cronJobs, time.Now().Add(10*time.Second), 60*time.Second)
	end := time.Now()

	// Each live replica's caches: its share, every object once in all.
	allCronJobs, err := env.cron.BatchV1().CronJobs(metav1.NamespaceAll).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var sumCronJobs float64
	var report []string
	for _, r := range replicas {
		if r == replicas[1] {
			continue
		}
		m := scrape(t, r.port)
		sumCronJobs += m[`cronjob_controller_cached_objects{kind="cronjobs"}`]
		report = append(report, fmt.Sprintf("%s: shards=%v cronjobs=%v jobs=%v moves(acquired/released/lost)=%v/%v/%v server-selected=%v rss=%dMiB",
			r.name, m["cronjob_controller_shards_held"], m[`cronjob_controller_cached_objects{kind="cronjobs"}`], m[`cronjob_controller_cached_objects{kind="jobs"}`],
			m[`cronjob_controller_shard_moves_total{direction="acquired"}`], m[`cronjob_controller_shard_moves_total{direction="released"}`],
			m[`cronjob_controller_shard_moves_total{direction="lost"}`], m["cronjob_controller_shard_selected_by_api_server"], rssMiB(t, r.p)))
		// Reported, not asserted: the API server of v1.36.3 selects
		// custom resources but answers their lists without shardInfo
		// (TestAPIServerSelectsCustomResourceShards), so the replica
		// cannot tell whether it selected.
		_ = serverSide
		if held := m["cronjob_controller_shards_held"]; held < testShards/3 || held > testShards/3+1 {
			t.Errorf("%s holds %v shards, want %d or %d", r.name, held, testShards/3, testShards/3+1)
		}
	}
	if int(sumCronJobs) != len(allCronJobs.Items) {
		t.Errorf("the replicas cache %v CronJobs in all, want each of the %d once", sumCronJobs, len(allCronJobs.Items))
	}

	// Exactly once: every 5 s slot of every CronJob has one Job.
	runs, duplicates := added.byOwner()
	for _, d := range duplicates {
		t.Errorf("two Jobs for one scheduled time: %s", d)
	}
	// Runs due while shards move may be missed (the issue allows a lease
	// duration): while the killed replica's shards wait out its Leases,
	// and while a joiner starts (its first lists load the machine and slow
	// the holders) and the shards it takes are released, taken and listed
	// into its caches. A run still due when the new holder's caches are
	// ready starts late; one superseded meanwhile by the next (the
	// CronJobs' catchUpPolicy is Latest) is counted in status.missedRuns.
	// On this 2-core machine the join's handover took 3 to 5 s, as long as
	// the schedule's period. Any other missed run is a lost one.
	during := func(from, to time.Time) func(time.Time) bool {
		return func(due time.Time) bool {
			return !due.Before(from.Add(-time.Second)) && !due.After(to.Add(shardLeaseLength+2*time.Second))
		}
	}
	duringKill, duringJoin := during(killed, killed), during(joining, joined)
	missing, inWindow, inJoin, runsSeen := 0, 0, 0, 0
	tolerated := map[string]int64{} // by CronJob name: runs missed in a move
	var latest time.Duration
	for _, cj := range cronJobs {
		var times []time.Time
		for _, r := range runs[string(cj.UID)] {
			if r.scheduled.After(began.Add(5*time.Second)) && r.scheduled.Before(end.Add(-10*time.Second)) {
				times = append(times, r.scheduled)
				latest = max(latest, r.seen.Sub(r.scheduled))
			}
		}
		sort.Slice(times, func(a, b int) bool { return times[a].Before(times[b]) })
		runsSeen += len(times)
		for i := 1; i < len(times); i++ {
			for due := times[i-1].Add(5 * time.Second); due.Before(times[i]); due = due.Add(5 * time.Second) {
				switch {
				case duringKill(due):
					inWindow++
					tolerated[cj.Name]++
				case duringJoin(due):
					inJoin++
					tolerated[cj.Name]++
				default:
					missing++
					t.Errorf("%s: no Job for %s (between %s and %s)", cj.Name, due.Format(time.TimeOnly),
						times[i-1].Format(time.TimeOnly), times[i].Format(time.TimeOnly))
				}
			}
		}
	}
	// Never silently: a run missed in a move is counted in its CronJob's
	// status.missedRuns (Superseded, as catchUpPolicy Latest makes it).
	if len(tolerated) > 0 {
		list, err := env.cron.BatchV1().CronJobs(ns).List(context.Background(), metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, cj := range list.Items {
			var counted int64
			for _, m := range cj.Status.MissedRuns {
				counted += m.Count
			}
			if want := tolerated[cj.Name]; counted < want {
				t.Errorf("%s: %d runs missed while shards moved, status.missedRuns counts %d: dropped silently", cj.Name, want, counted)
			}
		}
	}
	// A run due while its shard's holder was dead starts when the shard
	// moves: within the lease duration and a few retry periods, plus the
	// load of this machine.
	if latest > shardLeaseLength+10*time.Second {
		t.Errorf("a Job came %v after its scheduled time, want within the lease duration %v (+10 s slack)", latest, shardLeaseLength)
	}
	t.Logf("REPORT sharded-replicas: gates=%q cronjobs=%d runs=%d duplicates=%d missing=%d missed-while-the-killed-replica's-leases-ran-out=%d missed-while-shards-moved-to-the-joiner=%d latest-job=%v rebalanced-after-kill=%v rebalanced-after-join=%v",
		*apiserverFeatureGates, n, runsSeen, len(duplicates), missing, inWindow, inJoin, latest.Round(10*time.Millisecond),
		rebalancedAfterKill.Round(10*time.Millisecond), rebalancedAfterJoin.Round(10*time.Millisecond))
	for _, line := range report {
		t.Logf("REPORT replica %s", line)
	}
}

// balancedAmong waits until the shard Leases in ns are held by exactly
// live replicas, within one shard of each other.
func balancedAmong(t *testing.T, ns string, live int) {
	t.Helper()
	eventually(t, 60*time.Second, fmt.Sprintf("the shards balanced over %d replicas", live), func() (bool, string) {
		leases, err := env.kube.CoordinationV1().Leases(ns).List(context.Background(), metav1.ListOptions{
			LabelSelector: shard.RoleLabel + "=shard"})
		if err != nil {
			return false, err.Error()
		}
		count := map[string]int{}
		for _, l := range leases.Items {
			count[ptr.Deref(l.Spec.HolderIdentity, "")]++
		}
		if count[""] > 0 || len(count) != live || len(leases.Items) != testShards {
			return false, fmt.Sprintf("%v", count)
		}
		for _, c := range count {
			if c < testShards/live || c > testShards/live+1 {
				return false, fmt.Sprintf("%v", count)
			}
		}
		return true, ""
	})
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// scrape returns a replica's metrics, by series as the text format
// writes them (name{labels}).
func scrape(t *testing.T, port int) map[string]float64 {
	t.Helper()
	resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/metrics", port))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out := map[string]float64{}
	s := bufio.NewScanner(io.LimitReader(resp.Body, 64<<20))
	s.Buffer(make([]byte, 1<<20), 1<<20)
	for s.Scan() {
		line := s.Text()
		if strings.HasPrefix(line, "#") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		if i < 0 {
			continue
		}
		if v, err := strconv.ParseFloat(line[i+1:], 64); err == nil {
			out[line[:i]] = v
		}
	}
	return out
}

// rssMiB is a process's resident set now.
func rssMiB(t *testing.T, p *controllerProcess) int {
	t.Helper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", p.cmd.Process.Pid))
	if err != nil {
		return -1
	}
	for _, line := range strings.Split(string(data), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmRSS:" {
			kb, _ := strconv.Atoi(f[1])
			return kb / 1024
		}
	}
	return -1
}

// Whether the API server selects custom resources by shardSelector: with
// ShardedListAndWatch on, a list and a watch of CronJobs for half the shards
// must hold just those shards' CronJobs. Skipped with the gate off. Its
// REPORT line is what docs/sharding.md quotes.
func TestAPIServerSelectsCustomResourceShards(t *testing.T) {
	if !strings.Contains(*apiserverFeatureGates, "ShardedListAndWatch=true") {
		t.Skip("needs -apiserver.feature-gates=ShardedListAndWatch=true")
	}
	ctx := context.Background()
	ns := newNamespace(t)
	cronJobs := fleetOf(t, ns, 64, "0 0 1 1 *")
	held := []int{0, 1, 2, 3, 4, 5, 6, 7}
	want := map[string]bool{}
	for _, cj := range cronJobs {
		if shard.OfUID(cj.UID, testShards) < len(held) {
			want[cj.Name] = true
		}
	}
	if len(want) == 0 || len(want) == len(cronJobs) {
		t.Fatalf("%d of %d CronJobs in the selected shards: the case tests nothing", len(want), len(cronJobs))
	}
	sel := shard.Selector(shard.UIDField, held, testShards)
	var report []string
	for _, rv := range []string{"", "0"} {
		list, err := env.cron.BatchV1().CronJobs(ns).List(ctx, metav1.ListOptions{ShardSelector: sel, ResourceVersion: rv})
		if err != nil {
			t.Fatalf("list with shardSelector %q: %v", sel, err)
		}
		var outside int
		for _, cj := range list.Items {
			if !want[cj.Name] {
				outside++
			}
		}
		report = append(report, fmt.Sprintf("list(resourceVersion=%q): %d items, %d outside the selector, shardInfo=%v", rv, len(list.Items), outside, list.ShardInfo != nil))
		if outside > 0 || len(list.Items) != len(want) {
			t.Errorf("list(resourceVersion=%q) with shardSelector gave %d CronJobs, %d outside it; want the %d selected", rv, len(list.Items), outside, len(want))
		}
	}
	w, err := env.cron.BatchV1().CronJobs(ns).Watch(ctx, metav1.ListOptions{ShardSelector: sel, ResourceVersion: "0"})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	seen, outside := 0, 0
	timeout := time.After(10 * time.Second)
watching:
	for seen < len(cronJobs) {
		select {
		case ev := <-w.ResultChan():
			cj, ok := ev.Object.(*cronv1.CronJob)
			if !ok {
				break watching
			}
			seen++
			if !want[cj.Name] {
				outside++
			}
		case <-timeout:
			break watching // a selecting server sends fewer than all
		}
	}
	report = append(report, fmt.Sprintf("watch(resourceVersion=\"0\"): %d initial events, %d outside the selector", seen, outside))
	if outside > 0 || seen != len(want) {
		t.Errorf("watch with shardSelector gave %d CronJobs, %d outside it; want the %d selected", seen, outside, len(want))
	}
	t.Logf("REPORT custom-resource-shard-selection: selector %s, %d of %d CronJobs selected; %s", sel, len(want), len(cronJobs), strings.Join(report, "; "))
}
