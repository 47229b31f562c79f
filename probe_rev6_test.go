package main

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/record"

	cronv1 "github.com/cronjob-controller/cronjob-controller/pkg/apis/batch/v1"
	"github.com/cronjob-controller/cronjob-controller/pkg/planner"
)

// A CronJob with Events held must have its later Events held behind them,
// even when the hold is full: otherwise the later Event is recorded first and
// the CronJob's Events are reordered (issue #16: never reordered per CronJob).
func TestProbeRev6HoldFullKeepsPerCronJobOrder(t *testing.T) {
	f := newFixture(t, time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	f.recorder = record.NewFakeRecorder(maxHeldEvents + 10)
	c, _, _ := f.newController(context.Background())

	a := &cronv1.CronJob{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "a", UID: "uid-a"}}
	b := &cronv1.CronJob{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "b", UID: "uid-b"}}
	now := f.clock.Now()

	// a's first Event is held in a burst.
	c.report(a, &planner.Plan{Events: []planner.Event{{Type: corev1.EventTypeNormal, Reason: "First", Message: "a1"}}}, true)
	// Other CronJobs fill the hold to its bound.
	filler := make([]planner.Event, maxHeldEvents-1)
	for i := range filler {
		filler[i] = planner.Event{Type: corev1.EventTypeNormal, Reason: "Filler", Message: fmt.Sprint(i)}
	}
	if !c.heldEvents.hold(b, filler, true, now) {
		t.Fatal("filler not held")
	}
	// a's next Event, outside a burst: a still has an Event held.
	c.report(a, &planner.Plan{Events: []planner.Event{{Type: corev1.EventTypeNormal, Reason: "Second", Message: "a2"}}}, false)

	c.flushHeldEvents(context.Background())
	// a's Events in the order the recorder saw them.
	var got []string
	for _, e := range f.events() {
		if e == "Normal First" || e == "Normal Second" {
			got = append(got, e)
		}
	}
	if want := []string{"Normal First", "Normal Second"}; !slices.Equal(got, want) {
		t.Errorf("a's Events recorded as %q, want %q (later Event overtook the held one when the hold was full)", got, want)
	}
}
