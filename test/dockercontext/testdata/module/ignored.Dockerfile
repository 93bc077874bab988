FROM golang:1.27.0
WORKDIR /src
COPY . .
RUN go build -o /manager ./cmd/manager
