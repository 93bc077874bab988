// Package proc runs child processes of the test harness so that none
// outlives its owner: each child leads its own process group, which is
// signalled as a whole, and the kernel kills the child if its parent dies
// without cleaning up. Linux only, like the binaries it runs.
package proc

import (
	"errors"
	"fmt"
	"os/exec"
	"syscall"
	"time"
)

// killWait bounds the wait after SIGKILL; a process that survives it is stuck
// in the kernel and there is nothing more to do.
const killWait = 5 * time.Second

// Process is a started child and its process group.
type Process struct {
	cmd  *exec.Cmd
	done chan struct{}
	err  error
}

// Start starts cmd as the leader of a new process group. The caller keeps
// ownership of cmd's I/O; Start only adds the process attributes.
func Start(cmd *exec.Cmd) (*Process, error) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	// A group of its own keeps the child out of the terminal's Ctrl-C and lets
	// Stop reach anything it forks; Pdeathsig covers a parent that is killed
	// before it can call Stop.
	cmd.SysProcAttr.Setpgid = true
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
	// A grandchild holding the output pipe open must not block Wait forever.
	cmd.WaitDelay = 2 * time.Second
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", cmd.Path, err)
	}
	p := &Process{cmd: cmd, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

// PID is the process ID, which is also its process group ID.
func (p *Process) PID() int { return p.cmd.Process.Pid }

// Done is closed once the process has exited and been reaped.
func (p *Process) Done() <-chan struct{} { return p.done }

// Err is the result of waiting for the process; valid once Done is closed.
func (p *Process) Err() error {
	<-p.done
	return p.err
}

// Exited reports whether the process has exited.
func (p *Process) Exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// Signal sends sig to the whole process group.
func (p *Process) Signal(sig syscall.Signal) error {
	if err := syscall.Kill(-p.PID(), sig); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("signalling process group %d: %w", p.PID(), err)
	}
	return nil
}

// Stop sends SIGTERM to the process group, then SIGKILL once grace has
// passed, and waits for the leader to exit. It always ends with a SIGKILL to
// the group so that nothing the leader forked survives it. Safe to call more
// than once and after the process has exited.
func (p *Process) Stop(grace time.Duration) error {
	if !p.Exited() {
		if err := p.Signal(syscall.SIGTERM); err != nil {
			return err
		}
		select {
		case <-p.done:
		case <-time.After(grace):
		}
	}
	if err := p.Signal(syscall.SIGKILL); err != nil {
		return err
	}
	select {
	case <-p.done:
		return nil
	case <-time.After(killWait):
		return fmt.Errorf("process %d did not exit after SIGKILL", p.PID())
	}
}
