// Package daemon runs the long-lived binaries of the test harness (API
// server, etcd, Prometheus, ...): each logs to a file, is polled until it
// answers, and is stopped with its whole process group. It builds on proc,
// which guarantees that no child outlives the test.
package daemon

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"time"

	"github.com/extendeddaemonset/extendeddaemonset/test/internal/proc"
)

const (
	// startTimeout bounds each daemon's start-up even when the caller's
	// context has no deadline; an API server on a busy 2-core machine needs
	// well under a minute.
	startTimeout = 2 * time.Minute
	pollEvery    = 100 * time.Millisecond
	// TailLines is how much of a daemon's log an error message carries.
	TailLines = 30
)

// Spec describes a daemon to start.
type Spec struct {
	// Name identifies the daemon in errors.
	Name string
	// Path is the binary; Args its arguments.
	Path string
	Args []string
	// Env is added to the test's environment.
	Env []string
	// Dir is the working directory; empty means the test's.
	Dir string
	// LogPath receives the daemon's output. It is appended to, so a daemon
	// restarted on the same file keeps the log of its earlier runs.
	LogPath string
	// Logs, if set, receives the output too, e.g. a PrefixWriter shared by
	// several daemons.
	Logs io.Writer
}

// Daemon is a started binary.
type Daemon struct {
	name    string
	proc    *proc.Process
	logPath string
	logFile *os.File
}

// Start starts the binary of spec in its own process group.
func Start(spec Spec) (*Daemon, error) {
	logFile, err := os.OpenFile(spec.LogPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("creating log of %s: %w", spec.Name, err)
	}
	var out io.Writer = logFile
	if spec.Logs != nil {
		out = io.MultiWriter(logFile, spec.Logs)
	}
	cmd := exec.Command(spec.Path, spec.Args...)
	cmd.Dir = spec.Dir
	cmd.Env = append(os.Environ(), spec.Env...)
	cmd.Stdout, cmd.Stderr = out, out
	p, err := proc.Start(cmd)
	if err != nil {
		logFile.Close()
		return nil, err
	}
	return &Daemon{name: spec.Name, proc: p, logPath: spec.LogPath, logFile: logFile}, nil
}

// Name is Spec.Name.
func (d *Daemon) Name() string { return d.name }

// PID is the process ID, which is also its process group ID.
func (d *Daemon) PID() int { return d.proc.PID() }

// Exited reports whether the process has exited.
func (d *Daemon) Exited() bool { return d.proc.Exited() }

// LogPath is Spec.LogPath.
func (d *Daemon) LogPath() string { return d.logPath }

// WaitReady polls check until it succeeds, failing early with the end of the
// daemon's log when the daemon exits.
func (d *Daemon) WaitReady(ctx context.Context, check func(context.Context) error) error {
	ctx, cancel := context.WithTimeout(ctx, startTimeout)
	defer cancel()
	tick := time.NewTicker(pollEvery)
	defer tick.Stop()
	for {
		err := check(ctx)
		if err == nil {
			return nil
		}
		select {
		case <-d.proc.Done():
			exitErr := d.proc.Err()
			if exitErr == nil {
				exitErr = errors.New("exit status 0")
			}
			return fmt.Errorf("%s exited before it was ready (%w); end of its log:\n%s",
				d.name, exitErr, Tail(d.logPath, TailLines))
		case <-ctx.Done():
			return fmt.Errorf("%s not ready: %w (last check: %w); end of its log:\n%s",
				d.name, ctx.Err(), err, Tail(d.logPath, TailLines))
		case <-tick.C:
		}
	}
}

// Stop stops the process group, SIGKILLing it after grace, and closes the
// log. Safe to call more than once.
func (d *Daemon) Stop(grace time.Duration) error {
	err := d.proc.Stop(grace)
	if closeErr := d.logFile.Close(); closeErr != nil && !errors.Is(closeErr, os.ErrClosed) {
		err = errors.Join(err, closeErr)
	}
	if err != nil {
		return fmt.Errorf("stopping %s: %w", d.name, err)
	}
	return nil
}
