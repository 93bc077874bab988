// Package prometheus runs a real Prometheus server for the tests, built by
// test/tools/testbin.sh into the assets directory next to the control-plane
// binaries. It scrapes a fixed list of targets and can be stopped and
// started again on the same port and data, as an outage would.
package prometheus

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/prometheus/client_golang/api"
	v1 "github.com/prometheus/client_golang/api/prometheus/v1"

	"github.com/extendeddaemonset/extendeddaemonset/test/harness/testenv"
	"github.com/extendeddaemonset/extendeddaemonset/test/internal/daemon"
)

const (
	binary = "prometheus"
	// stopGrace lets Prometheus close its TSDB cleanly, which keeps restarts
	// from replaying a torn write-ahead log.
	stopGrace = 10 * time.Second
	// DefaultScrapeInterval is the scrape and rule evaluation interval when
	// Options leaves it zero.
	DefaultScrapeInterval = time.Second
)

var readyClient = &http.Client{Timeout: 2 * time.Second}

// Options configures Start.
type Options struct {
	// ScrapeInterval is the global scrape and evaluation interval; zero means
	// DefaultScrapeInterval. Whole milliseconds only.
	ScrapeInterval time.Duration
	// Targets are the host:port addresses of the /metrics endpoints scraped,
	// all in one job whose labels the targets' own win over.
	Targets []string
	// Dir holds the configuration, the TSDB and the log, and is created if
	// missing; it stays after Close. Empty means a new temporary directory,
	// removed by Close.
	Dir string
	// Logs, if set, receives Prometheus's output too, each line prefixed with
	// "[prometheus] ".
	Logs io.Writer
}

// Server is a Prometheus server. Its methods are safe for concurrent use.
type Server struct {
	dir, ownedDir string
	port          string
	logs          io.Writer

	logMu  sync.Mutex // serializes the lines of successive runs in logs
	mu     sync.Mutex
	daemon *daemon.Daemon // nil while stopped
}

// Start writes the configuration, starts Prometheus on a free 127.0.0.1 port
// and returns once it reports ready. ctx bounds the start-up only. On error
// nothing is left running.
func Start(ctx context.Context, opts Options) (*Server, error) {
	s, err := newServer(opts)
	if err != nil {
		return nil, err
	}
	if err := s.Start(ctx); err != nil {
		return nil, errors.Join(err, s.Close())
	}
	return s, nil
}

func newServer(opts Options) (*Server, error) {
	s := &Server{dir: opts.Dir, logs: opts.Logs}
	if s.dir == "" {
		dir, err := os.MkdirTemp("", "prometheus-")
		if err != nil {
			return nil, fmt.Errorf("creating Prometheus directory: %w", err)
		}
		s.dir, s.ownedDir = dir, dir
	} else if err := os.MkdirAll(s.dir, 0o755); err != nil {
		return nil, fmt.Errorf("creating Prometheus directory: %w", err)
	}
	if err := writeConfig(s.configPath(), opts); err != nil {
		return nil, errors.Join(err, s.Close())
	}
	ports, err := daemon.FreePorts(1)
	if err != nil {
		return nil, errors.Join(err, s.Close())
	}
	s.port = ports[0]
	return s, nil
}

// Start starts a stopped server again on the same port, configuration and
// data, and waits until it is ready. It is a no-op on a running server; a
// server whose process died is started afresh.
func (s *Server) Start(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.daemon != nil {
		if !s.daemon.Exited() {
			return nil
		}
		if err := s.daemon.Stop(stopGrace); err != nil {
			return err
		}
		s.daemon = nil
	}
	path, err := testenv.AssetPath(binary)
	if err != nil {
		return err
	}
	spec := daemon.Spec{
		Name: binary,
		Path: path,
		Args: []string{
			"--config.file=" + s.configPath(),
			"--storage.tsdb.path=" + filepath.Join(s.dir, "data"),
			"--web.listen-address=" + s.Addr(),
		},
		Dir:     s.dir,
		LogPath: s.LogPath(),
	}
	if s.logs != nil {
		spec.Logs = daemon.NewPrefixWriter(&s.logMu, s.logs, "["+binary+"] ")
	}
	d, err := daemon.Start(spec)
	if err != nil {
		return err
	}
	if err := d.WaitReady(ctx, daemon.HTTPOK(readyClient, s.URL()+"/-/ready")); err != nil {
		return errors.Join(err, d.Stop(stopGrace))
	}
	s.daemon = d
	return nil
}

// Stop stops Prometheus and waits until its process is gone and its port
// free; the data stays for Start. Safe to call on a stopped server.
func (s *Server) Stop() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.daemon == nil {
		return nil
	}
	err := s.daemon.Stop(stopGrace)
	s.daemon = nil
	return err
}

// Close stops Prometheus and removes the directory Start created; a
// directory given in Options.Dir stays.
func (s *Server) Close() error {
	err := s.Stop()
	if s.ownedDir != "" {
		if rmErr := os.RemoveAll(s.ownedDir); rmErr != nil {
			err = errors.Join(err, fmt.Errorf("removing Prometheus directory: %w", rmErr))
		}
	}
	return err
}

// Addr is the host:port Prometheus listens on, also while stopped.
func (s *Server) Addr() string { return net.JoinHostPort("127.0.0.1", s.port) }

// URL is the base URL of the HTTP API.
func (s *Server) URL() string { return "http://" + s.Addr() }

// API returns a client of the query API.
func (s *Server) API() (v1.API, error) {
	client, err := api.NewClient(api.Config{Address: s.URL()})
	if err != nil {
		return nil, fmt.Errorf("creating Prometheus client: %w", err)
	}
	return v1.NewAPI(client), nil
}

// Dir holds the configuration, the data and the log.
func (s *Server) Dir() string { return s.dir }

// LogPath is Prometheus's log; every run appends to it.
func (s *Server) LogPath() string { return filepath.Join(s.dir, binary+".log") }

// DumpLogs writes the last lines of the log to w, for a test that failed.
// Call it before Close when the directory is temporary.
func (s *Server) DumpLogs(w io.Writer, lines int) {
	fmt.Fprintf(w, "==== %s (%s) ====\n%s\n", binary, s.LogPath(), daemon.Tail(s.LogPath(), lines))
}

// pid is the running process, or 0 while stopped.
func (s *Server) pid() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.daemon == nil {
		return 0
	}
	return s.daemon.PID()
}

func (s *Server) configPath() string { return filepath.Join(s.dir, "prometheus.yml") }
