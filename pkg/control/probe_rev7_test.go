package control

// Review 7 probes of the metadata-only writes (commit aeba4ba). The two that
// found defects (the echo sharing a template the server never served, an
// answer without UID) failed on that commit and pass since.

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"

	cronv1 "github.com/cronjob-controller/cronjob-controller/pkg/apis/batch/v1"
	clientset "github.com/cronjob-controller/cronjob-controller/pkg/generated/clientset/versioned"
	cronscheme "github.com/cronjob-controller/cronjob-controller/pkg/generated/clientset/versioned/scheme"
)

// probeServer answers each request with the next scripted answer (the last
// one repeats), and records what it was sent.
type probeServer struct {
	mu      sync.Mutex
	answers []func(w http.ResponseWriter, r *http.Request, body []byte)
	seen    []request
	agents  []string
}

func (s *probeServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	s.mu.Lock()
	s.seen = append(s.seen, request{r.Method, r.URL.Path, r.Header.Get("Accept"), r.Header.Get("Content-Type"), body})
	s.agents = append(s.agents, r.Header.Get("User-Agent"))
	i := min(len(s.seen)-1, len(s.answers)-1)
	answer := s.answers[i]
	s.mu.Unlock()
	answer(w, r, body)
}

func newProbeServer(t *testing.T, answers ...func(w http.ResponseWriter, r *http.Request, body []byte)) (*probeServer, *rest.Config) {
	s := &probeServer{answers: answers}
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	return s, &rest.Config{Host: srv.URL}
}

// statusAnswer writes st in mediaType (JSON or protobuf), as the API server
// writes a refusal.
func statusAnswer(st metav1.Status, mediaType string) func(http.ResponseWriter, *http.Request, []byte) {
	return func(w http.ResponseWriter, _ *http.Request, _ []byte) {
		st.TypeMeta = metav1.TypeMeta{APIVersion: "v1", Kind: "Status"}
		info, _ := runtime.SerializerInfoForMediaType(scheme.Codecs.SupportedMediaTypes(), mediaType)
		data, err := runtime.Encode(scheme.Codecs.EncoderForVersion(info.Serializer, metav1.SchemeGroupVersion), &st)
		if err != nil {
			panic(err)
		}
		w.Header().Set("Content-Type", mediaType)
		w.WriteHeader(int(st.Code))
		_, _ = w.Write(data)
	}
}

// partialAnswer answers the stored metadata as PartialObjectMetadata in
// JSON.
func partialAnswer(code int, stored metav1.ObjectMeta) func(http.ResponseWriter, *http.Request, []byte) {
	return func(w http.ResponseWriter, _ *http.Request, _ []byte) {
		data, _ := json.Marshal(&metav1.PartialObjectMetadata{
			TypeMeta:   metav1.TypeMeta{APIVersion: "meta.k8s.io/v1", Kind: "PartialObjectMetadata"},
			ObjectMeta: stored,
		})
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		_, _ = w.Write(data)
	}
}

func probeCronJob() *cronv1.CronJob {
	return &cronv1.CronJob{
		ObjectMeta: metav1.ObjectMeta{Name: "cj", Namespace: "ns", UID: "cj-uid", ResourceVersion: "90", Generation: 3},
		Spec:       cronv1.CronJobSpec{Schedule: "* * * * *"},
	}
}

type write struct {
	name string
	do   func(t *testing.T, cfg *rest.Config) error
}

// writes are the three writes under review, each through the client the
// controller builds for it (main.go): Jobs in protobuf, CronJobs in JSON.
var writes = []write{
	{"job create", func(t *testing.T, cfg *rest.Config) error {
		_, err := NewJobs(jobClient(t, cfg)).Create(t.Context(), sentJob())
		return err
	}},
	{"status write", func(t *testing.T, cfg *rest.Config) error {
		c, err := clientset.NewForConfig(cfg)
		if err != nil {
			t.Fatal(err)
		}
		_, err = NewCronJobs(c).UpdateStatus(t.Context(), probeCronJob())
		return err
	}},
	{"finalizer patch", func(t *testing.T, cfg *rest.Config) error {
		return realJobs{jobClient(t, cfg)}.patch(t.Context(), "ns", "job-1", RemoveFinalizerPatch("uid-1", "f", 0))
	}},
}

// Every error kind a caller tells apart survives, with its message, in both
// clients, whether the server writes its Status in JSON (as it does for an
// Accept with as=) or in protobuf.
func TestProbeRev7ErrorKindsSurvive(t *testing.T) {
	for _, tc := range []struct {
		name  string
		st    metav1.Status
		check func(error) bool
	}{
		{"already exists", metav1.Status{Status: metav1.StatusFailure, Code: 409, Reason: metav1.StatusReasonAlreadyExists, Message: `jobs.batch "job-1" already exists`}, apierrors.IsAlreadyExists},
		{"conflict", metav1.Status{Status: metav1.StatusFailure, Code: 409, Reason: metav1.StatusReasonConflict, Message: "the object has been modified"}, apierrors.IsConflict},
		{"not found", metav1.Status{Status: metav1.StatusFailure, Code: 404, Reason: metav1.StatusReasonNotFound, Message: `cronjobs "cj" not found`}, apierrors.IsNotFound},
		{"namespace terminating", metav1.Status{Status: metav1.StatusFailure, Code: 403, Reason: metav1.StatusReasonForbidden, Message: "namespace ns is being terminated",
			Details: &metav1.StatusDetails{Causes: []metav1.StatusCause{{Type: corev1.NamespaceTerminatingCause, Message: "terminating"}}}},
			func(err error) bool { return apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause) }},
		{"invalid", metav1.Status{Status: metav1.StatusFailure, Code: 422, Reason: metav1.StatusReasonInvalid, Message: "the patch test failed"}, apierrors.IsInvalid},
		{"bad request", metav1.Status{Status: metav1.StatusFailure, Code: 400, Reason: metav1.StatusReasonBadRequest, Message: "bad template"}, apierrors.IsBadRequest},
	} {
		for _, mediaType := range []string{runtime.ContentTypeJSON, runtime.ContentTypeProtobuf} {
			for _, w := range writes {
				t.Run(tc.name+"/"+mediaType+"/"+w.name, func(t *testing.T) {
					_, cfg := newProbeServer(t, statusAnswer(tc.st, mediaType))
					err := w.do(t, cfg)
					if !tc.check(err) || !strings.Contains(err.Error(), tc.st.Message) {
						t.Errorf("err = %v, want the server's %s with its message", err, tc.st.Reason)
					}
				})
			}
		}
	}
}

// A 429 with Retry-After is retried inside the call, the whole body sent
// again: a retry with a short body would come back 400 and be taken as a
// template the server refuses (a run counted as missed).
func TestProbeRev7TooManyRequestsRetriedWithWholeBody(t *testing.T) {
	tooMany := func(w http.ResponseWriter, _ *http.Request, _ []byte) {
		w.Header().Set("Retry-After", "0")
		statusAnswer(metav1.Status{Status: metav1.StatusFailure, Code: 429, Reason: metav1.StatusReasonTooManyRequests, Message: "slow down"}, runtime.ContentTypeJSON)(w, nil, nil)
	}
	for _, w := range writes {
		t.Run(w.name, func(t *testing.T) {
			s, cfg := newProbeServer(t, tooMany, partialAnswer(http.StatusCreated, metav1.ObjectMeta{Name: "x", Namespace: "ns", UID: "u", ResourceVersion: "5"}))
			if err := w.do(t, cfg); err != nil {
				t.Fatal(err)
			}
			if len(s.seen) != 2 {
				t.Fatalf("%d requests, want 2 (one retry)", len(s.seen))
			}
			if len(s.seen[0].body) == 0 || !bytes.Equal(s.seen[0].body, s.seen[1].body) || s.seen[0].accept != s.seen[1].accept {
				t.Errorf("retry sent %d bytes (Accept %q), first %d bytes (Accept %q)", len(s.seen[1].body), s.seen[1].accept, len(s.seen[0].body), s.seen[0].accept)
			}
		})
	}
}

// A 2xx answer the controller cannot read is an error, never a Job or
// CronJob without UID or version (one in the own-writes cache would stand
// for the real one). The create's error takes the failed-create path, which
// reads the Job live.
func TestProbeRev7UnreadableAnswerIsAnError(t *testing.T) {
	for _, tc := range []struct {
		name   string
		answer func(http.ResponseWriter, *http.Request, []byte)
	}{
		{"empty 201", func(w http.ResponseWriter, _ *http.Request, _ []byte) { w.WriteHeader(http.StatusCreated) }},
		{"204", func(w http.ResponseWriter, _ *http.Request, _ []byte) { w.WriteHeader(http.StatusNoContent) }},
		{"not JSON", func(w http.ResponseWriter, _ *http.Request, _ []byte) {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte("<html>"))
		}},
		{"whole object without UID", func(w http.ResponseWriter, _ *http.Request, _ []byte) {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"apiVersion":"batch/v1","kind":"Job","metadata":{"name":"job-1","resourceVersion":"5"}}`))
		}},
		{"text/plain", func(w http.ResponseWriter, _ *http.Request, _ []byte) {
			w.Header().Set("Content-Type", "text/plain")
			_, _ = w.Write([]byte("ok"))
		}},
	} {
		for _, w := range writes[:2] {
			t.Run(tc.name+"/"+w.name, func(t *testing.T) {
				_, cfg := newProbeServer(t, tc.answer)
				if err := w.do(t, cfg); err == nil {
					t.Errorf("no error: an unreadable answer passed for a stored object")
				}
			})
		}
	}
}

// Like the typed calls, the writes wait on the clientset's rate limiter and
// carry its user agent.
func TestProbeRev7SameLimiterAndUserAgent(t *testing.T) {
	for _, w := range writes {
		t.Run(w.name, func(t *testing.T) {
			s, cfg := newProbeServer(t, partialAnswer(http.StatusOK, metav1.ObjectMeta{Name: "x", Namespace: "ns", UID: "u", ResourceVersion: "5"}))
			limiter := &countingLimiter{}
			cfg.RateLimiter = limiter
			cfg.UserAgent = "probe-agent/7"
			if err := w.do(t, cfg); err != nil {
				t.Fatal(err)
			}
			if limiter.waits != 1 {
				t.Errorf("limiter waited %d times, want 1", limiter.waits)
			}
			if s.agents[0] != "probe-agent/7" {
				t.Errorf("User-Agent = %q", s.agents[0])
			}
		})
	}
}

type countingLimiter struct {
	mu    sync.Mutex
	waits int
}

func (l *countingLimiter) TryAccept() bool { return true }
func (l *countingLimiter) Accept()         {}
func (l *countingLimiter) Stop()           {}
func (l *countingLimiter) QPS() float32    { return 1 }
func (l *countingLimiter) Wait(context.Context) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.waits++
	return nil
}

// storeAsCRD does to a status write's body what the API server does for a
// custom resource and then what the informer does to the watch event: the
// JSON is read into unstructured content (integers as int64), nulls of
// fields that are not nullable are pruned, the content is stored as JSON,
// and the informer decodes it with the generated clientset's codec.
func storeAsCRD(t *testing.T, body []byte) *cronv1.CronJob {
	t.Helper()
	var content map[string]any
	if err := utiljson.Unmarshal(body, &content); err != nil {
		t.Fatal(err)
	}
	pruneNulls(content)
	stored, err := json.Marshal(content)
	if err != nil {
		t.Fatal(err)
	}
	obj, _, err := cronscheme.Codecs.UniversalDeserializer().Decode(stored, nil, &cronv1.CronJob{})
	if err != nil {
		t.Fatal(err)
	}
	return obj.(*cronv1.CronJob)
}

func pruneNulls(v any) {
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			if e == nil {
				delete(v, k)
				continue
			}
			pruneNulls(e)
		}
	case []any:
		for _, e := range v {
			pruneNulls(e)
		}
	}
}

// The status UpdateStatus returns equals, semantically, the status the
// informer's echo of the write shows, for the statuses the planner writes:
// times with nanoseconds and in other zones, a time pointer to zero, empty
// lists, large counts, text JSON escapes or replaces.
func TestProbeRev7ReturnedStatusEqualsEcho(t *testing.T) {
	at := time.Date(2026, 11, 24, 5, 0, 59, 999999999, time.FixedZone("X", 3600+1800))
	for _, tc := range []struct {
		name   string
		status cronv1.CronJobStatus
	}{
		{"nanoseconds and zones", cronv1.CronJobStatus{
			LastScheduleTime: &metav1.Time{Time: at}, NextScheduleTime: &metav1.Time{Time: at.Add(time.Minute)},
			ScheduleChangeTime: &metav1.Time{Time: at.Add(-time.Nanosecond)},
			Conditions:         []metav1.Condition{{Type: "ScheduleValid", Status: metav1.ConditionTrue, Reason: "Valid", Message: "m", LastTransitionTime: metav1.Time{Time: at}, ObservedGeneration: 3}},
		}},
		{"zero time pointer", cronv1.CronJobStatus{LastScheduleTime: &metav1.Time{}, LastSuccessfulTime: &metav1.Time{}}},
		{"empty lists", cronv1.CronJobStatus{Active: []corev1.ObjectReference{}, MissedRuns: []cronv1.MissedRuns{}, Conditions: []metav1.Condition{}, PreviousSchedules: []cronv1.PreviousSchedule{}}},
		{"large counts", cronv1.CronJobStatus{RunNowCount: 1<<53 + 1, ObservedGeneration: 1<<62 + 3, ActiveCount: 1<<31 - 1,
			MissedRuns: []cronv1.MissedRuns{{Reason: "TooLate", Count: 1<<53 + 3}}}},
		{"text", cronv1.CronJobStatus{LastRunNow: "<a&b>\u2028\xff\xfe end", ResolvedSchedule: "0 * * * * | 5 4 * * *",
			Conditions: []metav1.Condition{{Type: "T", Status: metav1.ConditionFalse, Reason: "R", Message: "bad \xc3\x28 utf8 \"q\" <tag>", LastTransitionTime: metav1.Time{Time: at}}}}},
		{"empty", cronv1.CronJobStatus{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, cfg := newProbeServer(t, partialAnswer(http.StatusOK, metav1.ObjectMeta{Name: "cj", Namespace: "ns", UID: "cj-uid", ResourceVersion: "91", Generation: 3}))
			c, err := clientset.NewForConfig(cfg)
			if err != nil {
				t.Fatal(err)
			}
			cj := probeCronJob()
			cj.Status = tc.status
			got, err := NewCronJobs(c).UpdateStatus(t.Context(), cj)
			if err != nil {
				t.Fatal(err)
			}
			echo := storeAsCRD(t, s.seen[0].body)
			if !equality.Semantic.DeepEqual(got.Status, echo.Status) {
				gj, _ := json.Marshal(got.Status)
				ej, _ := json.Marshal(echo.Status)
				t.Errorf("returned status differs from the echo:\n got %s\necho %s\n got %#v\necho %#v", gj, ej, got.Status, echo.Status)
			}
			if !equality.Semantic.DeepEqual(got.Spec, echo.Spec) {
				t.Errorf("returned spec %+v, echo %+v", got.Spec, echo.Spec)
			}
		})
	}
}

// A server (or proxy in front of it) that ignores as= and answers the whole
// Job in protobuf: the create succeeded, but Create reports an error. The
// caller's failed-create path reads the Job live, so the run is not lost or
// doubled; this probe records the behaviour.
func TestProbeRev7WholeJobInProtobufIsAnErrorAfterCreate(t *testing.T) {
	whole := func(w http.ResponseWriter, _ *http.Request, _ []byte) {
		j := sentJob()
		j.UID, j.ResourceVersion = "uid-1", "5"
		info, _ := runtime.SerializerInfoForMediaType(scheme.Codecs.SupportedMediaTypes(), runtime.ContentTypeProtobuf)
		data, err := runtime.Encode(scheme.Codecs.EncoderForVersion(info.Serializer, batchv1.SchemeGroupVersion), j)
		if err != nil {
			panic(err)
		}
		w.Header().Set("Content-Type", runtime.ContentTypeProtobuf)
		w.WriteHeader(http.StatusCreated)
		_, _ = w.Write(data)
	}
	_, cfg := newProbeServer(t, whole)
	_, err := NewJobs(jobClient(t, cfg)).Create(t.Context(), sentJob())
	if err == nil {
		t.Skip("read: a whole protobuf Job is accepted")
	}
	if apierrors.IsAlreadyExists(err) || apierrors.IsInvalid(err) || apierrors.IsBadRequest(err) || apierrors.IsNotFound(err) {
		t.Errorf("err = %v: a kind the caller takes for a refusal, though the Job was created", err)
	}
}

// The Job Create returns shares its spec with the Job sent; the fake
// clientset's returns a copy. No caller changes either today.
func TestProbeRev7CreateResultAliasesSentSpec(t *testing.T) {
	_, cfg := newProbeServer(t, partialAnswer(http.StatusCreated, metav1.ObjectMeta{Name: "job-1", Namespace: "ns", UID: "uid-1", ResourceVersion: "5"}))
	sent := sentJob()
	got, err := NewJobs(jobClient(t, cfg)).Create(t.Context(), sent)
	if err != nil {
		t.Fatal(err)
	}
	*got.Spec.Suspend = false
	if !*sent.Spec.Suspend {
		t.Log("the returned Job shares spec memory with the Job sent (informational)")
	}
}

// Minor: a PartialObjectMetadata answer without a UID passes, where the
// whole-object fallback refuses one ("no UID"). No API server answers a
// write so; the typed call took such an answer too.
func TestProbeRev7MetadataAnswerWithoutUID(t *testing.T) {
	for _, w := range writes[:2] {
		t.Run(w.name, func(t *testing.T) {
			_, cfg := newProbeServer(t, partialAnswer(http.StatusOK, metav1.ObjectMeta{Name: "job-1", ResourceVersion: "5"}))
			if err := w.do(t, cfg); err == nil {
				t.Errorf("no error: an answer without UID passed for a stored object")
			}
		})
	}
}

type warnings struct {
	mu  sync.Mutex
	got []string
}

func (w *warnings) HandleWarningHeader(_ int, _ string, text string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.got = append(w.got, text)
}

// The server's warnings reach the clientset's warning handler, as they did
// through the typed calls.
func TestProbeRev7WarningsReachTheHandler(t *testing.T) {
	for _, w := range writes {
		t.Run(w.name, func(t *testing.T) {
			answer := partialAnswer(http.StatusOK, metav1.ObjectMeta{Name: "x", Namespace: "ns", UID: "u", ResourceVersion: "5"})
			_, cfg := newProbeServer(t, func(rw http.ResponseWriter, r *http.Request, body []byte) {
				rw.Header().Add("Warning", `299 - "probe warning"`)
				answer(rw, r, body)
			})
			h := &warnings{}
			cfg.WarningHandler = h
			if err := w.do(t, cfg); err != nil {
				t.Fatal(err)
			}
			if len(h.got) != 1 || h.got[0] != "probe warning" {
				t.Errorf("warnings handled: %q", h.got)
			}
		})
	}
}
