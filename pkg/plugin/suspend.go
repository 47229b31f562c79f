package plugin

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"

	cronv1 "github.com/cronjob-controller/cronjob-controller/pkg/apis/batch/v1"
	"github.com/cronjob-controller/cronjob-controller/pkg/planner"
	"github.com/cronjob-controller/cronjob-controller/pkg/schedule"
)

// Suspend sets spec.suspend to suspend with a merge patch, and says
// whether anything changed. Jobs already started are left alone, as the
// field says. Resuming also ends a pause of spec.failurePolicy (Resume).
func Suspend(ctx context.Context, c Clients, w io.Writer, name string, suspend bool) error {
	if !suspend {
		return Resume(ctx, c, w, name)
	}
	cj, err := c.get(ctx, name)
	if err != nil {
		return err
	}
	if ptr.Deref(cj.Spec.Suspend, false) {
		fmt.Fprintf(w, "%s/%s already suspended: unchanged\n", Resource, name)
		return nil
	}
	if _, err := c.Cron.BatchV1().CronJobs(c.Namespace).Patch(ctx, name, types.MergePatchType, []byte(`{"spec":{"suspend":true}}`), patchOptions); err != nil {
		return err
	}
	fmt.Fprintf(w, "%s/%s suspended\n", Resource, name)
	return nil
}

// Resume clears spec.suspend and spec.suspendUntil and, while
// spec.failurePolicy has paused the CronJob (status.failureStreak.pausedAt
// is set), sets the resume annotation to a fresh value in the same patch: a user who says resume
// wants runs to start, whichever of the two stopped them. The patch then
// carries the resourceVersion read, so that a pause the controller ended
// or began in between is read again rather than acted on as it was.
func Resume(ctx context.Context, c Clients, w io.Writer, name string) error {
	var (
		suspended bool
		until     *metav1.Time
		paused    *cronv1.FailureStreak
		policy    bool
		value     string
	)
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cj, err := c.get(ctx, name)
		if err != nil {
			return err
		}
		suspended, until, paused, policy, value = ptr.Deref(cj.Spec.Suspend, false), cj.Spec.SuspendUntil.DeepCopy(), nil, cj.Spec.FailurePolicy != nil, ""
		if s := cj.Status.FailureStreak; s != nil && s.PausedAt != nil {
			paused = s.DeepCopy()
		}
		if !suspended && until == nil && paused == nil {
			return nil
		}
		body := map[string]any{}
		spec := map[string]any{}
		if suspended {
			spec["suspend"] = false
		}
		if until != nil {
			// null removes the field in a merge patch.
			spec["suspendUntil"] = nil
		}
		if len(spec) > 0 {
			body["spec"] = spec
		}
		if paused != nil {
			value = freshValue(c.Clock.Now(), cj.Annotations[cronv1.ResumeAnnotation], paused.LastResume)
			body["metadata"] = map[string]any{
				"resourceVersion": cj.ResourceVersion,
				"annotations":     map[string]string{cronv1.ResumeAnnotation: value},
			}
		}
		patch, err := json.Marshal(body)
		if err != nil {
			return err
		}
		_, err = c.Cron.BatchV1().CronJobs(c.Namespace).Patch(ctx, name, types.MergePatchType, patch, patchOptions)
		return err
	})
	if err != nil {
		return err
	}
	// Only what is not plain from "resumed" is named: spec.suspend when a
	// pause ended too, spec.suspendUntil always.
	var cleared []string
	if suspended && (paused != nil || until != nil) {
		cleared = append(cleared, "spec.suspend cleared")
	}
	if until != nil {
		what := "spec.suspendUntil " + until.UTC().Format(utcLayout) + " cleared"
		if !c.Clock.Now().Before(until.Time) {
			what += ", it had passed"
		}
		cleared = append(cleared, what)
	}
	what := "resumed"
	if len(cleared) > 0 {
		what += " (" + strings.Join(cleared, "; ") + ")"
	}
	switch {
	case paused != nil:
		fmt.Fprintf(w, "%s/%s %s: its pause after %d failed runs in a row ends (annotated %s=%s); the controller records it in status.failureStreak.lastResume\n",
			Resource, name, what, paused.Count, cronv1.ResumeAnnotation, value)
	case suspended || until != nil:
		fmt.Fprintf(w, "%s/%s %s\n", Resource, name, what)
	case policy:
		fmt.Fprintf(w, "%s/%s neither suspended nor paused: unchanged\n", Resource, name)
	default:
		fmt.Fprintf(w, "%s/%s not suspended: unchanged\n", Resource, name)
	}
	return nil
}

// MaxAhead bounds how far ahead suspend --for, suspend --until and skip
// --at reach: a year and a day of a leap year. A longer stop is
// spec.suspend's job, which no one forgets, since next and list show it.
const MaxAhead = 366 * 24 * time.Hour

// SuspendUntil sets spec.suspendUntil with a merge patch, leaving
// spec.suspend alone: no scheduled run due before it starts, and then the
// CronJob schedules by itself. The time is now plus forDuration (rounded up
// to the second, as the field is stored, so every run due within it is
// held), or else until (parseTime, in the CronJob's zone). It must be
// ahead, and at most MaxAhead away. It prints the time set and the first
// run after it, as next computes it.
func SuspendUntil(ctx context.Context, c Clients, w io.Writer, name string, forDuration time.Duration, until string) error {
	cj, err := c.get(ctx, name)
	if err != nil {
		return err
	}
	now := c.Clock.Now()
	var at time.Time
	if until == "" {
		if err := checkFor(forDuration); err != nil {
			return err
		}
		at = now.Add(forDuration)
		if r := at.Truncate(time.Second); !r.Equal(at) {
			at = r.Add(time.Second)
		}
	} else {
		if at, err = parseTimeOf(cj, until); err != nil {
			return fmt.Errorf("--until: %w", err)
		}
		if err := checkAhead("--until", at, now); err != nil {
			return err
		}
	}
	patch, err := json.Marshal(map[string]any{"spec": map[string]any{"suspendUntil": at.UTC().Format(utcLayout)}})
	if err != nil {
		return err
	}
	updated, err := c.Cron.BatchV1().CronJobs(c.Namespace).Patch(ctx, name, types.MergePatchType, patch, patchOptions)
	if err != nil {
		return err
	}
	loc := time.Local
	if l, err := zoneOf(updated); err == nil {
		loc = l
	}
	fmt.Fprintf(w, "%s/%s suspended until %s by spec.suspendUntil: runs due before it do not start (status.missedRuns counts them under %s), and then it schedules by itself",
		Resource, name, showTime(at, loc), cronv1.MissedSuspendedUntil)
	if was := cj.Spec.SuspendUntil; was != nil && !was.Time.Equal(at) {
		fmt.Fprintf(w, "; it was %s", was.UTC().Format(utcLayout))
	}
	fmt.Fprintln(w)
	printNextRun(w, updated, now)
	return nil
}

// checkFor refuses a suspend --for that is not ahead or reaches past
// MaxAhead.
func checkFor(d time.Duration) error {
	if d <= 0 || d > MaxAhead {
		return badUsage("--for must be more than 0 and at most %s (366 days), not %s", shortDuration(MaxAhead), d)
	}
	return nil
}

// checkAhead refuses a time a user typed that is not after now, or is more
// than MaxAhead after it.
func checkAhead(flag string, at, now time.Time) error {
	switch {
	case !at.After(now):
		return fmt.Errorf("%s %s has passed: it is now %s", flag, at.UTC().Format(utcLayout), now.UTC().Format(utcLayout))
	case at.Sub(now) > MaxAhead:
		return fmt.Errorf("%s %s is more than 366 days ahead; for longer, kubectl cronjob suspend NAME sets spec.suspend", flag, at.UTC().Format(utcLayout))
	}
	return nil
}

// shortDuration prints d as time.Duration does, without the zero minutes
// and seconds of a whole number of hours.
func shortDuration(d time.Duration) string {
	s := d.String()
	s = strings.TrimSuffix(s, "0s")
	return strings.TrimSuffix(s, "0m")
}

// localLayouts are the forms of a time without an offset that --until and
// --at take besides RFC 3339, read in the CronJob's zone.
var localLayouts = []string{"2006-01-02T15:04:05", "2006-01-02T15:04", "2006-01-02 15:04:05", "2006-01-02 15:04", "2006-01-02"}

// parseTime reads a time a user typed: RFC 3339 with its offset
// (2026-11-24T02:00:00Z, 2026-11-24T07:30:00+05:30), or a wall time in loc
// (2026-11-24T02:00, 2026-11-24 02:00:00, 2026-11-24 for midnight). A wall
// time a daylight saving change skips or repeats is read as Go's time
// package reads it; an offset says which is meant.
func parseTime(text string, loc *time.Location) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339, text); err == nil {
		return t, nil
	}
	for _, layout := range localLayouts {
		if t, err := time.ParseInLocation(layout, text, loc); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("%q is neither an RFC 3339 time (2026-11-24T02:00:00Z) nor a time in the CronJob's zone (2026-11-24 02:00)", text)
}

// parseTimeOf is parseTime in the CronJob's zone, which only a wall time
// needs: RFC 3339 is read even while spec.timeZone names no zone.
func parseTimeOf(cj *cronv1.CronJob, text string) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339, text); err == nil {
		return t, nil
	}
	loc, err := zoneOf(cj)
	if err != nil {
		return time.Time{}, fmt.Errorf("%q has no offset, and %w", text, err)
	}
	return parseTime(text, loc)
}

// zoneOf is the zone the CronJob's wall times are read in: spec.timeZone,
// or this machine's when unset, as next shows them.
func zoneOf(cj *cronv1.CronJob) (*time.Location, error) {
	if cj.Spec.TimeZone == nil {
		return time.Local, nil
	}
	return schedule.LoadLocation(*cj.Spec.TimeZone)
}

// showTime is t in loc for people and in UTC as the API stores it.
func showTime(t time.Time, loc *time.Location) string {
	return t.In(loc).Format(zoneLayout) + " (" + t.UTC().Format(utcLayout) + ")"
}

// printNextRun prints the first run after now that neither
// spec.suspendUntil nor spec.skipTimes holds, as next computes it, and
// what else holds it.
func printNextRun(w io.Writer, cj *cronv1.CronJob, now time.Time) {
	sched, _, times, err := NextTimes(cj, now, 1)
	if err != nil {
		fmt.Fprintf(w, "next run: unknown: %v\n", err)
		return
	}
	var next time.Time
	if len(times) > 0 {
		next = planner.UnheldFrom(&cj.Spec, sched, times[0])
	}
	switch {
	case next.IsZero():
		fmt.Fprintln(w, "next run: none, the schedule names no time after it")
	case ptr.Deref(cj.Spec.Suspend, false):
		fmt.Fprintf(w, "next run: none while spec.suspend is set (kubectl cronjob resume %s clears both); else %s\n", cj.Name, showTime(next, sched.Location()))
	case pauseOf(cj) != nil:
		fmt.Fprintf(w, "next run: paused after failed runs (kubectl cronjob next %s shows the trial); else %s\n", cj.Name, showTime(next, sched.Location()))
	default:
		fmt.Fprintf(w, "next run: %s\n", showTime(next, sched.Location()))
	}
}
