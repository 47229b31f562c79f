package control

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"

	cronv1 "github.com/cronjob-controller/cronjob-controller/pkg/apis/batch/v1"
	clientset "github.com/cronjob-controller/cronjob-controller/pkg/generated/clientset/versioned"
)

// The API server answers a Job create with the Job's metadata alone; the
// Job returned is the one sent with the metadata the server stored, so the
// own-writes cache and the created Job's name, UID and version are right.
func TestJobCreateAsksForMetadataOnly(t *testing.T) {
	for _, tc := range []struct {
		name      string
		ignoresAs bool
	}{
		{"metadata answer", false},
		{"server answering the whole Job", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, cfg := newAPIServer(t)
			s.ignoresAs = tc.ignoresAs
			if tc.ignoresAs {
				// A server that does not know as= negotiates plain JSON.
				cfg.ContentType = runtime.ContentTypeJSON
			}
			var c kubernetes.Interface
			if tc.ignoresAs {
				var err error
				if c, err = kubernetes.NewForConfig(cfg); err != nil {
					t.Fatal(err)
				}
			} else {
				c = jobClient(t, cfg)
			}
			sent := sentJob()
			got, err := NewJobs(c).Create(t.Context(), sent)
			if err != nil {
				t.Fatal(err)
			}
			if len(s.seen) != 1 || s.seen[0].method != http.MethodPost || s.seen[0].path != "/apis/batch/v1/namespaces/ns/jobs" {
				t.Fatalf("requests = %+v, want one POST of the Job", s.seen)
			}
			if !strings.HasPrefix(s.seen[0].accept, runtime.ContentTypeProtobuf+";as=PartialObjectMetadata;g=meta.k8s.io;v=v1") {
				t.Errorf("Accept = %q, want PartialObjectMetadata in protobuf first", s.seen[0].accept)
			}
			if got.UID != "uid-1" || got.ResourceVersion != "77" || !got.CreationTimestamp.Equal(&s.stored.CreationTimestamp) ||
				len(got.Finalizers) != 1 || got.Annotations["a"] != "b" {
				t.Errorf("returned metadata = %+v, want the stored metadata", got.ObjectMeta)
			}
			if got.Spec.Suspend == nil || !*got.Spec.Suspend || len(got.Spec.Template.Spec.Containers) != 1 {
				t.Errorf("returned spec = %+v, want the spec sent", got.Spec)
			}
		})
	}
}

// A refused write keeps the server's Status: the reason, the message and
// the causes the sync handler acts on (an existing name, a namespace being
// deleted, an invalid template).
func TestWriteFailuresKeepTheServersStatus(t *testing.T) {
	for _, tc := range []struct {
		name  string
		fail  *metav1.Status
		check func(error) bool
	}{
		{"name taken", &metav1.Status{Status: metav1.StatusFailure, Code: 409, Reason: metav1.StatusReasonAlreadyExists, Message: `jobs.batch "job-1" already exists`,
			Details: &metav1.StatusDetails{Name: "job-1", Group: "batch", Kind: "jobs"}}, apierrors.IsAlreadyExists},
		{"namespace terminating", &metav1.Status{Status: metav1.StatusFailure, Code: 403, Reason: metav1.StatusReasonForbidden, Message: "namespace ns is being terminated",
			Details: &metav1.StatusDetails{Causes: []metav1.StatusCause{{Type: corev1.NamespaceTerminatingCause, Message: "namespace ns is being terminated"}}}},
			func(err error) bool { return apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause) }},
		{"invalid", &metav1.Status{Status: metav1.StatusFailure, Code: 422, Reason: metav1.StatusReasonInvalid, Message: `Job.batch "job-1" is invalid: spec.template.spec.containers[0].image: Required value`},
			apierrors.IsInvalid},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, cfg := newAPIServer(t)
			s.failure = tc.fail
			s.failure.TypeMeta = metav1.TypeMeta{APIVersion: "v1", Kind: "Status"}
			_, err := NewJobs(jobClient(t, cfg)).Create(t.Context(), sentJob())
			if !tc.check(err) || !strings.Contains(err.Error(), tc.fail.Message) {
				t.Errorf("err = %v, want the server's %s with its message", err, tc.fail.Reason)
			}
		})
	}
}

// The status write sends the CronJob and takes back the version the server
// stored; the status returned is the one stored, times in whole seconds as
// the API server keeps them, so comparing it with the informer's echo finds
// no difference to write again.
func TestStatusWriteAsksForMetadataOnly(t *testing.T) {
	s, cfg := newAPIServer(t)
	s.stored = metav1.ObjectMeta{Name: "cj", Namespace: "ns", UID: "cj-uid", ResourceVersion: "91", Generation: 3}
	c, err := clientset.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 11, 24, 5, 0, 0, 123456789, time.UTC)
	cj := &cronv1.CronJob{
		ObjectMeta: metav1.ObjectMeta{Name: "cj", Namespace: "ns", UID: "cj-uid", ResourceVersion: "90", Generation: 3},
		Spec:       cronv1.CronJobSpec{Schedule: "* * * * *"},
		Status: cronv1.CronJobStatus{
			LastScheduleTime: &metav1.Time{Time: at},
			Active:           []corev1.ObjectReference{{Name: "job-1", UID: types.UID("uid-1")}},
		},
	}
	got, err := NewCronJobs(c).UpdateStatus(t.Context(), cj)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.seen) != 1 || s.seen[0].method != http.MethodPut || s.seen[0].path != "/apis/batch.tutorial.kubebuilder.io/v1/namespaces/ns/cronjobs/cj/status" {
		t.Fatalf("requests = %+v, want one PUT of the status", s.seen)
	}
	if !strings.Contains(s.seen[0].accept, "as=PartialObjectMetadata") {
		t.Errorf("Accept = %q, want PartialObjectMetadata", s.seen[0].accept)
	}
	var sent cronv1.CronJob
	if err := json.Unmarshal(s.seen[0].body, &sent); err != nil || sent.ResourceVersion != "90" {
		t.Errorf("sent %s (%v), want the CronJob at the version read, for the server's conflict check", s.seen[0].body, err)
	}
	if got.ResourceVersion != "91" || got.Spec.Schedule != "* * * * *" || len(got.Status.Active) != 1 {
		t.Errorf("returned %+v, want the CronJob sent at the stored version", got)
	}
	if want := at.Truncate(time.Second); !got.Status.LastScheduleTime.Time.Equal(want) {
		t.Errorf("lastScheduleTime = %v, want %v, as stored", got.Status.LastScheduleTime, want)
	}
	if !cj.Status.LastScheduleTime.Time.Equal(at) {
		t.Errorf("the caller's CronJob changed: lastScheduleTime %v", cj.Status.LastScheduleTime)
	}
}

// Releasing the finalizer asks for no Job back: the answer is never read.
func TestReleaseAsksForMetadataOnly(t *testing.T) {
	s, cfg := newAPIServer(t)
	err := NewJobs(jobClient(t, cfg)).ReleaseFinalizer(t.Context(), "ns", "job-1", "uid-1",
		"batch.tutorial.kubebuilder.io/run-record", []string{"batch.tutorial.kubebuilder.io/run-record"})
	if err != nil {
		t.Fatal(err)
	}
	if len(s.seen) != 1 || s.seen[0].method != http.MethodPatch || !strings.Contains(s.seen[0].accept, "as=PartialObjectMetadata") {
		t.Fatalf("requests = %+v, want one PATCH asking for metadata only", s.seen)
	}
	if s.seen[0].contentType != string(types.JSONPatchType) {
		t.Errorf("Content-Type = %q, want a JSON patch", s.seen[0].contentType)
	}
}

// Every error kind a caller tells apart survives, with its message, in both
// clients, whether the server writes its Status in JSON (as it does for an
// Accept with as=) or in protobuf.
func TestWriteErrorKindsSurvive(t *testing.T) {
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
					_, cfg := newScriptedServer(t, statusAnswer(tc.st, mediaType))
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
func TestTooManyRequestsRetriedWithWholeBody(t *testing.T) {
	tooMany := func(w http.ResponseWriter, _ *http.Request, _ []byte) {
		w.Header().Set("Retry-After", "0")
		statusAnswer(metav1.Status{Status: metav1.StatusFailure, Code: 429, Reason: metav1.StatusReasonTooManyRequests, Message: "slow down"}, runtime.ContentTypeJSON)(w, nil, nil)
	}
	for _, w := range writes {
		t.Run(w.name, func(t *testing.T) {
			s, cfg := newScriptedServer(t, tooMany, partialAnswer(http.StatusCreated, metav1.ObjectMeta{Name: "x", Namespace: "ns", UID: "u", ResourceVersion: "5"}))
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
func TestUnreadableAnswerIsAnError(t *testing.T) {
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
				_, cfg := newScriptedServer(t, tc.answer)
				if err := w.do(t, cfg); err == nil {
					t.Errorf("no error: an unreadable answer passed for a stored object")
				}
			})
		}
	}
}

// A PartialObjectMetadata answer without a UID is an error, as the
// whole-object fallback refuses one ("no UID"): an object without UID in the
// own-writes cache would stand for the real one. No API server answers a
// write so, but the typed call took such an answer.
func TestMetadataAnswerWithoutUIDIsAnError(t *testing.T) {
	for _, w := range writes[:2] {
		t.Run(w.name, func(t *testing.T) {
			_, cfg := newScriptedServer(t, partialAnswer(http.StatusOK, metav1.ObjectMeta{Name: "job-1", ResourceVersion: "5"}))
			if err := w.do(t, cfg); err == nil {
				t.Errorf("no error: an answer without UID passed for a stored object")
			}
		})
	}
}

// A server (or proxy in front of it) that ignores as= and answers the whole
// Job in protobuf: the create succeeded, but Create reports an error. The
// caller's failed-create path reads the Job live, so the run is not lost or
// doubled, as long as the error is not one the caller takes for a refusal.
func TestWholeProtobufJobAnswerIsNoRefusal(t *testing.T) {
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
	_, cfg := newScriptedServer(t, whole)
	_, err := NewJobs(jobClient(t, cfg)).Create(t.Context(), sentJob())
	if err == nil {
		t.Skip("read: a whole protobuf Job is accepted")
	}
	if apierrors.IsAlreadyExists(err) || apierrors.IsInvalid(err) || apierrors.IsBadRequest(err) || apierrors.IsNotFound(err) {
		t.Errorf("err = %v: a kind the caller takes for a refusal, though the Job was created", err)
	}
}

// The status UpdateStatus returns equals, semantically, the status the
// informer's echo of the write shows, for the statuses the planner writes:
// times with nanoseconds and in other zones, a time pointer to zero, empty
// lists, large counts, text JSON escapes or replaces.
func TestReturnedStatusEqualsEcho(t *testing.T) {
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
			s, cfg := newScriptedServer(t, partialAnswer(http.StatusOK, metav1.ObjectMeta{Name: "cj", Namespace: "ns", UID: "cj-uid", ResourceVersion: "91", Generation: 3}))
			c, err := clientset.NewForConfig(cfg)
			if err != nil {
				t.Fatal(err)
			}
			cj := testCronJob()
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

// The Job Create returns shares its spec with the Job sent; the fake
// clientset's returns a copy. No caller changes either today.
func TestCreateResultMayShareSentSpec(t *testing.T) {
	_, cfg := newScriptedServer(t, partialAnswer(http.StatusCreated, metav1.ObjectMeta{Name: "job-1", Namespace: "ns", UID: "uid-1", ResourceVersion: "5"}))
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

// Like the typed calls, the writes wait on the clientset's rate limiter and
// carry its user agent.
func TestWritesUseTheLimiterAndUserAgent(t *testing.T) {
	for _, w := range writes {
		t.Run(w.name, func(t *testing.T) {
			s, cfg := newScriptedServer(t, partialAnswer(http.StatusOK, metav1.ObjectMeta{Name: "x", Namespace: "ns", UID: "u", ResourceVersion: "5"}))
			limiter := &countingLimiter{}
			cfg.RateLimiter = limiter
			cfg.UserAgent = "test-agent/7"
			if err := w.do(t, cfg); err != nil {
				t.Fatal(err)
			}
			if limiter.waits != 1 {
				t.Errorf("limiter waited %d times, want 1", limiter.waits)
			}
			if s.agents[0] != "test-agent/7" {
				t.Errorf("User-Agent = %q", s.agents[0])
			}
		})
	}
}

// The server's warnings reach the clientset's warning handler, as they did
// through the typed calls.
func TestWarningsReachTheHandler(t *testing.T) {
	for _, w := range writes {
		t.Run(w.name, func(t *testing.T) {
			answer := partialAnswer(http.StatusOK, metav1.ObjectMeta{Name: "x", Namespace: "ns", UID: "u", ResourceVersion: "5"})
			_, cfg := newScriptedServer(t, func(rw http.ResponseWriter, r *http.Request, body []byte) {
				rw.Header().Add("Warning", `299 - "test warning"`)
				answer(rw, r, body)
			})
			h := &warnings{}
			cfg.WarningHandler = h
			if err := w.do(t, cfg); err != nil {
				t.Fatal(err)
			}
			if len(h.got) != 1 || h.got[0] != "test warning" {
				t.Errorf("warnings handled: %q", h.got)
			}
		})
	}
}
