//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"

	cronv1 "github.com/cronjob-controller/cronjob-controller/pkg/apis/batch/v1"
	"github.com/cronjob-controller/cronjob-controller/pkg/job"
)

// 1. The artifacts apply as a user applies them, and kubectl shows them.
func TestArtifactsApplyAndPrint(t *testing.T) {
	ns := newNamespace(t)
	crd := filepath.Join(env.root, "artifacts", "examples", "crd.yaml")
	if out, err := kubectl("apply", "-f", crd); err != nil || !strings.Contains(out, "unchanged") && !strings.Contains(out, "configured") {
		t.Fatalf("re-applying the CRD client-side: %v\n%s", err, out)
	}
	// Every example at once, as a user tries them: nothing in the directory
	// is refused (its kustomization is named so that -f passes it over).
	if out, err := kubectl("apply", "-n", ns, "--dry-run=server", "-f", filepath.Join(env.root, "artifacts", "examples")); err != nil {
		t.Errorf("kubectl apply -f artifacts/examples/: %v\n%s", err, out)
	}
	sample := filepath.Join(env.root, "artifacts", "examples", "cronjob.yaml")
	if out, err := kubectl("apply", "-n", ns, "-f", sample); err != nil {
		t.Fatalf("applying the sample: %v\n%s", err, out)
	}
	cj := getCronJob(t, ns, "cronjob-sample")
	if cj.Spec.ConcurrencyPolicy != cronv1.AllowConcurrent || ptr.Deref(cj.Spec.SuccessfulJobsHistoryLimit, -1) != 3 ||
		ptr.Deref(cj.Spec.FailedJobsHistoryLimit, -1) != 1 || ptr.Deref(cj.Spec.Suspend, true) {
		t.Errorf("defaults not applied by the CRD: %+v", cj.Spec)
	}

	out, err := kubectl("get", "cronjobs.batch.tutorial.kubebuilder.io", "-n", ns)
	if err != nil {
		t.Fatalf("kubectl get: %v\n%s", err, out)
	}
	header := strings.Fields(strings.SplitN(out, "\n", 2)[0])
	want := []string{"NAME", "SCHEDULE", "TIMEZONE", "SUSPEND", "ACTIVE", "LAST", "SCHEDULE", "NEXT", "SCHEDULE", "PAUSED", "LAST", "RESULT", "READY", "AGE"}
	if !slices.Equal(header, want) {
		t.Errorf("kubectl get columns %q, want %q\n%s", header, want, out)
	}
	wide, err := kubectl("get", "cronjobs.batch.tutorial.kubebuilder.io", "-n", ns, "-o", "wide")
	if err != nil || !strings.Contains(strings.SplitN(wide, "\n", 2)[0], "FAILED IN A ROW") || !strings.Contains(strings.SplitN(wide, "\n", 2)[0], "REASON") {
		t.Errorf("kubectl get -o wide lacks the column FAILED IN A ROW or REASON: %v\n%s", err, wide)
	}
	if !strings.Contains(out, "*/1 * * * *") {
		t.Errorf("kubectl get does not show the schedule:\n%s", out)
	}

	// The short name and the categories find ours, where plain "cronjobs"
	// finds the built-in kind.
	for _, args := range [][]string{{"get", "tcj"}, {"get", "tutorial"}, {"get", "all"}} {
		out, err := kubectl(append(args, "-n", ns)...)
		if err != nil || !strings.Contains(out, "cronjob-sample") {
			t.Errorf("kubectl %s does not list the sample: %v\n%s", strings.Join(args, " "), err, out)
		}
	}

	// The README's form of kubectl explain; the group-qualified resource
	// (cronjobs.batch.tutorial.kubebuilder.io.spec) does not parse as one.
	out, err = kubectl("explain", "cronjobs.spec", "--api-version=batch.tutorial.kubebuilder.io/v1")
	if err != nil || !strings.Contains(out, "GROUP:      batch.tutorial.kubebuilder.io") || !strings.Contains(out, "catchUpPolicy") {
		t.Errorf("kubectl explain cronjobs.spec --api-version=batch.tutorial.kubebuilder.io/v1: %v\n%s", err, out)
	}
	if out, err := kubectl("explain", "tcj.spec.schedule"); err != nil || !strings.Contains(out, "Schedule in cron format") || !strings.Contains(out, "batch.tutorial.kubebuilder.io") {
		t.Errorf("kubectl explain tcj.spec.schedule: %v\n%s", err, out)
	}

	out, err = kubectl("explain", "--api-version=batch.tutorial.kubebuilder.io/v1", "cronjobs.spec.jobTemplate.spec")
	if err != nil {
		t.Fatalf("kubectl explain: %v\n%s", err, out)
	}
	for _, field := range []string{"template", "backoffLimit", "parallelism"} {
		if !strings.Contains(out, field) {
			t.Errorf("kubectl explain of the job template lacks %q:\n%s", field, out)
		}
	}
	out, err = kubectl("explain", "--api-version=batch.tutorial.kubebuilder.io/v1", "cronjobs.spec.startingDeadlineSeconds")
	if err != nil || !strings.Contains(out, "how late") {
		t.Errorf("kubectl explain does not describe our own field: %v\n%s", err, out)
	}
}

// 2. Jobs are created on schedule, complete, and are pruned to the limits.
func TestJobsRunCompleteAndArePruned(t *testing.T) {
	ns := newNamespace(t)
	startController(t)
	cj := createCronJob(t, cronJob(ns, "every3s", "@every 3s", func(cj *cronv1.CronJob) {
		cj.Spec.SuccessfulJobsHistoryLimit = ptr.To[int32](2)
	}))

	seen := map[string]bool{}
	eventually(t, 90*time.Second, "five Jobs created, two completed kept, lastSuccessfulTime set", func() (bool, string) {
		jobs := listJobs(t, ns)
		complete := 0
		for _, j := range jobs {
			seen[j.Name] = true
			if job.Finished(&j) == batchv1.JobComplete {
				complete++
			}
		}
		cur := getCronJob(t, ns, cj.Name)
		return len(seen) >= 5 && complete == 2 && cur.Status.LastSuccessfulTime != nil,
			fmt.Sprintf("%d created, %d complete now, lastSuccessfulTime %v", len(seen), complete, cur.Status.LastSuccessfulTime)
	})

	for _, j := range listJobs(t, ns) {
		unix, err := strconv.ParseInt(strings.TrimPrefix(j.Name, cj.Name+"-"), 10, 64)
		if err != nil {
			t.Errorf("Job name %q is not <cronjob>-<unix seconds>", j.Name)
			continue
		}
		at, err := time.Parse(time.RFC3339, j.Annotations[cronv1.ScheduledAtAnnotation])
		if err != nil || at.Unix() != unix {
			t.Errorf("Job %s: scheduled-at annotation %q does not match its name", j.Name, j.Annotations[cronv1.ScheduledAtAnnotation])
		}
		if (unix-cj.CreationTimestamp.Unix())%3 != 0 {
			t.Errorf("Job %s is off the @every 3s grid that starts at %v", j.Name, cj.CreationTimestamp)
		}
		ref := metav1.GetControllerOf(&j)
		if ref == nil || ref.UID != cj.UID || ref.Kind != "CronJob" {
			t.Errorf("Job %s: controller reference %+v", j.Name, ref)
		}
	}
	cur := getCronJob(t, ns, cj.Name)
	if cur.Status.LastScheduleTime == nil || cur.Status.NextScheduleTime == nil ||
		cur.Status.NextScheduleTime.Sub(cur.Status.LastScheduleTime.Time) != 3*time.Second {
		t.Errorf("status times: last %v, next %v", cur.Status.LastScheduleTime, cur.Status.NextScheduleTime)
	}
	if ok, seenEvents := eventHappens(t, ns, cj.Name, corev1.EventTypeNormal, "SuccessfulCreate"); !ok {
		t.Errorf("no SuccessfulCreate event: %s", seenEvents)
	}
}

// 3a. Forbid never runs two Jobs at once.
func TestForbidSkipsWhileActive(t *testing.T) {
	ns := newNamespace(t)
	startController(t)
	cj := createCronJob(t, cronJob(ns, "forbid", "@every 2s", stuck, func(cj *cronv1.CronJob) {
		cj.Spec.ConcurrencyPolicy = cronv1.ForbidConcurrent
	}))
	eventually(t, 30*time.Second, "a run refused for Forbid", func() (bool, string) {
		return hasEvent(t, ns, cj.Name, corev1.EventTypeNormal, "JobAlreadyActive")
	})
	if jobs := listJobs(t, ns); len(jobs) != 1 {
		t.Errorf("%d Jobs under Forbid with the first still active, want 1", len(jobs))
	}
	if cur := getCronJob(t, ns, cj.Name); len(cur.Status.Active) != 1 || cur.Status.ActiveCount != 1 {
		t.Errorf("status.active = %v (count %d), want the one Job", cur.Status.Active, cur.Status.ActiveCount)
	}
}

// 3b. Replace deletes the active Job and starts the new run.
func TestReplaceReplacesActive(t *testing.T) {
	ns := newNamespace(t)
	startController(t)
	cj := createCronJob(t, cronJob(ns, "replace", "@every 2s", stuck, func(cj *cronv1.CronJob) {
		cj.Spec.ConcurrencyPolicy = cronv1.ReplaceConcurrent
	}))
	first := firstActive(t, ns, cj.Name)
	eventually(t, 30*time.Second, "the first Job replaced by a newer one", func() (bool, string) {
		cur := getCronJob(t, ns, cj.Name)
		_, err := env.kube.BatchV1().Jobs(ns).Get(context.Background(), first, metav1.GetOptions{})
		gone := err != nil
		return gone && len(cur.Status.Active) == 1 && cur.Status.Active[0].Name != first,
			fmt.Sprintf("first gone: %v, active %v", gone, cur.Status.Active)
	})
	if ok, seenEvents := eventHappens(t, ns, cj.Name, corev1.EventTypeNormal, "SuccessfulDelete"); !ok {
		t.Errorf("no SuccessfulDelete event: %s", seenEvents)
	}
}

// 4a. A suspended CronJob starts nothing; resumed, it starts its missed run.
func TestSuspendAndResume(t *testing.T) {
	ns := newNamespace(t)
	startController(t)
	suspended := createCronJob(t, cronJob(ns, "suspended", "@every 2s", func(cj *cronv1.CronJob) { cj.Spec.Suspend = ptr.To(true) }))
	// A witness with the same schedule shows that runs came due meanwhile.
	witness := createCronJob(t, cronJob(ns, "witness", "@every 2s"))
	eventually(t, 30*time.Second, "two runs of the witness", func() (bool, string) {
		n := len(jobsOf(t, ns, witness))
		return n >= 2, fmt.Sprintf("%d witness Jobs", n)
	})
	if n := len(jobsOf(t, ns, suspended)); n != 0 {
		t.Fatalf("%d Jobs of a suspended CronJob", n)
	}
	if cur := getCronJob(t, ns, suspended.Name); cur.Status.NextScheduleTime != nil {
		t.Errorf("a suspended CronJob shows a next schedule time %v", cur.Status.NextScheduleTime)
	}

	updateSpec(t, ns, suspended.Name, func(cj *cronv1.CronJob) { cj.Spec.Suspend = ptr.To(false) })
	eventually(t, 10*time.Second, "a Job after resuming", func() (bool, string) {
		n := len(jobsOf(t, ns, suspended))
		return n >= 1, fmt.Sprintf("%d Jobs", n)
	})
}

// spec.suspendUntil on a real API server: the runs due before it are held
// and counted while Ready says why; moved to a few seconds ahead, the
// CronJob runs by itself once it passes, and no run is due before it.
// spec.skipTimes is stored as written.
func TestSuspendUntilEndsByItself(t *testing.T) {
	ns := newNamespace(t)
	startController(t)
	skip := metav1.NewTime(time.Now().Add(time.Hour).Truncate(time.Second))
	cj := createCronJob(t, cronJob(ns, "later", "@every 2s", func(cj *cronv1.CronJob) {
		cj.Spec.SuspendUntil = &metav1.Time{Time: time.Now().Add(time.Hour)}
		cj.Spec.SkipTimes = []metav1.Time{skip}
	}))
	if len(cj.Spec.SkipTimes) != 1 || !cj.Spec.SkipTimes[0].Equal(&skip) {
		t.Errorf("skipTimes stored as %v, want [%v]", cj.Spec.SkipTimes, skip)
	}
	held := func(cj *cronv1.CronJob) int64 {
		for _, m := range cj.Status.MissedRuns {
			if m.Reason == cronv1.MissedSuspendedUntil {
				return m.Count
			}
		}
		return 0
	}
	eventually(t, 30*time.Second, "two runs held, Ready False while suspended", func() (bool, string) {
		cur := getCronJob(t, ns, cj.Name)
		c := meta.FindStatusCondition(cur.Status.Conditions, cronv1.ConditionReady)
		return held(cur) >= 2 && c != nil && c.Status == metav1.ConditionFalse && c.Reason == "SuspendedUntil",
			fmt.Sprintf("held %d, Ready %+v", held(cur), c)
	})
	if n := len(jobsOf(t, ns, cj)); n != 0 {
		t.Fatalf("%d Jobs while suspended", n)
	}
	until := time.Now().Add(4 * time.Second).Truncate(time.Second)
	updateSpec(t, ns, cj.Name, func(cj *cronv1.CronJob) { cj.Spec.SuspendUntil = &metav1.Time{Time: until} })
	eventually(t, 30*time.Second, "two runs after the suspension", func() (bool, string) {
		n := len(jobsOf(t, ns, cj))
		return n >= 2, fmt.Sprintf("%d Jobs", n)
	})
	for _, j := range jobsOf(t, ns, cj) {
		if at, ok := job.ScheduledAt(&j); !ok || at.Before(until) {
			t.Errorf("Job %s scheduled at %v, before suspendUntil %v", j.Name, at, until)
		}
	}
	eventually(t, 10*time.Second, "Ready True after the suspension", func() (bool, string) {
		c := meta.FindStatusCondition(getCronJob(t, ns, cj.Name).Status.Conditions, cronv1.ConditionReady)
		return c != nil && c.Status == metav1.ConditionTrue, fmt.Sprintf("Ready %+v", c)
	})
}

// 4b. A run later than startingDeadlineSeconds is skipped with an Event;
// without a deadline the same late run starts.
func TestStartingDeadlineSkipsLateRun(t *testing.T) {
	ns := newNamespace(t)
	startController(t)
	yearly := func(cj *cronv1.CronJob) {
		cj.Spec.TimeZone = ptr.To("UTC")
		cj.Spec.Suspend = ptr.To(true)
	}
	strict := createCronJob(t, cronJob(ns, "strict", "0 0 1 1 *", yearly, func(cj *cronv1.CronJob) { cj.Spec.StartingDeadlineSeconds = ptr.To[int64](10) }))
	lenient := createCronJob(t, cronJob(ns, "lenient", "0 0 1 1 *", yearly))
	longAgo := metav1.NewTime(time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC))
	for _, cj := range []*cronv1.CronJob{strict, lenient} {
		resumeAsIfLastRan(t, ns, cj.Name, longAgo)
	}
	newYear := time.Date(time.Now().UTC().Year(), 1, 1, 0, 0, 0, 0, time.UTC)

	eventually(t, 20*time.Second, "the lenient CronJob to start this year's run", func() (bool, string) {
		jobs := jobsOf(t, ns, lenient)
		return len(jobs) == 1 && jobs[0].Name == fmt.Sprintf("lenient-%d", newYear.Unix()), fmt.Sprintf("%d Jobs", len(jobs))
	})
	eventually(t, 20*time.Second, "a MissSchedule warning", func() (bool, string) {
		return hasEvent(t, ns, strict.Name, corev1.EventTypeWarning, "MissSchedule")
	})
	if n := len(jobsOf(t, ns, strict)); n != 0 {
		t.Errorf("%d Jobs for a run past its deadline", n)
	}
}

// 5. Killed mid-run and restarted: no duplicate, no lost run, and the run
// missed while it was down starts on its return.
func TestControllerRestart(t *testing.T) {
	ns := newNamespace(t)
	first := startController(t)
	cj := createCronJob(t, cronJob(ns, "restart", "@every 2s", func(cj *cronv1.CronJob) {
		cj.Spec.SuccessfulJobsHistoryLimit = ptr.To[int32](100)
	}))
	eventually(t, 30*time.Second, "three runs", func() (bool, string) {
		n := len(jobsOf(t, ns, cj))
		return n >= 3, fmt.Sprintf("%d Jobs", n)
	})
	first.kill()
	killedAt := time.Now()
	// The outage itself: long enough for two runs to come due while down.
	time.Sleep(5 * time.Second)
	startController(t)
	restartedAt := time.Now()

	eventually(t, 15*time.Second, "the run missed during the outage", func() (bool, string) {
		for _, at := range scheduledTimes(t, jobsOf(t, ns, cj)) {
			if at.After(restartedAt.Add(-2*time.Second)) && at.Before(restartedAt.Add(time.Second)) {
				return true, ""
			}
		}
		return false, fmt.Sprint(scheduledTimes(t, jobsOf(t, ns, cj)))
	})
	eventually(t, 15*time.Second, "a run after the restart", func() (bool, string) {
		times := scheduledTimes(t, jobsOf(t, ns, cj))
		return times[len(times)-1].After(restartedAt.Add(time.Second)), fmt.Sprint(times)
	})

	times := scheduledTimes(t, jobsOf(t, ns, cj))
	created := cj.CreationTimestamp.Time
	for i, at := range times {
		if i > 0 && at.Equal(times[i-1]) {
			t.Errorf("two Jobs for the run of %v", at)
		}
		if int64(at.Sub(created)/time.Second)%2 != 0 {
			t.Errorf("run %v is off the @every 2s grid from %v", at, created)
		}
	}
	// While the controller was up, every run of the grid has its Job.
	for at := times[0]; !at.After(killedAt.Add(-time.Second)); at = at.Add(2 * time.Second) {
		if !slices.ContainsFunc(times, at.Equal) {
			t.Errorf("run of %v was lost (runs: %v)", at, times)
		}
	}
}

// gcWait bounds how long a test waits for kube-controller-manager's garbage
// collector. The CRDs are applied after it starts, so it watches our kinds
// only from its next discovery resync (every 30 s); until then a deleted
// owner is noticed late. A loaded 2-core CI machine saw a two-level chain
// (CronJob, Backfill, Jobs) take longer than 30 s.
const gcWait = 2 * time.Minute

// 6. Deleting a CronJob garbage-collects its Jobs.
func TestDeleteCronJobCollectsJobs(t *testing.T) {
	ns := newNamespace(t)
	startController(t)
	cj := createCronJob(t, cronJob(ns, "doomed", "@every 2s", stuck))
	eventually(t, 30*time.Second, "a Job", func() (bool, string) {
		n := len(jobsOf(t, ns, cj))
		return n >= 1, fmt.Sprintf("%d Jobs", n)
	})
	if out, err := kubectl("delete", "-n", ns, "cronjobs.batch.tutorial.kubebuilder.io", cj.Name); err != nil {
		t.Fatalf("kubectl delete: %v\n%s", err, out)
	}
	eventually(t, gcWait, "the garbage collector to delete the Jobs", func() (bool, string) {
		n := len(listJobs(t, ns))
		return n == 0, fmt.Sprintf("%d Jobs left", n)
	})
}

// 7. Bad input: the CRD refuses what it can judge at apply; what only the
// controller can judge gets an Event and a False condition, and the
// controller keeps serving the others.
func TestBadInput(t *testing.T) {
	ns := newNamespace(t)
	manifestWith := func(name, schedule, specExtra string) string {
		return fmt.Sprintf(`apiVersion: batch.tutorial.kubebuilder.io/v1
kind: CronJob
metadata:
  name: %s
  namespace: %s
spec:
  schedule: %q
%s  jobTemplate:
    spec:
      template:
        spec:
          restartPolicy: Never
          containers:
          - name: c
            image: busybox
`, name, ns, schedule, specExtra)
	}
	manifest := func(name, specExtra string) string { return manifestWith(name, "*/5 * * * *", specExtra) }
	backfill := func(name string) string {
		return fmt.Sprintf(`apiVersion: batch.tutorial.kubebuilder.io/v1
kind: Backfill
metadata:
  name: %s
  namespace: %s
spec:
  cronJobName: c
  start: "2026-01-01T00:00:00Z"
  end: "2026-01-02T00:00:00Z"
`, name, ns)
	}
	// Each refusal is one line that names the field, as the built-in kind's
	// are: no "<nil>:" path, and no second line saying that "some validation
	// rules were not checked" (the API server adds it after an enum, required
	// or type error when the CRD has CEL rules, so the policies are CEL rules).
	rejected := []struct{ name, manifest, says string }{
		// The CRD's CEL rules.
		{"unparseable schedule", manifestWith("cron", "every tuesday", ""), `spec.schedule: Invalid value: "every tuesday": needs five fields`},
		{"six fields", manifestWith("six", "0 0 * * * *", ""), "spec.schedule: Invalid value: \"0 0 * * * *\": needs five fields"},
		{"value out of range", manifestWith("range", "0 25 * * *", ""), "spec.schedule: Invalid value: \"0 25 * * *\": the hour field (the second) is not"},
		{"calendar form outside the day fields", manifestWith("cal-minute", "L * * * *", ""), "spec.schedule: Invalid value: \"L * * * *\": the minute field (the first) is not"},
		{"nearest weekday past the 31st", manifestWith("cal-w", "0 0 32W * *", ""), "spec.schedule: Invalid value: \"0 0 32W * *\": the day of month field (the third) is not a value, range, step, list, H form, L, L-n, LW or nW within 1-31"},
		{"a sixth Monday", manifestWith("cal-nth", "0 0 ? * MON#6", ""), "spec.schedule: Invalid value: \"0 0 ? * MON#6\": the day of week field (the fifth) is not a value, range, step, list, H form, dL or d#k (k 1-5) within 0-6"},
		{"TZ= inside the schedule", manifestWith("tz", "TZ=UTC 0 * * * *", ""), "spec.schedule: Invalid value: \"TZ=UTC 0 * * * *\": sets a time zone (TZ= or CRON_TZ=): put it in spec.timeZone instead"},
		{"@every below a second", manifestWith("every", "@every 500ms", ""), "spec.schedule: Invalid value: \"@every 500ms\": @every needs an interval of at least 1s"},
		{"timeZone Local", manifest("local", "  timeZone: Local\n"), "spec.timeZone: Invalid value: \"Local\": must name an IANA time zone"},
		{"empty timeZone", manifest("empty-zone", "  timeZone: \"\"\n"), "spec.timeZone: Invalid value: \"\": must name an IANA time zone such as Europe/Berlin; leave spec.timeZone unset for the controller's local time"},
		{"badly shaped timeZone", manifest("zone-shape", "  timeZone: Mars Olympus\n"), "spec.timeZone: Invalid value: \"Mars Olympus\": not an IANA time zone name"},
		{"name longer than 52", manifest(strings.Repeat("a", 53), ""), "metadata.name: Invalid value: must be no more than 52 characters"},
		{"unknown concurrencyPolicy", manifest("policy", "  concurrencyPolicy: Sometimes\n"), "spec.concurrencyPolicy: Invalid value: \"Sometimes\": must be Allow, Forbid or Replace"},
		{"unknown catchUpPolicy", manifest("catch-up", "  catchUpPolicy: Everything\n"), "spec.catchUpPolicy: Invalid value: \"Everything\": must be Latest, All or None"},
		// The schema.
		{"negative history limit", manifest("limit", "  successfulJobsHistoryLimit: -1\n"), "spec.successfulJobsHistoryLimit: Invalid value: -1: spec.successfulJobsHistoryLimit in body should be greater than or equal to 0"},
		{"negative deadline", manifest("deadline", "  startingDeadlineSeconds: -5\n"), "spec.startingDeadlineSeconds: Invalid value: -5: spec.startingDeadlineSeconds in body should be greater than or equal to 0"},
		{"deadline past 100 years", manifest("huge-deadline", "  startingDeadlineSeconds: 10000000000\n"), "spec.startingDeadlineSeconds: Invalid value: 10000000000: spec.startingDeadlineSeconds in body should be less than or equal to"},
		{"Backfill name longer than 63", backfill(strings.Repeat("b", 64)), "metadata.name: Invalid value: must be no more than 63 characters"},
	}
	for _, r := range rejected {
		out, err := kubectlApply(r.manifest)
		lines := strings.Split(strings.TrimSpace(out), "\n")
		switch {
		case err == nil:
			t.Errorf("%s: kubectl apply succeeded:\n%s", r.name, out)
		case len(lines) != 1:
			t.Errorf("%s: %d lines, want one:\n%s", r.name, len(lines), out)
		case !strings.Contains(lines[0], r.says):
			t.Errorf("%s: the error does not say %q:\n%s", r.name, r.says, out)
		case strings.Contains(out, "<nil>"):
			t.Errorf("%s: an error names no field:\n%s", r.name, out)
		}
	}
	// A value of the wrong type is the one refusal of two lines: type errors
	// stop the CEL rules, and the API server says so in a line of its own.
	// The first line still names the field.
	out, err := kubectlApply(strings.Replace(manifest("shape", ""), "restartPolicy: Never", "restartPolicy: [Never]", 1))
	if err == nil || !strings.Contains(out, "spec.jobTemplate.spec.template.spec.restartPolicy: Invalid value: \"array\"") {
		t.Errorf("template of the wrong shape: want the restartPolicy refused:\n%s", out)
	}

	// What CEL cannot know is the controller's to report: a schedule that
	// never fires, a well-shaped zone missing from the tz database.
	startController(t)
	badCron := createCronJob(t, cronJob(ns, "bad-cron", "0 0 30 2 *"))
	// The fifth Friday of February comes once in 28 years.
	badCalendar := createCronJob(t, cronJob(ns, "bad-calendar", "0 0 ? 2 FRI#5"))
	badZone := createCronJob(t, cronJob(ns, "bad-zone", "@hourly", func(cj *cronv1.CronJob) { cj.Spec.TimeZone = ptr.To("Mars/Olympus_Mons") }))
	noImage := createCronJob(t, cronJob(ns, "no-image", "@every 2s", func(cj *cronv1.CronJob) {
		cj.Spec.JobTemplate.Spec.Template.Spec.Containers[0].Image = ""
	}))
	good := createCronJob(t, cronJob(ns, "good", "@every 2s"))
	eventually(t, 20*time.Second, "the Job API's rejection as a condition", func() (bool, string) {
		cur := getCronJob(t, ns, noImage.Name)
		cond := meta.FindStatusCondition(cur.Status.Conditions, cronv1.ConditionJobTemplateValid)
		return cond != nil && cond.Status == metav1.ConditionFalse && strings.Contains(cond.Message, "image"), fmt.Sprintf("%+v", cond)
	})
	if ok, seenEvents := eventHappens(t, ns, noImage.Name, corev1.EventTypeWarning, "FailedCreate"); !ok {
		t.Errorf("no FailedCreate warning for a template the Job API rejects: %s", seenEvents)
	}
	for _, c := range []struct {
		cj     *cronv1.CronJob
		reason string
	}{{badCron, "InvalidSchedule"}, {badCalendar, "InvalidSchedule"}, {badZone, "UnknownTimeZone"}} {
		eventually(t, 20*time.Second, c.reason+" condition", func() (bool, string) {
			cur := getCronJob(t, ns, c.cj.Name)
			cond := meta.FindStatusCondition(cur.Status.Conditions, cronv1.ConditionScheduleValid)
			return cond != nil && cond.Status == metav1.ConditionFalse && cond.Reason == c.reason && cond.Message != "", fmt.Sprintf("%+v", cond)
		})
		if ok, seenEvents := eventHappens(t, ns, c.cj.Name, corev1.EventTypeWarning, c.reason); !ok {
			t.Errorf("no %s warning: %s", c.reason, seenEvents)
		}
	}
	eventually(t, 20*time.Second, "the good CronJob to keep running", func() (bool, string) {
		n := len(jobsOf(t, ns, good))
		return n >= 2, fmt.Sprintf("%d Jobs", n)
	})
	if n := len(listJobs(t, ns)) - len(jobsOf(t, ns, good)); n != 0 {
		t.Errorf("%d Jobs from CronJobs with unusable schedules", n)
	}
}

// firstActive waits for a CronJob's first active Job and returns its name.
func firstActive(t *testing.T, ns, name string) string {
	t.Helper()
	var first string
	eventually(t, 30*time.Second, "an active Job", func() (bool, string) {
		cur := getCronJob(t, ns, name)
		if len(cur.Status.Active) == 1 {
			first = cur.Status.Active[0].Name
		}
		return first != "", fmt.Sprint(cur.Status.Active)
	})
	return first
}

// jobsOf lists the Jobs controlled by cj.
func jobsOf(t *testing.T, ns string, cj *cronv1.CronJob) []batchv1.Job {
	t.Helper()
	var out []batchv1.Job
	for _, j := range listJobs(t, ns) {
		if ref := metav1.GetControllerOf(&j); ref != nil && ref.UID == cj.UID {
			out = append(out, j)
		}
	}
	return out
}

// scheduledTimes are the Jobs' scheduled-at annotations, sorted.
func scheduledTimes(t *testing.T, jobs []batchv1.Job) []time.Time {
	t.Helper()
	var out []time.Time
	for _, j := range jobs {
		at, err := time.Parse(time.RFC3339, j.Annotations[cronv1.ScheduledAtAnnotation])
		if err != nil {
			t.Fatalf("Job %s: %v", j.Name, err)
		}
		out = append(out, at)
	}
	slices.SortFunc(out, func(a, b time.Time) int { return a.Compare(b) })
	return out
}

func updateSpec(t *testing.T, ns, name string, mutate func(*cronv1.CronJob)) {
	t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cj, err := env.cron.BatchV1().CronJobs(ns).Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		mutate(cj)
		_, err = env.cron.BatchV1().CronJobs(ns).Update(context.Background(), cj, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// resumeAsIfLastRan unsuspends a CronJob created suspended, after writing
// that it last ran at last: the way to make runs due now without waiting.
func resumeAsIfLastRan(t *testing.T, ns, name string, last metav1.Time) {
	t.Helper()
	setLastScheduleTime(t, ns, name, last)
	updateSpec(t, ns, name, func(cj *cronv1.CronJob) { cj.Spec.Suspend = ptr.To(false) })
}

// setLastScheduleTime writes status.lastScheduleTime through the status
// subresource, as if the CronJob last ran then.
func setLastScheduleTime(t *testing.T, ns, name string, at metav1.Time) {
	t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cj, err := env.cron.BatchV1().CronJobs(ns).Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		cj.Status.LastScheduleTime = &at
		_, err = env.cron.BatchV1().CronJobs(ns).UpdateStatus(context.Background(), cj, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// klogInfoLine is a line of the controller's text log at level Info.
var klogInfoLine = regexp.MustCompile(`^I\d{4} \d{2}:\d{2}:\d{2}\.\d+ +\d+ [^ ]+:\d+\] `)

// A user with no cluster, a broken kubeconfig or a cluster without the
// CRDs gets one line saying so, and exit 1.
func TestClearErrorWithoutCluster(t *testing.T) {
	dir := t.TempDir()
	kubeconfigTo := func(name, server string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "`+server+`"}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: c, context: {cluster: c, user: u}}]
current-context: c
`), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	garbage := filepath.Join(dir, "garbage")
	if err := os.WriteFile(garbage, []byte("this: [is not"), 0o600); err != nil {
		t.Fatal(err)
	}
	// An API server that serves neither CRD: every request answers 404.
	noCRD := httptest.NewServer(http.NotFoundHandler())
	defer noCRD.Close()
	for name, tc := range map[string]struct {
		args []string
		says string
	}{
		"unreachable API server": {[]string{"-kubeconfig", kubeconfigTo("unreachable", "https://127.0.0.1:1")}, "cannot reach the Kubernetes API server"},
		"kubeconfig missing":     {[]string{"-kubeconfig", filepath.Join(dir, "missing")}, "kubeconfig"},
		"kubeconfig garbage":     {[]string{"-kubeconfig", garbage}, "kubeconfig"},
		"CRDs not installed":     {[]string{"-kubeconfig", kubeconfigTo("no-crd", noCRD.URL)}, "install the CRD"},
	} {
		t.Run(name, func(t *testing.T) {
			cmd := exec.Command(env.controller, tc.args...)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			err := cmd.Run()
			var exit *exec.ExitError
			if !errors.As(err, &exit) || exit.ExitCode() != 1 {
				t.Fatalf("exit: %v, want status 1; stderr:\n%s", err, stderr.String())
			}
			// The log's start-up line (the version) comes first; then one
			// line says what is wrong, with no stack trace.
			var errLines []string
			for _, l := range strings.Split(strings.TrimSpace(stderr.String()), "\n") {
				if !klogInfoLine.MatchString(l) {
					errLines = append(errLines, l)
				}
			}
			if len(errLines) != 1 || !strings.HasPrefix(errLines[0], "cronjob-controller: ") || strings.Contains(stderr.String(), "goroutine") {
				t.Errorf("want one error line, got:\n%s", stderr.String())
			}
			if !strings.Contains(stderr.String(), tc.says) {
				t.Errorf("the error does not say %q:\n%s", tc.says, stderr.String())
			}
		})
	}
}

// TestTemplateMetadataKept: the labels and annotations a user puts on the Job
// template and its pod template survive the API server's pruning. Without
// their schema in the CRD they were dropped on write, before the controller
// could copy them onto a Job.
func TestTemplateMetadataKept(t *testing.T) {
	ns := newNamespace(t)
	created := createCronJob(t, cronJob(ns, "labelled", "0 0 1 1 *", func(cj *cronv1.CronJob) {
		cj.Spec.JobTemplate.Labels = map[string]string{"job-label": "j"}
		cj.Spec.JobTemplate.Spec.Template.Labels = map[string]string{"team": "data"}
		cj.Spec.JobTemplate.Spec.Template.Annotations = map[string]string{"example.com/owner": "reports"}
	}))
	if got := created.Spec.JobTemplate.Labels["job-label"]; got != "j" {
		t.Errorf("jobTemplate.metadata.labels[job-label] = %q, want %q", got, "j")
	}
	pod := created.Spec.JobTemplate.Spec.Template
	if got := pod.Labels["team"]; got != "data" {
		t.Errorf("pod template labels[team] = %q, want %q (pruned by the CRD schema?)", got, "data")
	}
	if got := pod.Annotations["example.com/owner"]; got != "reports" {
		t.Errorf("pod template annotations[example.com/owner] = %q, want %q", got, "reports")
	}
}
