//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"

	cronv1 "github.com/cronjob-controller/cronjob-controller/pkg/apis/batch/v1"
	"github.com/cronjob-controller/cronjob-controller/pkg/job"
)

// The differential test runs the same CronJob specs through this controller
// and through kube-controller-manager's own CronJob controller, on one API
// server at the same time, and compares what each did: which scheduled runs
// got a Job, which Jobs remain after pruning, and the status fields both APIs
// have (active, lastScheduleTime, lastSuccessfulTime). Every difference must
// be one that docs/differential.md lists with its reason.
//
// Timing. Both controllers run in real time, so the test is built to leave
// nothing to a race between them:
//   - cron schedules name three explicit minutes (M1, M2, M3 below), so after
//     M3 nothing more comes due and the end state is final, not a moment in a
//     stream;
//   - every Job ends, and every edit of a spec lands, at least ten seconds
//     away from the scheduled time of any other run, so both controllers see
//     the events in the same order;
//   - the comparison waits until both sides have settled (every Job that will
//     finish has finished, status agrees with the Jobs, pruning is done);
//   - the @every pair is created within one second, so both run on the same
//     grid, and is read only between two grid points.

// differentialRunLabel marks the Jobs of one run of the test (through the job
// templates, which both controllers copy), so one informer sees them all.
const differentialRunLabel = "e2e.cronjob-controller/differential-run"

// Fields compared.
const (
	fieldCreated        = "runs that got a Job"
	fieldRemaining      = "Jobs kept after pruning"
	fieldActive         = "status.active"
	fieldLastSchedule   = "status.lastScheduleTime"
	fieldLastSuccessful = "status.lastSuccessfulTime (the run whose Job completed then)"
	fieldAnnotation     = "scheduled-time annotation text"
)

// jobBehaviour is what a scenario's Jobs do on the kwok node.
type jobBehaviour struct {
	// stuck pods are never scheduled: the Job stays active.
	stuck bool
	// failAfter, with stuck, fails the Job that many seconds after it starts
	// (activeDeadlineSeconds); 0 never.
	failAfter int64
}

func (b jobBehaviour) String() string {
	switch {
	case b.stuck && b.failAfter > 0:
		return fmt.Sprintf("Jobs fail after %ds", b.failAfter)
	case b.stuck:
		return "Jobs stay active"
	default:
		return "Jobs complete at once"
	}
}

// commonSpec is a CronJob spec in the terms both APIs share.
type commonSpec struct {
	schedule        string
	timeZone        *string
	deadline        *int64
	policy          string
	suspend         bool
	successfulLimit *int32
	failedLimit     *int32
	jobs            jobBehaviour
}

func (c commonSpec) String() string {
	s := fmt.Sprintf("schedule %q", c.schedule)
	if c.timeZone != nil {
		s += ", timeZone " + *c.timeZone
	}
	if c.deadline != nil {
		s += fmt.Sprintf(", startingDeadlineSeconds %d", *c.deadline)
	}
	if c.policy != "" {
		s += ", " + c.policy
	}
	if c.successfulLimit != nil {
		s += fmt.Sprintf(", successfulJobsHistoryLimit %d", *c.successfulLimit)
	}
	if c.failedLimit != nil {
		s += fmt.Sprintf(", failedJobsHistoryLimit %d", *c.failedLimit)
	}
	return s + ", " + c.jobs.String()
}

func (c commonSpec) template(run string) batchv1.JobTemplateSpec {
	t := batchv1.JobTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{differentialRunLabel: run}},
		Spec: batchv1.JobSpec{
			BackoffLimit: ptr.To[int32](0),
			Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				RestartPolicy: corev1.RestartPolicyNever,
				Containers:    []corev1.Container{{Name: "c", Image: "busybox", Args: []string{"/bin/sh", "-c", "date"}}},
			}},
		},
	}
	if c.jobs.stuck {
		t.Spec.Template.Spec.NodeSelector = map[string]string{"no-such-node": "true"}
	}
	if c.jobs.failAfter > 0 {
		t.Spec.ActiveDeadlineSeconds = ptr.To(c.jobs.failAfter)
	}
	return t
}

// writeOurs and writeBuiltin set the fields of commonSpec on a CronJob of
// either API and leave the others (defaults included) alone.
func (c commonSpec) writeOurs(cj *cronv1.CronJob, run string) {
	s := &cj.Spec
	s.Schedule, s.TimeZone, s.StartingDeadlineSeconds = c.schedule, c.timeZone, c.deadline
	s.ConcurrencyPolicy = cronv1.ConcurrencyPolicy(c.policy)
	s.Suspend = ptr.To(c.suspend)
	s.SuccessfulJobsHistoryLimit, s.FailedJobsHistoryLimit = c.successfulLimit, c.failedLimit
	s.JobTemplate = c.template(run)
}

func (c commonSpec) writeBuiltin(cj *batchv1.CronJob, run string) {
	s := &cj.Spec
	s.Schedule, s.TimeZone, s.StartingDeadlineSeconds = c.schedule, c.timeZone, c.deadline
	s.ConcurrencyPolicy = batchv1.ConcurrencyPolicy(c.policy)
	s.Suspend = ptr.To(c.suspend)
	s.SuccessfulJobsHistoryLimit, s.FailedJobsHistoryLimit = c.successfulLimit, c.failedLimit
	s.JobTemplate = c.template(run)
}

// diffEdit changes both CronJobs of a scenario at a moment between two
// scheduled times.
type diffEdit struct {
	at   time.Time
	what string
	edit func(*commonSpec)
}

// diffScenario is one spec run by both controllers.
type diffScenario struct {
	name  string
	spec  commonSpec
	edits []diffEdit
	// handMade adds, next to each CronJob, an unfinished Job controlled by
	// it that neither controller created.
	handMade bool
	// every is the interval of an @every schedule, 0 for a cron schedule.
	every time.Duration
	// scheduled are the times the schedule names within the test, for the
	// checks that edits land well away from them.
	scheduled []time.Time

	ours    *cronv1.CronJob
	builtin *batchv1.CronJob
}

// seenJob is what the test saw of a Job during the run: Jobs that were
// pruned or replaced are gone by the end, but still count as runs.
type seenJob struct {
	namespace, name string
	owner           types.UID
	annotations     map[string]string
	completion      *metav1.Time
}

// jobLog records every Job of the run from an informer.
type jobLog struct {
	mu   sync.Mutex
	jobs map[types.UID]*seenJob
}

func (l *jobLog) saw(obj any) {
	j, ok := obj.(*batchv1.Job)
	if !ok {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	s := l.jobs[j.UID]
	if s == nil {
		s = &seenJob{namespace: j.Namespace, name: j.Name, annotations: j.Annotations}
		if ref := metav1.GetControllerOf(j); ref != nil {
			s.owner = ref.UID
		}
		l.jobs[j.UID] = s
	}
	if j.Status.CompletionTime != nil {
		s.completion = j.Status.CompletionTime.DeepCopy()
	}
}

func (l *jobLog) knows(uid types.UID) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.jobs[uid] != nil
}

// of returns copies of the Jobs seen that owner controlled.
func (l *jobLog) of(owner types.UID) []seenJob {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []seenJob
	for _, s := range l.jobs {
		if s.owner == owner {
			out = append(out, *s)
		}
	}
	return out
}

func watchJobs(t *testing.T, run string) *jobLog {
	t.Helper()
	log := &jobLog{jobs: map[types.UID]*seenJob{}}
	factory := informers.NewSharedInformerFactoryWithOptions(env.kube, 0, informers.WithTweakListOptions(func(o *metav1.ListOptions) {
		o.LabelSelector = differentialRunLabel + "=" + run
	}))
	informer := factory.Batch().V1().Jobs().Informer()
	if _, err := informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    log.saw,
		UpdateFunc: func(_, obj any) { log.saw(obj) },
	}); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	factory.Start(stop)
	t.Cleanup(func() {
		close(stop)
		factory.Shutdown()
	})
	if !cache.WaitForCacheSync(stop, informer.HasSynced) {
		t.Fatal("the Job informer did not sync")
	}
	return log
}

// side is one controller's half of the test.
type side struct {
	name        string
	namespace   string
	scheduledAt string // the annotation its Jobs carry the scheduled time in
}

// entry is one element of a compared field: a run, named by its scheduled
// time, or something that is not a run (a hand-made Job, a time no Job of
// the CronJob completed at).
type entry struct {
	run   time.Time
	other string
}

func (e entry) String() string {
	if e.other != "" {
		return e.other
	}
	return e.run.UTC().Format("15:04:05Z")
}

func runs(times ...time.Time) []entry {
	out := make([]entry, 0, len(times))
	for _, t := range times {
		out = append(out, entry{run: t})
	}
	return out
}

// sortedEntries sorts and removes duplicates, so fields compare as sets.
func sortedEntries(es []entry) []entry {
	out := slices.Clone(es)
	slices.SortFunc(out, func(a, b entry) int { return strings.Compare(a.String(), b.String()) })
	return slices.CompactFunc(out, func(a, b entry) bool { return a.String() == b.String() })
}

func sameEntries(a, b []entry) bool {
	return slices.EqualFunc(sortedEntries(a), sortedEntries(b), func(x, y entry) bool { return x.String() == y.String() })
}

func entriesString(es []entry) string {
	var parts []string
	for _, e := range sortedEntries(es) {
		parts = append(parts, e.String())
	}
	return "[" + strings.Join(parts, " ") + "]"
}

// cronState is a CronJob's identity and status in the terms both APIs share.
type cronState struct {
	uid                          types.UID
	active                       []corev1.ObjectReference
	lastSchedule, lastSuccessful *metav1.Time
}

// observation is what one side did for one scenario.
type observation struct {
	fields map[string][]entry
	// unsettled says why the side may still change; "" when it will not.
	unsettled string
}

func observe(s *diffScenario, sd side, cj cronState, live []batchv1.Job, log *jobLog) observation {
	o := observation{fields: map[string][]entry{}}
	var problems []string

	seen := log.of(cj.uid)
	// Every run that got a Job, pruned or not; the annotation texts too.
	for _, j := range seen {
		if at, ok := scheduledAt(j.annotations, sd.scheduledAt); ok {
			o.fields[fieldCreated] = append(o.fields[fieldCreated], entry{run: at})
			o.fields[fieldAnnotation] = append(o.fields[fieldAnnotation], entry{other: j.annotations[sd.scheduledAt]})
		}
	}

	byUID := map[types.UID]batchv1.Job{}
	succeeded, failed := 0, 0
	var lastCompletion *metav1.Time
	for _, j := range live {
		if ref := metav1.GetControllerOf(&j); ref == nil || ref.UID != cj.uid {
			continue
		}
		byUID[j.UID] = j
		o.fields[fieldRemaining] = append(o.fields[fieldRemaining], jobEntry(j.Name, j.Annotations, sd.scheduledAt))
		if !log.knows(j.UID) {
			problems = append(problems, "the informer has not seen "+j.Name)
		}
		switch job.Finished(&j) {
		case batchv1.JobComplete:
			succeeded++
			if c := j.Status.CompletionTime; c != nil && (lastCompletion == nil || c.After(lastCompletion.Time)) {
				lastCompletion = c
			}
		case batchv1.JobFailed:
			failed++
		default:
			permanent := j.Spec.ActiveDeadlineSeconds == nil && len(j.Spec.Template.Spec.NodeSelector) > 0
			if !permanent {
				problems = append(problems, j.Name+" is still running")
			}
			if _, ours := j.Annotations[sd.scheduledAt]; ours && !slices.ContainsFunc(cj.active, func(r corev1.ObjectReference) bool { return r.UID == j.UID }) {
				problems = append(problems, j.Name+" is active but not in status.active")
			}
		}
	}
	if limit := s.spec.successfulLimit; limit != nil && succeeded > int(*limit) {
		problems = append(problems, fmt.Sprintf("%d succeeded Jobs kept, limit %d", succeeded, *limit))
	}
	if limit := s.spec.failedLimit; limit != nil && failed > int(*limit) {
		problems = append(problems, fmt.Sprintf("%d failed Jobs kept, limit %d", failed, *limit))
	}
	if lastCompletion != nil && (cj.lastSuccessful == nil || cj.lastSuccessful.Before(lastCompletion)) {
		problems = append(problems, "status.lastSuccessfulTime is behind a completed Job")
	}

	for _, ref := range cj.active {
		j, ok := byUID[ref.UID]
		switch {
		case !ok:
			o.fields[fieldActive] = append(o.fields[fieldActive], entry{other: "missing Job " + ref.Name})
			problems = append(problems, "status.active names a Job that is gone: "+ref.Name)
		default:
			o.fields[fieldActive] = append(o.fields[fieldActive], jobEntry(j.Name, j.Annotations, sd.scheduledAt))
			if job.Finished(&j) != "" {
				problems = append(problems, "status.active names a finished Job: "+ref.Name)
			}
		}
	}
	if cj.lastSchedule != nil {
		o.fields[fieldLastSchedule] = runs(cj.lastSchedule.Time)
	}
	if cj.lastSuccessful != nil {
		// Both controllers copy the completion time of a Job; name the run
		// of that Job, since the two sides' Jobs complete at different
		// instants.
		e := entry{other: "no Job completed at " + cj.lastSuccessful.UTC().Format(time.TimeOnly)}
		for _, j := range seen {
			if at, ok := scheduledAt(j.annotations, sd.scheduledAt); ok && j.completion != nil && j.completion.Equal(cj.lastSuccessful) {
				e = entry{run: at}
			}
		}
		o.fields[fieldLastSuccessful] = []entry{e}
	}
	o.unsettled = strings.Join(problems, "; ")
	return o
}

// jobEntry names a Job by its run, or as hand-made when it has none.
func jobEntry(name string, annotations map[string]string, key string) entry {
	if at, ok := scheduledAt(annotations, key); ok {
		return entry{run: at}
	}
	return entry{other: "hand-made " + name}
}

func scheduledAt(annotations map[string]string, key string) (time.Time, bool) {
	v, ok := annotations[key]
	if !ok {
		return time.Time{}, false
	}
	t, err := time.Parse(time.RFC3339, v)
	return t, err == nil
}

// difference is one field on which the two controllers disagree.
type difference struct {
	scenario      *diffScenario
	field         string
	ours, builtin []entry
}

func (d difference) String() string {
	return fmt.Sprintf("%s (%s): %s: this controller %s, kube-controller-manager %s",
		d.scenario.name, d.scenario.spec, d.field, entriesString(d.ours), entriesString(d.builtin))
}

// documentedDifferences are the differences docs/differential.md explains,
// each recognised by what it looks like.
var documentedDifferences = []struct {
	id      string
	matches func(difference) bool
}{
	{
		// The built-in names a Job by the minute of its run, so of the runs
		// of a schedule that fires more than once a minute only the first
		// of each minute gets a Job; ours names Jobs by the second. Seen
		// through that lens, ours did exactly what the built-in did.
		id: "job-name-seconds",
		matches: func(d difference) bool {
			s := d.scenario
			if s.every <= 0 || s.every >= time.Minute {
				return false
			}
			if d.field == fieldAnnotation {
				// The instants; how each side writes them is
				// annotation-zone's business.
				return sameEntries(firstOfMinute(s, instants(d.ours)), instants(d.builtin))
			}
			return sameEntries(firstOfMinute(s, d.ours), d.builtin)
		},
	},
	{
		// Without timeZone, ours writes the scheduled-time annotation in
		// the controller's local zone, the built-in in UTC: the same
		// instants, other offsets. (Only visible where the local zone is
		// not UTC.)
		id: "annotation-zone",
		matches: func(d difference) bool {
			return d.field == fieldAnnotation && d.scenario.spec.timeZone == nil &&
				sameEntries(instants(d.ours), instants(d.builtin))
		},
	},
	{
		// An unfinished Job the CronJob controls but status.active does not
		// list: ours adds it to status.active, the built-in only warns.
		id: "adopts-unlisted-job",
		matches: func(d difference) bool {
			if d.field != fieldActive || !d.scenario.handMade {
				return false
			}
			var mine []entry
			adopted := false
			for _, e := range d.ours {
				if strings.HasPrefix(e.other, "hand-made ") {
					adopted = true
					continue
				}
				mine = append(mine, e)
			}
			return adopted && sameEntries(mine, d.builtin)
		},
	},
}

// firstOfMinute maps each run of an @every schedule to the first run of the
// same minute: the run whose Job the built-in creates for that minute.
func firstOfMinute(s *diffScenario, es []entry) []entry {
	base := s.ours.CreationTimestamp.Time
	var out []entry
	for _, e := range es {
		if e.other != "" {
			out = append(out, e)
			continue
		}
		minute := e.run.Truncate(time.Minute)
		k := (minute.Sub(base) + s.every - 1) / s.every
		first := base.Add(max(k, 1) * s.every)
		out = append(out, entry{run: first})
	}
	return out
}

// instants reads annotation texts as the runs they name.
func instants(es []entry) []entry {
	var out []entry
	for _, e := range es {
		if at, err := time.Parse(time.RFC3339, e.other); err == nil {
			out = append(out, entry{run: at})
		} else {
			out = append(out, e)
		}
	}
	return out
}

func TestDifferentialAgainstKubeControllerManager(t *testing.T) {
	ours := side{name: "this controller", namespace: newNamespaceFor(t, "ours"), scheduledAt: cronv1.ScheduledAtAnnotation}
	builtin := side{name: "kube-controller-manager", namespace: newNamespaceFor(t, "builtin"), scheduledAt: batchv1.CronJobScheduledTimestampAnnotation}
	run := ours.namespace
	log := watchJobs(t, run)
	startController(t)

	// M1, M2, M3: three whole minutes, the first at least 20 s away so
	// both controllers have the CronJobs before it comes due.
	now := time.Now()
	m1 := now.Add(20 * time.Second).Truncate(time.Minute)
	if m1.Before(now.Add(20 * time.Second)) {
		m1 = m1.Add(time.Minute)
	}
	m := func(i int) time.Time { return m1.Add(time.Duration(i-1) * time.Minute) }
	threeMinutes := []time.Time{m(1), m(2), m(3)}
	// Schedules in the zone both controllers run in, as without timeZone.
	local := fmt.Sprintf("%d,%d,%d * * * *", m(1).Minute(), m(2).Minute(), m(3).Minute())
	// In Kathmandu (UTC+05:45) the same instants have other minutes than in
	// any whole-hour zone: a controller that ignored timeZone would run at
	// other times, outside the test.
	kathmandu, err := time.LoadLocation("Asia/Kathmandu")
	if err != nil {
		t.Fatal(err)
	}
	zoned := zonedSchedule(threeMinutes, kathmandu)
	// Edits land 30 s into M1 and M2. The last Job to end is forbid's M3,
	// started late at M1+140 s and failing 70 s later.
	edit1, edit2 := m(1).Add(30*time.Second), m(2).Add(30*time.Second)
	settleFrom := m(1).Add(220 * time.Second)

	stays := jobBehaviour{stuck: true}
	failsAfter := func(s int64) jobBehaviour { return jobBehaviour{stuck: true, failAfter: s} }
	scenarios := []*diffScenario{
		{name: "allow", spec: commonSpec{schedule: local, policy: "Allow", jobs: stays}},
		// Each Job outlasts a minute by 10 s: M2 is refused while M1 runs,
		// then starts late when it fails (no deadline), and M3 likewise.
		{name: "forbid", spec: commonSpec{schedule: local, policy: "Forbid", jobs: failsAfter(70)}},
		{name: "replace", spec: commonSpec{schedule: local, policy: "Replace", jobs: stays}},
		// M2 comes due while suspended; resuming 30 s later starts it late.
		{name: "suspend-resume", spec: commonSpec{schedule: local}, edits: []diffEdit{
			{at: edit1, what: "suspend", edit: func(c *commonSpec) { c.suspend = true }},
			{at: edit2, what: "resume", edit: func(c *commonSpec) { c.suspend = false }},
		}},
		// The same with a 15 s deadline: M2 is 30 s late at the resume.
		{name: "suspend-resume-deadline", spec: commonSpec{schedule: local, deadline: ptr.To[int64](15)}, edits: []diffEdit{
			{at: edit1, what: "suspend", edit: func(c *commonSpec) { c.suspend = true }},
			{at: edit2, what: "resume", edit: func(c *commonSpec) { c.suspend = false }},
		}},
		// M1's Job fails at M1+90 s, when M2 is 30 s late: past the 15 s
		// deadline, so M2 never starts; M3 starts on time.
		{name: "forbid-deadline", spec: commonSpec{schedule: local, policy: "Forbid", deadline: ptr.To[int64](15), jobs: failsAfter(90)}},
		{name: "history-succeeded", spec: commonSpec{schedule: local, successfulLimit: ptr.To[int32](2)}},
		{name: "history-failed", spec: commonSpec{schedule: local, failedLimit: ptr.To[int32](1), jobs: failsAfter(5)}},
		// M1 fails, then the template is mended: M2 and M3 succeed, and
		// each kind keeps its newest one.
		{name: "history-mixed", spec: commonSpec{schedule: local, successfulLimit: ptr.To[int32](1), failedLimit: ptr.To[int32](1), jobs: failsAfter(5)},
			edits: []diffEdit{{at: edit1, what: "template mended", edit: func(c *commonSpec) { c.jobs = jobBehaviour{} }}}},
		{name: "time-zone", spec: commonSpec{schedule: zoned, timeZone: ptr.To("Asia/Kathmandu")}},
		{name: "every", spec: commonSpec{schedule: "@every 20s", successfulLimit: ptr.To[int32](1)}, every: 20 * time.Second},
		{name: "adopt", spec: commonSpec{schedule: local, policy: "Allow", jobs: stays}, handMade: true},
	}
	for _, s := range scenarios {
		if s.every == 0 {
			s.scheduled = threeMinutes
		}
		createPair(t, s, ours, builtin, run)
	}
	for _, s := range scenarios {
		t.Logf("%s: %s", s.name, s.spec)
	}
	t.Logf("M1 %s, M2 %s, M3 %s (%s)", m(1).Format(time.TimeOnly), m(2).Format(time.TimeOnly), m(3).Format(time.TimeOnly), m(1).Location())

	applyEdits(t, scenarios, run, ours, builtin)

	// Nothing more is due after M3. Wait for the point on the wall clock the
	// schedules were built around (not a guess at how long the controllers
	// take), then poll until every Job that will end has ended and both
	// controllers have caught up.
	time.Sleep(time.Until(settleFrom))
	var results map[*diffScenario][2]observation
	var unsettled string
	err = wait.PollUntilContextTimeout(context.Background(), time.Second, 3*time.Minute, true, func(ctx context.Context) (bool, error) {
		results, unsettled = snapshot(t, scenarios, ours, builtin, log)
		return unsettled == "", nil
	})
	if err != nil {
		// Compare anyway: a side that never settles differs somewhere.
		t.Errorf("the controllers did not settle: %s", unsettled)
	}

	doc, err := os.ReadFile(filepath.Join(env.root, "docs", "differential.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range documentedDifferences {
		if !strings.Contains(string(doc), "`"+d.id+"`") {
			t.Errorf("docs/differential.md does not explain %s", d.id)
		}
	}
	for _, s := range scenarios {
		o, b := results[s][0], results[s][1]
		t.Logf("%s:", s.name)
		for _, field := range []string{fieldCreated, fieldRemaining, fieldActive, fieldLastSchedule, fieldLastSuccessful, fieldAnnotation} {
			d := difference{scenario: s, field: field, ours: o.fields[field], builtin: b.fields[field]}
			if sameEntries(d.ours, d.builtin) {
				t.Logf("  %s: both %s", field, entriesString(d.ours))
				continue
			}
			id := ""
			for _, known := range documentedDifferences {
				if known.matches(d) {
					id = known.id
					break
				}
			}
			if id == "" {
				t.Errorf("difference not in docs/differential.md: %s", d)
				continue
			}
			t.Logf("  %s: this controller %s, kube-controller-manager %s: documented as %s",
				field, entriesString(d.ours), entriesString(d.builtin), id)
		}
	}
}

// zonedSchedule is a cron schedule naming exactly the given minutes in loc.
// Where they span an hour the schedule also names other times, all an hour
// or more away.
func zonedSchedule(times []time.Time, loc *time.Location) string {
	var minutes, hours []string
	for _, t := range times {
		t = t.In(loc)
		if m := fmt.Sprint(t.Minute()); !slices.Contains(minutes, m) {
			minutes = append(minutes, m)
		}
		if h := fmt.Sprint(t.Hour()); !slices.Contains(hours, h) {
			hours = append(hours, h)
		}
	}
	return strings.Join(minutes, ",") + " " + strings.Join(hours, ",") + " * * *"
}

// createPair creates the scenario's CronJob on both sides. An @every pair
// must share its creation second, where both controllers start the grid;
// a pair that straddles a second is deleted and made again under a new name.
func createPair(t *testing.T, s *diffScenario, ours, builtin side, run string) {
	t.Helper()
	ctx := context.Background()
	base := s.name
	for attempt := 1; ; attempt++ {
		name := base
		if attempt > 1 {
			name = fmt.Sprintf("%s-%d", base, attempt)
		}
		o := &cronv1.CronJob{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ours.namespace}}
		s.spec.writeOurs(o, run)
		b := &batchv1.CronJob{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: builtin.namespace}}
		s.spec.writeBuiltin(b, run)
		var err error
		if s.ours, err = env.cron.BatchV1().CronJobs(ours.namespace).Create(ctx, o, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if s.builtin, err = env.kube.BatchV1().CronJobs(builtin.namespace).Create(ctx, b, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if s.every == 0 || s.ours.CreationTimestamp.Equal(&s.builtin.CreationTimestamp) {
			break
		}
		if attempt == 5 {
			t.Fatalf("%s: could not create the pair within one second in 5 attempts", base)
		}
		if err := env.cron.BatchV1().CronJobs(ours.namespace).Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		if err := env.kube.BatchV1().CronJobs(builtin.namespace).Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	s.name = s.ours.Name
	if !s.handMade {
		return
	}
	// The Job a crash between creating a Job and recording it would leave,
	// or one a user made for the CronJob to adopt.
	for _, owner := range []struct {
		ns  string
		ref *metav1.OwnerReference
	}{
		{ours.namespace, metav1.NewControllerRef(s.ours, cronv1.SchemeGroupVersion.WithKind("CronJob"))},
		{builtin.namespace, metav1.NewControllerRef(s.builtin, batchv1.SchemeGroupVersion.WithKind("CronJob"))},
	} {
		tmpl := s.spec.template(run)
		j := &batchv1.Job{
			ObjectMeta: metav1.ObjectMeta{Name: s.name + "-by-hand", Namespace: owner.ns, Labels: tmpl.Labels, OwnerReferences: []metav1.OwnerReference{*owner.ref}},
			Spec:       tmpl.Spec,
		}
		if _, err := env.kube.BatchV1().Jobs(owner.ns).Create(ctx, j, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
}

// applyEdits makes each scenario's edits to both CronJobs at their times,
// and fails if one landed within 10 s after or 5 s before a scheduled time:
// then the controllers may have seen the edit on different sides of a run,
// and the comparison would not be fair.
func applyEdits(t *testing.T, scenarios []*diffScenario, run string, ours, builtin side) {
	t.Helper()
	type pending struct {
		s *diffScenario
		e diffEdit
	}
	var edits []pending
	for _, s := range scenarios {
		for _, e := range s.edits {
			edits = append(edits, pending{s, e})
		}
	}
	slices.SortFunc(edits, func(a, b pending) int { return a.e.at.Compare(b.e.at) })
	ctx := context.Background()
	for _, p := range edits {
		// The edit belongs between two scheduled times, by the wall clock.
		time.Sleep(time.Until(p.e.at))
		p.e.edit(&p.s.spec)
		begun := time.Now()
		err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			cj, err := env.cron.BatchV1().CronJobs(ours.namespace).Get(ctx, p.s.name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			p.s.spec.writeOurs(cj, run)
			_, err = env.cron.BatchV1().CronJobs(ours.namespace).Update(ctx, cj, metav1.UpdateOptions{})
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
			cj, err := env.kube.BatchV1().CronJobs(builtin.namespace).Get(ctx, p.s.name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			p.s.spec.writeBuiltin(cj, run)
			_, err = env.kube.BatchV1().CronJobs(builtin.namespace).Update(ctx, cj, metav1.UpdateOptions{})
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		done := time.Now()
		for _, at := range p.s.scheduled {
			if done.After(at.Add(-5*time.Second)) && begun.Before(at.Add(10*time.Second)) {
				t.Fatalf("%s: the edit %q took from %s to %s, too close to the run of %s to compare fairly (the machine stalled)",
					p.s.name, p.e.what, begun.Format(time.TimeOnly), done.Format(time.TimeOnly), at.Format(time.TimeOnly))
			}
		}
	}
}

// snapshot reads both sides of every scenario and says why it may still
// change ("" when it will not).
func snapshot(t *testing.T, scenarios []*diffScenario, ours, builtin side, log *jobLog) (map[*diffScenario][2]observation, string) {
	t.Helper()
	ctx := context.Background()
	begun := time.Now()
	ourJobs := listJobs(t, ours.namespace)
	builtinJobs := listJobs(t, builtin.namespace)
	ourCrons, err := env.cron.BatchV1().CronJobs(ours.namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	builtinCrons, err := env.kube.BatchV1().CronJobs(builtin.namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	done := time.Now()

	out := map[*diffScenario][2]observation{}
	var unsettled []string
	for _, s := range scenarios {
		var o, b cronState
		for _, cj := range ourCrons.Items {
			if cj.UID == s.ours.UID {
				o = cronState{uid: cj.UID, active: cj.Status.Active, lastSchedule: cj.Status.LastScheduleTime, lastSuccessful: cj.Status.LastSuccessfulTime}
			}
		}
		for _, cj := range builtinCrons.Items {
			if cj.UID == s.builtin.UID {
				b = cronState{uid: cj.UID, active: cj.Status.Active, lastSchedule: cj.Status.LastScheduleTime, lastSuccessful: cj.Status.LastSuccessfulTime}
			}
		}
		obs := [2]observation{observe(s, ours, o, ourJobs, log), observe(s, builtin, b, builtinJobs, log)}
		out[s] = obs
		for i, sd := range []side{ours, builtin} {
			if obs[i].unsettled != "" {
				unsettled = append(unsettled, fmt.Sprintf("%s, %s: %s", s.name, sd.name, obs[i].unsettled))
			}
		}
		if s.every > 0 {
			// An @every schedule never stops: read it only well after a
			// run (both controllers have handled it) and before the next.
			base := s.ours.CreationTimestamp.Time
			last := base.Add(begun.Sub(base) / s.every * s.every)
			if begun.Sub(last) < 10*time.Second || last.Add(s.every).Sub(done) < 3*time.Second {
				unsettled = append(unsettled, fmt.Sprintf("%s: read at %s, too close to a run", s.name, begun.Format(time.TimeOnly)))
			}
		}
	}
	return out, strings.Join(unsettled, "\n")
}
