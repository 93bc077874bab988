# Build the manager in a Go image, run it on a distroless static base as a
# non-root user.
FROM golang:1.27 AS builder
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY api/ api/
COPY cmd/ cmd/
COPY controllers/ controllers/
RUN CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o /manager ./cmd/manager

FROM gcr.io/distroless/static:nonroot
COPY --from=builder /manager /manager
USER 65532:65532
ENTRYPOINT ["/manager"]
