# ExtendedDaemonSet build, test and development targets. Tool versions live
# in test/tools/versions.env; tools and harness binaries are cached outside
# the repository under $(CACHE_DIR).

include test/tools/versions.env

# The product module needs Go 1.27; the go command fetches that toolchain
# itself when the local one is older.
export GOTOOLCHAIN := auto

SHELL := /usr/bin/env bash -o pipefail
.SHELLFLAGS := -ec

CACHE_DIR ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/extendeddaemonset
TOOLS_DIR := $(CACHE_DIR)/tools
CONTROLLER_GEN := $(TOOLS_DIR)/controller-gen-$(CONTROLLER_GEN_VERSION)/controller-gen
GOLANGCI_LINT := $(TOOLS_DIR)/golangci-lint-$(GOLANGCI_LINT_VERSION)/golangci-lint
ACTIONLINT := $(TOOLS_DIR)/actionlint-$(ACTIONLINT_VERSION)/actionlint
export EDS_CACHE_DIR := $(CACHE_DIR)

IMAGE_REPO ?= ghcr.io/extendeddaemonset/extendeddaemonset
IMG ?= $(IMAGE_REPO):dev

# What the manager and kubectl-eds print as their version
# (cmd/internal/version), from git; a release sets VERSION to its tag.
# DATE is the commit's, not the clock's, so that one commit builds the
# same bytes whenever it is built.
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
COMMIT ?= $(shell git rev-parse HEAD 2>/dev/null)
DATE ?= $(shell git log -1 --format=%cI 2>/dev/null)
VERSION_PKG := github.com/extendeddaemonset/extendeddaemonset/cmd/internal/version
VERSION_LDFLAGS = -X $(VERSION_PKG).version=$(VERSION) -X $(VERSION_PKG).commit=$(COMMIT) -X $(VERSION_PKG).date=$(DATE)
# make dist writes the plugin's release archives here, for these platforms;
# cmd/kubectl-eds/krew/eds.yaml must name the same ones.
DIST_DIR ?= dist
DIST_PLATFORMS ?= linux/amd64,linux/arm64,darwin/amd64,darwin/arm64

NODES ?= 6
KUBECONFIG ?=
# Test flags; the end-to-end suite runs in `make test`, the benchmarks in `make bench`.
# One package at a time: the end-to-end and chaos suites each run a cluster
# and a manager, and on 2 cores two of them at once starve each other's
# watches and analyses into timeouts.
TEST_FLAGS ?= -count=1 -timeout 25m -p 1

.PHONY: all
all: build

##@ Development

.PHONY: generate
generate: $(CONTROLLER_GEN) ## Generate deepcopy code.
	$(CONTROLLER_GEN) object paths="./api/..."

.PHONY: manifests
manifests: $(CONTROLLER_GEN) ## Generate CRDs (without the pod template's field descriptions), RBAC and the API reference from markers; sync the Helm chart and its values table.
	$(CONTROLLER_GEN) crd:generateEmbeddedObjectMeta=true,allowDangerousTypes=true \
		rbac:roleName=manager-role paths="./api/...;./controllers/..." \
		output:crd:artifacts:config=config/crd/bases output:rbac:artifacts:config=config/rbac
	go run ./test/crdtrim config/crd/bases
	go run ./test/apiref -o api/v1alpha1/README.md -brief ExtendedDaemonSetReplicaSet \
		config/crd/bases/extendeddaemonset.io_extendeddaemonsets.yaml \
		config/crd/bases/extendeddaemonset.io_extendeddaemonsetreplicasets.yaml \
		config/crd/bases/extendeddaemonset.io_extendeddaemonsetsettings.yaml
	go run ./test/chartsync -config config -chart config/helm/extendeddaemonset -readme README.md

.PHONY: fmt
fmt: ## Format the code.
	go fmt ./...

.PHONY: vet
vet: ## Run go vet.
	go vet ./...

.PHONY: lint
lint: $(GOLANGCI_LINT) ## Run golangci-lint.
	$(GOLANGCI_LINT) run ./...

.PHONY: verify
verify: $(ACTIONLINT) ## Fail when generated files (the chart's copies and README's values table included), formatting or go.mod are stale, the image's build lacks a file the manager needs, or a workflow is wrong.
	@sum() { find api config go.mod go.sum README.md -type f -print0 | sort -z | xargs -0 sha256sum; }; \
	before=$$(sum); \
	$(MAKE) --no-print-directory generate manifests >/dev/null; go mod tidy; \
	if [ "$$before" != "$$(sum)" ]; then \
		echo "generated files or go.mod were stale and have been regenerated; review and commit:"; \
		diff <(echo "$$before") <(sum) || true; exit 1; \
	fi
	@unformatted=$$(gofmt -l $$(git ls-files -co --exclude-standard '*.go')); \
	if [ -n "$$unformatted" ]; then echo "not gofmt-formatted: $$unformatted"; exit 1; fi
	go run ./test/dockercontext
	$(ACTIONLINT) .github/workflows/*.yml

.PHONY: testbin
testbin: ## Build the control-plane binaries; prints the KUBEBUILDER_ASSETS directory last.
	@test/tools/testbin.sh

.PHONY: test
test: verify vet lint ## Run every test against the harness (envtest and simulated cluster).
	assets=$$(test/tools/testbin.sh | tail -n 1); \
	KUBEBUILDER_ASSETS=$$assets go test $(TEST_FLAGS) ./...

# Under -short, every test of these packages that needs the harness binaries
# skips (testenv.RequireAssets) and their TestMains start nothing. The other
# packages start an API server, Prometheus or a simulated cluster for all
# their tests. KUBEBUILDER_ASSETS is unset so that a test that fails to skip
# fails rather than quietly starting an API server.
UNIT_PACKAGES := ./analysis/... ./api/... ./cmd/... ./controllers/... ./test/argocd/... ./test/demo/... ./test/exporters/... \
	./test/chartsync/... ./test/dockercontext/... ./test/harness/... ./test/helm/... ./test/invariants/... ./test/manifests/... ./test/scenario/...

.PHONY: unit
unit: ## Run the tests that need no API server.
	env -u KUBEBUILDER_ASSETS go test -short -count=1 -timeout 2m $(UNIT_PACKAGES)

# make bench compares the manager, run as its own process, with the native
# DaemonSet controller of kube-controller-manager and OpenKruise's Advanced
# DaemonSet controller on one simulated cluster per client QPS, all given the
# same QPS and burst. Its knobs, read by test/bench:
#   BENCH_NODES      fake nodes (1000)
#   BENCH_QPS        client QPS of every controller, one comparison each (20,200)
#   BENCH_BURST      client burst, one value or one per QPS (twice the QPS)
#   BENCH_SCENARIOS  create,update,surge,canary,inplace (all)
#   BENCH_PEERS      native,kruise; kruise is built by test/tools/kruise.sh
#                    (about 4 minutes the first time) unless left out here; none runs ours alone
#   BENCH_REPS       runs of each scenario per controller, one value or one per QPS (3)
#   BENCH_OUT        JSON of every run and the medians (bin/bench.json, ignored by git)
#   BENCH_PROFILE    a directory for Go CPU and heap profiles of our manager's runs (none)
#   BENCH_MANAGER_ENV  KEY=VALUE ... added to our manager's environment, e.g. GOGC=50; ours also
#                    gets the GOMEMLIMIT it would set itself in a container of the limits.memory
#                    README recommends for BENCH_NODES (70% of it: 102MiB up to 6500 nodes, 143MiB
#                    at 10000) unless this sets one (GOMEMLIMIT=off for none); the peers run as they do
# At 1000 nodes with the defaults it took about half an hour before Kruise
# and the surge scenario joined, which add about two thirds to the rollouts
# and three minutes per QPS to start Kruise's manager; no timeout,
# since a stalled rollout fails on its own after 3 minutes. The Go
# micro-benchmarks of the controllers run first, in seconds, with -short so
# that the controllers' TestMain starts no API server; then the decision
# path at the sizes of BENCH_SCALE_NODES, with no API server, and the
# cache's memory model (about 2 minutes on 2 cores, most of it the
# 100,000-node case: BENCH_SCALE_NODES=10000,50000 leaves it out).
# Then the largest cluster this machine holds, BENCH_LARGE_NODES (10000; 0
# leaves it out): ours and the native controller, create and update at QPS
# 200, one run each, about 10 minutes on 2 cores, into bin/bench-large.json.
export BENCH_NODES BENCH_QPS BENCH_BURST BENCH_SCENARIOS BENCH_REPS BENCH_OUT BENCH_PROFILE BENCH_MANAGER_ENV BENCH_PEERS
BENCH_SCALE_NODES ?= 10000,50000,100000
BENCH_LARGE_NODES ?= 10000

.PHONY: bench
bench: ## Micro-benchmarks, the decision path at scale (BENCH_SCALE_NODES), then the manager against the native and Kruise's DaemonSet controllers on a simulated cluster (BENCH_NODES, BENCH_QPS, BENCH_BURST, BENCH_SCENARIOS, BENCH_PEERS, BENCH_REPS, BENCH_OUT, BENCH_PROFILE), then on BENCH_LARGE_NODES nodes.
	go test -short -run '^$$' -bench . -skip '^Benchmark(Scale|CacheMemory)$$' -benchtime 20x ./controllers/...
	SCALE_NODES=$(BENCH_SCALE_NODES) go test -short -run '^$$' -bench '^Benchmark(Scale|CacheMemory)$$' -benchtime 3x -timeout 0 \
		./controllers/ ./controllers/internal/store/
	assets=$$(test/tools/testbin.sh | tail -n 1); \
	peers=$${BENCH_PEERS:-kruise}; kruise=; \
	case ",$${peers// /}," in *,kruise,*) kruise=$$(test/tools/kruise.sh | tail -n 1);; esac; \
	KUBEBUILDER_ASSETS=$$assets BENCH_KRUISE=$$kruise go test ./test/bench/ -count=1 -run '^$$' -bench . -benchtime 1x -timeout 0 -v
	if [ "$(BENCH_LARGE_NODES)" != 0 ]; then \
		assets=$$(test/tools/testbin.sh | tail -n 1); \
		KUBEBUILDER_ASSETS=$$assets BENCH_NODES=$(BENCH_LARGE_NODES) BENCH_QPS=200 BENCH_BURST=400 BENCH_SCENARIOS=create,update \
			BENCH_PEERS=native BENCH_REPS=1 BENCH_OUT=bin/bench-large.json BENCH_PROFILE= \
			go test ./test/bench/ -count=1 -run '^$$' -bench . -benchtime 1x -timeout 0 -v; \
	fi

# The chaos suite at full scale takes about 25 minutes on 2 cores (15 of
# them the random walk); each fuzz target then gets CHAOS_FUZZTIME and a few
# seconds of build: with the 13 targets of today, the whole takes about 52
# minutes.
CHAOS_FUZZTIME ?= 2m

.PHONY: chaos
chaos: ## Chaos suite at full scale (500 nodes, 20 manager kills, 10% API faults, a failover, a random walk of 300 actions) and its table, then every fuzz target.
	assets=$$(test/tools/testbin.sh | tail -n 1); \
	KUBEBUILDER_ASSETS=$$assets CHAOS=full go test ./test/chaos/ -count=1 -v -timeout 60m
	FUZZTIME=$(CHAOS_FUZZTIME) test/tools/fuzz.sh

##@ Build

.PHONY: build
build: ## Build the manager binary.
	go build -ldflags "$(VERSION_LDFLAGS)" -o bin/manager ./cmd/manager

.PHONY: build-plugin
build-plugin: ## Build the kubectl plugin bin/kubectl-eds; with it on PATH, kubectl runs it as `kubectl eds`.
	go build -ldflags "$(VERSION_LDFLAGS)" -o bin/kubectl-eds ./cmd/kubectl-eds

# Each archive is the same bytes for the same commit and toolchain
# (test/dist says how); about 12 seconds for the four platforms with a warm
# build cache, 8 minutes cold on 2 cores.
.PHONY: dist
dist: ## Build the plugin's release archives for VERSION, checksums.txt and the krew manifest eds.yaml into $(DIST_DIR).
	go run ./test/dist -version "$(VERSION)" -date "$(DATE)" -ldflags "$(VERSION_LDFLAGS)" \
		-platforms "$(DIST_PLATFORMS)" -o "$(DIST_DIR)"

# Without a kubeconfig, make run is the live demo (test/demo): a simulated
# cluster of $(NODES) fake nodes in two zones, config/default applied, a
# Prometheus judging a demo agent, the controller, and a canary to watch.
# make demo plays the scripted story on it, or on a cluster of its own when
# none runs. The demo runs as a built binary rather than under go run,
# which exits 1 whenever it is interrupted, so Ctrl-C ends make run cleanly.
DEMO_KUBECONFIG := $(CACHE_DIR)/run.kubeconfig

.PHONY: run
run: build build-plugin ## Run the controller: on $$KUBECONFIG when given, else the live demo on a local simulated cluster.
	@if [ -n "$(KUBECONFIG)" ]; then \
		bin/manager --metrics-bind-address=:8080 --health-probe-bind-address=:8081; \
	else \
		assets=$$(test/tools/testbin.sh | tail -n 1); \
		go build -o bin/demo ./test/demo; \
		KUBEBUILDER_ASSETS=$$assets exec bin/demo --nodes $(NODES) --manager bin/manager \
			--kubeconfig $(DEMO_KUBECONFIG); \
	fi

.PHONY: demo
demo: build build-plugin ## The scripted story (good canary promoted, bad canary failed by analysis, retry, rollback) in under 3 minutes.
	@assets=$$(test/tools/testbin.sh | tail -n 1); \
	go build -o bin/demo ./test/demo; \
	KUBEBUILDER_ASSETS=$$assets exec bin/demo --story --nodes $(NODES) --manager bin/manager \
		--plugin bin/kubectl-eds --kubeconfig $(DEMO_KUBECONFIG)

.PHONY: docker-build
docker-build: ## Build the container image $(IMG) for this machine's platform.
	docker build --build-arg VERSION=$(VERSION) --build-arg COMMIT=$(COMMIT) --build-arg DATE=$(DATE) -t $(IMG) .

# A release's install.yaml: config/default with the image of the release,
# through a throwaway overlay so that config/ keeps its dev tag.

.PHONY: install-yaml
install-yaml: ## Render config/default with the image $(IMAGE_REPO):$(VERSION) into $(DIST_DIR)/install.yaml.
	@overlay=$$(mktemp -d); trap 'rm -rf "$$overlay"' EXIT; \
	printf 'resources:\n- %s\nimages:\n- name: %s\n  newTag: %s\n' "$$(realpath --relative-to="$$overlay" config/default)" "$(IMAGE_REPO)" "$(VERSION)" >"$$overlay/kustomization.yaml"; \
	mkdir -p $(DIST_DIR); kubectl kustomize "$$overlay" >$(DIST_DIR)/install.yaml; \
	grep -q "image: $(IMAGE_REPO):$(VERSION)$$" $(DIST_DIR)/install.yaml || \
		{ echo "config/default has no image $(IMAGE_REPO) to set to $(VERSION)"; rm $(DIST_DIR)/install.yaml; exit 1; }

##@ Tools

$(CONTROLLER_GEN):
	GOBIN=$(dir $@) GOFLAGS= go install sigs.k8s.io/controller-tools/cmd/controller-gen@$(CONTROLLER_GEN_VERSION)

$(GOLANGCI_LINT):
	GOBIN=$(dir $@) GOFLAGS= go install github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$(GOLANGCI_LINT_VERSION)

$(ACTIONLINT):
	GOBIN=$(dir $@) GOFLAGS= go install github.com/rhysd/actionlint/cmd/actionlint@$(ACTIONLINT_VERSION)

.PHONY: help
help: ## Show this help.
	@awk 'BEGIN {FS = ":.*##"} /^[a-zA-Z_-]+:.*##/ { printf "  %-14s %s\n", $$1, $$2 }' $(MAKEFILE_LIST)
