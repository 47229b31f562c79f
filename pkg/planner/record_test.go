package planner

// The run history, status.recentRuns (record.go).

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	cronv1 "github.com/cronjob-controller/cronjob-controller/pkg/apis/batch/v1"
)

// historyOf is a run history as "job:trigger:outcome", newest first.
func historyOf(st cronv1.CronJobStatus) []string {
	return names(st.RecentRuns, func(r cronv1.RunRecord) string {
		return r.JobName + ":" + string(r.Trigger) + ":" + string(r.Outcome)
	})
}

func runLimit(n int32) func(*cronv1.CronJob) {
	return func(cj *cronv1.CronJob) { cj.Spec.RunHistoryLimit = ptr.To(n) }
}

// A run is entered when it starts and its outcome when a sync first sees
// its Job finished, with the Job's reason and message, with or without
// spec.failurePolicy; status.lastFailureTime is the failure's time.
func TestEveryRunIsEnteredWithItsOutcome(t *testing.T) {
	for name, opt := range map[string]func(*cronv1.CronJob){"no failurePolicy": func(*cronv1.CronJob) {}, "failurePolicy": failurePolicy(3, 0, 0)} {
		t.Run(name, func(t *testing.T) {
			c := &syncChain{cj: cronJob(last(at(-time.Hour)), opt)}
			c.sync(at(time.Second))
			r := c.cj.Status.RecentRuns
			if len(r) != 1 || r[0].JobName != runOf(ten, "").Name || r[0].Trigger != cronv1.TriggerScheduled || r[0].Outcome != cronv1.OutcomeRunning ||
				!sameTime(r[0].ScheduledTime, &metav1.Time{Time: ten}) || r[0].StartTime == nil {
				t.Fatalf("after the 10:00 run started: recentRuns %+v, want it running", r)
			}
			j := c.finish(ten, batchv1.JobFailed, at(5*time.Minute))
			j.failedReason, j.failedMessage = "BackoffLimitExceeded", "Job has reached the specified backoff limit"
			c.sync(at(6 * time.Minute))
			r = c.cj.Status.RecentRuns
			if len(r) != 1 || r[0].Outcome != cronv1.OutcomeFailed || r[0].Reason != "BackoffLimitExceeded" || r[0].Message != j.failedMessage ||
				!sameTime(r[0].CompletionTime, j.failedAt) {
				t.Errorf("after it failed: recentRuns %+v, want it failed at 10:05 with the Job's reason and message", r)
			}
			if !sameTime(c.cj.Status.LastFailureTime, j.failedAt) {
				t.Errorf("lastFailureTime %v, want 10:05", c.cj.Status.LastFailureTime)
			}
			// Seen again, it changes nothing.
			if p := c.sync(at(7 * time.Minute)); !slices.Equal(historyOf(p.Status), historyOf(c.cj.Status)) || len(p.Events) != 0 {
				t.Errorf("the next sync: history %v, events %v; want the same, no Event", historyOf(p.Status), eventsOf(p))
			}
		})
	}
}

// The history keeps spec.runHistoryLimit runs, newest first; it outlives
// the Jobs (failedJobsHistoryLimit 1 prunes them).
func TestRunHistoryKeepsTheNewestRunsUpToItsLimit(t *testing.T) {
	c := &syncChain{cj: cronJob(last(at(-4*time.Hour)), runLimit(3))}
	for h := -3; h <= 0; h++ {
		t0 := at(time.Duration(h) * time.Hour)
		c.sync(t0.Add(time.Second))
		c.finish(t0, batchv1.JobFailed, t0.Add(time.Minute))
	}
	c.sync(at(2 * time.Minute))
	want := []string{runOf(ten, "").Name + ":Scheduled:Failed", runOf(at(-time.Hour), "").Name + ":Scheduled:Failed", runOf(at(-2*time.Hour), "").Name + ":Scheduled:Failed"}
	if got := historyOf(c.cj.Status); !slices.Equal(got, want) {
		t.Errorf("recentRuns %v, want %v", got, want)
	}
}

// A full history drops its oldest entries, running or not: an entry
// dropped is never newer than one kept, so a Job brought back after its
// entry went is known by its time (TestARunOlderThanAFullHistoryIsNotEnteredAgain).
func TestAFullHistoryDropsItsOldestRuns(t *testing.T) {
	long := running(runOf(at(-2*time.Hour), ""))
	done := runOf(at(-time.Hour), batchv1.JobComplete)
	cj := cronJob(last(at(-time.Hour)), runLimit(2), active(long, done))
	p := Decide(Input{CronJob: cj, Jobs: []Job{long, done}, Now: at(time.Second)})
	startAll(p)
	want := []string{runOf(ten, "").Name + ":Scheduled:Running", done.Name + ":Scheduled:Succeeded"}
	if got := historyOf(p.Status); !slices.Equal(got, want) {
		t.Errorf("recentRuns %v, want %v: the 08:00 run, running, is the oldest and goes", got, want)
	}
	// Its outcome, seen later, is not entered: it lies beyond the history.
	long.finished, long.failedAt = batchv1.JobFailed, &metav1.Time{Time: at(time.Minute)}
	p2 := Decide(Input{CronJob: withStatus(cj, p.Status), Jobs: []Job{long, done}, Now: at(2 * time.Minute)})
	if got := historyOf(p2.Status); len(got) != 2 || p2.Status.LastFailureTime != nil {
		t.Errorf("recentRuns %v, lastFailureTime %v: want the 08:00 failure not entered", got, p2.Status.LastFailureTime)
	}
}

// A run whose Job goes away before its outcome is seen stays in the
// history, its outcome Unknown.
func TestARunWhoseJobWentAwayIsUnknown(t *testing.T) {
	j := running(runAt9(""))
	cj := cronJob(last(at(-time.Hour)), active(j), entered(j))
	p := Decide(Input{CronJob: cj, Gone: map[types.UID]bool{j.UID: true}, Now: at(-30 * time.Minute)})
	if got := historyOf(p.Status); !slices.Equal(got, []string{j.Name + ":Scheduled:Unknown"}) {
		t.Errorf("recentRuns %v, want the 09:00 run Unknown", got)
	}
}

// The history's bound: a Job absent from a full history and older than
// its oldest entry (entered and dropped since, as far as the history can
// tell) has its outcome entered no more, and counts no more.
func TestARunOlderThanAFullHistoryIsNotEnteredAgain(t *testing.T) {
	eight := runOf(at(-2*time.Hour), batchv1.JobFailed)
	nine := runAt9(batchv1.JobComplete)
	cj := cronJob(last(at(-time.Hour)), runLimit(1), failurePolicy(1, 0, 0), entered(nine), active(eight))
	p := Decide(Input{CronJob: cj, Jobs: []Job{eight, nine}, Now: at(-30 * time.Minute)})
	if fs := p.Status.FailureStreak; fs.Count != 0 || fs.PausedAt != nil {
		t.Errorf("failureStreak %+v, want count 0: the 08:00 failure lies beyond the history", fs)
	}
	if got := historyOf(p.Status); !slices.Equal(got, []string{nine.Name + ":Scheduled:Succeeded"}) {
		t.Errorf("recentRuns %v, want the 09:00 run alone", got)
	}
}

// The history says how each run started: catching up, by hand, as a trial.
func TestTheHistorySaysHowEachRunStarted(t *testing.T) {
	p := Decide(Input{CronJob: cronJob(last(at(-2*time.Hour)), catchUpAll(10), runNowValue("v1")), Now: at(time.Second)})
	startAll(p)
	got := map[cronv1.RunTrigger]int{}
	for _, r := range p.Status.RecentRuns {
		got[r.Trigger]++
	}
	if got[cronv1.TriggerCatchUp] != 1 || got[cronv1.TriggerScheduled] != 1 || got[cronv1.TriggerRunNow] != 1 {
		t.Errorf("recentRuns %v, want 09:00 CatchUp, 10:00 Scheduled and the run-now", historyOf(p.Status))
	}
	trial := Decide(Input{CronJob: cronJob(last(at(-time.Hour)), failurePolicy(1, 30*time.Minute, 0), failing(1, "cj-x"), pausedSince(at(-50*time.Minute), 1, "")), Now: at(time.Second)})
	startAll(trial)
	if got := historyOf(trial.Status); !slices.Equal(got, []string{runOf(ten, "").Name + ":Trial:Running"}) {
		t.Errorf("recentRuns %v, want the 10:00 trial", got)
	}
}

// The trial's outcome counts though newer runs pushed its entry out of a
// small history: status.failureStreak.trialJob names it until its outcome
// counts, so it has not been counted.
func TestATrialDroppedFromAFullHistoryStillEndsThePause(t *testing.T) {
	trial := runOf(at(-2*time.Hour), batchv1.JobComplete)
	later := running(runAt9(""))
	cj := cronJob(last(at(-time.Hour)), runLimit(1), failurePolicy(1, 30*time.Minute, 0), failing(1, "cj-x"),
		pausedSince(at(-3*time.Hour), 1, trial.Name), active(trial, later), entered(later))
	p := Decide(Input{CronJob: cj, Jobs: []Job{trial, later}, Now: at(-30 * time.Minute)})
	if fs := p.Status.FailureStreak; fs.PausedAt != nil || !hasEvent(p, ReasonResumed) {
		t.Errorf("failureStreak %+v, events %v: want resumed by the trial's success", fs, eventsOf(p))
	}
}

// A success pushed out of a small history by a newer run (here one a lost
// status write left unrecorded) still ends the streak: left out, the
// streak would go on past it and pause once too often. One that finished
// before a failure the history holds changes nothing.
func TestASuccessBeyondAFullHistoryStillEndsTheStreak(t *testing.T) {
	nine := runAt9(batchv1.JobComplete) // completes 09:05
	adopted := running(runOf(ten, ""))
	cj := cronJob(last(at(-time.Hour)), runLimit(1), failurePolicy(2, 0, 0), failing(1, "cj-x"), active(nine), entered(running(runAt9(""))))
	p := Decide(Input{CronJob: cj, Jobs: []Job{nine, adopted}, Now: at(time.Minute)})
	if fs := p.Status.FailureStreak; fs.Count != 0 {
		t.Errorf("failureStreak %+v, history %v: want count 0, the 09:00 success counted", fs, historyOf(p.Status))
	}

	failedLater := runOf(at(-30*time.Minute), batchv1.JobFailed)
	failedLater.failedAt = &metav1.Time{Time: at(-20 * time.Minute)}
	cj = cronJob(sched("0,30 * * * *"), last(at(-30*time.Minute)), runLimit(1), failurePolicy(3, 0, 0), failing(1, failedLater.Name),
		active(nine), entered(failedLater))
	p = Decide(Input{CronJob: cj, Jobs: []Job{nine, failedLater}, Now: at(-10 * time.Minute)})
	if fs := p.Status.FailureStreak; fs.Count != 1 {
		t.Errorf("failureStreak %+v: want count 1, the 09:00 success (09:05) finished before the 09:30 failure (09:40) the history holds", fs)
	}
}

// A runHistoryLimit raised leaves the history short of full, yet what it
// dropped stays dropped: a failure entered, counted and pushed out of a
// one-entry history, brought back by a cache older than the status
// (running, then failed), is not entered or counted again. Before, the
// 08:00 failure counted twice and paused after two failures.
func TestAFailureDroppedFromTheHistoryIsNotCountedAgainOnceTheLimitIsRaised(t *testing.T) {
	c := &syncChain{cj: cronJob(last(at(-3*time.Hour)), runLimit(1), failurePolicy(3, 0, 0))}
	c.sync(at(-2*time.Hour + time.Second))
	c.finish(at(-2*time.Hour), batchv1.JobFailed, at(-110*time.Minute))
	c.sync(at(-time.Hour + time.Second))
	c.finish(at(-time.Hour), batchv1.JobFailed, at(-50*time.Minute))
	c.sync(at(-45 * time.Minute))
	if fs := c.cj.Status.FailureStreak; fs.Count != 2 || len(c.cj.Status.RecentRuns) != 1 {
		t.Fatalf("after two failures: failureStreak %+v, history %v; want count 2, the 09:00 run alone", fs, historyOf(c.cj.Status))
	}
	runLimit(10)(c.cj)
	c.syncSeeing(at(-40*time.Minute), []Job{staleRunning(c.job(at(-2 * time.Hour))), c.job(at(-time.Hour))})
	c.sync(at(-30 * time.Minute))
	p := c.sync(at(time.Second))
	if fs := p.Status.FailureStreak; fs.Count != 2 || fs.PausedAt != nil || len(createdTimes(p)) != 1 {
		t.Errorf("the 08:00 failure seen again: failureStreak %+v, creates %v; want count 2, not paused, the 10:00 run started", fs, createdTimes(p))
	}
	if got := historyOf(p.Status); len(got) != 2 {
		t.Errorf("recentRuns %v, want the 10:00 and 09:00 runs: the 08:00 run was dropped", got)
	}
}

// A run whose Job went away before its outcome was seen (Unknown) neither
// counts as a failure nor ends the streak: the failures before and after
// it still add up to the pause.
func TestARunWhoseJobWentAwayNeitherCountsNorEndsTheStreak(t *testing.T) {
	c := &syncChain{cj: cronJob(last(at(-time.Hour)), failurePolicy(2, 0, 0), failing(1, "cj-x"))}
	c.sync(at(time.Second))
	gone := c.job(ten)
	p := Decide(Input{CronJob: c.cj, Gone: map[types.UID]bool{gone.UID: true}, Now: at(30 * time.Minute)})
	if fs := p.Status.FailureStreak; fs.Count != 1 || !slices.Equal(historyOf(p.Status), []string{gone.Name + ":Scheduled:Unknown"}) {
		t.Fatalf("the 10:00 Job gone: failureStreak %+v, history %v; want count 1, the run Unknown", fs, historyOf(p.Status))
	}
	c.cj, c.jobs = withStatus(c.cj, p.Status), nil
	c.sync(at(time.Hour + time.Second))
	c.finish(at(time.Hour), batchv1.JobFailed, at(time.Hour+time.Minute))
	p = c.sync(at(time.Hour + 2*time.Minute))
	if fs := p.Status.FailureStreak; fs.Count != 2 || fs.PausedAt == nil {
		t.Errorf("after the 11:00 failure: failureStreak %+v, want count 2 and paused", fs)
	}
}

// A failed Job's reason and message enter the history cut to the schema's
// bounds (128 and 256), on a rune boundary, so no condition a Job carries
// makes the status write fail; a full history of such runs stays far below
// what etcd takes in one object (1.5 MiB by default).
func TestAFailedRunsReasonAndMessageEnterWithinTheirBounds(t *testing.T) {
	cj := cronJob(runLimit(cronv1.MaxRunHistoryLimit), last(at(-100*time.Hour)))
	var jobs []Job
	for h := -60; h < 0; h++ {
		j := runOf(at(time.Duration(h)*time.Hour), batchv1.JobFailed)
		j.failedAt = &metav1.Time{Time: j.scheduled.Add(time.Minute)}
		j.failedReason = strings.Repeat("\x01", 1000)
		j.failedMessage = strings.Repeat("\x01é", 5000)
		jobs = append(jobs, j)
	}
	p := Decide(Input{CronJob: cj, Jobs: jobs, Now: at(-30 * time.Minute)})
	if len(p.Status.RecentRuns) != cronv1.MaxRunHistoryLimit {
		t.Fatalf("recentRuns holds %d runs, want %d", len(p.Status.RecentRuns), cronv1.MaxRunHistoryLimit)
	}
	for _, r := range p.Status.RecentRuns {
		if r.Reason == "" || len(r.Reason) > 128 || r.Message == "" || len(r.Message) > 256 || !utf8.ValidString(r.Message) {
			t.Fatalf("%s: reason of %d bytes, message of %d bytes (valid UTF-8 %v); want at most 128 and 256, valid",
				r.JobName, len(r.Reason), len(r.Message), utf8.ValidString(r.Message))
		}
	}
	if b, err := json.Marshal(p.Status); err != nil || len(b) > 256<<10 {
		t.Errorf("the status is %d bytes as JSON (%v), want under 256 KiB", len(b), err)
	}
}
