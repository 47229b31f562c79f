package planner

import (
	"slices"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	cronv1 "github.com/cronjob-controller/cronjob-controller/pkg/apis/batch/v1"
	"github.com/cronjob-controller/cronjob-controller/pkg/job"
)

func maxRuns(n int64) func(*cronv1.CronJob) {
	return func(cj *cronv1.CronJob) { cj.Spec.MaxRuns = &n }
}

func runCount(n int64) func(*cronv1.CronJob) {
	return func(cj *cronv1.CronJob) { cj.Status.ScheduledRunCount = n }
}

// conditionOf is a condition as "Status/Reason", "" when absent.
func conditionOf(st cronv1.CronJobStatus, typ string) string {
	if c := meta.FindStatusCondition(st.Conditions, typ); c != nil {
		return string(c.Status) + "/" + c.Reason
	}
	return ""
}

// maxRunsCase is a row of TestDecideMaxRuns: a sync decided and carried
// out by a controller whose creates all succeed.
type maxRunsCase struct {
	name    string
	cronJob *cronv1.CronJob
	jobs    []*fakeJob
	records []*fakeJob
	now     time.Time

	wantStarted []string
	wantCount   int64
	// wantExpired and wantReady are the conditions as "Status/Reason".
	wantExpired, wantReady string
	wantNext               time.Time
	wantRequeue            time.Duration
	wantMissed             map[string]int64
	wantEvents             []string
}

func (tc maxRunsCase) run(t *testing.T) {
	t.Helper()
	p := Decide(Input{CronJob: tc.cronJob, Jobs: asJobs(tc.jobs), Records: asJobs(tc.records), Now: tc.now})
	made := startAll(p)
	if got := names(made, func(j *fakeJob) string { return j.Name }); !slices.Equal(got, tc.wantStarted) {
		t.Errorf("started %q, want %q", got, tc.wantStarted)
	}
	if got := p.Status.ScheduledRunCount; got != tc.wantCount {
		t.Errorf("scheduledRunCount %d, want %d", got, tc.wantCount)
	}
	if got := conditionOf(p.Status, cronv1.ConditionExpired); got != tc.wantExpired {
		t.Errorf("Expired %q, want %q", got, tc.wantExpired)
	}
	if got := conditionOf(p.Status, cronv1.ConditionReady); tc.wantReady != "" && got != tc.wantReady {
		t.Errorf("Ready %q, want %q", got, tc.wantReady)
	}
	if got := p.Status.NextScheduleTime; (got == nil) != tc.wantNext.IsZero() || (got != nil && !got.Time.Equal(tc.wantNext)) {
		t.Errorf("nextScheduleTime %v, want %v", got, tc.wantNext)
	}
	if p.RequeueAfter != tc.wantRequeue {
		t.Errorf("requeue %v, want %v", p.RequeueAfter, tc.wantRequeue)
	}
	if got := missedOf(p.Status); !mapsEqual(got, tc.wantMissed) {
		t.Errorf("missed %v, want %v", got, tc.wantMissed)
	}
	var reasons []string
	for _, e := range p.Events {
		if e.Reason != ReasonSuccessfulCreate {
			reasons = append(reasons, e.Reason)
		}
	}
	if !slices.Equal(reasons, tc.wantEvents) {
		t.Errorf("events %q, want %q", reasons, tc.wantEvents)
	}
}

func TestDecideMaxRuns(t *testing.T) {
	reached := "True/" + ReasonMaxRunsReached
	remaining := "False/" + reasonRunsRemaining
	ready := "True/" + ReasonScheduling
	stopped := "False/" + ReasonMaxRunsReached
	reachedMsg := func(n, m int64) string {
		return (&Plan{cj: cronJob(maxRuns(m)), Status: cronv1.CronJobStatus{ScheduledRunCount: n}}).maxRunsMessage()
	}
	for _, tc := range []maxRunsCase{
		{name: "runs remain: the run starts and is counted; Expired False says how many have started",
			cronJob: cronJob(last(at(-time.Hour)), maxRuns(3), runCount(1)), now: at(time.Second),
			wantStarted: hours(10), wantCount: 2, wantExpired: remaining, wantReady: ready,
			wantNext: at(time.Hour), wantRequeue: time.Hour - time.Second},
		{name: "the last run: counted, Expired True and Ready False in the same status, no next time, one Event",
			cronJob: cronJob(last(at(-time.Hour)), maxRuns(3), runCount(2)), now: at(time.Second),
			wantStarted: hours(10), wantCount: 3, wantExpired: reached, wantReady: stopped,
			// The wake-up was planned before the run started; the sync
			// it brings plans none.
			wantRequeue: time.Hour - time.Second, wantEvents: []string{ReasonMaxRunsReached}},
		{name: "reached: later times are no runs: not started, not counted missed, no next time, no wake-up",
			cronJob: cronJob(last(at(-time.Hour)), maxRuns(3), runCount(3)), now: at(5 * time.Hour),
			wantCount: 3, wantExpired: reached, wantReady: stopped, wantEvents: []string{ReasonMaxRunsReached}},
		{name: "reached and said: no second Event",
			cronJob: cronJob(last(at(-time.Hour)), maxRuns(3), runCount(3),
				condition(cronv1.ConditionExpired, metav1.ConditionTrue, ReasonMaxRunsReached, reachedMsg(3, 3))), now: at(5 * time.Hour),
			wantCount: 3, wantExpired: reached, wantReady: stopped},
		{name: "reached, notAfter passed too: MaxRunsReached stays the reason",
			cronJob: cronJob(last(at(-time.Hour)), maxRuns(3), runCount(3), notAfter(at(time.Hour)),
				condition(cronv1.ConditionExpired, metav1.ConditionTrue, ReasonMaxRunsReached, reachedMsg(3, 3))), now: at(5 * time.Hour),
			wantCount: 3, wantExpired: reached, wantReady: stopped},
		{name: "catch-up All with 5 runs owed and 2 left starts the oldest 2, counts none of the rest missed",
			cronJob: cronJob(last(at(-6*time.Hour)), catchUpAll(10), maxRuns(4), runCount(2)), now: at(-time.Hour + time.Second),
			wantStarted: hours(5, 6), wantCount: 4, wantExpired: reached, wantReady: stopped,
			wantRequeue: time.Hour - time.Second, wantEvents: []string{ReasonMaxRunsReached}},
		{name: "catch-up All under Forbid: one run starts, the rest wait, uncounted",
			cronJob: cronJob(last(at(-6*time.Hour)), catchUpAll(10), concurrency(cronv1.ForbidConcurrent), maxRuns(4), runCount(2)), now: at(-time.Hour + time.Second),
			wantStarted: hours(5), wantCount: 3, wantExpired: remaining, wantReady: ready,
			wantNext: ten, wantRequeue: time.Hour - time.Second},
		{name: "a skip after the last run allowed is no run: not counted Skipped",
			cronJob: cronJob(last(at(-4*time.Hour)), catchUpAll(10), maxRuns(4), runCount(3), func(cj *cronv1.CronJob) {
				cj.Spec.SkipTimes = []metav1.Time{metav1.NewTime(at(-2 * time.Hour))}
			}), now: at(-time.Hour + time.Second),
			wantStarted: hours(7), wantCount: 4, wantExpired: reached, wantReady: stopped,
			wantRequeue: time.Hour - time.Second, wantEvents: []string{ReasonMaxRunsReached}},
		{name: "a skip before the last run allowed is counted, and does not use up a run",
			cronJob: cronJob(last(at(-4*time.Hour)), catchUpAll(10), maxRuns(4), runCount(3), func(cj *cronv1.CronJob) {
				cj.Spec.SkipTimes = []metav1.Time{metav1.NewTime(at(-3 * time.Hour))}
			}), now: at(-time.Hour + time.Second),
			wantStarted: hours(8), wantCount: 4, wantExpired: reached, wantReady: stopped, wantMissed: map[string]int64{cronv1.MissedSkipped: 1},
			wantRequeue: time.Hour - time.Second, wantEvents: []string{ReasonRunSkipped, ReasonMaxRunsReached}},
		{name: "raised: the CronJob goes on; the times since the last run are owed under Latest, as after moving notAfter later",
			cronJob: cronJob(last(at(-3*time.Hour)), maxRuns(5), runCount(3),
				condition(cronv1.ConditionExpired, metav1.ConditionTrue, ReasonMaxRunsReached, reachedMsg(3, 3))), now: at(time.Second),
			wantStarted: hours(10), wantCount: 4, wantExpired: remaining, wantReady: ready, wantMissed: map[string]int64{cronv1.MissedSuperseded: 2},
			wantNext: at(time.Hour), wantRequeue: time.Hour - time.Second},
		{name: "lowered below the count: stopped at once",
			cronJob: cronJob(last(at(-time.Hour)), maxRuns(2), runCount(3)), now: at(time.Second),
			wantCount: 3, wantExpired: reached, wantReady: stopped, wantEvents: []string{ReasonMaxRunsReached}},
		{name: "a run-now is not counted, and starts when maxRuns is reached",
			cronJob: cronJob(last(at(-time.Hour)), maxRuns(1), runCount(1), runNowValue("now")), now: at(time.Second),
			wantStarted: []string{job.ManualName("cj", "cj-uid", "", "now", 1)}, wantCount: 1, wantExpired: reached, wantReady: stopped,
			wantEvents: []string{ReasonMaxRunsReached}},
		{name: "a Job whose run the status does not count (a write lost) is counted once, and the next run is the last",
			cronJob: cronJob(last(at(-2*time.Hour)), maxRuns(3), runCount(1)), jobs: []*fakeJob{runOf(at(-time.Hour), "")}, now: at(time.Second),
			wantStarted: hours(10), wantCount: 3, wantExpired: reached, wantReady: stopped,
			wantRequeue: time.Hour - time.Second, wantEvents: []string{ReasonMaxRunsReached}},
		{name: "unrecorded Jobs are counted whatever order the cache lists them in, finished or not",
			cronJob: cronJob(last(at(-4*time.Hour)), maxRuns(3), runCount(0)),
			jobs:    []*fakeJob{runOf(at(-time.Hour), batchv1.JobComplete), runOf(at(-3*time.Hour), ""), runOf(at(-2*time.Hour), batchv1.JobFailed)}, now: at(time.Second),
			wantCount: 3, wantExpired: reached, wantReady: stopped, wantEvents: []string{ReasonMaxRunsReached}},
		{name: "a Job the status counts already is not counted again (a cache older than the status)",
			cronJob: cronJob(last(at(-time.Hour)), maxRuns(3), runCount(2)), jobs: []*fakeJob{runOf(at(-time.Hour), ""), runOf(at(-2*time.Hour), "")}, now: at(time.Second),
			wantStarted: hours(10), wantCount: 3, wantExpired: reached, wantReady: stopped,
			wantRequeue: time.Hour - time.Second, wantEvents: []string{ReasonMaxRunsReached}},
		{name: "a detached Job that records an unrecorded run counts",
			cronJob: cronJob(last(at(-2*time.Hour)), maxRuns(2), runCount(1)), records: []*fakeJob{holding(runOf(at(-time.Hour), batchv1.JobComplete))}, now: at(time.Second),
			wantCount: 2, wantExpired: reached, wantReady: stopped, wantEvents: []string{ReasonMaxRunsReached}},
		{name: "a run-now Job is not counted when it shows up unrecorded",
			cronJob: cronJob(last(at(-time.Hour)), maxRuns(3), runCount(1)), jobs: []*fakeJob{manualRun("cj-manual")}, now: at(time.Second),
			wantStarted: hours(10), wantCount: 2, wantExpired: remaining, wantReady: ready,
			wantNext: at(time.Hour), wantRequeue: time.Hour - time.Second},
		{name: "a Job for a time still to come is not a run yet, and not counted",
			cronJob: cronJob(last(at(-time.Hour)), maxRuns(3), runCount(1)), jobs: []*fakeJob{runOf(at(2*time.Hour), "")}, now: at(time.Second),
			wantStarted: hours(10), wantCount: 2, wantExpired: remaining, wantReady: ready,
			wantNext: at(time.Hour), wantRequeue: time.Hour - time.Second},
		{name: "suspended: the count and the condition are kept up all the same",
			cronJob: cronJob(last(at(-2*time.Hour)), maxRuns(2), runCount(1), func(cj *cronv1.CronJob) { cj.Spec.Suspend = new(true) }),
			jobs:    []*fakeJob{runOf(at(-time.Hour), "")}, now: at(time.Second),
			wantCount: 2, wantExpired: reached, wantReady: stopped, wantEvents: []string{ReasonMaxRunsReached}},
		{name: "lastScheduleTime set back by hand: the runs after it whose Jobs are there count again (docs/features.md says so)",
			cronJob: cronJob(last(at(-3*time.Hour)), maxRuns(10), runCount(2)),
			jobs:    []*fakeJob{runOf(at(-2*time.Hour), batchv1.JobComplete), runOf(at(-time.Hour), batchv1.JobComplete)}, now: at(time.Second),
			wantStarted: hours(10), wantCount: 5, wantExpired: remaining, wantReady: ready,
			wantNext: at(time.Hour), wantRequeue: time.Hour - time.Second},
		{name: "unset: counted all the same, no condition",
			cronJob: cronJob(last(at(-time.Hour)), runCount(7)), now: at(time.Second),
			wantStarted: hours(10), wantCount: 8, wantReady: ready, wantNext: at(time.Hour), wantRequeue: time.Hour - time.Second},
	} {
		t.Run(tc.name, tc.run)
	}
}

// maxRunsWalk syncs cj from..to every step, carrying each plan out and
// writing its status back, and returns the scheduled times started.
func maxRunsWalk(t *testing.T, cj *cronv1.CronJob, from, to time.Time, step time.Duration) ([]time.Time, []*fakeJob, *Plan) {
	t.Helper()
	var jobs []*fakeJob
	var started []time.Time
	var p *Plan
	for now := from; !now.After(to); now = now.Add(step) {
		p = Decide(Input{CronJob: cj, Jobs: asJobs(jobs), Now: now})
		for _, j := range startAll(p) {
			jobs = append(jobs, j)
			if !j.manual {
				started = append(started, j.scheduled)
			}
		}
		cj = cj.DeepCopy()
		cj.Status = p.Status
	}
	return started, jobs, p
}

func TestMaxRunsStopsAfterTheLastScheduledRun(t *testing.T) {
	cj := cronJob(sched("*/10 * * * *"), maxRuns(3), func(cj *cronv1.CronJob) { cj.CreationTimestamp = metav1.NewTime(ten) })
	started, _, p := maxRunsWalk(t, cj, at(time.Second), at(3*time.Hour), 5*time.Minute)
	if want := []time.Time{at(10 * time.Minute), at(20 * time.Minute), at(30 * time.Minute)}; !slices.EqualFunc(started, want, time.Time.Equal) {
		t.Errorf("started %v, want %v", fmtTimes(started), fmtTimes(want))
	}
	st := p.Status
	if st.ScheduledRunCount != 3 || st.NextScheduleTime != nil || p.RequeueAfter != 0 || totalMissed(st) != 0 {
		t.Errorf("after the last run: count %d, next %v, requeue %v, missed %v; want 3, unset, none, none",
			st.ScheduledRunCount, st.NextScheduleTime, p.RequeueAfter, missedOf(st))
	}
	if got := conditionOf(st, cronv1.ConditionReady); got != "False/"+ReasonMaxRunsReached {
		t.Errorf("Ready %s, want False/%s", got, ReasonMaxRunsReached)
	}
}

func TestMaxRunsCountsARunOnceThroughALostStatusWrite(t *testing.T) {
	// maxRuns 2. The 10:00 sync starts the first run; its status write is
	// lost. The 11:00 sync starts from the old status and sees 10:00's Job
	// (counted now, once) and starts 11:00, the last; a sync from the same
	// old status again (a stale cache) counts both Jobs, once each, and
	// starts nothing.
	cj := cronJob(last(at(-time.Hour)), maxRuns(2))
	p1 := Decide(Input{CronJob: cj, Now: at(time.Second)})
	jobs := startAll(p1)
	if p1.Status.ScheduledRunCount != 1 {
		t.Fatalf("first run: count %d, want 1", p1.Status.ScheduledRunCount)
	}
	// p1.Status is lost.
	p2 := Decide(Input{CronJob: cj, Jobs: asJobs(jobs), Now: at(time.Hour + time.Second)})
	jobs = append(jobs, startAll(p2)...)
	if got := createdTimes(p2); !slices.Equal(got, []string{"05-01T11:00:00"}) || p2.Status.ScheduledRunCount != 2 {
		t.Fatalf("after the lost write: started %v, count %d; want 11:00, 2", got, p2.Status.ScheduledRunCount)
	}
	for _, now := range []time.Time{at(time.Hour + 2*time.Second), at(5 * time.Hour)} {
		p3 := Decide(Input{CronJob: cj, Jobs: asJobs(jobs), Now: now})
		if len(p3.Creates) != 0 || p3.Status.ScheduledRunCount != 2 || conditionOf(p3.Status, cronv1.ConditionExpired) != "True/"+ReasonMaxRunsReached {
			t.Errorf("from the stale status at %s: creates %v, count %d, Expired %s; want none, 2, MaxRunsReached",
				formatTime(now), createdTimes(p3), p3.Status.ScheduledRunCount, conditionOf(p3.Status, cronv1.ConditionExpired))
		}
	}
}

func TestMaxRunsWithCatchUpAllStartsNoMoreThanTheRest(t *testing.T) {
	// Down from 04:00 to 10:00: six runs owed, three left. The first
	// create is refused for good (its name taken): it is missed, not a
	// run, and the next owed takes its place in the same sync; once three
	// have started no more is wanted.
	cj := cronJob(last(at(-7*time.Hour)), catchUpAll(10), maxRuns(5), runCount(2))
	p := Decide(Input{CronJob: cj, Now: at(time.Second)})
	var jobs []*fakeJob
	var started []time.Time
	for i, c := range p.Creates {
		if !p.Wants(c) {
			continue
		}
		if i == 0 {
			p.NotStarted(c, NameTaken, "")
			continue
		}
		j := runOf(c.Time, "")
		p.Started(c, j, true)
		jobs = append(jobs, j)
		started = append(started, c.Time)
	}
	if want := []time.Time{at(-5 * time.Hour), at(-4 * time.Hour), at(-3 * time.Hour)}; !slices.EqualFunc(started, want, time.Time.Equal) ||
		p.Status.ScheduledRunCount != 5 || missedFor(p.Status, cronv1.MissedNameTaken) != 1 {
		t.Fatalf("started %v, count %d, NameTaken %d; want %v, 5, 1", fmtTimes(started), p.Status.ScheduledRunCount,
			missedFor(p.Status, cronv1.MissedNameTaken), fmtTimes(want))
	}
	next := cj.DeepCopy()
	next.Status = p.Status
	p2 := Decide(Input{CronJob: next, Jobs: asJobs(jobs), Now: at(2 * time.Second)})
	if made := startAll(p2); len(made) != 0 || p2.Status.ScheduledRunCount != 5 {
		t.Errorf("next sync: started %d, count %d; want none, 5", len(made), p2.Status.ScheduledRunCount)
	}
	if totalMissed(p2.Status) != 1 || p2.Status.NextScheduleTime != nil {
		t.Errorf("missed %v, next %v; want only the refused run, no next time", missedOf(p2.Status), p2.Status.NextScheduleTime)
	}
}

func TestMaxRunsRaisedLetsTheCronJobGoOn(t *testing.T) {
	cj := cronJob(sched("*/10 * * * *"), maxRuns(1), func(cj *cronv1.CronJob) { cj.CreationTimestamp = metav1.NewTime(ten) })
	started, jobs, p := maxRunsWalk(t, cj, at(time.Second), at(time.Hour), 10*time.Minute)
	if len(started) != 1 {
		t.Fatalf("maxRuns 1: started %v", fmtTimes(started))
	}
	cj = cj.DeepCopy()
	cj.Status = p.Status
	cj.Spec.MaxRuns = new(int64(3))
	cj.Generation++
	for _, now := range []time.Time{at(time.Hour + 5*time.Minute), at(time.Hour + 10*time.Minute + time.Second), at(time.Hour + 20*time.Minute + time.Second), at(2 * time.Hour)} {
		p = Decide(Input{CronJob: cj, Jobs: asJobs(jobs), Now: now})
		for _, j := range startAll(p) {
			jobs = append(jobs, j)
			started = append(started, j.scheduled)
		}
		cj.Status = p.Status
	}
	// 11:05 starts 11:00 (10:20..10:50 superseded), then 11:10: the third.
	if want := []time.Time{at(10 * time.Minute), at(time.Hour), at(time.Hour + 10*time.Minute)}; !slices.EqualFunc(started, want, time.Time.Equal) {
		t.Errorf("started %v, want %v", fmtTimes(started), fmtTimes(want))
	}
	if cj.Status.ScheduledRunCount != 3 || conditionOf(cj.Status, cronv1.ConditionExpired) != "True/"+ReasonMaxRunsReached {
		t.Errorf("count %d, Expired %s; want 3, MaxRunsReached", cj.Status.ScheduledRunCount, conditionOf(cj.Status, cronv1.ConditionExpired))
	}
}

// docs/features.md, Run limits: once the count reaches maxRuns, Expired is
// True with the reason MaxRunsReached, and lowering maxRuns to the count
// stops the CronJob at once; docs/api.md: Expired is there only with
// notAfter or maxRuns. An edit of maxRuns says so whatever the schedule:
// one that cannot be used (Ready says InvalidSchedule first) starts no run
// either way, but the condition must not go on describing a limit that
// the spec no longer sets.
func TestExpiredFollowsAMaxRunsEditWhileTheScheduleIsInvalid(t *testing.T) {
	cj := cronJob(sched("not a schedule"), maxRuns(5), last(at(-time.Hour)), runCount(2),
		condition(cronv1.ConditionExpired, metav1.ConditionFalse, reasonRunsRemaining, "scheduled runs end once spec.maxRuns (5) have started; 2 have"))

	lowered := cj.DeepCopy()
	lowered.Spec.MaxRuns = new(int64(2))
	lowered.Generation++
	p := Decide(Input{CronJob: lowered, Now: at(time.Second)})
	if got := conditionOf(p.Status, cronv1.ConditionExpired); got != "True/"+ReasonMaxRunsReached {
		t.Errorf("maxRuns lowered to the count (2), schedule invalid: Expired %q, want True/%s", got, ReasonMaxRunsReached)
	}

	removed := cj.DeepCopy()
	removed.Spec.MaxRuns = nil
	removed.Generation++
	p = Decide(Input{CronJob: removed, Now: at(time.Second)})
	if got := conditionOf(p.Status, cronv1.ConditionExpired); got != "" {
		t.Errorf("maxRuns removed (no notAfter), schedule invalid: Expired %q, want none", got)
	}
}

func TestRunNowIsNotCountedAgainstMaxRuns(t *testing.T) {
	cj := cronJob(last(at(-time.Hour)), maxRuns(1), runNowValue("a"))
	p := Decide(Input{CronJob: cj, Now: at(time.Second)})
	made := startAll(p)
	if len(made) != 2 || p.Status.ScheduledRunCount != 1 {
		t.Fatalf("started %d Jobs, count %d; want the run-now and the 10:00 run, counted 1", len(made), p.Status.ScheduledRunCount)
	}
	// Reached: another run-now still starts, and is not counted.
	next := cj.DeepCopy()
	next.Status = p.Status
	next.Annotations[cronv1.RunNowAnnotation] = "b"
	p2 := Decide(Input{CronJob: next, Jobs: asJobs(made), Now: at(2 * time.Hour)})
	made2 := startAll(p2)
	if len(made2) != 1 || !made2[0].manual || p2.Status.ScheduledRunCount != 1 {
		t.Errorf("reached: started %v, count %d; want the run-now alone, count 1", names(made2, func(j *fakeJob) string { return j.Name }), p2.Status.ScheduledRunCount)
	}
}

func TestOneTimeJobAtNotBeforeRunsOnce(t *testing.T) {
	// The recipe of docs/features.md, *Run limits*: a schedule naming the
	// instant, notBefore at it, maxRuns 1, catchUpPolicy All. Up at the
	// instant, down over it and back hours later, or looking once a month
	// for two years: the one run is the one at notBefore.
	once := time.Date(2026, 12, 1, 13, 30, 0, 0, time.UTC) // 14:30 in Berlin
	recipe := func(cj *cronv1.CronJob) {
		cj.Spec.Schedule = "30 14 1 12 *"
		cj.Spec.TimeZone = new("Europe/Berlin")
		cj.Spec.NotBefore = &metav1.Time{Time: once}
		cj.Spec.MaxRuns = new(int64(1))
		cj.Spec.CatchUpPolicy = cronv1.CatchUpAll
	}
	for _, tc := range []struct {
		name     string
		from, to time.Time
		step     time.Duration
	}{
		{"up at the instant", once.Add(-3 * time.Hour), once.Add(72 * time.Hour), time.Minute},
		{"down over it, back hours later", once.Add(5*time.Hour + time.Second), once.Add(72 * time.Hour), time.Hour},
		{"a look a month for two years", once.Add(time.Second), once.Add(2 * 366 * 24 * time.Hour), 30 * 24 * time.Hour},
	} {
		t.Run(tc.name, func(t *testing.T) {
			started, _, p := maxRunsWalk(t, cronJob(recipe), tc.from, tc.to, tc.step)
			if !slices.EqualFunc(started, []time.Time{once}, time.Time.Equal) {
				t.Errorf("started %v, want only %s", fmtTimes(started), formatTime(once))
			}
			if st := p.Status; st.NextScheduleTime != nil || p.RequeueAfter != 0 || totalMissed(st) != 0 {
				t.Errorf("after: next %v, requeue %v, missed %v; want none", st.NextScheduleTime, p.RequeueAfter, missedOf(st))
			}
		})
	}
}

// A skipped time uses up no run of maxRuns nor a place of catchUpLimit:
// with two runs allowed, the two owed runs around the skip start.
func TestASkippedTimeCostsNoRunOfMaxRuns(t *testing.T) {
	cj := cronJob(last(at(-3*time.Hour)), catchUpAll(2), maxRuns(2), skipTimes(at(-time.Hour)))
	p := Decide(Input{CronJob: cj, Now: at(5 * time.Second)})
	want := []string{"05-01T08:00:00", "05-01T10:00:00"}
	got := createdTimes(p)
	startAll(p) // a held time after a create is counted once the create is reported
	if !slices.Equal(got, want) || missedFor(p.Status, cronv1.MissedSkipped) != 1 {
		t.Errorf("creates %v, missed %v; want %v and 09:00 counted Skipped", got, missedOf(p.Status), want)
	}
}

// A CronJob with maxRuns, or paused awaiting its trial, settles no time as
// not run without naming it in NotRun, for the controller to look its Job
// up first; others name none, and a time whose Job is in view is never
// named.
func TestNotRunNamesTheTimesSettledWithoutAJobUnderMaxRunsOrAwaitingATrial(t *testing.T) {
	for _, tc := range []struct {
		name string
		cj   *cronv1.CronJob
		jobs []*fakeJob
		want []time.Time
	}{
		{name: "maxRuns, two times passed over",
			cj:   cronJob(sched("*/10 * * * *"), maxRuns(5), last(ten)),
			want: []time.Time{at(20 * time.Minute), at(10 * time.Minute)}},
		{name: "no maxRuns",
			cj: cronJob(sched("*/10 * * * *"), last(ten))},
		{name: "paused, its trial due",
			cj: cronJob(sched("*/10 * * * *"), last(ten), failurePolicy(2, 5*time.Minute, 0),
				failing(2, job.Name("cj", ten)), pausedSince(ten, 1, "")),
			want: []time.Time{at(20 * time.Minute), at(10 * time.Minute)}},
		{name: "paused, its trial named",
			cj: cronJob(sched("*/10 * * * *"), last(ten), failurePolicy(2, 5*time.Minute, 0),
				failing(2, job.Name("cj", ten)), pausedSince(ten, 1, job.Name("cj", at(10*time.Minute)))),
			jobs: []*fakeJob{runOf(at(10*time.Minute), "")}},
		{name: "maxRuns, the 10:10 Job in view",
			cj:   cronJob(sched("*/10 * * * *"), maxRuns(5), last(ten)),
			jobs: []*fakeJob{runOf(at(10*time.Minute), "")},
			want: []time.Time{at(20 * time.Minute)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := Decide(Input{CronJob: tc.cj, Jobs: asJobs(tc.jobs), Now: at(30*time.Minute + time.Second)})
			if !slices.EqualFunc(p.NotRun, tc.want, time.Time.Equal) {
				t.Errorf("NotRun %v, want %v", fmtTimes(p.NotRun), fmtTimes(tc.want))
			}
		})
	}
}

// The Expired condition's message counts the run the same status write
// counts, not the one before it.
func TestMaxRunsMessageCountsTheRunJustStarted(t *testing.T) {
	cj := cronJob(sched("*/10 * * * *"), maxRuns(3), func(cj *cronv1.CronJob) { cj.CreationTimestamp = metav1.NewTime(ten) })
	_, _, p := maxRunsWalk(t, cj, at(time.Second), at(15*time.Minute), 5*time.Minute)
	c := meta.FindStatusCondition(p.Status.Conditions, cronv1.ConditionExpired)
	if want := "scheduled runs end once spec.maxRuns (3) have started; 1 have"; c == nil || c.Message != want {
		t.Errorf("Expired %+v after the first run, want the message %q", c, want)
	}
}

// Once maxRuns is reached the schedule has ended: later times are no runs,
// settled as nothing, and a sync names none to look up, however many
// passed (the cost side of NotRun).
func TestNotRunIsEmptyOnceMaxRunsIsReached(t *testing.T) {
	cj := cronJob(sched("*/10 * * * *"), maxRuns(2), last(ten), func(cj *cronv1.CronJob) { cj.Status.ScheduledRunCount = 2 })
	p := Decide(Input{CronJob: cj, Now: at(30 * time.Hour)})
	if len(p.NotRun) != 0 || len(p.Creates) != 0 {
		t.Errorf("NotRun %v, creates %v; want none after maxRuns", fmtTimes(p.NotRun), createdTimes(p))
	}
}

// Every time a sync of a CronJob with maxRuns (or paused awaiting its
// trial) settles as not run with no Job in view is named in NotRun, not
// only those the walk passes over: also the newest time, held by
// suspendUntil, skipTimes or the pause, and a time a schedule edit refuses
// (ScheduleChanged). Each was a run whose Job the caches may lack (a
// status lost before a crash behind a hung watch, the user's edit the
// very conflict that lost it).
func TestNotRunNamesEveryTimeSettledAsNotRun(t *testing.T) {
	for _, tc := range []struct {
		name   string
		cj     *cronv1.CronJob
		now    time.Time
		reason string
		want   time.Time
	}{
		{name: "the newest time held by suspendUntil",
			cj:  cronJob(maxRuns(5), last(at(-time.Hour)), suspendUntil(at(50*time.Minute))),
			now: at(30 * time.Second), reason: cronv1.MissedSuspendedUntil, want: ten},
		{name: "the newest time skipped",
			cj:  cronJob(maxRuns(5), last(at(-time.Hour)), skipTimes(ten)),
			now: at(30 * time.Second), reason: cronv1.MissedSkipped, want: ten},
		{name: "a time the edited schedule refuses",
			cj:  cronJob(sched("30 * * * *"), maxRuns(5), last(at(-time.Hour)), seen("0 * * * *", "UTC")),
			now: at(30*time.Minute + 5*time.Second), reason: cronv1.MissedScheduleChanged, want: ten},
		{name: "the newest time held by a pause awaiting its trial (resumeAfter lengthened)",
			cj: cronJob(last(at(-time.Hour)), failurePolicy(2, 2*time.Hour, 0), failing(2, "cj-x"), pausedSince(at(-50*time.Minute), 1, ""),
				func(cj *cronv1.CronJob) { cj.Status.FailureStreak.ResumeAt = &metav1.Time{Time: at(-20 * time.Minute)} }),
			now: at(30 * time.Minute), reason: cronv1.MissedPaused, want: ten},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := Decide(Input{CronJob: tc.cj, Now: tc.now})
			if missedFor(p.Status, tc.reason) == 0 {
				t.Fatalf("missed %v, want %s counted %s", missedOf(p.Status), tc.want.Format(time.TimeOnly), tc.reason)
			}
			if !slices.ContainsFunc(p.NotRun, tc.want.Equal) {
				t.Errorf("%s counted %s with NotRun %v: its Job is never looked up", tc.want.Format(time.TimeOnly), tc.reason, fmtTimes(p.NotRun))
			}
		})
	}
}

// maxRuns 3 with one run left, catchUpPolicy All: 09:00 and 10:00 are
// owed. Someone else's Job holds 09:00's name, so that run never starts:
// it costs no run of maxRuns, and 10:00 starts as the last. (Model seed
// 20242 at bounded lag, after maxRuns edits.)
func TestARunWhoseNameIsTakenCostsNoRunOfMaxRuns(t *testing.T) {
	cj := cronJob(last(at(-2*time.Hour)), catchUpAll(3), maxRuns(3), runCount(2))
	p := Decide(Input{CronJob: cj, Now: at(5 * time.Second)})
	var started []string
	for _, c := range p.Creates {
		if !p.Wants(c) {
			continue
		}
		if c.Time.Equal(at(-time.Hour)) {
			p.NotStarted(c, NameTaken, "a Job of that name is someone else's")
			continue
		}
		p.Started(c, runOf(c.Time, ""), true)
		started = append(started, fmtTimes([]time.Time{c.Time})...)
	}
	if want := []string{"05-01T10:00:00"}; !slices.Equal(started, want) || p.Status.ScheduledRunCount != 3 {
		t.Errorf("started %v, count %d; want %v, count 3: the 09:00 run never started", started, p.Status.ScheduledRunCount, want)
	}
}

// carryOut carries p out as the controller does: creates in order, each
// only if wanted; fail says the outcome of a scheduled create at a time
// (nil: it starts). A retryable failure holds back the scheduled creates
// after it (controller.apply).
func carryOut(p *Plan, fail func(time.Time) (refused bool, retry bool)) []*fakeJob {
	var made []*fakeJob
	blocked := false
	for _, c := range p.Creates {
		if (!c.Manual && blocked) || !p.Wants(c) {
			continue
		}
		if fail != nil && !c.Manual {
			refused, retry := fail(c.Time)
			if refused {
				p.NotStarted(c, NameTaken, "")
				continue
			}
			if retry {
				p.CreateFailed(c, errTest)
				blocked = true
				continue
			}
		}
		j := runOf(c.Time, "")
		p.Started(c, j, true)
		made = append(made, j)
	}
	for _, d := range p.Deletes {
		p.Deleted(d)
	}
	return made
}

var errTest = errorString("conflict")

type errorString string

func (e errorString) Error() string { return string(e) }

func TestHeldAfterTheLastRunAmongUnwantedCreatesAreNotCounted(t *testing.T) {
	// 04:00..09:00 owed (catch-up All), 2 left; 07:00 and 08:00 skipped.
	// 04:00 and 05:00 start; nothing after is a run.
	cj := cronJob(last(at(-7*time.Hour)), catchUpAll(10), maxRuns(4), runCount(2),
		skipTimes(at(-3*time.Hour), at(-2*time.Hour)))
	p := Decide(Input{CronJob: cj, Now: at(-time.Hour + time.Second)})
	made := carryOut(p, nil)
	if got := names(made, func(j *fakeJob) string { return j.Name }); !slices.Equal(got, hours(4, 5)) {
		t.Errorf("started %q, want %q", got, hours(4, 5))
	}
	if p.Status.ScheduledRunCount != 4 || totalMissed(p.Status) != 0 || p.Status.NextScheduleTime != nil {
		t.Errorf("count %d, missed %v, next %v; want 4, none, unset", p.Status.ScheduledRunCount, missedOf(p.Status), p.Status.NextScheduleTime)
	}
	if got := names(p.Events, func(e Event) string { return e.Reason }); slices.ContainsFunc(got, func(r string) bool { return r != ReasonSuccessfulCreate && r != ReasonMaxRunsReached }) {
		t.Errorf("events %q, want only creates and MaxRunsReached", got)
	}
}

func TestARefusedRunGivesWayAndHeldBetweenAreCountedOnlyBeforeTheLast(t *testing.T) {
	// 04:00..09:00 owed, 2 left; 04:00's name is taken; 05:00 skipped;
	// 07:00 skipped. 06:00 and 08:00 start: 05:00 and 07:00 are before the
	// last run, counted Skipped; 09:00 is no run.
	cj := cronJob(last(at(-7*time.Hour)), catchUpAll(10), maxRuns(4), runCount(2),
		skipTimes(at(-5*time.Hour), at(-3*time.Hour)))
	p := Decide(Input{CronJob: cj, Now: at(-time.Hour + time.Second)})
	made := carryOut(p, func(t time.Time) (bool, bool) { return t.Equal(at(-6 * time.Hour)), false })
	if got := names(made, func(j *fakeJob) string { return j.Name }); !slices.Equal(got, hours(6, 8)) {
		t.Errorf("started %q, want %q", got, hours(6, 8))
	}
	want := map[string]int64{cronv1.MissedNameTaken: 1, cronv1.MissedSkipped: 2}
	if got := missedOf(p.Status); !mapsEqual(got, want) || p.Status.ScheduledRunCount != 4 {
		t.Errorf("missed %v count %d, want %v 4", got, p.Status.ScheduledRunCount, want)
	}
}

func TestARetryableFailureBeforeTheLimitLeavesTheRestOwedAndUncounted(t *testing.T) {
	// 04:00..09:00 owed, 2 left, 06:00 skipped. 04:00 starts, 05:00 fails
	// retryably: 06:00 (after the failed create) stays uncounted, and the
	// next sync starts 05:00, the last, counting nothing after it.
	cj := cronJob(last(at(-7*time.Hour)), catchUpAll(10), maxRuns(4), runCount(2), skipTimes(at(-4*time.Hour)))
	now := at(-time.Hour + time.Second)
	p := Decide(Input{CronJob: cj, Now: now})
	made := carryOut(p, func(t time.Time) (bool, bool) { return false, t.Equal(at(-5 * time.Hour)) })
	if got := names(made, func(j *fakeJob) string { return j.Name }); !slices.Equal(got, hours(4)) {
		t.Fatalf("started %q, want %q", got, hours(4))
	}
	if p.Status.ScheduledRunCount != 3 || totalMissed(p.Status) != 0 || p.Status.NextScheduleTime == nil {
		t.Errorf("after the failure: count %d missed %v next %v; want 3, none, set", p.Status.ScheduledRunCount, missedOf(p.Status), p.Status.NextScheduleTime)
	}
	cj2 := cj.DeepCopy()
	cj2.Status = p.Status
	p2 := Decide(Input{CronJob: cj2, Jobs: asJobs(made), Now: now.Add(time.Second)})
	made2 := carryOut(p2, nil)
	if got := names(made2, func(j *fakeJob) string { return j.Name }); !slices.Equal(got, hours(5)) {
		t.Errorf("retry sync started %q, want %q", got, hours(5))
	}
	if p2.Status.ScheduledRunCount != 4 || totalMissed(p2.Status) != 0 || p2.Status.NextScheduleTime != nil {
		t.Errorf("after the retry: count %d missed %v next %v; want 4, none, unset", p2.Status.ScheduledRunCount, missedOf(p2.Status), p2.Status.NextScheduleTime)
	}
	cj3 := cj2.DeepCopy()
	cj3.Status = p2.Status
	p3 := Decide(Input{CronJob: cj3, Jobs: asJobs(append(made, made2...)), Now: at(5 * time.Hour)})
	if len(p3.Creates) != 0 || totalMissed(p3.Status) != 0 || p3.Status.NextScheduleTime != nil || p3.RequeueAfter != 0 || len(p3.NotRun) != 0 {
		t.Errorf("later: creates %v missed %v next %v requeue %v notRun %v; want none", createdTimes(p3), missedOf(p3.Status), p3.Status.NextScheduleTime, p3.RequeueAfter, p3.NotRun)
	}
}

func TestCatchUpAllUnderReplaceWithMaxRunsStartsOneRun(t *testing.T) {
	// Replace catches up with the latest: one create, the older superseded
	// (before the last run, so counted), the running Job deleted.
	running := runOf(at(-7*time.Hour), "")
	cj := cronJob(last(at(-7*time.Hour)), catchUpAll(10), concurrency(cronv1.ReplaceConcurrent), maxRuns(3), runCount(2), active(running))
	p := Decide(Input{CronJob: cj, Jobs: asJobs([]*fakeJob{running}), Now: at(-time.Hour + time.Second)})
	made := carryOut(p, nil)
	if got := names(made, func(j *fakeJob) string { return j.Name }); !slices.Equal(got, hours(9)) {
		t.Errorf("started %q, want %q", got, hours(9))
	}
	if len(p.Deletes) != 1 || p.Status.ScheduledRunCount != 3 || missedFor(p.Status, cronv1.MissedSuperseded) != 5 || p.Status.NextScheduleTime != nil {
		t.Errorf("deletes %d count %d missed %v next %v; want 1, 3, superseded 5, unset", len(p.Deletes), p.Status.ScheduledRunCount, missedOf(p.Status), p.Status.NextScheduleTime)
	}
}

func TestNoCreatesPlannedOnceTheLimitIsReachedAtDecide(t *testing.T) {
	// Reached before the sync: the owed times after the last run are no
	// runs: no create planned at all (not merely unwanted), no Replace delete.
	running := runOf(at(-7*time.Hour), "")
	for _, pol := range []cronv1.ConcurrencyPolicy{cronv1.AllowConcurrent, cronv1.ReplaceConcurrent, cronv1.ForbidConcurrent} {
		cj := cronJob(last(at(-7*time.Hour)), catchUpAll(10), concurrency(pol), maxRuns(2), runCount(2), active(running))
		p := Decide(Input{CronJob: cj, Jobs: asJobs([]*fakeJob{running}), Now: at(-time.Hour + time.Second)})
		if len(p.Creates) != 0 || len(p.Deletes) != 0 || totalMissed(p.Status) != 0 || p.RequeueAfter != 0 || p.Status.NextScheduleTime != nil {
			t.Errorf("%s: creates %v deletes %d missed %v requeue %v next %v; want none", pol, createdTimes(p), len(p.Deletes), missedOf(p.Status), p.RequeueAfter, p.Status.NextScheduleTime)
		}
	}
}

func TestSuspendUntilHeldBeforeAndUnwantedAfterTheLastRun(t *testing.T) {
	// 04:00..09:00 owed, 2 left, suspendUntil 05:30 holds 04:00 and 05:00
	// (counted); 06:00 and 07:00 start; 08:00 and 09:00 are no runs.
	cj := cronJob(last(at(-7*time.Hour)), catchUpAll(10), maxRuns(4), runCount(2), suspendUntil(at(-4*time.Hour-30*time.Minute)))
	p := Decide(Input{CronJob: cj, Now: at(-time.Hour + time.Second)})
	made := carryOut(p, nil)
	if got := names(made, func(j *fakeJob) string { return j.Name }); !slices.Equal(got, hours(6, 7)) {
		t.Errorf("started %q, want %q", got, hours(6, 7))
	}
	want := map[string]int64{cronv1.MissedSuspendedUntil: 2}
	if got := missedOf(p.Status); !mapsEqual(got, want) || p.Status.ScheduledRunCount != 4 || p.Status.NextScheduleTime != nil {
		t.Errorf("missed %v count %d next %v, want %v 4 unset", got, p.Status.ScheduledRunCount, p.Status.NextScheduleTime, want)
	}
}

func TestCalendarHeldAfterTheLastRunIsNoRunAfterARefusal(t *testing.T) {
	// 04:00..09:00 owed, 2 left, a Calendar excludes 06:00 and 08:00;
	// 04:00's name is taken, so 05:00 and 07:00 are the runs: 06:00 is
	// counted Excluded (with its Event), 08:00 and 09:00 are no runs.
	cal := calendarOf("c", "UTC", nil, [2]string{"2026-05-01T05:30", "2026-05-01T06:30"}, [2]string{"2026-05-01T07:30", "2026-05-01T08:30"})
	cj := cronJob(last(at(-7*time.Hour)), catchUpAll(10), maxRuns(4), runCount(2), excluding("c"))
	p := Decide(Input{CronJob: cj, Calendars: calendarsOf(cal), Now: at(-time.Hour + time.Second)})
	made := carryOut(p, func(t time.Time) (bool, bool) { return t.Equal(at(-6 * time.Hour)), false })
	if got := names(made, func(j *fakeJob) string { return j.Name }); !slices.Equal(got, hours(5, 7)) {
		t.Errorf("started %q, want %q", got, hours(5, 7))
	}
	want := map[string]int64{cronv1.MissedNameTaken: 1, cronv1.MissedExcluded: 1}
	if got := missedOf(p.Status); !mapsEqual(got, want) || p.Status.ScheduledRunCount != 4 || p.Status.NextScheduleTime != nil {
		t.Errorf("missed %v count %d next %v, want %v 4 unset", got, p.Status.ScheduledRunCount, p.Status.NextScheduleTime, want)
	}
	var excluded int
	for _, e := range p.Events {
		if e.Reason == ReasonRunExcluded {
			excluded++
		}
	}
	if excluded != 1 {
		t.Errorf("%d RunExcluded Events, want 1 (06:00 only)", excluded)
	}
}

func TestATrialThatIsTheLastRunCountsNoPausedRunAfterIt(t *testing.T) {
	// Paused since 07:00, cool-down past: 08:00 is held (before the
	// trial), 09:00 the trial and the last run maxRuns allows, 10:00 no run.
	cj := cronJob(last(at(-3*time.Hour)), catchUpAll(10), maxRuns(1), runCount(0), failurePolicy(1, 90*time.Minute, 0), failing(1, "cj-x"), pausedSince(at(-3*time.Hour), 1, ""))
	p := Decide(Input{CronJob: cj, Now: at(time.Minute)})
	made := carryOut(p, nil)
	if got := names(made, func(j *fakeJob) string { return j.Name }); !slices.Equal(got, hours(9)) {
		t.Errorf("started %q, want %q", got, hours(9))
	}
	if got := missedOf(p.Status); !mapsEqual(got, map[string]int64{cronv1.MissedPaused: 1}) || p.Status.ScheduledRunCount != 1 || p.Status.NextScheduleTime != nil {
		t.Errorf("missed %v count %d next %v; want Paused 1 (08:00), 1, unset", got, p.Status.ScheduledRunCount, p.Status.NextScheduleTime)
	}
}

func TestATrialRefusedGivesWayUnderMaxRuns(t *testing.T) {
	// As above but the trial's name is taken: it is missed, not a run, and
	// the count stays 0; nothing after it starts in this sync beyond what
	// the pause allows, and no run is counted beyond maxRuns.
	cj := cronJob(last(at(-3*time.Hour)), catchUpAll(10), maxRuns(1), runCount(0), failurePolicy(1, 90*time.Minute, 0), failing(1, "cj-x"), pausedSince(at(-3*time.Hour), 1, ""))
	p := Decide(Input{CronJob: cj, Now: at(time.Minute)})
	made := carryOut(p, func(t time.Time) (bool, bool) { return t.Equal(at(-time.Hour)), false })
	want := map[string]int64{cronv1.MissedNameTaken: 1, cronv1.MissedPaused: 2}
	if got := missedOf(p.Status); len(made) != 0 || p.Status.ScheduledRunCount != 0 || !mapsEqual(got, want) {
		t.Errorf("started %d, count %d, missed %v; want 0, 0, %v (the pause holds the rest)", len(made), p.Status.ScheduledRunCount, got, want)
	}
	if got := conditionOf(p.Status, cronv1.ConditionExpired); len(made) == 0 && got != "False/"+reasonRunsRemaining {
		t.Errorf("Expired %s with no run started", got)
	}
}
