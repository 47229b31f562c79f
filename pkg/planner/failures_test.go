package planner

// spec.failurePolicy, the breaker across runs (failures.go): a row for each
// transition. The CronJob runs hourly; "ten" is 10:00, a due time.

import (
	"math/rand/v2"
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

func TestFailedJobIsNotPrunedBeforeAWrittenStatusSawItFinish(t *testing.T) {
	// failedJobsHistoryLimit 0 prunes a failed Job at once; but were it
	// deleted before the status counting its failure is written, a crash
	// in between would lose the outcome.
	j := runAt9(batchv1.JobFailed)
	cj := cronJob(last(at(-time.Hour)), active(j), failurePolicy(3, 0, 0))
	cj.Spec.FailedJobsHistoryLimit = ptr.To[int32](0)
	p := Decide(Input{CronJob: cj, Jobs: []Job{j}, Now: ten})
	if len(p.Deletes) != 0 {
		t.Fatalf("deletes = %v, want none while the written status lists the Job active", p.Deletes)
	}
	if p.RequeueAfter == 0 || p.RequeueAfter > time.Second {
		t.Errorf("requeueAfter = %v, want a look again within a second", p.RequeueAfter)
	}
	p2 := Decide(Input{CronJob: withStatus(cj, p.Status), Jobs: []Job{j}, Now: at(time.Second)})
	if len(p2.Deletes) != 1 || p2.Status.FailureStreak.Count != 1 {
		t.Errorf("once written: deletes %v, count %d; want the Job pruned and its failure counted once", p2.Deletes, p2.Status.FailureStreak.Count)
	}
}

func TestFailurePolicyStoredPastTheSchemaNeitherCrashesNorBlocksTheStatus(t *testing.T) {
	// pauseAfter 0 reads as 1: a count of 0 pauses nothing.
	p := Decide(Input{CronJob: cronJob(last(at(-time.Hour)), failurePolicy(0, 0, 0)), Now: ten})
	if fs := p.Status.FailureStreak; fs.PausedAt != nil || len(p.Creates) != 1 {
		t.Errorf("pauseAfter 0: failureStreak %+v, creates %v; want no pause before any failure", fs, createdTimes(p))
	}
	p = Decide(Input{CronJob: cronJob(last(at(-time.Hour)), failurePolicy(-5, 0, 0), failing(1, "cj-x")), Now: ten})
	if fs := p.Status.FailureStreak; fs.PausedAt == nil {
		t.Errorf("pauseAfter -5 with a failure: failureStreak %+v, want paused (read as 1)", fs)
	}
	// Cool-downs of centuries: no time a status cannot hold, no overflow.
	for _, d := range [][2]time.Duration{{-time.Hour, 0}, {200 * 365 * 24 * time.Hour, 0}, {1<<63 - 1, 1<<63 - 1}, {time.Hour, 1<<63 - 1}} {
		cj := cronJob(last(at(-time.Hour)), failurePolicy(1, d[0], d[1]), failing(1, "cj-x"), pausedSince(at(-time.Hour), 1<<31-1, ""))
		p := Decide(Input{CronJob: cj, Now: ten})
		fs := p.Status.FailureStreak
		if fs.ResumeAt != nil && fs.ResumeAt.Time.After(time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC)) {
			t.Errorf("resumeAfter %v: resumeAt %v, past what a status can hold", d, fs.ResumeAt)
		}
		if p.Status.NextScheduleTime != nil && p.Status.NextScheduleTime.Time.Year() > 9999 {
			t.Errorf("resumeAfter %v: nextScheduleTime %v", d, p.Status.NextScheduleTime)
		}
		if len(p.Creates) != 0 {
			t.Errorf("resumeAfter %v: creates %v, want none while paused", d, createdTimes(p))
		}
	}
}

// Whatever the policy and the state a status holds (values past the schema
// included), a sync neither panics nor waits a negative time, starts no
// scheduled run while paused but one trial once the cool-down has passed,
// and writes no time a status cannot hold.
func TestPausedStartsAtMostOneTrialWhateverTheState(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 2026))
	durations := []time.Duration{0, -time.Minute, time.Second, 10 * time.Minute, 90 * time.Minute, 24 * time.Hour, 8760 * time.Hour, 1<<63 - 1}
	specs := []string{"0 * * * *", "*/5 * * * *", "@every 7m", "30 2 * * *"}
	for i := range 800 {
		pauseAfter := int32(rng.IntN(5)) - 1
		resume, limit := durations[rng.IntN(len(durations))], durations[rng.IntN(len(durations))]
		opts := []func(*cronv1.CronJob){sched(specs[rng.IntN(len(specs))]), last(at(-time.Duration(rng.IntN(48*60)) * time.Minute)),
			failurePolicy(pauseAfter, resume, limit), failing(int32(rng.IntN(6)), "cj-x")}
		if rng.IntN(3) == 0 {
			opts = append(opts, catchUpAll(int32(1+rng.IntN(10))))
		}
		paused := rng.IntN(4) != 0
		if paused {
			opts = append(opts, pausedSince(at(-time.Duration(rng.IntN(72*60))*time.Minute), int32(rng.IntN(40)), ""))
		}
		cj := cronJob(opts...)
		now := at(time.Duration(rng.IntN(120)) * time.Minute)
		p := Decide(Input{CronJob: cj, Now: now})
		if p.RequeueAfter < 0 {
			t.Fatalf("case %d: negative requeue %v", i, p.RequeueAfter)
		}
		fs := p.Status.FailureStreak
		if fs.ResumeAt != nil && fs.ResumeAt.After(lastStorable) {
			t.Fatalf("case %d: resumeAt %v past what a status holds", i, fs.ResumeAt)
		}
		if !paused || fs.PausedAt == nil {
			continue
		}
		var trials []Create
		for _, c := range p.Creates {
			if !c.Trial {
				t.Fatalf("case %d: paused (%+v), yet the run of %s starts as no trial", i, fs, c.Time)
			}
			trials = append(trials, c)
		}
		resumeAt := (&Plan{cj: cj, Status: cj.Status}).resumeAt()
		if len(trials) > 1 || len(trials) == 1 && (resumeAt.IsZero() || now.Before(resumeAt) || trials[0].Time.Before(resumeAt)) {
			t.Fatalf("case %d: trials %v at %s with resumeAt %s", i, createdTimes(p), now, resumeAt)
		}
	}
}

// A finished Job for a run still to come (a replica whose clock was ahead,
// its status lost) is no run yet: its outcome counts once its time has
// come, and once only, whether the status saw it active or not.
func TestRunFromAClockAheadCountsOnceWhenItsTimeComes(t *testing.T) {
	j := runOf(at(2*time.Hour), batchv1.JobFailed) // the 12:00 run, made early, failed
	cj := cronJob(last(at(-time.Hour)), failurePolicy(3, 0, 0))
	st := cj.Status
	for i, now := range []time.Time{ten, at(time.Minute), at(2*time.Hour + time.Second), at(2*time.Hour + time.Minute)} {
		p := Decide(Input{CronJob: withStatus(cj, st), Jobs: []Job{j}, Now: now})
		st = p.Status
		want := int32(0)
		if !now.Before(at(2 * time.Hour)) {
			want = 1
		}
		if fs := st.FailureStreak; fs.Count != want {
			t.Fatalf("sync %d at %s: failureStreak %+v, want count %d: one failed Job, counted once its time has come", i+1, now.Format("15:04"), fs, want)
		}
	}
}

// The same Job seen active first: it leaves status.active finished before
// its time, uncounted, and counts once at its time.
func TestRunFromAClockAheadSeenActiveCountsOnceWhenItsTimeComes(t *testing.T) {
	j := runOf(at(2*time.Hour), batchv1.JobFailed)
	cj := cronJob(last(at(-time.Hour)), active(j), failurePolicy(2, 0, 0))
	p := Decide(Input{CronJob: cj, Jobs: []Job{j}, Now: at(30 * time.Minute)})
	if fs := p.Status.FailureStreak; fs.Count != 0 || len(p.Status.Active) != 0 {
		t.Fatalf("first sync: failureStreak %+v, active %v; want it no longer active, not counted before its time", fs, p.Status.Active)
	}
	st := p.Status
	for _, now := range []time.Time{at(2*time.Hour + time.Second), at(2*time.Hour + time.Minute)} {
		p := Decide(Input{CronJob: withStatus(cj, st), Jobs: []Job{j}, Now: now})
		st = p.Status
		if fs := st.FailureStreak; fs.Count != 1 || fs.PausedAt != nil {
			t.Errorf("at %s: failureStreak %+v, want count 1, not paused (pauseAfter 2, one failure)", now.Format("15:04:05"), fs)
		}
	}
}

// A kept decision (its status write deferred or failed) that started a
// run-now Job is judged again after an edit (StaleDecision): what it saw
// active and the outcomes it counted go together, so the run-now Job's
// outcome still counts. Here it is the user's "try the fix" while paused,
// and its success resumes scheduled runs.
func TestRunNowSuccessCountsWhenAKeptDecisionGoesStale(t *testing.T) {
	cj := cronJob(last(ten), failurePolicy(1, 0, 0), failing(1, "cj-x"), pausedSince(ten, 1, ""), runNowValue("try-the-fix"))
	written := *cj.Status.DeepCopy()

	// S1 at 10:01 makes the run-now Job; its status is kept, not written.
	p1 := Decide(Input{CronJob: cj, Now: at(time.Minute)})
	if len(p1.Creates) != 1 || !p1.Creates[0].Manual {
		t.Fatalf("S1 creates = %+v, want the run-now Job", p1.Creates)
	}
	made := startAll(p1)
	m := made[0]
	m.CreationTimestamp = metav1.NewTime(at(time.Minute))
	m.finished = batchv1.JobComplete
	m.complete = &metav1.Time{Time: at(2 * time.Minute)}
	unrecorded(m, "", "try-the-fix", 1)

	// The user edits the spec (a new generation) before the kept status is
	// written; S2 starts from StaleDecision, as the controller's view does.
	edited := cj.DeepCopy()
	edited.Generation = 2
	edited.Status = StaleDecision(&written, &p1.Status)
	p2 := Decide(Input{CronJob: edited, Jobs: []Job{m}, Written: &written, Now: at(3 * time.Minute)})
	if fs := p2.Status.FailureStreak; fs.PausedAt != nil {
		t.Errorf("S2: failureStreak %+v, want resumed: the run-now Job %s succeeded", fs, m.Name)
	}
	// And the breaker goes on holding runs.
	p3 := Decide(Input{CronJob: withStatus(edited, p2.Status), Jobs: []Job{m}, Now: at(time.Hour)})
	if len(createdTimes(p3)) != 1 {
		t.Errorf("11:00: creates %v, missed %v; want the 11:00 run started after the run-now's success", createdTimes(p3), missedOf(p3.Status))
	}
}

// The same with a failure: it counts, and with one before it pauses
// (pauseAfter 2).
func TestRunNowFailureCountsWhenAKeptDecisionGoesStale(t *testing.T) {
	cj := cronJob(last(ten), failurePolicy(2, 0, 0), failing(1, "cj-x"), runNowValue("again"))
	written := *cj.Status.DeepCopy()
	p1 := Decide(Input{CronJob: cj, Now: at(time.Minute)})
	made := startAll(p1)
	if len(made) != 1 {
		t.Fatalf("S1 made %d Jobs, want the run-now Job", len(made))
	}
	m := made[0]
	m.CreationTimestamp = metav1.NewTime(at(time.Minute))
	m.finished = batchv1.JobFailed
	unrecorded(m, "", "again", 1)

	edited := cj.DeepCopy()
	edited.Generation = 2
	edited.Status = StaleDecision(&written, &p1.Status)
	p2 := Decide(Input{CronJob: edited, Jobs: []Job{m}, Written: &written, Now: at(3 * time.Minute)})
	if fs := p2.Status.FailureStreak; fs.Count != 2 || fs.PausedAt == nil {
		t.Errorf("S2: failureStreak %+v, want count 2 and paused: the run-now Job %s failed", fs, m.Name)
	}
}

// Runs due while paused never start later, even those not counted yet: here
// catchUpPolicy All waits with the trial (Forbid, a run-now Job active), and
// the run-now's success ends the pause; the runs due before it stay held.
func TestRunsDueWhilePausedStayHeldWhenThePauseEndsBeforeTheTrialStarts(t *testing.T) {
	running := manualRun("cj-manual")
	running.UID = types.UID("uid-cj-manual")
	// Paused at 06:00, cool-down 90m: resumeAt 07:30. Down since 07:00.
	cj := cronJob(last(at(-3*time.Hour)), concurrency(cronv1.ForbidConcurrent), catchUpAll(10), active(running),
		failurePolicy(1, 90*time.Minute, 0), failing(1, "cj-x"), pausedSince(at(-4*time.Hour), 1, ""))
	p := Decide(Input{CronJob: cj, Jobs: []Job{running}, Now: at(time.Minute)})
	if len(p.Creates) != 0 {
		t.Fatalf("creates %v, want none: Forbid and the run-now Job is active", createdTimes(p))
	}
	// 08:00 is the trial, waiting; 09:00 and 10:00 were due while paused.

	// The run-now succeeds: the breaker closes.
	running.finished = batchv1.JobComplete
	p2 := Decide(Input{CronJob: withStatus(cj, p.Status), Jobs: []Job{running}, Now: at(2 * time.Minute)})
	if p2.Status.FailureStreak.PausedAt != nil {
		t.Fatalf("failureStreak %+v, want resumed by the run-now's success", p2.Status.FailureStreak)
	}
	for _, c := range p2.Creates {
		if !c.Manual && c.Time.After(at(-2*time.Hour)) {
			t.Errorf("after the resume: creates %v (missed %v); the runs of 09:00 and 10:00 were due while paused and must not start later",
				createdTimes(p2), missedOf(p2.Status))
			break
		}
	}
}

// The same behind a trial whose create failed and stays owed, ended by a
// resume by hand.
func TestRunsDueWhilePausedStayHeldWhenAResumeByHandFollowsAFailedTrialCreate(t *testing.T) {
	cj := cronJob(last(at(-3*time.Hour)), catchUpAll(10), failurePolicy(1, 90*time.Minute, 0), failing(1, "cj-x"), pausedSince(at(-4*time.Hour), 1, ""))
	p := Decide(Input{CronJob: cj, Now: at(time.Minute)})
	if len(p.Creates) != 1 || !p.Creates[0].Trial {
		t.Fatalf("creates %+v, want the 08:00 trial", p.Creates)
	}
	p.CreateFailed(p.Creates[0], errTimeout{})
	resumed := withStatus(cj, p.Status)
	annotated(cronv1.ResumeAnnotation, "now")(resumed)
	p2 := Decide(Input{CronJob: resumed, Now: at(2 * time.Minute)})
	var late []string
	for _, c := range p2.Creates {
		if c.Time.After(at(-2 * time.Hour)) {
			late = append(late, c.Time.UTC().Format("15:04"))
		}
	}
	if len(late) > 0 {
		t.Errorf("after the resume: creates %v (missed %v); %v were due while paused and must not start later", createdTimes(p2), missedOf(p2.Status), late)
	}
}

// An outcome reported while a plan is carried out (a create that met a
// Job made and failed already) may pause scheduled runs: the plan's later
// scheduled creates then wait, owed, for the next sync to hold them.
func TestRunsPlannedBeforeAPauseInTheSameSyncWait(t *testing.T) {
	cj := cronJob(last(at(-2*time.Hour)), catchUpAll(10), failurePolicy(1, 0, 0))
	p := Decide(Input{CronJob: cj, Now: at(time.Minute)})
	if got := createdTimes(p); len(got) != 2 {
		t.Fatalf("creates %v, want 09:00 and 10:00", got)
	}
	// 09:00's Job was made, and failed, by a sync whose status was lost;
	// the cache does not show it yet.
	p.Started(p.Creates[0], runOf(at(-time.Hour), batchv1.JobFailed), false)
	if p.Status.FailureStreak.PausedAt == nil {
		t.Fatalf("failureStreak %+v, want paused by the 09:00 failure", p.Status.FailureStreak)
	}
	if p.Wants(p.Creates[1]) {
		t.Errorf("paused, yet the plan still wants the 10:00 run (trial %v)", p.Creates[1].Trial)
	}
}

// A resume annotation left from before the policy was (re)set is no
// request of the new streak's: a failure counted in the same sync stays.
func TestReAddedPolicyTakesNoOldResumeForANewOne(t *testing.T) {
	j := runAt9(batchv1.JobFailed)
	cj := cronJob(last(at(-time.Hour)), active(j), failurePolicy(1, 0, 0), annotated(cronv1.ResumeAnnotation, "2026-04-01T00:00:00Z"))
	p := Decide(Input{CronJob: cj, Jobs: []Job{j}, Now: ten})
	if fs := p.Status.FailureStreak; fs.Count != 1 || fs.PausedAt == nil {
		t.Errorf("failureStreak %+v, want count 1 and paused: the annotation was handled before the policy was removed", fs)
	}
}

// A resume whose status was lost is handled again by the next sync, before
// the outcomes that sync sees: the failure of the run the resume let start
// still counts, and pauses again.
func TestResumeHandledAgainAfterALostStatusKeepsLaterFailures(t *testing.T) {
	// Paused since 09:30, the 10:00 run counted Paused; resumed at 11:00.
	cj := cronJob(last(at(-time.Hour)), failurePolicy(1, 0, 0), failing(1, "cj-x"), pausedSince(at(-30*time.Minute), 1, ""),
		annotated(cronv1.ResumeAnnotation, "r1"))
	cj = withStatus(cj, Decide(Input{CronJob: cronJob(last(at(-time.Hour)), failurePolicy(1, 0, 0), failing(1, "cj-x"), pausedSince(at(-30*time.Minute), 1, "")), Now: ten}).Status)
	p1 := Decide(Input{CronJob: cj, Now: at(time.Hour)})
	if got := createdTimes(p1); len(got) != 1 || p1.Status.FailureStreak.PausedAt != nil {
		t.Fatalf("S1: creates %v, streak %+v; want resumed and the 11:00 run started", got, p1.Status.FailureStreak)
	}
	made := startAll(p1)
	// The status of S1 is lost; the 11:00 run fails.
	made[0].finished = batchv1.JobFailed
	p2 := Decide(Input{CronJob: cj, Jobs: asJobs(made), Now: at(time.Hour + 11*time.Minute)})
	if fs := p2.Status.FailureStreak; fs.Count != 1 || fs.PausedAt == nil {
		t.Errorf("S2: failureStreak %+v, want count 1 and paused: the 11:00 run failed after the resume", fs)
	}
	p3 := Decide(Input{CronJob: withStatus(cj, p2.Status), Jobs: asJobs(made), Now: at(2*time.Hour + time.Minute)})
	if got := createdTimes(p3); len(got) != 0 {
		t.Errorf("12:00: creates %v, want none: paused after the failure", got)
	}
}

// Outcomes count in the order the Jobs finished, not that of the syncs that
// saw them: a lost status (or a controller down a while) that makes one
// sync see two outcomes counts them as two syncs would. The 09:00 run runs
// long; the 09:30 run succeeds at 09:35; the 09:00 run fails at 10:10: the
// last outcome is a failure, and with pauseAfter 1 scheduled runs pause.
func TestOutcomesCountInTheOrderTheJobsFinishedWhateverTheSyncs(t *testing.T) {
	nine := runOf(at(-time.Hour), "")
	ninethirty := runOf(at(-30*time.Minute), batchv1.JobComplete)
	cj := cronJob(sched("0,30 * * * *"), last(at(-30*time.Minute)), active(nine, ninethirty), failurePolicy(1, 0, 0))
	jobs := []Job{nine, ninethirty}

	// Seen in order: 09:30's success at 09:50, 09:00's failure at 10:11.
	p1 := Decide(Input{CronJob: cj, Jobs: jobs, Now: at(-10 * time.Minute)})
	nine.finished, nine.failedAt = batchv1.JobFailed, &metav1.Time{Time: at(10 * time.Minute)}
	p2 := Decide(Input{CronJob: withStatus(cj, p1.Status), Jobs: jobs, Now: at(11 * time.Minute)})
	inOrder := p2.Status.FailureStreak

	// The 09:50 status lost: both seen at 10:11.
	p3 := Decide(Input{CronJob: cj, Jobs: jobs, Now: at(11 * time.Minute)})
	together := p3.Status.FailureStreak
	if inOrder.Count != 1 || inOrder.PausedAt == nil || together.Count != 1 || together.PausedAt == nil {
		t.Errorf("the same outcomes counted two ways: seen in order %+v, seen together after a lost status %+v", inOrder, together)
	}
}

// A replica whose clock ran ahead started the trial and lost its status
// write: its Job, for a time still to come, is the trial all the same, and
// no second one starts.
func TestTrialFromAClockAheadIsTheOnlyTrial(t *testing.T) {
	trial := runOf(ten, "")
	cj := cronJob(sched("*/5 * * * *"), last(at(-25*time.Minute)), failurePolicy(1, 100*time.Minute, 0), failing(1, "cj-x"),
		pausedSince(at(-2*time.Hour), 1, ""))
	p := Decide(Input{CronJob: cj, Jobs: []Job{trial}, Now: at(-10 * time.Minute)})
	if got := createdTimes(p); len(got) != 0 {
		t.Errorf("at 09:50: creates %v (trialJob %q); want none: the 10:00 run's Job is this opening's trial, running", got, p.Status.FailureStreak.TrialJob)
	}
}

type errTimeout struct{}

func (errTimeout) Error() string { return "timeout" }

// A failed Job's run-record finalizer stays until a written status has
// counted its outcome (the status no longer lists it active): with a TTL
// of 0, or a user's delete, it would otherwise go before any status counted
// it, and the streak would never come.
func TestFailedJobKeepsItsFinalizerUntilAWrittenStatusCountedIt(t *testing.T) {
	j := holding(runAt9(batchv1.JobFailed))
	cj := cronJob(last(at(-time.Hour)), active(j), failurePolicy(1, 0, 0))
	p := Decide(Input{CronJob: cj, Jobs: []Job{j}, Now: ten})
	for _, r := range p.Releases {
		if r.UID == j.UID {
			t.Errorf("releases %v: the finalizer of %s goes while no written status has counted its failure", p.Releases, j.Name)
		}
	}
}

// A failure a kept decision counted (its status write deferred, then
// refused) counts once when an edit makes that decision stale: the sync
// after starts from the written streak, the Job back in status.active, and
// counts it as it leaves.
func TestFailureSeenByAKeptDecisionCountsOnceWhenItGoesStale(t *testing.T) {
	cj := cronJob(last(at(-time.Hour)), seen("0 * * * *", "UTC"), failurePolicy(2, 0, 0))
	written := *cj.Status.DeepCopy()
	p1 := Decide(Input{CronJob: cj, Now: at(time.Second)})
	made := startAll(p1)
	if len(made) != 1 {
		t.Fatalf("S1: creates %v, want the 10:00 run", createdTimes(p1))
	}
	j := holding(made[0])
	j.finished, j.failedAt = batchv1.JobFailed, &metav1.Time{Time: at(20 * time.Second)}
	// S2: same generation, from the kept status (still not written).
	p2 := Decide(Input{CronJob: withStatus(cj, p1.Status), Jobs: []Job{j}, Written: &written, Now: at(30 * time.Second)})
	if fs := p2.Status.FailureStreak; fs == nil || fs.Count != 1 {
		t.Fatalf("S2: failureStreak %+v, want count 1", fs)
	}
	edited := cj.DeepCopy()
	edited.Generation = 2
	edited.Status = StaleDecision(&written, &p2.Status)
	p3 := Decide(Input{CronJob: edited, Jobs: []Job{j}, Written: &written, Now: at(40 * time.Second)})
	if fs := p3.Status.FailureStreak; fs.Count != 1 || fs.PausedAt != nil {
		t.Errorf("S3 after the edit: failureStreak %+v, want count 1, not paused: one run failed once", fs)
	}
}

// A run a kept decision held as Paused, in a pause a run-now's success
// ended, stays held when an edit makes that decision stale: the sync after
// sees the run-now Job leave status.active again and ends the pause as of
// its finish, so the run due before it is not started late.
func TestRunHeldByAResumeInAKeptDecisionStaysHeldAfterAnEdit(t *testing.T) {
	failed := runOf(at(-time.Hour), batchv1.JobFailed)
	failed.failedAt = &metav1.Time{Time: at(-55 * time.Minute)}
	m := running(unrecorded(manualJob("", "try", 1), "", "try", 1))
	m.CreationTimestamp = metav1.NewTime(at(-20 * time.Minute))
	cj := cronJob(last(at(-time.Hour)), seen("0 * * * *", "UTC"), runNowValue("try"), handled("try", 1), active(m),
		failurePolicy(1, 0, 0), failing(1, failed.Name), pausedSince(at(-55*time.Minute), 1, ""))
	written := *cj.Status.DeepCopy()
	// M succeeds at 10:20; the controller (down, or its queue behind) syncs
	// at 10:30.
	m.finished, m.complete = batchv1.JobComplete, &metav1.Time{Time: at(20 * time.Minute)}
	jobs := []Job{failed, m}
	p1 := Decide(Input{CronJob: cj, Jobs: jobs, Now: at(30 * time.Minute)})
	if len(createdTimes(p1)) != 0 || missedFor(p1.Status, cronv1.MissedPaused) != 1 {
		t.Fatalf("S1 (10:30): creates %v missed %v; want the 10:00 run held as Paused (due before the 10:20 success)", createdTimes(p1), missedOf(p1.Status))
	}
	// Its status is kept, not written; the user edits the template.
	edited := cj.DeepCopy()
	edited.Generation = 2
	edited.Status = StaleDecision(&written, &p1.Status)
	p2 := Decide(Input{CronJob: edited, Jobs: jobs, Written: &written, Now: at(31 * time.Minute)})
	if got := createdTimes(p2); len(got) != 0 {
		t.Errorf("S2 (10:31, after the edit): creates %v, missed %v; the 10:00 run was due while paused (the pause ended at 10:20) and must not start late",
			got, missedOf(p2.Status))
	}
	if got := missedFor(p2.Status, cronv1.MissedPaused); got != 1 {
		t.Errorf("S2: Paused missed = %d, want 1 (the 10:00 run)", got)
	}
}

// The runs an adopted Job passed over count as the lost write that started
// it counted them: by the pause that write knew (none here), not by one the
// adopted Job's own failure opens now.
func TestRunPassedOverBeforeAPauseCountsAsTheLostWriteCountedIt(t *testing.T) {
	cj := cronJob(last(at(-2*time.Hour)), seen("0 * * * *", "UTC"), failurePolicy(1, 0, 0))
	// The lost write, as a sync would have made it.
	p1 := Decide(Input{CronJob: cj, Now: at(30 * time.Second)})
	made := startAll(p1)
	if len(made) != 1 || missedFor(p1.Status, cronv1.MissedSuperseded) != 1 {
		t.Fatalf("lost write: creates %v missed %v; want 10:00 started, 09:00 Superseded", createdTimes(p1), missedOf(p1.Status))
	}
	j := made[0]
	j.finished, j.failedAt = batchv1.JobFailed, &metav1.Time{Time: at(2 * time.Minute)}
	holding(j)
	p2 := Decide(Input{CronJob: cj, Jobs: []Job{j}, Now: at(5 * time.Minute)})
	if fs := p2.Status.FailureStreak; fs == nil || fs.PausedAt == nil {
		t.Fatalf("10:05: failureStreak %+v, want paused by the 10:00 run's failure", fs)
	}
	if got := missedOf(p2.Status); got[cronv1.MissedSuperseded] != 1 || got[cronv1.MissedPaused] != 0 {
		t.Errorf("10:05: missed %v; want 09:00 Superseded as the lost write counted it (no pause then), none Paused", got)
	}
}

// Under Replace the running Job is deleted before the scheduled create; a
// pause that an outcome reported later in the same plan opens does not
// then refuse that create: the run decided before the pause takes the
// deleted Job's place.
func TestReplaceDeletesNoRunningJobForNothingWhenAPauseOpensInThePlan(t *testing.T) {
	nine := holding(runOf(at(-time.Hour), ""))
	cj := cronJob(last(at(-time.Hour)), seen("0 * * * *", "UTC"), concurrency(cronv1.ReplaceConcurrent), active(nine),
		runNowValue("x"), failurePolicy(1, 0, 0))
	p := Decide(Input{CronJob: cj, Jobs: []Job{nine}, Now: at(time.Second)})
	if len(p.Deletes) != 1 || len(p.Creates) != 2 || !p.Creates[0].Manual {
		t.Fatalf("plan: deletes %v creates %d; want the 09:00 Job replaced, run-now x and 10:00", p.Deletes, len(p.Creates))
	}
	for _, d := range p.Deletes {
		p.Deleted(d)
	}
	m := &fakeJob{ObjectMeta: metav1.ObjectMeta{Name: p.Creates[0].Job.Name, Namespace: "default", UID: "uid-m",
		CreationTimestamp: metav1.NewTime(at(-time.Minute))}, manual: true, finished: batchv1.JobFailed,
		failedAt: &metav1.Time{Time: at(-30 * time.Second)}}
	p.Started(p.Creates[0], m, false)
	if !p.Wants(p.Creates[1]) {
		t.Errorf("the 09:00 Job was deleted to replace it with the 10:00 run, which the pause reported mid-plan now refuses (status %+v): a running run killed for nothing",
			p.Status.FailureStreak)
	}
}

// A trial that went before its outcome is let go before the sync looks for
// a trial whose record a crash lost: the run started as the next trial is
// found again, and no second trial starts while it runs.
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

func TestAFailedJobCountsOnceWhateverTheCacheLag(t *testing.T) {
	// The stored status counted the 09:00 Job's failure. A cache older than
	// that status (a hung watch, a standby's) still shows the Job running,
	// so a sync lists it active again; once the cache catches up, the Job
	// leaves status.active failed a second time.
	failed := runAt9(batchv1.JobFailed)
	failed.failedAt = &metav1.Time{Time: at(-30 * time.Minute)}
	stale := running(runAt9(""))
	cj := cronJob(last(at(-time.Hour)), failurePolicy(3, 0, 0), failing(2, failed.Name), entered(failed))
	p1 := Decide(Input{CronJob: cj, Jobs: []Job{stale}, Now: ten})
	p2 := Decide(Input{CronJob: withStatus(cj, p1.Status), Jobs: []Job{failed}, Now: at(time.Minute)})
	if fs := p2.Status.FailureStreak; fs.Count != 2 || fs.LastFailedJob != failed.Name || fs.PausedAt != nil {
		t.Errorf("failureStreak = %+v, want count 2, lastFailedJob %s, not paused: one failed Job, counted once", fs, failed.Name)
	}
}

// Three runs of a minutely CronJob finish within one second (completion
// times are stored to the second): the 09:57 run succeeds, the 09:58 run
// fails, the 09:59 run succeeds, and the controller sees them in that order,
// one sync each. The last success came after the failure and must end the
// pause it opened; it is the first look at that Job's outcome.
func TestASuccessAfterACountedFailureInTheSameSecondResumes(t *testing.T) {
	s := at(time.Second) // 10:00:01, the second all three finished in
	a := runOf(at(-3*time.Minute), batchv1.JobComplete)
	a.complete = &metav1.Time{Time: s}
	c := runOf(at(-2*time.Minute), batchv1.JobFailed)
	c.failedAt = &metav1.Time{Time: s}
	b := runOf(at(-time.Minute), batchv1.JobComplete)
	b.complete = &metav1.Time{Time: s}
	cj := cronJob(sched("* * * * *"), last(at(-time.Minute)), active(a, c, b), failurePolicy(1, 0, 0))

	p1 := Decide(Input{CronJob: cj, Jobs: []Job{a, running(runOf(at(-2*time.Minute), "")), running(runOf(at(-time.Minute), ""))}, Now: at(2 * time.Second)})
	p2 := Decide(Input{CronJob: withStatus(cj, p1.Status), Jobs: []Job{a, c, running(runOf(at(-time.Minute), ""))}, Now: at(3 * time.Second)})
	if fs := p2.Status.FailureStreak; fs.PausedAt == nil {
		t.Fatalf("after the failure: failureStreak %+v, want paused (pauseAfter 1)", fs)
	}
	p3 := Decide(Input{CronJob: withStatus(cj, p2.Status), Jobs: []Job{a, c, b}, Now: at(4 * time.Second)})
	if fs := p3.Status.FailureStreak; fs.PausedAt != nil || fs.Count != 0 {
		t.Errorf("after the 09:59 run's success, seen for the first time: failureStreak %+v, Paused %s; want resumed, count 0 (its success was skipped as counted before: it completed in the same second as lastSuccessfulTime)",
			fs, pausedCondition(p3.Status))
	}
}

// A replica whose clock ran ahead made the 12:00 run's Job at about 10:00;
// it succeeded at 10:05. A sync before 12:00 leaves it uncounted (no run
// yet) but moves lastSuccessfulTime to 10:05. At 12:00 its success must
// count and end the streak (as the same Job failed counts, see
// TestRunFromAClockAheadCountsOnceWhenItsTimeComes).
func TestASuccessFromAClockAheadCountsWhenItsTimeComes(t *testing.T) {
	for _, seenActive := range []bool{false, true} {
		j := runOf(at(2*time.Hour), batchv1.JobComplete)
		j.complete = &metav1.Time{Time: at(5 * time.Minute)}
		opts := []func(*cronv1.CronJob){last(at(-time.Hour)), failurePolicy(3, 0, 0), failing(2, "cj-x")}
		if seenActive {
			opts = append(opts, active(j))
		}
		cj := cronJob(opts...)
		st := cj.Status
		for i, now := range []time.Time{at(10 * time.Minute), at(2*time.Hour + time.Second), at(2*time.Hour + time.Minute)} {
			p := Decide(Input{CronJob: withStatus(cj, st), Jobs: []Job{j}, Now: now})
			st = p.Status
			want := int32(2)
			if !now.Before(at(2 * time.Hour)) {
				want = 0
			}
			if fs := st.FailureStreak; fs.Count != want {
				t.Errorf("seen active first %v, sync %d at %s: failureStreak %+v (lastSuccessfulTime %v), want count %d: the 12:00 run succeeded, counted once its time has come",
					seenActive, i+1, now.Format("15:04:05"), fs, st.LastSuccessfulTime, want)
				break
			}
		}
	}
}

// A Job the controller did not make (it carries the CronJob's owner
// reference, no scheduled-at annotation) is tracked but not counted; its
// success still moves status.lastSuccessfulTime. The 09:00 run's success,
// seen a sync later than that Job's later success, must still end the
// streak: the foreign Job's success is no outcome the status counted.
func TestARunsSuccessIsNotSilencedByTheSuccessOfAJobTheControllerDidNotMake(t *testing.T) {
	foreign := &fakeJob{ObjectMeta: metav1.ObjectMeta{Name: "by-hand", Namespace: "default", UID: types.UID("uid-by-hand")},
		finished: batchv1.JobComplete, complete: &metav1.Time{Time: at(-50 * time.Minute)}}
	nine := runAt9(batchv1.JobComplete) // complete at 09:05
	nine.complete = &metav1.Time{Time: at(-55 * time.Minute)}
	cj := cronJob(last(at(-time.Hour)), active(foreign, nine), failurePolicy(3, 0, 0), failing(2, "cj-x"))

	p1 := Decide(Input{CronJob: cj, Jobs: []Job{foreign, running(runAt9(""))}, Now: at(-45 * time.Minute)})
	if fs := p1.Status.FailureStreak; fs.Count != 2 {
		t.Fatalf("after the foreign Job's success: failureStreak %+v, want count 2: it does not count", fs)
	}
	p2 := Decide(Input{CronJob: withStatus(cj, p1.Status), Jobs: []Job{foreign, nine}, Now: at(-44 * time.Minute)})
	if fs := p2.Status.FailureStreak; fs.Count != 0 || fs.LastFailedJob != "" {
		t.Errorf("after the 09:00 run's success: failureStreak %+v, want count 0: its success, seen for the first time, ends the streak (skipped: it completed before lastSuccessfulTime, which a Job that never counts set)", fs)
	}
}

// The trial's success must end the pause though a Job the controller did
// not make completed later and was seen first.
func TestATrialsSuccessResumesThoughAnUncountedJobSucceededLater(t *testing.T) {
	foreign := &fakeJob{ObjectMeta: metav1.ObjectMeta{Name: "by-hand", Namespace: "default", UID: types.UID("uid-by-hand")},
		finished: batchv1.JobComplete, complete: &metav1.Time{Time: at(-50 * time.Minute)}}
	trial := runAt9(batchv1.JobComplete)
	trial.complete = &metav1.Time{Time: at(-55 * time.Minute)}
	cj := cronJob(last(at(-time.Hour)), active(foreign, trial), failurePolicy(1, 30*time.Minute, 0), failing(1, "cj-x"),
		pausedSince(at(-2*time.Hour), 1, trial.Name))

	p1 := Decide(Input{CronJob: cj, Jobs: []Job{foreign, running(runAt9(""))}, Now: at(-45 * time.Minute)})
	p2 := Decide(Input{CronJob: withStatus(cj, p1.Status), Jobs: []Job{foreign, trial}, Now: at(-44 * time.Minute)})
	if fs := p2.Status.FailureStreak; fs.PausedAt != nil {
		t.Errorf("after the trial's success: failureStreak %+v, Paused %s, events %v; want resumed", fs, pausedCondition(p2.Status), eventsOf(p2))
	}
}

// The 08:00 run failed (counted: lastFailedJob), then the 09:00 run
// succeeded (counted: the streak ends, lastFailedJob cleared). A cache older
// than that status shows the 08:00 Job running; once it catches up, the
// 08:00 Job leaves status.active failed again. Its failure was counted and
// wiped by the success after it: counted again, it starts a streak that
// pauses a CronJob whose last run succeeded.
func TestAFailureEndedByASuccessCountsOnceWhateverTheCacheLag(t *testing.T) {
	eight := runOf(at(-2*time.Hour), batchv1.JobFailed)
	eight.failedAt = &metav1.Time{Time: at(-110 * time.Minute)}
	nine := runAt9(batchv1.JobComplete)
	cj := cronJob(last(at(-time.Hour)), active(eight), failurePolicy(1, 0, 0))

	p1 := Decide(Input{CronJob: cj, Jobs: []Job{eight, running(runAt9(""))}, Now: at(-100 * time.Minute)})
	if fs := p1.Status.FailureStreak; fs.PausedAt == nil || fs.LastFailedJob != eight.Name {
		t.Fatalf("after 08:00's failure: %+v, want paused", fs)
	}
	p2 := Decide(Input{CronJob: withStatus(cj, p1.Status), Jobs: []Job{eight, nine}, Now: at(-50 * time.Minute)})
	if fs := p2.Status.FailureStreak; fs.PausedAt != nil || fs.Count != 0 {
		t.Fatalf("after 09:00's success: %+v, want resumed", fs)
	}
	// A stale cache: the 08:00 Job running again.
	p3 := Decide(Input{CronJob: withStatus(cj, p2.Status), Jobs: []Job{running(runOf(at(-2*time.Hour), "")), nine}, Now: at(-40 * time.Minute)})
	p4 := Decide(Input{CronJob: withStatus(cj, p3.Status), Jobs: []Job{eight, nine}, Now: at(-30 * time.Minute)})
	if fs := p4.Status.FailureStreak; fs.Count != 0 || fs.PausedAt != nil {
		t.Errorf("the 08:00 failure seen again: failureStreak %+v, Paused %s; want count 0, not paused: counted once, and the 09:00 success after it ended its streak",
			fs, pausedCondition(p4.Status))
	}
}

// Outcomes count in the order the Jobs finished whatever the syncs: the
// 09:00 run failed at 09:50, the 09:30 run succeeded at 09:55; the success
// is seen first, the failure a sync later. In finish order the success ends
// the streak. (Not from this change: the failure side has no check.)
func TestAFailureSeenAfterALaterSuccessStartsNoStreak(t *testing.T) {
	nine := runOf(at(-time.Hour), batchv1.JobFailed)
	nine.failedAt = &metav1.Time{Time: at(-10 * time.Minute)}
	ninethirty := runOf(at(-30*time.Minute), batchv1.JobComplete)
	ninethirty.complete = &metav1.Time{Time: at(-5 * time.Minute)}
	cj := cronJob(sched("0,30 * * * *"), last(at(-30*time.Minute)), active(nine, ninethirty), failurePolicy(1, 0, 0))
	p1 := Decide(Input{CronJob: cj, Jobs: []Job{running(runOf(at(-time.Hour), "")), ninethirty}, Now: at(-4 * time.Minute)})
	p2 := Decide(Input{CronJob: withStatus(cj, p1.Status), Jobs: []Job{nine, ninethirty}, Now: at(-3 * time.Minute)})
	together := Decide(Input{CronJob: cj, Jobs: []Job{nine, ninethirty}, Now: at(-3 * time.Minute)})
	if a, b := p2.Status.FailureStreak, together.Status.FailureStreak; a.Count != b.Count || (a.PausedAt == nil) != (b.PausedAt == nil) {
		t.Errorf("the same outcomes counted two ways: seen one by one %+v, seen together %+v", a, b)
	}
}

// lastFailedJob silences a failed Job by name only: the trial (a new run)
// failing right after the streak's last failure still counts and reopens.
func TestATrialFailingAfterTheStreakCountsAndReopens(t *testing.T) {
	trial := runOf(ten, batchv1.JobFailed)
	trial.failedAt = &metav1.Time{Time: at(5 * time.Minute)}
	cj := cronJob(last(ten), active(trial), failurePolicy(1, 30*time.Minute, 0), failing(1, runAt9("").Name),
		pausedSince(at(-50*time.Minute), 1, trial.Name))
	p := Decide(Input{CronJob: cj, Jobs: []Job{trial}, Now: at(6 * time.Minute)})
	if fs := p.Status.FailureStreak; fs.Pauses != 2 || fs.Count != 2 || fs.LastFailedJob != trial.Name || fs.TrialJob != "" {
		t.Errorf("failureStreak %+v, want pauses 2, count 2, lastFailedJob %s", fs, trial.Name)
	}
	// Seen again through a stale cache: counted once.
	p2 := Decide(Input{CronJob: withStatus(cj, p.Status), Jobs: []Job{running(runOf(ten, ""))}, Now: at(7 * time.Minute)})
	p3 := Decide(Input{CronJob: withStatus(cj, p2.Status), Jobs: []Job{trial}, Now: at(8 * time.Minute)})
	if fs := p3.Status.FailureStreak; fs.Pauses != 2 || fs.Count != 2 {
		t.Errorf("the failed trial seen again: failureStreak %+v, want pauses 2, count 2", fs)
	}
}

// The sync that starts the trial and the next sync, with nothing changed
// between them but a second, decide the same status: while the trial runs
// no run is next (pausedNext), whichever schedule, so nextScheduleTime is
// unset from the start.
func TestTheSyncThatStartsATrialSaysWhatTheNextSyncSays(t *testing.T) {
	for name, sched := range map[string]func(*cronv1.CronJob){
		"one schedule": last(at(-time.Hour)),
		"several schedules": func(cj *cronv1.CronJob) {
			schedules("0 * * * *", "5 * * * *")(cj)
			last(at(-55 * time.Minute))(cj)
		},
	} {
		cj := cronJob(sched, failurePolicy(2, 30*time.Minute, 0), failing(2, "cj-x"), pausedSince(at(-50*time.Minute), 1, ""))
		p := Decide(Input{CronJob: cj, Now: at(time.Second)})
		if len(p.Creates) != 1 || !p.Creates[0].Trial {
			t.Fatalf("%s: creates = %+v, want the trial", name, p.Creates)
		}
		trial := running(runOf(ten, ""))
		p.Started(p.Creates[0], trial, false)
		p2 := Decide(Input{CronJob: withStatus(cj, p.Status), Jobs: []Job{trial}, Now: at(2 * time.Second)})
		if a, b := p.Status.NextScheduleTime, p2.Status.NextScheduleTime; !sameTime(a, b) {
			t.Errorf("%s: nextScheduleTime: %v from the sync that started the trial, %v from the next: the next sync writes the status again for nothing", name, a, b)
		}
	}
}

// sameTime reports whether two optional times are both unset or equal.
func sameTime(a, b *metav1.Time) bool {
	return (a == nil) == (b == nil) && (a == nil || a.Equal(b))
}

// The trial, made early by a replica whose clock ran ahead, succeeded
// before its time. Its success must end the pause once its time has come,
// as it did before countedBefore: the sync before its time moved
// lastSuccessfulTime to its completion without counting it.
func TestATrialsSuccessFromAClockAheadResumesWhenItsTimeComes(t *testing.T) {
	trial := runOf(ten, batchv1.JobComplete)
	trial.complete = &metav1.Time{Time: at(-5 * time.Minute)}
	cj := cronJob(last(at(-time.Hour)), active(trial), failurePolicy(1, 30*time.Minute, 0), failing(1, "cj-x"),
		pausedSince(at(-70*time.Minute), 1, trial.Name))
	st := cj.Status
	for _, now := range []time.Time{at(-4 * time.Minute), at(time.Second), at(time.Minute)} {
		p := Decide(Input{CronJob: withStatus(cj, st), Jobs: []Job{trial}, Now: now})
		st = p.Status
	}
	if fs := st.FailureStreak; fs.PausedAt != nil || fs.Count != 0 {
		t.Errorf("at 10:01: failureStreak %+v, Paused %s, lastSuccessfulTime %v; want resumed: the trial succeeded",
			fs, pausedCondition(st), st.LastSuccessfulTime)
	}
}

// byHand is a Job the controller did not make (no scheduled-at annotation)
// that completed at done: its outcome does not count, but it moves
// status.lastSuccessfulTime.
func byHand(done time.Time) *fakeJob {
	return &fakeJob{ObjectMeta: metav1.ObjectMeta{Name: "by-hand", Namespace: "default", UID: types.UID("uid-by-hand")},
		finished: batchv1.JobComplete, complete: &metav1.Time{Time: done}}
}

// The trial (the 10:00 run) failed at 10:05; a Job made by hand completed
// at 10:06 and was seen first. The trial's failure must reopen the pause
// (pauses 2, the cool-down doubled, a Paused Event), not be dropped as seen
// before, leaving the pause with no trial and its cool-down already over.
func TestATrialsFailureReopensThoughAnUncountedJobSucceededLater(t *testing.T) {
	trial := runOf(ten, batchv1.JobFailed)
	trial.failedAt = &metav1.Time{Time: at(5 * time.Minute)}
	foreign := byHand(at(6 * time.Minute))
	cj := cronJob(sched("*/10 * * * *"), last(ten), active(trial, foreign), failurePolicy(1, 30*time.Minute, 0), failing(1, "cj-x"),
		pausedSince(at(-50*time.Minute), 1, trial.Name))
	p1 := Decide(Input{CronJob: cj, Jobs: []Job{running(runOf(ten, "")), foreign}, Now: at(7 * time.Minute)})
	p2 := Decide(Input{CronJob: withStatus(cj, p1.Status), Jobs: []Job{trial, foreign}, Now: at(8 * time.Minute)})
	fs := p2.Status.FailureStreak
	if fs.Pauses != 2 || fs.LastFailedJob != trial.Name || fs.PausedAt == nil || !fs.PausedAt.Time.Equal(at(5*time.Minute)) || !hasEvent(p2, ReasonPaused) {
		t.Errorf("after the trial's failure: failureStreak %+v, Paused %s, events %v; want reopened as of 10:05, pauses 2, lastFailedJob %s",
			fs, pausedCondition(p2.Status), eventsOf(p2), trial.Name)
	}
	// What follows: the 10:10 run must not start as a second trial at once.
	p3 := Decide(Input{CronJob: withStatus(cj, p2.Status), Jobs: []Job{trial, foreign}, Now: at(10*time.Minute + time.Second)})
	if len(p3.Creates) != 0 {
		t.Errorf("at 10:10:01, 5 minutes after the trial failed: creates %+v; want none before a doubled cool-down (an hour)", p3.Creates)
	}
}

// 08:00 succeeded (counted), then 09:00 and 09:30 failed: paused. A cache
// older than those statuses shows the 08:00 Job running again; once it
// catches up the 08:00 Job leaves status.active complete again. Its success
// was counted long before the failures that paused: counted again, it ends
// the pause (Resumed, "Job cj-... succeeded") though the last two runs
// failed.
func TestASuccessSeenAgainThroughAStaleCacheDoesNotEndALaterPause(t *testing.T) {
	eight := runOf(at(-2*time.Hour), batchv1.JobComplete) // completes 08:05
	nine := runAt9(batchv1.JobFailed)
	nine.failedAt = &metav1.Time{Time: at(-50 * time.Minute)}
	ninethirty := runOf(at(-30*time.Minute), batchv1.JobFailed)
	ninethirty.failedAt = &metav1.Time{Time: at(-20 * time.Minute)}
	cj := cronJob(sched("0,30 * * * *"), last(at(-30*time.Minute)), failurePolicy(2, 0, 0), active(eight))
	p1 := Decide(Input{CronJob: cj, Jobs: []Job{eight}, Now: at(-100 * time.Minute)})
	cj2 := withStatus(cj, p1.Status)
	cj2.Status.Active = nil
	cj2 = withStatus(cj2, cj2.Status)
	active(nine, ninethirty)(cj2)
	p2 := Decide(Input{CronJob: cj2, Jobs: []Job{eight, nine, ninethirty}, Now: at(-15 * time.Minute)})
	if fs := p2.Status.FailureStreak; fs.PausedAt == nil || fs.Count != 2 {
		t.Fatalf("after 09:00 and 09:30 failed: %+v, want paused", fs)
	}
	// A stale cache: the 08:00 Job running again, then complete again.
	p3 := Decide(Input{CronJob: withStatus(cj, p2.Status), Jobs: []Job{running(runOf(at(-2*time.Hour), "")), nine, ninethirty}, Now: at(-10 * time.Minute)})
	p4 := Decide(Input{CronJob: withStatus(cj, p3.Status), Jobs: []Job{eight, nine, ninethirty}, Now: at(-5 * time.Minute)})
	if fs := p4.Status.FailureStreak; fs.PausedAt == nil || fs.Count != 2 {
		t.Errorf("the 08:00 success seen again: failureStreak %+v, Paused %s, events %v; want still paused, count 2",
			fs, pausedCondition(p4.Status), eventsOf(p4))
	}
}

// The sync that starts the trial finds its Job finished already (made by a
// sync whose status write was lost), complete: the pause ends in that sync,
// so scheduled runs resume and the next time must show, as the next sync
// would say.
func TestATrialFoundSucceededAtItsStartShowsTheNextRun(t *testing.T) {
	cj := cronJob(last(at(-time.Hour)), failurePolicy(2, 30*time.Minute, 0), failing(2, "cj-x"), pausedSince(at(-50*time.Minute), 1, ""))
	p := Decide(Input{CronJob: cj, Now: at(time.Second)})
	if len(p.Creates) != 1 || !p.Creates[0].Trial {
		t.Fatalf("creates = %+v, want the trial", p.Creates)
	}
	trial := runOf(ten, batchv1.JobComplete)
	trial.complete = &metav1.Time{Time: at(time.Second)}
	p.Started(p.Creates[0], trial, false)
	if fs := p.Status.FailureStreak; fs.PausedAt != nil {
		t.Fatalf("failureStreak %+v, want resumed", fs)
	}
	p2 := Decide(Input{CronJob: withStatus(cj, p.Status), Jobs: []Job{trial}, Now: at(2 * time.Second)})
	if a, b := p.Status.NextScheduleTime, p2.Status.NextScheduleTime; !sameTime(a, b) {
		t.Errorf("nextScheduleTime: %v from the sync that started (and resumed by) the trial, %v from the next", a, b)
	}
}

// syncChain is a CronJob synced again and again, each sync from the status
// the one before it decided, its creates carried out by startAll.
type syncChain struct {
	cj   *cronv1.CronJob
	jobs []*fakeJob
}

// sync decides at now from the Jobs made so far, and makes its creates.
func (c *syncChain) sync(now time.Time) *Plan { return c.syncSeeing(now, asJobs(c.jobs)) }

// syncSeeing decides at now from view, the Jobs as a cache shows them.
func (c *syncChain) syncSeeing(now time.Time, view []Job) *Plan {
	p := Decide(Input{CronJob: c.cj, Jobs: view, Now: now})
	c.jobs = append(c.jobs, startAll(p)...)
	c.cj = withStatus(c.cj, p.Status)
	return p
}

// job is the Job made for the run at t.
func (c *syncChain) job(t time.Time) *fakeJob {
	for _, j := range c.jobs {
		if j.scheduled.Equal(t) && !j.manual {
			return j
		}
	}
	panic("no Job for " + t.String())
}

// finish ends the run at t as end at done.
func (c *syncChain) finish(t time.Time, end batchv1.JobConditionType, done time.Time) *fakeJob {
	j := c.job(t)
	j.finished = end
	if end == batchv1.JobFailed {
		j.failedAt = &metav1.Time{Time: done}
	} else {
		j.complete = &metav1.Time{Time: done}
	}
	return j
}

// staleRunning is j as a cache older than its finish shows it: running.
func staleRunning(j *fakeJob) Job {
	c := *j
	return running(&c)
}

// Issue 37, case 1. pauseAfter 3: the 08:00 and 09:00 runs failed and were
// counted. A cache older than that status shows the 08:00 Job running,
// then failed again: its outcome is in the run history already, so it
// counts once, and the 10:00 run starts.
func TestAFailureBroughtBackByAStaleCacheCountsOnce(t *testing.T) {
	c := &syncChain{cj: cronJob(last(at(-3*time.Hour)), failurePolicy(3, 0, 0))}
	c.sync(at(-2*time.Hour + time.Second))
	c.finish(at(-2*time.Hour), batchv1.JobFailed, at(-110*time.Minute))
	c.sync(at(-time.Hour + time.Second))
	c.finish(at(-time.Hour), batchv1.JobFailed, at(-50*time.Minute))
	c.sync(at(-45 * time.Minute))
	if fs := c.cj.Status.FailureStreak; fs.Count != 2 {
		t.Fatalf("after two failures: failureStreak %+v, want count 2", fs)
	}
	c.syncSeeing(at(-40*time.Minute), []Job{staleRunning(c.job(at(-2 * time.Hour))), c.job(at(-time.Hour))})
	c.sync(at(-30 * time.Minute))
	p := c.sync(at(time.Second))
	if fs := p.Status.FailureStreak; fs.Count != 2 || fs.PausedAt != nil || len(createdTimes(p)) != 1 {
		t.Errorf("the 08:00 failure seen again: failureStreak %+v, creates %v; want count 2, not paused, the 10:00 run started", fs, createdTimes(p))
	}
}

// Issue 37, case 2. pauseAfter 1: paused by the 09:00 failure, the user
// resumes. A stale cache shows the 09:00 Job running, then failed: it was
// counted before the resume, and does not pause again.
func TestAFailureCountedBeforeAResumeDoesNotPauseAgain(t *testing.T) {
	c := &syncChain{cj: cronJob(last(at(-2*time.Hour)), failurePolicy(1, 0, 0))}
	c.sync(at(-time.Hour + time.Second))
	c.finish(at(-time.Hour), batchv1.JobFailed, at(-50*time.Minute))
	c.sync(at(-45 * time.Minute))
	if c.cj.Status.FailureStreak.PausedAt == nil {
		t.Fatalf("after the 09:00 failure: failureStreak %+v, want paused", c.cj.Status.FailureStreak)
	}
	annotated(cronv1.ResumeAnnotation, "r1")(c.cj)
	c.sync(at(-40 * time.Minute))
	c.syncSeeing(at(-35*time.Minute), []Job{staleRunning(c.job(at(-time.Hour)))})
	c.sync(at(-30 * time.Minute))
	p := c.sync(at(time.Second))
	if fs := p.Status.FailureStreak; fs.PausedAt != nil || fs.Count != 0 || len(createdTimes(p)) != 1 {
		t.Errorf("the 09:00 failure seen again after the resume: failureStreak %+v, creates %v; want count 0, not paused, the 10:00 run started", fs, createdTimes(p))
	}
}

// Issue 37, case 3. Paused without resumeAfter; the user's run-now starts
// in a burst (its status kept, not written) and finishes; the sync that
// sees it finish loses its write to a conflict with an edit, and the next
// sync starts from StaleDecision. The run-now's outcome counts all the
// same: its success resumes, its failure counts.
func TestARunNowsOutcomeCountsWhenTheDecisionThatSawItIsLost(t *testing.T) {
	for _, tc := range []struct {
		name   string
		end    batchv1.JobConditionType
		policy func(*cronv1.CronJob)
		streak func(*cronv1.CronJob)
		paused bool
		count  int32
	}{
		{"success", batchv1.JobComplete, failurePolicy(1, 0, 0), pausedSince(ten, 1, ""), false, 0},
		{"failure", batchv1.JobFailed, failurePolicy(2, 0, 0), func(*cronv1.CronJob) {}, true, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cj := cronJob(last(ten), tc.policy, failing(1, "cj-x"), tc.streak, runNowValue("try-the-fix"))
			written := *cj.Status.DeepCopy()
			p1 := Decide(Input{CronJob: cj, Now: at(time.Minute)})
			made := startAll(p1)
			if len(made) != 1 || !made[0].manual {
				t.Fatalf("S1 made %v, want the run-now Job", made)
			}
			m := unrecorded(made[0], "", "try-the-fix", 1)
			m.CreationTimestamp = metav1.NewTime(at(time.Minute))
			m.finished = tc.end
			m.complete, m.failedAt = &metav1.Time{Time: at(2 * time.Minute)}, &metav1.Time{Time: at(2 * time.Minute)}
			// S2 (same generation) starts from the kept S1 and sees it
			// finish; its write meets a conflict: kept too.
			p2 := Decide(Input{CronJob: withStatus(cj, p1.Status), Jobs: []Job{m}, Written: &written, Now: at(3 * time.Minute)})
			// An edit: S3 starts from what StaleDecision keeps.
			edited := cj.DeepCopy()
			edited.Generation = 2
			edited.Status = StaleDecision(&written, &p2.Status)
			p3 := Decide(Input{CronJob: edited, Jobs: []Job{m}, Written: &written, Now: at(4 * time.Minute)})
			if fs := p3.Status.FailureStreak; (fs.PausedAt != nil) != tc.paused || fs.Count != tc.count {
				t.Errorf("S3: failureStreak %+v, want paused %v, count %d: the run-now Job %s %s", fs, tc.paused, tc.count, m.Name, tc.end)
			}
		})
	}
}

// Issue 37, case 4. pauseAfter 3: the 08:00 run succeeded (counted), the
// 09:00 and 09:30 runs failed. A stale cache brings the 08:00 Job back,
// running, then complete: its success was counted, and must not wipe the
// failures after it, so the 10:00 run's failure pauses.
func TestASuccessBroughtBackByAStaleCacheWipesNoLaterFailure(t *testing.T) {
	c := &syncChain{cj: cronJob(sched("0,30 * * * *"), last(at(-150*time.Minute)), failurePolicy(3, 0, 0))}
	c.sync(at(-2*time.Hour + time.Second))
	c.finish(at(-2*time.Hour), batchv1.JobComplete, at(-115*time.Minute))
	c.sync(at(-90*time.Minute + time.Second))
	c.finish(at(-90*time.Minute), batchv1.JobComplete, at(-85*time.Minute))
	c.sync(at(-time.Hour + time.Second))
	c.finish(at(-time.Hour), batchv1.JobFailed, at(-55*time.Minute))
	c.sync(at(-30*time.Minute + time.Second))
	c.finish(at(-30*time.Minute), batchv1.JobFailed, at(-25*time.Minute))
	c.sync(at(-20 * time.Minute))
	if fs := c.cj.Status.FailureStreak; fs.Count != 2 {
		t.Fatalf("after 09:00 and 09:30 failed: failureStreak %+v, want count 2", fs)
	}
	view := asJobs(c.jobs)
	view[0] = staleRunning(c.job(at(-2 * time.Hour)))
	c.syncSeeing(at(-10*time.Minute), view)
	c.sync(at(-5 * time.Minute))
	c.sync(at(time.Second))
	c.finish(ten, batchv1.JobFailed, at(5*time.Minute))
	p := c.sync(at(6 * time.Minute))
	if fs := p.Status.FailureStreak; fs.Count != 3 || fs.PausedAt == nil {
		t.Errorf("after the 10:00 run failed: failureStreak %+v, want count 3 and paused: the 08:00 success seen again wiped the two failures after it", fs)
	}
}

// Issue 37, case 5. A run found failed already when the sync that starts it
// meets its Job (made by a sync whose status was lost) moves the breaker in
// that sync; nextScheduleTime must then say what the next sync says, not
// the time planned before the pause (a run the pause holds).
func TestARunFoundFailedAtItsStartShowsTheNextRunAsTheNextSyncDoes(t *testing.T) {
	for _, tc := range []struct {
		name string
		cj   *cronv1.CronJob
	}{
		{"run-now opens a pause", cronJob(sched("*/10 * * * *"), last(ten), failurePolicy(2, 30*time.Minute, 0), failing(1, "cj-x"), runNowValue("again"))},
		{"run-now opens a pause without resumeAfter", cronJob(sched("*/10 * * * *"), last(ten), failurePolicy(2, 0, 0), failing(1, "cj-x"), runNowValue("again"))},
		{"trial reopens", cronJob(sched("*/10 * * * *"), last(at(-10*time.Minute)), failurePolicy(1, 30*time.Minute, 0), failing(1, "cj-x"), pausedSince(at(-40*time.Minute), 1, ""))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := Decide(Input{CronJob: tc.cj, Now: at(time.Minute)})
			if len(p.Creates) != 1 {
				t.Fatalf("creates %+v, want one", p.Creates)
			}
			c := p.Creates[0]
			var j *fakeJob
			if c.Manual {
				j = &fakeJob{ObjectMeta: metav1.ObjectMeta{Name: c.Job.Name, Namespace: "default", UID: types.UID("uid-" + c.Job.Name),
					CreationTimestamp: metav1.NewTime(at(30 * time.Second))}, manual: true}
			} else {
				j = runOf(c.Time, "")
			}
			j.finished, j.failedAt = batchv1.JobFailed, &metav1.Time{Time: at(45 * time.Second)}
			p.Started(c, j, false)
			if fs := p.Status.FailureStreak; fs.PausedAt == nil {
				t.Fatalf("failureStreak %+v, want paused by the failure", fs)
			}
			p2 := Decide(Input{CronJob: withStatus(tc.cj, p.Status), Jobs: []Job{j}, Now: at(time.Minute + time.Second)})
			if a, b := p.Status.NextScheduleTime, p2.Status.NextScheduleTime; !sameTime(a, b) {
				t.Errorf("nextScheduleTime: %v from the sync that met the failure, %v from the next", a, b)
			}
		})
	}
}

// Issue 37, case 6. The sync that starts the trial loses its status write
// to a user's edit of resumeAfter (a longer cool-down): the trial started
// all the same, and stays the trial. No second trial starts while it runs,
// and its failure reopens the pause, the cool-down doubled.
func TestATrialStaysTheTrialWhenAnEditOfResumeAfterLosesItsStatus(t *testing.T) {
	cj := cronJob(sched("*/10 * * * *"), last(at(-10*time.Minute)), failurePolicy(1, 30*time.Minute, 0), failing(1, "cj-x"),
		pausedSince(at(-40*time.Minute), 1, ""))
	written := *cj.Status.DeepCopy()
	p1 := Decide(Input{CronJob: cj, Now: at(time.Second)})
	made := startAll(p1)
	if len(made) != 1 || p1.Status.FailureStreak.TrialJob != made[0].Name {
		t.Fatalf("S1: made %d, failureStreak %+v; want the 10:00 trial", len(made), p1.Status.FailureStreak)
	}
	trial := made[0]
	edited := cj.DeepCopy()
	edited.Generation = 2
	edited.Spec.FailurePolicy.ResumeAfter = &metav1.Duration{Duration: time.Hour}
	edited.Status = StaleDecision(&written, &p1.Status)
	p2 := Decide(Input{CronJob: edited, Jobs: []Job{trial}, Written: &written, Now: at(2 * time.Second)})
	st := p2.Status
	// resumeAt is now 10:20: the 10:20 run must not be a second trial.
	p3 := Decide(Input{CronJob: withStatus(edited, st), Jobs: []Job{trial}, Now: at(20*time.Minute + time.Second)})
	if len(p3.Creates) != 0 {
		t.Errorf("10:20: creates %+v (trialJob %q); want none while the 10:00 trial runs", createdTimes(p3), p3.Status.FailureStreak.TrialJob)
	}
	trial.finished, trial.failedAt = batchv1.JobFailed, &metav1.Time{Time: at(25 * time.Minute)}
	p4 := Decide(Input{CronJob: withStatus(edited, p3.Status), Jobs: []Job{trial}, Now: at(26 * time.Minute)})
	if fs := p4.Status.FailureStreak; fs.Pauses != 2 || fs.PausedAt == nil || !fs.PausedAt.Time.Equal(at(25*time.Minute)) {
		t.Errorf("after the trial failed: failureStreak %+v, want reopened as of 10:25, pauses 2", fs)
	}
}

// The controller puts no bound on a trial that never finishes (the Job's
// own activeDeadlineSeconds is one): the condition says since when it runs.
func TestATrialSaysSinceWhenItRuns(t *testing.T) {
	cj := cronJob(last(at(-time.Hour)), failurePolicy(2, 30*time.Minute, 0), failing(2, "cj-x"), pausedSince(at(-50*time.Minute), 1, ""))
	p := Decide(Input{CronJob: cj, Now: at(time.Second)})
	made := startAll(p)
	made[0].CreationTimestamp = metav1.NewTime(at(time.Second))
	p2 := Decide(Input{CronJob: withStatus(cj, p.Status), Jobs: asJobs(made), Now: at(3 * time.Hour)})
	c := meta.FindStatusCondition(p2.Status.Conditions, cronv1.ConditionPaused)
	if c == nil || c.Reason != ReasonTrialRunning || !strings.Contains(c.Message, "running since "+formatTime(at(time.Second))) {
		t.Errorf("Paused condition %+v, want TrialRunning saying since when the trial runs", c)
	}
}

// A run started by a sync that did not know of the pause (its status older
// than the pause's), due after the cool-down, is the trial: no second trial
// starts, and a TrialRun Event says so, once.
func TestARunStartedBeforeThePauseWasKnownBecomesTheTrialWithAnEvent(t *testing.T) {
	j := running(runOf(ten, ""))
	cj := cronJob(last(ten), failurePolicy(1, 30*time.Minute, 0), failing(1, "cj-x"), pausedSince(at(-50*time.Minute), 1, ""))
	p := Decide(Input{CronJob: cj, Jobs: []Job{j}, Now: at(time.Minute)})
	if fs := p.Status.FailureStreak; fs.TrialJob != j.Name || !hasEvent(p, ReasonTrialRun) {
		t.Fatalf("failureStreak %+v, events %v: want %s named the trial, with a TrialRun Event", fs, eventsOf(p), j.Name)
	}
	if got := historyOf(p.Status); !slices.Equal(got, []string{j.Name + ":Trial:Running"}) {
		t.Errorf("recentRuns %v, want the run recorded as the trial", got)
	}
	p2 := Decide(Input{CronJob: withStatus(cj, p.Status), Jobs: []Job{j}, Now: at(time.Hour)})
	if hasEvent(p2, ReasonTrialRun) || len(p2.Creates) != 0 {
		t.Errorf("the next sync: events %v, creates %v; want no second TrialRun and no run while the trial runs", eventsOf(p2), createdTimes(p2))
	}
}

// A trial Job deleted by hand, held by a finalizer while it goes, is no
// trial any more: the run started as the next trial, whose create answer
// was lost (so no status named it), is the trial, and no third starts
// while it runs. (Model walk seed 6816.)
func TestATrialDeletedByHandIsNotTheTrialOfALaterOne(t *testing.T) {
	cj := cronJob(last(at(-time.Hour)), failurePolicy(2, 30*time.Minute, 0), failing(2, "cj-x"), pausedSince(at(-50*time.Minute), 1, ""))
	p0 := Decide(Input{CronJob: cj, Now: at(time.Second)})
	made := startAll(p0)
	if len(made) != 1 || p0.Status.FailureStreak.TrialJob != made[0].Name {
		t.Fatalf("10:00: made %d, failureStreak %+v; want the 10:00 trial", len(made), p0.Status.FailureStreak)
	}
	deleted := deleting(holding(made[0]))

	// 11:00: the deleted trial is let go, and the 11:00 run starts as the
	// next trial; its Job is made but the answer is lost.
	p1 := Decide(Input{CronJob: withStatus(cj, p0.Status), Jobs: []Job{deleted}, Now: at(time.Hour + time.Second)})
	if len(p1.Creates) != 1 || !p1.Creates[0].Trial || !p1.Creates[0].Time.Equal(at(time.Hour)) {
		t.Fatalf("11:00: creates %+v, want the 11:00 run as the next trial", p1.Creates)
	}
	p1.CreateFailed(p1.Creates[0], errTimeout{})
	next := runOf(at(time.Hour), "")

	// 12:00: both Jobs are there; the 11:00 one is the trial.
	p2 := Decide(Input{CronJob: withStatus(cj, p1.Status), Jobs: []Job{deleted, next}, Now: at(2*time.Hour + time.Second)})
	if len(p2.Creates) != 0 {
		t.Errorf("12:00: creates %v, want none while the 11:00 trial runs", createdTimes(p2))
	}
	if fs := p2.Status.FailureStreak; fs.TrialJob != next.Name || fs.PausedAt == nil {
		t.Errorf("12:00: failureStreak %+v, want still paused, the trial %s", fs, next.Name)
	}

	// The same when the 11:00 sync's status write was lost too: the status
	// still names the deleted trial.
	p3 := Decide(Input{CronJob: withStatus(cj, p0.Status), Jobs: []Job{deleted, next}, Now: at(2*time.Hour + time.Second)})
	if fs := p3.Status.FailureStreak; len(p3.Creates) != 0 || fs.TrialJob != next.Name {
		t.Errorf("12:00 from the status naming the deleted trial: creates %v, failureStreak %+v; want none, the trial %s",
			createdTimes(p3), fs, next.Name)
	}
}

// The sync that starts the trial loses its whole status (a conflict with
// the user's edit of resumeAfter, then a crash): the trial started under
// the cool-down the stored status says, and stays the trial when the user
// lengthens resumeAfter past its time. No second trial starts while it
// runs, and its failure reopens the pause. (Model walk seed 6069.)
func TestATrialWhoseStatusWasLostStaysTheTrialWhenResumeAfterIsLengthened(t *testing.T) {
	cj := cronJob(last(at(-time.Hour)), failurePolicy(1, 30*time.Minute, 0), failing(1, "cj-x"), pausedSince(at(-50*time.Minute), 1, ""))
	// 09:20: the stored status says the cool-down ends at 09:40.
	stored := Decide(Input{CronJob: cj, Now: at(-40 * time.Minute)}).Status
	if fs := stored.FailureStreak; fs.ResumeAt == nil || !fs.ResumeAt.Time.Equal(at(-20*time.Minute)) {
		t.Fatalf("09:20: failureStreak %+v, want resumeAt 09:40", fs)
	}
	cj = withStatus(cj, stored)
	p1 := Decide(Input{CronJob: cj, Now: at(time.Second)})
	made := startAll(p1)
	if len(made) != 1 || p1.Status.FailureStreak.TrialJob != made[0].Name {
		t.Fatalf("10:00: made %d, failureStreak %+v; want the 10:00 trial", len(made), p1.Status.FailureStreak)
	}
	// Its status is lost: the Job holds the run-record finalizer, and
	// the store keeps the 09:20 status. resumeAfter becomes 2h (resumeAt
	// 11:10).
	trial := holding(made[0])
	edited := cj.DeepCopy()
	edited.Generation = 2
	edited.Spec.FailurePolicy.ResumeAfter = &metav1.Duration{Duration: 2 * time.Hour}

	p2 := Decide(Input{CronJob: edited, Jobs: []Job{trial}, Now: at(2*time.Hour + time.Second)})
	if len(p2.Creates) != 0 {
		t.Errorf("12:00: creates %v (failureStreak %+v); want none while the 10:00 trial runs", createdTimes(p2), p2.Status.FailureStreak)
	}
	if fs := p2.Status.FailureStreak; fs.TrialJob != trial.Name {
		t.Errorf("12:00: trialJob %q, want %s", fs.TrialJob, trial.Name)
	}
	if !slices.ContainsFunc(p2.Events, func(e Event) bool {
		return e.Reason == ReasonTrialRun && strings.Contains(e.Message, "started before resumeAfter was lengthened")
	}) {
		t.Errorf("12:00: events %v, want a TrialRun Event saying the trial started before resumeAfter was lengthened", eventsOf(p2))
	}
	trial.finished, trial.failedAt = batchv1.JobFailed, &metav1.Time{Time: at(2*time.Hour + 10*time.Minute)}
	p3 := Decide(Input{CronJob: withStatus(edited, p2.Status), Jobs: []Job{trial}, Now: at(2*time.Hour + 11*time.Minute)})
	if fs := p3.Status.FailureStreak; fs.Pauses != 2 || fs.PausedAt == nil || !fs.PausedAt.Time.Equal(at(2*time.Hour+10*time.Minute)) {
		t.Errorf("after the trial failed: failureStreak %+v, want reopened as of 12:10, pauses 2", fs)
	}
}

// A trial deleted by hand while running is let go, and the next trial
// starts; that sync's status is lost. The deleted trial then shows failed
// while its finalizer still holds it (the Job controller, or anyone, may
// write a status to a Job being deleted): it is still no verdict and not
// the trial, so the second trial, still live, is found again and no third
// starts. (Found by an adversarial probe read.)
func TestATrialDeletedByHandThatFailsLaterHidesNoLaterTrial(t *testing.T) {
	cj := cronJob(last(at(-time.Hour)), failurePolicy(2, 30*time.Minute, 0), failing(2, "cj-x"), pausedSince(at(-50*time.Minute), 1, ""))
	p0 := Decide(Input{CronJob: cj, Now: at(time.Second)})
	made := startAll(p0)
	if len(made) != 1 {
		t.Fatalf("10:00: made %d", len(made))
	}
	t1 := holding(made[0])
	t1.DeletionTimestamp = &metav1.Time{Time: at(30 * time.Minute)}
	p1 := Decide(Input{CronJob: withStatus(cj, p0.Status), Jobs: []Job{t1}, Now: at(time.Hour + time.Second)})
	made1 := startAll(p1)
	if len(made1) != 1 || !p1.Creates[0].Trial {
		t.Fatalf("11:00: creates %+v, want the next trial", p1.Creates)
	}
	t2 := holding(made1[0])
	// p1's status is lost. T1 now shows failed, still held.
	t1.finished, t1.failedAt = batchv1.JobFailed, &metav1.Time{Time: at(time.Hour + 30*time.Minute)}
	p2 := Decide(Input{CronJob: withStatus(cj, p0.Status), Jobs: []Job{t1, t2}, Now: at(time.Hour + 40*time.Minute)})
	t.Logf("11:40: failureStreak %+v", p2.Status.FailureStreak)
	p3 := Decide(Input{CronJob: withStatus(cj, p2.Status), Jobs: []Job{t1, t2}, Now: at(3*time.Hour + time.Second)})
	if len(p3.Creates) != 0 {
		t.Errorf("13:00: creates %v (failureStreak %+v); want none while the 11:00 trial %s runs", createdTimes(p3), p3.Status.FailureStreak, t2.Name)
	}
}

// A pause without resumeAfter awaits no trial: it lasts until a run
// succeeds or someone resumes, and no scheduled run can have started in
// it. The times it settles as Paused name no Job to look up (NotRun): the
// lookups are for a pause awaiting its trial (docs/failures.md rule 6),
// and here each would be a GET for a Job that cannot exist.
func TestAPauseWithoutResumeAfterNamesNoTimeToLookUp(t *testing.T) {
	cj := cronJob(last(at(-time.Hour)), failurePolicy(2, 0, 0), failing(2, "cj-x"), pausedSince(at(-50*time.Minute), 1, ""))
	p := Decide(Input{CronJob: cj, Now: at(3*time.Hour + time.Second)})
	if n := missedOf(p.Status)[cronv1.MissedPaused]; n == 0 {
		t.Fatalf("missed %v, want the runs since 10:00 counted Paused", missedOf(p.Status))
	}
	if len(p.NotRun) != 0 {
		t.Errorf("NotRun %v, want none: no trial is awaited", fmtTimes(p.NotRun))
	}
}
