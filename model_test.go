package main

// A model-based test of the controller's one promise: every due run starts
// exactly once, never twice, never silently dropped, whatever the input,
// timing, faults or restarts.
//
// Each seed is a random walk over a simulated cluster (model_sim_test.go:
// a strict in-memory API server with fault injection). The controller's
// informers are never started: the walk decides when their indexers catch
// up with the store, and calls syncHandler itself, so syncs run on stale
// caches, behind deferred status writes, across restarts and clean
// shutdowns, while users edit specs, Jobs finish or vanish, exclusion
// Calendars come, change and go (model_calendar_test.go), and a fake clock
// jumps by seconds to days, sometimes onto daylight-saving changes. Users
// also (model_moves_test.go) detach a Job from its CronJob (remove its
// controller reference, to keep it past the history limit), delete a
// CronJob (in the background, its Jobs left Terminating behind the
// run-record finalizer, or with --cascade=orphan) and create it again under
// its name, often with the run-now annotation its manifest carried, and
// edit a spec between a burst's deferred decision and a clean shutdown's
// flush; inputs reach their bounds: startingDeadlineSeconds 10000000000
// ("no deadline", more than a time.Duration holds), a 52-character CronJob
// name, Calendar range bounds at daylight-saving changes. After every step
// the invariants I1-I11 (model_oracle_test.go) are checked:
//
//	I1 never twice            I5 syncs neither panic, block, nor err without cause
//	I2 no ghost run           I6 a detached Job: never active, deleted, blocking, or released early
//	I3 not dropped, counted   I7 a CronJob created again runs its own runs and run-now
//	I4 status agrees          I8 inputs at their bounds (huge deadline, long names)
//	I9 failurePolicy: no start while paused but one trial, held runs counted, the streak's count
//	I10 the run history       I11 maxRuns: never a run past it, the count exact
//
// CronJobs may carry spec.failurePolicy, their Jobs fail in streaks, and
// users set, edit and remove the policy and resume a paused CronJob
// (model_failures_test.go). Users raise spec.maxRuns, lower it to the runs
// started or below, remove it, and set it on a CronJob without it
// (model_maxruns_test.go).
// Users create CronJobRuns, some asking for an env var their CronJob does
// not allow, some with a TTL, and delete them; the CronJobRun cache lags
// as the others do (model_runs_test.go). I1 covers their Jobs as it covers
// run-now Jobs (one name per CronJobRun: a second create of it is
// I1.run-now-twice), and I11 checks a CronJobRun's Job is made once
// across every CronJob under its name (I11.run-started-twice), its status
// names no other Job, a refused one has none, and one still there that
// asks for no env its CronJob refuses has its Job after a settled sync with
// no fault (I11.run-not-started). At the end of every walk the faults stop,
// the caches catch up and every CronJob syncs (quiet), so that check sees
// every CronJobRun once the faults have stopped.
// The categories of I6-I8: I6.detached-active, I6.detached-deleted
// (/run-not-started), I6.forbid-blocked, I6.detached-released-early;
// I7.recreated-runnow, I7.recreated-run-not-started; I3.flush-stale (a
// clean shutdown writes a decision made under an older spec);
// I8.huge-deadline-run-not-started, I8.huge-deadline/<I3 category>,
// I8.backfill-long-name (TestBackfillModelWalk); I9.paused-start (/stale-cache,
// /decision-not-kept), I9.trial-not-started, I9.paused-dropped, I9.streak
// (/not-paused, /kept-without-policy), I9.resume-at. The
// walk goes on after a violation, so one bug does not hide another; the
// summary lists every category of violation with the shortest replayable
// seed for it and the trace of its last steps.
//
//	go test -run TestModel .                                       # the make test size
//	go test -run TestModel . -args -model.seeds=2000 -model.steps=500
//	go test -run TestModel . -args -model.seed=17 -model.steps=40  # replay one seed, with its trace
//	go test -run TestModel . -args -model.duration=20s -model.first=$RANDOM
//	MODEL_KNOWN=I3.catchup-all-not-in-one-sync,I4.active go test ./...       # report these, fail on the rest

import (
	"context"
	"flag"
	"fmt"
	"math/rand"
	"os"
	"runtime/debug"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	kubeinformers "k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	testingclock "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	cronv1 "github.com/cronjob-controller/cronjob-controller/pkg/apis/batch/v1"
	informers "github.com/cronjob-controller/cronjob-controller/pkg/generated/informers/externalversions"
	"github.com/cronjob-controller/cronjob-controller/pkg/job"
	"github.com/cronjob-controller/cronjob-controller/pkg/planner"
	"github.com/cronjob-controller/cronjob-controller/pkg/slim"
)

var (
	modelSeedsFlag    = flag.Int("model.seeds", 60, "TestModel: how many seeds (walks) to run")
	modelStepsFlag    = flag.Int("model.steps", 200, "TestModel: steps per walk")
	modelFirstFlag    = flag.Int64("model.first", 1, "TestModel: the first seed")
	modelSeedFlag     = flag.Int64("model.seed", 0, "TestModel: replay this one seed, logging every step (0: off)")
	modelDurationFlag = flag.Duration("model.duration", 0, "TestModel: run seeds one after another from -model.first until this much time has passed (-model.seeds still caps them)")
	modelVerboseFlag  = flag.Bool("model.v", false, "TestModel: log every step of every walk")
	modelKnownFlag    = flag.String("model.known", envOr("MODEL_KNOWN", modelKnownDefault), "TestModel: comma-separated violation categories (or prefixes) to report without failing; default $MODEL_KNOWN, else none")
	modelLagFlag      = flag.String("model.lag", envOr("MODEL_LAG", "bounded"), "TestModel: informer lag of the walks: bounded (below the controller's own-writes window, every walk) or any (half the walks unbounded, past the own-writes window); default $MODEL_LAG")
)

// modelSpecGenAnnotation, on the job template, carries the generation of the
// spec it belongs to into every Job made from it: what the controller read.
const modelSpecGenAnnotation = "model.test/spec-gen"

// modelOwnWritesWindow is how long the controller may trust a write of its
// own over its caches. The walk never calls the informer event handlers that
// would tell it sooner that the cache has caught up, so a Job it created and
// a user deleted within this window may still look alive to it; such syncs
// are not counted as settled.
const modelOwnWritesWindow = time.Minute + time.Second

// modelKnownDefault is what the unit run reports without failing (every
// run still prints it): nothing now. The crash window (a run's Job created,
// finished and deleted before any status recorded the run) is closed by the
// run-record finalizer; its categories (first-job-never-seen,
// first-run-unrecorded, after-run-unrecorded) are findings again.
//
// (I1.twice/first-job-never-seen, a run's Job created, its response lost,
// finished and deleted by TTL before any status recorded the run, is gone
// since every Job carries the run-record finalizer: the store keeps the Job
// until the status records its run.)
//
// `make model` shows everything.
const modelKnownDefault = ""

func envOr(name, def string) string {
	if v, ok := os.LookupEnv(name); ok {
		return v
	}
	return def
}

// modelLagBound is the informer lag of the walks with bounded lag: below the
// window in which the controller trusts its own writes over its caches.
const modelLagBound = 50 * time.Second

// modelTraceSteps is how many steps a violation's trace shows.
const modelTraceSteps = 30

// modelClock is the fake clock the controller gets. Its tickers tick at
// most hourly: the work queue's heartbeat and metrics tickers (10 s,
// 500 ms) only wake loops the walk does not use (it never calls AddAfter),
// and the fake clock steps each ticker through every period it jumps over,
// which over the walks' days-long jumps costs most of a run under -race.
type modelClock struct{ *testingclock.FakeClock }

func (c modelClock) NewTicker(d time.Duration) clock.Ticker {
	return c.FakeClock.NewTicker(max(d, time.Hour))
}

// modelNewControllerMu serialises NewController, which adds the CronJob
// types to client-go's global scheme, across parallel walks.
var modelNewControllerMu sync.Mutex

func TestModel(t *testing.T) {
	seeds, steps := *modelSeedsFlag, *modelStepsFlag
	first := *modelFirstFlag
	replay := *modelSeedFlag != 0
	if replay {
		first, seeds = *modelSeedFlag, 1
	}
	sum := newModelSummary()
	start := time.Now()
	t.Run("walks", func(t *testing.T) {
		for i := 0; seeds <= 0 || i < seeds; i++ {
			if *modelDurationFlag > 0 && time.Since(start) > *modelDurationFlag {
				break
			}
			if *modelDurationFlag == 0 && seeds <= 0 {
				break
			}
			seed := first + int64(i)
			t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
				if *modelDurationFlag == 0 && !replay {
					t.Parallel()
				}
				w := newModelWalk(t, seed, replay || *modelVerboseFlag)
				w.run(steps)
				sum.add(w)
				for _, v := range w.sortedViolations() {
					msg := fmt.Sprintf("%s at step %d (%d times in this walk): %s", v.cat, v.step, w.counts[v.cat], v.msg)
					if modelKnown(v.cat) {
						t.Log("known: " + msg)
					} else {
						t.Error(msg)
					}
					if replay {
						t.Logf("trace of %s:\n%s", v.cat, v.trace)
					}
				}
			})
		}
	})
	sum.report(t, steps, time.Since(start))
}

func modelKnown(cat string) bool {
	for _, k := range strings.Split(*modelKnownFlag, ",") {
		if k = strings.TrimSpace(k); k != "" && strings.HasPrefix(cat, k) {
			return true
		}
	}
	return false
}

// modelViolation is the first violation of one category in a walk.
type modelViolation struct {
	bounded bool // found in a walk whose informers lag less than the own-writes window
	cat     string
	seed    int64
	step    int
	msg     string
	trace   string
}

// modelSummary gathers the walks' violations and coverage.
type modelSummary struct {
	mu     sync.Mutex
	walks  int
	steps  int
	stats  map[string]int
	byCat  map[string]*modelViolation // the shortest replay per category
	seeds  map[string][]int64
	counts map[string]int
	// bounded counts, per category, the walks with bounded informer lag
	// that found it; more the walks beyond the seeds kept.
	bounded, more map[string]int
}

func newModelSummary() *modelSummary {
	return &modelSummary{stats: map[string]int{}, byCat: map[string]*modelViolation{}, seeds: map[string][]int64{}, counts: map[string]int{}, bounded: map[string]int{}, more: map[string]int{}}
}

func (s *modelSummary) add(w *modelWalk) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.walks++
	s.steps += w.step
	for k, v := range w.stats {
		s.stats[k] += v
	}
	for cat, v := range w.viol {
		s.seeds[cat] = append(s.seeds[cat], v.seed)
		s.counts[cat] += w.counts[cat]
		if v.bounded {
			s.bounded[cat]++
		}
		// The replay shown is the shortest, from a walk with bounded
		// informer lag if there is one.
		best, ok := s.byCat[cat]
		if !ok || (v.bounded && !best.bounded) ||
			(v.bounded == best.bounded && (v.step < best.step || (v.step == best.step && v.seed < best.seed))) {
			s.byCat[cat] = v
		}
		// The smallest few seeds say enough, whatever order walks end in.
		slices.Sort(s.seeds[cat])
		if len(s.seeds[cat]) > 12 {
			s.seeds[cat] = s.seeds[cat][:12]
			s.more[cat]++
		}
	}
}

func (s *modelSummary) report(t *testing.T, steps int, took time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var b strings.Builder
	fmt.Fprintf(&b, "model: %d walks, %d steps in %v\n", s.walks, s.steps, took.Round(time.Millisecond))
	fmt.Fprintf(&b, "checks made and skipped (a check counts as made only if it required something):\n")
	keys := make([]string, 0, len(s.stats))
	for k := range s.stats {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(&b, "  %-58s %d\n", k, s.stats[k])
	}
	t.Log(b.String())
	// Never vacuous: each invariant must have checked something.
	if s.walks >= 20 && s.steps >= 2000 {
		for _, k := range []string{
			"I1 Jobs created, checked", "I2 scheduled Jobs created, checked",
			"I3 due run required to have started", "I3 missed-run windows compared",
			"I4 settled statuses compared", "I5 syncs run",
			"I2 scheduled Jobs of CronJobs naming Calendars, checked", "I3 Calendar counts checked",
			"I3 due run of a CronJob naming Calendars required to have started",
			"I3 newest due run a Calendar holds required to be counted",
			"I9 streak compared, failures counted", "I9 resumeAt compared",
			"I9 scheduled Jobs created under a stored pause, checked", "I9 runs held while paused required to be counted",
			"I11 Jobs of a CronJob with maxRuns checked", "I3 due run of a CronJob with maxRuns required to have started",
			"I11 CronJobRuns required to have started",
		} {
			if s.stats[k] == 0 {
				t.Errorf("model: invariant check %q never checked anything: the oracle is vacuous", k)
			}
		}
	}
	if len(s.byCat) == 0 {
		return
	}
	cats := make([]string, 0, len(s.byCat))
	for c := range s.byCat {
		cats = append(cats, c)
	}
	sort.Strings(cats)
	b.Reset()
	fmt.Fprintf(&b, "model: %d categories of violation:\n", len(cats))
	for _, c := range cats {
		v := s.byCat[c]
		sort.Slice(s.seeds[c], func(i, j int) bool { return s.seeds[c][i] < s.seeds[c][j] })
		seeds := fmt.Sprint(s.seeds[c])
		if s.more[c] > 0 {
			seeds += "..."
		}
		fmt.Fprintf(&b, "  %s: %d walks (%d with informer lag <= %v), %d times, seeds %s\n      replay: go test -run TestModel . -args -model.seed=%d -model.steps=%d\n",
			c, len(s.seeds[c])+s.more[c], s.bounded[c], modelLagBound, s.counts[c], seeds, v.seed, v.step)
	}
	for _, c := range cats {
		v := s.byCat[c]
		fmt.Fprintf(&b, "\n=== %s: seed %d, step %d\n%s\n--- trace (last %d steps) ---\n%s", c, v.seed, v.step, v.msg, modelTraceSteps, v.trace)
	}
	t.Log(b.String())
}

// modelWalk is one seeded random walk.
type modelWalk struct {
	t    testing.TB
	seed int64
	rng  *rand.Rand
	// maxRunsRng draws spec.maxRuns (model_maxruns_test.go) apart from
	// rng, so every seed still walks as it did before maxRuns.
	maxRunsRng *rand.Rand
	// holdsRng draws spec.suspendUntil and spec.skipTimes
	// (model_holds_test.go) apart from rng, for the same reason.
	holdsRng *rand.Rand
	verbose  bool
	step     int
	clock    *testingclock.FakeClock
	srv      *modelServer
	ctl      *modelCtl
	ctls     int
	cjs      []*modelCJ
	byUID    map[types.UID]*modelCJ
	ctx      context.Context

	// foreign names the Jobs a user made under the names of runs.
	foreign map[string]bool
	// runNowSets counts how often the walk set each run-now value, per
	// CronJob name.
	runNowSets map[string]map[string]int
	// runNowLast are the last two values the walk set, per CronJob name,
	// the latest last.
	runNowLast map[string][2]string

	// createdToCheck are Jobs created since the last check.
	createdToCheck []modelCreatedCheck

	// The sync in progress, if any.
	cur   *modelSyncRec
	curCJ *modelCJ
	// curSettled says the sync in progress began on caught-up caches.
	curSettled bool
	events     []string
	// refusedNames are the Job names the controller said a foreign Job
	// holds (a FailedCreate Event): runs refused for good.
	refusedNames map[string]bool

	// lagBound, when set, is the most the informers lag: every write older
	// reaches the caches before a sync. Unset, they may lag any time.
	lagBound time.Duration

	// stepChecked are the invariants that checked something this step.
	stepChecked map[string]bool

	// namings are the schedules parsed, namedCache which times they name.
	namings    map[string]*modelNaming
	namedCache map[modelNamedKey]modelTri

	// cal is the Calendars in the store and their history (model_calendar_test.go).
	cal modelCals

	// detached are the Jobs users took from their CronJobs, by UID;
	// retiredJobs the Jobs of CronJobs deleted, by UID, with that CronJob
	// (model_moves_test.go).
	detached    map[types.UID]*modelDetached
	retiredJobs map[types.UID]*modelCJ
	// jobHandlers and cronHandlers are the event handler calls due when
	// a cache delivers the write at that position of jobLog or cronLog.
	jobHandlers, cronHandlers map[int]modelHandlerCall

	// runs counts the CronJobRuns users created; reportedTwice the Jobs
	// of CronJobRuns reported created twice; runJobsMade how often the
	// store made each CronJobRun's Job, for any CronJob, deleted or not
	// (model_runs_test.go).
	runs          int
	reportedTwice map[string]bool
	runJobsMade   map[string]int

	trace  [][]string // lines per step, the last modelTraceSteps+1
	viol   map[string]*modelViolation
	counts map[string]int
	stats  map[string]int
	done   bool
}

// modelCJ is what the walk knows of one CronJob, for the oracle.
type modelCJ struct {
	name    string
	key     cache.ObjectName
	skey    string
	uid     types.UID
	created time.Time
	specs   map[int64]cronv1.CronJobSpec
	// storeGens is the generation in the store from each time on.
	storeGens []modelGenAt
	// jobs are every Job controlled by this CronJob the store ever created.
	jobs    []*modelJobRec
	records []*modelSyncRec
	anchor  *modelAnchor
	// completions are the completion times (Unix seconds) of its Jobs.
	completions map[int64]bool
	// countedEarly are runs found counted as missed while they could still
	// start, reported once; countedThenStarted those that started after.
	countedEarly, countedThenStarted map[int64]bool
	// reportedDropped are runs reported as not started.
	reportedDropped map[int64]bool
	// ghostAt is the latest time a Job of it was created for that is not a
	// run (I2): what follows from that is reported as such.
	ghostAt time.Time
	// gridBroken says a Job was made off its @every grid.
	gridBroken bool
	// recordedLST is the latest lastScheduleTime the store ever held.
	recordedLST time.Time
	// retired says the CronJob was deleted; recreated that it was created
	// under the name of one deleted.
	retired, recreated bool
	// fail is its spec.failurePolicy side (model_failures_test.go).
	fail *modelFail
	// uncut is the last run when a maxRuns edit ended the cut it made
	// (model_maxruns_test.go).
	uncut time.Time
}

type modelGenAt struct {
	at  time.Time
	gen int64
}

// modelJobRec is one Job the store created for a CronJob.
type modelJobRec struct {
	name      string
	uid       types.UID
	scheduled time.Time // zero for run-now Jobs
	manual    bool
	gen       int64 // the spec generation it was made from
	createdAt time.Time
	step      int
	lost      bool // the create's response was lost
	visible   bool // the controller saw it: in a response or its cache
	// seenRunning says the controller saw it before it finished.
	seenRunning bool
	// unrecorded says it finished or was deleted before the status in the
	// store recorded it (as the last run, or the last run-now value).
	unrecorded bool
	sync       *modelSyncRec
}

// modelSyncRec is one sync of a CronJob whose cache held it: what spec
// generation it may have read, and whether that view was kept.
type modelSyncRec struct {
	seq      int
	step     int
	at       time.Time
	inst     int
	lo, hi   int64 // the generation in its cache, and the newest it wrote itself
	revealed int64 // the generation it read, when a write shows it
	faulted  bool
	wroteOK  bool // its status reached the store
	deferred bool // its status was kept for later
	jobsN    int  // len(modelCJ.jobs) after it
	cal      int  // the Calendar cache's position in modelCals.log: what it read
}

// modelCtl is one controller process.
type modelCtl struct {
	id                    int
	c                     *Controller
	jobIdx, cronIdx       cache.Indexer
	jobCursor, cronCursor int
	// calIdx is the Calendar cache, fed from modelCals.log up to calCursor;
	// runIdx the CronJobRun cache, fed from the store's runLog up to
	// runCursor.
	calIdx    cache.Indexer
	calCursor int
	runIdx    cache.Indexer
	runCursor int
	// lastWriteGen is, per CronJob, the generation of its newest status
	// this process wrote.
	lastWriteGen map[types.UID]int64
	// created are the Jobs this process created and got the response for;
	// deleted those it deleted (or found gone) itself.
	created, deleted map[types.UID]modelCreated
	// queued are the keys known to wait in its queue.
	queued map[cache.ObjectName]bool
}

type modelCreated struct {
	key string
	at  time.Time
}

// modelRecorder keeps the controller's Events for the trace.
type modelRecorder struct{ w *modelWalk }

func (r modelRecorder) Event(obj runtime.Object, eventtype, reason, message string) {
	name := ""
	if m, ok := obj.(metav1.Object); ok {
		name = m.GetName()
	}
	r.w.events = append(r.w.events, fmt.Sprintf("%s %s %s: %s", name, eventtype, reason, message))
	var job string
	if reason == planner.ReasonFailedCreate && strings.Contains(message, "is not controlled by this CronJob") {
		if _, err := fmt.Sscanf(message, "Job %s already exists", &job); err == nil {
			if r.w.refusedNames == nil {
				r.w.refusedNames = map[string]bool{}
			}
			r.w.refusedNames[job] = true
		}
	}
}

func (r modelRecorder) Eventf(obj runtime.Object, eventtype, reason, messageFmt string, args ...any) {
	r.Event(obj, eventtype, reason, fmt.Sprintf(messageFmt, args...))
}

func (r modelRecorder) AnnotatedEventf(obj runtime.Object, _ map[string]string, eventtype, reason, messageFmt string, args ...any) {
	r.Event(obj, eventtype, reason, fmt.Sprintf(messageFmt, args...))
}

func newModelWalk(t testing.TB, seed int64, verbose bool) *modelWalk {
	rng := rand.New(rand.NewSource(seed))
	w := &modelWalk{
		t: t, seed: seed, rng: rng, verbose: verbose, maxRunsRng: rand.New(rand.NewSource(seed ^ 0x6d617852756e73)),
		holdsRng:    rand.New(rand.NewSource(seed ^ 0x686f6c6473)),
		byUID:       map[types.UID]*modelCJ{},
		namedCache:  map[modelNamedKey]modelTri{},
		stepChecked: map[string]bool{},
		namings:     map[string]*modelNaming{},
		foreign:     map[string]bool{},
		runNowSets:  map[string]map[string]int{},
		runNowLast:  map[string][2]string{},
		runJobsMade: map[string]int{},
		viol:        map[string]*modelViolation{},
		counts:      map[string]int{},
		stats:       map[string]int{},
		ctx:         klog.NewContext(context.Background(), logr.Discard()),
	}
	if rng.Float64() < 0.5 || *modelLagFlag == "bounded" {
		w.lagBound = modelLagBound
	}
	w.clock = testingclock.NewFakeClock(w.startTime())
	w.srv = newModelServer(w.clock, seed)
	w.srv.onJobCreated = w.jobCreated
	w.srv.onJobDeleting = w.noteRunEnds
	w.srv.onStatus = w.noteStatus
	w.srv.onCronJobRead = w.readLive
	w.initMoves()
	return w
}

// startTime is a random instant of 2026-2027, often just before a
// daylight-saving change of one of the zones.
func (w *modelWalk) startTime() time.Time {
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	t := base.Add(time.Duration(w.rng.Int63n(int64(2 * 365 * 24 * time.Hour)))).Truncate(time.Second)
	if w.rng.Float64() < 0.35 {
		zone := modelDSTZones[w.rng.Intn(len(modelDSTZones))]
		loc, _ := time.LoadLocation(zone)
		if next := modelNextTransition(loc, t); !next.IsZero() {
			t = next.Add(-time.Duration(w.rng.Int63n(int64(30 * time.Hour)))).Truncate(time.Second)
		}
	}
	return t
}

func (w *modelWalk) logf(format string, args ...any) {
	line := fmt.Sprintf(format, args...)
	w.trace[len(w.trace)-1] = append(w.trace[len(w.trace)-1], line)
	if w.verbose {
		w.t.Log(line)
	}
}

// violate records a broken invariant. The first of each category in a walk
// keeps the trace.
func (w *modelWalk) violate(cat, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	w.counts[cat]++
	w.logf("    !! %s: %s", cat, msg)
	if _, ok := w.viol[cat]; ok {
		return
	}
	w.viol[cat] = &modelViolation{cat: cat, seed: w.seed, step: w.step, msg: msg, trace: w.traceText(), bounded: w.lagBound > 0}
}

func (w *modelWalk) traceText() string {
	var b strings.Builder
	from := max(0, len(w.trace)-modelTraceSteps)
	for _, lines := range w.trace[from:] {
		for _, l := range lines {
			b.WriteString(l)
			b.WriteByte('\n')
		}
	}
	return b.String()
}

func (w *modelWalk) sortedViolations() []*modelViolation {
	out := make([]*modelViolation, 0, len(w.viol))
	for _, v := range w.viol {
		out = append(out, v)
	}
	sort.Slice(out, func(i, j int) bool {
		return out[i].step < out[j].step || (out[i].step == out[j].step && out[i].cat < out[j].cat)
	})
	return out
}

func (w *modelWalk) stat(name string) { w.stats[name]++ }

// checked counts a check that required something, and the step it was in.
func (w *modelWalk) checked(name string) {
	w.stat(name)
	w.stepChecked[name[:2]] = true
}

func (w *modelWalk) now() time.Time { return w.clock.Now() }

func modelFmtTime(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	if t.Nanosecond() != 0 {
		return t.UTC().Format("2006-01-02T15:04:05.000Z")
	}
	return t.UTC().Format("2006-01-02T15:04:05Z")
}

// run walks steps steps, then stops the controller.
func (w *modelWalk) run(steps int) {
	w.trace = append(w.trace, nil)
	n := 1
	switch r := w.rng.Float64(); {
	case r < 0.3:
		n = 2
	case r < 0.45:
		n = 3
	}
	lag := "unbounded informer lag"
	if w.lagBound > 0 {
		lag = fmt.Sprintf("informer lag at most %v", w.lagBound)
	}
	w.logf("step 0 %s: seed %d, %d CronJobs, %s", modelFmtTime(w.now()), w.seed, n, lag)
	long := w.rng.Float64() < 0.05
	for i := range n {
		name := fmt.Sprintf("cj-%c", 'a'+i)
		if i == 0 && long {
			name = modelLongName
		}
		w.createCronJob(name)
		w.clock.Step(time.Duration(w.rng.Intn(120)) * time.Second)
	}
	w.initialCalendars()
	w.restart(false)
	defer func() {
		if w.ctl != nil {
			w.ctl.c.queue.ShutDown()
		}
		// The queues' ticker loops end at their next tick.
		w.clock.Step(2 * time.Hour)
	}()
	for w.step = 1; w.step <= steps && !w.done; w.step++ {
		w.trace = append(w.trace, nil)
		if len(w.trace) > modelTraceSteps+1 {
			w.trace = w.trace[1:]
		}
		w.doStep()
		w.checkRuns()
		for inv := range w.stepChecked {
			w.stats["steps in which "+inv+" checked something"]++
		}
		clear(w.stepChecked)
	}
	w.step--
	w.quiet()
}

// The inputs the walk draws from.
var (
	modelSchedules = []string{
		"0 * * * *", "@hourly", "0  *  * * *", "*/5 * * * *", "*/7 * * * *", "*/30 * * * *",
		"30 2 * * *", "0 2 * * *", "45 1 * * *", "0 9 * * *", "15 3 * * *", "@daily",
		"0 9 * * MON-FRI", "30 8 * * SAT,SUN", "0 0 1 * *",
		"@every 90s", "@every 1h",
		"H * * * *", "H/15 * * * *", "H H(0-7) * * *",
	}
	modelBadSchedules = []string{"not a schedule", "61 * * * *", "@every 500ms", "TZ=UTC 0 * * * *", "59 23 31 2 *"}
	modelZones        = []string{"UTC", "Etc/UTC", "Europe/Berlin", "America/New_York", "Australia/Lord_Howe"}
	modelDSTZones     = []string{"Europe/Berlin", "America/New_York", "Australia/Lord_Howe"}
	modelDeadlines    = []*int64{nil, nil, ptr.To[int64](10), ptr.To[int64](30), ptr.To[int64](60), ptr.To[int64](300), ptr.To[int64](3600), ptr.To[int64](86400), ptr.To(modelHugeDeadline)}
)

func pick[T any](r *rand.Rand, xs []T) T { return xs[r.Intn(len(xs))] }

func (w *modelWalk) randomSchedule() string {
	if w.rng.Float64() < 0.06 {
		return pick(w.rng, modelBadSchedules)
	}
	return pick(w.rng, modelSchedules)
}

// maybeSchedules replaces, one time in eight, spec.schedule by a list of two
// or three schedules (no @every: the schema refuses it in a list).
func (w *modelWalk) maybeSchedules(s *cronv1.CronJobSpec) {
	if w.rng.Float64() >= 0.125 {
		return
	}
	s.Schedule, s.Schedules = "", nil
	for len(s.Schedules) < 2+w.rng.Intn(2) {
		if e := pick(w.rng, modelSchedules); !strings.HasPrefix(e, "@every") {
			s.Schedules = append(s.Schedules, cronv1.ScheduleEntry(e))
		}
	}
}

func (w *modelWalk) randomZone() *string {
	if w.rng.Float64() < 0.03 {
		return ptr.To("Mars/Olympus_Mons")
	}
	return ptr.To(pick(w.rng, modelZones))
}

// randomTTL is a template's ttlSecondsAfterFinished: none half the time,
// else 0 or an hour (the walk's TTL controller deletes a finished Job with
// any TTL at its own pace, and one without none).
func (w *modelWalk) randomTTL() *int32 {
	return pick(w.rng, []*int32{nil, nil, ptr.To[int32](0), ptr.To[int32](3600)})
}

func (w *modelWalk) createCronJob(name string) {
	spec := cronv1.CronJobSpec{
		Schedule:                   w.randomSchedule(),
		TimeZone:                   w.randomZone(),
		StartingDeadlineSeconds:    pick(w.rng, modelDeadlines),
		ConcurrencyPolicy:          pick(w.rng, []cronv1.ConcurrencyPolicy{cronv1.AllowConcurrent, cronv1.AllowConcurrent, cronv1.ForbidConcurrent, cronv1.ReplaceConcurrent}),
		CatchUpPolicy:              pick(w.rng, []cronv1.CatchUpPolicy{cronv1.CatchUpLatest, cronv1.CatchUpLatest, cronv1.CatchUpAll, cronv1.CatchUpNone}),
		CatchUpLimit:               pick(w.rng, []*int32{nil, ptr.To[int32](1), ptr.To[int32](3), ptr.To[int32](10)}),
		Suspend:                    ptr.To(w.rng.Float64() < 0.05),
		SuccessfulJobsHistoryLimit: pick(w.rng, []*int32{nil, ptr.To[int32](0), ptr.To[int32](1), ptr.To[int32](3)}),
		FailedJobsHistoryLimit:     pick(w.rng, []*int32{nil, ptr.To[int32](0), ptr.To[int32](1)}),
		JobTemplate: batchv1.JobTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{
				Labels:      map[string]string{"app": name},
				Annotations: map[string]string{modelSpecGenAnnotation: "1"},
			},
			Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				RestartPolicy: corev1.RestartPolicyOnFailure,
				Containers:    []corev1.Container{{Name: "c", Image: "busybox"}},
			}}},
		},
	}
	w.maybeSchedules(&spec)
	if modelAllows(name) {
		spec.RunOverrides = &cronv1.RunOverrides{AllowedEnv: []string{modelAllowedEnv}}
	}
	spec.JobTemplate.Spec.TTLSecondsAfterFinished = w.randomTTL()
	if w.rng.Float64() < 0.35 {
		spec.FailurePolicy = w.randomFailurePolicy()
	}
	if w.rng.Float64() < 0.4 {
		spec.ExcludeCalendars = w.randomCalendarNames()
	}
	if w.rng.Float64() < 0.1 {
		// An active window: opening up to three hours from now, closing one
		// to twelve hours after that, or open on one side.
		lo := w.now().Add(time.Duration(w.rng.Intn(180)) * time.Minute).Truncate(time.Second)
		hi := lo.Add(time.Duration(60+w.rng.Intn(660)) * time.Minute)
		switch w.rng.Intn(3) {
		case 0:
			spec.NotBefore = &metav1.Time{Time: lo}
		case 1:
			spec.NotAfter = &metav1.Time{Time: hi}
		default:
			spec.NotBefore, spec.NotAfter = &metav1.Time{Time: lo}, &metav1.Time{Time: hi}
		}
	}
	w.maybeMaxRuns(&spec)
	w.maybeHolds(name, &spec)
	cj := w.srv.createCronJob(&cronv1.CronJob{
		TypeMeta:   metav1.TypeMeta{APIVersion: cronv1.SchemeGroupVersion.String(), Kind: "CronJob"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: metav1.NamespaceDefault},
		Spec:       spec,
	})
	x := &modelCJ{
		name: name, key: cache.ObjectName{Namespace: cj.Namespace, Name: cj.Name}, skey: modelKey(cj.Namespace, cj.Name),
		uid: cj.UID, created: cj.CreationTimestamp.Time,
		specs:        map[int64]cronv1.CronJobSpec{1: *cj.Spec.DeepCopy()},
		storeGens:    []modelGenAt{{at: w.now(), gen: 1}},
		completions:  map[int64]bool{},
		countedEarly: map[int64]bool{}, countedThenStarted: map[int64]bool{}, reportedDropped: map[int64]bool{},
	}
	w.cjs = append(w.cjs, x)
	w.byUID[x.uid] = x
	w.failOf(x)
	w.logf("  create CronJob %s: %s", name, modelDescribeSpec(&cj.Spec))
}

func modelDescribeSpec(s *cronv1.CronJobSpec) string {
	d := "nil"
	if s.StartingDeadlineSeconds != nil {
		d = fmt.Sprint(*s.StartingDeadlineSeconds)
	}
	return fmt.Sprintf("schedule=%q window=%s maxRuns=%s zone=%s suspend=%v policy=%s deadline=%s catchUp=%s/%d history=%d/%d calendars=%v failurePolicy=%s",
		modelScheduleKey(*s), modelWindowKey(*s), modelDeref(s.MaxRuns), ptr.Deref(s.TimeZone, "<local>"), ptr.Deref(s.Suspend, false), s.ConcurrencyPolicy, d,
		s.CatchUpPolicy, ptr.Deref(s.CatchUpLimit, 0), ptr.Deref(s.SuccessfulJobsHistoryLimit, -1), ptr.Deref(s.FailedJobsHistoryLimit, -1), s.ExcludeCalendars, modelDescribePolicy(s.FailurePolicy))
}

// restart throws the controller away (crash) or shuts it down cleanly
// (flushing deferred statuses) and starts a new one on full caches.
func (w *modelWalk) restart(clean bool) {
	if old := w.ctl; old != nil {
		if clean {
			w.srv.resetCalls()
			w.events = nil
			before := map[string]cronv1.CronJobStatus{}
			for _, x := range w.cjs {
				before[x.skey] = *w.srv.cronJobs[x.skey].Status.DeepCopy()
			}
			old.c.flushDeferred(w.ctx)
			w.logf("  clean shutdown of controller %d: flushDeferred %s", old.id, modelDescribeCalls(w.srv.calls))
			w.afterCalls(nil, "flush")
			w.checkCreatedJobs()
			w.checkFlush(before)
		} else {
			w.logf("  controller %d crashes", old.id)
			w.settlePending(false)
		}
		old.c.queue.ShutDown()
	}
	w.ctls++
	kubeFactory := kubeinformers.NewSharedInformerFactory(w.srv.kube, 0)
	cronFactory := informers.NewSharedInformerFactory(w.srv.cron, 0)
	modelNewControllerMu.Lock()
	c, err := NewController(w.ctx, w.srv.kube, w.srv.cron, kubeFactory.Batch().V1().Jobs(), cronFactory.Batch().V1().CronJobs(),
		modelClock{w.clock}, WithEventRecorder(modelRecorder{w}), WithCalendars(cronFactory.Batch().V1().Calendars()),
		WithCronJobRuns(cronFactory.Batch().V1().CronJobRuns()))
	modelNewControllerMu.Unlock()
	if err != nil {
		w.t.Fatal(err)
	}
	w.ctl = &modelCtl{
		id: w.ctls, c: c,
		jobIdx:       kubeFactory.Batch().V1().Jobs().Informer().GetIndexer(),
		cronIdx:      cronFactory.Batch().V1().CronJobs().Informer().GetIndexer(),
		calIdx:       cronFactory.Batch().V1().Calendars().Informer().GetIndexer(),
		runIdx:       cronFactory.Batch().V1().CronJobRuns().Informer().GetIndexer(),
		lastWriteGen: map[types.UID]int64{},
		created:      map[types.UID]modelCreated{},
		deleted:      map[types.UID]modelCreated{},
		queued:       map[cache.ObjectName]bool{},
	}
	w.catchUp(len(w.srv.jobLog), len(w.srv.cronLog))
	w.logf("  controller %d starts on caches listed from the store", w.ctl.id)
}

// takeover hands the work to a warm standby: the old controller crashes,
// and the new one's caches were filled earlier and lag the store by any
// amount (its watch may hang). Before its first sync it passes the barrier
// Run passes, reading the CronJobs live.
func (w *modelWalk) takeover() {
	// Mostly a few events behind, as a slow watch is; sometimes far.
	behind := func(n int) int {
		if w.rng.Float64() < 0.2 {
			return w.rng.Intn(n + 1)
		}
		return max(0, n-w.rng.Intn(5))
	}
	jobsTo, cronTo := behind(len(w.srv.jobLog)), behind(len(w.srv.cronLog))
	w.restart(false)
	w.ctl.jobCursor, w.ctl.cronCursor, w.ctl.calCursor, w.ctl.runCursor = 0, 0, 0, 0
	w.ctl.jobIdx.Replace(nil, "")
	w.ctl.cronIdx.Replace(nil, "")
	w.ctl.calIdx.Replace(nil, "")
	w.ctl.runIdx.Replace(nil, "")
	w.catchUp(jobsTo, cronTo)
	w.srv.resetCalls()
	if err := w.ctl.c.catchUpWithAPIServer(w.ctx); err != nil {
		w.t.Fatal(err)
	}
	// What the barrier kept of the list stands in for the cache: the
	// controller now sees those specs.
	for _, x := range w.cjs {
		if kept, ok := w.ctl.c.writtenCronJobs.Get(x.key); ok {
			w.ctl.lastWriteGen[x.uid] = max(w.ctl.lastWriteGen[x.uid], kept.Generation)
		}
	}
	w.logf("  controller %d is a standby taking over: %s; read the CronJobs live: %s", w.ctl.id, w.cacheLag(), modelDescribeCalls(w.srv.calls))
}

// catchUp lets the caches see the store's writes up to these positions of
// its logs, in order, as a watch would deliver them.
func (w *modelWalk) catchUp(jobsTo, cronTo int) {
	ctl := w.ctl
	// Calendars come on a watch of their own: all of them when the others
	// catch up fully, else any part.
	if jobsTo == len(w.srv.jobLog) && cronTo == len(w.srv.cronLog) {
		w.catchUpCals(len(w.cal.log))
		w.catchUpRuns(len(w.srv.runLog))
	} else {
		if n := len(w.cal.log) - ctl.calCursor; n > 0 {
			w.catchUpCals(ctl.calCursor + w.rng.Intn(n+1))
		}
		if n := len(w.srv.runLog) - ctl.runCursor; n > 0 {
			w.catchUpRuns(ctl.runCursor + w.rng.Intn(n+1))
		}
	}
	for ; ctl.jobCursor < jobsTo; ctl.jobCursor++ {
		e := w.srv.jobLog[ctl.jobCursor]
		if e.deleted {
			if obj, ok, _ := ctl.jobIdx.GetByKey(e.key); ok {
				_ = ctl.jobIdx.Delete(obj)
			}
			continue
		}
		if err := ctl.jobIdx.Update(slim.NewJob(e.job)); err != nil {
			w.t.Fatal(err)
		}
		w.deliverJobHandler(ctl.jobCursor)
	}
	for ; ctl.cronCursor < cronTo; ctl.cronCursor++ {
		e := w.srv.cronLog[ctl.cronCursor]
		if e.deleted {
			if obj, ok, _ := ctl.cronIdx.GetByKey(e.key); ok {
				_ = ctl.cronIdx.Delete(obj)
			}
			w.deliverCronHandler(ctl.cronCursor)
			continue
		}
		obj, err := slim.FromCronJob(e.cronJob.DeepCopy())
		if err != nil {
			w.t.Fatal(err)
		}
		if err := ctl.cronIdx.Update(obj); err != nil {
			w.t.Fatal(err)
		}
	}
}

func (w *modelWalk) caughtUp() bool {
	return w.ctl.jobCursor == len(w.srv.jobLog) && w.ctl.cronCursor == len(w.srv.cronLog) && w.ctl.calCursor == len(w.cal.log) &&
		w.ctl.runCursor == len(w.srv.runLog)
}

// cacheLag describes how far the caches are behind the store.
func (w *modelWalk) cacheLag() string {
	if w.caughtUp() {
		return "caches caught up"
	}
	return fmt.Sprintf("caches behind by %d Job, %d CronJob, %d Calendar and %d CronJobRun writes",
		len(w.srv.jobLog)-w.ctl.jobCursor, len(w.srv.cronLog)-w.ctl.cronCursor, len(w.cal.log)-w.ctl.calCursor, len(w.srv.runLog)-w.ctl.runCursor)
}

// phantoms lists Jobs this controller created recently and a user deleted
// since: with the event handlers never called, the controller may still
// believe in them.
func (w *modelWalk) phantoms() []string {
	var out []string
	for uid, cr := range w.ctl.created {
		if w.now().Sub(cr.at) > modelOwnWritesWindow {
			continue
		}
		if j, ok := w.srv.jobs[cr.key]; !ok || j.UID != uid {
			out = append(out, cr.key)
		}
	}
	sort.Strings(out)
	return out
}

// doStep is one step: the clock moves, the world changes, the controller
// may sync.
func (w *modelWalk) doStep() {
	w.srv.faults.reset(w.step)
	before := w.now()
	w.advanceClock()
	w.logf("step %d %s (+%v)", w.step, modelFmtTime(w.now()), w.now().Sub(before))
	w.jobController()
	if w.rng.Float64() < 0.25 {
		w.srv.faults.rate = pick(w.rng, []float64{0.3, 0.5, 0.7, 1})
		w.srv.faults.profile = pick(w.rng, []modelFaultProfile{
			modelFaultsAll, modelFaultsAll, modelFaultsAll, modelFaultsJobCreates, modelFaultsJobCreates,
			modelFaultsManualCreates, modelFaultsStatus, modelFaultsStatus, modelFaultsReads, modelFaultsDeletes,
		})
		w.logf("  faults this step: %s, rate %.1f", w.srv.faults.profile, w.srv.faults.rate)
	}
	x := pick(w.rng, w.cjs)
	if w.holdMove(x) || w.maxRunsMove(x) {
		return
	}
	if w.rng.Float64() < 0.06 {
		w.failureMove(x)
		if w.rng.Float64() < 0.5 {
			w.syncStep(x)
		}
		return
	}
	if w.rng.Float64() < 0.07 {
		w.calendarStep(x)
		if w.rng.Float64() < 0.5 {
			w.syncStep(x)
		}
		return
	}
	r := w.rng.Intn(100)
	switch {
	case r < 36:
		w.syncStep(x)
	case r < 42:
		w.worker()
	case r < 48:
		w.catchUpStep()
	case r < 56:
		w.finishJobs()
	case r < 61:
		w.deleteJobs()
	case r < 71:
		w.editSpec(x)
		if w.rng.Float64() < 0.5 {
			w.syncStep(x)
		}
	case r < 74:
		w.runNow(x)
		if w.rng.Float64() < 0.5 {
			w.syncStep(x)
		}
	case r < 76:
		w.runMove(x)
		if w.rng.Float64() < 0.5 {
			w.syncStep(x)
		}
	case r < 79:
		w.foreignJob(x)
	case r < 84:
		w.queueOther()
		w.syncStep(x)
	case r < 87:
		w.restart(false)
	case r < 90:
		w.restart(true)
	case r < 93:
		w.dstJump(x)
		w.syncStep(x)
	case r < 95:
		w.takeover()
	case r < 96:
		w.detachJob()
	case r < 97:
		w.recreateCronJob(x)
	case r < 98:
		w.stopAfterEdit(x)
	default:
		w.logf("  nothing happens")
	}
}

// advanceClock moves the clock forward: often to just after a CronJob's
// next run, else by seconds to days.
func (w *modelWalk) advanceClock() {
	var d time.Duration
	switch r := w.rng.Float64(); {
	case r < 0.05:
	case r < 0.35:
		x := pick(w.rng, w.cjs)
		if next := w.nextNamed(x, w.now()); !next.IsZero() && next.Sub(w.now()) < 3*24*time.Hour {
			d = next.Sub(w.now())
			if w.rng.Float64() < 0.7 {
				d += time.Duration(w.rng.Intn(15)) * time.Second
			}
		} else {
			d = time.Duration(1+w.rng.Intn(600)) * time.Second
		}
	case r < 0.55:
		d = time.Duration(w.rng.Intn(91)) * time.Second
	case r < 0.78:
		d = time.Duration(1+w.rng.Intn(60)) * time.Minute
	case r < 0.93:
		d = time.Duration(1+w.rng.Intn(12)) * time.Hour
	case r < 0.985:
		d = time.Duration(12+w.rng.Intn(25)) * time.Hour
	default:
		d = time.Duration(2+w.rng.Intn(4)) * 24 * time.Hour
	}
	if w.rng.Float64() < 0.05 {
		d += time.Duration(1+w.rng.Intn(3)) * 250 * time.Millisecond
	}
	w.clock.Step(d)
}

// dstJump moves the clock to shortly before the next daylight-saving
// change of x's zone.
func (w *modelWalk) dstJump(x *modelCJ) {
	spec := w.storeSpec(x)
	zone := ptr.Deref(spec.TimeZone, "")
	loc, err := time.LoadLocation(zone)
	if err != nil || zone == "" {
		loc, _ = time.LoadLocation(pick(w.rng, modelDSTZones))
	}
	next := modelNextTransition(loc, w.now())
	if next.IsZero() || next.Sub(w.now()) > 40*24*time.Hour {
		// The fake clock steps every ticker through each of its periods:
		// a jump of months is slow.
		w.logf("  no daylight-saving change of %s within 40 days", loc)
		return
	}
	to := next.Add(-time.Duration(w.rng.Int63n(int64(3 * time.Hour)))).Truncate(time.Second)
	if to.After(w.now()) {
		w.clock.SetTime(to)
		w.logf("  clock jumps to %s, before the %s change at %s", modelFmtTime(to), loc, modelFmtTime(next))
	}
}

// modelNextTransition is the next change of UTC offset in loc after t, or
// zero within 400 days.
func modelNextTransition(loc *time.Location, t time.Time) time.Time {
	_, off := t.In(loc).Zone()
	for h := 1; h < 400*24; h++ {
		u := t.Add(time.Duration(h) * time.Hour)
		if _, o := u.In(loc).Zone(); o != off {
			lo, hi := u.Add(-time.Hour), u
			for hi.Sub(lo) > time.Second {
				mid := lo.Add(hi.Sub(lo) / 2)
				if _, o := mid.In(loc).Zone(); o == off {
					lo = mid
				} else {
					hi = mid
				}
			}
			return hi.Truncate(time.Second)
		}
	}
	return time.Time{}
}

// jobController starts pending Jobs and finishes some, as the Job
// controller would.
func (w *modelWalk) jobController() {
	now := metav1.NewTime(w.now().Truncate(time.Second))
	for _, key := range w.srv.sortedJobKeys() {
		j := w.srv.jobs[key]
		if j.Status.StartTime == nil && modelJobFinished(j) == "" && w.rng.Float64() < 0.8 {
			w.srv.updateJob(key, func(j *batchv1.Job) { j.Status.StartTime = &now })
			continue
		}
		if modelJobFinished(j) == "" && j.Status.StartTime != nil && w.rng.Float64() < 0.1 {
			w.finishJob(key, w.jobSucceeds(key, 0.8))
		}
	}
}

func (w *modelWalk) finishJob(key string, success bool) {
	now := metav1.NewTime(w.now().Truncate(time.Second))
	w.srv.updateJob(key, func(j *batchv1.Job) {
		if j.Status.StartTime == nil {
			j.Status.StartTime = &now
		}
		if success {
			j.Status.CompletionTime = &now
			j.Status.Conditions = append(j.Status.Conditions, batchv1.JobCondition{Type: batchv1.JobComplete, Status: corev1.ConditionTrue, LastTransitionTime: now})
		} else {
			j.Status.Conditions = append(j.Status.Conditions, batchv1.JobCondition{Type: batchv1.JobFailed, Status: corev1.ConditionTrue, LastTransitionTime: now})
		}
	})
	if ref := job.ControllerOf(w.srv.jobs[key]); ref != nil {
		if x := w.byUID[ref.UID]; x != nil {
			if success {
				x.completions[now.Unix()] = true
			}
		}
	}
	w.noteRunEnds(key)
	verb := "completes"
	if !success {
		verb = "fails"
	}
	w.logf("  Job %s %s", key, verb)
}

// noteRunEnds marks the run of the Job under key unrecorded if it finishes
// or goes before the status in the store records it: then only its Job, if
// it is still there, tells of it.
func (w *modelWalk) noteRunEnds(key string) {
	j, ok := w.srv.jobs[key]
	if !ok {
		return
	}
	ref := job.ControllerOf(j)
	if ref == nil || w.byUID[ref.UID] == nil || w.byUID[ref.UID].retired {
		return
	}
	x := w.byUID[ref.UID]
	st := w.srv.cronJobs[x.skey].Status
	for _, r := range x.jobs {
		if r.name != j.Name || r.uid != j.UID {
			continue
		}
		if r.manual {
			recorded := false
			for v := range w.runNowSets[x.name] {
				if planner.RunNowKey(v) == st.LastRunNow && slices.Contains(w.manualNames(x, v), r.name) {
					recorded = true
				}
			}
			if !recorded {
				r.unrecorded = true
			}
		} else if st.LastScheduleTime == nil || st.LastScheduleTime.Time.Before(r.scheduled) {
			r.unrecorded = true
		}
	}
}

func (w *modelWalk) finishJobs() {
	var running []string
	for _, key := range w.srv.sortedJobKeys() {
		if modelJobFinished(w.srv.jobs[key]) == "" {
			running = append(running, key)
		}
	}
	if len(running) == 0 {
		w.logf("  no Job to finish")
		return
	}
	for range 1 + w.rng.Intn(3) {
		if len(running) == 0 {
			break
		}
		i := w.rng.Intn(len(running))
		w.finishJob(running[i], w.jobSucceeds(running[i], 0.75))
		running = append(running[:i], running[i+1:]...)
	}
}

// deleteJobs deletes Jobs as a user (at once or in the foreground, which
// leaves them being deleted for a while) or the TTL controller would (a
// finished Job whose spec sets ttlSecondsAfterFinished, which its template
// sets or not: randomTTL, and an edit of it). Like
// the API server, the store only marks a Job being deleted while a
// finalizer holds it (see modelServer.deleteJob).
func (w *modelWalk) deleteJobs() {
	keys := w.srv.sortedJobKeys()
	if len(keys) == 0 {
		w.logf("  no Job to delete")
		return
	}
	switch r := w.rng.Float64(); {
	case r < 0.35:
		key := pick(w.rng, keys)
		w.noteRunEnds(key)
		w.srv.deleteJob(key)
		w.logf("  user deletes Job %s", key)
	case r < 0.55:
		key := pick(w.rng, keys)
		if w.srv.jobs[key].DeletionTimestamp != nil {
			return
		}
		now := metav1.NewTime(w.now().Truncate(time.Second))
		w.srv.updateJob(key, func(j *batchv1.Job) {
			j.DeletionTimestamp = &now
			j.Finalizers = append(j.Finalizers, metav1.FinalizerDeleteDependents)
		})
		w.logf("  user deletes Job %s in the foreground: it is being deleted", key)
	case r < 0.85:
		for _, key := range keys {
			j := w.srv.jobs[key]
			if j.Spec.TTLSecondsAfterFinished != nil && modelJobFinished(j) != "" && j.DeletionTimestamp == nil && w.rng.Float64() < 0.5 {
				if job.HoldsRunRecord(j) {
					w.stat("TTL deletes of a Job holding the run-record finalizer")
				} else {
					w.stat("TTL deletes of a Job without the run-record finalizer")
				}
				w.noteRunEnds(key)
				w.srv.deleteJob(key)
				w.logf("  TTL controller deletes finished Job %s", key)
			}
		}
	default:
		for _, key := range keys {
			j := w.srv.jobs[key]
			if j.DeletionTimestamp == nil || !slices.Contains(j.Finalizers, metav1.FinalizerDeleteDependents) {
				continue
			}
			// The garbage collector removed the pods: its finalizer goes,
			// and the Job with it unless another finalizer holds it.
			w.noteRunEnds(key)
			w.srv.updateJob(key, func(j *batchv1.Job) {
				j.Finalizers = slices.DeleteFunc(j.Finalizers, func(f string) bool { return f == metav1.FinalizerDeleteDependents })
			})
			if len(w.srv.jobs[key].Finalizers) == 0 {
				w.srv.removeJob(key)
			}
			w.logf("  foreground deletion of Job %s completes", key)
		}
	}
}

// storeSpec is x's spec in the store now.
func (w *modelWalk) storeSpec(x *modelCJ) cronv1.CronJobSpec {
	return w.srv.cronJobs[x.skey].Spec
}

// editSpec is a user's edit of one field of the spec; the template's
// annotation tells the oracle which generation a Job was made from.
func (w *modelWalk) editSpec(x *modelCJ) {
	var what string
	cj := w.srv.updateCronJob(x.skey, func(cj *cronv1.CronJob) {
		s := &cj.Spec
		switch r := w.rng.Float64(); {
		case r < 0.12 && w.naming(x, cj.Generation).valid && !x.everMaxRuns():
			s.ExcludeCalendars = w.randomCalendarNames()
			what = fmt.Sprintf("excludeCalendars=%v", s.ExcludeCalendars)
		case r < 0.33 || (r < 0.6 && !w.naming(x, cj.Generation).valid):
			s.Schedule, s.Schedules = w.randomSchedule(), nil
			w.maybeSchedules(s)
			what = fmt.Sprintf("schedule=%q", modelScheduleKey(*s))
		case r < 0.48:
			s.TimeZone = w.randomZone()
			what = "timeZone=" + *s.TimeZone
		case r < 0.61 || (r < 0.8 && ptr.Deref(s.Suspend, false)):
			s.Suspend = ptr.To(!ptr.Deref(s.Suspend, false))
			what = fmt.Sprintf("suspend=%v", *s.Suspend)
		case r < 0.71:
			s.ConcurrencyPolicy = pick(w.rng, []cronv1.ConcurrencyPolicy{cronv1.AllowConcurrent, cronv1.ForbidConcurrent, cronv1.ReplaceConcurrent})
			what = "concurrencyPolicy=" + string(s.ConcurrencyPolicy)
		case r < 0.81:
			s.StartingDeadlineSeconds = pick(w.rng, modelDeadlines)
			what = "startingDeadlineSeconds=" + modelDeref(s.StartingDeadlineSeconds)
		case r < 0.86:
			s.JobTemplate.Spec.TTLSecondsAfterFinished = w.randomTTL()
			what = "jobTemplate.spec.ttlSecondsAfterFinished=" + modelDeref(s.JobTemplate.Spec.TTLSecondsAfterFinished)
		case r < 0.93:
			s.CatchUpPolicy = pick(w.rng, []cronv1.CatchUpPolicy{cronv1.CatchUpLatest, cronv1.CatchUpAll, cronv1.CatchUpNone})
			s.CatchUpLimit = pick(w.rng, []*int32{nil, ptr.To[int32](1), ptr.To[int32](3), ptr.To[int32](10)})
			what = fmt.Sprintf("catchUpPolicy=%s catchUpLimit=%s", s.CatchUpPolicy, modelDeref(s.CatchUpLimit))
		default:
			s.SuccessfulJobsHistoryLimit = pick(w.rng, []*int32{nil, ptr.To[int32](0), ptr.To[int32](1), ptr.To[int32](3)})
			s.FailedJobsHistoryLimit = pick(w.rng, []*int32{nil, ptr.To[int32](0), ptr.To[int32](1)})
			what = fmt.Sprintf("history limits %s/%s", modelDeref(s.SuccessfulJobsHistoryLimit), modelDeref(s.FailedJobsHistoryLimit))
		}
		gen := cj.Generation + 1
		s.JobTemplate.Annotations[modelSpecGenAnnotation] = fmt.Sprint(gen)
	})
	if got := cj.Generation; got != w.lastGen(x)+1 {
		w.t.Fatalf("model: generation %d after an edit of generation %d", got, w.lastGen(x))
	}
	x.specs[cj.Generation] = *cj.Spec.DeepCopy()
	x.storeGens = append(x.storeGens, modelGenAt{at: w.now(), gen: cj.Generation})
	w.logf("  user edits %s: %s (generation %d)", x.name, what, cj.Generation)
}

func (w *modelWalk) lastGen(x *modelCJ) int64 { return x.storeGens[len(x.storeGens)-1].gen }

func modelDeref[T any](p *T) string {
	if p == nil {
		return "nil"
	}
	return fmt.Sprint(*p)
}

// runNow sets (or clears) the run-now annotation.
func (w *modelWalk) runNow(x *modelCJ) {
	used := w.runNowSets[x.name]
	if used == nil {
		used = map[string]int{}
		w.runNowSets[x.name] = used
	}
	var value string
	switch r := w.rng.Float64(); {
	case r < 0.12:
	case r < 0.17 && len(used) > 0:
		var vals []string
		for v := range used {
			vals = append(vals, v)
		}
		sort.Strings(vals)
		value = pick(w.rng, vals)
	case r < 0.25 && w.runNowLast[x.name][0] != "":
		// A swing back to the value before (A, B, A, B): the pair of
		// values repeats, and only the request's number tells the Jobs
		// apart.
		value = w.runNowLast[x.name][0]
	default:
		value = fmt.Sprintf("v%d", w.step)
	}
	w.srv.updateCronJob(x.skey, func(cj *cronv1.CronJob) {
		if value == "" {
			delete(cj.Annotations, cronv1.RunNowAnnotation)
			return
		}
		if cj.Annotations == nil {
			cj.Annotations = map[string]string{}
		}
		cj.Annotations[cronv1.RunNowAnnotation] = value
	})
	if value != "" {
		used[value]++
		w.runNowLast[x.name] = [2]string{w.runNowLast[x.name][1], value}
	}
	w.logf("  user sets %s run-now=%q", x.name, value)
}

// foreignJob makes a Job of someone else's under the name of one of x's
// coming runs.
func (w *modelWalk) foreignJob(x *modelCJ) {
	t := w.now()
	for range 1 + w.rng.Intn(3) {
		if t = w.nextNamed(x, t); t.IsZero() {
			w.logf("  no coming run to take the name of")
			return
		}
	}
	name := job.Name(x.name, t)
	j := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: metav1.NamespaceDefault, Labels: map[string]string{"owner": "someone-else"}}}
	if w.rng.Float64() < 0.5 {
		j.OwnerReferences = []metav1.OwnerReference{{APIVersion: "batch/v1", Kind: "CronJob", Name: x.name, UID: "built-in-cronjob-uid", Controller: ptr.To(true)}}
	}
	if _, ok := w.srv.createForeignJob(j); ok {
		w.foreign[name] = true
		w.logf("  someone else creates Job %s, the name of %s's run at %s", name, x.name, modelFmtTime(t))
	}
}

// queueOther puts other keys in the queue, so a sync that starts a Job
// defers its status write behind them.
func (w *modelWalk) queueOther() {
	key := cache.ObjectName{Namespace: metav1.NamespaceDefault, Name: "not-a-cronjob"}
	if len(w.cjs) > 1 && w.rng.Float64() < 0.5 {
		key = pick(w.rng, w.cjs).key
	}
	w.ctl.c.queue.Add(key)
	w.ctl.queued[key] = true
	w.logf("  queue %s (queue length %d)", key, w.ctl.c.queue.Len())
}

func (w *modelWalk) catchUpStep() {
	if w.rng.Float64() < 0.6 {
		w.catchUp(len(w.srv.jobLog), len(w.srv.cronLog))
	} else {
		w.catchUp(w.ctl.jobCursor+w.rng.Intn(len(w.srv.jobLog)-w.ctl.jobCursor+1),
			w.ctl.cronCursor+w.rng.Intn(len(w.srv.cronLog)-w.ctl.cronCursor+1))
	}
	w.logf("  informers deliver: %s", w.cacheLag())
}

// syncStep syncs x once or a few times, first letting the caches catch up
// fully, partly or not at all. A sync asking to be called back within a
// second (catching up) is called back at once, as a worker would.
func (w *modelWalk) syncStep(x *modelCJ) {
	switch r := w.rng.Float64(); {
	case r < 0.55:
		w.catchUp(len(w.srv.jobLog), len(w.srv.cronLog))
	case r < 0.75:
		w.catchUp(w.ctl.jobCursor+w.rng.Intn(len(w.srv.jobLog)-w.ctl.jobCursor+1),
			w.ctl.cronCursor+w.rng.Intn(len(w.srv.cronLog)-w.ctl.cronCursor+1))
	}
	n := 1
	if w.rng.Float64() < 0.2 {
		n += 1 + w.rng.Intn(2)
	}
	for i := 0; i < n && !w.done; i++ {
		for burst := 0; burst < 30 && !w.done; burst++ {
			d := w.sync(x, false, burst > 0)
			if d <= 0 || d > time.Second {
				break
			}
		}
		if i+1 < n && w.rng.Float64() < 0.5 {
			w.catchUp(len(w.srv.jobLog), len(w.srv.cronLog))
		}
	}
}

// worker takes keys off the queue as a worker would, syncing the CronJobs
// among them.
func (w *modelWalk) worker() {
	if w.rng.Float64() < 0.5 {
		w.catchUp(len(w.srv.jobLog), len(w.srv.cronLog))
	}
	q := w.ctl.c.queue
	if q.Len() == 0 {
		w.logf("  worker: queue empty")
		return
	}
	for i := 0; i < 30 && q.Len() > 0 && !w.done; i++ {
		key, shutdown := q.Get()
		if shutdown {
			return
		}
		delete(w.ctl.queued, key)
		var x *modelCJ
		for _, c := range w.cjs {
			if c.key == key {
				x = c
			}
		}
		if x == nil {
			w.logf("  worker: %s is no CronJob", key)
			q.Done(key)
			q.Forget(key)
			continue
		}
		w.sync(x, true, false)
	}
}

// deliverOld lets the caches see every write older than the walk's lag
// bound, if it has one.
func (w *modelWalk) deliverOld() {
	if w.lagBound <= 0 {
		return
	}
	ctl, cutoff := w.ctl, w.now().Add(-w.lagBound)
	jobsTo, cronTo := ctl.jobCursor, ctl.cronCursor
	for jobsTo < len(w.srv.jobLog) && !w.srv.jobLog[jobsTo].at.After(cutoff) {
		jobsTo++
	}
	for cronTo < len(w.srv.cronLog) && !w.srv.cronLog[cronTo].at.After(cutoff) {
		cronTo++
	}
	w.catchUp(jobsTo, cronTo)
	calTo := ctl.calCursor
	for calTo < len(w.cal.log) && !w.cal.log[calTo].at.After(cutoff) {
		calTo++
	}
	w.catchUpCals(calTo)
}

// readLive notes a live read of the CronJob a sync works on, when its
// cache did not hold that CronJob (say, one deleted and created again under
// the same name, behind a cache that still holds the old one): the sync
// decides from what it read, so its view is the generation read. A cache
// that holds nothing under the name sends the sync down its NotFound path,
// which decides nothing: its one read (releaseOrphans asking whose Jobs
// its orphans were) looks at the UID alone, and is no view (seed
// 1830000408, a false I2.edit-rule).
func (w *modelWalk) readLive(cj *cronv1.CronJob) {
	x := w.curCJ
	if x == nil || w.cur != nil || cj.UID != x.uid {
		return
	}
	if _, held, _ := w.ctl.cronIdx.GetByKey(x.skey); !held {
		return
	}
	ctl := w.ctl
	w.cur = &modelSyncRec{seq: len(x.records), step: w.step, at: w.now(), inst: ctl.id, lo: cj.Generation, hi: cj.Generation, cal: ctl.calCursor}
	x.records = append(x.records, w.cur)
}

// sync runs one sync of x and checks the invariants on what it did.
func (w *modelWalk) sync(x *modelCJ, viaWorker, burst bool) time.Duration {
	w.deliverOld()
	ctl := w.ctl
	now := w.now()
	settled := w.caughtUp()
	phantoms := w.phantoms()
	if len(phantoms) > 0 {
		settled = false
	}
	pre := w.preSync(x)
	var rec *modelSyncRec
	if obj, ok, _ := ctl.cronIdx.GetByKey(x.skey); ok && obj.(*slim.CronJob).UID == x.uid {
		lo := obj.(*slim.CronJob).Generation
		rec = &modelSyncRec{seq: len(x.records), step: w.step, at: now, inst: ctl.id, lo: lo, hi: max(lo, ctl.lastWriteGen[x.uid]), cal: ctl.calCursor}
		x.records = append(x.records, rec)
		// The controller sees the Jobs its cache holds.
		for _, o := range modelIndexed(ctl.jobIdx, x.uid) {
			w.markVisible(x, o.Name, o.UID, o.Finished() == "")
		}
	}
	queuedBefore := ctl.queued[x.key]
	lag := w.cacheLag()
	if len(phantoms) > 0 {
		lag += fmt.Sprintf(", own deleted Jobs %v still trusted", phantoms)
	}
	w.srv.resetCalls()
	w.srv.unexpected = nil
	w.events = nil
	lenBefore := ctl.c.queue.Len()
	w.cur, w.curCJ, w.curSettled = rec, x, settled

	requeue, err, panicked, blocked := w.callSync(x.key)

	rec = w.cur // readLive may have made it
	w.cur, w.curCJ, w.curSettled = nil, nil, false
	if viaWorker {
		ctl.c.queue.Done(x.key)
	}
	deferred := ctl.c.queue.Len() > lenBefore
	if viaWorker {
		ctl.c.queue.Forget(x.key)
	}
	if deferred {
		ctl.queued[x.key] = true
	}
	calls := w.srv.calls
	how := "sync"
	if viaWorker {
		how = "worker syncs"
	} else if burst {
		how = "sync again"
	}
	wrote := false
	for _, c := range calls {
		wrote = wrote || (c.resource == "cronjobs/status" && c.name == x.name)
	}
	w.logf("  %s %s (%s): %s -> requeue %v, err %v%s", how, x.name, lag, modelDescribeCalls(calls), requeue, err, modelDeferredNote(deferred, queuedBefore, wrote))
	for _, e := range w.events {
		w.logf("      event %s", e)
	}
	for _, c := range calls {
		if c.resource == "cronjobs/status" && c.name == x.name && (c.err == nil || c.fault == modelFaultLost) {
			st := w.srv.cronJobs[x.skey].Status
			var last string
			if st.LastScheduleTime != nil {
				last = modelFmtTime(st.LastScheduleTime.Time)
			}
			var active []string
			for _, r := range st.Active {
				active = append(active, r.Name)
			}
			w.logf("      status now: lastScheduleTime %s, active %v, missedRuns %s", last, active, modelDescribeMissed(st.MissedRuns))
		}
	}
	res := &modelSyncResult{x: x, rec: rec, pre: pre, calls: calls, requeue: requeue, err: err, settled: settled,
		deferred: deferred, queuedBefore: queuedBefore, burst: burst}
	w.afterCalls(res, "sync")
	w.checkCreatedJobs()
	w.settlePending(true)
	w.checked("I5 syncs run")
	switch {
	case blocked:
		w.violate("I5.sync-blocks", "syncHandler(%s) did not return within %v", x.name, modelSyncTimeout)
		w.done = true
		return 0
	case panicked != nil:
		w.violate("I5.panic", "syncHandler(%s) panicked: %v", x.name, panicked)
		w.restart(false)
		return 0
	}
	w.checkSync(res)
	return requeue
}

func modelDeferredNote(deferred, queuedBefore, wrote bool) string {
	switch {
	case deferred:
		return ", status deferred behind the queue"
	case queuedBefore && !wrote:
		return " (its key waits in the queue: a status may be deferred)"
	}
	return ""
}

func modelDescribeCalls(calls []modelCall) string {
	if len(calls) == 0 {
		return "no calls"
	}
	parts := make([]string, len(calls))
	for i, c := range calls {
		parts[i] = c.String()
	}
	return strings.Join(parts, "; ")
}

// modelSyncTimeout is how long a sync may take before it counts as blocked.
const modelSyncTimeout = 30 * time.Second

func (w *modelWalk) callSync(key cache.ObjectName) (requeue time.Duration, err error, panicked any, blocked bool) {
	type result struct {
		d     time.Duration
		err   error
		p     any
		stack string
	}
	ch := make(chan result, 1)
	go func() {
		defer func() {
			if p := recover(); p != nil {
				ch <- result{p: p, stack: string(debug.Stack())}
			}
		}()
		d, err := w.ctl.c.syncHandler(w.ctx, key)
		ch <- result{d: d, err: err}
	}()
	timer := time.NewTimer(modelSyncTimeout)
	defer timer.Stop()
	select {
	case r := <-ch:
		if r.p != nil {
			return 0, nil, fmt.Sprintf("%v\n%s", r.p, r.stack), false
		}
		return r.d, r.err, nil, false
	case <-timer.C:
		return 0, nil, nil, true
	}
}

// afterCalls updates what the walk knows from the calls a sync or a flush
// made: the generations its status writes show, the Jobs it saw.
func (w *modelWalk) afterCalls(res *modelSyncResult, what string) {
	ctl := w.ctl
	for _, c := range w.srv.calls {
		switch {
		case c.resource == "cronjobs" && c.verb == "get" && c.err == nil:
			// A live read shows the controller the spec as the store holds it.
			if x := w.cjByName(c.name); x != nil {
				ctl.lastWriteGen[x.uid] = max(ctl.lastWriteGen[x.uid], c.respGen)
				if res != nil && res.rec != nil && res.x == x {
					res.rec.hi = max(res.rec.hi, c.respGen)
				}
			}
		case c.resource == "cronjobs/status":
			x := w.cjByName(c.name)
			if x == nil {
				continue
			}
			if res != nil && res.rec != nil && res.x == x {
				res.rec.revealed = c.gen
			}
			if c.err == nil || c.fault == modelFaultLost {
				if lst := w.srv.cronJobs[x.skey].Status.LastScheduleTime; lst != nil && lst.Time.After(x.recordedLST) {
					x.recordedLST = lst.Time
				}
				// Only a response tells this process what it wrote.
				if c.err == nil {
					ctl.lastWriteGen[x.uid] = max(ctl.lastWriteGen[x.uid], c.respGen)
				}
				// Whatever this process deferred for x is in the store now.
				for _, r := range x.records {
					if r.inst == ctl.id && (r.deferred || r == res.recOrNil()) {
						r.wroteOK = true
						r.deferred = false
					}
				}
			}
		case c.resource == "jobs" && c.verb == "create" && c.err == nil && c.job != nil:
			ctl.created[c.job.UID] = modelCreated{key: modelKey(c.job.Namespace, c.job.Name), at: w.now()}
		case c.resource == "jobs" && c.verb == "delete" && (c.err == nil || apierrors.IsNotFound(c.err)):
			// The controller forgets what it deleted itself.
			for uid, cr := range ctl.created {
				if cr.key == modelKey(metav1.NamespaceDefault, c.name) {
					delete(ctl.created, uid)
				}
			}
			if c.job != nil {
				ctl.deleted[c.job.UID] = modelCreated{key: modelKey(c.job.Namespace, c.job.Name), at: w.now()}
			}
		case c.resource == "jobs" && c.verb == "get" && c.err == nil:
			if j, ok := w.srv.jobs[modelKey(metav1.NamespaceDefault, c.name)]; ok {
				if ref := job.ControllerOf(j); ref != nil {
					if x := w.byUID[ref.UID]; x != nil {
						w.markVisible(x, j.Name, j.UID, modelJobFinished(j) == "")
					}
				}
			}
		}
	}
	if res != nil && res.rec != nil {
		for _, c := range w.srv.calls {
			if c.fault != "" {
				res.rec.faulted = true
			}
		}
		if res.deferred {
			res.rec.deferred = true
		}
		res.rec.jobsN = len(res.x.jobs)
	}
	w.checkDetachedCalls()
	for _, u := range w.srv.unexpected {
		w.violate("I5.unexpected-call", "the controller made a call it never should (%s): %s", what, u)
	}
	for _, c := range w.srv.calls {
		// NotFound: the CronJob was deleted (the controller's cache may show
		// it still).
		if c.resource == "cronjobs/status" && c.err != nil && c.fault == "" && !apierrors.IsConflict(c.err) && !apierrors.IsNotFound(c.err) {
			w.violate("I5.status-write-error", "a status write failed for a reason other than an injected fault or a conflict: %v", c.err)
		}
	}
}

func (w *modelWalk) cjByName(name string) *modelCJ {
	for _, x := range w.cjs {
		if x.name == name {
			return x
		}
	}
	return nil
}

func (w *modelWalk) markVisible(x *modelCJ, name string, uid types.UID, running bool) {
	for _, j := range x.jobs {
		if j.name == name && j.uid == uid {
			j.visible = true
			j.seenRunning = j.seenRunning || running
		}
	}
}

// modelIndexed lists the cached Jobs controlled by uid.
func modelIndexed(idx cache.Indexer, uid types.UID) []*slim.Job {
	objs, _ := idx.ByIndex(jobsByControllerUID, string(uid))
	out := make([]*slim.Job, 0, len(objs))
	for _, o := range objs {
		if j, ok := o.(*slim.Job); ok {
			out = append(out, j)
		}
	}
	return out
}

// jobCreated records every Job the store created for a CronJob, and checks
// I1 and the naming rules at once.
func (w *modelWalk) jobCreated(j *batchv1.Job, lost bool) {
	if j.Annotations[cronv1.CronJobRunAnnotation] != "" {
		w.runJobsMade[j.Name]++
	}
	ref := job.ControllerOf(j)
	if ref == nil {
		return
	}
	x := w.byUID[ref.UID]
	if x == nil {
		return
	}
	if x.retired {
		// Made from a cache that still shows the CronJob deleted; the
		// garbage collector's to delete.
		w.logf("    Job %s created for %s (uid %s), deleted already", j.Name, x.name, x.uid)
		return
	}
	if j.Spec.TTLSecondsAfterFinished == nil {
		w.stat("Jobs created without a TTL")
	} else {
		w.stat("Jobs created with a TTL")
	}
	rec := &modelJobRec{name: j.Name, uid: j.UID, createdAt: w.now(), step: w.step, lost: lost, visible: !lost, seenRunning: !lost, sync: w.cur}
	if _, err := fmt.Sscan(j.Annotations[modelSpecGenAnnotation], &rec.gen); err != nil {
		rec.gen = 0
	}
	if w.cur != nil && w.curCJ == x && rec.gen != 0 {
		w.cur.revealed = rec.gen
	}
	rec.manual = j.Annotations[cronv1.InstantiateAnnotation] == job.Manual
	if !rec.manual {
		if t, ok := job.ScheduledAt(j); ok {
			rec.scheduled = t
		}
	}
	x.jobs = append(x.jobs, rec)
	w.notePausedStart(x, rec)
	// Checked once the call that made it is in the trace.
	w.createdToCheck = append(w.createdToCheck, modelCreatedCheck{x: x, job: j, index: len(x.jobs) - 1})
}

type modelCreatedCheck struct {
	x     *modelCJ
	job   *batchv1.Job
	index int
}

// checkCreatedJobs checks the Jobs created since the last call.
func (w *modelWalk) checkCreatedJobs() {
	for _, c := range w.createdToCheck {
		w.checkCreated(c.x, c.job, c.x.jobs[c.index], c.x.jobs[:c.index])
		w.checkMaxRunsCreated(c.x, c.index)
	}
	w.createdToCheck = nil
}
