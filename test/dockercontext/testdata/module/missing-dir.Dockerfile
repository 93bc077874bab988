FROM golang:1.27 AS builder
WORKDIR /src
COPY go.mod go.sum ./
COPY cmd/ cmd/
RUN go build -o /manager ./cmd/manager
