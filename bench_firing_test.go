package main

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	metainternalversionscheme "k8s.io/apimachinery/pkg/apis/meta/internalversion/scheme"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	cronv1 "github.com/cronjob-controller/cronjob-controller/pkg/apis/batch/v1"
	cronscheme "github.com/cronjob-controller/cronjob-controller/pkg/generated/clientset/versioned/scheme"
	"github.com/cronjob-controller/cronjob-controller/pkg/job"
	"github.com/cronjob-controller/cronjob-controller/pkg/slim"
)

// instantJobs and instantCronJobs answer every call at once, as an API
// server that costs nothing would: BenchmarkFiring measures the
// controller's own work, not a fake clientset's object tracker.
type instantJobs struct{ n int }

func (s *instantJobs) Get(context.Context, string, string) (*batchv1.Job, error) {
	panic("a firing reads no Job live")
}

func (s *instantJobs) Create(_ context.Context, j *batchv1.Job) (*batchv1.Job, error) {
	s.n++
	out := j.DeepCopy() // the API server's answer is a new object
	out.UID = types.UID(fmt.Sprintf("job-uid-%d", s.n))
	out.ResourceVersion = fmt.Sprint(s.n)
	out.CreationTimestamp = metav1.NewTime(topOfHour)
	return out, nil
}

func (s *instantJobs) Delete(context.Context, string, string, types.UID) error { return nil }

func (s *instantJobs) ReleaseFinalizer(context.Context, string, string, types.UID, string, []string) error {
	return nil
}

type instantCronJobs struct{ n int }

func (s *instantCronJobs) UpdateStatus(_ context.Context, cj *cronv1.CronJob) (*cronv1.CronJob, error) {
	s.n++
	out := cj.DeepCopy()
	out.ResourceVersion = fmt.Sprint(1000000 + s.n)
	return out, nil
}

func (s *instantCronJobs) Get(context.Context, string, string) (*cronv1.CronJob, error) {
	panic("a firing reads no CronJob live")
}

func (s *instantCronJobs) List(context.Context, func(*cronv1.CronJob)) error {
	panic("a firing lists no CronJobs")
}

// BenchmarkFiring measures the sync of one CronJob at its scheduled time,
// its first: the Job created, the status written, the Job's run-record
// finalizer released, the Event recorded; on clients that answer at once.
// It is the controller's own share of a firing, without the wire (see
// BenchmarkFiringWire) and without the informers' echoes.
func BenchmarkFiring(b *testing.B) {
	ctx := klog.NewContext(b.Context(), klog.Background().V(1))
	f := newFixture(b, at(time.Second))
	c, _, cronFactory := f.newController(ctx)
	c.jobs, c.cronJobs = &instantJobs{}, &instantCronJobs{}
	indexer := cronFactory.Batch().V1().CronJobs().Informer().GetIndexer()
	done := make(chan struct{})
	defer close(done)
	go func() { // the recorder's buffer would fill
		for {
			select {
			case <-f.recorder.Events:
			case <-done:
				return
			}
		}
	}()
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		b.StopTimer()
		// A minute later each time, a CronJob due on the minute: what this
		// process remembers of its own writes expires as it would (the
		// informers' echoes, which would drop it sooner, are left out).
		i++
		f.clock.Step(time.Minute)
		now := f.clock.Now()
		cj := newCronJob(withSchedule("* * * * *"), createdAt(now.Add(-30*time.Second)), func(cj *cronv1.CronJob) {
			cj.Name, cj.UID = fmt.Sprintf("cj-%d", i), types.UID(fmt.Sprintf("cj-uid-%d", i))
		})
		obj, _ := slim.FromCronJob(cj)
		if err := indexer.Add(obj); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		if _, err := c.syncHandler(ctx, cache.MetaObjectToName(cj)); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkFiringWire measures what a firing costs the controller in
// encoding and decoding, with the codecs its clients use (protobuf for
// Jobs, JSON for the CronJob, a custom resource): each of the three writes
// of a run (the create and the status write at the firing, the release
// once the Job has finished) is a request encoded and an answer decoded,
// and each comes back through an informer as a watch event, decoded and
// turned into its slim form.
func BenchmarkFiringWire(b *testing.B) {
	cj := newCronJob()
	cj.ResourceVersion = "41"
	j := job.New(cj, topOfHour, time.UTC)
	j.UID, j.ResourceVersion = "job-uid", "42"
	released := j.DeepCopy()
	released.Finalizers = nil

	// As the generated clientsets negotiate: no conversion, no defaulting.
	kubeNS, cronNS := scheme.Codecs.WithoutConversion(), cronscheme.Codecs.WithoutConversion()
	jobCodec, _ := runtime.SerializerInfoForMediaType(kubeNS.SupportedMediaTypes(), runtime.ContentTypeProtobuf)
	cronCodec, _ := runtime.SerializerInfoForMediaType(cronNS.SupportedMediaTypes(), runtime.ContentTypeJSON)
	jobEnc := kubeNS.EncoderForVersion(jobCodec.Serializer, batchv1.SchemeGroupVersion)
	cronEnc := cronNS.EncoderForVersion(cronCodec.Serializer, cronv1.SchemeGroupVersion)
	jobDec := kubeNS.DecoderToVersion(jobCodec.Serializer, batchv1.SchemeGroupVersion)
	cronDec := cronNS.DecoderToVersion(cronCodec.Serializer, cronv1.SchemeGroupVersion)
	wire := func(b *testing.B, enc runtime.Encoder, obj runtime.Object) []byte {
		data, err := runtime.Encode(enc, obj)
		if err != nil {
			b.Fatal(err)
		}
		return data
	}
	jobWire, releasedWire, cronWire := wire(b, jobEnc, j), wire(b, jobEnc, released), wire(b, cronEnc, cj)

	b.Run("job create", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_ = wire(b, jobEnc, j)
			if _, err := runtime.Decode(jobDec, jobWire); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("status write", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_ = wire(b, cronEnc, cj)
			if _, err := runtime.Decode(cronDec, cronWire); err != nil {
				b.Fatal(err)
			}
		}
	})
	// Since the writes ask for the metadata alone (pkg/control): the
	// answer is a PartialObjectMetadata in protobuf, for the CronJob too,
	// and the status kept is a JSON round trip of the status alone.
	metaCodec, _ := runtime.SerializerInfoForMediaType(metainternalversionscheme.Codecs.SupportedMediaTypes(), runtime.ContentTypeProtobuf)
	metaEnc := metainternalversionscheme.Codecs.EncoderForVersion(metaCodec.Serializer, metav1.SchemeGroupVersion)
	metaDec := metainternalversionscheme.Codecs.UniversalDeserializer()
	jobMeta := wire(b, metaEnc, &metav1.PartialObjectMetadata{ObjectMeta: j.ObjectMeta})
	cronMeta := wire(b, metaEnc, &metav1.PartialObjectMetadata{ObjectMeta: cj.ObjectMeta})
	b.Run("job create, metadata answer", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_ = wire(b, jobEnc, j)
			if _, _, err := metaDec.Decode(jobMeta, nil, nil); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("status write, metadata answer", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_ = wire(b, cronEnc, cj)
			if _, _, err := metaDec.Decode(cronMeta, nil, nil); err != nil {
				b.Fatal(err)
			}
			var stored cronv1.CronJobStatus
			data, err := json.Marshal(&cj.Status)
			if err == nil {
				err = json.Unmarshal(data, &stored)
			}
			if err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("release answer", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := runtime.Decode(jobDec, releasedWire); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("release answer, metadata", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, _, err := metaDec.Decode(jobMeta, nil, nil); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("job echoes", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			for _, data := range [][]byte{jobWire, releasedWire} {
				obj, err := runtime.Decode(jobDec, data)
				if err != nil {
					b.Fatal(err)
				}
				_, _ = slim.FromJob(obj)
			}
		}
	})
	// The status echo into the cache: the informer's transform encodes its
	// template (the write's answer was the metadata alone, so there is no
	// form of the served template to share).
	b.Run("status echo", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			obj, err := runtime.Decode(cronDec, cronWire)
			if err != nil {
				b.Fatal(err)
			}
			_, _ = slim.FromCronJob(obj)
		}
	})
}
