package planner

// spec.failurePolicy, the breaker across runs (failures.go): a row for each
// transition. The CronJob runs hourly; "ten" is 10:00, a due time.

import (
	"slices"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	cronv1 "github.com/cronjob-controller/cronjob-controller/pkg/apis/batch/v1"
)

// pausedCondition is the Paused condition's status and reason, "" when
// absent.
func pausedCondition(st cronv1.CronJobStatus) string {
	c := meta.FindStatusCondition(st.Conditions, cronv1.ConditionPaused)
	if c == nil {
		return ""
	}
	return string(c.Status) + "/" + c.Reason
}

func hasEvent(p *Plan, reason string) bool {
	return slices.ContainsFunc(p.Events, func(e Event) bool { return e.Reason == reason })
}

// runAt9 is the 09:00 run's Job, finished as done.
func runAt9(done batchv1.JobConditionType) *fakeJob { return runOf(at(-time.Hour), done) }

func TestFailedRunsUpToPauseAfterPauseScheduledRuns(t *testing.T) {
	j := runAt9(batchv1.JobFailed)
	cj := cronJob(last(at(-time.Hour)), active(j), failurePolicy(3, 0, 0), failing(2, "cj-older"))
	p := Decide(Input{CronJob: cj, Jobs: []Job{j}, Now: ten})

	fs := p.Status.FailureStreak
	if fs == nil || fs.Count != 3 || fs.LastFailedJob != j.Name || fs.PausedAt == nil || !fs.PausedAt.Time.Equal(ten) || fs.Pauses != 1 {
		t.Fatalf("failureStreak = %+v, want count 3, lastFailedJob %s, pausedAt %s, pauses 1", fs, j.Name, ten)
	}
	if len(p.Creates) != 0 {
		t.Errorf("creates = %v, want none: the 10:00 run is due while paused", createdTimes(p))
	}
	if got := missedFor(p.Status, cronv1.MissedPaused); got != 1 {
		t.Errorf("missed Paused = %d, want 1 (the 10:00 run)", got)
	}
	if got := pausedCondition(p.Status); got != "True/"+ReasonFailureStreak {
		t.Errorf("Paused condition = %s, want True/%s", got, ReasonFailureStreak)
	}
	if !hasEvent(p, ReasonPaused) || p.Events[slices.IndexFunc(p.Events, func(e Event) bool { return e.Reason == ReasonPaused })].Type != corev1.EventTypeWarning {
		t.Errorf("events = %v, want a Warning %s", eventsOf(p), ReasonPaused)
	}
	if p.Status.NextScheduleTime != nil {
		t.Errorf("nextScheduleTime = %v, want unset: without resumeAfter only a person or a success resumes", p.Status.NextScheduleTime)
	}

	// The next sync, from the status written: the pause holds, once.
	next := cj.DeepCopy()
	next.Status = p.Status
	p2 := Decide(Input{CronJob: next, Jobs: []Job{j}, Now: at(time.Minute)})
	if hasEvent(p2, ReasonPaused) || p2.Status.FailureStreak.Count != 3 {
		t.Errorf("the next sync: events %v, count %d; want no second Paused Event and the count still 3", eventsOf(p2), p2.Status.FailureStreak.Count)
	}
}

func TestFailedRunsBelowPauseAfterStartTheNextRun(t *testing.T) {
	j := runAt9(batchv1.JobFailed)
	cj := cronJob(last(at(-time.Hour)), active(j), failurePolicy(3, 0, 0), failing(1, "cj-older"))
	p := Decide(Input{CronJob: cj, Jobs: []Job{j}, Now: ten})
	if got := createdTimes(p); len(got) != 1 {
		t.Fatalf("creates = %v, want the 10:00 run", got)
	}
	if fs := p.Status.FailureStreak; fs.Count != 2 || fs.PausedAt != nil {
		t.Errorf("failureStreak = %+v, want count 2, not paused", fs)
	}
	c := meta.FindStatusCondition(p.Status.Conditions, cronv1.ConditionPaused)
	if c == nil || c.Status != metav1.ConditionFalse || c.Reason != ReasonFailuresBelowLimit || c.Message != "2 of 3 runs in a row failed" {
		t.Errorf("Paused condition = %+v, want False/%s \"2 of 3 runs in a row failed\"", c, ReasonFailuresBelowLimit)
	}
}

func TestSuccessfulRunEndsTheStreak(t *testing.T) {
	j := runAt9(batchv1.JobComplete)
	cj := cronJob(last(at(-time.Hour)), active(j), failurePolicy(3, 0, 0), failing(2, "cj-older"))
	p := Decide(Input{CronJob: cj, Jobs: []Job{j}, Now: ten})
	if fs := p.Status.FailureStreak; fs.Count != 0 || fs.LastFailedJob != "" {
		t.Errorf("failureStreak = %+v, want count 0 and no last failed Job", fs)
	}
	if len(p.Creates) != 1 {
		t.Errorf("creates = %v, want the 10:00 run", createdTimes(p))
	}
}

func TestRunsDueWhilePausedAreCountedAndNeverStartedLater(t *testing.T) {
	cj := cronJob(last(at(-time.Hour)), failurePolicy(1, 0, 0), failing(1, "cj-x"), pausedSince(at(-30*time.Minute), 1, ""))
	p := Decide(Input{CronJob: cj, Now: at(2*time.Hour + time.Minute)})
	if len(p.Creates) != 0 {
		t.Fatalf("creates = %v, want none while paused", createdTimes(p))
	}
	// 10:00 and 11:00 walked past, 12:00 considered: all three Paused.
	if got := missedFor(p.Status, cronv1.MissedPaused); got != 3 {
		t.Errorf("missed Paused = %d, want 3 (10:00, 11:00, 12:00); missed: %v", got, missedOf(p.Status))
	}
	if got := totalMissed(p.Status); got != 3 {
		t.Errorf("missed in all = %v, want only the three Paused", missedOf(p.Status))
	}

	// Resumed by hand at 12:30: none of them starts after all.
	resumed := cj.DeepCopy()
	resumed.Status = p.Status
	annotated(cronv1.ResumeAnnotation, "2026-05-01T12:30:00Z")(resumed)
	p2 := Decide(Input{CronJob: resumed, Now: at(2*time.Hour + 30*time.Minute)})
	if len(p2.Creates) != 0 {
		t.Errorf("after the resume: creates = %v, want none: the runs due while paused are not owed", createdTimes(p2))
	}
	if p2.Status.NextScheduleTime == nil || !p2.Status.NextScheduleTime.Time.Equal(at(3*time.Hour)) {
		t.Errorf("after the resume: nextScheduleTime = %v, want 13:00", p2.Status.NextScheduleTime)
	}
}

func TestTrialRunStartsAtTheFirstDueTimeAfterTheCoolDown(t *testing.T) {
	// Paused at 09:10 with a cool-down of 30m: resumeAt 09:40, and 10:00
	// is the trial.
	cj := cronJob(last(at(-time.Hour)), failurePolicy(2, 30*time.Minute, 0), failing(2, "cj-x"), pausedSince(at(-50*time.Minute), 1, ""))
	p := Decide(Input{CronJob: cj, Now: ten})
	if len(p.Creates) != 1 || !p.Creates[0].Trial || !p.Creates[0].Time.Equal(ten) {
		t.Fatalf("creates = %+v, want the 10:00 run as the trial", p.Creates)
	}
	made := startAll(p)
	fs := p.Status.FailureStreak
	if fs.TrialJob != made[0].Name || fs.PausedAt == nil {
		t.Errorf("failureStreak = %+v, want trialJob %s, still paused", fs, made[0].Name)
	}
	if got := pausedCondition(p.Status); got != "True/"+ReasonTrialRunning {
		t.Errorf("Paused condition = %s, want True/%s", got, ReasonTrialRunning)
	}
	if !hasEvent(p, ReasonTrialRun) {
		t.Errorf("events = %v, want %s", eventsOf(p), ReasonTrialRun)
	}

	// While the trial runs, the 11:00 run is held.
	next := cj.DeepCopy()
	next.Status = p.Status
	p2 := Decide(Input{CronJob: next, Jobs: asJobs(made), Now: at(time.Hour)})
	if len(p2.Creates) != 0 || missedFor(p2.Status, cronv1.MissedPaused) != 1 {
		t.Errorf("while the trial runs: creates %v, missed %v; want none started, 11:00 counted Paused", createdTimes(p2), missedOf(p2.Status))
	}
	if p2.Status.NextScheduleTime != nil {
		t.Errorf("while the trial runs: nextScheduleTime = %v, want unset", p2.Status.NextScheduleTime)
	}
}

func TestNoRunStartsBeforeTheCoolDownEnds(t *testing.T) {
	// Paused at 09:40 with 30m: resumeAt 10:10; the 10:00 run is held and
	// the trial is the 11:00 run.
	cj := cronJob(last(at(-time.Hour)), failurePolicy(2, 30*time.Minute, 0), failing(2, "cj-x"), pausedSince(at(-20*time.Minute), 1, ""))
	p := Decide(Input{CronJob: cj, Now: ten})
	if len(p.Creates) != 0 || missedFor(p.Status, cronv1.MissedPaused) != 1 {
		t.Fatalf("creates %v, missed %v; want none started, 10:00 counted Paused", createdTimes(p), missedOf(p.Status))
	}
	if p.Status.NextScheduleTime == nil || !p.Status.NextScheduleTime.Time.Equal(at(time.Hour)) {
		t.Errorf("nextScheduleTime = %v, want 11:00, the trial's time", p.Status.NextScheduleTime)
	}
	if fs := p.Status.FailureStreak; fs.ResumeAt == nil || !fs.ResumeAt.Time.Equal(at(10*time.Minute)) {
		t.Errorf("resumeAt = %v, want 10:10", fs.ResumeAt)
	}
}

func TestNextScheduleTimeWhilePausedIsTheTrialsTime(t *testing.T) {
	// Every 5 minutes, paused at 10:00 for 12m: the trial is at 10:15,
	// not at the next due time 10:05.
	cj := cronJob(sched("*/5 * * * *"), last(ten), failurePolicy(1, 12*time.Minute, 0), failing(1, "cj-x"), pausedSince(ten, 1, ""))
	p := Decide(Input{CronJob: cj, Now: at(time.Minute)})
	if p.Status.NextScheduleTime == nil || !p.Status.NextScheduleTime.Time.Equal(at(15*time.Minute)) {
		t.Errorf("nextScheduleTime = %v, want 10:15", p.Status.NextScheduleTime)
	}
}

func TestTrialSuccessResumesScheduledRuns(t *testing.T) {
	trial := runOf(ten, batchv1.JobComplete)
	cj := cronJob(last(ten), active(trial), failurePolicy(2, 30*time.Minute, 0), failing(3, "cj-x"), pausedSince(at(-50*time.Minute), 1, trial.Name))
	p := Decide(Input{CronJob: cj, Jobs: []Job{trial}, Now: at(time.Hour)})
	fs := p.Status.FailureStreak
	if fs.PausedAt != nil || fs.Count != 0 || fs.TrialJob != "" || fs.Pauses != 0 || fs.ResumeAt != nil {
		t.Errorf("failureStreak = %+v, want the breaker closed and the streak 0", fs)
	}
	if len(p.Creates) != 1 || p.Creates[0].Trial {
		t.Errorf("creates = %+v, want the 11:00 run, no trial", p.Creates)
	}
	if got := pausedCondition(p.Status); got != "False/"+ReasonResumed {
		t.Errorf("Paused condition = %s, want False/%s", got, ReasonResumed)
	}
	if !hasEvent(p, ReasonResumed) {
		t.Errorf("events = %v, want %s", eventsOf(p), ReasonResumed)
	}
}

func TestFailedTrialPausesAgainForTwiceAsLong(t *testing.T) {
	trial := runOf(ten, batchv1.JobFailed)
	cj := cronJob(last(ten), active(trial), failurePolicy(2, 30*time.Minute, 0), failing(3, "cj-x"), pausedSince(at(-50*time.Minute), 1, trial.Name))
	now := at(20 * time.Minute)
	p := Decide(Input{CronJob: cj, Jobs: []Job{trial}, Now: now})
	fs := p.Status.FailureStreak
	if fs.PausedAt == nil || !fs.PausedAt.Time.Equal(now) || fs.Pauses != 2 || fs.TrialJob != "" || fs.Count != 4 {
		t.Fatalf("failureStreak = %+v, want paused again at %s, pauses 2, count 4, no trial", fs, now)
	}
	if fs.ResumeAt == nil || !fs.ResumeAt.Time.Equal(now.Add(time.Hour)) {
		t.Errorf("resumeAt = %v, want an hour after the failure", fs.ResumeAt)
	}
	if !hasEvent(p, ReasonPaused) {
		t.Errorf("events = %v, want %s", eventsOf(p), ReasonPaused)
	}
}

func TestCoolDownDoublesUpToItsCap(t *testing.T) {
	for _, tc := range []struct {
		name          string
		resume, limit time.Duration
		pauses        int32
		want          time.Duration
	}{
		{"first pause", 10 * time.Minute, 0, 1, 10 * time.Minute},
		{"third pause", 10 * time.Minute, 0, 3, 40 * time.Minute},
		{"capped by maxResumeAfter", 10 * time.Minute, time.Hour, 4, time.Hour},
		{"capped at 24h by default", time.Hour, 0, 30, 24 * time.Hour},
		{"never below resumeAfter", 48 * time.Hour, 0, 3, 48 * time.Hour},
		{"the largest counts hold", 8760 * time.Hour, 8760 * time.Hour, 1<<31 - 1, 8760 * time.Hour},
		{"many pauses of a second", time.Second, 8760 * time.Hour, 1<<31 - 1, 8760 * time.Hour},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cj := cronJob(failurePolicy(1, tc.resume, tc.limit), failing(1, "x"), pausedSince(ten, tc.pauses, ""))
			p := &Plan{cj: cj, Status: cj.Status, now: ten}
			if got := p.coolDown(); got != tc.want {
				t.Errorf("coolDown = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestTrialJobGoneBeforeItsOutcomeMakesTheNextRunTheTrial(t *testing.T) {
	trial := runOf(ten, "")
	cj := cronJob(last(ten), active(trial), failurePolicy(2, 30*time.Minute, 0), failing(2, "cj-x"), pausedSince(at(-50*time.Minute), 1, trial.Name))
	p := Decide(Input{CronJob: cj, Gone: map[types.UID]bool{trial.UID: true}, Now: at(time.Hour)})
	if fs := p.Status.FailureStreak; fs.Count != 2 || fs.PausedAt == nil {
		t.Errorf("failureStreak = %+v, want the count unchanged and still paused: the outcome is unknown", fs)
	}
	if len(p.Creates) != 1 || !p.Creates[0].Trial || !p.Creates[0].Time.Equal(at(time.Hour)) {
		t.Errorf("creates = %+v, want the 11:00 run as the new trial", p.Creates)
	}
}

func TestLostTrialRecordIsFoundAgainNotStartedTwice(t *testing.T) {
	// The trial's Job exists; the status naming it was lost.
	trial := runOf(ten, "")
	cj := cronJob(last(at(-time.Hour)), failurePolicy(2, 30*time.Minute, 0), failing(2, "cj-x"), pausedSince(at(-50*time.Minute), 1, ""))
	p := Decide(Input{CronJob: cj, Jobs: []Job{trial}, Now: at(5 * time.Minute)})
	if fs := p.Status.FailureStreak; fs.TrialJob != trial.Name {
		t.Errorf("trialJob = %q, want %s", fs.TrialJob, trial.Name)
	}
	p2 := Decide(Input{CronJob: withStatus(cj, p.Status), Jobs: []Job{trial}, Now: at(time.Hour)})
	if len(p2.Creates) != 0 {
		t.Errorf("at 11:00: creates = %v, want none while the trial runs", createdTimes(p2))
	}
}

func TestRunNowWhilePausedStartsAndItsSuccessResumes(t *testing.T) {
	cj := cronJob(last(ten), failurePolicy(1, 0, 0), failing(1, "cj-x"), pausedSince(ten, 1, ""), runNowValue("try-the-fix"))
	p := Decide(Input{CronJob: cj, Now: at(time.Minute)})
	if len(p.Creates) != 1 || !p.Creates[0].Manual {
		t.Fatalf("creates = %+v, want the run-now Job", p.Creates)
	}
	made := startAll(p)
	made[0].finished = batchv1.JobComplete
	made[0].CreationTimestamp = metav1.NewTime(at(time.Minute))
	p2 := Decide(Input{CronJob: withStatus(cj, p.Status), Jobs: asJobs(made), Now: at(5 * time.Minute)})
	if fs := p2.Status.FailureStreak; fs.PausedAt != nil || fs.Count != 0 {
		t.Errorf("failureStreak = %+v, want resumed by the run-now's success", fs)
	}
}

func TestFailedRunNowCountsInTheStreak(t *testing.T) {
	m := manualRun("cj-manual")
	m.finished = batchv1.JobFailed
	cj := cronJob(last(ten), active(m), failurePolicy(2, 0, 0), failing(1, "cj-x"))
	p := Decide(Input{CronJob: cj, Jobs: []Job{m}, Now: at(time.Minute)})
	if fs := p.Status.FailureStreak; fs.Count != 2 || fs.PausedAt == nil || fs.LastFailedJob != m.Name {
		t.Errorf("failureStreak = %+v, want count 2, paused, the run-now Job last", fs)
	}
}

func TestResumeAnnotationEndsAPauseOnce(t *testing.T) {
	cj := cronJob(last(ten), failurePolicy(1, 0, 0), failing(4, "cj-x"), pausedSince(ten, 1, ""), annotated(cronv1.ResumeAnnotation, "r1"))
	p := Decide(Input{CronJob: cj, Now: at(time.Minute)})
	fs := p.Status.FailureStreak
	if fs.PausedAt != nil || fs.Count != 0 || fs.LastResume != "r1" {
		t.Fatalf("failureStreak = %+v, want resumed, count 0, lastResume r1", fs)
	}
	c := meta.FindStatusCondition(p.Status.Conditions, cronv1.ConditionPaused)
	if c == nil || c.Reason != ReasonResumed || !strings.Contains(c.Message, "resumed by hand") {
		t.Errorf("Paused condition = %+v, want False/%s saying it was resumed by hand", c, ReasonResumed)
	}

	// A failure after the resume counts from 0 and pauses (pauseAfter 1);
	// the same annotation value does not resume it again.
	j := runOf(at(time.Hour), batchv1.JobFailed)
	next := withStatus(cj, p.Status)
	active(j)(next)
	p2 := Decide(Input{CronJob: next, Jobs: []Job{j}, Now: at(time.Hour + time.Minute)})
	if fs := p2.Status.FailureStreak; fs.PausedAt == nil || fs.Count != 1 {
		t.Errorf("after a new failure: failureStreak = %+v, want paused with count 1", fs)
	}
}

func TestRemovingFailurePolicyEndsThePause(t *testing.T) {
	cj := cronJob(last(at(-time.Hour)), failurePolicy(1, 0, 0), failing(4, "cj-x"), pausedSince(at(-time.Hour), 1, ""),
		condition(cronv1.ConditionPaused, metav1.ConditionTrue, ReasonFailureStreak, "paused"))
	cj.Spec.FailurePolicy = nil
	p := Decide(Input{CronJob: cj, Now: ten})
	if p.Status.FailureStreak != nil || meta.FindStatusCondition(p.Status.Conditions, cronv1.ConditionPaused) != nil {
		t.Errorf("failureStreak %+v, conditions %v; want both gone", p.Status.FailureStreak, p.Status.Conditions)
	}
	if len(p.Creates) != 1 {
		t.Errorf("creates = %v, want the 10:00 run", createdTimes(p))
	}
}

func TestPauseAfterEditsMoveTheLimitNotThePause(t *testing.T) {
	// Lowered to the count: pauses at once.
	p := Decide(Input{CronJob: cronJob(last(at(-time.Hour)), failurePolicy(2, 0, 0), failing(2, "cj-x")), Now: ten})
	if p.Status.FailureStreak.PausedAt == nil || len(p.Creates) != 0 {
		t.Errorf("pauseAfter lowered to the count: failureStreak %+v, creates %v; want paused, nothing started", p.Status.FailureStreak, createdTimes(p))
	}
	// Raised above it while paused: still paused.
	p = Decide(Input{CronJob: cronJob(last(at(-time.Hour)), failurePolicy(5, 0, 0), failing(2, "cj-x"), pausedSince(at(-time.Hour), 1, "")), Now: ten})
	if p.Status.FailureStreak.PausedAt == nil || len(p.Creates) != 0 {
		t.Errorf("pauseAfter raised while paused: failureStreak %+v, creates %v; want still paused", p.Status.FailureStreak, createdTimes(p))
	}
}

func TestOutcomesSeenTogetherCountInTheOrderTheRunsStarted(t *testing.T) {
	eight, nine := runOf(at(-2*time.Hour), batchv1.JobFailed), runOf(at(-time.Hour), batchv1.JobComplete)
	cj := cronJob(last(at(-time.Hour)), active(nine, eight), failurePolicy(3, 0, 0), failing(1, "cj-x"))
	p := Decide(Input{CronJob: cj, Jobs: []Job{nine, eight}, Now: ten})
	if fs := p.Status.FailureStreak; fs.Count != 0 {
		t.Errorf("count = %d, want 0: the 09:00 success came after the 08:00 failure", fs.Count)
	}
	eight.finished, nine.finished = batchv1.JobComplete, batchv1.JobFailed
	p = Decide(Input{CronJob: cj, Jobs: []Job{eight, nine}, Now: ten})
	if fs := p.Status.FailureStreak; fs.Count != 1 || fs.LastFailedJob != nine.Name {
		t.Errorf("failureStreak = %+v, want count 1, the 09:00 Job last", fs)
	}
}

func TestRunFinishedBeforeAnyStatusRecordedItCountsOnce(t *testing.T) {
	// The 09:00 Job was made, and failed, before a status recorded it.
	j := runAt9(batchv1.JobFailed)
	cj := cronJob(last(at(-2*time.Hour)), failurePolicy(3, 0, 0), failing(1, "cj-x"))
	p := Decide(Input{CronJob: cj, Jobs: []Job{j}, Now: ten})
	if fs := p.Status.FailureStreak; fs.Count != 2 {
		t.Fatalf("count = %d, want 2", fs.Count)
	}
	p2 := Decide(Input{CronJob: withStatus(cj, p.Status), Jobs: []Job{j}, Now: at(time.Minute)})
	if fs := p2.Status.FailureStreak; fs.Count != 2 {
		t.Errorf("the next sync: count = %d, want still 2", fs.Count)
	}
}

func TestStartedJobFoundFinishedCountsAtOnce(t *testing.T) {
	// The create of the trial met a Job already made (and failed) for it.
	cj := cronJob(last(at(-time.Hour)), failurePolicy(2, 30*time.Minute, 0), failing(2, "cj-x"), pausedSince(at(-50*time.Minute), 1, ""))
	p := Decide(Input{CronJob: cj, Now: ten})
	if len(p.Creates) != 1 || !p.Creates[0].Trial {
		t.Fatalf("creates = %+v, want the trial", p.Creates)
	}
	p.Started(p.Creates[0], runOf(ten, batchv1.JobFailed), false)
	if fs := p.Status.FailureStreak; fs.Pauses != 2 || fs.TrialJob != "" || fs.Count != 3 {
		t.Errorf("failureStreak = %+v, want paused again (pauses 2), count 3", fs)
	}
}

func TestOnlyTheControllersRunsCount(t *testing.T) {
	adopted := &fakeJob{ObjectMeta: metav1.ObjectMeta{Name: "by-hand", Namespace: "default", UID: "uid-by-hand"}, finished: batchv1.JobFailed}
	cj := cronJob(last(at(-time.Hour)), active(adopted), failurePolicy(1, 0, 0))
	p := Decide(Input{CronJob: cj, Jobs: []Job{adopted}, Now: ten})
	if fs := p.Status.FailureStreak; fs.Count != 0 || fs.PausedAt != nil {
		t.Errorf("failureStreak = %+v, want nothing counted for a Job the controller did not make", fs)
	}
}

func TestCalendarExclusionWinsOverAPause(t *testing.T) {
	cal := calendarOf("holidays", "UTC", []string{"2026-05-01"})
	cj := cronJob(last(at(-time.Hour)), excluding("holidays"), failurePolicy(1, 0, 0), failing(1, "cj-x"), pausedSince(at(-time.Hour), 1, ""))
	p := Decide(Input{CronJob: cj, Calendars: calendarsOf(cal), Now: ten})
	if got := missedOf(p.Status); got[cronv1.MissedExcluded] != 1 || got[cronv1.MissedPaused] != 0 {
		t.Errorf("missed = %v, want the 10:00 run Excluded, not Paused", got)
	}
}

func TestForbidLeavesAJobRunningWhenThePauseOpens(t *testing.T) {
	running := manualRun("cj-manual")
	failed := runAt9(batchv1.JobFailed)
	cj := cronJob(last(at(-time.Hour)), concurrency(cronv1.ForbidConcurrent), active(running, failed), failurePolicy(1, 0, 0))
	p := Decide(Input{CronJob: cj, Jobs: []Job{running, failed}, Now: ten})
	if p.Status.FailureStreak.PausedAt == nil || len(p.Deletes) != 0 || len(p.Creates) != 0 {
		t.Fatalf("failureStreak %+v, deletes %v, creates %v; want paused, the running Job left alone", p.Status.FailureStreak, p.Deletes, createdTimes(p))
	}
	running.finished = batchv1.JobComplete
	p2 := Decide(Input{CronJob: withStatus(cj, p.Status), Jobs: []Job{running, failed}, Now: at(time.Minute)})
	if p2.Status.FailureStreak.PausedAt != nil {
		t.Errorf("failureStreak = %+v, want the running Job's success to end the pause", p2.Status.FailureStreak)
	}
}

func TestOutcomesCountWhileSuspendedAndThePauseOutlastsAResume(t *testing.T) {
	j := runAt9(batchv1.JobFailed)
	cj := cronJob(last(at(-time.Hour)), active(j), failurePolicy(1, 0, 0))
	cj.Spec.Suspend = ptr.To(true)
	p := Decide(Input{CronJob: cj, Jobs: []Job{j}, Now: ten})
	if p.Status.FailureStreak.PausedAt == nil {
		t.Fatalf("failureStreak = %+v, want paused by a failure seen while suspended", p.Status.FailureStreak)
	}
	resumed := withStatus(cj, p.Status)
	resumed.Spec.Suspend = ptr.To(false)
	p2 := Decide(Input{CronJob: resumed, Jobs: []Job{j}, Now: at(time.Hour)})
	if len(p2.Creates) != 0 || p2.Status.FailureStreak.PausedAt == nil {
		t.Errorf("unsuspended: creates %v, failureStreak %+v; want still paused", createdTimes(p2), p2.Status.FailureStreak)
	}
}

func TestWithoutFailurePolicyFailuresChangeNothing(t *testing.T) {
	j := runAt9(batchv1.JobFailed)
	cj := cronJob(last(at(-time.Hour)), active(j))
	p := Decide(Input{CronJob: cj, Jobs: []Job{j}, Now: ten})
	if p.Status.FailureStreak != nil || meta.FindStatusCondition(p.Status.Conditions, cronv1.ConditionPaused) != nil || len(p.Creates) != 1 {
		t.Errorf("failureStreak %+v, conditions %v, creates %v; want no state, no condition, the 10:00 run", p.Status.FailureStreak, p.Status.Conditions, createdTimes(p))
	}
}

func TestSeveralSchedulesShareOneStreak(t *testing.T) {
	a, b := runOf(at(-time.Hour), batchv1.JobFailed), runOf(at(-30*time.Minute), batchv1.JobFailed)
	cj := cronJob(schedules("0 * * * *", "30 * * * *"), last(at(-30*time.Minute)), active(a, b), failurePolicy(2, 0, 0))
	p := Decide(Input{CronJob: cj, Jobs: []Job{a, b}, Now: ten})
	if fs := p.Status.FailureStreak; fs.Count != 2 || fs.PausedAt == nil || fs.LastFailedJob != b.Name {
		t.Errorf("failureStreak = %+v, want both schedules' failures in one streak, paused", fs)
	}
}

func TestCatchUpAllStartsOneTrial(t *testing.T) {
	// The controller was down past the cool-down: of the runs owed, only
	// the first at or after resumeAt starts.
	cj := cronJob(last(at(-3*time.Hour)), catchUpAll(10), failurePolicy(1, 90*time.Minute, 0), failing(1, "cj-x"), pausedSince(at(-3*time.Hour), 1, ""))
	p := Decide(Input{CronJob: cj, Now: at(time.Minute)})
	if len(p.Creates) != 1 || !p.Creates[0].Trial || !p.Creates[0].Time.Equal(at(-time.Hour)) {
		t.Fatalf("creates = %+v, want one trial, the 09:00 run", p.Creates)
	}
	startAll(p)
	// 08:00 before the cool-down ended, 10:00 after the trial: Paused.
	if got := missedFor(p.Status, cronv1.MissedPaused); got != 2 {
		t.Errorf("missed Paused = %d, want 2; missed %v", got, missedOf(p.Status))
	}
}

// withStatus is cj with the status a sync wrote.
func withStatus(cj *cronv1.CronJob, st cronv1.CronJobStatus) *cronv1.CronJob {
	out := cj.DeepCopy()
	out.Status = *st.DeepCopy()
	return out
}

func TestTrialStartedAfterAGoneTrialIsFoundAgainNotStartedTwice(t *testing.T) {
	// The 10:00 trial went before its outcome; the 11:00 run started as the
	// next trial, and the status naming it was lost (a crash): the status
	// still names the 10:00 one.
	gone, trial := runOf(ten, ""), runOf(at(time.Hour), "")
	cj := cronJob(last(ten), active(gone), failurePolicy(2, 30*time.Minute, 0), failing(2, "cj-x"), pausedSince(at(-50*time.Minute), 1, gone.Name))
	p := Decide(Input{CronJob: cj, Jobs: []Job{trial}, Gone: map[types.UID]bool{gone.UID: true}, Now: at(2 * time.Hour)})
	if len(p.Creates) != 0 {
		t.Errorf("at 12:00: creates = %v, want none while the 11:00 trial runs", createdTimes(p))
	}
	if fs := p.Status.FailureStreak; fs.TrialJob != trial.Name {
		t.Errorf("trialJob = %q, want %s", fs.TrialJob, trial.Name)
	}
}
