# The two commands of README.md: `make run` and `make test`. Both install what is
# missing first (scripts/setup.sh) and are safe to repeat.
GO ?= go
export PATH := $(PATH):/usr/local/go/bin

.PHONY: setup build run test suite unseen bench

setup:
	./scripts/setup.sh

build: setup
	$(GO) build -o mlerl ./cmd/mlerl

# The main job on the embedded default: asynchronous RL with the built-in
# recipe policy on a suite task. Each run gets its own folder under runs/.
TASK ?= telco-churn
BUDGET ?= 4m
run: build
	./mlerl train --task $(TASK) --budget $(BUDGET) --out runs/$(TASK)-$$(date +%Y%m%d-%H%M%S)

test: setup
	$(GO) vet ./...
	$(GO) test ./...

# Rebuild the suite from Debian's data packages and compare with the recorded checksums.
suite:
	./scripts/setup.sh --suite
	$(GO) run ./cmd/mlerl suite build --verify

# Rebuild the held-out tasks of bench/unseen/ in place (git diff shows any change).
unseen:
	./scripts/setup.sh --unseen
	$(GO) run ./cmd/mlerl suite build --set unseen --out bench/unseen

# The measurements behind bench/RESULTS.md: the hand-written baselines, then
# `mlerl train --budget 4m` on every suite task (about an hour on 2 cores).
bench: build
	./scripts/setup.sh --bench
	MLERL=$(CURDIR)/mlerl bench/run-baselines.sh
	MLERL=$(CURDIR)/mlerl bench/run-train.sh
