//go:build e2e

package e2e

import (
	"fmt"
	"testing"
	"time"

	"k8s.io/utils/ptr"

	cronv1 "github.com/cronjob-controller/cronjob-controller/pkg/apis/batch/v1"
)

// A fleet of CronJobs all due the same minute, the leader SIGKILLed in the
// middle of the burst: the standby takes over and finishes it. Every
// CronJob's Jobs finish at once and the TTL controller deletes them
// (ttlSecondsAfterFinished: 0), so a run the new leader could not tell had
// started would run twice. Counted from the test's own watch: no scheduled
// time with two Jobs, none without its Job, and how long after the minute
// the last Job came.
func TestLeaderFailoverUnderLoad(t *testing.T) {
	n := 200
	if *soak {
		n = 2000
	}
	ns := newNamespace(t)
	added := recordAddedJobs(t, ns)
	electionArgs := []string{"-leader-elect", "-leader-elect-namespace=" + ns, "-leader-elect-id=failover-load",
		"-leader-elect-lease-duration=3s", "-leader-elect-renew-deadline=2s", "-leader-elect-retry-period=500ms"}
	leader := startController(t, electionArgs...)
	eventually(t, 30*time.Second, "a leader", func() (bool, string) { return leader.logged("Acquired the Lease"), "" })
	standby := startController(t, electionArgs...)
	eventually(t, 30*time.Second, "the standby waiting", func() (bool, string) { return standby.logged("Waiting to acquire"), "" })

	cronJobs := fleetOf(t, ns, n, "* * * * *", func(cj *cronv1.CronJob) {
		cj.Spec.JobTemplate.Spec.TTLSecondsAfterFinished = ptr.To[int32](0)
	})
	// The first whole minute the fleet and both caches are surely ready for.
	minute := time.Now().Add(20 * time.Second).Truncate(time.Minute).Add(time.Minute)
	t.Logf("%d CronJobs due at %s", n, minute.Format(time.TimeOnly))

	// Kill the leader once about a third of the burst is out.
	var before int
	eventually(t, time.Until(minute)+90*time.Second, "a third of the burst", func() (bool, string) {
		before = added.countAt(minute)
		return before >= n/3, fmt.Sprintf("%d of %d", before, n)
	})
	leader.kill()
	killedAt := time.Now()
	eventually(t, 30*time.Second, "the standby to take over", func() (bool, string) { return standby.logged("Acquired the Lease"), "" })
	takeover := time.Since(killedAt)
	added.everyRunAfter(t, cronJobs, minute.Add(-time.Second), 120*time.Second)
	lastJob := added.lastAddedAt(minute).Sub(minute)

	// The next minute too: a run of the first one whose Job the TTL
	// controller deleted before any status recorded it would start again.
	added.everyRunAfter(t, cronJobs, minute, 150*time.Second)
	runs, duplicates := added.byOwner()
	for _, d := range duplicates {
		t.Errorf("two Jobs for one run: %s", d)
	}
	missing := 0
	for _, cj := range cronJobs {
		have := map[int64]bool{}
		for _, r := range runs[string(cj.UID)] {
			have[r.scheduled.Unix()] = true
		}
		for _, m := range []time.Time{minute, minute.Add(time.Minute)} {
			if !have[m.Unix()] {
				missing++
				t.Errorf("%s: no Job for %s", cj.Name, m.Format(time.TimeOnly))
			}
		}
	}
	t.Logf("REPORT failover-under-load: cronjobs=%d jobs-before-kill=%d takeover=%v last-job-after-minute=%v duplicates=%d missing=%d",
		n, before, takeover.Round(10*time.Millisecond), lastJob.Round(10*time.Millisecond), len(duplicates), missing)
}
