package main

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	cronv1 "github.com/cronjob-controller/cronjob-controller/pkg/apis/batch/v1"
	"github.com/cronjob-controller/cronjob-controller/pkg/slim"
)

// -per-cronjob-metrics=false leaves every cronjob_controller_cronjob_*
// series out; true serves them.
func TestPerCronJobMetricsFlag(t *testing.T) {
	store := cache.NewStore(cache.MetaNamespaceKeyFunc)
	cj := &cronv1.CronJob{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "cj"}}
	if err := store.Add(slim.NewCronJob(cj)); err != nil {
		t.Fatal(err)
	}
	for _, on := range []bool{false, true} {
		reg := prometheus.NewRegistry()
		registerPerCronJobMetrics(reg, on, store, func() bool { return true })
		families, err := reg.Gather()
		if err != nil {
			t.Fatal(err)
		}
		var series int
		for _, f := range families {
			if strings.HasPrefix(f.GetName(), "cronjob_controller_cronjob_") {
				series += len(f.GetMetric())
			}
		}
		switch {
		case !on && series != 0:
			t.Errorf("-per-cronjob-metrics=false: %d per-CronJob series, want none", series)
		case on && series != 2:
			t.Errorf("-per-cronjob-metrics=true: %d per-CronJob series, want 2 (active, suspend)", series)
		}
	}
}
