package metrics

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"

	cronv1 "github.com/cronjob-controller/cronjob-controller/pkg/apis/batch/v1"
	"github.com/cronjob-controller/cronjob-controller/pkg/slim"
)

// fleet is n CronJobs as a cache holds them after a while in production:
// spread over n/100 namespaces with names of a usual length, every one has
// run and succeeded and has a next run; one in ten has a Job running, one
// in twenty is suspended (no next run), one in ten has missed runs for one
// reason and one in fifty for a second.
func fleet(tb testing.TB, n int) cache.Store {
	tb.Helper()
	store := cache.NewStore(cache.MetaNamespaceKeyFunc)
	base := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	for i := range n {
		cj := &cronv1.CronJob{ObjectMeta: metav1.ObjectMeta{
			Namespace: fmt.Sprintf("team-%03d", i/100),
			Name:      fmt.Sprintf("nightly-report-%05d", i),
		}}
		cj.Spec.Schedule = "H * * * *"
		last := base.Add(-time.Duration(i%60) * time.Minute)
		cj.Status.LastScheduleTime = &metav1.Time{Time: last}
		cj.Status.LastSuccessfulTime = &metav1.Time{Time: last.Add(-55 * time.Minute)}
		if i%20 == 0 {
			cj.Spec.Suspend = ptr.To(true)
		} else {
			cj.Status.NextScheduleTime = &metav1.Time{Time: last.Add(time.Hour)}
		}
		if i%10 == 1 {
			cj.Status.Active = []corev1.ObjectReference{{Namespace: cj.Namespace, Name: fmt.Sprintf("%s-%d", cj.Name, last.Unix())}}
			cj.Status.ActiveCount = 1
		}
		if i%10 == 2 {
			cj.Status.MissedRuns = append(cj.Status.MissedRuns, cronv1.MissedRuns{Reason: cronv1.MissedDeadlineExceeded, Count: int64(i % 7), LastTime: metav1.Time{Time: last}})
		}
		if i%50 == 2 {
			cj.Status.MissedRuns = append(cj.Status.MissedRuns, cronv1.MissedRuns{Reason: cronv1.MissedConcurrencyForbidden, Count: 1, LastTime: metav1.Time{Time: last}})
		}
		if err := store.Add(slim.NewCronJob(cj)); err != nil {
			tb.Fatal(err)
		}
	}
	return store
}

// BenchmarkScrapePerCronJob is one scrape of /metrics holding only the
// per-CronJob series of 10,000 CronJobs, through the handler the
// controller serves, as plain text and gzipped as Prometheus asks for it.
// It reports the series and the bytes of one scrape.
func BenchmarkScrapePerCronJob(b *testing.B) {
	const n = 10000
	reg := prometheus.NewRegistry()
	reg.MustRegister(NewCronJobCollector(fleet(b, n), func() bool { return true }))
	families, err := reg.Gather()
	if err != nil {
		b.Fatal(err)
	}
	series := 0
	for _, f := range families {
		series += len(f.GetMetric())
	}
	handler := promhttp.HandlerFor(reg, promhttp.HandlerOpts{})
	for _, encoding := range []string{"identity", "gzip"} {
		b.Run(fmt.Sprintf("cronjobs=%d/encoding=%s", n, encoding), func(b *testing.B) {
			req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
			req.Header.Set("Accept-Encoding", encoding)
			var w countingWriter
			b.ReportAllocs()
			cpu := cpuTime(b)
			for b.Loop() {
				w = countingWriter{header: http.Header{}}
				handler.ServeHTTP(&w, req)
				if w.code != http.StatusOK {
					b.Fatalf("scrape answered %d", w.code)
				}
			}
			// The machine is shared, so wall time (ns/op) includes waiting
			// for a core; the process's CPU time (GC included) does not.
			b.ReportMetric(float64(cpuTime(b)-cpu)/float64(b.N), "cpu-ns/op")
			b.ReportMetric(float64(series), "series")
			b.ReportMetric(float64(w.n), "bytes/scrape")
		})
	}
}

// cpuTime is the CPU time, user and system, the process has used.
func cpuTime(tb testing.TB) time.Duration {
	var u syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &u); err != nil {
		tb.Fatal(err)
	}
	return time.Duration(u.Utime.Nano() + u.Stime.Nano())
}

// countingWriter is a connection that counts what it is sent: unlike an
// httptest.ResponseRecorder it keeps no copy, so B/op is the handler's own.
type countingWriter struct {
	header http.Header
	code   int
	n      int
}

func (w *countingWriter) Header() http.Header { return w.header }

func (w *countingWriter) WriteHeader(code int) {
	if w.code == 0 {
		w.code = code
	}
}

func (w *countingWriter) Write(p []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	w.n += len(p)
	return len(p), nil
}
