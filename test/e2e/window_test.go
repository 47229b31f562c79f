//go:build e2e

package e2e

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	cronv1 "github.com/cronjob-controller/cronjob-controller/pkg/apis/batch/v1"
	"github.com/cronjob-controller/cronjob-controller/pkg/planner"
	"github.com/cronjob-controller/cronjob-controller/pkg/schedule"
	"github.com/cronjob-controller/cronjob-controller/pkg/schedule/corpus"
)

func withSchedules(entries ...string) func(*cronv1.CronJob) {
	return func(cj *cronv1.CronJob) {
		cj.Spec.Schedule = ""
		cj.Spec.Schedules = nil
		for _, e := range entries {
			cj.Spec.Schedules = append(cj.Spec.Schedules, cronv1.ScheduleEntry(e))
		}
	}
}

// The schema refuses what the new fields cannot mean, one line each.
func TestSchedulesAndWindowRefusedAtApply(t *testing.T) {
	ns := newNamespace(t)
	now := time.Now()
	for _, tc := range []struct {
		name string
		opt  func(*cronv1.CronJob)
		want string // "" admits
	}{
		{"a list", withSchedules("0 9 * * 1-5", "H 17 * * 5"), ""},
		{"both", func(cj *cronv1.CronJob) { cj.Spec.Schedules = []cronv1.ScheduleEntry{"0 9 * * *"} }, "spec: Invalid value: set exactly one of spec.schedule and spec.schedules"},
		{"neither", withSchedules(), "set exactly one of spec.schedule and spec.schedules"},
		{"a bad entry", withSchedules("0 9 * * *", "0 25 * * *"), "spec.schedules[1]: Invalid value: \"0 25 * * *\": the hour field (the second)"},
		{"@every in a list", withSchedules("0 9 * * *", "@every 1h"), "spec.schedules: Invalid value: @every cannot be one of several schedules"},
		{"eleven entries", withSchedules(slices.Repeat([]string{"0 9 * * *"}, 11)...), "spec.schedules: Too many: 11: must have at most 10 items"},
		{"a window", func(cj *cronv1.CronJob) {
			cj.Spec.NotBefore, cj.Spec.NotAfter = &metav1.Time{Time: now}, &metav1.Time{Time: now.Add(time.Hour)}
		}, ""},
		{"a window the wrong way round", func(cj *cronv1.CronJob) {
			cj.Spec.NotBefore, cj.Spec.NotAfter = &metav1.Time{Time: now}, &metav1.Time{Time: now.Add(-time.Hour)}
		}, "spec.notBefore must be before spec.notAfter"},
		{"maxRuns 1", func(cj *cronv1.CronJob) { cj.Spec.MaxRuns = ptr.To[int64](1) }, ""},
		{"maxRuns 0", func(cj *cronv1.CronJob) { cj.Spec.MaxRuns = ptr.To[int64](0) }, "spec.maxRuns: Invalid value: 0: spec.maxRuns in body should be greater than or equal to 1"},
		{"maxRuns past its bound", func(cj *cronv1.CronJob) { cj.Spec.MaxRuns = ptr.To[int64](1000001) },
			"spec.maxRuns: Invalid value: 1000001: spec.maxRuns in body should be less than or equal to 1000000"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := env.cron.BatchV1().CronJobs(ns).Create(context.Background(), cronJob(ns, "x", "0 9 * * *", tc.opt),
				metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("refused: %v", err)
			case tc.want != "" && (err == nil || !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("got %v, want a refusal saying %q", err, tc.want)
			case tc.want != "" && !strings.HasPrefix(tc.want, "spec.schedules: Too many"):
				// One line, as README says; past MaxItems the API server
				// adds that it skipped the CEL rules.
				var se *apierrors.StatusError
				if errors.As(err, &se) && len(causes(se)) != 1 {
					t.Errorf("want one line, got %q", causes(se))
				}
			}
		})
	}
}

// Several schedules: one Job per distinct time of their union. Two entries
// that share minutes (every 2nd and every 3rd minute share every 6th) are
// caught up from ten minutes back under catchUpPolicy All.
func TestSchedulesUnionOneJobPerTime(t *testing.T) {
	ns := newNamespace(t)
	startController(t)
	cj := createCronJob(t, cronJob(ns, "union", "", withSchedules("*/2 * * * *", "*/3 * * * *"), func(cj *cronv1.CronJob) {
		cj.Spec.Suspend = ptr.To(true)
		cj.Spec.CatchUpPolicy = cronv1.CatchUpAll
		cj.Spec.CatchUpLimit = ptr.To[int32](20)
		cj.Spec.TimeZone = ptr.To("UTC")
	}))
	from := time.Now().Add(-10 * time.Minute).Truncate(time.Minute)
	resumeAsIfLastRan(t, ns, cj.Name, metav1.NewTime(from))
	var want []time.Time
	// Up to the minute the resume lands in; a minute turning over while
	// the test runs may add one more, which the check allows.
	for m := from.Add(time.Minute); !m.After(time.Now()); m = m.Add(time.Minute) {
		if m.Minute()%2 == 0 || m.Minute()%3 == 0 {
			want = append(want, m)
		}
	}
	eventually(t, 20*time.Second, "a Job per distinct time", func() (bool, string) {
		got := scheduledTimes(t, jobsOf(t, ns, cj))
		return len(got) >= len(want), fmt.Sprintf("times %v, want %v", got, want)
	})
	got := scheduledTimes(t, jobsOf(t, ns, cj))
	for i, w := range want {
		if i >= len(got) || !got[i].Equal(w) {
			t.Fatalf("Jobs at %v, want %v (and perhaps one more)", got, want)
		}
	}
	cur := getCronJob(t, ns, cj.Name)
	if cur.Status.ResolvedSchedule != "*/2 * * * * | */3 * * * *" {
		t.Errorf("resolvedSchedule %q", cur.Status.ResolvedSchedule)
	}
	if next := cur.Status.NextScheduleTime; next == nil || (next.Minute()%2 != 0 && next.Minute()%3 != 0) {
		t.Errorf("nextScheduleTime %v is no time of the union", next)
	}
	out, err := kubectl("get", "cronjobs.batch.tutorial.kubebuilder.io", "-n", ns, cj.Name)
	if err != nil || !strings.Contains(out, `["*/2 * * * *","*/3 * * * *"]`) {
		t.Errorf("kubectl get's SCHEDULE column does not show the schedules:\n%s %v", out, err)
	}
}

// Past notAfter: Expired, an Event, no next time and no Job; notAfter
// moved later brings the CronJob back. Before notBefore: the next time is
// the first in the window.
func TestWindowExpiresAndComesBack(t *testing.T) {
	ns := newNamespace(t)
	startController(t)
	past := metav1.NewTime(time.Now().Add(-time.Minute).Truncate(time.Second))
	cj := createCronJob(t, cronJob(ns, "window", "* * * * *", func(cj *cronv1.CronJob) { cj.Spec.NotAfter = &past }))
	later := createCronJob(t, cronJob(ns, "later", "0 * * * *", func(cj *cronv1.CronJob) {
		cj.Spec.TimeZone = ptr.To("UTC")
		cj.Spec.NotBefore = &metav1.Time{Time: time.Date(2040, 1, 1, 0, 30, 0, 0, time.UTC)}
	}))
	eventually(t, 20*time.Second, "Expired and its Event", func() (bool, string) {
		cur := getCronJob(t, ns, cj.Name)
		c := meta.FindStatusCondition(cur.Status.Conditions, cronv1.ConditionExpired)
		ok, evs := hasEvent(t, ns, cj.Name, corev1.EventTypeNormal, "Expired")
		return c != nil && c.Status == metav1.ConditionTrue && ok && cur.Status.NextScheduleTime == nil,
			fmt.Sprintf("condition %+v, next %v, events %s", c, cur.Status.NextScheduleTime, evs)
	})
	out, err := kubectl("get", "cronjobs.batch.tutorial.kubebuilder.io", "-n", ns, cj.Name, "-o", "wide")
	if err != nil || !strings.Contains(out, "EXPIRED") || !strings.Contains(out, "True") {
		t.Errorf("kubectl get -o wide:\n%s %v", out, err)
	}
	eventually(t, 10*time.Second, "the next time of a CronJob not yet in its window", func() (bool, string) {
		next := getCronJob(t, ns, later.Name).Status.NextScheduleTime
		return next != nil && next.Time.Equal(time.Date(2040, 1, 1, 1, 0, 0, 0, time.UTC)), fmt.Sprintf("next %v", next)
	})

	updateSpec(t, ns, cj.Name, func(cj *cronv1.CronJob) { cj.Spec.NotAfter = &metav1.Time{Time: time.Now().Add(time.Hour)} })
	eventually(t, 20*time.Second, "alive again", func() (bool, string) {
		cur := getCronJob(t, ns, cj.Name)
		c := meta.FindStatusCondition(cur.Status.Conditions, cronv1.ConditionExpired)
		return c != nil && c.Status == metav1.ConditionFalse && cur.Status.NextScheduleTime != nil,
			fmt.Sprintf("condition %+v, next %v", c, cur.Status.NextScheduleTime)
	})
	if n := len(events(t, ns, cj.Name)); n == 0 {
		t.Error("no events")
	}
	for _, e := range events(t, ns, cj.Name) {
		if e.Reason == "Expired" && e.Count > 1 {
			t.Errorf("the Expired Event came %d times", e.Count)
		}
	}
}

// maxRuns 2 on @every 2s: exactly two Jobs, then Expired True with reason
// MaxRunsReached (Ready False with it, kubectl get -o wide's REASON), one
// Event, no next time, and no third Job while three more times pass.
func TestMaxRunsStopsAfterTwoRuns(t *testing.T) {
	ns := newNamespace(t)
	startController(t)
	cj := createCronJob(t, cronJob(ns, "twice", "@every 2s", func(cj *cronv1.CronJob) { cj.Spec.MaxRuns = ptr.To[int64](2) }))
	eventually(t, 30*time.Second, "two runs, then MaxRunsReached", func() (bool, string) {
		cur := getCronJob(t, ns, cj.Name)
		c := meta.FindStatusCondition(cur.Status.Conditions, cronv1.ConditionExpired)
		ok, evs := hasEvent(t, ns, cj.Name, corev1.EventTypeNormal, planner.ReasonMaxRunsReached)
		return c != nil && c.Reason == planner.ReasonMaxRunsReached && ok && cur.Status.NextScheduleTime == nil && cur.Status.ScheduledRunCount == 2,
			fmt.Sprintf("count %d, condition %+v, next %v, events %s", cur.Status.ScheduledRunCount, c, cur.Status.NextScheduleTime, evs)
	})
	for end := time.Now().Add(6 * time.Second); time.Now().Before(end); time.Sleep(500 * time.Millisecond) {
		if n := len(jobsOf(t, ns, cj)); n != 2 {
			t.Fatalf("%d Jobs, want 2", n)
		}
	}
	cur := getCronJob(t, ns, cj.Name)
	if ready := meta.FindStatusCondition(cur.Status.Conditions, cronv1.ConditionReady); ready == nil || ready.Status != metav1.ConditionFalse || ready.Reason != planner.ReasonMaxRunsReached {
		t.Errorf("Ready %+v, want False, MaxRunsReached", ready)
	}
	out, err := kubectl("get", "cronjobs.batch.tutorial.kubebuilder.io", "-n", ns, cj.Name, "-o", "wide")
	if err != nil || !strings.Contains(out, planner.ReasonMaxRunsReached) {
		t.Errorf("kubectl get -o wide does not say MaxRunsReached:\n%s %v", out, err)
	}
	for _, e := range events(t, ns, cj.Name) {
		if e.Reason == planner.ReasonMaxRunsReached && e.Count > 1 {
			t.Errorf("the MaxRunsReached Event came %d times", e.Count)
		}
	}
}

// The scheduled time inside the pod: the Job's pod carries the
// scheduled-at annotation and every container, init containers too,
// CRONJOB_SCHEDULED_TIME from it, except one that defines the name. The
// embedded control plane runs pods on kwok nodes, which run no process,
// so the test reads the pod's spec and annotation, not the variable as a
// process would see it.
func TestScheduledTimeEnv(t *testing.T) {
	ns := newNamespace(t)
	startController(t)
	cj := createCronJob(t, cronJob(ns, "env", "* * * * *", func(cj *cronv1.CronJob) {
		cj.Spec.Suspend = ptr.To(true)
		cj.Spec.TimeZone = ptr.To("Asia/Tokyo")
		pod := &cj.Spec.JobTemplate.Spec.Template.Spec
		pod.InitContainers = []corev1.Container{{Name: "init", Image: "busybox"}}
		pod.Containers = append(pod.Containers, corev1.Container{Name: "own", Image: "busybox",
			Env: []corev1.EnvVar{{Name: cronv1.ScheduledTimeEnv, Value: "mine"}}})
	}))
	resumeAsIfLastRan(t, ns, cj.Name, metav1.NewTime(time.Now().Add(-90*time.Second)))
	var pod corev1.Pod
	eventually(t, 30*time.Second, "a pod of the run", func() (bool, string) {
		pods, err := env.kube.CoreV1().Pods(ns).List(context.Background(), metav1.ListOptions{})
		if err != nil {
			return false, err.Error()
		}
		if len(pods.Items) == 0 {
			return false, "no pods"
		}
		pod = pods.Items[0]
		return true, ""
	})
	at := pod.Annotations[cronv1.ScheduledAtAnnotation]
	tm, err := time.Parse(time.RFC3339, at)
	if err != nil || !strings.HasSuffix(at, "+09:00") || tm.Second() != 0 {
		t.Errorf("pod annotation %q: want RFC 3339 in Asia/Tokyo, on a minute", at)
	}
	for _, c := range append(pod.Spec.InitContainers, pod.Spec.Containers...) {
		i := slices.IndexFunc(c.Env, func(e corev1.EnvVar) bool { return e.Name == cronv1.ScheduledTimeEnv })
		switch {
		case i < 0:
			t.Errorf("container %s has no %s", c.Name, cronv1.ScheduledTimeEnv)
		case c.Name == "own":
			if c.Env[i].Value != "mine" || len(c.Env) != 1 {
				t.Errorf("container own: %+v, want its own value only", c.Env)
			}
		case c.Env[i].ValueFrom == nil || c.Env[i].ValueFrom.FieldRef == nil ||
			c.Env[i].ValueFrom.FieldRef.FieldPath != "metadata.annotations['"+cronv1.ScheduledAtAnnotation+"']":
			t.Errorf("container %s: %+v", c.Name, c.Env[i])
		}
	}
}

// The entries of spec.schedules are checked by the rules of spec.schedule:
// the corpus of TestCELAgreesWithParser, each schedule of at most
// MaxEntryLength characters as the second entry of a list. The API server
// admits every list the controller accepts, and refuses at least 95% of the
// ones it refuses, each with one error naming spec.schedules[1] (two for an
// @every entry that is bad as a schedule too: @every is refused in a list).
func TestSchedulesCELAgreesWithParser(t *testing.T) {
	ns := newNamespace(t)
	entries, err := corpus.Load(filepath.Join(env.root, "pkg", "schedule"), celCorpusSeed, celCorpusGenerated)
	if err != nil {
		t.Fatal(err)
	}
	const name = "corpus"
	var specs []string
	for _, e := range entries {
		if utf8.RuneCountInString(e.Spec) <= schedule.MaxEntryLength && e.Spec != "" {
			specs = append(specs, e.Spec)
		}
	}
	cjs := make([]*cronv1.CronJob, len(specs))
	for i, s := range specs {
		cjs[i] = cronJob(ns, name, "", withSchedules("0 * * * *", s))
	}
	verdicts := admit(t, cjs)
	var refused, caught int
	for i, s := range specs {
		_, _, err := planner.ResolveSchedule(cjs[i])
		refusal := verdicts[i]
		if err == nil {
			if refusal != nil {
				t.Errorf("the API server refuses the entry %q, which the controller accepts: %v", s, causes(refusal))
			}
			continue
		}
		refused++
		if refusal == nil {
			continue
		}
		caught++
		// An @every entry the rules of spec.schedule refuse too gets
		// both lines: each is true.
		c := causes(refusal)
		if len(c) != 1 && !(len(c) == 2 && strings.HasPrefix(strings.TrimSpace(s), "@every")) {
			t.Errorf("%q: want one error, got %q", s, c)
		}
		for _, line := range c {
			if !strings.HasPrefix(line, "spec.schedules") {
				t.Errorf("%q: an error not naming spec.schedules: %q", s, line)
			}
		}
	}
	share := float64(caught) / float64(refused)
	t.Logf("REPORT entries=%d controller-refuses=%d cel-refuses=%d cel-share=%.1f%%", len(specs), refused, caught, 100*share)
	if share < 0.95 {
		t.Errorf("CEL refuses %.1f%% of the entries the controller refuses, want at least 95%%", 100*share)
	}
}
