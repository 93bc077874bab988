// Package managerproc runs cmd/manager as a subprocess, as its Deployment's
// pod runs it: its own process, its own kubeconfig, restarted when it exits
// by itself. The chaos suite kills it; the benchmarks measure it from
// outside, by its pid and its metrics endpoint.
package managerproc

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/extendeddaemonset/extendeddaemonset/test/harness/testenv"
	"github.com/extendeddaemonset/extendeddaemonset/test/internal/daemon"
	"github.com/extendeddaemonset/extendeddaemonset/test/internal/proc"
)

const (
	// restartDelay is how long a manager that exited by itself stays down,
	// as a kubelet's first back-off before it restarts a container.
	restartDelay = time.Second
	// stopGrace is the manager's terminationGracePeriodSeconds in
	// config/manager.
	stopGrace = 10 * time.Second
)

// Options configures a manager subprocess.
type Options struct {
	// Name tells managers apart in logs and errors.
	Name string
	// Binary is the manager built from cmd/manager.
	Binary string
	// Kubeconfig is the manager's only way to the API server, as
	// KUBECONFIG.
	Kubeconfig string
	// LogPath receives the output of every process the manager runs, each
	// start marked by a line of its own.
	LogPath string
	// LeaderElectionNamespace, when set, turns leader election on with the
	// lease in that namespace; empty runs the manager without it.
	LeaderElectionNamespace string
	// Args are added to the flags every process gets: its own free ports
	// for metrics and probes, and the leader election above.
	Args []string
	// Env is added to the environment the manager inherits (KEY=VALUE),
	// for what the Go runtime reads there, such as GOMEMLIMIT.
	Env []string
}

// Manager is cmd/manager run as a subprocess, restarted when it exits by
// itself, as its Deployment's pod would be. Kill is the only way it goes
// down without coming back by itself.
type Manager struct {
	opts Options

	mu      sync.Mutex
	current *proc.Process
	// metricsAddr is where current serves its metrics.
	metricsAddr string
	starts      int
	exits       []string
	// down is set while the manager is killed or stopped on purpose.
	down bool
}

// Build builds cmd/manager into binary.
func Build(ctx context.Context, binary string) error {
	build := exec.CommandContext(ctx, "go", "build", "-o", binary, "./cmd/manager")
	build.Dir = testenv.RepoRoot()
	if out, err := build.CombinedOutput(); err != nil {
		return fmt.Errorf("building the manager: %w\n%s", err, out)
	}
	return nil
}

// Start starts a manager and returns once its probe endpoint answers,
// which says the process runs, not that it leads.
func Start(ctx context.Context, opts Options) (*Manager, error) {
	m := &Manager{opts: opts}
	if err := m.Start(ctx); err != nil {
		return nil, errors.Join(err, m.Stop())
	}
	return m, nil
}

// Start starts a new process after Kill, and waits for its probe
// endpoint.
func (m *Manager) Start(ctx context.Context) error {
	m.mu.Lock()
	m.down = false
	p, probe, err := m.startLocked()
	m.mu.Unlock()
	if err != nil {
		return err
	}
	ready := daemon.HTTPOK(http.DefaultClient, probe)
	for {
		err := ready(ctx)
		if err == nil {
			return nil
		}
		select {
		case <-p.Done():
			return fmt.Errorf("manager %s exited before it was ready (%w); end of its log:\n%s",
				m.opts.Name, p.Err(), daemon.Tail(m.opts.LogPath, daemon.TailLines))
		case <-ctx.Done():
			return fmt.Errorf("manager %s not ready: %w (last check: %w)", m.opts.Name, ctx.Err(), err)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// startLocked starts a process with m.mu held, and the goroutine that
// restarts it when it exits by itself.
func (m *Manager) startLocked() (*proc.Process, string, error) {
	ports, err := daemon.FreePorts(2)
	if err != nil {
		return nil, "", err
	}
	log, err := os.OpenFile(m.opts.LogPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, "", fmt.Errorf("opening the log of manager %s: %w", m.opts.Name, err)
	}
	m.starts++
	fmt.Fprintf(log, "==== %s start %d at %s ====\n", m.opts.Name, m.starts, time.Now().Format(time.RFC3339Nano))
	metricsAddr := "127.0.0.1:" + ports[0]
	args := []string{
		"--metrics-bind-address=" + metricsAddr,
		"--health-probe-bind-address=127.0.0.1:" + ports[1],
	}
	if ns := m.opts.LeaderElectionNamespace; ns != "" {
		args = append(args, "--enable-leader-election", "--leader-election-namespace="+ns)
	}
	cmd := exec.Command(m.opts.Binary, append(args, m.opts.Args...)...)
	cmd.Env = append(append(os.Environ(), m.opts.Env...), "KUBECONFIG="+m.opts.Kubeconfig)
	cmd.Stdout, cmd.Stderr = log, log
	p, err := proc.Start(cmd)
	// The child holds its own descriptor.
	log.Close()
	if err != nil {
		return nil, "", err
	}
	m.current, m.metricsAddr = p, metricsAddr
	go m.restartOnExit(p)
	return p, "http://127.0.0.1:" + ports[1] + "/readyz", nil
}

// restartOnExit restarts the manager once p exits, unless p was killed or
// stopped on purpose or replaced meanwhile.
func (m *Manager) restartOnExit(p *proc.Process) {
	<-p.Done()
	m.mu.Lock()
	if m.down || m.current != p {
		m.mu.Unlock()
		return
	}
	m.current = nil
	m.exits = append(m.exits, fmt.Sprintf("%s exited by itself at %s: %v", m.opts.Name, time.Now().Format("15:04:05.000"), p.Err()))
	m.mu.Unlock()
	time.Sleep(restartDelay)
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.down || m.current != nil {
		return
	}
	if _, _, err := m.startLocked(); err != nil {
		m.exits = append(m.exits, fmt.Sprintf("%s not restarted: %v", m.opts.Name, err))
	}
}

// Kill SIGKILLs the running process, leaving no chance to release its
// lease or finish a write, and waits until it is gone. The manager stays
// down until Start.
func (m *Manager) Kill() error {
	p := m.takeDown()
	if p == nil {
		return nil
	}
	if err := p.Signal(syscall.SIGKILL); err != nil {
		return err
	}
	<-p.Done()
	return nil
}

// takeDown marks the manager down, so that nothing restarts it, and hands
// over its running process, nil when none.
func (m *Manager) takeDown() *proc.Process {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.down = true
	p := m.current
	m.current = nil
	return p
}

// Stop stops the manager as Kubernetes stops a pod: SIGTERM, which
// releases its lease, then SIGKILL after the grace period.
func (m *Manager) Stop() error {
	p := m.takeDown()
	if p == nil {
		return nil
	}
	return p.Stop(stopGrace)
}

// Exits lists the times the manager exited by itself.
func (m *Manager) Exits() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.exits)
}

// PID is the running process's ID, 0 while the manager is down.
func (m *Manager) PID() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.current == nil {
		return 0
	}
	return m.current.PID()
}

// MetricsAddress is host:port of the running process's metrics endpoint,
// served over HTTPS unless the manager got --metrics-secure=false. A
// restarted process serves on another port.
func (m *Manager) MetricsAddress() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.metricsAddr
}

// LogPath is where the manager's processes log.
func (m *Manager) LogPath() string { return m.opts.LogPath }

// Forbidden returns the log lines of requests the API server refused for
// lack of a grant: most such refusals (a watch, an event) are logged and
// retried, never returned.
func (m *Manager) Forbidden() ([]string, error) {
	f, err := os.Open(m.opts.LogPath)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var lines []string
	scanner := bufio.NewScanner(f)
	scanner.Buffer(nil, 1<<20)
	for scanner.Scan() {
		if line := scanner.Text(); strings.Contains(line, "is forbidden") {
			lines = append(lines, line)
		}
	}
	return lines, scanner.Err()
}
