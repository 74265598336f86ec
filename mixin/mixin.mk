# mixin.mk: make targets of the monitoring mixin (mixin/). The root
# Makefile includes it with `include mixin/mixin.mk`; paths are relative to
# the repository root. It also works on its own:
#   make -f Makefile -f mixin/mixin.mk mixin-check
#
#   mixin        regenerate mixin/prometheus_alerts.yaml,
#                mixin/prometheus_rules.yaml and mixin/dashboards_out/
#   mixin-check  drift, jsonnetfmt, promtool check rules, promtool test
#                rules, and the Go lint/validation tests of mixin/
#   mixin-e2e    the end-to-end scenarios with real Prometheus and
#                Alertmanager servers, llmsim and the exporter
#
# Every tool is built from source at a pinned version into $(BIN):
# jsonnet and jsonnetfmt from mixin/go.mod (go-jsonnet), promtool and
# prometheus from tools/go.mod (prometheus/prometheus), alertmanager from
# the module version that tools/go.mod pins (prometheus/alertmanager).

GO          ?= go
BIN         ?= .bin
PROMTOOL    ?= $(BIN)/promtool

MIXIN_DIR          := mixin
JSONNET            := $(BIN)/jsonnet
JSONNETFMT         := $(BIN)/jsonnetfmt
PROMETHEUS         := $(BIN)/prometheus
ALERTMANAGER       := $(BIN)/alertmanager
MIXIN_BUILD        := .build
MIXIN_JSONNET_SRCS := $(shell find $(MIXIN_DIR) -name '*.libsonnet' -o -name '*.jsonnet')
# The flags of jsonnetfmt, as node-mixin and kubernetes-mixin use them.
JSONNETFMT_ARGS    := -n 2 --max-blank-lines 2 --string-style s --comment-style s

# The whole test suite includes the mixin's.
test: mixin-check mixin-e2e

$(JSONNET): $(MIXIN_DIR)/go.mod $(MIXIN_DIR)/go.sum
	@mkdir -p $(BIN)
	cd $(MIXIN_DIR) && $(GO) build -o $(abspath $@) github.com/google/go-jsonnet/cmd/jsonnet

$(JSONNETFMT): $(MIXIN_DIR)/go.mod $(MIXIN_DIR)/go.sum
	@mkdir -p $(BIN)
	cd $(MIXIN_DIR) && $(GO) build -o $(abspath $@) github.com/google/go-jsonnet/cmd/jsonnetfmt

# The Prometheus server builds from the tools module like promtool; without
# the builtinassets tag it serves no web UI, which the tests do not need.
$(PROMETHEUS): tools/go.mod tools/go.sum
	@mkdir -p $(BIN)
	@echo ">> building prometheus (pinned in tools/go.mod)"
	cd tools && $(GO) build -o $(abspath $@) github.com/prometheus/prometheus/cmd/prometheus

# Alertmanager's module on the proxy lacks its built web UI (ui/app/dist,
# which its main package embeds), so it is built from a copy of the module
# at the version tools/go.mod pins, with a one-page placeholder UI, and
# with its own go.mod and go.sum, as upstream builds it.
$(ALERTMANAGER): tools/go.mod tools/go.sum
	@mkdir -p $(BIN) $(MIXIN_BUILD)
	@echo ">> building alertmanager (version pinned in tools/go.mod)"
	set -e; \
	cd tools && $(GO) mod download github.com/prometheus/alertmanager; \
	src=$$($(GO) list -m -f '{{.Dir}}' github.com/prometheus/alertmanager); \
	version=$$($(GO) list -m -f '{{.Version}}' github.com/prometheus/alertmanager); \
	cd ..; dst=$(MIXIN_BUILD)/alertmanager; \
	rm -rf $$dst; cp -R $$src $$dst; chmod -R u+w $$dst; \
	for ui in elm mantine; do \
		mkdir -p $$dst/ui/app/dist/$$ui; \
		echo '<!doctype html><title>Alertmanager</title><p>Built without its web UI.</p>' > $$dst/ui/app/dist/$$ui/index.html; \
	done; \
	cd $$dst && $(GO) build -buildvcs=false \
		-ldflags "-X github.com/prometheus/common/version.Version=$${version#v}" \
		-o $(abspath $@) ./cmd/alertmanager

.PHONY: mixin-tools
mixin-tools: $(JSONNET) $(JSONNETFMT) $(PROMTOOL)

# mixin regenerates the committed outputs from the jsonnet sources.
.PHONY: mixin
mixin: $(JSONNET) $(JSONNETFMT)
	$(JSONNETFMT) $(JSONNETFMT_ARGS) -i $(MIXIN_JSONNET_SRCS)
	cd $(MIXIN_DIR) && $(abspath $(JSONNET)) -S lib/alerts.jsonnet > prometheus_alerts.yaml
	cd $(MIXIN_DIR) && $(abspath $(JSONNET)) -S lib/rules.jsonnet > prometheus_rules.yaml
	rm -rf $(MIXIN_DIR)/dashboards_out && mkdir -p $(MIXIN_DIR)/dashboards_out
	cd $(MIXIN_DIR) && $(abspath $(JSONNET)) -m dashboards_out lib/dashboards.jsonnet > /dev/null

# mixin-check fails on drift (the committed outputs against a fresh
# rendering, in the Go test and here), on unformatted jsonnet, on rules
# that promtool rejects, on failing promtool rule tests, and on the Go
# lint and validation tests.
.PHONY: mixin-check
mixin-check: mixin-tools
	@echo ">> checking jsonnet formatting"
	@out=$$($(JSONNETFMT) $(JSONNETFMT_ARGS) --test $(MIXIN_JSONNET_SRCS) 2>&1) || { echo "jsonnetfmt needed (make mixin):"; echo "$$out"; exit 1; }
	@echo ">> checking the generated files for drift"
	@set -e; tmp=$$(mktemp -d); trap 'rm -rf $$tmp' EXIT; \
	cd $(MIXIN_DIR); \
	$(abspath $(JSONNET)) -S lib/alerts.jsonnet > $$tmp/prometheus_alerts.yaml; \
	$(abspath $(JSONNET)) -S lib/rules.jsonnet > $$tmp/prometheus_rules.yaml; \
	mkdir $$tmp/dashboards_out; $(abspath $(JSONNET)) -m $$tmp/dashboards_out lib/dashboards.jsonnet > /dev/null; \
	diff -ru prometheus_alerts.yaml $$tmp/prometheus_alerts.yaml; \
	diff -ru prometheus_rules.yaml $$tmp/prometheus_rules.yaml; \
	diff -ru dashboards_out $$tmp/dashboards_out || { echo "generated files are stale: run make mixin"; exit 1; }
	$(PROMTOOL) check rules $(MIXIN_DIR)/prometheus_alerts.yaml $(MIXIN_DIR)/prometheus_rules.yaml
	$(PROMTOOL) test rules $(MIXIN_DIR)/tests/*.yaml
	cd $(MIXIN_DIR) && $(GO) vet ./...
	cd $(MIXIN_DIR) && $(GO) test -count=1 ./...

# mixin-e2e runs the scenarios of mixin/e2e_test.go: a slow server pages,
# a saturated prober says so and does not page for latency.
.PHONY: mixin-e2e
mixin-e2e: $(PROMETHEUS) $(ALERTMANAGER) $(BIN)/llm_slo_exporter $(BIN)/llmsim
	cd $(MIXIN_DIR) && \
	PROMETHEUS_BIN=$(abspath $(PROMETHEUS)) ALERTMANAGER_BIN=$(abspath $(ALERTMANAGER)) \
	LLMSLO_EXPORTER_BIN=$(abspath $(BIN)/llm_slo_exporter) LLMSIM_BIN=$(abspath $(BIN)/llmsim) \
		$(GO) test -count=1 -v -timeout 10m -run 'TestE2E' ./...
