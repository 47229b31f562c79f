package control

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metainternalversionscheme "k8s.io/apimachinery/pkg/apis/meta/internalversion/scheme"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	cronv1 "github.com/cronjob-controller/cronjob-controller/pkg/apis/batch/v1"
	clientset "github.com/cronjob-controller/cronjob-controller/pkg/generated/clientset/versioned"
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
