package planner

import (
	"fmt"
	"math/rand"
	"runtime/debug"
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

// Decide and the outcome methods never panic and always leave a status the
// CRD schema accepts, whatever an old or hand-edited object holds.
func TestGarbageInputsNeverPanic(t *testing.T) {
	r := rand.New(rand.NewSource(7))
	pickS := func(xs ...string) string { return xs[r.Intn(len(xs))] }
	times := func() time.Time {
		switch r.Intn(6) {
		case 0:
			return time.Time{}
		case 1:
			return time.Unix(0, 0)
		case 2:
			return ten.Add(time.Duration(r.Int63n(1<<50)) - 1<<49)
		case 3:
			return time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC)
		default:
			return ten.Add(time.Duration(r.Intn(100000)-50000) * time.Second)
		}
	}
	for i := 0; i < 3000; i++ {
		cj := cronJob(func(cj *cronv1.CronJob) {
			cj.CreationTimestamp = metav1.NewTime(times())
			cj.Spec.Schedule = pickS("0 * * * *", "@every 1s", "@every 0s", "H H * * *", "", " ", "* * * * * *", "0 0 31 2 *", "0 0 29 2 *", "@every 100000h", "TZ=UTC 0 * * * *", strings.Repeat("1,", 600)+"1 * * * *")
			cj.Spec.TimeZone = ptr.To(pickS("UTC", "", "Local", "Nowhere/Atlantis", "Australia/Lord_Howe", "../etc/passwd"))
			if r.Intn(3) == 0 {
				cj.Spec.TimeZone = nil
			}
			cj.Spec.ConcurrencyPolicy = cronv1.ConcurrencyPolicy(pickS("Allow", "Forbid", "Replace", "", "Bogus"))
			cj.Spec.CatchUpPolicy = cronv1.CatchUpPolicy(pickS("Latest", "All", "None", "", "Bogus"))
			cj.Spec.CatchUpLimit = ptr.To(int32(r.Intn(300) - 100))
			if r.Intn(4) == 0 {
				cj.Spec.CatchUpLimit = nil
			}
			cj.Spec.StartingDeadlineSeconds = ptr.To(int64(r.Intn(7200) - 100))
			if r.Intn(3) == 0 {
				cj.Spec.StartingDeadlineSeconds = nil
			}
			cj.Spec.SuccessfulJobsHistoryLimit = ptr.To(int32(r.Intn(5)))
			cj.Spec.Suspend = ptr.To(r.Intn(4) == 0)
			st := &cj.Status
			if r.Intn(2) == 0 {
				st.LastScheduleTime = &metav1.Time{Time: times()}
			}
			st.ResolvedSchedule = pickS("", "0 * * * *", "garbage", "@every 1s")
			st.ResolvedTimeZone = pickS("", "UTC", "Nowhere/Atlantis")
			for k := r.Intn(6); k > 0; k-- {
				st.PreviousSchedules = append(st.PreviousSchedules, cronv1.PreviousSchedule{Schedule: pickS("", "0 * * * *", "garbage", "@every 1s", "@every 0s"), TimeZone: pickS("", "UTC", "Nowhere/Atlantis"), Until: metav1.NewTime(times())})
			}
			for k := r.Intn(4); k > 0; k-- {
				st.MissedRuns = append(st.MissedRuns, cronv1.MissedRuns{Reason: pickS("Superseded", "DeadlineExceeded", "x"), Count: int64(r.Intn(10) - 5), LastTime: metav1.NewTime(times())})
			}
			for k := r.Intn(3); k > 0; k-- {
				st.Active = append(st.Active, corev1.ObjectReference{Name: fmt.Sprint("a", r.Intn(3)), UID: types.UID(fmt.Sprint("u", r.Intn(3)))})
			}
			if r.Intn(3) == 0 {
				cj.Annotations = map[string]string{cronv1.RunNowAnnotation: pickS("x", "", strings.Repeat("y", 300))}
			}
			if r.Intn(5) == 0 {
				cj.DeletionTimestamp = ptr.To(metav1.NewTime(times()))
			}
		})
		var jobs []Job
		for k := r.Intn(5); k > 0; k-- {
			j := runOf(times(), batchv1.JobConditionType(pickS("", "Complete", "Failed")))
			j.UID = types.UID(fmt.Sprint("u", r.Intn(3)))
			if r.Intn(3) == 0 {
				j.started = nil
			}
			if r.Intn(4) == 0 {
				j.DeletionTimestamp = ptr.To(metav1.NewTime(times()))
			}
			jobs = append(jobs, j)
		}
		now := times()
		func() {
			defer func() {
				if x := recover(); x != nil {
					t.Fatalf("case %d panicked: %v\n%s\nsuccessfulJobsHistoryLimit %v", i, x, debug.Stack(), ptr.Deref(cj.Spec.SuccessfulJobsHistoryLimit, 99))
				}
			}()
			p := Decide(Input{CronJob: cj, Jobs: jobs, Now: now})
			for k, c := range p.Creates {
				switch k % 4 {
				case 0:
					p.Started(c, runOf(c.Time, ""), true)
				case 1:
					p.CreateFailed(c, fmt.Errorf("x"))
				case 2:
					p.NotStarted(c, NameTaken, "")
				case 3:
					p.NotStarted(c, Rejected, strings.Repeat("z", 5000))
				}
			}
			st := p.Status
			if len(st.PreviousSchedules) > 5 {
				t.Fatalf("case %d: previousSchedules %d", i, len(st.PreviousSchedules))
			}
			for _, c := range st.Conditions {
				if len(c.Message) > 32768 || c.Reason == "" || c.LastTransitionTime.IsZero() {
					t.Fatalf("case %d: condition %+v", i, c)
				}
			}
		}()
	}
}

// A negative history limit (the schema says minimum 0; an object stored
// before that schema, or under a CRD installed without it, can hold one)
// must not make Decide panic (in job.ToPrune): a panic in a worker takes the
// whole controller down, for every CronJob, on every restart.
func TestNegativeHistoryLimitDoesNotPanic(t *testing.T) {
	cj := cronJob(func(cj *cronv1.CronJob) { cj.Spec.SuccessfulJobsHistoryLimit = ptr.To[int32](-1) })
	defer func() {
		if x := recover(); x != nil {
			t.Errorf("Decide panicked: %v", x)
		}
	}()
	Decide(Input{CronJob: cj, Jobs: []Job{runOf(at(-time.Hour), batchv1.JobComplete)}, Now: ten})
}

// An empty schedule is refused by the schema (and @every below a second by
// its CEL rules), but an object stored past it (an older CRD, a write
// around validation) reaches Decide. It must say why nothing runs, as
// ScheduleValid=False InvalidSchedule with a Warning quoting the schedule,
// start no Job, and plan neither a next time nor a wake-up: a panic would
// take the worker down for every CronJob, and a wake-up would spin on a
// schedule that never fires. (A valid @every schedule runs: TestSyncCronJob
// "@every 5m, two intervals after creation", TestSimulatedWalkEvery.)
func TestUnusableScheduleStoredPastTheSchemaSaysSo(t *testing.T) {
	for _, tc := range []struct {
		name    string
		opt     func(*cronv1.CronJob)
		message string
	}{
		{"empty", sched(""), `schedule "": empty spec string`},
		{"blank", sched("  "), `schedule "  ": empty spec string`},
		{"empty entry of spec.schedules", schedules(""), `spec.schedules[0]: schedule "": empty spec string`},
		{"@every without an interval", sched("@every"), `schedule "@every"`},
		{"@every 0s", sched("@every 0s"), `@every needs an interval of at least 1s`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := Decide(Input{CronJob: cronJob(last(at(-time.Hour)), tc.opt), Now: at(time.Second)})
			c := meta.FindStatusCondition(p.Status.Conditions, cronv1.ConditionScheduleValid)
			if c == nil || c.Status != metav1.ConditionFalse || c.Reason != ReasonInvalidSchedule || !strings.Contains(c.Message, tc.message) {
				t.Errorf("ScheduleValid %+v, want False, %s, saying %q", c, ReasonInvalidSchedule, tc.message)
			}
			if got := names(p.Events, func(e Event) string { return e.Type + " " + e.Reason }); !slices.Equal(got, []string{"Warning " + ReasonInvalidSchedule}) {
				t.Errorf("events %q, want one Warning %s", got, ReasonInvalidSchedule)
			}
			if len(p.Creates) != 0 || p.RequeueAfter != 0 || p.Status.NextScheduleTime != nil {
				t.Errorf("creates %d, requeue %v, next %v: an unusable schedule starts nothing and plans no wake-up",
					len(p.Creates), p.RequeueAfter, p.Status.NextScheduleTime)
			}
		})
	}
}

// spec.timeZone "Local" (in any case) is refused by the schema: the
// controller's local time is asked for by leaving timeZone unset. Stored
// past the schema it is an unknown zone, never the controller's local time
// (which would move the runs with the node the controller lands on):
// ScheduleValid=False UnknownTimeZone naming the zone, no Job, no wake-up.
func TestLocalTimeZoneStoredPastTheSchemaIsUnknown(t *testing.T) {
	for _, z := range []string{"Local", "local", "LOCAL"} {
		p := Decide(Input{CronJob: cronJob(last(at(-time.Hour)), zone(z)), Now: at(time.Second)})
		c := meta.FindStatusCondition(p.Status.Conditions, cronv1.ConditionScheduleValid)
		if c == nil || c.Status != metav1.ConditionFalse || c.Reason != ReasonUnknownTimeZone || !strings.Contains(c.Message, `"`+z+`"`) {
			t.Errorf("%s: ScheduleValid %+v, want False, %s, naming the zone", z, c, ReasonUnknownTimeZone)
		}
		if len(p.Creates) != 0 || p.RequeueAfter != 0 || p.Status.NextScheduleTime != nil {
			t.Errorf("%s: creates %d, requeue %v, next %v: an unknown zone starts nothing and plans no wake-up",
				z, len(p.Creates), p.RequeueAfter, p.Status.NextScheduleTime)
		}
	}
	// The message says what to do instead.
	p := Decide(Input{CronJob: cronJob(zone("Local")), Now: at(time.Second)})
	if c := meta.FindStatusCondition(p.Status.Conditions, cronv1.ConditionScheduleValid); c == nil || !strings.Contains(c.Message, "leave spec.timeZone unset") {
		t.Errorf("ScheduleValid %+v: the message should say to leave spec.timeZone unset", c)
	}
}
