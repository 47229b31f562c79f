package main

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr/funcr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes/scheme"

	"github.com/cronjob-controller/cronjob-controller/pkg/planner"
)

// At make run's -v (followedEventVerbosity) the terminal shows one line per
// Job finished and per run missed (a Job created has its own "Created Job"
// line at that -v, so its Event waits for eventLogVerbosity, as every other).
func TestEventLogLinesByVerbosity(t *testing.T) {
	reasons := []string{planner.ReasonSuccessfulCreate, planner.ReasonSawCompletedJob, planner.ReasonSuccessfulDelete,
		planner.ReasonMissSchedule, planner.ReasonTooManyMissedTimes, planner.ReasonJobAlreadyActive,
		planner.ReasonRunExcluded, planner.ReasonRunHeld, planner.ReasonFailedCreate}
	for _, tc := range []struct {
		v    int
		want []string
	}{
		{0, nil},
		{followedEventVerbosity, []string{planner.ReasonSawCompletedJob, planner.ReasonMissSchedule,
			planner.ReasonTooManyMissedTimes, planner.ReasonRunExcluded, planner.ReasonRunHeld}},
		{eventLogVerbosity, reasons},
	} {
		var lines []string
		logger := funcr.New(func(_, args string) { lines = append(lines, args) }, funcr.Options{Verbosity: tc.v})
		var got []string
		for _, r := range reasons {
			n := len(lines)
			logEvent(logger, &corev1.Event{Reason: r, Type: corev1.EventTypeNormal, Message: "m",
				InvolvedObject: corev1.ObjectReference{Kind: "CronJob", Namespace: "default", Name: "cj"}})
			switch len(lines) - n {
			case 0:
			case 1:
				if !strings.Contains(lines[n], `"reason"="`+r+`"`) || !strings.Contains(lines[n], `"name"="cj"`) {
					t.Errorf("-v=%d: the line for %s is %s", tc.v, r, lines[n])
				}
				got = append(got, r)
			default:
				t.Errorf("-v=%d: %d lines for one %s Event", tc.v, len(lines)-n, r)
			}
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("-v=%d: lines for %q, want %q", tc.v, got, tc.want)
		}
	}
}

// The broadcaster's Events reach the log.
func TestStartEventLoggingLogsRecordedEvents(t *testing.T) {
	logged := make(chan string, 1)
	logger := funcr.New(func(_, args string) { logged <- args }, funcr.Options{Verbosity: followedEventVerbosity})
	b := newEventBroadcaster(context.Background())
	defer b.Shutdown()
	startEventLogging(b, logger)
	b.NewRecorder(scheme.Scheme, corev1.EventSource{Component: controllerAgentName}).
		Event(&corev1.ObjectReference{Kind: "CronJob", Namespace: "default", Name: "cj"}, corev1.EventTypeNormal, planner.ReasonSawCompletedJob, "Saw completed job")
	select {
	case l := <-logged:
		if !strings.Contains(l, `"reason"="SawCompletedJob"`) {
			t.Errorf("logged %s", l)
		}
	case <-time.After(wait.ForeverTestTimeout):
		t.Fatal("a recorded Event was never logged")
	}
}
