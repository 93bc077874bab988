// Package metricsserver serves one collector at /metrics over HTTP on a
// loopback port, the part the test exporters share.
package metricsserver

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// DefaultAddr listens on a free loopback port.
const DefaultAddr = "127.0.0.1:0"

// shutdownTimeout bounds Close; a scrape in flight is a few milliseconds.
const shutdownTimeout = 5 * time.Second

// Server is a running /metrics endpoint.
type Server struct {
	listener net.Listener
	srv      *http.Server
	done     chan error

	closeOnce sync.Once
	closeErr  error
}

// Start listens on addr (empty means DefaultAddr) and serves c alone: no Go
// or process metrics, so a scrape holds exactly what the test controls. A
// collector that fails makes the scrape fail with HTTP 500, which Prometheus
// records as the target being down.
func Start(addr string, c prometheus.Collector) (*Server, error) {
	if addr == "" {
		addr = DefaultAddr
	}
	reg := prometheus.NewPedanticRegistry()
	if err := reg.Register(c); err != nil {
		return nil, fmt.Errorf("registering collector: %w", err)
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listening on %s: %w", addr, err)
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	s := &Server{
		listener: l,
		srv:      &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second},
		done:     make(chan error, 1),
	}
	go func() { s.done <- s.srv.Serve(l) }()
	return s, nil
}

// Addr is the host:port served.
func (s *Server) Addr() string { return s.listener.Addr().String() }

// Close stops serving and waits for the scrapes in flight. Safe to call more
// than once.
func (s *Server) Close() error {
	s.closeOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
		defer cancel()
		err := s.srv.Shutdown(ctx)
		if serveErr := <-s.done; !errors.Is(serveErr, http.ErrServerClosed) {
			err = errors.Join(err, serveErr)
		}
		if err != nil {
			s.closeErr = fmt.Errorf("stopping metrics server on %s: %w", s.Addr(), err)
		}
	})
	return s.closeErr
}
