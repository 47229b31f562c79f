//go:build e2e

package e2e

import (
	"archive/zip"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	cronv1 "github.com/cronjob-controller/cronjob-controller/pkg/apis/batch/v1"
	"github.com/cronjob-controller/cronjob-controller/pkg/schedule"
	"github.com/cronjob-controller/cronjob-controller/pkg/schedule/corpus"
)

// The generated part of the corpus: its seed and size.
const (
	celCorpusSeed      = 15
	celCorpusGenerated = 600
)

// admit creates each CronJob with dryRun=All and returns, per CronJob, nil
// when the API server admits it and the Invalid error when it refuses it.
// Any other error fails the test.
func admit(t *testing.T, cjs []*cronv1.CronJob) []*apierrors.StatusError {
	t.Helper()
	out := make([]*apierrors.StatusError, len(cjs))
	var wg sync.WaitGroup
	var mu sync.Mutex
	var failures []string
	next := make(chan int)
	for range 8 {
		wg.Go(func() {
			for i := range next {
				_, err := env.cron.BatchV1().CronJobs(cjs[i].Namespace).Create(context.Background(), cjs[i], metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
				var se *apierrors.StatusError
				switch {
				case err == nil:
				case apierrors.IsInvalid(err) && errors.As(err, &se):
					out[i] = se
				default:
					mu.Lock()
					failures = append(failures, fmt.Sprintf("%q: %v", cjs[i].Spec.Schedule, err))
					mu.Unlock()
				}
			}
		})
	}
	for i := range cjs {
		next <- i
	}
	close(next)
	wg.Wait()
	if len(failures) > 0 {
		t.Fatalf("%d create calls failed other than as invalid, first: %s", len(failures), failures[0])
	}
	return out
}

// causes are the fields and messages of a refusal.
func causes(se *apierrors.StatusError) []string {
	var out []string
	if se.ErrStatus.Details != nil {
		for _, c := range se.ErrStatus.Details.Causes {
			out = append(out, c.Field+": "+c.Message)
		}
	}
	return out
}

// The CRD's CEL rules and the controller's parser read one corpus: every
// string literal of pkg/schedule's tests (among them every schedule of its
// unit tests and the fuzz seeds given with f.Add), the fuzz corpus files,
// schedules of the longest length the schema allows (the cost limit), and
// schedules generated from a fixed seed. The API server must admit
// every schedule the parser accepts, and refuse at least 95% of those it
// refuses, each with one error that names spec.schedule.
func TestCELAgreesWithParser(t *testing.T) {
	ns := newNamespace(t)
	entries, err := corpus.Load(filepath.Join(env.root, "pkg", "schedule"), celCorpusSeed, celCorpusGenerated)
	if err != nil {
		t.Fatal(err)
	}
	const name = "corpus"
	cjs := make([]*cronv1.CronJob, len(entries))
	for i, e := range entries {
		cjs[i] = cronJob(ns, name, e.Spec)
	}
	verdicts := admit(t, cjs)

	type tally struct{ total, refused, caught int }
	bySource := map[string]*tally{}
	var all tally
	var missed []string
	for i, e := range entries {
		source, _, _ := strings.Cut(e.Source, ":")
		if bySource[source] == nil {
			bySource[source] = &tally{}
		}
		s := bySource[source]
		resolved, err := schedule.Resolve(e.Spec, ns+"/"+name)
		if err == nil {
			_, err = schedule.Parse(resolved, nil)
		}
		refusal := verdicts[i]
		s.total++
		all.total++
		if err == nil {
			if refusal != nil {
				t.Errorf("the API server refuses %q (%s), which the parser accepts: %v", e.Spec, e.Source, causes(refusal))
			}
			continue
		}
		s.refused++
		all.refused++
		if refusal == nil {
			missed = append(missed, fmt.Sprintf("%q (%v)", e.Spec, err))
			continue
		}
		s.caught++
		all.caught++
		if c := causes(refusal); len(c) != 1 || !strings.HasPrefix(c[0], "spec.schedule: ") {
			t.Errorf("%q: want one error naming spec.schedule, got %q", e.Spec, c)
		}
	}
	for _, source := range []string{"tests", "fuzz corpus", "long", "generated"} {
		if s := bySource[source]; s != nil {
			t.Logf("%s: %d schedules, the parser refuses %d, CEL %d of them", source, s.total, s.refused, s.caught)
		}
	}
	for _, m := range missed {
		t.Logf("CEL admits what the parser refuses: %s", m)
	}
	share := float64(all.caught) / float64(all.refused)
	t.Logf("REPORT schedules=%d parser-accepts=%d parser-refuses=%d cel-refuses=%d cel-share=%.1f%%",
		all.total, all.total-all.refused, all.refused, all.caught, 100*share)
	if share < 0.95 {
		t.Errorf("CEL refuses %.1f%% of the schedules the parser refuses, want at least 95%%", 100*share)
	}
}

// The time zone rules admit every zone of Go's time zone database (the
// one the controller embeds) and refuse, with one error naming
// spec.timeZone, what the built-in CronJob refuses by shape: empty, Local,
// parts that are not 1 to 14 of A-Z a-z 0-9 . - _ +, . and .., parts
// starting with a hyphen. The parser refuses them too.
func TestCELTimeZones(t *testing.T) {
	ns := newNamespace(t)
	z, err := zip.OpenReader(filepath.Join(runtime.GOROOT(), "lib", "time", "zoneinfo.zip"))
	if err != nil {
		t.Fatal(err)
	}
	var real []string
	for _, f := range z.File {
		real = append(real, f.Name)
	}
	z.Close()
	bad := []string{"", "Local", "local", "LOCAL", "Europe/", "/UTC", "Europe//Berlin", "Europe/./Berlin", "../etc/passwd",
		"Etc/-5", "Mars Olympus", "America/ThisPartIsTooLong", "Asia/Ho Chi Minh", "Europe/Zürich", "UTC\n"}
	// Shaped well but unknown: the controller's to report.
	unknown := []string{"Mars/Olympus_Mons", "Europe/Atlantis", "..."}
	zones := append(append(append([]string{}, real...), bad...), unknown...)
	cjs := make([]*cronv1.CronJob, len(zones))
	for i, zone := range zones {
		cjs[i] = cronJob(ns, "zone", "0 * * * *", func(cj *cronv1.CronJob) { cj.Spec.TimeZone = ptr.To(zone) })
	}
	verdicts := admit(t, cjs)
	shape := regexp.MustCompile(`^[A-Za-z\.\-_0-9+]{1,14}$`)
	builtinRefuses := func(zone string) bool {
		if zone == "" || strings.EqualFold(zone, "Local") {
			return true
		}
		for _, part := range strings.Split(zone, "/") {
			if part == "." || part == ".." || strings.HasPrefix(part, "-") || !shape.MatchString(part) {
				return true
			}
		}
		return false
	}
	accepted, refused := 0, 0
	for i, zone := range zones {
		_, parseErr := schedule.Parse("0 * * * *", ptr.To(zone))
		refusal := verdicts[i]
		switch {
		case parseErr == nil && refusal != nil:
			t.Errorf("the API server refuses zone %q, which the parser accepts: %v", zone, causes(refusal))
		case builtinRefuses(zone) != (refusal != nil):
			t.Errorf("zone %q: refused by the API server %v, by the built-in's shape check %v", zone, refusal != nil, builtinRefuses(zone))
		case refusal != nil && parseErr == nil:
			t.Errorf("zone %q: the parser accepts what the API server refuses", zone)
		}
		if refusal != nil {
			refused++
			if c := causes(refusal); len(c) != 1 || !strings.HasPrefix(c[0], "spec.timeZone: ") {
				t.Errorf("zone %q: want one error naming spec.timeZone, got %q", zone, c)
			}
		} else {
			accepted++
		}
	}
	t.Logf("REPORT zones=%d admitted=%d refused=%d", len(zones), accepted, refused)
	if refused != len(bad) {
		t.Errorf("%d zones refused, want the %d badly shaped", refused, len(bad))
	}
}
