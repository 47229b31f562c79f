package planner

// spec.maxRuns: after that many scheduled runs have started, no scheduled
// time is a run any more.
//
// The count, status.scheduledRunCount, travels with lastScheduleTime: a
// scheduled run is counted in the status write that moves lastScheduleTime
// to its time or past it, and in no other. Scheduled runs start oldest
// first, so the runs a status counts are exactly those at or before its
// lastScheduleTime. A sync counts a run where it moves lastScheduleTime:
// when its create is reported (Started), or when it finds a Job made for
// a run after the status's lastScheduleTime (a status write lost, deferred
// and dropped, a restart, a failover: countUnrecorded). The run-record
// finalizer keeps every such Job until a stored status records its run,
// that is, until a stored lastScheduleTime reaches its time, and a sync's
// view shows a Job the controller deleted itself (Replace) as the
// finalizer keeps it, being deleted, not as gone; so whatever status a
// sync starts from (a deferred decision made again from the stored status
// after an edit), the Jobs of the runs that status does not count are
// there to be counted, each once: the count is exact, with no bound such
// as the run history's.
//
// Once the count reaches spec.maxRuns the schedule ends at the last run
// started, as the active window ends at notAfter (window.go): later times
// are no runs, not counted missed, status.nextScheduleTime is unset and no
// wake-up is planned; Expired is True with reason MaxRunsReached, and
// Ready False with it. A run-now is not counted and still starts. Raising
// maxRuns ends the cut: the times since the last run are runs again, owed
// under the catch-up policy as after moving notAfter later.

import (
	"fmt"
	"slices"
	"time"

	"k8s.io/utils/ptr"
)

const (
	// ReasonMaxRunsReached (Normal Event, and the Expired and Ready
	// conditions' reason): spec.maxRuns scheduled runs have started.
	ReasonMaxRunsReached = "MaxRunsReached"
	// reasonRunsRemaining is the False Expired condition's reason while
	// spec.maxRuns is set and not reached.
	reasonRunsRemaining = "RunsRemaining"
)

// countUnrecorded counts the scheduled runs of jobs (the Jobs the CronJob
// controls and the records detached from it) that the status does not
// count yet: those after its lastScheduleTime, up to now, as adoptRun
// takes them. Each time is one run, however many Jobs claim it.
func (p *Plan) countUnrecorded(jobs []Job) {
	st := &p.Status
	var times []time.Time
	for _, j := range jobs {
		at, ok := j.ScheduledAt()
		if !ok || j.Manual() || at.After(p.now) || st.LastScheduleTime != nil && !at.After(st.LastScheduleTime.Time) {
			continue
		}
		if !slices.ContainsFunc(times, at.Equal) {
			times = append(times, at)
		}
	}
	st.ScheduledRunCount += int64(len(times))
}

// countStarted counts the scheduled run of c, started now, unless the
// status counts it already (lastScheduleTime at or after it). It must run
// before Started moves lastScheduleTime.
func (p *Plan) countStarted(c Create) {
	st := &p.Status
	if c.Manual || st.LastScheduleTime != nil && !c.Time.After(st.LastScheduleTime.Time) {
		return
	}
	st.ScheduledRunCount++
	if p.cj.Spec.MaxRuns == nil {
		return
	}
	// The Expired condition counts this run in this status write, not the
	// next one; after the last run, no next time is due.
	p.noteExpired()
	if p.maxRunsReached() {
		p.noteNext()
		p.held = slices.DeleteFunc(p.held, func(h heldRun) bool { return h.at.After(c.Time) })
	}
}

// maxRunsReached reports whether spec.maxRuns scheduled runs have started.
func (p *Plan) maxRunsReached() bool {
	m := p.cj.Spec.MaxRuns
	return m != nil && p.Status.ScheduledRunCount >= *m
}

// runsEnd is where spec.maxRuns ends the schedule: the last run started
// (the CronJob's creation if the status names none); nil while runs remain.
func (p *Plan) runsEnd() *time.Time {
	if !p.maxRunsReached() {
		return nil
	}
	if lst := p.Status.LastScheduleTime; lst != nil {
		return ptr.To(lst.Time)
	}
	return ptr.To(p.cj.CreationTimestamp.Time)
}

// remainingRuns keeps the runs (oldest first, none held) while spec.maxRuns
// lets any start. With fewer left than runs, all stay, in order: one
// refused for good (its name taken) started nothing and gives way to the
// next, and Wants stops the rest once the limit is reached, when the held
// runs after the last one started are dropped (countStarted): past it they
// are no runs. Under Forbid the runs are alternatives anyway.
func (p *Plan) remainingRuns(runs []time.Time, forbid bool) []time.Time {
	m := p.cj.Spec.MaxRuns
	if m == nil || forbid || p.Status.ScheduledRunCount < *m {
		return runs
	}
	p.held = nil
	return nil
}

// maxRunsMessage says how far the count is, for the Expired condition.
func (p *Plan) maxRunsMessage() string {
	m, n := *p.cj.Spec.MaxRuns, p.Status.ScheduledRunCount
	if n >= m {
		return fmt.Sprintf("%d scheduled runs have started, spec.maxRuns is %d: no scheduled run starts any more", n, m)
	}
	return fmt.Sprintf("scheduled runs end once spec.maxRuns (%d) have started; %d have", m, n)
}
