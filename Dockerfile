# Container image of llm_slo_exporter, built in two stages: a Go build stage
# compiles static binaries with the version ldflags of the Makefile, and a
# small busybox runtime (the base of blackbox_exporter's and node_exporter's
# images) runs them as nobody. `make docker` builds it; see deploy/README.md.
#
# The exporter re-executes itself as its worker processes, so the image needs
# nothing besides its own binary; /proc (read by the workers for schedstat)
# is mounted by every container runtime.

ARG GO_VERSION="1.26"
ARG ARCH="amd64"
ARG OS="linux"

FROM golang:${GO_VERSION} AS build
ARG ARCH
ARG OS
# Build metadata that the build context cannot tell: .git is not sent (see
# .dockerignore), so `make docker` passes them from the working tree.
ARG REVISION="unknown"
ARG BRANCH="unknown"
ARG BUILD_USER="docker"
ARG BUILD_DATE="unknown"
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ENV CGO_ENABLED=0 GOOS=${OS} GOARCH=${ARCH}
RUN VPKG=github.com/prometheus/common/version && \
    LDFLAGS="-X ${VPKG}.Version=$(cat VERSION) -X ${VPKG}.Revision=${REVISION} -X ${VPKG}.Branch=${BRANCH} -X ${VPKG}.BuildUser=${BUILD_USER} -X ${VPKG}.BuildDate=${BUILD_DATE}" && \
    mkdir -p /out && \
    go build -trimpath -ldflags "${LDFLAGS}" -o /out/llm_slo_exporter ./cmd/llm_slo_exporter && \
    go build -trimpath -ldflags "${LDFLAGS}" -o /out/llmsim ./cmd/llmsim

# llmsim, the bundled LLM endpoint simulator, as its own image for demos
# (deploy/compose); build it with `docker build --target llmsim .`.
FROM quay.io/prometheus/busybox-${OS}-${ARCH}:latest AS llmsim
ARG VERSION="unknown"
ARG REVISION="unknown"
LABEL maintainer="The llm_slo_exporter Authors" \
      org.opencontainers.image.title="llmsim" \
      org.opencontainers.image.description="OpenAI-compatible streaming LLM endpoint simulator with server-side truth" \
      org.opencontainers.image.source="https://github.com/llmslo/llm_slo_exporter" \
      org.opencontainers.image.url="https://github.com/llmslo/llm_slo_exporter" \
      org.opencontainers.image.documentation="https://github.com/llmslo/llm_slo_exporter/blob/main/simulator/README.md" \
      org.opencontainers.image.licenses="Apache-2.0" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}" \
      io.prometheus.image.variant="busybox"
COPY --from=build /out/llmsim /bin/llmsim
EXPOSE 8000
USER 65534:65534
ENTRYPOINT ["/bin/llmsim"]
CMD ["--listen-address=:8000"]

# The exporter: the last stage, so a plain `docker build .` produces it.
FROM quay.io/prometheus/busybox-${OS}-${ARCH}:latest
ARG VERSION="unknown"
ARG REVISION="unknown"
LABEL maintainer="The llm_slo_exporter Authors" \
      org.opencontainers.image.title="llm_slo_exporter" \
      org.opencontainers.image.description="Prometheus exporter that probes streaming LLM inference endpoints and exports their latency SLIs" \
      org.opencontainers.image.source="https://github.com/llmslo/llm_slo_exporter" \
      org.opencontainers.image.url="https://github.com/llmslo/llm_slo_exporter" \
      org.opencontainers.image.documentation="https://github.com/llmslo/llm_slo_exporter/blob/main/README.md" \
      org.opencontainers.image.licenses="Apache-2.0" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}" \
      io.prometheus.image.variant="busybox"
COPY --from=build /out/llm_slo_exporter /bin/llm_slo_exporter
COPY deploy/llm_slo_exporter.yml /etc/llm_slo_exporter/config.yml
EXPOSE 10240
# nobody, numeric so that Kubernetes' runAsNonRoot can verify it.
USER 65534:65534
ENTRYPOINT ["/bin/llm_slo_exporter"]
CMD ["--config.file=/etc/llm_slo_exporter/config.yml"]
