# The two commands of README.md: `make run` and `make test` (plus `make test-long`
# and `make lint`). All install what is missing first (scripts/setup.sh) and are
# safe to repeat.
GO ?= go
export PATH := $(PATH):/usr/local/go/bin

.PHONY: setup build run test test-long lint suite unseen tuning bench

setup:
	./scripts/setup.sh

# The commit the binary says it is (mlerl version, result files), with
# "+modified" for a changed work tree; empty where git cannot say.
COMMIT := $(shell c=$$(git rev-parse --short=12 HEAD 2>/dev/null) && { git diff --quiet HEAD 2>/dev/null || c="$$c+modified"; echo "$$c"; })

build: setup
	$(GO) build -ldflags "-X main.commit=$(COMMIT)" -o mlerl ./cmd/mlerl

# The main job on the embedded default: asynchronous RL with the built-in
# recipe policy on a suite task. Each run gets its own folder under runs/.
TASK ?= telco-churn
BUDGET ?= 4m
run: build
	./mlerl train --task $(TASK) --budget $(BUDGET) --out runs/$(TASK)-$$(date +%Y%m%d-%H%M%S)

# The quick suite: vet, then every package's tests with the race detector and
# -short, which skips the slow real-sandbox and real-training tests but keeps
# at least one real end-to-end test per package. Under 5 minutes on 2 cores.
test: setup
	$(GO) vet ./...
	$(GO) test -race -short ./...

# Everything, without -short (no race detector: the long tests train for real).
# Also installs Debian's chromium, so the browser tests of `mlerl ui` run
# (`make test` skips them, saying why, when /usr/bin/chromium is missing).
test-long: setup
	./scripts/setup.sh --browser
	$(GO) test -timeout 60m ./...

# Linters, pinned; installed into ./bin on first use.
STATICCHECK_VERSION ?= v0.8.2
DEADCODE_VERSION ?= v0.52.0
BIN := $(CURDIR)/bin
# Every step runs; the target fails at the end if any step found something.
lint: setup $(BIN)/staticcheck-$(STATICCHECK_VERSION) $(BIN)/deadcode-$(DEADCODE_VERSION)
	@fail=0; \
	echo "gofmt -l ."; out=$$(gofmt -l . 2>&1); [ -z "$$out" ] || { echo "$$out"; fail=1; }; \
	echo "go vet ./..."; $(GO) vet ./... || fail=1; \
	echo "staticcheck ./..."; $(BIN)/staticcheck-$(STATICCHECK_VERSION) ./... || fail=1; \
	echo "deadcode ./..."; out=$$($(BIN)/deadcode-$(DEADCODE_VERSION) ./... 2>&1); [ -z "$$out" ] || { echo "$$out"; fail=1; }; \
	exit $$fail

$(BIN)/staticcheck-$(STATICCHECK_VERSION):
	GOBIN=$(BIN) $(GO) install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)
	mv $(BIN)/staticcheck $@

$(BIN)/deadcode-$(DEADCODE_VERSION):
	GOBIN=$(BIN) $(GO) install golang.org/x/tools/cmd/deadcode@$(DEADCODE_VERSION)
	mv $(BIN)/deadcode $@

# Rebuild the suite from Debian's data packages and compare with the recorded checksums.
suite:
	./scripts/setup.sh --suite
	$(GO) run ./cmd/mlerl suite build --verify

# Rebuild the held-out tasks of bench/unseen/ in place (git diff shows any change).
unseen:
	./scripts/setup.sh --unseen
	$(GO) run ./cmd/mlerl suite build --set unseen --out bench/unseen

# Rebuild the tuning tasks of bench/tuning/ in place.
tuning:
	./scripts/setup.sh --tuning
	$(GO) run ./cmd/mlerl suite build --set tuning --out bench/tuning

# The measurements behind bench/RESULTS.md: the hand-written baselines, then
# `mlerl train --budget 4m` on every suite task (about an hour on 2 cores).
bench: build
	./scripts/setup.sh --bench
	MLERL=$(CURDIR)/mlerl bench/run-baselines.sh
	MLERL=$(CURDIR)/mlerl bench/run-train.sh
