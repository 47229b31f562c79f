package faultproxy

import (
	"bytes"
	"crypto/tls"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	"k8s.io/client-go/kubernetes/scheme"
)

// backend stands in for the API server: it counts what reaches it, answers
// writes with 201 and streams a watch until the client goes.
type backend struct {
	server *httptest.Server
	hits   atomic.Int64
}

func newBackend(t *testing.T) *backend {
	t.Helper()
	b := &backend{}
	b.server = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b.hits.Add(1)
		if r.URL.Query().Get("watch") == "true" {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusOK)
			tick := time.NewTicker(10 * time.Millisecond)
			defer tick.Stop()
			for {
				select {
				case <-r.Context().Done():
					return
				case <-tick.C:
					fmt.Fprintln(w, `{"type":"BOOKMARK"}`)
					w.(http.Flusher).Flush()
				}
			}
		}
		if r.Method == http.MethodPost {
			w.WriteHeader(http.StatusCreated)
		}
		_, _ = io.WriteString(w, `{"kind":"Status"}`)
	}))
	t.Cleanup(b.server.Close)
	return b
}

func newProxy(t *testing.T, cfg Config) *Proxy {
	t.Helper()
	p, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	return p
}

func client() *http.Client {
	return &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		TLSClientConfig:   &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // test
		DisableKeepAlives: true,
	}}
}

// waitEntries waits for the proxy to record n requests: a client sees a
// reset before the proxy's handler has returned.
func waitEntries(t *testing.T, p *Proxy, n int) []Entry {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		e := p.Entries()
		if len(e) >= n || time.Now().After(deadline) {
			return e
		}
		time.Sleep(5 * time.Millisecond)
	}
}

const jobsPath = "/apis/batch/v1/namespaces/ns/jobs"

func post(t *testing.T, url string) (*http.Response, error) {
	t.Helper()
	resp, err := client().Post(url+jobsPath, "application/json", strings.NewReader(`{"metadata":{"name":"job-1"}}`))
	if err == nil {
		_, _ = io.ReadAll(resp.Body)
		resp.Body.Close()
	}
	return resp, err
}

// Each kind does what it says, seen from the client and from the server.
func TestFaultKinds(t *testing.T) {
	for _, tc := range []struct {
		kind      Kind
		wantCode  int // 0: the request fails at the transport
		forwarded bool
	}{
		{Throttle, http.StatusTooManyRequests, false},
		{ServerError, http.StatusInternalServerError, false},
		{Unavailable, http.StatusServiceUnavailable, false},
		{Reset, 0, false},
		{Latency, http.StatusCreated, true},
		{AppliedError, http.StatusInternalServerError, true},
		{AppliedReset, 0, true},
	} {
		t.Run(string(tc.kind), func(t *testing.T) {
			b := newBackend(t)
			p := newProxy(t, Config{Target: b.server.URL, Seed: 1, Rules: []Rule{{Kind: tc.kind, Rate: 1}},
				MinLatency: 50 * time.Millisecond, MaxLatency: 100 * time.Millisecond})
			start := time.Now()
			resp, err := post(t, p.URL)
			took := time.Since(start)
			switch {
			case tc.wantCode == 0 && err == nil:
				t.Fatalf("got %d, want the connection reset", resp.StatusCode)
			case tc.wantCode != 0 && err != nil:
				t.Fatalf("got %v, want %d", err, tc.wantCode)
			case tc.wantCode != 0 && resp.StatusCode != tc.wantCode:
				t.Fatalf("got %d, want %d", resp.StatusCode, tc.wantCode)
			}
			if got := b.hits.Load() == 1; got != tc.forwarded {
				t.Errorf("the server got %d requests, want forwarded=%v", b.hits.Load(), tc.forwarded)
			}
			if tc.kind == Throttle {
				if s := resp.Header.Get("Retry-After"); s != "1" && s != "2" && s != "3" {
					t.Errorf("Retry-After %q, want 1 to 3", s)
				}
			}
			if tc.kind == Latency && took < 50*time.Millisecond {
				t.Errorf("answered after %v, want at least 50ms", took)
			}
			entries := waitEntries(t, p, 1)
			if len(entries) != 1 {
				t.Fatalf("%d entries, want 1", len(entries))
			}
			e := entries[0]
			if e.Fault != tc.kind || e.Verb != "create" || e.FullResource() != "jobs" || e.Name != "job-1" || e.Code != tc.wantCode {
				t.Errorf("entry %+v", e)
			}
			if e.Applied() != tc.forwarded {
				t.Errorf("entry says applied=%v, want %v", e.Applied(), tc.forwarded)
			}
		})
	}
}

// A cut watch ends within MaxWatchAge, abruptly; an unfaulted one keeps
// streaming.
func TestWatchCut(t *testing.T) {
	b := newBackend(t)
	p := newProxy(t, Config{Target: b.server.URL, Seed: 7, Rules: []Rule{{Kind: WatchCut, Rate: 1}}, MaxWatchAge: 200 * time.Millisecond})
	start := time.Now()
	// A cut may come before the headers or in the stream; either way the
	// client sees an error, never a clean end.
	resp, err := client().Get(p.URL + jobsPath + "?watch=true")
	if err == nil {
		var lines []byte
		lines, err = io.ReadAll(resp.Body)
		resp.Body.Close()
		t.Logf("read %d bytes before the cut", len(lines))
	}
	if err == nil {
		t.Errorf("the stream ended cleanly, want it cut")
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("the watch ran %v, want it cut within 200ms", took)
	}

	// Rules for watches leave other requests alone.
	resp, err = post(t, p.URL)
	if err != nil || resp.StatusCode != http.StatusCreated {
		t.Errorf("a create through a watch-only rule: %v %v", resp, err)
	}
	waitEntries(t, p, 2)
	if _, faults := p.Counts(); faults[WatchCut] != 1 || len(faults) != 1 {
		t.Errorf("faults %v, want one watch cut", faults)
	}
}

// CutWatches ends the watches in flight, abruptly, and only those.
func TestCutWatches(t *testing.T) {
	b := newBackend(t)
	p := newProxy(t, Config{Target: b.server.URL})
	resp, err := client().Get(p.URL + jobsPath + "?watch=true")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	// The watch is in flight once its first event is through.
	if _, err := resp.Body.Read(make([]byte, 1)); err != nil {
		t.Fatal(err)
	}
	if n := p.CutWatches(); n != 1 {
		t.Fatalf("cut %d watches, want 1", n)
	}
	if _, err := io.ReadAll(resp.Body); err == nil {
		t.Error("the stream ended cleanly, want it cut")
	}
	if e := waitEntries(t, p, 1); len(e) != 1 || e[0].Fault != WatchCut {
		t.Errorf("entries %+v, want one watch cut", e)
	}
	if n := p.CutWatches(); n != 0 {
		t.Errorf("cut %d watches after the only one ended", n)
	}
}

// Rules restricted by verb and resource fault only what they name.
func TestRuleScope(t *testing.T) {
	b := newBackend(t)
	p := newProxy(t, Config{Target: b.server.URL, Seed: 3, Rules: []Rule{
		{Kind: ServerError, Rate: 1, Verbs: []string{"create"}, Resources: []string{"jobs"}},
		{Kind: Throttle, Rate: 1, Verbs: []string{"update"}, Resources: []string{"cronjobs/status"}},
	}})
	do := func(method, path string) int {
		req, _ := http.NewRequest(method, p.URL+path, bytes.NewReader([]byte(`{}`)))
		resp, err := client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	for _, tc := range []struct {
		method, path string
		want         int
	}{
		{"POST", jobsPath, 500},
		{"GET", jobsPath + "/x", 200},
		{"POST", "/api/v1/namespaces/ns/events", 201},
		{"PUT", "/apis/batch.tutorial.kubebuilder.io/v1/namespaces/ns/cronjobs/c/status", 429},
		{"PUT", "/apis/batch.tutorial.kubebuilder.io/v1/namespaces/ns/cronjobs/c", 200},
	} {
		if got := do(tc.method, tc.path); got != tc.want {
			t.Errorf("%s %s: %d, want %d", tc.method, tc.path, got, tc.want)
		}
	}
}

// A seed fixes the faults of the k-th request of each class, however the
// classes interleave; another seed gives others.
func TestSeedReplays(t *testing.T) {
	rules := Spread(0.3)
	infos := []RequestInfo{
		{Verb: "create", Resource: "jobs"},
		{Verb: "watch", Resource: "jobs"},
		{Verb: "get", Resource: "jobs"},
		{Verb: "update", Resource: "cronjobs", Subresource: "status"},
	}
	run := func(seed uint64, order func(i int) int) map[int][]Kind {
		p := &Proxy{cfg: Config{Seed: seed, Rules: rules}, matched: map[classKey]uint64{}}
		p.armed.Store(true)
		out := map[int][]Kind{}
		for i := range 400 {
			c := order(i)
			k, _ := p.decide(infos[c])
			out[c] = append(out[c], k)
		}
		return out
	}
	a := run(42, func(i int) int { return i % 4 })
	b := run(42, func(i int) int { return (i / 100) })
	if fmt.Sprint(a) != fmt.Sprint(b) {
		t.Errorf("the same seed gave different faults per class")
	}
	if c := run(43, func(i int) int { return i % 4 }); fmt.Sprint(a) == fmt.Sprint(c) {
		t.Errorf("seeds 42 and 43 gave the same faults")
	}
}

// Spread faults the asked share of requests, each fitting kind about as
// often as the others.
func TestSpreadRates(t *testing.T) {
	const n = 20000
	rules := Spread(0.1)
	p := &Proxy{cfg: Config{Seed: 9, Rules: rules}, matched: map[classKey]uint64{}}
	p.armed.Store(true)
	for _, info := range []RequestInfo{{Verb: "create", Resource: "jobs"}, {Verb: "watch", Resource: "jobs"}, {Verb: "list", Resource: "jobs"}} {
		counts := map[Kind]int{}
		for range n {
			k, _ := p.decide(info)
			counts[k]++
		}
		faulted := n - counts[None]
		if got := float64(faulted) / n; math.Abs(got-0.1) > 0.01 {
			t.Errorf("%s: %.3f faulted, want 0.1", info.Verb, got)
		}
		kinds := len(counts) - 1
		for k, c := range counts {
			if k == None {
				continue
			}
			if share := float64(c) / float64(faulted); math.Abs(share-1/float64(kinds)) > 0.03 {
				t.Errorf("%s: %s is %.3f of faults, want %.3f", info.Verb, k, share, 1/float64(kinds))
			}
		}
		t.Logf("%s: %v", info.Verb, counts)
	}
}

// Disarmed, the proxy forwards everything; armed, it faults.
func TestArm(t *testing.T) {
	b := newBackend(t)
	p := newProxy(t, Config{Target: b.server.URL, Rules: []Rule{{Kind: ServerError, Rate: 1}}, Disarmed: true})
	if resp, err := post(t, p.URL); err != nil || resp.StatusCode != http.StatusCreated {
		t.Fatalf("disarmed: %v %v", resp, err)
	}
	p.Arm()
	if resp, err := post(t, p.URL); err != nil || resp.StatusCode != http.StatusInternalServerError {
		t.Fatalf("armed: %v %v", resp, err)
	}
}

func TestNotLoopback(t *testing.T) {
	if _, err := New(Config{Target: "https://10.0.0.1:6443"}); err == nil {
		t.Error("a proxy to a remote target started")
	}
}

func TestParseRequest(t *testing.T) {
	for _, tc := range []struct {
		method, url string
		want        RequestInfo
	}{
		{"GET", "/api/v1/namespaces/ns/pods?watch=true", RequestInfo{Verb: "watch", Resource: "pods", Namespace: "ns"}},
		{"GET", "/apis/batch/v1/jobs", RequestInfo{Verb: "list", Group: "batch", Resource: "jobs"}},
		{"GET", "/apis/batch/v1/namespaces/ns/jobs/j", RequestInfo{Verb: "get", Group: "batch", Resource: "jobs", Namespace: "ns", Name: "j"}},
		{"PUT", "/apis/g/v1/namespaces/ns/cronjobs/c/status", RequestInfo{Verb: "update", Group: "g", Resource: "cronjobs", Subresource: "status", Namespace: "ns", Name: "c"}},
		{"DELETE", "/apis/batch/v1/namespaces/ns/jobs", RequestInfo{Verb: "deletecollection", Group: "batch", Resource: "jobs", Namespace: "ns"}},
		{"GET", "/api/v1/namespaces/ns", RequestInfo{Verb: "get", Resource: "namespaces", Namespace: "ns", Name: "ns"}},
		{"PATCH", "/api/v1/namespaces/ns/events/e", RequestInfo{Verb: "patch", Resource: "events", Namespace: "ns", Name: "e"}},
		{"GET", "/version", RequestInfo{Verb: "get"}},
	} {
		req := httptest.NewRequest(tc.method, tc.url, nil)
		got := ParseRequest(req)
		tc.want.Method = tc.method
		// namespaces/NS alone names the namespace object.
		if tc.want.Resource == "namespaces" {
			tc.want.Namespace = "ns"
		}
		if got != tc.want {
			t.Errorf("%s %s: %+v, want %+v", tc.method, tc.url, got, tc.want)
		}
	}
}

// The name of a created object is read from JSON and from Kubernetes
// protobuf, which the controller sends Jobs in.
func TestObjectName(t *testing.T) {
	j := &batchv1.Job{TypeMeta: metav1.TypeMeta{APIVersion: "batch/v1", Kind: "Job"}, ObjectMeta: metav1.ObjectMeta{Name: "fleet-001-1700000000", Namespace: "ns", Labels: map[string]string{"a": "b"}}}
	var pb bytes.Buffer
	if err := protobuf.NewSerializer(scheme.Scheme, scheme.Scheme).Encode(j, &pb); err != nil {
		t.Fatal(err)
	}
	if got := objectName(pb.Bytes()); got != j.Name {
		t.Errorf("protobuf: %q, want %q", got, j.Name)
	}
	js, _ := runtime.Encode(scheme.Codecs.LegacyCodec(batchv1.SchemeGroupVersion), j)
	if got := objectName(js); got != j.Name {
		t.Errorf("JSON: %q, want %q", got, j.Name)
	}
	if got := objectName([]byte(`{"metadata":{"generateName":"x-"}}`)); got != "x-*" {
		t.Errorf("generateName: %q", got)
	}
	if got := objectName([]byte("garbage")); got != "" {
		t.Errorf("garbage: %q", got)
	}
}
