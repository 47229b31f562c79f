package plugin

import (
	"bytes"
	"context"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	cronv1 "github.com/cronjob-controller/cronjob-controller/pkg/apis/batch/v1"
	clientset "github.com/cronjob-controller/cronjob-controller/pkg/generated/clientset/versioned"
	typedv1 "github.com/cronjob-controller/cronjob-controller/pkg/generated/clientset/versioned/typed/batch/v1"
)

func inZone(zone string) func(*cronv1.CronJob) {
	return func(cj *cronv1.CronJob) { cj.Spec.TimeZone = ptr.To(zone) }
}

func skipping(times ...time.Time) func(*cronv1.CronJob) {
	return func(cj *cronv1.CronJob) {
		for _, t := range times {
			cj.Spec.SkipTimes = append(cj.Spec.SkipTimes, metav1.NewTime(t))
		}
	}
}

func suspendedUntil(t time.Time) func(*cronv1.CronJob) {
	return func(cj *cronv1.CronJob) { cj.Spec.SuspendUntil = &metav1.Time{Time: t} }
}

// utcAt is t0's day at h:m UTC.
func utcAt(h, m int) time.Time { return time.Date(2026, 11, 23, h, m, 0, 0, time.UTC) }

func skipTimesOf(cj *cronv1.CronJob) []time.Time {
	var out []time.Time
	for _, s := range cj.Spec.SkipTimes {
		out = append(out, s.UTC())
	}
	return out
}

func sameTimes(a, b []time.Time) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !a[i].Equal(b[i]) {
			return false
		}
	}
	return true
}

// skip --next 1 adds the first time next lists (H resolved, in the
// CronJob's zone), and the controller then holds that run, counting it
// Skipped, and schedules the one after.
func TestSkipNextAddsTheNextScheduledTime(t *testing.T) {
	cj := newCronJob("report", "H 6 * * *", inZone("Asia/Kolkata"))
	f := newFakes([]*cronv1.CronJob{cj})
	_, _, times, err := NextTimes(cj, t0, 2)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := Skip(context.Background(), f.clients(), &out, "report", SkipRequest{Next: 1}); err != nil {
		t.Fatal(err)
	}
	got := f.cronJob(t, "report")
	if !sameTimes(skipTimesOf(got), times[:1]) {
		t.Fatalf("spec.skipTimes %v, want %v", skipTimesOf(got), times[:1])
	}
	// 06:49 IST, as next prints it for team-a/report.
	want := Resource + "/report skips the run of Tue 2026-11-24 06:49:00 IST (2026-11-24T01:19:00Z)\n" +
		"spec.skipTimes holds 1 of 20; next run: Wed 2026-11-25 06:49:00 IST (2026-11-25T01:19:00Z)\n"
	if out.String() != want {
		t.Errorf("printed\n%s\nwant\n%s", out.String(), want)
	}
	if next := decide(got, t0).Status.NextScheduleTime; next == nil || !next.Time.Equal(times[1]) {
		t.Errorf("the controller's next run is %v, want %v", next, times[1])
	}
	at := decide(got, times[0].Add(time.Second))
	if len(at.Creates) != 0 || !hasMissed(at.Status.MissedRuns, cronv1.MissedSkipped, times[0]) {
		t.Errorf("at the skipped time the controller creates %d Jobs, missed runs %+v; want none, and the run counted Skipped", len(at.Creates), at.Status.MissedRuns)
	}
}

func hasMissed(missed []cronv1.MissedRuns, reason string, at time.Time) bool {
	for _, m := range missed {
		if m.Reason == reason && m.Count > 0 && m.LastTime.Time.Equal(at) {
			return true
		}
	}
	return false
}

// skip --next N takes the runs that would start: it passes the times
// spec.suspendUntil and spec.skipTimes already hold.
func TestSkipNextPassesTimesAlreadyHeld(t *testing.T) {
	cj := newCronJob("hourly", "0 * * * *", inZone("UTC"), suspendedUntil(utcAt(15, 30)), skipping(utcAt(16, 0)))
	f := newFakes([]*cronv1.CronJob{cj})
	var out bytes.Buffer
	if err := Skip(context.Background(), f.clients(), &out, "hourly", SkipRequest{Next: 2}); err != nil {
		t.Fatal(err)
	}
	got := f.cronJob(t, "hourly")
	if want := []time.Time{utcAt(16, 0), utcAt(17, 0), utcAt(18, 0)}; !sameTimes(skipTimesOf(got), want) {
		t.Errorf("spec.skipTimes %v, want %v", skipTimesOf(got), want)
	}
	if !strings.HasSuffix(out.String(), "spec.skipTimes holds 3 of 20; next run: Mon 2026-11-23 19:00:00 UTC (2026-11-23T19:00:00Z)\n") {
		t.Errorf("printed\n%s", out.String())
	}
	if next := decide(got, t0).Status.NextScheduleTime; next == nil || !next.Time.Equal(utcAt(19, 0)) {
		t.Errorf("the controller's next run is %v, want 19:00", next)
	}
}

// An @every schedule's times are a grid from its last run: skip takes the
// grid's next point, and --at only a point of it.
func TestSkipOnAnEveryScheduleFollowsItsGrid(t *testing.T) {
	last := t0.Add(-50*time.Minute - 7*time.Second) // 12:14:23
	cj := newCronJob("poll", "@every 90m", func(cj *cronv1.CronJob) { cj.Status.LastScheduleTime = &metav1.Time{Time: last} })
	f := newFakes([]*cronv1.CronJob{cj})
	if err := Skip(context.Background(), f.clients(), io.Discard, "poll", SkipRequest{At: last.Add(3 * time.Hour).Format(time.RFC3339)}); err != nil {
		t.Fatal(err)
	}
	err := Skip(context.Background(), f.clients(), io.Discard, "poll", SkipRequest{At: last.Add(3*time.Hour + time.Minute).Format(time.RFC3339)})
	if err == nil || !strings.Contains(err.Error(), "is not one of the schedule's times; the nearest are") ||
		!strings.Contains(err.Error(), "(2026-11-23T15:14:23Z) and") || !strings.Contains(err.Error(), "(2026-11-23T16:44:23Z)") {
		t.Errorf("--at off the grid: %v", err)
	}
	if err := Skip(context.Background(), f.clients(), io.Discard, "poll", SkipRequest{Next: 1}); err != nil {
		t.Fatal(err)
	}
	got := f.cronJob(t, "poll")
	if want := []time.Time{last.Add(90 * time.Minute), last.Add(3 * time.Hour)}; !sameTimes(skipTimesOf(got), want) {
		t.Errorf("spec.skipTimes %v, want %v", skipTimesOf(got), want)
	}
	if next := decide(got, t0).Status.NextScheduleTime; next == nil || !next.Time.Equal(last.Add(270*time.Minute)) {
		t.Errorf("the controller's next run is %v, want %v", next, last.Add(270*time.Minute))
	}
}

func TestSkipAtRefusesATimeTheScheduleNeverNames(t *testing.T) {
	cj := newCronJob("nightly", "0 2 * * *", inZone("UTC"))
	for _, tc := range []struct{ at, want string }{
		{"2026-11-24T03:00:00Z", "--at 2026-11-24T03:00:00Z is not one of the schedule's times; the nearest are " +
			"Tue 2026-11-24 02:00:00 UTC (2026-11-24T02:00:00Z) and Wed 2026-11-25 02:00:00 UTC (2026-11-25T02:00:00Z) (kubectl cronjob next nightly lists them)"},
		{"2026-11-23T14:00:00Z", "--at 2026-11-23T14:00:00Z is not one of the schedule's times; the nearest is " +
			"Tue 2026-11-24 02:00:00 UTC (2026-11-24T02:00:00Z) (kubectl cronjob next nightly lists them)"},
		{"2026-11-23T02:00:00Z", "--at 2026-11-23T02:00:00Z has passed: it is now 2026-11-23T13:04:30Z"},
		{"2027-11-25T02:00:00Z", "--at 2027-11-25T02:00:00Z is more than 366 days ahead"},
		{"tomorrow", `--at: "tomorrow" is neither an RFC 3339 time`},
	} {
		f := newFakes([]*cronv1.CronJob{cj})
		err := Skip(context.Background(), f.clients(), io.Discard, "nightly", SkipRequest{At: tc.at})
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("--at %s: error %v, want one line starting %q", tc.at, err, tc.want)
		}
		if n := f.patches(); n != 0 {
			t.Errorf("--at %s: %d patches", tc.at, n)
		}
	}
}

// --at reads a wall time in the CronJob's zone, or RFC 3339 with any
// offset; a time held already is left as it is.
func TestSkipAtTakesAWallTimeInTheCronJobsZone(t *testing.T) {
	cj := newCronJob("morning", "0 9 * * *", inZone("Europe/Berlin"), suspendedUntil(time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)))
	f := newFakes([]*cronv1.CronJob{cj})
	var out bytes.Buffer
	if err := Skip(context.Background(), f.clients(), &out, "morning", SkipRequest{At: "2026-11-25 09:00"}); err != nil {
		t.Fatal(err)
	}
	want := []time.Time{time.Date(2026, 11, 25, 8, 0, 0, 0, time.UTC)}
	if got := skipTimesOf(f.cronJob(t, "morning")); !sameTimes(got, want) {
		t.Fatalf("spec.skipTimes %v, want %v", got, want)
	}
	if !strings.HasPrefix(out.String(), Resource+"/morning skips the run of Wed 2026-11-25 09:00:00 CET (2026-11-25T08:00:00Z)\n") {
		t.Errorf("printed\n%s", out.String())
	}
	for _, tc := range []struct{ at, want string }{
		{"2026-11-25T08:00:00Z", "already skips the run of 2026-11-25T08:00:00Z: unchanged"},
		{"2026-11-24T03:00:00-05:00", "holds the run of 2026-11-24T08:00:00Z already: it is before spec.suspendUntil 2026-11-24T12:00:00Z: unchanged"},
	} {
		out.Reset()
		if err := Skip(context.Background(), f.clients(), &out, "morning", SkipRequest{At: tc.at}); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(out.String(), tc.want) {
			t.Errorf("--at %s printed %q, want %q", tc.at, out.String(), tc.want)
		}
	}
	if n := f.patches(); n != 1 {
		t.Errorf("%d patches, want 1", n)
	}
}

// Entries the controller has passed are dropped; one past but not passed
// yet (the controller has not reached that run) still holds it, and stays.
func TestSkipDropsPassedEntriesAndKeepsDueOnes(t *testing.T) {
	cj := newCronJob("five", "*/5 * * * *", inZone("UTC"), skipping(utcAt(13, 10), utcAt(12, 50), utcAt(13, 0)), func(cj *cronv1.CronJob) {
		cj.Status.LastScheduleTime = &metav1.Time{Time: utcAt(12, 55)}
	})
	f := newFakes([]*cronv1.CronJob{cj})
	var out bytes.Buffer
	if err := Skip(context.Background(), f.clients(), &out, "five", SkipRequest{Next: 1}); err != nil {
		t.Fatal(err)
	}
	if got, want := skipTimesOf(f.cronJob(t, "five")), []time.Time{utcAt(13, 0), utcAt(13, 5), utcAt(13, 10)}; !sameTimes(got, want) {
		t.Errorf("spec.skipTimes %v, want %v", got, want)
	}
	if !strings.Contains(out.String(), "\n2026-11-23T12:50:00Z dropped from spec.skipTimes: the controller has passed it\n") {
		t.Errorf("printed\n%s", out.String())
	}
}

func TestSkipRefusesPastTwentyEntries(t *testing.T) {
	var full []time.Time
	for h := range 20 {
		full = append(full, utcAt(14, 0).Add(time.Duration(h)*time.Hour))
	}
	f := newFakes([]*cronv1.CronJob{newCronJob("hourly", "0 * * * *", inZone("UTC"), skipping(full...))})
	err := Skip(context.Background(), f.clients(), io.Discard, "hourly", SkipRequest{Next: 1})
	want := "spec.skipTimes would hold 21 times, more than 20: kubectl cronjob next hourly shows them, kubectl cronjob skip hourly --clear removes them"
	if err == nil || err.Error() != want {
		t.Errorf("error %v, want %q", err, want)
	}
	if n := f.patches(); n != 0 {
		t.Errorf("%d patches", n)
	}
}

func TestSkipClearRemovesEverySkip(t *testing.T) {
	f := newFakes([]*cronv1.CronJob{newCronJob("hourly", "0 * * * *", skipping(utcAt(14, 0), utcAt(15, 0)))})
	var out bytes.Buffer
	for range 2 {
		if err := Skip(context.Background(), f.clients(), &out, "hourly", SkipRequest{Clear: true}); err != nil {
			t.Fatal(err)
		}
	}
	if got := f.cronJob(t, "hourly").Spec.SkipTimes; len(got) != 0 {
		t.Errorf("spec.skipTimes %v after --clear", got)
	}
	want := Resource + "/hourly skips no run any more: spec.skipTimes (2026-11-23T14:00:00Z, 2026-11-23T15:00:00Z) removed\n" +
		Resource + "/hourly skips no run: unchanged\n"
	if out.String() != want || f.patches() != 1 {
		t.Errorf("%d patches, printed\n%s\nwant\n%s", f.patches(), out.String(), want)
	}
}

// gate holds the first n reads until all n have been made, so that n
// commands write on the same resourceVersion.
type gate struct {
	mu  sync.Mutex
	n   int
	all chan struct{}
}

func (g *gate) wait() {
	g.mu.Lock()
	if g.n == 0 {
		g.mu.Unlock()
		return
	}
	g.n--
	if g.n == 0 {
		close(g.all)
	}
	g.mu.Unlock()
	<-g.all
}

// gatedClientset is a clientset whose CronJob reads pass the gate.
type gatedClientset struct {
	clientset.Interface
	g *gate
}

func (c gatedClientset) BatchV1() typedv1.BatchV1Interface {
	return gatedBatch{c.Interface.BatchV1(), c.g}
}

type gatedBatch struct {
	typedv1.BatchV1Interface
	g *gate
}

func (b gatedBatch) CronJobs(namespace string) typedv1.CronJobInterface {
	return gatedCronJobs{b.BatchV1Interface.CronJobs(namespace), b.g}
}

type gatedCronJobs struct {
	typedv1.CronJobInterface
	g *gate
}

func (c gatedCronJobs) Get(ctx context.Context, name string, opts metav1.GetOptions) (*cronv1.CronJob, error) {
	cj, err := c.CronJobInterface.Get(ctx, name, opts)
	c.g.wait()
	return cj, err
}

// Two skips at once both read the CronJob before either writes: the
// second write conflicts, and its retry keeps the first one's entry.
func TestConcurrentSkipsKeepBoth(t *testing.T) {
	f := newFakes([]*cronv1.CronJob{newCronJob("nightly", "0 2 * * *", inZone("UTC"))})
	f.withResourceVersions(t)
	c := f.clients()
	c.Cron = gatedClientset{f.cron, &gate{n: 2, all: make(chan struct{})}}
	at := []time.Time{time.Date(2026, 11, 24, 2, 0, 0, 0, time.UTC), time.Date(2026, 11, 25, 2, 0, 0, 0, time.UTC)}
	errs := make([]error, len(at))
	var wg sync.WaitGroup
	for i := range at {
		wg.Go(func() {
			errs[i] = Skip(context.Background(), c, io.Discard, "nightly", SkipRequest{At: at[i].Format(time.RFC3339)})
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("skip --at %v: %v", at[i], err)
		}
	}
	if got := skipTimesOf(f.cronJob(t, "nightly")); !sameTimes(got, at) {
		t.Errorf("spec.skipTimes %v, want both %v", got, at)
	}
	if n := f.patches(); n != 3 {
		t.Errorf("%d patches, want 3: two on the same resourceVersion, one of them conflicting, and its retry", n)
	}
}
