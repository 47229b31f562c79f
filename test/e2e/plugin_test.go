//go:build e2e

package e2e

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/utils/ptr"

	cronv1 "github.com/cronjob-controller/cronjob-controller/pkg/apis/batch/v1"
	"github.com/cronjob-controller/cronjob-controller/pkg/job"
)

// buildPlugin builds kubectl-cronjob and its completion helper
// kubectl_complete-cronjob into a directory of their own, for PATH, as
// make build does into _output/bin.
func buildPlugin(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, bin := range []string{"kubectl-cronjob", "kubectl_complete-cronjob"} {
		build := exec.Command("go", "build", "-o", filepath.Join(dir, bin), "./cmd/"+bin)
		build.Dir = env.root
		if out, err := build.CombinedOutput(); err != nil {
			t.Fatalf("building %s: %v\n%s", bin, err, out)
		}
	}
	return dir
}

// kubectlCronJob runs `kubectl cronjob ARGS` with the plugin on PATH: the
// real kubectl finds the plugin and passes it the flags, as a user's would.
func kubectlCronJob(t *testing.T, pluginDir, ns string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command("kubectl", append(append([]string{"cronjob"}, args...), "--kubeconfig", env.kubeconfig, "-n", ns)...)
	cmd.Env = append(os.Environ(), "PATH="+pluginDir+string(os.PathListSeparator)+os.Getenv("PATH"))
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.String(), err
}

// The kubectl plugin, through kubectl, against the controller: next agrees
// with status.nextScheduleTime, run starts the Job it names, history shows
// it complete, suspend and resume flip spec.suspend and the controller
// follows; suspend --for sets spec.suspendUntil and list shows it; skip
// --next skips the controller's next run, which next marks; resume and
// skip --clear undo both.
func TestKubectlPlugin(t *testing.T) {
	pluginDir := buildPlugin(t)
	ns := newNamespace(t)
	startController(t)
	// Daily, hashed, in a zone of its own: next has a stable answer to
	// check, and no scheduled run interferes with the run-now Job.
	cj := createCronJob(t, cronJob(ns, "plugin", "H H * * *", func(cj *cronv1.CronJob) {
		cj.Spec.TimeZone = ptr.To("Asia/Kolkata")
	}))
	plugin := func(args ...string) string {
		t.Helper()
		out, err := kubectlCronJob(t, pluginDir, ns, args...)
		if err != nil {
			t.Fatalf("kubectl cronjob %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return out
	}
	synced := func(what string, want func(*cronv1.CronJob) bool) *cronv1.CronJob {
		t.Helper()
		var cur *cronv1.CronJob
		eventually(t, 20*time.Second, what, func() (bool, string) {
			cur = getCronJob(t, ns, cj.Name)
			return cur.Status.ObservedGeneration == cur.Generation && want(cur),
				fmt.Sprintf("generation %d observed %d, suspend %v, nextScheduleTime %v", cur.Generation, cur.Status.ObservedGeneration, cur.Spec.Suspend, cur.Status.NextScheduleTime)
		})
		return cur
	}
	hasNext := func(cj *cronv1.CronJob) bool { return cj.Status.NextScheduleTime != nil }

	// next: the first time printed is the controller's next run.
	checkNext := func() {
		t.Helper()
		var cur *cronv1.CronJob
		var out string
		var times []time.Time
		// Both answers move on only if the run falls due in between: then
		// the controller writes the next one, and the plugin agrees again.
		eventually(t, 20*time.Second, "next to print status.nextScheduleTime first", func() (bool, string) {
			cur = synced("status.nextScheduleTime", hasNext)
			out = plugin("next", cj.Name, "--count", "3")
			times = nextUTC(t, out)
			return len(times) == 3 && times[0].Equal(cur.Status.NextScheduleTime.Time),
				fmt.Sprintf("next printed %v, status.nextScheduleTime is %v:\n%s", times, cur.Status.NextScheduleTime, out)
		})
		if times[1].Sub(times[0]) != 24*time.Hour || times[2].Sub(times[1]) != 24*time.Hour {
			t.Errorf("next printed %v for a daily schedule", times)
		}
		if !strings.Contains(out, fmt.Sprintf("(resolved %q) in Asia/Kolkata", cur.Status.ResolvedSchedule)) || strings.Count(out, " IST ") != 3 {
			t.Errorf("next does not show the resolved schedule %q in the CronJob's zone:\n%s", cur.Status.ResolvedSchedule, out)
		}
	}
	checkNext()

	// run: it creates a CronJobRun, --wait follows it to its success, the
	// Job it names appears, and history shows it complete, requested.
	out := plugin("run", cj.Name, "--wait")
	if !strings.Contains(out, "succeeded\n") {
		t.Errorf("run --wait does not say the run succeeded:\n%s", out)
	}
	_, rest, ok := strings.Cut(out, "Job to expect: ")
	if !ok {
		t.Fatalf("run names no Job:\n%s", out)
	}
	name, _, _ := strings.Cut(rest, " ")
	eventually(t, 20*time.Second, "the requested Job "+name, func() (bool, string) {
		jobs := jobsOf(t, ns, cj)
		for _, j := range jobs {
			if j.Name == name && j.Annotations[cronv1.InstantiateAnnotation] == job.Manual {
				return true, ""
			}
		}
		return false, fmt.Sprintf("%d Jobs", len(jobs))
	})
	eventually(t, 60*time.Second, "history to show "+name+" complete", func() (bool, string) {
		out, err := kubectlCronJob(t, pluginDir, ns, "history", cj.Name)
		if err != nil {
			return false, fmt.Sprintf("%v: %s", err, out)
		}
		lines := strings.Split(strings.TrimSpace(out), "\n")
		if len(lines) != 2 || strings.Fields(lines[0])[0] != "NAME" {
			return false, out
		}
		f := strings.Fields(lines[1])
		return len(f) == 6 && f[0] == name && f[1] == "requested" && f[2] == "-" && f[3] == "Complete" && f[4] != "-", out
	})

	// list: the CronJob with its next run, the run-now's success as its
	// last result, and its state from the Ready condition.
	eventually(t, 20*time.Second, "list to show the run-now's success", func() (bool, string) {
		out, err := kubectlCronJob(t, pluginDir, ns, "list")
		rows := strings.Split(strings.TrimSpace(out), "\n")
		return err == nil && len(rows) == 2 && strings.HasPrefix(rows[0], "NAME ") && strings.HasPrefix(rows[1], "plugin ") &&
			strings.Contains(rows[1], " in ") && strings.Contains(rows[1], " Succeeded, ") && strings.HasSuffix(rows[1], " ok"), out
	})
	t.Logf("kubectl cronjob list:\n%s", plugin("list"))

	// Completion through kubectl, which runs kubectl_complete-cronjob:
	// the NAME of history is the namespace's CronJob.
	complete := exec.Command("kubectl", "__complete", "cronjob", "history", "--kubeconfig", env.kubeconfig, "-n", ns, "")
	complete.Env = append(os.Environ(), "PATH="+pluginDir+string(os.PathListSeparator)+os.Getenv("PATH"))
	if out, err := complete.Output(); err != nil || string(out) != "plugin\n:4\n" {
		t.Errorf("kubectl __complete cronjob history: %v, %q; want the CronJob's name and no file names", err, out)
	}

	// suspend and resume: spec.suspend flips, and the controller follows.
	if out := plugin("suspend", cj.Name); !strings.Contains(out, "/plugin suspended") {
		t.Errorf("suspend printed %q", out)
	}
	if !ptr.Deref(getCronJob(t, ns, cj.Name).Spec.Suspend, false) {
		t.Fatal("spec.suspend is not true after suspend")
	}
	synced("the controller to see the suspension", func(cj *cronv1.CronJob) bool { return !hasNext(cj) })
	if out := plugin("next", cj.Name); !strings.Contains(out, "suspended: none of these starts until kubectl cronjob resume plugin") {
		t.Errorf("next of a suspended CronJob does not say so:\n%s", out)
	}
	if out := plugin("resume", cj.Name); !strings.Contains(out, "/plugin resumed") {
		t.Errorf("resume printed %q", out)
	}
	if ptr.Deref(getCronJob(t, ns, cj.Name).Spec.Suspend, true) {
		t.Fatal("spec.suspend is not false after resume")
	}
	checkNext()

	// suspend --for: spec.suspendUntil two hours ahead, spec.suspend left
	// alone; the controller says SuspendedUntil, list shows until when.
	before := time.Now()
	if out := plugin("suspend", cj.Name, "--for", "2h"); !strings.Contains(out, "/plugin suspended until ") || !strings.Contains(out, "\nnext run: ") {
		t.Errorf("suspend --for printed %q", out)
	}
	cur := getCronJob(t, ns, cj.Name)
	if su := cur.Spec.SuspendUntil; su == nil || su.Time.Before(before.Add(2*time.Hour).Truncate(time.Second)) || su.Time.After(time.Now().Add(2*time.Hour+time.Second)) ||
		ptr.Deref(cur.Spec.Suspend, false) {
		t.Fatalf("after suspend --for 2h: spec.suspendUntil %v, spec.suspend %v", su, cur.Spec.Suspend)
	}
	until := cur.Spec.SuspendUntil.UTC().Format(time.RFC3339)
	eventually(t, 20*time.Second, "list to show the suspension", func() (bool, string) {
		out, err := kubectlCronJob(t, pluginDir, ns, "list")
		return err == nil && strings.Contains(out, " suspended until "+until+"\n"), out
	})
	// A run due within the two hours is marked suspended; the first time
	// left unmarked is the controller's next run.
	eventually(t, 20*time.Second, "next to print status.nextScheduleTime first after the suspension", func() (bool, string) {
		cur := synced("status.nextScheduleTime", hasNext)
		out := plugin("next", cj.Name, "--count", "3")
		times := nextUTC(t, out)
		return len(times) >= 2 && times[0].Equal(cur.Status.NextScheduleTime.Time) && strings.Contains(out, "("+until+") by spec.suspendUntil"),
			fmt.Sprintf("status.nextScheduleTime is %v:\n%s", cur.Status.NextScheduleTime, out)
	})

	// skip --next: the controller's next run is skipped, and it schedules
	// the one after; next marks it.
	first := synced("status.nextScheduleTime", hasNext).Status.NextScheduleTime.Time
	if out := plugin("skip", cj.Name, "--next", "1"); !strings.Contains(out, "skips the run of ") || !strings.Contains(out, "("+first.UTC().Format(time.RFC3339)+")") {
		t.Errorf("skip --next 1 printed %q; want it to skip %v", out, first)
	}
	if skips := getCronJob(t, ns, cj.Name).Spec.SkipTimes; len(skips) != 1 || !skips[0].Time.Equal(first) {
		t.Fatalf("spec.skipTimes %v after skip --next 1, want [%v]", skips, first)
	}
	synced("the controller to pass the skipped run", func(cj *cronv1.CronJob) bool {
		return hasNext(cj) && cj.Status.NextScheduleTime.Time.Equal(first.Add(24*time.Hour))
	})
	if out := plugin("next", cj.Name, "-c", "2"); !strings.Contains(out, first.UTC().Format(time.RFC3339)+"   skipped\n") {
		t.Errorf("next does not mark %v skipped:\n%s", first, out)
	}
	// --at a time the schedule never names: refused in one line.
	out, err := kubectlCronJob(t, pluginDir, ns, "skip", cj.Name, "--at", first.Add(time.Minute).UTC().Format(time.RFC3339))
	if exit, ok := err.(*exec.ExitError); !ok || exit.ExitCode() != 1 || strings.Count(out, "\n") != 1 || !strings.Contains(out, "is not one of the schedule's times; the nearest are") {
		t.Errorf("skip --at off the schedule: %v, %q", err, out)
	}

	// resume clears spec.suspendUntil, skip --clear the skips: next and
	// the controller agree on the first time again.
	if out := plugin("resume", cj.Name); !strings.Contains(out, "spec.suspendUntil "+until+" cleared") {
		t.Errorf("resume printed %q", out)
	}
	if out := plugin("skip", cj.Name, "--clear"); !strings.Contains(out, "skips no run any more") {
		t.Errorf("skip --clear printed %q", out)
	}
	if cur := getCronJob(t, ns, cj.Name); cur.Spec.SuspendUntil != nil || len(cur.Spec.SkipTimes) != 0 {
		t.Fatalf("spec.suspendUntil %v, spec.skipTimes %v after resume and skip --clear", cur.Spec.SuspendUntil, cur.Spec.SkipTimes)
	}
	checkNext()

	// A CronJob that is not there: one line, exit 1.
	out, err = kubectlCronJob(t, pluginDir, ns, "history", "missing")
	if exit, ok := err.(*exec.ExitError); !ok || exit.ExitCode() != 1 || strings.Count(out, "\n") != 1 || !strings.Contains(out, `"missing" not found`) {
		t.Errorf("history of a missing CronJob: %v, %q", err, out)
	}
}

// nextUTC reads the UTC column of next's table: the times it lists that
// no pause, suspension or skip holds (unmarked).
func nextUTC(t *testing.T, out string) []time.Time {
	t.Helper()
	var times []time.Time
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		if at, err := time.Parse(time.RFC3339, f[len(f)-1]); err == nil {
			times = append(times, at)
		}
	}
	return times
}
