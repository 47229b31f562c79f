//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	cronv1 "github.com/cronjob-controller/cronjob-controller/pkg/apis/batch/v1"
	"github.com/cronjob-controller/cronjob-controller/pkg/job"
)

// A Backfill over the ten minutes before its CronJob was created, one of
// them taken by a Job already: nine Jobs, named as scheduled runs, at most
// two active at once, the taken time skipped; Complete, shown by kubectl
// get; and gone with its Jobs once the CronJob is deleted.
func TestBackfill(t *testing.T) {
	ns := newNamespace(t)
	startController(t)
	cj := createCronJob(t, cronJob(ns, "nightly", "* * * * *", func(cj *cronv1.CronJob) {
		cj.Spec.TimeZone = ptr.To("UTC")
	}))
	end := cj.CreationTimestamp.Truncate(time.Minute)
	start := end.Add(-10 * time.Minute)
	taken := start.Add(3 * time.Minute)
	foreign := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: job.Name(cj.Name, taken), Namespace: ns},
		Spec:       *cj.Spec.JobTemplate.Spec.DeepCopy(),
	}
	if _, err := env.kube.BatchV1().Jobs(ns).Create(context.Background(), foreign, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	bf := &cronv1.Backfill{
		ObjectMeta: metav1.ObjectMeta{Name: "last-ten-minutes", Namespace: ns},
		Spec: cronv1.BackfillSpec{CronJobName: cj.Name, Start: metav1.NewTime(start), End: metav1.NewTime(end),
			MaxConcurrent: ptr.To[int32](2)},
	}
	if _, err := env.cron.BatchV1().Backfills(ns).Create(context.Background(), bf, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	ours := func() (active, all []batchv1.Job) {
		for _, j := range listJobs(t, ns) {
			if ref := metav1.GetControllerOf(&j); ref != nil && ref.Kind == "Backfill" {
				all = append(all, j)
				if job.Finished(&j) == "" {
					active = append(active, j)
				}
			}
		}
		return active, all
	}
	mostActive := 0
	var cur *cronv1.Backfill
	eventually(t, 60*time.Second, "the Backfill complete", func() (bool, string) {
		active, _ := ours()
		mostActive = max(mostActive, len(active))
		var err error
		if cur, err = env.cron.BatchV1().Backfills(ns).Get(context.Background(), bf.Name, metav1.GetOptions{}); err != nil {
			return false, err.Error()
		}
		return meta.IsStatusConditionTrue(cur.Status.Conditions, cronv1.ConditionBackfillComplete), fmt.Sprintf("status %+v", cur.Status)
	})
	if mostActive > 2 {
		t.Errorf("%d backfill Jobs active at once, maxConcurrent 2", mostActive)
	}
	st := cur.Status
	if st.Total != 10 || st.Created != 9 || st.Skipped != 1 || st.Succeeded != 9 || st.Failed != 0 || len(st.Active) != 0 {
		t.Errorf("status %+v, want total 10, created 9, skipped 1, succeeded 9", st)
	}
	if len(cur.OwnerReferences) != 1 || cur.OwnerReferences[0].UID != cj.UID {
		t.Errorf("Backfill owner references %+v, want the CronJob", cur.OwnerReferences)
	}
	_, all := ours()
	var names []string
	for _, j := range all {
		names = append(names, j.Name)
		at, _ := job.ScheduledAt(&j)
		if j.Name != job.Name(cj.Name, at) || at.Before(start) || !at.Before(end) || at.Equal(taken) ||
			j.Labels[cronv1.BackfillLabel] != bf.Name {
			t.Errorf("backfill Job %s: scheduled-at %v, labels %v", j.Name, at, j.Labels)
		}
	}
	// Each Job held the backfill-record finalizer until the status recording
	// it was stored; the status is complete, so all are released.
	eventually(t, 30*time.Second, "the backfill Jobs released", func() (bool, string) {
		_, all := ours()
		var holding []string
		for _, j := range all {
			if len(j.Finalizers) != 0 {
				holding = append(holding, j.Name+fmt.Sprint(j.Finalizers))
			}
		}
		return len(holding) == 0, fmt.Sprintf("holding: %v", holding)
	})
	if len(all) != 9 || len(slices.Compact(slices.Sorted(slices.Values(names)))) != 9 {
		t.Errorf("backfill Jobs %v, want 9 distinct", names)
	}

	out, err := kubectl("get", "backfills", "-n", ns)
	if err != nil {
		t.Fatalf("kubectl get backfills: %v\n%s", err, out)
	}
	t.Logf("kubectl get backfills:\n%s", out)
	header := strings.Fields(strings.SplitN(out, "\n", 2)[0])
	want := []string{"NAME", "CRONJOB", "SUSPEND", "TOTAL", "CREATED", "SKIPPED", "SUCCEEDED", "FAILED", "COMPLETE", "AGE"}
	if !slices.Equal(header, want) || !strings.Contains(out, "True") {
		t.Errorf("kubectl get backfills:\n%s\nwant columns %q and Complete True", out, want)
	}

	// Deleting the CronJob deletes the Backfill and its Jobs.
	if err := env.cron.BatchV1().CronJobs(ns).Delete(context.Background(), cj.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, gcWait, "the Backfill and its Jobs collected with the CronJob", func() (bool, string) {
		_, err := env.cron.BatchV1().Backfills(ns).Get(context.Background(), bf.Name, metav1.GetOptions{})
		_, all := ours()
		return apierrors.IsNotFound(err) && len(all) == 0, fmt.Sprintf("get Backfill: %v; %d backfill Jobs left", err, len(all))
	})
}

// A Backfill that may not run yet: suspended it creates nothing; unsuspended,
// times the CronJob has not passed (here, the future) wait for it.
func TestBackfillSuspendAndFuture(t *testing.T) {
	ns := newNamespace(t)
	startController(t)
	cj := createCronJob(t, cronJob(ns, "hourly", "0 * * * *", func(cj *cronv1.CronJob) {
		cj.Spec.TimeZone = ptr.To("UTC")
	}))
	past := cj.CreationTimestamp.Truncate(time.Hour)
	bf := &cronv1.Backfill{
		ObjectMeta: metav1.ObjectMeta{Name: "into-the-future", Namespace: ns},
		Spec: cronv1.BackfillSpec{CronJobName: cj.Name, Start: metav1.NewTime(past.Add(-2 * time.Hour)),
			End: metav1.NewTime(past.Add(3 * time.Hour)), MaxConcurrent: ptr.To[int32](5), Suspend: ptr.To(true)},
	}
	if _, err := env.cron.BatchV1().Backfills(ns).Create(context.Background(), bf, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	reason := func(want string) func() (bool, string) {
		return func() (bool, string) {
			cur, err := env.cron.BatchV1().Backfills(ns).Get(context.Background(), bf.Name, metav1.GetOptions{})
			if err != nil {
				return false, err.Error()
			}
			c := meta.FindStatusCondition(cur.Status.Conditions, cronv1.ConditionBackfillComplete)
			return c != nil && c.Reason == want, fmt.Sprintf("status %+v", cur.Status)
		}
	}
	eventually(t, 20*time.Second, "the Backfill suspended", reason("Suspended"))
	if n := len(listJobs(t, ns)); n != 0 {
		t.Errorf("%d Jobs while suspended", n)
	}
	patch := []byte(`{"spec":{"suspend":false}}`)
	if _, err := env.cron.BatchV1().Backfills(ns).Patch(context.Background(), bf.Name, "application/merge-patch+json", patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 20*time.Second, "the past times created, the later ones waiting for the CronJob", reason("WaitingForCronJob"))
	cur, _ := env.cron.BatchV1().Backfills(ns).Get(context.Background(), bf.Name, metav1.GetOptions{})
	if cur.Status.Total != 5 || cur.Status.Created != 3 {
		t.Errorf("status %+v, want total 5, created 3 (the times up to the CronJob's creation)", cur.Status)
	}
}

// spec.rerunPolicy on a real API server: a Backfill whose three runs fail;
// a second, IfFailed, over the same range runs each again in a Job of its
// own; a third, Never, runs none of them again. kubectl get -o wide shows
// the policy and how many runs were runs again.
func TestBackfillRerunsFailedTimesOnRequest(t *testing.T) {
	ns := newNamespace(t)
	startController(t)
	cj := createCronJob(t, cronJob(ns, "daily-load", "* * * * *", func(cj *cronv1.CronJob) {
		cj.Spec.TimeZone = ptr.To("UTC")
		cj.Spec.Suspend = ptr.To(true)
		cj.Spec.JobTemplate.Spec.Template.Spec.Containers[0].Args = []string{"/bin/sh", "-c", "exit 1"}
	}))
	end := cj.CreationTimestamp.Truncate(time.Minute)
	start := end.Add(-3 * time.Minute)
	run := func(name string, policy cronv1.RerunPolicy) *cronv1.Backfill {
		t.Helper()
		bf, err := env.cron.BatchV1().Backfills(ns).Create(context.Background(), &cronv1.Backfill{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
			Spec: cronv1.BackfillSpec{CronJobName: cj.Name, Start: metav1.NewTime(start), End: metav1.NewTime(end),
				MaxConcurrent: ptr.To[int32](3), RerunPolicy: policy},
		}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		eventually(t, 90*time.Second, "Backfill "+name+" complete", func() (bool, string) {
			if bf, err = env.cron.BatchV1().Backfills(ns).Get(context.Background(), name, metav1.GetOptions{}); err != nil {
				return false, err.Error()
			}
			return meta.IsStatusConditionTrue(bf.Status.Conditions, cronv1.ConditionBackfillComplete), fmt.Sprintf("status %+v", bf.Status)
		})
		return bf
	}
	if st := run("first", "").Status; st.Created != 3 || st.Failed != 3 || st.Rerun != 0 {
		t.Fatalf("first Backfill: status %+v, want 3 created, 3 failed", st)
	}
	again := run("again", cronv1.RerunIfFailed)
	if st := again.Status; st.Created != 3 || st.Rerun != 3 || st.Skipped != 0 {
		t.Errorf("IfFailed Backfill: status %+v, want the 3 failed times run again", st)
	}
	for tm := start; tm.Before(end); tm = tm.Add(time.Minute) {
		if _, err := env.kube.BatchV1().Jobs(ns).Get(context.Background(), job.RerunName(cj.Name, again.UID, tm), metav1.GetOptions{}); err != nil {
			t.Errorf("no Job running %v again: %v", tm, err)
		}
	}
	if st := run("never", cronv1.RerunNever).Status; st.Created != 0 || st.Skipped != 3 {
		t.Errorf("Never Backfill: status %+v, want the 3 times skipped as already run", st)
	}
	out, err := kubectl("get", "backfills.batch.tutorial.kubebuilder.io", "-n", ns, "again", "-o", "wide")
	if header := strings.Fields(strings.SplitN(out, "\n", 2)[0]); err != nil || !slices.Contains(header, "POLICY") || !strings.Contains(out, "IfFailed") {
		t.Errorf("kubectl get -o wide does not show the rerun policy: %v\n%s", err, out)
	}
	if n := len(listJobs(t, ns)); n != 6 {
		t.Errorf("%d Jobs, want 6: 3 runs and 3 runs again", n)
	}
}

// The API server refuses a Backfill with an empty range, no CronJob,
// maxConcurrent below 1 or an unknown rerun policy, and a change of its
// CronJob or rerun policy; each with a one-line message naming the field.
func TestBackfillRefusals(t *testing.T) {
	ns := newNamespace(t)
	now := time.Now().Truncate(time.Minute)
	valid := func() *cronv1.Backfill {
		return &cronv1.Backfill{
			ObjectMeta: metav1.ObjectMeta{Name: "bf", Namespace: ns},
			Spec:       cronv1.BackfillSpec{CronJobName: "cj", Start: metav1.NewTime(now.Add(-time.Hour)), End: metav1.NewTime(now)},
		}
	}
	for _, tc := range []struct {
		name string
		edit func(*cronv1.Backfill)
		want string
	}{
		{"start equals end", func(bf *cronv1.Backfill) { bf.Spec.Start = bf.Spec.End }, "spec.start must be before spec.end"},
		{"start after end", func(bf *cronv1.Backfill) { bf.Spec.Start = metav1.NewTime(now.Add(time.Hour)) }, "spec.start must be before spec.end"},
		{"no CronJob", func(bf *cronv1.Backfill) { bf.Spec.CronJobName = "" }, "spec.cronJobName"},
		{"maxConcurrent 0", func(bf *cronv1.Backfill) { bf.Spec.MaxConcurrent = ptr.To[int32](0) }, "spec.maxConcurrent"},
		{"unknown rerun policy", func(bf *cronv1.Backfill) { bf.Spec.RerunPolicy = "OnFailure" }, `spec.rerunPolicy: Unsupported value: "OnFailure"`},
	} {
		bf := valid()
		tc.edit(bf)
		_, err := env.cron.BatchV1().Backfills(ns).Create(context.Background(), bf, metav1.CreateOptions{})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: create answered %v, want a refusal mentioning %q", tc.name, err, tc.want)
		}
	}
	created, err := env.cron.BatchV1().Backfills(ns).Create(context.Background(), valid(), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if ptr.Deref(created.Spec.MaxConcurrent, 0) != 1 || ptr.Deref(created.Spec.Suspend, true) || created.Spec.RerunPolicy != cronv1.RerunNever {
		t.Errorf("defaults: maxConcurrent %v, suspend %v, rerunPolicy %q; want 1, false, Never", created.Spec.MaxConcurrent, created.Spec.Suspend, created.Spec.RerunPolicy)
	}
	for field, edit := range map[string]func(*cronv1.Backfill){
		"spec.cronJobName": func(bf *cronv1.Backfill) { bf.Spec.CronJobName = "other" },
		"spec.rerunPolicy": func(bf *cronv1.Backfill) { bf.Spec.RerunPolicy = cronv1.RerunAlways },
	} {
		changed := created.DeepCopy()
		edit(changed)
		if _, err := env.cron.BatchV1().Backfills(ns).Update(context.Background(), changed, metav1.UpdateOptions{}); err == nil || !strings.Contains(err.Error(), field+": Invalid value") || !strings.Contains(err.Error(), "cannot be changed") {
			t.Errorf("changing %s answered %v, want a refusal", field, err)
		}
	}
}

// With -shards, Backfills are worked by the replica holding each one's
// shard: two replicas share four shards; four CronJobs, each with a
// Backfill of the five minutes before it was created. Every Backfill
// completes with one Job per time, each released once recorded.
func TestShardedBackfills(t *testing.T) {
	ns := newNamespace(t)
	for range 2 {
		startController(t, "-shards=4", "-leader-elect-namespace="+ns, "-leader-elect-id=bf-shards",
			"-leader-elect-lease-duration=6s", "-leader-elect-renew-deadline=4s", "-leader-elect-retry-period=1s")
	}
	type pair struct {
		cj *cronv1.CronJob
		bf *cronv1.Backfill
	}
	var pairs []pair
	for i := range 4 {
		cj := createCronJob(t, cronJob(ns, fmt.Sprintf("every-minute-%d", i), "* * * * *", func(cj *cronv1.CronJob) {
			cj.Spec.TimeZone = ptr.To("UTC")
		}))
		end := cj.CreationTimestamp.Truncate(time.Minute)
		bf := &cronv1.Backfill{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("fill-%d", i), Namespace: ns},
			Spec: cronv1.BackfillSpec{CronJobName: cj.Name, Start: metav1.NewTime(end.Add(-5 * time.Minute)), End: metav1.NewTime(end),
				MaxConcurrent: ptr.To[int32](5)},
		}
		if _, err := env.cron.BatchV1().Backfills(ns).Create(context.Background(), bf, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		pairs = append(pairs, pair{cj, bf})
	}
	eventually(t, 90*time.Second, "every Backfill complete, its Jobs released", func() (bool, string) {
		jobs := listJobs(t, ns)
		for _, p := range pairs {
			cur, err := env.cron.BatchV1().Backfills(ns).Get(context.Background(), p.bf.Name, metav1.GetOptions{})
			if err != nil {
				return false, err.Error()
			}
			if !meta.IsStatusConditionTrue(cur.Status.Conditions, cronv1.ConditionBackfillComplete) {
				return false, fmt.Sprintf("%s: status %+v", p.bf.Name, cur.Status)
			}
			if cur.Status.Total != 5 || cur.Status.Created != 5 || cur.Status.Skipped != 0 {
				t.Fatalf("%s: status %+v, want 5 times, 5 created", p.bf.Name, cur.Status)
			}
			var mine int
			for _, j := range jobs {
				if ref := metav1.GetControllerOf(&j); ref != nil && ref.Kind == "Backfill" && ref.UID == cur.UID {
					mine++
					if len(j.Finalizers) != 0 {
						return false, fmt.Sprintf("%s still holds %v", j.Name, j.Finalizers)
					}
				}
			}
			if mine != 5 {
				return false, fmt.Sprintf("%s: %d Jobs, want 5", p.bf.Name, mine)
			}
		}
		return true, ""
	})
}
