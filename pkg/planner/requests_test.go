package planner

import (
	"slices"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	cronv1 "github.com/cronjob-controller/cronjob-controller/pkg/apis/batch/v1"
	"github.com/cronjob-controller/cronjob-controller/pkg/job"
)

// cronJobRun is a CronJobRun of the fixture CronJob "cj", made a minute ago.
func cronJobRun(name string, env ...cronv1.RunEnvVar) *cronv1.CronJobRun {
	return &cronv1.CronJobRun{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID("run-uid-" + name), Generation: 1,
			CreationTimestamp: metav1.NewTime(at(-time.Minute))},
		Spec: cronv1.CronJobRunSpec{CronJobName: "cj", Env: env},
	}
}

// requestJob is the Job of run, made a minute ago, holding the run-record
// finalizer, running.
func requestJob(run *cronv1.CronJobRun) *fakeJob {
	name := job.RequestName("cj", run.UID)
	return holding(&fakeJob{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID("uid-" + name),
		CreationTimestamp: metav1.NewTime(at(-time.Minute))}, manual: true, started: &metav1.Time{Time: at(-time.Minute)}})
}

func finishAs(j *fakeJob, done batchv1.JobConditionType) *fakeJob {
	j.finished = done
	t := &metav1.Time{Time: at(-time.Second)}
	if done == batchv1.JobComplete {
		j.complete = t
	} else {
		j.failedAt, j.failedReason = t, "BackoffLimitExceeded"
	}
	return j
}

func allowEnv(names ...string) func(*cronv1.CronJob) {
	return func(cj *cronv1.CronJob) { cj.Spec.RunOverrides = &cronv1.RunOverrides{AllowedEnv: names} }
}

// followed is run's status as the controller writes it from j.
func followed(run *cronv1.CronJobRun, j Job) *cronv1.CronJobRun {
	run = run.DeepCopy()
	run.Status, _ = RunStatus(run, cronJob(), j, nil, ten)
	return run
}

func requestsOf(runs ...*cronv1.CronJobRun) []Request {
	var out []Request
	for _, r := range runs {
		out = append(out, RequestOf(r))
	}
	return out
}

func requestCreates(p *Plan) []string {
	var out []string
	for _, c := range p.Creates {
		if c.Request != "" && p.Wants(c) {
			out = append(out, c.Job.Name)
		}
	}
	return out
}

// One Job per CronJobRun, named from its UID: a create whose answer was
// lost (the Job there, the CronJobRun's status not written) or a restart
// (nothing but the API server's objects) plans no second one; nor does a
// CronJobRun whose status names its Job once the Job is gone. Until its
// status records the Job, and its outcome once finished, the Job keeps its
// finalizer and is not pruned. It starts whatever Forbid and suspend say,
// as a run-now does.
func TestACronJobRunStartsExactlyOneJob(t *testing.T) {
	run := cronJobRun("by-hand")
	name := job.RequestName("cj", run.UID)
	if !job.IsRequestName("cj", name) || job.IsRequestName("cj", job.ManualName("cj", "cj-uid", "", "A", 1)) || job.IsRequestName("cj", job.Name("cj", ten)) {
		t.Fatalf("IsRequestName tells %q from run-now and scheduled names: want it to", name)
	}
	long := string(slices.Repeat([]byte("c"), 52))
	if n := job.RequestName(long, run.UID); len(n) != 63 || !job.IsRequestName(long, n) {
		t.Errorf("RequestName after a 52-character CronJob = %q (%d characters), want 63 and recognised", n, len(n))
	}

	p := Decide(Input{CronJob: cronJob(last(at(-time.Hour)), concurrency(cronv1.ForbidConcurrent), func(cj *cronv1.CronJob) { cj.Spec.Suspend = ptr.To(true) }),
		Jobs: []Job{running(runOf(at(-time.Hour), ""))}, Requests: requestsOf(run), Now: ten})
	if got := requestCreates(p); !slices.Equal(got, []string{name}) {
		t.Fatalf("creates = %v, want [%s] (suspended, under Forbid with a run active: a request starts as a run-now does)", got, name)
	}
	c := p.Creates[0]
	if c.Job.Annotations[cronv1.CronJobRunAnnotation] != "by-hand" || c.Job.Annotations[cronv1.InstantiateAnnotation] != job.Manual ||
		!slices.Contains(c.Job.Finalizers, job.RunRecordFinalizer) {
		t.Errorf("Job annotations %v finalizers %v, want the CronJobRun's name, instantiate manual and the run-record finalizer", c.Job.Annotations, c.Job.Finalizers)
	}
	made := requestJob(run)
	p.Started(c, made, true)
	if r := p.runRecord(name); r == nil || r.Trigger != cronv1.TriggerRequested {
		t.Errorf("run history entry = %+v, want one with trigger Requested", r)
	}
	if p.Status.LastRunNow != "" || p.Status.RunNowCount != 0 {
		t.Errorf("lastRunNow, runNowCount = %q, %d: a request is no run-now value", p.Status.LastRunNow, p.Status.RunNowCount)
	}

	cases := []struct {
		name        string
		run         *cronv1.CronJobRun
		jobs        []Job
		wantCreate  bool
		wantRelease bool
	}{
		{name: "the create's answer lost: the Job is there, the CronJobRun's status not written", run: run, jobs: []Job{requestJob(run)}},
		{name: "restart: the Job is there and finished, the CronJobRun's status not written; the Job is held",
			run: run, jobs: []Job{finishAs(requestJob(run), batchv1.JobFailed)}},
		{name: "the status names the Job but not its outcome: the finished Job is held",
			run: followed(run, requestJob(run)), jobs: []Job{finishAs(requestJob(run), batchv1.JobComplete)}},
		{name: "the status names the Job and its outcome: the finalizer goes",
			run: followed(run, finishAs(requestJob(run), batchv1.JobComplete)), jobs: []Job{finishAs(requestJob(run), batchv1.JobComplete)}, wantRelease: true},
		{name: "the Job pruned since the status named it: nothing starts again", run: followed(run, finishAs(requestJob(run), batchv1.JobComplete))},
		{name: "a Job of another CronJobRun (gone) does not stand for this one, and is held by nothing",
			run: run, jobs: []Job{finishAs(requestJob(cronJobRun("other")), batchv1.JobComplete)}, wantCreate: true, wantRelease: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			// The written status records the run (it lists it or its
			// history holds it): only the CronJobRun's status holds the Job.
			cj := cronJob(last(at(-time.Hour)))
			for _, j := range tc.jobs {
				cj.Status.RecentRuns = append(cj.Status.RecentRuns, cronv1.RunRecord{JobName: j.GetName(), Trigger: cronv1.TriggerRequested,
					StartTime: &metav1.Time{Time: at(-time.Minute)}, Outcome: cronv1.OutcomeSucceeded})
			}
			p := Decide(Input{CronJob: cj, Jobs: tc.jobs, Requests: requestsOf(tc.run), Now: ten})
			if got := requestCreates(p); (len(got) > 0) != tc.wantCreate {
				t.Errorf("creates = %v, want a create: %v", got, tc.wantCreate)
			}
			if got := len(p.Releases) > 0; got != tc.wantRelease {
				t.Errorf("releases = %v, want a release: %v", p.Releases, tc.wantRelease)
			}
			for _, d := range p.Deletes {
				if !tc.wantRelease && d.Name == name {
					t.Errorf("deletes %s before the CronJobRun's status records it", d.Name)
				}
			}
		})
	}
}

// A CronJobRun setting an env var the CronJob's runOverrides.allowedEnv
// does not name starts nothing, and its status says why, with a Warning;
// one setting only allowed names starts a Job with them in every container.
func TestACronJobRunWithAnEnvNotAllowedStartsNothing(t *testing.T) {
	cj := cronJob(last(at(-time.Hour)), allowEnv("DRY_RUN"), func(cj *cronv1.CronJob) {
		cj.Spec.JobTemplate.Spec.Template.Spec.Containers = []corev1.Container{
			{Name: "a", Env: []corev1.EnvVar{{Name: "DRY_RUN", Value: "true"}, {Name: "KEEP", Value: "1"}}}, {Name: "b"}}
	})
	bad := cronJobRun("bad", cronv1.RunEnvVar{Name: "DRY_RUN", Value: "false"}, cronv1.RunEnvVar{Name: "PATH", Value: "/evil"})
	p := Decide(Input{CronJob: cj, Requests: requestsOf(bad), Now: ten})
	if got := requestCreates(p); len(got) != 0 {
		t.Fatalf("creates = %v, want none", got)
	}
	st, events := RunStatus(bad, cj, nil, nil, ten)
	c := meta.FindStatusCondition(st.Conditions, cronv1.ConditionRunStarted)
	if c == nil || c.Status != metav1.ConditionFalse || c.Reason != cronv1.ReasonRunOverrideNotAllowed || st.JobName != "" {
		t.Fatalf("status = %+v, want Started False %s and no Job", st, cronv1.ReasonRunOverrideNotAllowed)
	}
	if len(events) != 1 || events[0].Type != corev1.EventTypeWarning || events[0].Reason != ReasonOverrideNotAllowed {
		t.Errorf("events = %v, want one Warning %s", events, ReasonOverrideNotAllowed)
	}
	// Refused for good: the CronJob allowing PATH later starts nothing.
	bad.Status = st
	if got := requestCreates(Decide(Input{CronJob: cronJob(allowEnv("DRY_RUN", "PATH")), Requests: requestsOf(bad), Now: ten})); len(got) != 0 {
		t.Errorf("creates after the refusal = %v, want none", got)
	}
	if _, again := RunStatus(bad, cj, nil, nil, ten); len(again) != 0 {
		t.Errorf("events at the next sync = %v, want none (no news)", again)
	}

	good := cronJobRun("good", cronv1.RunEnvVar{Name: "DRY_RUN", Value: "false"})
	p = Decide(Input{CronJob: cj, Requests: requestsOf(good), Now: ten})
	i := slices.IndexFunc(p.Creates, func(c Create) bool { return c.Request == "good" })
	if i < 0 {
		t.Fatalf("creates = %v, want the CronJobRun's", requestCreates(p))
	}
	cs := p.Creates[i].Job.Spec.Template.Spec.Containers
	if want := []corev1.EnvVar{{Name: "DRY_RUN", Value: "false"}, {Name: "KEEP", Value: "1"}}; !slices.Equal(cs[0].Env, want) {
		t.Errorf("container a env = %v, want %v", cs[0].Env, want)
	}
	if want := []corev1.EnvVar{{Name: "DRY_RUN", Value: "false"}}; !slices.Equal(cs[1].Env, want) {
		t.Errorf("container b env = %v, want %v", cs[1].Env, want)
	}
	if tmpl := cj.Spec.JobTemplate.Spec.Template.Spec.Containers[0].Env[0].Value; tmpl != "true" {
		t.Errorf("the CronJob's template was changed: DRY_RUN=%s", tmpl)
	}
}

// A CronJobRun's failed run counts in spec.failurePolicy's streak and
// enters the run history, as a run-now's does.
func TestACronJobRunCountsInTheFailureStreak(t *testing.T) {
	run := cronJobRun("by-hand")
	j := finishAs(requestJob(run), batchv1.JobFailed)
	cj := cronJob(last(at(-time.Hour)), failurePolicy(2, 0, 0), failing(1, "cj-older"), func(cj *cronv1.CronJob) {
		cj.Status.Active = []corev1.ObjectReference{job.Ref(j)}
	})
	p := Decide(Input{CronJob: cj, Jobs: []Job{j}, Requests: requestsOf(run), Now: ten})
	fs := p.Status.FailureStreak
	if fs == nil || fs.Count != 2 || fs.LastFailedJob != j.Name || fs.PausedAt == nil {
		t.Fatalf("failureStreak = %+v, want count 2, lastFailedJob %s, paused", fs, j.Name)
	}
	r := p.runRecord(j.Name)
	if r == nil || r.Trigger != cronv1.TriggerRequested || r.Outcome != cronv1.OutcomeFailed {
		t.Errorf("run history entry = %+v, want trigger Requested, outcome Failed", r)
	}
}

// A CronJobRun's status follows its Job: Pending before it, the Job's name
// and start time once it runs, its outcome and completion time once it
// finishes; a Job gone after it finished keeps that outcome, one gone while
// running is Unknown.
func TestACronJobRunFollowsItsJob(t *testing.T) {
	run := cronJobRun("by-hand")
	cj := cronJob()
	st, _ := RunStatus(run, cj, nil, nil, ten)
	if c := meta.FindStatusCondition(st.Conditions, cronv1.ConditionRunStarted); c == nil || c.Reason != cronv1.ReasonRunPending {
		t.Errorf("before its Job: conditions %+v, want Started False Pending", st.Conditions)
	}
	if st, _ := RunStatus(run, nil, nil, nil, ten); meta.FindStatusCondition(st.Conditions, cronv1.ConditionRunStarted).Reason != cronv1.ReasonRunCronJobNotFound {
		t.Errorf("no CronJob: conditions %+v, want Started False CronJobNotFound", st.Conditions)
	}

	j := requestJob(run)
	st, events := RunStatus(run, cj, j, nil, ten)
	if st.JobName != j.Name || st.Outcome != cronv1.OutcomeRunning || !st.StartTime.Time.Equal(at(-time.Minute)) ||
		!meta.IsStatusConditionTrue(st.Conditions, cronv1.ConditionRunStarted) || !slices.ContainsFunc(events, func(e Event) bool { return e.Reason == ReasonRunStarted }) {
		t.Fatalf("running: status %+v events %v, want the Job's name, Running, its start time, Started True and a RunStarted event", st, events)
	}
	run.Status = st
	if _, events := RunStatus(run, cj, j, nil, ten); len(events) != 0 {
		t.Errorf("running, seen again: events %v, want none", events)
	}

	finishAs(j, batchv1.JobFailed)
	st, events = RunStatus(run, cj, j, nil, ten)
	if st.Outcome != cronv1.OutcomeFailed || st.CompletionTime == nil || !st.CompletionTime.Time.Equal(at(-time.Second)) ||
		!slices.ContainsFunc(events, func(e Event) bool { return e.Reason == ReasonRunFinished }) {
		t.Fatalf("failed: status %+v events %v, want Failed at the Job's failure and a RunFinished event", st, events)
	}
	run.Status = st
	if st, _ := RunStatus(run, cj, nil, nil, ten); st.Outcome != cronv1.OutcomeFailed || st.JobName != j.Name {
		t.Errorf("the Job pruned: status %+v, want Failed kept", st)
	}

	run.Status.Outcome, run.Status.CompletionTime = cronv1.OutcomeRunning, nil
	if st, _ := RunStatus(run, cj, nil, nil, ten); st.Outcome != cronv1.OutcomeUnknown {
		t.Errorf("the Job gone while running: outcome %s, want Unknown", st.Outcome)
	}

	refused, _ := RunStatus(cronJobRun("taken"), cj, nil, &RequestRefusal{Why: NameTaken}, ten)
	if c := meta.FindStatusCondition(refused.Conditions, cronv1.ConditionRunStarted); c == nil || c.Reason != cronv1.ReasonRunNameTaken {
		t.Errorf("name taken: conditions %+v, want Started False NameTaken", refused.Conditions)
	}
}

// spec.ttlSecondsAfterFinished counts from the run's end, or from a refusal
// for good; a CronJobRun still running, or without a TTL, never expires.
func TestFinishedCronJobRunsExpireAfterTheirTTL(t *testing.T) {
	run := cronJobRun("by-hand")
	run.Spec.TTLSecondsAfterFinished = ptr.To[int32](60)
	j := requestJob(run)
	run.Status, _ = RunStatus(run, cronJob(), j, nil, ten)
	if _, ok := ExpiresAt(run); ok {
		t.Errorf("running: expires, want not")
	}
	run.Status, _ = RunStatus(run, cronJob(), finishAs(j, batchv1.JobComplete), nil, ten)
	if at, ok := ExpiresAt(run); !ok || !at.Equal(ten.Add(59*time.Second)) {
		t.Errorf("finished at 09:59:59: expires %v %v, want at 10:00:59", at, ok)
	}
	refused := cronJobRun("refused", cronv1.RunEnvVar{Name: "X"})
	refused.Spec.TTLSecondsAfterFinished = ptr.To[int32](0)
	refused.Status, _ = RunStatus(refused, cronJob(), nil, nil, ten)
	if at, ok := ExpiresAt(refused); !ok || !at.Equal(ten) {
		t.Errorf("refused at 10:00, TTL 0: expires %v %v, want at 10:00", at, ok)
	}
	noTTL := cronJobRun("kept")
	noTTL.Status, _ = RunStatus(noTTL, cronJob(), finishAs(requestJob(noTTL), batchv1.JobComplete), nil, ten)
	if _, ok := ExpiresAt(noTTL); ok {
		t.Errorf("no TTL: expires, want never")
	}
}

// A CronJobRun's finished Job that the run history no longer holds (dropped
// from a history left short of full: the limit raised since) is recorded
// still, by the CronJobRun's status: its failure does not count again.
func TestACronJobRunsFailureDroppedFromTheHistoryCountsOnce(t *testing.T) {
	run := cronJobRun("by-hand")
	j := finishAs(requestJob(run), batchv1.JobFailed)
	run = followed(run, j)
	cj := cronJob(last(at(-time.Hour)), failurePolicy(3, 0, 0), failing(1, j.Name), func(cj *cronv1.CronJob) {
		cj.Spec.RunHistoryLimit = ptr.To[int32](10)
		// One newer run in the history: j's entry was dropped under a
		// limit of 1.
		cj.Status.RecentRuns = []cronv1.RunRecord{{JobName: "cj-newer", Trigger: cronv1.TriggerScheduled,
			ScheduledTime: &metav1.Time{Time: at(-time.Hour)}, Outcome: cronv1.OutcomeSucceeded}}
		cj.Status.FailureStreak.Count = 0
	})
	p := Decide(Input{CronJob: cj, Jobs: []Job{j}, Requests: requestsOf(run), Now: ten})
	if fs := p.Status.FailureStreak; fs == nil || fs.Count != 0 {
		t.Errorf("failureStreak %+v, want count 0: the failure was counted (and wiped by a success) before", fs)
	}
	if r := p.runRecord(j.Name); r != nil {
		t.Errorf("run history entry %+v entered again", r)
	}
}

// A CronJobRun's Job that a user detached from its CronJob keeps its
// run-record finalizer while it runs, though the CronJobRun's status names
// it: the status follows the Job to its end, and a Job released while
// running could finish and go (a TTL) before any status saw its outcome.
// Once finished and its outcome written, or once being deleted, it goes.
func TestADetachedCronJobRunJobKeepsItsFinalizerUntilItsOutcomeIsWritten(t *testing.T) {
	run := cronJobRun("run-1")
	j := requestJob(run)
	named := followed(run, j)
	cj := cronJob()
	if Recorded(cj, nil, j, requestsOf(named)) {
		t.Errorf("a running detached Job is released while its CronJobRun says %s", named.Status.Outcome)
	}
	done := finishAs(requestJob(run), batchv1.JobComplete)
	if Recorded(cj, nil, done, requestsOf(named)) {
		t.Errorf("a finished detached Job is released before its CronJobRun's status holds its outcome")
	}
	if !Recorded(cj, nil, done, requestsOf(followed(run, done))) {
		t.Errorf("a finished detached Job whose outcome is written is not released")
	}
	if gone := deleting(requestJob(run)); !Recorded(cj, nil, gone, requestsOf(named)) {
		t.Errorf("a detached Job being deleted, its CronJobRun naming it, is not released: its delete would hang")
	}
}
