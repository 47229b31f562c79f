package planner

// Adoption: a Job of ours that the status does not record is a run whose
// status write was lost. Adopting it moves lastScheduleTime and counts the
// runs that sync passed over, once; a Job for a time still to come is not
// adopted.

import (
	"maps"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	cronv1 "github.com/cronjob-controller/cronjob-controller/pkg/apis/batch/v1"
)

// A Job of ours that the status does not record is a run whose status write
// was lost (a crash, a failed write). Adopting it moves lastScheduleTime past
// runs that sync had counted as superseded; the count is made again, or it
// would be lost with the write. (Model seed 1795600308.)
func TestAdoptedRunCountsTheRunsItSuperseded(t *testing.T) {
	nine := runOf(at(-time.Hour), "")
	cj := cronJob(last(at(-3 * time.Hour)))
	p := Decide(Input{CronJob: cj, Jobs: []Job{nine}, Now: at(-59 * time.Minute)})
	if len(p.Creates) != 0 {
		t.Errorf("creates %+v", p.Creates)
	}
	if got := p.Status.LastScheduleTime; got == nil || !got.Time.Equal(at(-time.Hour)) {
		t.Errorf("lastScheduleTime %v, want 09:00", got)
	}
	if got, want := missedOf(p.Status), map[string]int64{cronv1.MissedSuperseded: 1}; !maps.Equal(got, want) {
		t.Errorf("missed %v, want %v (08:00, passed over for 09:00)", got, want)
	}
	// Once recorded, nothing more is counted.
	again := cj.DeepCopy()
	again.Status = p.Status
	if q := Decide(Input{CronJob: again, Jobs: []Job{nine}, Now: at(-58 * time.Minute)}); !maps.Equal(missedOf(q.Status), missedOf(p.Status)) {
		t.Errorf("the next sync counts again: %v", missedOf(q.Status))
	}
}

// The status write of the sync that started 10:00 was lost; it had passed
// over 08:00 and 09:00 under the schedule then in force, "0 * * * *". The
// user changed the schedule to "0 */2 * * *" before the next sync. Adopting
// the 10:00 Job must count both passed-over runs, 09:00 too, though only the
// old schedule names it: counted with the new schedule alone, it would be
// counted by nobody (the edit looks only after the adopted run, the
// passed-over count only at times both schedules name).
func TestAdoptionCountsRunsPassedOverBeforeAnEdit(t *testing.T) {
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

// Adopting a Job moves lastScheduleTime; the runs before it that have Jobs (catchUp All, several created in one sync) are not
// counted, and a run-now Job between them moves nothing.
func TestAdoptionCountsNoRunThatHasAJob(t *testing.T) {
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

// With @every, the grid the lost sync walked starts at the settled point; a Job adopted at from+2*every passes over exactly one run.
func TestAdoptionCountsPassedOverEveryRuns(t *testing.T) {
	from := at(-90 * time.Minute)
	j := runOf(from.Add(time.Hour), "")
	cj := cronJob(last(from), sched("@every 30m"), seen("@every 30m", "UTC"))
	p := Decide(Input{CronJob: cj, Jobs: []Job{j}, Now: from.Add(time.Hour + time.Minute)})
	if got := missedOf(p.Status)[cronv1.MissedSuperseded]; got != 1 {
		t.Errorf("Superseded %d, want 1 (from+30m); missed %v", got, missedOf(p.Status))
	}
}

// A Job of ours for a time still to come (a clock that
// was ahead) is not adopted, so it passes over nothing now; when its time
// comes and the runs before it were started, adopting it counts nothing.
func TestAdoptionIgnoresAJobForATimeToCome(t *testing.T) {
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

// A Job the CronJob controls whose scheduled-at lies in the future (written
// while the controller's clock was a day ahead, or by hand) must not move
// lastScheduleTime there: every run until then would be neither started nor
// counted.
func TestFutureScheduledJobSilencesNoRun(t *testing.T) {
	future := runOf(at(24*time.Hour), batchv1.JobComplete)
	cj := cronJob(last(at(-time.Hour)), seen("0 * * * *", "UTC"))
	p := Decide(Input{CronJob: cj, Jobs: []Job{future}, Now: at(5 * time.Second)})
	if len(p.Creates) == 0 && totalMissed(p.Status) == 0 {
		t.Errorf("a Job scheduled-at tomorrow silences today's 10:00 run: no create, no count; lastScheduleTime %v, next %v",
			p.Status.LastScheduleTime, p.Status.NextScheduleTime)
	}
}

// A sync started the 10:00 run and counted 08:00 and 09:00 Superseded; its
// status write was lost, and the CronJob was suspended before the next
// sync. That sync, suspended, starts nothing, but it adopts the 10:00 Job,
// which settles the runs before it: it counts them as the lost write did.
func TestSuspendedSyncCountsTheRunsAnAdoptedJobPassedOver(t *testing.T) {
	cj := cronJob(last(at(-3 * time.Hour)))
	p := Decide(Input{CronJob: cj, Now: at(time.Minute)})
	made := startAll(p)
	if got := missedFor(p.Status, cronv1.MissedSuperseded); len(made) != 1 || got != 2 {
		t.Fatalf("first sync: creates %v, missed %v; want 10:00 started, 08:00 and 09:00 Superseded", createdTimes(p), missedOf(p.Status))
	}
	// Lost; the user suspends.
	suspended := cj.DeepCopy()
	suspended.Spec.Suspend = new(bool)
	*suspended.Spec.Suspend = true
	p2 := Decide(Input{CronJob: suspended, Jobs: asJobs(made), Now: at(5 * time.Minute)})
	resumed := withStatus(cj, p2.Status)
	p3 := Decide(Input{CronJob: resumed, Jobs: asJobs(made), Now: at(30 * time.Minute)})
	if got := totalMissed(p3.Status); got != 2 {
		t.Errorf("after the suspend and resume: missed %v, lastScheduleTime %v; want 08:00 and 09:00 counted (2)", missedOf(p3.Status), p3.Status.LastScheduleTime)
	}
}
