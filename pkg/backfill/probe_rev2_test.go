package backfill

import (
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

// A sync plans 03:00, 04:00 and 05:00 (maxConcurrent 3; the Job cache does
// not show the CronJob's own Job of 04:00 yet). 03:00 is created, 04:00's
// name is taken by the CronJob's run (skipped), 05:00 is created; the
// status write is lost. The next sync's adoptUnrecorded records 03:00 and
// 05:00 and moves lastHandledTime past 04:00 without looking at it: no run
// is dropped (04:00 ran as the CronJob's), but status.skipped, which the
// README says counts such a time, stays 0 and the Completed message says
// "3 times: 2 created ..., 0 skipped".
func TestProbeRev2AdoptLosesASkippedTimesCount(t *testing.T) {
	cj := cronJob(hour(-1), ptr.To(hour(10)))
	bf := backfillOf(hour(3), hour(6), 3)
	s4 := scheduledJob(hour(4))
	p := Decide(Input{Backfill: bf, CronJob: cj, Job: lookup(), Now: hour(11)})
	if got := createdTimes(p); len(got) != 3 {
		t.Fatalf("planned %v, want 03:00, 04:00, 05:00", got)
	}
	j3, j5 := backfillJob(hour(3), ""), backfillJob(hour(5), "")
	j3.UID, j5.UID = types.UID("b-03"), types.UID("b-05")
	p.Created(p.Creates[0], j3)
	p.Exists(p.Creates[1], s4)
	p.Created(p.Creates[2], j5)
	if p.Status.Skipped != 1 {
		t.Fatalf("the first sync counts %d skipped", p.Status.Skipped)
	}
	// Its status write is lost: the next sync starts from the old status.
	j3.finished, j5.finished = batchv1.JobComplete, batchv1.JobComplete
	p = Decide(Input{Backfill: bf, CronJob: cj, Job: lookup(j3, s4, j5),
		Own: []OwnJob{{Job: j3, At: hour(3)}, {Job: j5, At: hour(5)}}, Now: hour(11)})
	st := p.Status
	if st.Created+st.Skipped != st.Total {
		t.Errorf("status counts %d created + %d skipped of %d times: the 04:00 skip is lost", st.Created, st.Skipped, st.Total)
	}
}
