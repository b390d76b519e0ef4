# Linkslot — the two front-door commands are `make run` and `make test`.
SHELL := /bin/bash
GO    ?= go
BIN   := bin
export GOFLAGS := -buildvcs=false

.PHONY: all build run test vet bench bench-soak fuzz test-cluster migrate clean

all: build

build:
	@mkdir -p $(BIN)
	$(GO) build -trimpath -o $(BIN)/authserver ./authserver
	$(GO) build -trimpath -o $(BIN)/resourceserver ./resourceserver

# migrate, load the demo data, start both servers on loopback; Ctrl-C stops both.
run: build
	@scripts/run

migrate: build
	$(BIN)/authserver migrate

vet:
	$(GO) vet ./...

# Everything: vet, then every test, with a throwaway PostgreSQL when initdb
# is available (its tests are counted apart at the end). The browser tests
# write screenshots of the pages to var/screenshots.
test: vet
	@mkdir -p var/screenshots && rm -f var/screenshots/*.png
	@set -o pipefail; LINKSLOT_SCREENSHOT_DIR=$(CURDIR)/var/screenshots \
	  scripts/with-postgres $(GO) test -count=1 -json -timeout 25m ./... \
	  | tee var/test.json | $(GO) run ./scripts/testreport
	@if ls var/screenshots/*.png >/dev/null 2>&1; then echo "page screenshots (phone and desktop): var/screenshots/"; fi

# Whole-system load and the micro-benchmarks beside the code.
bench: build
	@scripts/bench

# The 10-minute refresh rotation soak on PostgreSQL with the janitor
# running: var/bench/soak.txt (SOAK=2m for a shorter one).
SOAK ?= 10m
bench-soak:
	@mkdir -p var/bench
	scripts/with-postgres $(GO) run ./bench -soak $(SOAK) -out var/bench

fuzz:
	@scripts/fuzz

clean:
	rm -rf $(BIN) var/test.json

# The cluster scenarios in full: 2 authorization and 3 resource servers as
# processes on a dedicated PostgreSQL (make test runs the short form).
test-cluster:
	@scripts/test-cluster
