package planner

// Adversarial probes for the issue-13 review (git diff 7f334d8 main).

import (
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	cronv1 "github.com/cronjob-controller/cronjob-controller/pkg/apis/batch/v1"
)

// Change 3. A finished Job of ours whose scheduled-at lies in the future
// (a leader whose clock was ahead - reconcileActive's own comment names the
// case - or a Job made by hand) is never "recorded" until that time comes,
// and now holds every newer succeeded Job from deletion. With the time a
// year away, successfulJobsHistoryLimit 1 keeps every Job for a year, and
// every sync asks to be woken again in one second.
func TestProbe13PruneStallsBehindAFutureScheduledJob(t *testing.T) {
	future := &fakeJob{ObjectMeta: metav1.ObjectMeta{Name: "cj-ahead", Namespace: "default", UID: "uid-ahead"},
		scheduled: at(365 * 24 * time.Hour), started: &metav1.Time{Time: at(-5 * time.Hour)},
		complete: &metav1.Time{Time: at(-5*time.Hour + time.Minute)}, finished: batchv1.JobComplete}
	jobs := []Job{future}
	for h := 6; h <= 9; h++ {
		jobs = append(jobs, runOf(at(time.Duration(h-10)*time.Hour), batchv1.JobComplete))
	}
	cj := cronJob(last(at(-time.Hour)), seen("0 * * * *", "UTC"), func(cj *cronv1.CronJob) {
		cj.Spec.SuccessfulJobsHistoryLimit = ptr.To[int32](1)
	})
	p := Decide(Input{CronJob: cj, Jobs: jobs, Now: at(-30 * time.Minute)})
	got := names(p.Deletes, func(d Delete) string { return d.Name })
	want := hours(6, 7, 8) // recorded, older than the newest kept
	for _, w := range want {
		found := false
		for _, g := range got {
			found = found || g == w
		}
		if !found {
			t.Errorf("deletes %q, want at least %q: they are recorded, and a Job whose run lies a year ahead holds them forever (requeue %v)",
				got, want, p.RequeueAfter)
			break
		}
	}
}

// Change 5. The status write of the sync that started 10:00 was lost; it
// had passed over 08:00 and 09:00 under the schedule then in force,
// "0 * * * *". The user changed the schedule to "0 */2 * * *" before the
// next sync. Adopting the 10:00 Job counts the passed-over runs with the new
// schedule and the new previousSchedules entry, so 09:00 (named only by the
// old schedule, due under it) is counted by nobody: noteSchedule looks only
// after the adopted run, countPassedOver only at times both name.
func TestProbe13PassedOverAcrossAnEditSeenAtAdoption(t *testing.T) {
	tenJob := runOf(ten, "")
	cj := cronJob(last(at(-3*time.Hour)), seen("0 * * * *", "UTC"), sched("0 */2 * * *"))
	p := Decide(Input{CronJob: cj, Jobs: []Job{tenJob}, Now: at(10 * time.Minute)})
	var total int64
	for _, n := range missedOf(p.Status) {
		total += n
	}
	if total != 2 {
		t.Errorf("missed %v, want 2 in all (08:00 and 09:00, passed over for 10:00 under \"0 * * * *\")", missedOf(p.Status))
	}
}

// Change 5, passes: adopting a Job moves lastScheduleTime; the runs before
// it that have Jobs (catchUp All, several created in one sync) are not
// counted, and a run-now Job between them moves nothing.
func TestProbe13PassedOverSkipsRunsWithJobsAndManualJobs(t *testing.T) {
	eight, nine, tenJob := runOf(at(-2*time.Hour), batchv1.JobComplete), runOf(at(-time.Hour), ""), runOf(ten, "")
	manual := &fakeJob{ObjectMeta: metav1.ObjectMeta{Name: "cj-manual", Namespace: "default", UID: "uid-manual"},
		manual: true, scheduled: at(-30 * time.Minute), started: &metav1.Time{Time: at(-30 * time.Minute)}}
	cj := cronJob(last(at(-4*time.Hour)), seen("0 * * * *", "UTC"), catchUpAll(3))
	p := Decide(Input{CronJob: cj, Jobs: []Job{eight, nine, tenJob, manual}, Now: at(10 * time.Minute)})
	// Runs after 06:00: 07, 08, 09, 10; the lost sync (limit 3) started
	// 08-10 and passed over 07:00 only.
	if got := missedOf(p.Status); got[cronv1.MissedSuperseded] != 1 || len(got) != 1 {
		t.Errorf("missed %v, want Superseded 1 (07:00)", got)
	}
}

// Change 5, @every: the grid the lost sync walked starts at the settled
// point; a Job adopted at from+2*every passes over exactly one run.
func TestProbe13PassedOverEvery(t *testing.T) {
	from := at(-90 * time.Minute)
	j := runOf(from.Add(time.Hour), "")
	cj := cronJob(last(from), sched("@every 30m"), seen("@every 30m", "UTC"))
	p := Decide(Input{CronJob: cj, Jobs: []Job{j}, Now: from.Add(time.Hour + time.Minute)})
	if got := missedOf(p.Status)[cronv1.MissedSuperseded]; got != 1 {
		t.Errorf("Superseded %d, want 1 (from+30m); missed %v", got, missedOf(p.Status))
	}
}

// Change 5, passes: a Job of ours for a time still to come (a clock that
// was ahead) is not adopted, so it passes over nothing now; when its time
// comes and the runs before it were started, adopting it counts nothing.
func TestProbe13PassedOverIgnoresAFutureJob(t *testing.T) {
	noon := runOf(at(2*time.Hour), "")
	cj := cronJob(last(at(-3*time.Hour)), seen("0 * * * *", "UTC"))
	p := Decide(Input{CronJob: cj, Jobs: []Job{noon}, Now: at(5 * time.Minute)})
	if got := missedOf(p.Status); got[cronv1.MissedSuperseded] != 2 || len(got) != 1 {
		t.Errorf("at 10:05 missed %v, want Superseded 2 (08:00, 09:00)", got)
	}
	if len(p.Creates) != 1 || !p.Creates[0].Time.Equal(ten) {
		t.Errorf("at 10:05 creates %v, want 10:00", names(p.Creates, func(c Create) string { return c.Job.Name }))
	}
	later := cj.DeepCopy()
	later.Status = p.Status
	later.Status.LastScheduleTime = &metav1.Time{Time: at(time.Hour)} // 10:00 and 11:00 started
	q := Decide(Input{CronJob: later, Jobs: []Job{runOf(ten, ""), runOf(at(time.Hour), ""), noon}, Now: at(2*time.Hour + 5*time.Second)})
	if got, want := missedOf(q.Status), missedOf(p.Status); !mapsEqual(got, want) {
		t.Errorf("at 12:00:05 missed %v, want unchanged %v", got, want)
	}
	if len(q.Creates) != 0 {
		t.Errorf("at 12:00:05 creates %v: the 12:00 Job exists", names(q.Creates, func(c Create) string { return c.Job.Name }))
	}
}
