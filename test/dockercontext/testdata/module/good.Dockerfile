FROM --platform=$BUILDPLATFORM golang:1.27.0 AS builder
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY ["cmd", "cmd/"]
COPY lib/ lib/
RUN CGO_ENABLED=0 go build \
	-o /manager ./cmd/manager

FROM scratch
COPY --from=builder /manager /manager
