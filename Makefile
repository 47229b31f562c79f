# Two commands matter on a fresh machine: `make run` and `make test`.
SHELL := /usr/bin/env bash
.SHELLFLAGS := -eu -o pipefail -c

OUTPUT_BIN      := $(CURDIR)/_output/bin
CONTROLLER_GEN_VERSION := v0.23.0
CONTROLLER_GEN  := $(OUTPUT_BIN)/controller-gen-$(CONTROLLER_GEN_VERSION)
CRD             := artifacts/examples/crd.yaml
CHART           := charts/cronjob-controller
# The CRD as the API types' markers describe it; embedded ObjectMeta keeps its
# schema so the API server does not prune template labels and annotations.
CRD_FROM_TYPES   = $(CONTROLLER_GEN) crd:generateEmbeddedObjectMeta=true paths=./pkg/apis/... output:crd:stdout | go run ./hack/crdtidy
GO_TEST_FLAGS   ?=

# The version every binary reports (-version, kubectl cronjob version, the
# build_info metric): VERSION= on the command line, else git describe of the
# latest v* tag (v0.1.0, v0.1.0-3-gabc1234 after it, -dirty with uncommitted
# changes), else v0.0.0-<commit> before the first tag. Stamped by -ldflags -X
# into pkg/version.
ifeq ($(origin VERSION),undefined)
VERSION := $(shell git describe --tags --match 'v[0-9]*' --dirty 2>/dev/null || echo "v0.0.0-$$(git describe --always --dirty 2>/dev/null || echo unknown)")
endif
REVISION ?= $(shell git rev-parse HEAD 2>/dev/null || echo unknown)
VERSION_PKG := github.com/cronjob-controller/cronjob-controller/pkg/version
LDFLAGS     := -X $(VERSION_PKG).version=$(VERSION) -X $(VERSION_PKG).revision=$(REVISION)

.PHONY: all build image release test fuzz alert-rules prometheusrule chart model soak cluster-binaries verify run run-fresh codegen manifests bench bench-status-writes bench-status-shapes bench-job-shapes bench-sustained bench-whole-run clean

all: build

## build: the controller binary and the kubectl plugin (kubectl-cronjob, with
## its completion helper kubectl_complete-cronjob), in _output/bin, stamped
## with VERSION. Put the two plugin files on PATH to run it as `kubectl cronjob`.
build:
	go build -ldflags '$(LDFLAGS)' -o $(OUTPUT_BIN)/cronjob-controller .
	go build -ldflags '$(LDFLAGS)' -o $(OUTPUT_BIN)/kubectl-cronjob ./cmd/kubectl-cronjob
	go build -o $(OUTPUT_BIN)/kubectl_complete-cronjob ./cmd/kubectl_complete-cronjob

IMAGE          ?= cronjob-controller:latest
IMAGE_PLATFORM ?= linux/$(shell go env GOARCH)
IMAGE_ARCHIVE  ?= _output/cronjob-controller-image.tar

## image: the controller's container image as an archive for docker load, podman
## load or kind load image-archive, with no container engine: hack/image (built
## into _output/bin with go-containerregistry, the version go.mod pins) puts the
## static binary, time zone database embedded, in an image from scratch run as
## 65532:65532, stamped with VERSION. IMAGE names it, IMAGE_PLATFORM=linux/arm64
## cross-builds.
image:
	go build -o $(OUTPUT_BIN)/image-builder ./hack/image
	$(OUTPUT_BIN)/image-builder -o $(IMAGE_ARCHIVE) -image $(IMAGE) -platform $(IMAGE_PLATFORM) -ldflags '$(LDFLAGS)'

# Where the release's image is pushed: install.yaml names IMAGE_REPO:VERSION.
IMAGE_REPO       ?= ghcr.io/cronjob-controller/cronjob-controller
RELEASE_DIR      ?= _output/release
PLUGIN_PLATFORMS ?= linux/amd64,linux/arm64,darwin/amd64,darwin/arm64,windows/amd64,windows/arm64
IMAGE_PLATFORMS  ?= linux/amd64,linux/arm64

## release: a release in RELEASE_DIR (hack/release): install.yaml (one
## kubectl apply -f installs everything, the image at IMAGE_REPO:VERSION), the
## image archive per IMAGE_PLATFORMS, the plugin archived per PLUGIN_PLATFORMS,
## the krew manifest naming them with their sha256 (checked by krew's own
## validator), the Helm chart package, and SHA256SUMS. Needs no registry:
## push the images yourself.
release:
	go run ./hack/release -version '$(VERSION)' -revision '$(REVISION)' -image-repo '$(IMAGE_REPO)' \
	  -o '$(RELEASE_DIR)' -plugin-platforms '$(PLUGIN_PLATFORMS)' -image-platforms '$(IMAGE_PLATFORMS)'

# Fuzzing is bounded by executions, not by a clock: go1.26's coordinator races
# on a -fuzztime deadline and can fail a run with "context deadline exceeded"
# though no input failed (go.dev/issue/75804, fixed in go1.27). 100,000
# executions take 16-29 s per target on this machine when it is quiet, longer
# when it is busy.
FUZZ_TIME ?= 100000x
FUZZ_MINIMIZE ?= 500x

## test: the unit tests (no cluster needed), then the end-to-end tests (build tag
## e2e) on the embedded control plane, all with the race detector, then a short
## fuzz run, the alerting rules' tests and the chart's. The unit run comes first so it fails
## fast, before the cluster build.
test:
	go test -race -count=1 -timeout 30m $(GO_TEST_FLAGS) ./...
	$(MAKE) cluster-binaries
	go test -race -count=1 -timeout 60m -tags e2e $(GO_TEST_FLAGS) ./test/e2e
	$(MAKE) fuzz
	$(MAKE) alert-rules
	$(MAKE) chart

## alert-rules: the alerting rules in artifacts/prometheus against their tests,
## with promtool (Debian's prometheus package, installed when missing).
alert-rules:
	hack/alert-rules.sh

## prometheusrule: regenerate artifacts/monitoring/prometheusrule/prometheusrule.yaml
## (the Prometheus Operator's PrometheusRule) from artifacts/prometheus/rules.yaml,
## and the chart's copy of the rules.
prometheusrule:
	go run ./hack/prometheusrule
	cp artifacts/prometheus/rules.yaml $(CHART)/files/rules.yaml

## chart: the Helm chart's tests with Helm's own Go module (hack/helm, a module
## of its own): helm lint --strict, the defaults against artifacts/deploy, the
## values reaching the objects, the schema refusing bad values, the package.
chart:
	cd hack/helm && go test -count=1 ./...

## fuzz: each fuzz target for FUZZ_TIME executions (seed corpus: f.Add and testdata/fuzz),
## then the model-based test longer than the unit run: 400 fixed seeds of 400
## steps (seeds 1000-1399, replayable with -model.seed).
fuzz:
	go test -run '^$$' -fuzz '^FuzzParse$$' -fuzztime $(FUZZ_TIME) -fuzzminimizetime $(FUZZ_MINIMIZE) ./pkg/schedule
	go test -run '^$$' -fuzz '^FuzzMostRecent$$' -fuzztime $(FUZZ_TIME) -fuzzminimizetime $(FUZZ_MINIMIZE) ./pkg/schedule
	go test -run '^$$' -fuzz '^FuzzResolve$$' -fuzztime $(FUZZ_TIME) -fuzzminimizetime $(FUZZ_MINIMIZE) ./pkg/schedule
	go test -run '^$$' -fuzz '^FuzzDecide$$' -fuzztime $(FUZZ_TIME) -fuzzminimizetime $(FUZZ_MINIMIZE) ./pkg/planner
	go test -run '^$$' -fuzz '^FuzzHeldOnPurpose$$' -fuzztime $(FUZZ_TIME) -fuzzminimizetime $(FUZZ_MINIMIZE) ./pkg/planner
	go test -count=1 -run '^TestModel$$' . -args -model.seeds=400 -model.steps=400 -model.first=1000

MODEL_SEEDS ?= 2000
MODEL_STEPS ?= 500
MODEL_FIRST ?= 1
# Categories to report without failing; none by default, so make model shows
# every finding, those with informer lag past the own-writes window included.
MODEL_KNOWN ?=

## model: the model-based test (model_test.go), long: MODEL_SEEDS walks of MODEL_STEPS
## steps from seed MODEL_FIRST, with the race detector; then the planner's
## simulated walks (TestSimulatedWalk*, pkg/planner/sim_test.go) at twenty times their seeds.
## Replay one seed with go test -run TestModel . -args -model.seed=N -model.steps=M
model:
	go test -race -count=1 -timeout 180m -run '^TestModel$$' . -args -model.seeds=$(MODEL_SEEDS) -model.steps=$(MODEL_STEPS) -model.first=$(MODEL_FIRST) -model.lag=any -model.known=$(MODEL_KNOWN)
	go test -count=1 -timeout 60m -run '^TestSimulatedWalk' ./pkg/planner -args -sim.scale=20
	go test -count=1 -run '^TestModel$$' . -args -model.duration=5m -model.seeds=0 -model.first=$$(date +%s) -model.known=$(MODEL_KNOWN)

## cluster-binaries: build the embedded control plane once (about 10 minutes cold).
cluster-binaries:
	go run ./hack/localcluster build

# make run's log verbosity: at 2 the terminal shows one line per Job created,
# per Job finished and per run missed (docs/metrics.md, Logs). ARGS=-v=N overrides it.
RUN_V ?= 2

# LOCALCLUSTER_FLAGS: -fresh starts the embedded control plane from nothing
# (make run-fresh); by default it keeps what the last make run made.
LOCALCLUSTER_FLAGS ?=

## run: the controller against $$KUBECONFIG, or on the embedded control plane
## (there with /metrics and the probes on loopback only). The embedded plane
## keeps its state from one make run to the next; make run-fresh starts over.
run: build
	@if [ -n "$${KUBECONFIG:-}" ]; then \
	  exec $(OUTPUT_BIN)/cronjob-controller -kubeconfig "$${KUBECONFIG}" -v=$(RUN_V) $(ARGS); \
	else \
	  go build -o $(OUTPUT_BIN)/localcluster ./hack/localcluster && \
	  exec $(OUTPUT_BIN)/localcluster run $(LOCALCLUSTER_FLAGS) -- $(OUTPUT_BIN)/cronjob-controller -v=$(RUN_V) \
	    -metrics-bind-address=127.0.0.1:8080 -health-probe-bind-address=127.0.0.1:8081 $(ARGS); \
	fi

## run-fresh: make run on an embedded control plane started from nothing.
run-fresh:
	$(MAKE) run LOCALCLUSTER_FLAGS=-fresh

## codegen: regenerate clientset, listers, informers and deepcopy.
codegen:
	hack/update-codegen.sh

## manifests: regenerate the CRD from the API types' markers.
manifests: $(CONTROLLER_GEN)
	$(CRD_FROM_TYPES) > $(CRD)
	cp $(CRD) $(CHART)/crds/crds.yaml

$(CONTROLLER_GEN):
	@mkdir -p $(OUTPUT_BIN)
	GOBIN=$(OUTPUT_BIN) go install sigs.k8s.io/controller-tools/cmd/controller-gen@$(CONTROLLER_GEN_VERSION)
	mv $(OUTPUT_BIN)/controller-gen $@

## verify: formatting, vet, generated code, CRD and PrometheusRule are current.
# go vet -tags e2e covers the end-to-end files too; no file is excluded by the
# tag, so it vets everything a plain go vet ./... would.
verify: $(CONTROLLER_GEN)
	@unformatted=$$(gofmt -l $$(git ls-files '*.go')); \
	if [ -n "$$unformatted" ]; then echo "gofmt needed: $$unformatted" >&2; exit 1; fi
	go vet -tags e2e ./...
	hack/verify-codegen.sh
	@$(CRD_FROM_TYPES) | diff -u $(CRD) - \
	  || { echo "$(CRD) is stale: run make manifests" >&2; exit 1; }
	@echo "CRD is up to date"
	@go run ./hack/prometheusrule -o /dev/stdout | diff -u artifacts/monitoring/prometheusrule/prometheusrule.yaml - \
	  || { echo "the PrometheusRule is stale: run make prometheusrule" >&2; exit 1; }
	@echo "PrometheusRule is up to date"
	@cmp -s $(CRD) $(CHART)/crds/crds.yaml && cmp -s artifacts/prometheus/rules.yaml $(CHART)/files/rules.yaml \
	  || { echo "the chart's copies of the CRD or the rules are stale: run make manifests prometheusrule" >&2; exit 1; }
	@echo "the chart's CRD and rules are up to date"

## soak: the long variants of the fault tests (500 CronJobs, 40 kills; through the
## fault proxy, 200 CronJobs for 5 minutes with 10% of requests faulted, and 3
## minutes of Job creates answered 500 after being applied).
soak: cluster-binaries
	go test -race -count=1 -timeout 60m -tags e2e -v -run 'TestSurvives' ./test/e2e -args -soak

LOAD_N       ?= 500,2000,5000,10000
LOAD_REPEATS ?= 3
LOAD_QPS     ?= 500
LOAD_MEMORY  ?= 10000,20000
BENCH_COUNT  ?= 6
STATUS_WRITES_N ?= 1000
JOB_SHAPES_N ?= 2000
SUSTAINED_N  ?= 10000
SUSTAINED_MINUTES ?= 5
WHOLE_RUN_N  ?= 2000

## bench: Go benchmarks (sync handler, a firing and its encoding, schedule arithmetic,
## cache forms, own-writes records, a scrape of the
## per-CronJob metrics of 10,000 CronJobs; BENCH_COUNT runs
## each, for benchstat, in _output/gobench.txt), then the load
## benchmark against kube-controller-manager on the embedded control plane
## and the memory benchmark (LOAD_MEMORY CronJobs,Jobs cached), then the
## skew plot (docs/skew.png): about 90 minutes on a 2-core machine; then
## bench-status-writes, bench-status-shapes, bench-job-shapes, bench-sustained and bench-whole-run (their times in
## docs/benchmarks.md).
bench: cluster-binaries
	@mkdir -p _output/profiles
	go test -run '^$$' -bench . -benchmem -count $(BENCH_COUNT) . ./pkg/schedule ./pkg/slim ./pkg/metrics ./pkg/ownwrites | tee _output/gobench.txt
	go run ./hack/loadbench -n $(LOAD_N) -repeats $(LOAD_REPEATS) -qps $(LOAD_QPS) -memory $(LOAD_MEMORY) -profile _output/profiles -json _output/loadbench.json | tee _output/loadbench.md
	cd hack/skewplot && go run . -in $(CURDIR)/_output/loadbench.json -out $(CURDIR)/docs/skew.png
	$(MAKE) bench-status-writes bench-status-shapes bench-job-shapes bench-sustained bench-whole-run

## bench-status-writes: what one CronJob status write costs kube-apiserver and
## etcd, per way of sending it (PUT, merge patch, JSON patch, apply), with and
## without the CRD's CEL rules, STATUS_WRITES_N writes a way, three rounds.
bench-status-writes: cluster-binaries
	go run ./hack/loadbench -status-writes $(STATUS_WRITES_N) -repeats 3 | tee _output/statuswrites.md

## bench-status-shapes: what one status write costs kube-apiserver and etcd
## for what it carries (this controller's status, the built-in's two fields
## on the same CRD, the built-in's own kind as protobuf), a watch open on
## each; then again on a plane storing custom resources as CBOR (alpha in
## 1.36), with a CBOR client beside. STATUS_WRITES_N writes a shape, three rounds.
bench-status-shapes: cluster-binaries
	go run ./hack/loadbench -status-shapes $(STATUS_WRITES_N) -repeats 3 | tee _output/statusshapes.md
	KUBE_FEATURE_ClientsAllowCBOR=true go run ./hack/loadbench -status-shapes $(STATUS_WRITES_N) -repeats 3 \
	  -apiserver-feature-gates CBORServingAndStorage=true | tee -a _output/statusshapes.md

## bench-job-shapes: what one Job create costs kube-apiserver and etcd for
## what the Job carries (the bare floor's, the built-in's, this controller's
## with and without the scheduled time in the pod and the run-record
## finalizer), a Job watch open; JOB_SHAPES_N creates a shape, five rounds.
bench-job-shapes: cluster-binaries
	go run ./hack/loadbench -job-shapes $(JOB_SHAPES_N) -repeats 5 | tee _output/jobshapes.md

## bench-sustained: SUSTAINED_N CronJobs due every minute for SUSTAINED_MINUTES
## minutes, this controller and kube-controller-manager at QPS 500, one
## row a minute (Jobs, statuses, finalizers held, missing, twice).
bench-sustained: cluster-binaries
	go run ./hack/loadbench -n $(SUSTAINED_N) -sustained $(SUSTAINED_MINUTES) -variants 'this controller, defaults|kube-controller-manager, QPS' | tee _output/sustained.md

## bench-whole-run: what a whole run costs kube-apiserver and etcd, WHOLE_RUN_N
## CronJobs firing once, their Jobs running to completion on the simulated node
## (the Job controller on) and pruned by history limits of 0: CPU per run over
## the first two minutes and until every Job is gone, the writes per run by
## resource and verb, this controller and kube-controller-manager at QPS 500,
## LOAD_REPEATS runs each, taking turns.
bench-whole-run: cluster-binaries
	go run ./hack/loadbench -whole-run -n $(WHOLE_RUN_N) -repeats $(LOAD_REPEATS) -json _output/wholerun.json | tee _output/wholerun.md

clean:
	rm -rf _output
