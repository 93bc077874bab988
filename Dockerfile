# Build the manager in a Go image on the build machine's own platform,
# cross-compiled for the target's, and run it on a distroless static base as
# a non-root user. The manager writes nothing to its filesystem, so the
# Deployment runs it with a read-only root filesystem.
#
# `go run ./test/dockercontext` (part of `make verify`) checks that the COPY
# lines below and .dockerignore bring in every file `go build ./cmd/manager`
# reads, and that the golang tag is go.mod's Go version.
FROM --platform=$BUILDPLATFORM golang:1.27.0 AS builder
ARG TARGETOS TARGETARCH
WORKDIR /src
# The modules first: this layer stays cached until go.mod or go.sum change.
COPY go.mod go.sum ./
RUN go mod download
COPY analysis/ analysis/
COPY api/ api/
COPY cmd/ cmd/
COPY controllers/ controllers/
# Declared after the downloads so that a new version rebuilds only the binary.
ARG VERSION COMMIT DATE
RUN --mount=type=cache,target=/root/.cache/go-build \
	pkg=github.com/extendeddaemonset/extendeddaemonset/cmd/internal/version && \
	CGO_ENABLED=0 GOOS=$TARGETOS GOARCH=$TARGETARCH go build -trimpath \
	-ldflags "-s -w -X $pkg.version=$VERSION -X $pkg.commit=$COMMIT -X $pkg.date=$DATE" \
	-o /manager ./cmd/manager

FROM gcr.io/distroless/static:nonroot
ARG VERSION COMMIT
LABEL org.opencontainers.image.source="https://github.com/extendeddaemonset/extendeddaemonset" \
	org.opencontainers.image.licenses="Apache-2.0" \
	org.opencontainers.image.version="$VERSION" \
	org.opencontainers.image.revision="$COMMIT"
COPY --from=builder /manager /manager
USER 65532:65532
ENTRYPOINT ["/manager"]
