# Makefile for llm_slo_exporter. Target names follow Prometheus'
# Makefile.common (build, test, lint, style, checkmetrics), with plain
# `go build` instead of promu, which is not reachable from here.

GO        ?= go
BIN       := .bin
VERSION   := $(shell cat VERSION 2>/dev/null || echo 0.0.0)
REVISION  := $(shell git rev-parse HEAD 2>/dev/null || echo unknown)
BRANCH    := $(shell git rev-parse --abbrev-ref HEAD 2>/dev/null || echo unknown)
BUILDDATE := $(shell date -u +%Y%m%d-%H:%M:%S)
VPKG      := github.com/prometheus/common/version
LDFLAGS   := -X $(VPKG).Version=$(VERSION) -X $(VPKG).Revision=$(REVISION) \
             -X $(VPKG).Branch=$(BRANCH) -X $(VPKG).BuildUser=$(shell whoami)@$(shell hostname) \
             -X $(VPKG).BuildDate=$(BUILDDATE)

# Pinned tools, built from the tools/ module (its go.mod pins the versions).
PROMTOOL  := $(BIN)/promtool

# Settings of `make run`.
LISTEN    ?= 127.0.0.1:10240
SIM_ADDR  ?= 127.0.0.1:8000

.PHONY: all
all: lint build test

.PHONY: build
build: $(BIN)/llm_slo_exporter $(BIN)/llmsim

$(BIN)/llm_slo_exporter: FORCE
	@mkdir -p $(BIN)
	$(GO) build -ldflags "$(LDFLAGS)" -o $@ ./cmd/llm_slo_exporter

$(BIN)/llmsim: FORCE
	@mkdir -p $(BIN)
	$(GO) build -ldflags "$(LDFLAGS)" -o $@ ./cmd/llmsim

$(PROMTOOL): tools/go.mod tools/go.sum
	@mkdir -p $(BIN)
	@echo ">> building promtool (pinned in tools/go.mod; several minutes on a fresh machine)"
	cd tools && $(GO) build -o ../$(PROMTOOL) github.com/prometheus/prometheus/cmd/promtool

.PHONY: tools
tools: $(PROMTOOL)

# test runs every test: unit, golden, end-to-end with worker processes,
# the promtool lint of a live /metrics, and a 60 s chaos soak.
.PHONY: test
test: tools build test-go test-soak deploy-check

.PHONY: test-go
test-go: tools build
	PROMTOOL=$(abspath $(PROMTOOL)) LLMSLO_EXPORTER_BIN=$(abspath $(BIN)/llm_slo_exporter) LLMSIM_BIN=$(abspath $(BIN)/llmsim) \
		$(GO) test -race -count=1 -timeout 15m ./...

# The soak runs without the race detector: it measures a real load.
SOAK ?= 60s
.PHONY: test-soak
test-soak:
	SOAK=$(SOAK) $(GO) test -count=1 -timeout 30m -run '^TestSoak$$' -v ./app/

# soak is the long chaos soak (about 10 minutes).
.PHONY: soak
soak:
	$(MAKE) test-soak SOAK=10m

.PHONY: test-short
test-short:
	$(GO) test -short ./...

.PHONY: style
style:
	@echo ">> checking code style"
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

.PHONY: vet
vet:
	$(GO) vet ./...

.PHONY: lint
lint: style vet

# checkmetrics lints a live /metrics of the exporter probing llmsim.
.PHONY: checkmetrics
checkmetrics: tools build
	PROMTOOL=$(abspath $(PROMTOOL)) LLMSLO_EXPORTER_BIN=$(abspath $(BIN)/llm_slo_exporter) LLMSIM_BIN=$(abspath $(BIN)/llmsim) \
		$(GO) test -count=1 -run 'TestCheckMetrics' ./app/

# run starts llmsim and the exporter on the demo configuration, in the
# foreground; Ctrl-C stops both.
.PHONY: run
run: build
	@set -e; \
	$(BIN)/llmsim --listen-address=$(SIM_ADDR) --ttft=100ms --itl=10ms & sim=$$!; \
	trap 'kill $$sim 2>/dev/null' EXIT INT TERM; \
	echo ">> llmsim on http://$(SIM_ADDR) (pid $$sim)"; \
	echo ">> metrics at http://$(LISTEN)/metrics  (recent probes: http://$(LISTEN)/probes)"; \
	$(BIN)/llm_slo_exporter --config.file=examples/demo.yml --web.listen-address=$(LISTEN)

# bench runs the rate ladder against llmsim (see docs/benchmarks.md):
# make bench RATES=50,500 DURATION=20s
RATES    ?= 50,200,500,1000
DURATION ?= 20s
WORKERS  ?= 4
BENCH_OUT ?=
.PHONY: bench
bench: build $(BIN)/llmslo-bench
	$(BIN)/llmslo-bench ladder --bin=$(BIN) --rates=$(RATES) --duration=$(DURATION) --workers=$(WORKERS) $(if $(BENCH_OUT),--out=$(BENCH_OUT))

# bench-saturation starves one worker of its core and prints what the
# exporter says about itself (ρ, P-K, lag) beside the TTFT bias.
SAT_RATE  ?= 100
SAT_STEPS ?= 0:15s,1:15s,2:15s,4:15s,0:15s
.PHONY: bench-saturation
bench-saturation: build $(BIN)/llmslo-bench
	$(BIN)/llmslo-bench saturation --bin=$(BIN) --rate=$(SAT_RATE) --steps=$(SAT_STEPS)

# bench-go runs the Go micro-benchmarks of the hot path with allocation
# counts (stream reader, JSON scanner, adapters, record codec, one probe).
.PHONY: bench-go
bench-go:
	$(GO) test -run '^$$' -bench . -benchmem ./prober/... ./record/

$(BIN)/llmslo-bench: FORCE
	@mkdir -p $(BIN)
	cd bench && $(GO) build -o ../$(BIN)/llmslo-bench .

.PHONY: clean
clean:
	rm -rf $(BIN)

FORCE:

# Packaging and deployment (Dockerfile, deploy/), with their checks.
include deploy/deploy.mk
# make fuzz FUZZTIME=60s: every fuzz target, one after the other.
include prober/fuzz.mk
# The monitoring mixin: make mixin, mixin-check, mixin-e2e (both in make test).
include mixin/mixin.mk
