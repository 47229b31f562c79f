package backfill

import (
	"errors"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	cronv1 "github.com/cronjob-controller/cronjob-controller/pkg/apis/batch/v1"
)

// The Jobs of a Backfill named longer than a label value may be (stored
// before the schema capped the name) carry only labels the API server
// accepts: a label the API server refuses would make every create fail.
func TestLongBackfillNameMakesValidJobs(t *testing.T) {
	last := hour(5)
	bf := backfillOf(hour(1), hour(2), 1)
	bf.Name = strings.Repeat("b", 80)
	p := Decide(Input{Backfill: bf, CronJob: cronJob(hour(-1), &last), Job: lookup(), Now: hour(6)})
	if len(p.Creates) == 0 {
		t.Fatal("nothing to create; the case tests nothing")
	}
	for k, v := range p.Creates[0].Job.Labels {
		if errs := validation.IsValidLabelValue(v); len(errs) > 0 {
			t.Errorf("label %s=%q is refused: %v", k, v, errs)
		}
	}
}

// A create the API server refuses as invalid is not retried: the time is
// skipped and counted, a JobTemplateValid=False condition says why, and the
// Backfill goes on to its other times and completes.
func TestRejectedBackfillJobIsSkippedNotRetried(t *testing.T) {
	last := hour(5)
	bf := backfillOf(hour(1), hour(3), 2)
	p := Decide(Input{Backfill: bf, CronJob: cronJob(hour(-1), &last), Job: lookup(), Now: hour(6)})
	if len(p.Creates) != 2 {
		t.Fatalf("creates %d, want 2", len(p.Creates))
	}
	for _, c := range p.Creates {
		p.Rejected(c, errors.New(`Job.batch "x" is invalid: metadata.labels: Invalid value`))
	}
	st := p.Status
	if st.Skipped != 2 || st.Created != 0 || len(st.Active) != 0 {
		t.Errorf("status %+v, want both times skipped", st)
	}
	if c := meta.FindStatusCondition(st.Conditions, cronv1.ConditionJobTemplateValid); c == nil || c.Status != metav1.ConditionFalse || !strings.Contains(c.Message, "Invalid value") {
		t.Errorf("JobTemplateValid = %+v, want False with the API server's answer", c)
	}
	if !meta.IsStatusConditionTrue(st.Conditions, cronv1.ConditionBackfillComplete) {
		t.Errorf("not complete after every time was handled: %+v", st.Conditions)
	}
	bf.Status = st
	if again := Decide(Input{Backfill: bf, CronJob: cronJob(hour(-1), &last), Job: lookup(), Now: hour(6)}); len(again.Creates) != 0 {
		t.Errorf("the next sync creates %d Jobs for times already rejected", len(again.Creates))
	}
}
