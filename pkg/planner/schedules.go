package planner

import (
	"strings"

	cronv1 "github.com/cronjob-controller/cronjob-controller/pkg/apis/batch/v1"
	"github.com/cronjob-controller/cronjob-controller/pkg/schedule"
)

// ResolveSchedule is the schedule cj runs on, as status.resolvedSchedule
// records it, and parsed: spec.schedules when set (the union of the
// entries' times), else spec.schedule; every H resolved with the seed
// namespace/name, read in spec.timeZone. It does not bound the schedule to
// the active window (see Window). Everything that reads a CronJob's
// schedule reads it through here: the planner and the kubectl plugin.
func ResolveSchedule(cj *cronv1.CronJob) (string, *schedule.Schedule, error) {
	seed := cj.Namespace + "/" + cj.Name
	if len(cj.Spec.Schedules) == 0 {
		resolved, err := schedule.Resolve(cj.Spec.Schedule, seed)
		if err != nil {
			return "", nil, err
		}
		sched, err := schedule.Parse(resolved, cj.Spec.TimeZone)
		return resolved, sched, err
	}
	if cj.Spec.Schedule != "" {
		return "", nil, &schedule.Error{Reason: schedule.ReasonInvalidSchedule,
			Message: "spec.schedule and spec.schedules are both set; set exactly one"}
	}
	entries := make([]string, len(cj.Spec.Schedules))
	for i, e := range cj.Spec.Schedules {
		entries[i] = string(e)
	}
	resolved, err := schedule.ResolveList(entries, seed)
	if err != nil {
		return "", nil, err
	}
	sched, err := schedule.ParseList(resolved, cj.Spec.TimeZone)
	if err != nil {
		return "", nil, err
	}
	return schedule.JoinList(resolved), sched, nil
}

// ScheduleText is the schedule as the user wrote it, for messages:
// spec.schedule, or the entries of spec.schedules joined as
// status.resolvedSchedule joins them.
func ScheduleText(cj *cronv1.CronJob) string {
	if len(cj.Spec.Schedules) == 0 {
		return cj.Spec.Schedule
	}
	entries := make([]string, len(cj.Spec.Schedules))
	for i, e := range cj.Spec.Schedules {
		entries[i] = string(e)
	}
	return strings.Join(entries, schedule.ListSeparator)
}
