package control

// The package's fake API servers and the clients and objects the tests
// write with: apiServer answers as kube-apiserver does, scriptedServer with
// scripted answers; writes are the three writes each through the client the
// controller builds for it.

import (
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
	metainternalversionscheme "k8s.io/apimachinery/pkg/apis/meta/internalversion/scheme"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	cronv1 "github.com/cronjob-controller/cronjob-controller/pkg/apis/batch/v1"
	clientset "github.com/cronjob-controller/cronjob-controller/pkg/generated/clientset/versioned"
	cronscheme "github.com/cronjob-controller/cronjob-controller/pkg/generated/clientset/versioned/scheme"
)

// apiServer answers writes as kube-apiserver does: with the object's
// metadata alone when the request's Accept asks for PartialObjectMetadata
// (protobuf when asked first), with the whole object when ignoresAs (an
// old server), or with the failure set.
type apiServer struct {
	t         *testing.T
	ignoresAs bool
	failure   *metav1.Status
	// stored is the metadata the server sets on the written object.
	stored metav1.ObjectMeta
	// seen are the requests, as method, path, Accept and body.
	seen []request
}

type request struct {
	method, path, accept, contentType string
	body                              []byte
}

func (s *apiServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	accept := r.Header.Get("Accept")
	s.seen = append(s.seen, request{r.Method, r.URL.Path, accept, r.Header.Get("Content-Type"), body})
	if s.failure != nil {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(int(s.failure.Code))
		_ = json.NewEncoder(w).Encode(s.failure)
		return
	}
	if s.ignoresAs || !strings.Contains(accept, "as=PartialObjectMetadata") {
		// The whole object, in JSON: the object sent (a Job for a patch)
		// with the stored metadata.
		whole := map[string]any{"apiVersion": "batch/v1", "kind": "Job"}
		if r.Method != http.MethodPatch {
			if err := json.Unmarshal(body, &whole); err != nil {
				s.t.Errorf("a body this server reads as JSON: %v", err)
			}
		}
		meta, _ := json.Marshal(s.stored)
		var m map[string]any
		_ = json.Unmarshal(meta, &m)
		whole["metadata"] = m
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(whole)
		return
	}
	partial := &metav1.PartialObjectMetadata{
		TypeMeta:   metav1.TypeMeta{APIVersion: "meta.k8s.io/v1", Kind: "PartialObjectMetadata"},
		ObjectMeta: s.stored,
	}
	mediaType := "application/json"
	if strings.HasPrefix(accept, runtime.ContentTypeProtobuf) {
		mediaType = runtime.ContentTypeProtobuf
	}
	codecs := metainternalversionscheme.Codecs
	info, _ := runtime.SerializerInfoForMediaType(codecs.SupportedMediaTypes(), mediaType)
	data, err := runtime.Encode(codecs.EncoderForVersion(info.Serializer, metav1.SchemeGroupVersion), partial)
	if err != nil {
		s.t.Fatal(err)
	}
	w.Header().Set("Content-Type", mediaType)
	_, _ = w.Write(data)
}

func newAPIServer(t *testing.T) (*apiServer, *rest.Config) {
	s := &apiServer{t: t, stored: metav1.ObjectMeta{
		Name: "job-1", Namespace: "ns", UID: "uid-1", ResourceVersion: "77",
		CreationTimestamp: metav1.NewTime(time.Date(2026, 11, 24, 5, 0, 0, 0, time.UTC)),
		Finalizers:        []string{"batch.tutorial.kubebuilder.io/run-record"},
		Annotations:       map[string]string{"a": "b"},
	}}
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	return s, &rest.Config{Host: srv.URL}
}

// scriptedServer answers each request with the next scripted answer (the last
// one repeats), and records what it was sent.
type scriptedServer struct {
	mu      sync.Mutex
	answers []func(w http.ResponseWriter, r *http.Request, body []byte)
	seen    []request
	agents  []string
}

func (s *scriptedServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	s.mu.Lock()
	s.seen = append(s.seen, request{r.Method, r.URL.Path, r.Header.Get("Accept"), r.Header.Get("Content-Type"), body})
	s.agents = append(s.agents, r.Header.Get("User-Agent"))
	i := min(len(s.seen)-1, len(s.answers)-1)
	answer := s.answers[i]
	s.mu.Unlock()
	answer(w, r, body)
}

func newScriptedServer(t *testing.T, answers ...func(w http.ResponseWriter, r *http.Request, body []byte)) (*scriptedServer, *rest.Config) {
	s := &scriptedServer{answers: answers}
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

func jobClient(t *testing.T, cfg *rest.Config) kubernetes.Interface {
	cfg = rest.CopyConfig(cfg)
	cfg.ContentType = runtime.ContentTypeProtobuf
	cfg.AcceptContentTypes = runtime.ContentTypeProtobuf + "," + runtime.ContentTypeJSON
	c, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func sentJob() *batchv1.Job {
	return &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: "job-1", Namespace: "ns", Annotations: map[string]string{"a": "b"}},
		Spec: batchv1.JobSpec{Suspend: ptr.To(true), Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{Name: "c", Image: "busybox"}},
		}}},
	}
}

func testCronJob() *cronv1.CronJob {
	return &cronv1.CronJob{
		ObjectMeta: metav1.ObjectMeta{Name: "cj", Namespace: "ns", UID: "cj-uid", ResourceVersion: "90", Generation: 3},
		Spec:       cronv1.CronJobSpec{Schedule: "* * * * *"},
	}
}

type write struct {
	name string
	do   func(t *testing.T, cfg *rest.Config) error
}

// writes are the three metadata-only writes, each through the client the
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
		_, err = NewCronJobs(c).UpdateStatus(t.Context(), testCronJob())
		return err
	}},
	{"finalizer patch", func(t *testing.T, cfg *rest.Config) error {
		return realJobs{jobClient(t, cfg)}.patch(t.Context(), "ns", "job-1", RemoveFinalizerPatch("uid-1", "f", 0))
	}},
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

type warnings struct {
	mu  sync.Mutex
	got []string
}

func (w *warnings) HandleWarningHeader(_ int, _ string, text string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.got = append(w.got, text)
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
