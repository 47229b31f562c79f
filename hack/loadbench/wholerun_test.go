package main

import (
	"maps"
	"testing"
)

// The whole run's writes are counted by resource, subresource and verb,
// a refused write apart under its code, and the heartbeats and the API
// server's own endpoints, which go on with no run, left out.
func TestRunWritesCountsRefusedApartAndLeavesBackgroundOut(t *testing.T) {
	metrics := `# HELP apiserver_request_total [STABLE] Counter of apiserver requests
apiserver_request_total{code="200",component="apiserver",dry_run="",group="batch",resource="jobs",scope="resource",subresource="",verb="DELETE",version="v1"} 7
apiserver_request_total{code="404",component="apiserver",dry_run="",group="batch",resource="jobs",scope="resource",subresource="",verb="DELETE",version="v1"} 2
apiserver_request_total{code="200",component="apiserver",dry_run="",group="batch.tutorial.kubebuilder.io",resource="cronjobs",scope="resource",subresource="status",verb="PUT",version="v1"} 5
apiserver_request_total{code="201",component="apiserver",dry_run="",group="events.k8s.io",resource="events",scope="resource",subresource="",verb="POST",version="v1"} 3
apiserver_request_total{code="200",component="apiserver",dry_run="",group="",resource="pods",scope="namespace",subresource="",verb="LIST",version="v1"} 9
apiserver_request_total{code="200",component="apiserver",dry_run="",group="coordination.k8s.io",resource="leases",scope="resource",subresource="",verb="PUT",version="v1"} 40
apiserver_request_total{code="422",component="apiserver",dry_run="",group="",resource="endpoints",scope="resource",subresource="",verb="POST",version="v1"} 6
apiserver_request_total{code="200",component="apiserver",dry_run="",group="",resource="nodes",scope="resource",subresource="status",verb="PATCH",version="v1"} 11
`
	want := map[string]float64{
		"jobs DELETE":               7,
		"jobs DELETE 404":           2,
		"cronjobs/status PUT":       5,
		"events.k8s.io events POST": 3,
	}
	if got := runWrites(metrics); !maps.Equal(got, want) {
		t.Errorf("runWrites = %v, want %v", got, want)
	}
}

// The CronJob controller's writes are its CronJobs' and the Jobs
// themselves, refused ones too; the Jobs' status is the Job controller's.
func TestCronJobControllersWritesAreCronJobsAndJobsNotTheirStatus(t *testing.T) {
	for key, want := range map[string]bool{
		"cronjobs/status PUT":     true,
		"cronjobs/status PUT 409": true,
		"jobs POST":               true,
		"jobs DELETE 404":         true,
		"jobs/status PUT":         false,
		"pods POST":               false,
		"events POST":             false,
	} {
		if got := cronJobControllersWrite(key); got != want {
			t.Errorf("cronJobControllersWrite(%q) = %v, want %v", key, got, want)
		}
	}
}
