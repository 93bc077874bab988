# Wrong places: queries' contents land in lib/, go.mod outside WORKDIR,
# no go.sum, an arm64-only file left out, a source that is not there, and
# an old Go.
FROM golang:1.26.3-alpine AS builder
WORKDIR /src
COPY go.mod /
COPY cmd/ cmd/
COPY lib/lib.go lib/
COPY lib/queries lib/
COPY docs/ docs/
RUN go build -o /manager ./cmd/manager
