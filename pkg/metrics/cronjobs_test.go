package metrics

import (
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/prometheus/common/expfmt"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"

	cronv1 "github.com/cronjob-controller/cronjob-controller/pkg/apis/batch/v1"
	"github.com/cronjob-controller/cronjob-controller/pkg/slim"
)

var perCronJobNames = []string{
	"cronjob_controller_cronjob_next_schedule_time",
	"cronjob_controller_cronjob_status_last_schedule_time",
	"cronjob_controller_cronjob_status_last_successful_time",
	"cronjob_controller_cronjob_status_last_failure_time",
	"cronjob_controller_cronjob_status_active",
	"cronjob_controller_cronjob_spec_suspend",
	"cronjob_controller_cronjob_status_missed_runs_total",
}

const perCronJobHeaders = `
# HELP cronjob_controller_cronjob_next_schedule_time Unix time of the CronJob's next scheduled run (status.nextScheduleTime); absent while suspended, past spec.notAfter, or while the schedule cannot be used.
# TYPE cronjob_controller_cronjob_next_schedule_time gauge
# HELP cronjob_controller_cronjob_spec_suspend 1 when the CronJob is suspended (spec.suspend), else 0.
# TYPE cronjob_controller_cronjob_spec_suspend gauge
# HELP cronjob_controller_cronjob_status_active Jobs of the CronJob not finished (status.active).
# TYPE cronjob_controller_cronjob_status_active gauge
# HELP cronjob_controller_cronjob_status_last_failure_time Unix time the CronJob's latest failed run failed (status.lastFailureTime); absent before the first.
# TYPE cronjob_controller_cronjob_status_last_failure_time gauge
# HELP cronjob_controller_cronjob_status_last_schedule_time Unix time of the scheduled time of the CronJob's latest started run (status.lastScheduleTime); absent before the first.
# TYPE cronjob_controller_cronjob_status_last_schedule_time gauge
# HELP cronjob_controller_cronjob_status_last_successful_time Unix time the CronJob's latest successful Job completed (status.lastSuccessfulTime); absent before the first.
# TYPE cronjob_controller_cronjob_status_last_successful_time gauge
# HELP cronjob_controller_cronjob_status_missed_runs_total Scheduled runs of the CronJob that did not start, by reason (status.missedRuns); a reason appears with its first miss.
# TYPE cronjob_controller_cronjob_status_missed_runs_total counter
`

func at(unix int64) *metav1.Time { t := metav1.NewTime(time.Unix(unix, 0)); return &t }

// hourly has run, succeeded, has a Job running and has missed runs.
func hourly() *cronv1.CronJob {
	cj := &cronv1.CronJob{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "hourly"}}
	cj.Spec.Schedule = "0 * * * *"
	cj.Status = cronv1.CronJobStatus{
		Active:             []corev1.ObjectReference{{Name: "hourly-1767225600"}},
		ActiveCount:        1,
		LastScheduleTime:   at(1767225600),
		LastSuccessfulTime: at(1767222060),
		LastFailureTime:    at(1767218520),
		NextScheduleTime:   at(1767229200),
		MissedRuns: []cronv1.MissedRuns{
			{Reason: cronv1.MissedDeadlineExceeded, Count: 3, LastTime: *at(1767218400)},
			{Reason: cronv1.MissedSuperseded, Count: 12, LastTime: *at(1767214800)},
		},
	}
	return cj
}

// paused is suspended and has never run: no times at all.
func paused() *cronv1.CronJob {
	cj := &cronv1.CronJob{ObjectMeta: metav1.ObjectMeta{Namespace: "team-b", Name: "paused"}}
	cj.Spec.Schedule = "@daily"
	cj.Spec.Suspend = ptr.To(true)
	return cj
}

// fresh has a next run and nothing else yet.
func fresh() *cronv1.CronJob {
	cj := &cronv1.CronJob{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "fresh"}}
	cj.Spec.Schedule = "*/5 * * * *"
	cj.Spec.Suspend = ptr.To(false)
	cj.Status.NextScheduleTime = at(1767225900)
	return cj
}

func storeOf(t *testing.T, cronJobs ...*cronv1.CronJob) cache.Store {
	t.Helper()
	store := cache.NewStore(cache.MetaNamespaceKeyFunc)
	for _, cj := range cronJobs {
		// The informer's cache holds the slim form.
		if err := store.Add(slim.NewCronJob(cj)); err != nil {
			t.Fatal(err)
		}
	}
	return store
}

func synced() bool { return true }

func TestCronJobCollectorReportsTheStatus(t *testing.T) {
	c := NewCronJobCollector(storeOf(t, hourly(), paused(), fresh()), synced)
	want := perCronJobHeaders + `
cronjob_controller_cronjob_next_schedule_time{cronjob="fresh",namespace="team-a"} 1.7672259e+09
cronjob_controller_cronjob_next_schedule_time{cronjob="hourly",namespace="team-a"} 1.7672292e+09
cronjob_controller_cronjob_spec_suspend{cronjob="fresh",namespace="team-a"} 0
cronjob_controller_cronjob_spec_suspend{cronjob="hourly",namespace="team-a"} 0
cronjob_controller_cronjob_spec_suspend{cronjob="paused",namespace="team-b"} 1
cronjob_controller_cronjob_status_active{cronjob="fresh",namespace="team-a"} 0
cronjob_controller_cronjob_status_active{cronjob="hourly",namespace="team-a"} 1
cronjob_controller_cronjob_status_active{cronjob="paused",namespace="team-b"} 0
cronjob_controller_cronjob_status_last_failure_time{cronjob="hourly",namespace="team-a"} 1.76721852e+09
cronjob_controller_cronjob_status_last_schedule_time{cronjob="hourly",namespace="team-a"} 1.7672256e+09
cronjob_controller_cronjob_status_last_successful_time{cronjob="hourly",namespace="team-a"} 1.76722206e+09
cronjob_controller_cronjob_status_missed_runs_total{cronjob="hourly",namespace="team-a",reason="DeadlineExceeded"} 3
cronjob_controller_cronjob_status_missed_runs_total{cronjob="hourly",namespace="team-a",reason="Superseded"} 12
`
	if err := testutil.CollectAndCompare(c, strings.NewReader(want), perCronJobNames...); err != nil {
		t.Error(err)
	}
	if problems, err := testutil.CollectAndLint(c); err != nil || len(problems) > 0 {
		t.Errorf("lint: %v %v", problems, err)
	}
}

// The API types, as a cache without the slim transform would hold them,
// give the same series.
func TestCronJobCollectorReadsTheAPIType(t *testing.T) {
	slimStore := storeOf(t, hourly(), paused())
	apiStore := cache.NewStore(cache.MetaNamespaceKeyFunc)
	for _, cj := range []*cronv1.CronJob{hourly(), paused()} {
		if err := apiStore.Add(cj); err != nil {
			t.Fatal(err)
		}
	}
	got, err := testutil.CollectAndFormat(NewCronJobCollector(apiStore, synced), expfmt.TypeTextPlain, perCronJobNames...)
	if err != nil {
		t.Fatal(err)
	}
	if err := testutil.CollectAndCompare(NewCronJobCollector(slimStore, synced), strings.NewReader(string(got)), perCronJobNames...); err != nil {
		t.Error(err)
	}
	if n := testutil.CollectAndCount(NewCronJobCollector(apiStore, synced)); n != 10 {
		t.Errorf("%d series from the API types, want 10", n)
	}
}

// A CronJob's series go when it leaves the cache, and a change of its
// status shows at the next scrape: nothing is kept between scrapes.
func TestCronJobCollectorFollowsTheCache(t *testing.T) {
	store := storeOf(t, hourly(), paused())
	c := NewCronJobCollector(store, synced)
	if n := testutil.CollectAndCount(c); n != 10 {
		t.Fatalf("%d series for two CronJobs, want 10", n)
	}

	if err := store.Delete(slim.NewCronJob(hourly())); err != nil {
		t.Fatal(err)
	}
	want := perCronJobHeaders + `
cronjob_controller_cronjob_spec_suspend{cronjob="paused",namespace="team-b"} 1
cronjob_controller_cronjob_status_active{cronjob="paused",namespace="team-b"} 0
`
	if err := testutil.CollectAndCompare(c, strings.NewReader(want), perCronJobNames...); err != nil {
		t.Errorf("after the delete: %v", err)
	}

	resumed := paused()
	resumed.Spec.Suspend = nil
	resumed.Status.NextScheduleTime = at(1767312000)
	if err := store.Update(slim.NewCronJob(resumed)); err != nil {
		t.Fatal(err)
	}
	want = perCronJobHeaders + `
cronjob_controller_cronjob_next_schedule_time{cronjob="paused",namespace="team-b"} 1.767312e+09
cronjob_controller_cronjob_spec_suspend{cronjob="paused",namespace="team-b"} 0
cronjob_controller_cronjob_status_active{cronjob="paused",namespace="team-b"} 0
`
	if err := testutil.CollectAndCompare(c, strings.NewReader(want), perCronJobNames...); err != nil {
		t.Errorf("after the resume: %v", err)
	}

	if err := store.Delete(slim.NewCronJob(resumed)); err != nil {
		t.Fatal(err)
	}
	if n := testutil.CollectAndCount(c); n != 0 {
		t.Errorf("%d series with no CronJob left, want 0", n)
	}
}

// Before the informer has listed once the collector reports nothing, not
// the part of the CronJobs listed so far.
func TestCronJobCollectorWaitsForTheCache(t *testing.T) {
	var listed atomic.Bool
	c := NewCronJobCollector(storeOf(t, hourly()), listed.Load)
	if n := testutil.CollectAndCount(c); n != 0 {
		t.Errorf("%d series before the cache synced, want 0", n)
	}
	listed.Store(true)
	if n := testutil.CollectAndCount(c); n != 8 {
		t.Errorf("%d series after the cache synced, want 8", n)
	}
}

// Reasons come in any order, and a reason repeated in status.missedRuns
// (the API server refuses it; a hand-made object may not) is reported once,
// with its first count: a duplicate series would fail the whole scrape.
func TestCronJobCollectorMissedReasonsInAnyOrder(t *testing.T) {
	cj := paused()
	cj.Status.MissedRuns = []cronv1.MissedRuns{
		{Reason: cronv1.MissedSuperseded, Count: 4},
		{Reason: cronv1.MissedNameTaken, Count: 1},
		{Reason: cronv1.MissedNameTaken, Count: 2},
	}
	want := perCronJobHeaders + `
cronjob_controller_cronjob_spec_suspend{cronjob="paused",namespace="team-b"} 1
cronjob_controller_cronjob_status_active{cronjob="paused",namespace="team-b"} 0
cronjob_controller_cronjob_status_missed_runs_total{cronjob="paused",namespace="team-b",reason="NameTaken"} 1
cronjob_controller_cronjob_status_missed_runs_total{cronjob="paused",namespace="team-b",reason="Superseded"} 4
`
	if err := testutil.CollectAndCompare(NewCronJobCollector(storeOf(t, cj), synced), strings.NewReader(want), perCronJobNames...); err != nil {
		t.Error(err)
	}
}

var failureNames = []string{"cronjob_controller_cronjob_paused", "cronjob_controller_cronjob_status_failure_streak"}

const failureHeaders = `
# HELP cronjob_controller_cronjob_paused 1 while spec.failurePolicy has paused the CronJob's scheduled runs (condition Paused True), else 0; only for CronJobs with spec.failurePolicy.
# TYPE cronjob_controller_cronjob_paused gauge
# HELP cronjob_controller_cronjob_status_failure_streak Runs of the CronJob failed in a row (status.failureStreak.count); only for CronJobs with spec.failurePolicy.
# TYPE cronjob_controller_cronjob_status_failure_streak gauge
`

// withPolicy gives cj a failure policy, the streak count and the Paused
// condition with status (none when status is "").
func withPolicy(cj *cronv1.CronJob, count int32, status metav1.ConditionStatus, reason string) *cronv1.CronJob {
	cj.Spec.FailurePolicy = &cronv1.FailurePolicy{PauseAfter: 3}
	if count >= 0 {
		cj.Status.FailureStreak = &cronv1.FailureStreak{Count: count, LastFailedJob: cj.Name + "-1"}
	}
	if status != "" {
		cj.Status.Conditions = append(cj.Status.Conditions, metav1.Condition{Type: cronv1.ConditionPaused, Status: status, Reason: reason})
	}
	return cj
}

// A CronJob with spec.failurePolicy reports whether it is paused (the
// Paused condition True, whether paused or awaiting a trial) and its
// streak; one without reports neither, so the fleet's scrape grows only by
// the CronJobs that opted in.
func TestCronJobCollectorReportsThePauseAndTheStreakOfAFailurePolicy(t *testing.T) {
	pausedByFailures := withPolicy(hourly(), 3, metav1.ConditionTrue, "FailureStreak")
	pausedByFailures.Name = "broken"
	trial := withPolicy(fresh(), 4, metav1.ConditionTrue, "TrialRunning")
	trial.Name = "trying"
	failing := withPolicy(hourly(), 2, metav1.ConditionFalse, "FailuresBelowLimit")
	failing.Name = "flaky"
	// Just given a policy: the controller has written neither yet.
	unsynced := withPolicy(fresh(), -1, "", "")
	unsynced.Name = "new"
	// The Paused condition of a policy since removed, on a CronJob
	// without one: not reported.
	removed := hourly()
	removed.Status.Conditions = []metav1.Condition{{Type: cronv1.ConditionPaused, Status: metav1.ConditionTrue, Reason: "FailureStreak"}}

	c := NewCronJobCollector(storeOf(t, pausedByFailures, trial, failing, unsynced, removed, paused()), synced)
	want := failureHeaders + `
cronjob_controller_cronjob_paused{cronjob="broken",namespace="team-a"} 1
cronjob_controller_cronjob_paused{cronjob="flaky",namespace="team-a"} 0
cronjob_controller_cronjob_paused{cronjob="new",namespace="team-a"} 0
cronjob_controller_cronjob_paused{cronjob="trying",namespace="team-a"} 1
cronjob_controller_cronjob_status_failure_streak{cronjob="broken",namespace="team-a"} 3
cronjob_controller_cronjob_status_failure_streak{cronjob="flaky",namespace="team-a"} 2
cronjob_controller_cronjob_status_failure_streak{cronjob="new",namespace="team-a"} 0
cronjob_controller_cronjob_status_failure_streak{cronjob="trying",namespace="team-a"} 4
`
	if err := testutil.CollectAndCompare(c, strings.NewReader(want), failureNames...); err != nil {
		t.Error(err)
	}
	if problems, err := testutil.CollectAndLint(c); err != nil || len(problems) > 0 {
		t.Errorf("lint: %v %v", problems, err)
	}

	// The API type, as a cache without the slim transform holds it, gives
	// the same series.
	apiStore := cache.NewStore(cache.MetaNamespaceKeyFunc)
	for _, cj := range []*cronv1.CronJob{pausedByFailures, trial, failing, unsynced, removed, paused()} {
		if err := apiStore.Add(cj); err != nil {
			t.Fatal(err)
		}
	}
	if err := testutil.CollectAndCompare(NewCronJobCollector(apiStore, synced), strings.NewReader(want), failureNames...); err != nil {
		t.Errorf("from the API type: %v", err)
	}
}
