package planner

// The package's shared test fixtures: the clock (ten, at), fakeJob and the
// Jobs built from it, a CronJob and the options that shape it, Calendars,
// and readers of a Plan and its status.

import (
	"time"

	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	cronv1 "github.com/cronjob-controller/cronjob-controller/pkg/apis/batch/v1"
	"github.com/cronjob-controller/cronjob-controller/pkg/job"
)

var ten = time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC) // a Friday

func at(d time.Duration) time.Time { return ten.Add(d) }

// fakeJob is a Job as the planner reads it.
type fakeJob struct {
	metav1.ObjectMeta
	finished          batchv1.JobConditionType
	scheduled         time.Time
	manual            bool
	started, complete *metav1.Time
	// failedAt is when a failed Job's Failed condition became True;
	// failedReason and failedMessage are that condition's.
	failedAt                    *metav1.Time
	failedReason, failedMessage string
	// runNowKey, runNowAfter and runNowSeq are a manual Job's run-now
	// annotations, there when hasRunNow (as while it holds the run-record
	// finalizer); runNowSeq 0 for a Job made before requests were numbered.
	runNowKey, runNowAfter string
	runNowSeq              int64
	hasRunNow              bool
}

func (j *fakeJob) Finished() batchv1.JobConditionType { return j.finished }
func (j *fakeJob) StartTime() *metav1.Time            { return j.started }
func (j *fakeJob) CompletionTime() *metav1.Time       { return j.complete }
func (j *fakeJob) FinishTime() *metav1.Time {
	if j.finished == batchv1.JobFailed {
		return j.failedAt
	}
	return j.complete
}
func (j *fakeJob) Failure() (reason, message string) { return j.failedReason, j.failedMessage }
func (j *fakeJob) ScheduledAt() (time.Time, bool)    { return j.scheduled, !j.scheduled.IsZero() }
func (j *fakeJob) Manual() bool                      { return j.manual }
func (j *fakeJob) RunNow() (key, after string, seq int64, ok bool) {
	return j.runNowKey, j.runNowAfter, j.runNowSeq, j.hasRunNow
}

// runOf is the Job of the run at t, owned by cj; done finishes it at t+5m.
func runOf(t time.Time, done batchv1.JobConditionType) *fakeJob {
	j := &fakeJob{ObjectMeta: metav1.ObjectMeta{Name: job.Name("cj", t), Namespace: "default", UID: types.UID("uid-" + job.Name("cj", t))},
		scheduled: t, started: &metav1.Time{Time: t}, finished: done}
	if done == batchv1.JobComplete {
		j.complete = &metav1.Time{Time: t.Add(5 * time.Minute)}
	}
	return j
}

func manualRun(name string) *fakeJob {
	return &fakeJob{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: "uid-" + "m"}, manual: true,
		started: &metav1.Time{Time: at(-time.Minute)}}
}

// manualJob is the Job of request seq (0: named before requests were
// numbered), value key after the value handled before it, finished.
func manualJob(after, key string, seq int64) *fakeJob {
	name := job.ManualName("cj", "cj-uid", after, key, seq)
	return &fakeJob{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID("uid-" + name)},
		manual: true, started: &metav1.Time{Time: at(-time.Hour)}, complete: &metav1.Time{Time: at(-time.Hour + time.Minute)},
		finished: batchv1.JobComplete}
}

// holding gives a Job the run-record finalizer (and another one, so a
// release must remove only ours).
func holding(j *fakeJob) *fakeJob {
	j.Finalizers = []string{"foregroundDeletion", job.RunRecordFinalizer}
	return j
}

func deleting(j *fakeJob) *fakeJob {
	j.DeletionTimestamp = &metav1.Time{Time: at(-time.Minute)}
	return j
}

// unrecorded gives j the run-record finalizer and its run-now annotations,
// as a Job has them until a written status records its run; seq 0 is a Job
// made before requests were numbered.
func unrecorded(j *fakeJob, after, key string, seq int64) *fakeJob {
	holding(j)
	j.runNowKey, j.runNowAfter, j.runNowSeq, j.hasRunNow = key, after, seq, true
	return j
}

// unrecordedManual is the run-now Job of value key after the value handled
// before it (named before requests were numbered), started a minute ago,
// its run not recorded yet: it holds the run-record finalizer and its
// run-now annotations.
func unrecordedManual(after, key string, uid types.UID) *fakeJob {
	j := unrecorded(manualRun(job.ManualName("cj", "cj-uid", after, key, 0)), after, key, 0)
	j.UID = uid
	return j
}

func cronJob(opts ...func(*cronv1.CronJob)) *cronv1.CronJob {
	cj := &cronv1.CronJob{
		ObjectMeta: metav1.ObjectMeta{Name: "cj", Namespace: "default", UID: "cj-uid", Generation: 1,
			CreationTimestamp: metav1.NewTime(at(-30 * 24 * time.Hour))},
		Spec: cronv1.CronJobSpec{Schedule: "0 * * * *", TimeZone: ptr.To("UTC"), ConcurrencyPolicy: cronv1.AllowConcurrent,
			SuccessfulJobsHistoryLimit: ptr.To[int32](3), FailedJobsHistoryLimit: ptr.To[int32](1)},
	}
	for _, o := range opts {
		o(cj)
	}
	return cj
}

func last(t time.Time) func(*cronv1.CronJob) {
	return func(cj *cronv1.CronJob) { cj.Status.LastScheduleTime = &metav1.Time{Time: t} }
}
func sched(s string) func(*cronv1.CronJob) { return func(cj *cronv1.CronJob) { cj.Spec.Schedule = s } }
func zone(z string) func(*cronv1.CronJob)  { return func(cj *cronv1.CronJob) { cj.Spec.TimeZone = &z } }
func concurrency(p cronv1.ConcurrencyPolicy) func(*cronv1.CronJob) {
	return func(cj *cronv1.CronJob) { cj.Spec.ConcurrencyPolicy = p }
}
func catchUpAll(limit int32) func(*cronv1.CronJob) {
	return func(cj *cronv1.CronJob) { cj.Spec.CatchUpPolicy, cj.Spec.CatchUpLimit = cronv1.CatchUpAll, &limit }
}
func deadline(s int64) func(*cronv1.CronJob) {
	return func(cj *cronv1.CronJob) { cj.Spec.StartingDeadlineSeconds = &s }
}
func active(jobs ...*fakeJob) func(*cronv1.CronJob) {
	return func(cj *cronv1.CronJob) {
		for _, j := range jobs {
			cj.Status.Active = append(cj.Status.Active, job.Ref(j))
		}
	}
}

// seen says the controller last saw resolved (in z) in force.
func seen(resolved, z string) func(*cronv1.CronJob) {
	return func(cj *cronv1.CronJob) {
		cj.Status.ResolvedSchedule, cj.Status.ResolvedTimeZone = resolved, z
		meta.SetStatusCondition(&cj.Status.Conditions, metav1.Condition{Type: cronv1.ConditionScheduleValid, Status: metav1.ConditionTrue, Reason: "Valid"})
	}
}

// history adds an earlier schedule in force until u.
func history(resolved, z string, u time.Time) func(*cronv1.CronJob) {
	return func(cj *cronv1.CronJob) {
		cj.Status.PreviousSchedules = append(cj.Status.PreviousSchedules, cronv1.PreviousSchedule{Schedule: resolved, TimeZone: z, Until: metav1.NewTime(u)})
	}
}

func notBefore(t time.Time) func(*cronv1.CronJob) {
	return func(cj *cronv1.CronJob) { cj.Spec.NotBefore = &metav1.Time{Time: t} }
}
func notAfter(t time.Time) func(*cronv1.CronJob) {
	return func(cj *cronv1.CronJob) { cj.Spec.NotAfter = &metav1.Time{Time: t} }
}
func schedules(entries ...string) func(*cronv1.CronJob) {
	return func(cj *cronv1.CronJob) {
		cj.Spec.Schedule = ""
		cj.Spec.Schedules = nil
		for _, e := range entries {
			cj.Spec.Schedules = append(cj.Spec.Schedules, cronv1.ScheduleEntry(e))
		}
	}
}
func condition(typ string, status metav1.ConditionStatus, reason, msg string) func(*cronv1.CronJob) {
	return func(cj *cronv1.CronJob) {
		meta.SetStatusCondition(&cj.Status.Conditions, metav1.Condition{Type: typ, Status: status, Reason: reason, Message: msg})
	}
}

func handled(last string, count int64) func(*cronv1.CronJob) {
	return func(cj *cronv1.CronJob) { cj.Status.LastRunNow, cj.Status.RunNowCount = last, count }
}

func runNowValue(v string) func(*cronv1.CronJob) {
	return func(cj *cronv1.CronJob) { cj.Annotations = map[string]string{cronv1.RunNowAnnotation: v} }
}

func calendarOf(name, zone string, dates []string, ranges ...[2]string) *cronv1.Calendar {
	cal := &cronv1.Calendar{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: cronv1.CalendarSpec{TimeZone: zone}}
	for _, d := range dates {
		cal.Spec.Dates = append(cal.Spec.Dates, cronv1.CalendarDate(d))
	}
	for _, r := range ranges {
		cal.Spec.Ranges = append(cal.Spec.Ranges, cronv1.CalendarRange{Start: cronv1.CalendarTime(r[0]), End: cronv1.CalendarTime(r[1])})
	}
	return cal
}

func excluding(names ...string) func(*cronv1.CronJob) {
	return func(cj *cronv1.CronJob) { cj.Spec.ExcludeCalendars = names }
}

func calendarsOf(cals ...*cronv1.Calendar) map[string]*cronv1.Calendar {
	out := map[string]*cronv1.Calendar{}
	for _, c := range cals {
		out[c.Name] = c
	}
	return out
}

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

func hours(hs ...int) []string {
	var out []string
	for _, h := range hs {
		out = append(out, job.Name("cj", at(time.Duration(h-10)*time.Hour)))
	}
	return out
}

func names[T any](items []T, name func(T) string) []string {
	var out []string
	for _, it := range items {
		out = append(out, name(it))
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

func missedOf(st cronv1.CronJobStatus) map[string]int64 {
	out := map[string]int64{}
	for _, m := range st.MissedRuns {
		out[m.Reason] = m.Count
	}
	return out
}

func missedFor(st cronv1.CronJobStatus, reason string) int64 {
	for _, m := range st.MissedRuns {
		if m.Reason == reason {
			return m.Count
		}
	}
	return 0
}

func totalMissed(st cronv1.CronJobStatus) int64 {
	var n int64
	for _, m := range st.MissedRuns {
		n += m.Count
	}
	return n
}

func mapsEqual(a, b map[string]int64) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// failurePolicy pauses after pauseAfter failed runs in a row; resume (0:
// unset) is resumeAfter and maxResume (0: unset) maxResumeAfter.
func failurePolicy(pauseAfter int32, resume, maxResume time.Duration) func(*cronv1.CronJob) {
	return func(cj *cronv1.CronJob) {
		fp := &cronv1.FailurePolicy{PauseAfter: pauseAfter}
		if resume > 0 {
			fp.ResumeAfter = &metav1.Duration{Duration: resume}
		}
		if maxResume > 0 {
			fp.MaxResumeAfter = &metav1.Duration{Duration: maxResume}
		}
		cj.Spec.FailurePolicy = fp
	}
}

// failing says count runs in a row failed, the latest lastFailed.
func failing(count int32, lastFailed string) func(*cronv1.CronJob) {
	return func(cj *cronv1.CronJob) {
		cj.Status.FailureStreak = &cronv1.FailureStreak{Count: count, LastFailedJob: lastFailed}
	}
}

// entered says the run history holds the runs of jobs, with their
// outcomes: a status that saw them finish.
func entered(jobs ...*fakeJob) func(*cronv1.CronJob) {
	return func(cj *cronv1.CronJob) {
		p := &Plan{cj: cj, Status: cj.Status, now: ten}
		for _, j := range jobs {
			if j.finished == "" {
				p.enterRun(j, p.triggerOf(j))
			} else {
				p.enterOutcome(j)
			}
		}
		cj.Status = p.Status
	}
}

// pausedSince says the streak paused scheduled runs at t, for the pauses-th
// time, with trial the trial run's Job ("" for none).
func pausedSince(t time.Time, pauses int32, trial string) func(*cronv1.CronJob) {
	return func(cj *cronv1.CronJob) {
		fs := cj.Status.FailureStreak
		fs.PausedAt, fs.Pauses, fs.TrialJob = &metav1.Time{Time: t}, pauses, trial
	}
}

func annotated(key, value string) func(*cronv1.CronJob) {
	return func(cj *cronv1.CronJob) {
		if cj.Annotations == nil {
			cj.Annotations = map[string]string{}
		}
		cj.Annotations[key] = value
	}
}

// eventsOf are a plan's Events as "Reason: message".
func eventsOf(p *Plan) []string {
	return names(p.Events, func(e Event) string { return e.Reason + ": " + e.Message })
}

// running makes j a Job still running (no outcome yet).
func running(j *fakeJob) *fakeJob {
	j.finished, j.complete, j.failedAt = "", nil, nil
	return j
}
