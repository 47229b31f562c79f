package backfill

import (
	"fmt"
	"math"
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
	"github.com/cronjob-controller/cronjob-controller/pkg/job"
	"github.com/cronjob-controller/cronjob-controller/pkg/planner"
	"github.com/cronjob-controller/cronjob-controller/pkg/slim"
)

func TestDecide(t *testing.T) {
	last := hour(10)
	type want struct {
		creates                             []time.Time
		total, created, skipped, succ, fail int32
		active                              int
		reason                              string
		complete                            bool
	}
	cases := []struct {
		name string
		bf   func() *cronv1.Backfill
		cj   *cronv1.CronJob
		jobs []*testJob
		gone map[types.UID]bool
		now  time.Time
		want want
	}{{
		name: "creates the oldest times first, at most maxConcurrent",
		bf:   func() *cronv1.Backfill { return backfillOf(hour(1), hour(5), 2) },
		cj:   cronJob(hour(-1), &last), now: hour(10),
		want: want{creates: []time.Time{hour(1), hour(2)}, total: 4, reason: ReasonRunning},
	}, {
		name: "a time whose Job exists is skipped and counted",
		bf:   func() *cronv1.Backfill { return backfillOf(hour(1), hour(4), 2) },
		cj:   cronJob(hour(-1), &last), jobs: []*testJob{scheduledJob(hour(1))}, now: hour(10),
		want: want{creates: []time.Time{hour(2), hour(3)}, total: 3, skipped: 1, reason: ReasonRunning},
	}, {
		name: "an existing Job after a planned create waits for the next sync",
		bf:   func() *cronv1.Backfill { return backfillOf(hour(1), hour(4), 3) },
		cj:   cronJob(hour(-1), &last), jobs: []*testJob{scheduledJob(hour(2))}, now: hour(10),
		want: want{creates: []time.Time{hour(1)}, total: 3, reason: ReasonRunning},
	}, {
		name: "no create while maxConcurrent Jobs are active",
		bf: func() *cronv1.Backfill {
			bf := backfillOf(hour(1), hour(4), 1)
			bf.Status = cronv1.BackfillStatus{Created: 1, LastHandledTime: &metav1.Time{Time: hour(1)},
				Active: []corev1.ObjectReference{{Name: job.Name("cj", hour(1)), UID: "b-01"}}}
			return bf
		},
		cj: cronJob(hour(-1), &last), jobs: []*testJob{backfillJob(hour(1), "")}, now: hour(10),
		want: want{total: 3, created: 1, active: 1, reason: ReasonRunning},
	}, {
		name: "a finished Job frees its place for the next time",
		bf: func() *cronv1.Backfill {
			bf := backfillOf(hour(1), hour(4), 1)
			bf.Status = cronv1.BackfillStatus{Created: 1, LastHandledTime: &metav1.Time{Time: hour(1)},
				Active: []corev1.ObjectReference{{Name: job.Name("cj", hour(1)), UID: "b-01"}}}
			return bf
		},
		cj: cronJob(hour(-1), &last), jobs: []*testJob{backfillJob(hour(1), batchv1.JobComplete)}, now: hour(10),
		want: want{creates: []time.Time{hour(2)}, total: 3, created: 1, succ: 1, reason: ReasonRunning},
	}, {
		name: "an active Job the API server says is gone counts as failed",
		bf: func() *cronv1.Backfill {
			bf := backfillOf(hour(1), hour(2), 1)
			bf.Status = cronv1.BackfillStatus{Created: 1, LastHandledTime: &metav1.Time{Time: hour(1)},
				Active: []corev1.ObjectReference{{Name: job.Name("cj", hour(1)), UID: "b-01"}}}
			return bf
		},
		cj: cronJob(hour(-1), &last), gone: map[types.UID]bool{"b-01": true}, now: hour(10),
		want: want{total: 1, created: 1, fail: 1, reason: ReasonCompleted, complete: true},
	}, {
		name: "an active Job missing from the cache but not known gone stays active",
		bf: func() *cronv1.Backfill {
			bf := backfillOf(hour(1), hour(2), 1)
			bf.Status = cronv1.BackfillStatus{Created: 1, LastHandledTime: &metav1.Time{Time: hour(1)},
				Active: []corev1.ObjectReference{{Name: job.Name("cj", hour(1)), UID: "b-01"}}}
			return bf
		},
		cj: cronJob(hour(-1), &last), now: hour(10),
		want: want{total: 1, created: 1, active: 1, reason: ReasonRunning},
	}, {
		name: "its own Job made before a lost status write counts as created, not skipped",
		bf:   func() *cronv1.Backfill { return backfillOf(hour(1), hour(3), 1) },
		cj:   cronJob(hour(-1), &last), jobs: []*testJob{backfillJob(hour(1), "")}, now: hour(10),
		want: want{total: 2, created: 1, active: 1, reason: ReasonRunning},
	}, {
		name: "times the CronJob has not passed wait for it (the future among them)",
		bf:   func() *cronv1.Backfill { return backfillOf(hour(8), hour(14), 10) },
		cj:   cronJob(hour(-1), &last), jobs: []*testJob{scheduledJob(hour(10))}, now: hour(11).Add(30 * time.Minute),
		want: want{creates: []time.Time{hour(8), hour(9)}, total: 6, reason: ReasonRunning},
	}, {
		name: "waiting with nothing to do says so",
		bf: func() *cronv1.Backfill {
			bf := backfillOf(hour(9), hour(14), 10)
			bf.Status = cronv1.BackfillStatus{LastHandledTime: &metav1.Time{Time: hour(10)}}
			return bf
		},
		cj: cronJob(hour(-1), &last), now: hour(11).Add(30 * time.Minute),
		want: want{total: 5, reason: ReasonWaitingForCronJob},
	}, {
		name: "a CronJob created after the range: every time is backfilled",
		bf:   func() *cronv1.Backfill { return backfillOf(hour(1), hour(3), 5) },
		cj:   cronJob(hour(5), nil), now: hour(5).Add(time.Minute),
		want: want{creates: []time.Time{hour(1), hour(2)}, total: 2, reason: ReasonRunning},
	}, {
		name: "times the CronJob missed are backfilled",
		bf:   func() *cronv1.Backfill { return backfillOf(hour(10), hour(13), 5) },
		cj: func() *cronv1.CronJob {
			cj := cronJob(hour(-1), &last)
			cj.Status.MissedRuns = []cronv1.MissedRuns{{Reason: cronv1.MissedConcurrencyForbidden, Count: 2, LastTime: metav1.NewTime(hour(12))}}
			return cj
		}(), jobs: []*testJob{scheduledJob(hour(10))}, now: hour(12).Add(time.Minute),
		want: want{creates: []time.Time{hour(11), hour(12)}, total: 3, skipped: 1, reason: ReasonRunning},
	}, {
		name: "suspended: nothing created",
		bf: func() *cronv1.Backfill {
			bf := backfillOf(hour(1), hour(3), 5)
			bf.Spec.Suspend = ptr.To(true)
			return bf
		},
		cj: cronJob(hour(-1), &last), now: hour(10),
		want: want{total: 2, reason: ReasonSuspended},
	}, {
		name: "no CronJob: nothing created",
		bf:   func() *cronv1.Backfill { return backfillOf(hour(1), hour(3), 5) },
		now:  hour(10),
		want: want{reason: ReasonCronJobNotFound},
	}, {
		name: "a new CronJob of the same name is not the Backfill's",
		bf:   func() *cronv1.Backfill { return backfillOf(hour(1), hour(3), 5) },
		cj: func() *cronv1.CronJob {
			cj := cronJob(hour(-1), &last)
			cj.UID = "other"
			return cj
		}(), now: hour(10),
		want: want{reason: ReasonCronJobNotFound},
	}, {
		name: "more times than the cap: refused before any Job",
		bf:   func() *cronv1.Backfill { return backfillOf(hour(-24*365), hour(0), 5) },
		cj:   cronJob(hour(1), nil), now: hour(10),
		want: want{reason: ReasonTooManyTimes},
	}, {
		name: "an unusable schedule: nothing created",
		bf:   func() *cronv1.Backfill { return backfillOf(hour(1), hour(3), 5) },
		cj: func() *cronv1.CronJob {
			cj := cronJob(hour(-1), &last)
			cj.Spec.TimeZone = ptr.To("Nowhere/Nothing")
			return cj
		}(), now: hour(10),
		want: want{reason: ReasonInvalidSchedule},
	}, {
		name: "all handled and none active: complete",
		bf: func() *cronv1.Backfill {
			bf := backfillOf(hour(1), hour(3), 1)
			bf.Status = cronv1.BackfillStatus{Created: 2, Succeeded: 1, LastHandledTime: &metav1.Time{Time: hour(2)},
				Active: []corev1.ObjectReference{{Name: job.Name("cj", hour(2)), UID: "b-02"}}}
			return bf
		},
		cj: cronJob(hour(-1), &last), jobs: []*testJob{backfillJob(hour(2), batchv1.JobFailed)}, now: hour(10),
		want: want{total: 2, created: 2, succ: 1, fail: 1, reason: ReasonCompleted, complete: true},
	}, {
		name: "a range the schedule names no time in is complete at once",
		bf:   func() *cronv1.Backfill { return backfillOf(hour(1).Add(time.Minute), hour(1).Add(2*time.Minute), 1) },
		cj:   cronJob(hour(-1), &last), now: hour(10),
		want: want{reason: ReasonCompleted, complete: true},
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			bf := tc.bf()
			p := Decide(Input{Backfill: bf, CronJob: tc.cj, Job: lookup(tc.jobs...), Gone: tc.gone, Now: tc.now})
			got := createdTimes(p)
			if fmt.Sprint(got) != fmt.Sprint(tc.want.creates) {
				t.Errorf("creates %v, want %v", got, tc.want.creates)
			}
			st := p.Status
			if st.Total != tc.want.total || st.Created != tc.want.created || st.Skipped != tc.want.skipped ||
				st.Succeeded != tc.want.succ || st.Failed != tc.want.fail || len(st.Active) != tc.want.active {
				t.Errorf("status total/created/skipped/succeeded/failed/active = %d/%d/%d/%d/%d/%d, want %d/%d/%d/%d/%d/%d",
					st.Total, st.Created, st.Skipped, st.Succeeded, st.Failed, len(st.Active),
					tc.want.total, tc.want.created, tc.want.skipped, tc.want.succ, tc.want.fail, tc.want.active)
			}
			c := meta.FindStatusCondition(st.Conditions, cronv1.ConditionBackfillComplete)
			if c == nil || c.Reason != tc.want.reason || (c.Status == metav1.ConditionTrue) != tc.want.complete {
				t.Errorf("Complete condition %+v, want reason %s, complete %v", c, tc.want.reason, tc.want.complete)
			}
			for _, cr := range p.Creates {
				if cr.Job.Name != job.Name("cj", cr.Time) || !ours(cr.Job, bf) || !slices.Equal(cr.Job.Finalizers, []string{Finalizer}) ||
					cr.Job.Labels[cronv1.BackfillLabel] != "bf" {
					t.Errorf("Job %s: not named as the scheduled run, not controlled by the Backfill, or not holding only the backfill-record finalizer: %+v", cr.Job.Name, cr.Job.ObjectMeta)
				}
				if at, _ := job.ScheduledAt(cr.Job); !at.Equal(cr.Time) {
					t.Errorf("Job %s scheduled-at %v, want %v", cr.Job.Name, at, cr.Time)
				}
			}
		})
	}
}

// Times in the range follow the CronJob's schedule: H resolved with the
// CronJob's seed, read in its time zone; @every from the range's start.
func TestTimes(t *testing.T) {
	berlin := cronJob(hour(-1), nil)
	berlin.Spec.Schedule, berlin.Spec.TimeZone = "0 9 * * *", ptr.To("Europe/Berlin")
	hashed := cronJob(hour(-1), nil)
	hashed.Spec.Schedule = "H * * * *"
	every := cronJob(hour(-1), nil)
	every.Spec.Schedule = "@every 90m"
	several := cronJob(hour(-1), nil)
	several.Spec.Schedule, several.Spec.Schedules = "", []cronv1.ScheduleEntry{"0 1 * * *", "30 0 * * *", "0 1,2 * * *"}
	minute := func(cj *cronv1.CronJob) int {
		s, err := parse(cj)
		if err != nil {
			t.Fatal(err)
		}
		return s.Next(t0).Minute()
	}
	for _, tc := range []struct {
		name       string
		cj         *cronv1.CronJob
		start, end time.Time
		want       []time.Time
	}{
		{"in the CronJob's zone", berlin, t0, t0.Add(48 * time.Hour), []time.Time{hour(8), hour(32)}},
		{"H as the CronJob resolves it", hashed, t0, hour(2), []time.Time{t0.Add(time.Duration(minute(hashed)) * time.Minute), hour(1).Add(time.Duration(minute(hashed)) * time.Minute)}},
		{"@every from the start", every, t0.Add(500 * time.Millisecond), hour(4), []time.Time{t0.Add(time.Second), t0.Add(90*time.Minute + time.Second), t0.Add(180*time.Minute + time.Second)}},
		{"start included, end excluded", cronJob(hour(-1), nil), hour(1), hour(3), []time.Time{hour(1), hour(2)}},
		{"spec.schedules: the union, each time once", several, t0, hour(3), []time.Time{t0.Add(30 * time.Minute), hour(1), hour(2)}},
	} {
		s, err := parse(tc.cj)
		if err != nil {
			t.Fatal(err)
		}
		got, ok := Times(s, tc.start, tc.end, 100)
		if !ok || !slices.EqualFunc(got, tc.want, time.Time.Equal) {
			t.Errorf("%s: %v (%v), want %v", tc.name, got, ok, tc.want)
		}
	}
}

// The outcomes of creates move the progress: created, or skipped when the
// name was taken meanwhile (the create answered AlreadyExists).
func TestOutcomes(t *testing.T) {
	last := hour(10)
	bf := backfillOf(hour(1), hour(3), 2)
	p := Decide(Input{Backfill: bf, CronJob: cronJob(hour(-1), &last), Job: lookup(), Now: hour(10)})
	if len(p.Creates) != 2 {
		t.Fatalf("creates %v", createdTimes(p))
	}
	made := p.Creates[0].Job.DeepCopy()
	made.UID = "b-01"
	p.Created(p.Creates[0], made)
	p.Exists(p.Creates[1], scheduledJob(hour(2)))
	st := p.Status
	if st.Created != 1 || st.Skipped != 1 || len(st.Active) != 1 || !st.LastHandledTime.Time.Equal(hour(2)) {
		t.Errorf("status %+v", st)
	}
	// The Job finishes: complete.
	bf.Status = st
	done := backfillJob(hour(1), batchv1.JobComplete)
	p = Decide(Input{Backfill: bf, CronJob: cronJob(hour(-1), &last), Job: lookup(done), Now: hour(11)})
	if !meta.IsStatusConditionTrue(p.Status.Conditions, cronv1.ConditionBackfillComplete) || p.Status.Succeeded != 1 {
		t.Errorf("not complete after the last Job succeeded: %+v", p.Status)
	}
	if len(p.Events) == 0 || p.Events[len(p.Events)-1].Reason != ReasonCompleted {
		t.Errorf("no Completed event: %+v", p.Events)
	}
}

// The Backfill and the CronJob's planner never plan a Job for the same time:
// for every CronJob state on a walk of the clock, the times the Backfill
// would create and those the planner would create are disjoint. (The Name is
// the lock besides; this is why the lock never refuses either of them.)
func TestNeverRacesThePlanner(t *testing.T) {
	for _, policy := range []cronv1.CatchUpPolicy{cronv1.CatchUpLatest, cronv1.CatchUpAll} {
		cj := cronJob(hour(0), nil)
		cj.Spec.CatchUpPolicy = policy
		cj.Spec.CatchUpLimit = ptr.To(int32(3))
		bf := backfillOf(hour(-5), hour(20), 100)
		var jobs []planner.Job
		var ours, theirs int
		for now := hour(0); now.Before(hour(22)); now = now.Add(37 * time.Minute) {
			plan := planner.Decide(planner.Input{CronJob: cj, Jobs: jobs, Now: now})
			bplan := Decide(Input{Backfill: bf, CronJob: cj, Job: lookup(), Now: now})
			ours, theirs = ours+len(bplan.Creates), theirs+len(plan.Creates)
			mine := map[time.Time]bool{}
			for _, c := range bplan.Creates {
				mine[c.Time] = true
			}
			for _, c := range plan.Creates {
				if !c.Manual && mine[c.Time] {
					t.Fatalf("%s at %v: both plan a Job for %v", policy, now, c.Time)
				}
			}
			// The planner's runs start (the Backfill's are left out, as
			// the CronJob's planner never sees them); every other status
			// change is kept.
			for i, c := range plan.Creates {
				made := c.Job.DeepCopy()
				made.UID = types.UID(fmt.Sprintf("%v-%d", now.Unix(), i))
				j := slim.NewJob(made)
				jobs = append(jobs, j)
				plan.Started(c, j, true)
			}
			cj = cj.DeepCopy()
			cj.Status = plan.Status
		}
		if ours == 0 || theirs == 0 {
			t.Errorf("%s: the walk planned %d backfill and %d scheduled creates; both should plan some", policy, ours, theirs)
		}
	}
}

// A range with no room, start == end or start after end, is refused by the
// schema (start must be before end); stored past it, the Backfill names no
// time, creates nothing and says so: Complete True with 0 times, one
// Completed Event, and the next sync does nothing (no loop). start == end on
// a time the schedule names catches an end read as included.
func TestEmptyOrReversedRangeCreatesNothingAndSaysSo(t *testing.T) {
	last := hour(10)
	every := cronJob(hour(-1), &last)
	every.Spec.Schedule = "@every 30m"
	for _, tc := range []struct {
		name       string
		start, end time.Time
		cj         *cronv1.CronJob
	}{
		{"start == end on a scheduled time", hour(1), hour(1), cronJob(hour(-1), &last)},
		{"start after end", hour(5), hour(1), cronJob(hour(-1), &last)},
		{"start == end, @every", hour(1), hour(1), every},
		{"start after end, @every", hour(5), hour(1), every},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := Input{Backfill: backfillOf(tc.start, tc.end, 5), CronJob: tc.cj, Job: lookup(), Now: hour(10)}
			p := Decide(in)
			if len(p.Creates) != 0 || p.Status.Total != 0 {
				t.Errorf("creates %v, total %d: the range names no time", createdTimes(p), p.Status.Total)
			}
			c := meta.FindStatusCondition(p.Status.Conditions, cronv1.ConditionBackfillComplete)
			if c == nil || c.Status != metav1.ConditionTrue || c.Reason != ReasonCompleted || !strings.HasPrefix(c.Message, "0 times") {
				t.Errorf("Complete %+v, want True, %s, saying 0 times", c, ReasonCompleted)
			}
			if len(p.Events) != 1 || p.Events[0].Reason != ReasonCompleted {
				t.Errorf("events %+v, want one %s", p.Events, ReasonCompleted)
			}
			settle(t, in, p)
		})
	}
}

// maxConcurrent below 1 is refused by the schema (minimum 1); stored past
// it, the Backfill neither panics nor spins: a sync starts at most one Job
// (today none: see TestMaxConcurrentBelowOneSaysWhyNothingIsCreated), and
// the next sync, on the status it wrote and with its Jobs running, does
// nothing (no create, no Event, no new status whose echo would queue it
// again).
func TestMaxConcurrentBelowOneNeitherCrashesNorSpins(t *testing.T) {
	last := hour(10)
	for _, max := range []int32{0, -1, math.MinInt32} {
		in := Input{Backfill: backfillOf(hour(1), hour(4), max), CronJob: cronJob(hour(-1), &last), Job: lookup(), Now: hour(10)}
		p := Decide(in)
		if len(p.Creates) > 1 || p.Status.Total != 3 {
			t.Errorf("maxConcurrent %d: creates %v, total %d; want at most one Job at a time", max, createdTimes(p), p.Status.Total)
		}
		var made []*testJob
		for _, c := range p.Creates {
			j := backfillJob(c.Time, "")
			p.Created(c, j)
			made = append(made, j)
		}
		in.Job = lookup(made...)
		settle(t, in, p)
	}
}

// DEFECT (fails today): with maxConcurrent below 1 (stored past the
// schema) and every time of the range already passed by the CronJob, the
// Backfill creates nothing, forever, and its condition says
// WaitingForCronJob, "waiting for CronJob cj to pass the next time of the
// range (it is settled until 10:00)", though the next time is 01:00: the
// user is sent to wait on the CronJob for something that will never come.
// It must either run (reading the value as 1, as the planner reads a
// negative startingDeadlineSeconds as 0) or say that maxConcurrent is why
// nothing is created.
func TestMaxConcurrentBelowOneSaysWhyNothingIsCreated(t *testing.T) {
	last := hour(10)
	for _, max := range []int32{0, -1} {
		p := Decide(Input{Backfill: backfillOf(hour(1), hour(4), max), CronJob: cronJob(hour(-1), &last), Job: lookup(), Now: hour(10)})
		if len(p.Creates) > 0 {
			continue
		}
		c := meta.FindStatusCondition(p.Status.Conditions, cronv1.ConditionBackfillComplete)
		if c == nil || c.Reason == ReasonWaitingForCronJob || !strings.Contains(c.Message, "maxConcurrent") {
			t.Errorf("maxConcurrent %d: nothing created and Complete %+v: it blames the CronJob, which is past every time of the range, instead of maxConcurrent", max, c)
		}
	}
}
