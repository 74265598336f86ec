# Packaging and deployment targets, included by the root Makefile
# (`include deploy/deploy.mk`); paths are relative to the repository root.
# They use the root Makefile's GO, BIN, VERSION, REVISION, BRANCH and
# BUILDDATE.
#
#   make docker             build the container image (needs a Docker engine)
#   make deploy-manifests   regenerate deploy/kubernetes/prometheusrule.yaml from the mixin
#   make deploy-check       test everything under deploy/ (its own Go module)

DOCKER            ?= docker
DOCKER_REPO       ?= llmslo
DOCKER_IMAGE_NAME ?= llm-slo-exporter
DOCKER_IMAGE_TAG  ?= v$(VERSION)
DOCKER_ARCH       ?= amd64

# docker builds the exporter's image from the Dockerfile, with the same
# version ldflags as `make build`: the build context has no .git, so the
# revision, branch, user and date are passed as build arguments.
.PHONY: docker
docker:
	@command -v $(DOCKER) >/dev/null 2>&1 || { \
		echo "make docker: $(DOCKER) not found: building the image needs a container engine (Docker, or DOCKER=podman). Without one, make deploy-check still lints the Dockerfile." >&2; \
		exit 1; }
	@$(DOCKER) info >/dev/null 2>&1 || { \
		echo "make docker: $(DOCKER) cannot reach a container engine ($(DOCKER) info failed): start the Docker daemon, or build on a machine that has one." >&2; \
		exit 1; }
	$(DOCKER) build \
		--build-arg ARCH=$(DOCKER_ARCH) \
		--build-arg VERSION=$(VERSION) \
		--build-arg REVISION=$(REVISION) \
		--build-arg BRANCH=$(BRANCH) \
		--build-arg BUILD_USER=$(shell whoami)@$(shell hostname) \
		--build-arg BUILD_DATE=$(BUILDDATE) \
		-t "$(DOCKER_REPO)/$(DOCKER_IMAGE_NAME):$(DOCKER_IMAGE_TAG)" \
		.

# deploy-manifests regenerates the PrometheusRule of deploy/kubernetes from
# the mixin's generated rule files; deploy-check fails when it is stale.
.PHONY: deploy-manifests
deploy-manifests:
	cd deploy && $(GO) run ./cmd/genrule

# deploy-check vets and tests the deploy module: the kustomize render with
# strict decoding of every object, the compose file's references, the
# Dockerfile (BuildKit's linter, offline), the systemd unit (systemd-analyze
# verify where installed), --config.check of every configuration file with
# the exporter built here, and promtool check config of the compose demo's
# Prometheus with the mixin's rules. The Go modules it needs are pinned in
# deploy/go.mod, promtool in tools/go.mod.
.PHONY: deploy-check
deploy-check: $(BIN)/llm_slo_exporter $(PROMTOOL)
	cd deploy && $(GO) vet ./...
	cd deploy && LLMSLO_EXPORTER_BIN=$(abspath $(BIN)/llm_slo_exporter) PROMTOOL=$(abspath $(PROMTOOL)) \
		$(GO) test -count=1 ./...
