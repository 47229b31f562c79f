package plugin

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"

	cronv1 "github.com/cronjob-controller/cronjob-controller/pkg/apis/batch/v1"
	"github.com/cronjob-controller/cronjob-controller/pkg/planner"
	"github.com/cronjob-controller/cronjob-controller/pkg/schedule"
)

// MaxSkipTimes is how many times spec.skipTimes holds, as the CRD bounds
// it; it bounds skip --next too.
const MaxSkipTimes = 20

// SkipRequest is what skip adds to spec.skipTimes: the next Next runs, or
// the run at At (a time parseTime reads), or, with Clear, nothing, every
// skip being removed.
type SkipRequest struct {
	Next  int
	At    string
	Clear bool
}

// Skip adds to spec.skipTimes the runs the request names, as next lists
// them (NextTimes: H resolved, in the CronJob's zone, the union of its
// schedules, within its window). --next N takes the next N runs that
// neither spec.suspendUntil nor spec.skipTimes holds already: the runs
// that would start. --at takes one time, which must be one of those next
// lists. Entries the controller has passed (at or before the time its
// status says runs are settled until) are dropped; an entry past but not
// passed yet still holds its run, so it is kept. The list is written in
// order, each instant once, at most MaxSkipTimes, with a merge patch that
// carries the resourceVersion read: two skips at once conflict, and the
// one retried reads the other's entries and keeps them.
func Skip(ctx context.Context, c Clients, w io.Writer, name string, req SkipRequest) error {
	if req.Clear {
		return clearSkips(ctx, c, w, name)
	}
	if req.At == "" && (req.Next < 1 || req.Next > MaxSkipTimes) {
		return badUsage("--next must be between 1 and %d, not %d", MaxSkipTimes, req.Next)
	}
	var (
		added, dropped []time.Time
		unchanged      string
		updated        *cronv1.CronJob
	)
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		added, dropped, unchanged, updated = nil, nil, "", nil
		cj, err := c.get(ctx, name)
		if err != nil {
			return err
		}
		now := c.Clock.Now()
		sched, _, times, err := NextTimes(cj, now, 1)
		if err != nil {
			return fmt.Errorf("%s/%s: %w", Resource, name, err)
		}
		if len(times) == 0 {
			return fmt.Errorf("%s/%s has no scheduled run to come to skip", Resource, name)
		}
		first := times[0]
		spec := cj.Spec.DeepCopy()
		spec.SkipTimes = nil
		settled := settledUntil(cj)
		for _, s := range cj.Spec.SkipTimes {
			if s.Time.After(settled) {
				spec.SkipTimes = append(spec.SkipTimes, s)
			} else {
				dropped = append(dropped, s.Time)
			}
		}
		if req.At != "" {
			at, why, err := skipAt(cj, spec, sched, first, now, req.At)
			if err != nil {
				return err
			}
			if why != "" {
				unchanged = why
				return nil
			}
			added = []time.Time{at}
			spec.SkipTimes = append(spec.SkipTimes, metav1.NewTime(at))
		} else {
			for t := first; len(added) < req.Next; t = sched.Next(t) {
				if t = planner.UnheldFrom(spec, sched, t); t.IsZero() {
					break
				}
				added = append(added, t)
				spec.SkipTimes = append(spec.SkipTimes, metav1.NewTime(t))
			}
			if len(added) == 0 {
				return fmt.Errorf("%s/%s has no run to come that is not held already", Resource, name)
			}
		}
		skips := sortedSkips(spec.SkipTimes)
		if len(skips) > MaxSkipTimes {
			return fmt.Errorf("spec.skipTimes would hold %d times, more than %d: kubectl cronjob next %s shows them, kubectl cronjob skip %s --clear removes them",
				len(skips), MaxSkipTimes, name, name)
		}
		patch, err := json.Marshal(map[string]any{
			"metadata": map[string]any{"resourceVersion": cj.ResourceVersion},
			"spec":     map[string]any{"skipTimes": skips},
		})
		if err != nil {
			return err
		}
		updated, err = c.Cron.BatchV1().CronJobs(c.Namespace).Patch(ctx, name, types.MergePatchType, patch, patchOptions)
		return err
	})
	if err != nil {
		return err
	}
	if unchanged != "" {
		fmt.Fprintf(w, "%s/%s %s: unchanged\n", Resource, name, unchanged)
		return nil
	}
	loc := time.Local
	if l, err := zoneOf(updated); err == nil {
		loc = l
	}
	for _, t := range added {
		fmt.Fprintf(w, "%s/%s skips the run of %s\n", Resource, name, showTime(t, loc))
	}
	if req.At == "" && len(added) < req.Next {
		fmt.Fprintf(w, "only %d runs are left to skip\n", len(added))
	}
	if len(dropped) > 0 {
		fmt.Fprintf(w, "%s dropped from spec.skipTimes: the controller has passed %s\n", joinTimes(dropped), pluralIt(len(dropped)))
	}
	fmt.Fprintf(w, "spec.skipTimes holds %d of %d; ", len(updated.Spec.SkipTimes), MaxSkipTimes)
	printNextRun(w, updated, c.Clock.Now())
	return nil
}

// skipAt reads skip --at: the time, or why it is already held (nothing to
// add), or an error naming what is wrong with it.
func skipAt(cj *cronv1.CronJob, spec *cronv1.CronJobSpec, sched *schedule.Schedule, first, now time.Time, text string) (time.Time, string, error) {
	at, err := parseTimeOf(cj, text)
	if err != nil {
		return time.Time{}, "", fmt.Errorf("--at: %w", err)
	}
	if err := checkAhead("--at", at, now); err != nil {
		return time.Time{}, "", err
	}
	if !scheduled(sched, first, at) {
		before, after := around(sched, first, at)
		var near []string
		for _, t := range []time.Time{before, after} {
			if !t.IsZero() {
				near = append(near, showTime(t, sched.Location()))
			}
		}
		msg := fmt.Sprintf("--at %s is not one of the schedule's times", at.UTC().Format(utcLayout))
		switch len(near) {
		case 2:
			msg += "; the nearest are " + near[0] + " and " + near[1]
		case 1:
			msg += "; the nearest is " + near[0]
		}
		return time.Time{}, "", fmt.Errorf("%s (kubectl cronjob next %s lists them)", msg, cj.Name)
	}
	switch planner.SpecHold(spec, at) {
	case cronv1.MissedSkipped:
		return at, "already skips the run of " + at.UTC().Format(utcLayout), nil
	case cronv1.MissedSuspendedUntil:
		return at, fmt.Sprintf("holds the run of %s already: it is before spec.suspendUntil %s", at.UTC().Format(utcLayout), spec.SuspendUntil.UTC().Format(utcLayout)), nil
	}
	return at, "", nil
}

// scheduled reports whether at is one of the times next lists from first
// on: one the schedule names (within its window), or on an @every
// schedule a point of its grid from first.
func scheduled(sched *schedule.Schedule, first, at time.Time) bool {
	if at.Before(first) {
		return false
	}
	if every, ok := sched.Every(); ok {
		return schedule.OnGrid(first, at, every) && sched.InWindow(at)
	}
	return sched.Names(at)
}

// around is the scheduled times from first on nearest to at, which is not
// one of them: the last before it (zero when at is before first) and the
// first after it (zero past the schedule's end).
func around(sched *schedule.Schedule, first, at time.Time) (before, after time.Time) {
	if at.Before(first) {
		return time.Time{}, first
	}
	if every, ok := sched.Every(); ok {
		// at is at most MaxAhead away: the steps fit a duration.
		before = first.Add(at.Sub(first) / every * every)
		if after = before.Add(every); !sched.InWindow(after) {
			after = time.Time{}
		}
		return before, after
	}
	return sched.Before(at, first.Add(-time.Nanosecond)), sched.Next(at)
}

// clearSkips removes spec.skipTimes.
func clearSkips(ctx context.Context, c Clients, w io.Writer, name string) error {
	cj, err := c.get(ctx, name)
	if err != nil {
		return err
	}
	if len(cj.Spec.SkipTimes) == 0 {
		fmt.Fprintf(w, "%s/%s skips no run: unchanged\n", Resource, name)
		return nil
	}
	if _, err := c.Cron.BatchV1().CronJobs(c.Namespace).Patch(ctx, name, types.MergePatchType, []byte(`{"spec":{"skipTimes":null}}`), patchOptions); err != nil {
		return err
	}
	fmt.Fprintf(w, "%s/%s skips no run any more: spec.skipTimes (%s) removed\n", Resource, name, joinTimes(timesIn(cj.Spec.SkipTimes)))
	return nil
}

// sortedSkips is skips in order, each instant once, in UTC as the API
// stores them.
func sortedSkips(skips []metav1.Time) []metav1.Time {
	out := make([]metav1.Time, 0, len(skips))
	for _, s := range skips {
		out = append(out, metav1.NewTime(s.UTC()))
	}
	slices.SortFunc(out, func(a, b metav1.Time) int { return a.Time.Compare(b.Time) })
	return slices.CompactFunc(out, func(a, b metav1.Time) bool { return a.Time.Equal(b.Time) })
}

func timesIn(ms []metav1.Time) []time.Time {
	out := make([]time.Time, len(ms))
	for i, m := range ms {
		out[i] = m.Time
	}
	return out
}

// joinTimes is times in UTC, RFC 3339, apart by commas.
func joinTimes(ts []time.Time) string {
	s := make([]string, len(ts))
	for i, t := range ts {
		s[i] = t.UTC().Format(utcLayout)
	}
	return strings.Join(s, ", ")
}

func pluralIt(n int) string {
	if n == 1 {
		return "it"
	}
	return "them"
}
