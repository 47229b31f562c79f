package planner

// Adversarial probes of Decide. Each Probe test states the promise it
// checks; see the review report for which fail and why.

import (
	"fmt"
	"hash/fnv"
	"slices"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	cronv1 "github.com/cronjob-controller/cronjob-controller/pkg/apis/batch/v1"
	"github.com/cronjob-controller/cronjob-controller/pkg/job"
)

// startAll carries a plan out as a controller whose creates all succeed
// would, and returns the Jobs it made (finished: "").
func startAll(p *Plan) []*fakeJob {
	var made []*fakeJob
	for _, c := range p.Creates {
		if !p.Wants(c) {
			continue
		}
		var j *fakeJob
		if c.Manual {
			j = &fakeJob{ObjectMeta: metav1.ObjectMeta{Name: c.Job.Name, Namespace: "default", UID: types.UID("uid-" + c.Job.Name)}, manual: true}
		} else {
			j = runOf(c.Time, "")
		}
		p.Started(c, j, true)
		made = append(made, j)
	}
	for _, d := range p.Deletes {
		p.Deleted(d)
	}
	return made
}

func asJobs(js []*fakeJob) []Job {
	out := make([]Job, 0, len(js))
	for _, j := range js {
		out = append(out, j)
	}
	return out
}

func createdTimes(p *Plan) []string {
	var out []string
	for _, c := range p.Creates {
		if !c.Manual {
			out = append(out, c.Time.UTC().Format("01-02T15:04:05"))
		}
	}
	return out
}

func totalMissed(st cronv1.CronJobStatus) int64 {
	var n int64
	for _, m := range st.MissedRuns {
		n += m.Count
	}
	return n
}

// A status written by the previous controller version: it recorded an edit
// as resolvedSchedule + scheduleChangeTime, and counted no time the new
// schedule names before scheduleChangeTime. Upgrading must not turn those
// times into runs.
func TestProbeUpgradeFromScheduleChangeTime(t *testing.T) {
	for _, policy := range []cronv1.CatchUpPolicy{cronv1.CatchUpLatest, cronv1.CatchUpAll} {
		t.Run(string(policy), func(t *testing.T) {
			// Old controller: hourly, last ran 09:00; at 09:30 it saw the
			// edit to */5 and wrote resolvedSchedule=*/5, scheduleChangeTime
			// 09:30. Its next run would be 09:35.
			cj := cronJob(sched("*/5 * * * *"), last(at(-time.Hour)), seen("*/5 * * * *", "UTC"), func(cj *cronv1.CronJob) {
				cj.Status.ScheduleChangeTime = &metav1.Time{Time: at(-30 * time.Minute)}
				cj.Spec.CatchUpPolicy = policy
			})
			// The new controller takes over at 09:31.
			p := Decide(Input{CronJob: cj, Now: at(-29 * time.Minute)})
			if got := createdTimes(p); len(got) != 0 {
				t.Errorf("upgrade started %q: times before the edit the old controller saw (scheduleChangeTime 09:30)", got)
			}
			if n := totalMissed(p.Status); n != 0 {
				t.Errorf("upgrade counted %d missed runs for times that were never runs", n)
			}
		})
	}
}

// The previous version stored status.lastRunNow as the raw value, of any
// length; this one compares with RunNowKey, the hash past 128 bytes. The same
// value, already handled, must not run again after the upgrade (its Job may
// be long pruned).
func TestProbeUpgradeLongRunNowValue(t *testing.T) {
	value := strings.Repeat("v", 200)
	cj := cronJob(last(at(-time.Hour)), func(cj *cronv1.CronJob) {
		cj.Annotations = map[string]string{cronv1.RunNowAnnotation: value}
		cj.Status.LastRunNow = value // as 72e6024 wrote it
	})
	p := Decide(Input{CronJob: cj, Now: at(-30 * time.Minute)})
	if len(p.Creates) != 0 {
		t.Errorf("the already-handled run-now value runs again after the upgrade: creates %q", names(p.Creates, func(c Create) string { return c.Job.Name }))
	}
}

// The candidate walk is bounded by maxWalk steps of the schedule in force.
// A run both the old and the new schedule name, owed after an edit seen late,
// must still start (issue 13, case 2), or at the least be counted missed: it
// must not vanish.
func TestProbeEditSeenLateBeyondTheWalk(t *testing.T) {
	cases := []struct {
		name     string
		cur, old string
		last     time.Time
		now      time.Time
		owed     time.Time
	}{
		// The controller is down 09:59-10:17; the user edits the hourly
		// schedule to @every 1s meanwhile. 10:00 is named by both.
		{"hourly to @every 1s, seen 17 minutes late", "@every 1s", "0 * * * *", at(-time.Hour), at(17 * time.Minute), ten},
		// A daily midnight job edited to every minute while the controller
		// is down; it comes back at 17:00.
		{"daily to every minute, seen 17 hours late", "* * * * *", "0 0 * * *", at(-34 * time.Hour), at(7 * time.Hour), at(-10 * time.Hour)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cj := cronJob(sched(tc.cur), last(tc.last), seen(tc.old, "UTC"))
			p := Decide(Input{CronJob: cj, Now: tc.now})
			want := job.Name("cj", tc.owed)
			started := slices.ContainsFunc(p.Creates, func(c Create) bool { return c.Job.Name == want })
			if !started && totalMissed(p.Status) == 0 {
				t.Errorf("the run of %s, named by both schedules and owed, neither starts nor is counted: creates %v, missed %+v",
					tc.owed.UTC().Format(time.RFC3339), createdTimes(p), p.Status.MissedRuns)
			}
			// And it stays lost: the next run settles everything before it.
			cj.Status = p.Status
			startAll(p)
			later := Decide(Input{CronJob: cj, Now: tc.now.Add(time.Minute)})
			if !started && !slices.ContainsFunc(later.Creates, func(c Create) bool { return c.Job.Name == want }) && totalMissed(later.Status) == 0 {
				t.Errorf("a minute later it is still neither started nor counted: creates %v", createdTimes(later))
			}
		})
	}
}

// Forbid holds 10:00 back while 09:00 runs. Six edits meanwhile, every one of
// them naming 10:00 (a GitOps tool flapping between spellings of "hourly"):
// when 09:00 finishes, 10:00 must start, or at least be counted missed.
func TestProbeHistoryCapDropsHeldBackRun(t *testing.T) {
	nine := runOf(at(-time.Hour), "")
	cj := cronJob(last(at(-time.Hour)), active(nine), concurrency(cronv1.ForbidConcurrent), seen("0 * * * *", "UTC"))
	p := Decide(Input{CronJob: cj, Jobs: []Job{nine}, Now: at(5 * time.Second)})
	if len(p.Creates) != 0 {
		t.Fatalf("creates %v while 09:00 runs under Forbid", createdTimes(p))
	}
	cj.Status = p.Status
	spellings := []string{"@hourly", "0 */1 * * *", "0 0-23 * * *", "0 * * * *", "@hourly", "0 */1 * * *"}
	for i, s := range spellings {
		cj.Spec.Schedule = s
		p = Decide(Input{CronJob: cj, Jobs: []Job{nine}, Now: at(time.Duration(i+1) * time.Minute)})
		cj.Status = p.Status
	}
	nineDone := runOf(at(-time.Hour), batchv1.JobComplete)
	p = Decide(Input{CronJob: cj, Jobs: []Job{nineDone}, Now: at(20 * time.Minute)})
	if len(p.Creates) == 0 && totalMissed(p.Status) == 0 {
		t.Errorf("after six edits that all name 10:00, the held-back 10:00 run neither starts nor is counted when 09:00 finishes; previous schedules %+v",
			p.Status.PreviousSchedules)
	}
}

// Forbid holds 10:00 back; the user edits the schedule to :30 at 10:05. 10:00
// can no longer start (the new schedule does not name it): it must be
// counted as missed once, not vanish.
func TestProbeEditDropsHeldBackRunUncounted(t *testing.T) {
	nine := runOf(at(-time.Hour), "")
	cj := cronJob(last(at(-time.Hour)), active(nine), concurrency(cronv1.ForbidConcurrent), seen("0 * * * *", "UTC"))
	p := Decide(Input{CronJob: cj, Jobs: []Job{nine}, Now: at(5 * time.Second)})
	cj.Status = p.Status
	if c := meta.FindStatusCondition(cj.Status.Conditions, cronv1.ConditionLastRunStarted); c == nil || c.Status != metav1.ConditionFalse {
		t.Fatalf("10:00 not held back: %+v", c)
	}
	cj.Spec.Schedule = "30 * * * *"
	p = Decide(Input{CronJob: cj, Jobs: []Job{nine}, Now: at(5 * time.Minute)})
	cj.Status = p.Status
	// 09:00 finishes at 10:10; then 10:30 comes and starts.
	nineDone := runOf(at(-time.Hour), batchv1.JobComplete)
	p = Decide(Input{CronJob: cj, Jobs: []Job{nineDone}, Now: at(10 * time.Minute)})
	cj.Status = p.Status
	p = Decide(Input{CronJob: cj, Jobs: []Job{nineDone}, Now: at(30*time.Minute + time.Second)})
	startAll(p)
	if got := createdTimes(p); !slices.Equal(got, []string{"05-01T10:30:00"}) {
		t.Errorf("at 10:30 created %q", got)
	}
	if totalMissed(p.Status) == 0 {
		t.Errorf("the held-back 10:00 run was dropped by the edit without being counted: missedRuns %+v, LastRunStarted %+v",
			p.Status.MissedRuns, meta.FindStatusCondition(p.Status.Conditions, cronv1.ConditionLastRunStarted))
	}
}

// A Job the CronJob controls whose scheduled-at lies in the future (written
// while the controller's clock was a day ahead, or by hand) moves
// lastScheduleTime there; every run until then is then neither started nor
// counted.
func TestProbeFutureScheduledAtSilencesRuns(t *testing.T) {
	future := runOf(at(24*time.Hour), batchv1.JobComplete)
	cj := cronJob(last(at(-time.Hour)), seen("0 * * * *", "UTC"))
	p := Decide(Input{CronJob: cj, Jobs: []Job{future}, Now: at(5 * time.Second)})
	if len(p.Creates) == 0 && totalMissed(p.Status) == 0 {
		t.Errorf("a Job scheduled-at tomorrow silences today's 10:00 run: no create, no count; lastScheduleTime %v, next %v",
			p.Status.LastScheduleTime, p.Status.NextScheduleTime)
	}
}

// "Each distinct value starts one Job, also across controller restarts"
// (README). A -> B -> A: whether A runs a second time depends on whether its
// first Job is still in the history.
func TestProbeRunNowValueBackAndForth(t *testing.T) {
	decide := func(aJobKept bool) int {
		cj := cronJob(last(at(-time.Hour)), func(cj *cronv1.CronJob) {
			cj.Annotations = map[string]string{cronv1.RunNowAnnotation: "A"}
			cj.Status.LastRunNow = "B"
		})
		var jobs []Job
		if aJobKept {
			name := job.ManualName("cj", "cj-uid", "", "A", 0)
			jobs = append(jobs, &fakeJob{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: "uid-a"}, manual: true, finished: batchv1.JobComplete})
		}
		return len(Decide(Input{CronJob: cj, Jobs: jobs, Now: at(-30 * time.Minute)}).Creates)
	}
	kept, pruned := decide(true), decide(false)
	if kept != pruned {
		t.Errorf("run-now A->B->A: %d Jobs when A's first Job is still kept, %d when it was pruned", kept, pruned)
	}
}

// Two distinct run-now values whose FNV-32a hashes collide (as the names
// once used) get Jobs of their own.
func TestProbeRunNowNameCollision(t *testing.T) {
	a, b := fnvCollision(t)
	if job.ManualName("cj", "cj-uid", "", a, 0) == job.ManualName("cj", "cj-uid", a, b, 0) || job.ManualName("cj", "cj-uid", "", a, 0) == job.ManualName("cj", "cj-uid", "", b, 0) {
		t.Fatalf("%q and %q get the same Job name", a, b)
	}
	aJob := &fakeJob{ObjectMeta: metav1.ObjectMeta{Name: job.ManualName("cj", "cj-uid", "", a, 0), Namespace: "default", UID: "uid-a"}, manual: true, finished: batchv1.JobComplete}
	cj := cronJob(last(at(-time.Hour)), func(cj *cronv1.CronJob) {
		cj.Annotations = map[string]string{cronv1.RunNowAnnotation: b}
		cj.Status.LastRunNow = a
	})
	p := Decide(Input{CronJob: cj, Jobs: []Job{aJob}, Now: at(-30 * time.Minute)})
	if len(p.Creates) == 0 {
		t.Errorf("run-now %q (distinct from the handled %q) silently never runs: status.lastRunNow=%q, no Job, no Event %v",
			b, a, p.Status.LastRunNow, p.Events)
	}
}

// fnvCollision finds two unix-timestamp run-now values, as the README's
// `date +%s` makes them, with the same FNV-32a hash.
func fnvCollision(t *testing.T) (string, string) {
	seen := map[uint32]string{}
	for v := int64(1777000000); v < 1777000000+1<<20; v++ {
		s := fmt.Sprint(v)
		h := fnv.New32a()
		h.Write([]byte(s))
		sum := h.Sum32()
		if prev, ok := seen[sum]; ok {
			return prev, s
		}
		seen[sum] = s
	}
	t.Skip("no collision in range")
	return "", ""
}

// Forbid holds a daily run back with a 5-minute starting deadline. The miss
// happens at 10:05; nothing wakes the CronJob then (the next wake-up is
// tomorrow's run), so missedRuns and LastRunStarted say nothing of it for a
// day unless the blocking Job happens to finish.
func TestProbeForbidDeadlineWakesToCount(t *testing.T) {
	prev := at(-24 * time.Hour)
	j := runOf(prev, "")
	cj := cronJob(sched("0 10 * * *"), last(prev), active(j), concurrency(cronv1.ForbidConcurrent), deadline(300))
	p := Decide(Input{CronJob: cj, Jobs: []Job{j}, Now: at(5 * time.Second)})
	if p.RequeueAfter > 5*time.Minute {
		t.Errorf("held back with a 5m deadline, the CronJob sleeps %v: the miss at 10:05 is not counted until then", p.RequeueAfter)
	}
}

// ---- Probes that are expected to hold ----

// Catch-up All with a create failing retryably in the middle: the runs
// before it start, none after it, and the retry starts the rest, each once.
func TestProbeCatchUpAllRetryInTheMiddle(t *testing.T) {
	for _, limit := range []int32{1, 3, 100} {
		t.Run(fmt.Sprint(limit), func(t *testing.T) {
			cj := cronJob(last(at(-6*time.Hour)), catchUpAll(limit), seen("0 * * * *", "UTC"))
			p := Decide(Input{CronJob: cj, Now: at(time.Second)})
			var jobs []*fakeJob
			startedAt := map[string]int{}
			for i, c := range p.Creates {
				if i == 1 {
					p.CreateFailed(c, fmt.Errorf("etcd is sad"))
					break
				}
				j := runOf(c.Time, "")
				p.Started(c, j, true)
				jobs = append(jobs, j)
				startedAt[j.Name]++
			}
			cj.Status = p.Status
			for step := 0; step < 3; step++ {
				p = Decide(Input{CronJob: cj, Jobs: asJobs(jobs), Now: at(time.Duration(2+step) * time.Second)})
				for _, made := range startAll(p) {
					jobs = append(jobs, made)
					startedAt[made.Name]++
				}
				cj.Status = p.Status
			}
			want := int(min(limit, 6))
			if len(startedAt) != want {
				t.Errorf("started %v, want %d runs", startedAt, want)
			}
			for n, k := range startedAt {
				if k != 1 {
					t.Errorf("%s started %d times", n, k)
				}
			}
			if !cj.Status.LastScheduleTime.Time.Equal(ten) {
				t.Errorf("lastScheduleTime %v", cj.Status.LastScheduleTime)
			}
		})
	}
}

// An edit back to the original schedule, and an edit while suspended, are
// recorded and decide as the rule says.
func TestProbeEditBackAndWhileSuspended(t *testing.T) {
	// 0 * -> 30 * (10:10) -> 0 * (10:20), seen at those times, last 09:00,
	// the controller never ran 10:00 (it was down until 10:10).
	cj := cronJob(last(at(-time.Hour)), seen("0 * * * *", "UTC"), sched("30 * * * *"))
	p := Decide(Input{CronJob: cj, Now: at(10 * time.Minute)})
	if len(p.Creates) != 0 {
		t.Errorf("10:10, after 0->30: creates %v", createdTimes(p))
	}
	cj.Status = p.Status
	cj.Spec.Schedule = "0 * * * *"
	p = Decide(Input{CronJob: cj, Now: at(20 * time.Minute)})
	if len(p.Creates) != 0 {
		t.Errorf("10:20, back to 0: creates %v (10:00 was not named by 30 * in force 10:10-10:20)", createdTimes(p))
	}
	cj.Status = p.Status
	p = Decide(Input{CronJob: cj, Now: at(time.Hour + time.Second)})
	if got := createdTimes(p); !slices.Equal(got, []string{"05-01T11:00:00"}) {
		t.Errorf("11:00: creates %v", got)
	}

	// Suspended at 09:00; edited at 09:30 to :45; resumed at 10:50.
	cj = cronJob(last(at(-time.Hour)), seen("0 * * * *", "UTC"), func(cj *cronv1.CronJob) { cj.Spec.Suspend = ptr.To(true) })
	cj.Spec.Schedule = "45 * * * *"
	p = Decide(Input{CronJob: cj, Now: at(-30 * time.Minute)})
	if len(p.Status.PreviousSchedules) != 1 || p.Status.NextScheduleTime != nil {
		t.Errorf("edit while suspended: previous %+v next %v", p.Status.PreviousSchedules, p.Status.NextScheduleTime)
	}
	cj.Status = p.Status
	cj.Spec.Suspend = ptr.To(false)
	p = Decide(Input{CronJob: cj, Now: at(50 * time.Minute)})
	if got := createdTimes(p); !slices.Equal(got, []string{"05-01T10:45:00"}) {
		t.Errorf("resume at 10:50: creates %v, want 10:45", got)
	}
}

// Odd clocks: now exactly on a scheduled time, sub-second now, a clock that
// steps back after a run.
func TestProbeOddClocks(t *testing.T) {
	cj := cronJob(last(at(-time.Hour)), seen("0 * * * *", "UTC"))
	p := Decide(Input{CronJob: cj, Now: ten})
	if got := createdTimes(p); !slices.Equal(got, []string{"05-01T10:00:00"}) {
		t.Errorf("now == 10:00: creates %v", got)
	}
	startAll(p)
	cj.Status = p.Status
	for _, now := range []time.Time{ten.Add(-time.Nanosecond), ten.Add(-time.Hour), ten.Add(999 * time.Millisecond)} {
		q := Decide(Input{CronJob: cj, Jobs: []Job{runOf(ten, "")}, Now: now})
		if len(q.Creates) != 0 || q.RequeueAfter <= 0 {
			t.Errorf("now %v after the 10:00 run: creates %v requeue %v", now, createdTimes(q), q.RequeueAfter)
		}
		if !q.Status.LastScheduleTime.Time.Equal(ten) {
			t.Errorf("now %v: lastScheduleTime went to %v", now, q.Status.LastScheduleTime)
		}
	}
	// @every from a sub-second creation.
	cj = cronJob(sched("@every 10s"), func(cj *cronv1.CronJob) { cj.CreationTimestamp = metav1.NewTime(ten.Add(300 * time.Millisecond)) })
	p = Decide(Input{CronJob: cj, Now: ten.Add(10*time.Second + 500*time.Millisecond)})
	if got := createdTimes(p); !slices.Equal(got, []string{"05-01T10:00:10"}) {
		t.Errorf("@every 10s: creates %v", got)
	}
	startAll(p)
	cj.Status = p.Status
	p = Decide(Input{CronJob: cj, Jobs: []Job{runOf(ten.Add(10*time.Second), "")}, Now: ten.Add(10*time.Second + 900*time.Millisecond)})
	if len(p.Creates) != 0 || p.RequeueAfter <= 0 {
		t.Errorf("@every 10s again: creates %v requeue %v", createdTimes(p), p.RequeueAfter)
	}
}

// Job annotation oddities that must not start or lose a run: scheduled-at far
// in the past, a finished Job being deleted, an unfinished Job being deleted.
func TestProbeJobOddities(t *testing.T) {
	old := runOf(at(-10*365*24*time.Hour), batchv1.JobComplete)
	deleting := runOf(at(-time.Hour), batchv1.JobComplete)
	deleting.DeletionTimestamp = ptr.To(metav1.NewTime(ten))
	cj := cronJob(last(at(-time.Hour)), active(deleting))
	p := Decide(Input{CronJob: cj, Jobs: []Job{old, deleting}, Now: at(time.Second)})
	if got := createdTimes(p); !slices.Equal(got, []string{"05-01T10:00:00"}) || len(p.Status.Active) != 0 {
		t.Errorf("creates %v, active %+v", got, p.Status.Active)
	}
	for _, d := range p.Deletes {
		if d.UID == deleting.UID {
			t.Errorf("a Job being deleted is deleted again: %+v", d)
		}
	}
}

// A sync's cost is bounded: schedules that rarely agree, long outages, full
// history.
func TestProbeWorstCaseSyncIsBounded(t *testing.T) {
	cj := cronJob(sched("* * 29 2 *"), zone("America/New_York"), catchUpAll(100), func(cj *cronv1.CronJob) {
		cj.CreationTimestamp = metav1.NewTime(at(-9 * 365 * 24 * time.Hour))
	}, seen("* * 29 2 *", "America/New_York"))
	for i, s := range []string{"0 0 29 2 *", "30 2 29 2 *", "@every 7s", "59 23 29 2 *", "* * 29 2 1"} {
		history(s, "Australia/Lord_Howe", at(time.Duration(-i)*time.Second))(cj)
	}
	start := time.Now()
	p := Decide(Input{CronJob: cj, Now: at(time.Second)})
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("one Decide took %v", d)
	} else {
		t.Logf("one Decide took %v (%d creates)", d, len(p.Creates))
	}
}

// A daily "45 1 * * *" in Australia/Lord_Howe, synced on time at every
// wake-up the plan asks for, across the spring change of 2026-10-04 (02:00
// +10:30 -> 02:30 +11): one run per local day.
func TestProbeLordHoweSpringRunsTwice(t *testing.T) {
	loc, err := time.LoadLocation("Australia/Lord_Howe")
	if err != nil {
		t.Fatal(err)
	}
	for _, spec := range []string{"45 1 * * *", "30 1 * * *"} {
		t.Run(spec, func(t *testing.T) {
			start := time.Date(2026, 10, 2, 12, 0, 0, 0, loc)
			cj := cronJob(sched(spec), zone("Australia/Lord_Howe"), func(cj *cronv1.CronJob) { cj.CreationTimestamp = metav1.NewTime(start) })
			now := start
			var jobs []*fakeJob
			perDay := map[string][]string{}
			for range 10 {
				p := Decide(Input{CronJob: cj, Jobs: asJobs(jobs), Now: now})
				for _, j := range startAll(p) {
					jobs = append(jobs, j)
					day := j.scheduled.In(loc).Format("2006-01-02")
					perDay[day] = append(perDay[day], j.scheduled.In(loc).Format("15:04 -0700"))
				}
				cj.Status = p.Status
				if p.RequeueAfter <= 0 {
					t.Fatal("no wake-up")
				}
				now = now.Add(p.RequeueAfter)
			}
			for day, runs := range perDay {
				if len(runs) != 1 {
					t.Errorf("%s: %d runs on %s: %v", spec, len(runs), day, runs)
				}
			}
		})
	}
}

// A new run-now value while the previous value's Job still runs: one more
// Job, whatever the policy; the same value again: none.
func TestProbeRunNowChangedWhileActive(t *testing.T) {
	for _, pol := range []cronv1.ConcurrencyPolicy{cronv1.AllowConcurrent, cronv1.ForbidConcurrent, cronv1.ReplaceConcurrent} {
		a := &fakeJob{ObjectMeta: metav1.ObjectMeta{Name: job.ManualName("cj", "cj-uid", "", "A", 0), Namespace: "default", UID: "uid-a"}, manual: true}
		cj := cronJob(last(at(-time.Hour)), concurrency(pol), active(a), func(cj *cronv1.CronJob) {
			cj.Annotations = map[string]string{cronv1.RunNowAnnotation: "B"}
			cj.Status.LastRunNow = "A"
		})
		p := Decide(Input{CronJob: cj, Jobs: []Job{a}, Now: at(-30 * time.Minute)})
		if len(p.Creates) != 1 || !p.Creates[0].Manual || len(p.Deletes) != 0 {
			t.Errorf("%s: creates %+v deletes %+v", pol, p.Creates, p.Deletes)
		}
		startAll(p)
		cj.Status = p.Status
		b := &fakeJob{ObjectMeta: metav1.ObjectMeta{Name: job.ManualName("cj", "cj-uid", "A", "B", 1), Namespace: "default", UID: "uid-" + types.UID(job.ManualName("cj", "cj-uid", "A", "B", 1))}, manual: true}
		if p := Decide(Input{CronJob: cj, Jobs: []Job{a, b}, Now: at(-29 * time.Minute)}); len(p.Creates) != 0 {
			t.Errorf("%s: B again: creates %+v", pol, p.Creates)
		}
	}
}
