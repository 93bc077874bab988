package simcluster

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"

	"github.com/extendeddaemonset/extendeddaemonset/test/harness"
	"github.com/extendeddaemonset/extendeddaemonset/test/internal/proc"
)

const (
	// startTimeout bounds each component's start-up even when the caller's
	// context has no deadline; an API server on a busy 2-core machine needs
	// well under a minute.
	startTimeout = 2 * time.Minute
	// stopGrace is how long a component may take to exit after SIGTERM.
	stopGrace = 10 * time.Second
	pollEvery = 100 * time.Millisecond
)

// component is one running binary of the cluster.
type component struct {
	name    string
	proc    *proc.Process
	logPath string
	logFile *os.File
}

// startComponent starts the binary name from the assets directory with args,
// followed by any extra arguments the caller gave for it, logging to
// LogDir/name.log and to opts.Logs.
func (c *Cluster) startComponent(name string, env []string, args ...string) (*component, error) {
	path, err := harness.AssetPath(name)
	if err != nil {
		return nil, err
	}
	logPath := filepath.Join(c.logDir, name+".log")
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, fmt.Errorf("creating log of %s: %w", name, err)
	}
	var out io.Writer = logFile
	if c.opts.Logs != nil {
		out = io.MultiWriter(logFile, &prefixWriter{mu: &c.logMu, w: c.opts.Logs, prefix: "[" + name + "] "})
	}
	cmd := exec.Command(path, append(args, c.opts.ExtraArgs[name]...)...)
	cmd.Dir = c.dir
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = out, out
	p, err := proc.Start(cmd)
	if err != nil {
		logFile.Close()
		return nil, err
	}
	return &component{name: name, proc: p, logPath: logPath, logFile: logFile}, nil
}

// waitReady polls check until it succeeds, failing early with the end of the
// component's log when the component exits.
func (comp *component) waitReady(ctx context.Context, check func(context.Context) error) error {
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
		case <-comp.proc.Done():
			exitErr := comp.proc.Err()
			if exitErr == nil {
				exitErr = errors.New("exit status 0")
			}
			return fmt.Errorf("%s exited before it was ready (%w); end of its log:\n%s",
				comp.name, exitErr, tail(comp.logPath, logTailLines))
		case <-ctx.Done():
			return fmt.Errorf("%s not ready: %w (last check: %w); end of its log:\n%s",
				comp.name, ctx.Err(), err, tail(comp.logPath, logTailLines))
		case <-tick.C:
		}
	}
}

func (comp *component) stop() error {
	err := comp.proc.Stop(stopGrace)
	if closeErr := comp.logFile.Close(); closeErr != nil && !errors.Is(closeErr, os.ErrClosed) {
		err = errors.Join(err, closeErr)
	}
	if err != nil {
		return fmt.Errorf("stopping %s: %w", comp.name, err)
	}
	return nil
}

// freePorts reserves n distinct free ports on 127.0.0.1. The listeners stay
// open until all are chosen so the kernel cannot hand out one port twice;
// another process may still take one before the component binds it.
func freePorts(n int) ([]string, error) {
	ports := make([]string, 0, n)
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("finding a free port: %w", err)
		}
		defer l.Close()
		ports = append(ports, strconv.Itoa(l.Addr().(*net.TCPAddr).Port))
	}
	return ports, nil
}
