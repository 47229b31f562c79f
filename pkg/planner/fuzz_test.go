package planner

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	cronv1 "github.com/cronjob-controller/cronjob-controller/pkg/apis/batch/v1"
)

// FuzzDecide feeds the planner the numbers and times a user or a clock can
// bring (deadlines up to the int64 range, creation, last run and window
// bounds anywhere in the calendar) and checks what must hold whatever they
// are: no wait comes out negative, and a deadline that covers every run
// since the CronJob's creation decides exactly as no deadline does (a
// deadline that wrapped to a negative value counted each run late).
func FuzzDecide(f *testing.F) {
	f.Add(int64(10_000_000_000), uint8(0), uint8(0), int64(30*24*3600), int64(3600), int64(5), int64(0), int64(0), false)
	f.Add(int64(60), uint8(1), uint8(2), int64(7200), int64(0), int64(30), int64(-3600), int64(3600), false)
	f.Add(int64(-1), uint8(2), uint8(3), int64(1), int64(-5), int64(0), int64(1<<40), int64(-(1 << 40)), true)
	schedules := []struct{ spec, zone string }{
		{"0 * * * *", "UTC"}, {"*/5 * * * *", "UTC"}, {"@every 1h", "UTC"}, {"@every 90s", "UTC"},
		{"30 2 * * *", "Europe/Berlin"}, {"H * * * *", "UTC"}, {"0 0 29 2 *", "Australia/Lord_Howe"},
	}
	policies := []cronv1.CatchUpPolicy{cronv1.CatchUpLatest, cronv1.CatchUpAll, cronv1.CatchUpNone}
	f.Fuzz(func(t *testing.T, deadlineS int64, policy, schedIdx uint8, createdAgo, lastAgo, nowOff, notBeforeOff, notAfterOff int64, useWindow bool) {
		const span = int64(400 * 365 * 24 * 3600) // keep times inside years 1626-2426
		clamp := func(s int64) time.Duration { return time.Duration(max(min(s, span), -span)) * time.Second }
		now := at(clamp(nowOff))
		s := schedules[int(schedIdx)%len(schedules)]
		build := func(deadline *int64) *cronv1.CronJob {
			cj := cronJob(sched(s.spec), zone(s.zone), func(cj *cronv1.CronJob) {
				cj.CreationTimestamp = metav1.NewTime(now.Add(-clamp(createdAgo)))
				cj.Spec.CatchUpPolicy = policies[int(policy)%len(policies)]
				cj.Spec.StartingDeadlineSeconds = deadline
				if lastAgo > 0 {
					cj.Status.LastScheduleTime = &metav1.Time{Time: now.Add(-clamp(lastAgo))}
				}
				if useWindow {
					nb, na := now.Add(clamp(notBeforeOff)), now.Add(clamp(notAfterOff))
					if nb.Before(na) {
						cj.Spec.NotBefore, cj.Spec.NotAfter = &metav1.Time{Time: nb}, &metav1.Time{Time: na}
					}
				}
			})
			return cj
		}
		cj := build(ptr.To(deadlineS))
		if d := StartingDeadline(cj); d != nil && *d < 0 {
			t.Fatalf("startingDeadlineSeconds %d gives a negative deadline %v", deadlineS, *d)
		}
		p := Decide(Input{CronJob: cj, Now: now})
		if p.RequeueAfter < 0 {
			t.Fatalf("negative requeue %v", p.RequeueAfter)
		}
		earliest := cj.CreationTimestamp.Time
		if last := cj.Status.LastScheduleTime; last != nil {
			earliest = last.Time // it wins over the creation, as in the built-in
		}
		if cj.Spec.CatchUpPolicy == cronv1.CatchUpNone || earliest.After(now) ||
			deadlineS < int64(now.Sub(earliest)/time.Second)+1 || now.Sub(earliest) == 1<<63-1 {
			return
		}
		open := Decide(Input{CronJob: build(nil), Now: now})
		got, want := names(p.Creates, func(c Create) string { return c.Job.Name }), names(open.Creates, func(c Create) string { return c.Job.Name })
		if len(got) != len(want) || missedOf(p.Status)[cronv1.MissedDeadlineExceeded] != 0 {
			t.Fatalf("deadline %d s covers every run since %v, yet the decision differs from no deadline: creates %v against %v, missed %v",
				deadlineS, earliest, got, want, missedOf(p.Status))
		}
	})
}

// FuzzHeldOnPurpose feeds the planner suspensions and skips anywhere in
// the calendar, on every kind of schedule, and checks what must hold
// whatever they are: no run starts before spec.suspendUntil or at a
// skipped time, no wait comes out negative, and nextScheduleTime is a time
// of the schedule that neither holds.
func FuzzHeldOnPurpose(f *testing.F) {
	f.Add(uint8(0), int64(3600), int64(7200), int64(3600), int64(5), uint8(0))
	f.Add(uint8(2), int64(1<<40), int64(-(1 << 40)), int64(60), int64(0), uint8(3))
	f.Add(uint8(3), int64(90*60), int64(90), int64(1), int64(-5), uint8(1))
	f.Add(uint8(1), int64(-3600), int64(300), int64(86400), int64(3600), uint8(2))
	schedules := []struct{ spec, zone string }{
		{"0 * * * *", "UTC"}, {"*/5 * * * *", "UTC"}, {"@every 1h", "UTC"}, {"@every 25m", "UTC"},
		{"30 2 * * *", "Europe/Berlin"}, {"0 0 L * *", "UTC"}, {"0 9 ? * MON#1", "America/New_York"},
	}
	f.Fuzz(func(t *testing.T, schedIdx uint8, untilOff, skipOff, lastAgo, nowOff int64, policy uint8) {
		const span = int64(400 * 365 * 24 * 3600)
		clamp := func(s int64) time.Duration { return time.Duration(max(min(s, span), -span)) * time.Second }
		now := at(clamp(nowOff))
		s := schedules[int(schedIdx)%len(schedules)]
		cj := cronJob(sched(s.spec), zone(s.zone), func(cj *cronv1.CronJob) {
			cj.CreationTimestamp = metav1.NewTime(now.Add(-clamp(lastAgo) - time.Hour))
			cj.Status.LastScheduleTime = &metav1.Time{Time: now.Add(-clamp(lastAgo))}
			cj.Spec.CatchUpPolicy = []cronv1.CatchUpPolicy{cronv1.CatchUpLatest, cronv1.CatchUpAll, cronv1.CatchUpNone}[int(policy)%3]
			cj.Spec.SuspendUntil = &metav1.Time{Time: now.Add(clamp(untilOff)).Truncate(time.Second)}
		})
		_, sch, err := ResolveSchedule(cj)
		if err != nil {
			t.Fatal(err)
		}
		// A skip on a time of the schedule, near the suspension's end.
		if skip := sch.Next(cj.Spec.SuspendUntil.Add(clamp(skipOff))); !skip.IsZero() {
			cj.Spec.SkipTimes = []metav1.Time{{Time: skip}}
		}
		p := Decide(Input{CronJob: cj, Now: now})
		if p.RequeueAfter < 0 {
			t.Fatalf("negative requeue %v", p.RequeueAfter)
		}
		held := func(at time.Time) bool {
			return at.Before(cj.Spec.SuspendUntil.Time) || len(cj.Spec.SkipTimes) > 0 && at.Equal(cj.Spec.SkipTimes[0].Time)
		}
		for _, c := range p.Creates {
			if !c.Manual && held(c.Time) {
				t.Fatalf("the run of %v starts, held by suspendUntil %v or skipTimes %v", c.Time, cj.Spec.SuspendUntil, cj.Spec.SkipTimes)
			}
		}
		if n := p.Status.NextScheduleTime; n != nil {
			if held(n.Time) {
				t.Fatalf("nextScheduleTime %v is held (suspendUntil %v, skipTimes %v)", n, cj.Spec.SuspendUntil, cj.Spec.SkipTimes)
			}
			if _, every := sch.Every(); !every && !sch.Next(n.Add(-time.Nanosecond)).Equal(n.Time) {
				t.Fatalf("nextScheduleTime %v is no time of %q", n, s.spec)
			}
		}
	})
}
