package inspect

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/extendeddaemonset/extendeddaemonset/cmd/kubectl-eds/internal/cli"
)

// pollInterval is how often a watched rollout is read again: often enough
// to follow it, rarely enough that a few watchers cost the API server
// nothing.
const pollInterval = time.Second

// readGrace is how much longer than --timeout a read may take.
const readGrace = 10 * time.Second

// clearScreen moves a terminal's cursor home and clears the screen.
const clearScreen = "\x1b[H\x1b[2J"

// watch reads the rollout every pollInterval until it ends or timeout
// (when not 0) elapses, showing each change.
func (s *statusRun) watch(ctx context.Context, timeout time.Duration) error {
	var expired <-chan time.Time
	reads := ctx
	if timeout > 0 {
		timer := time.NewTimer(timeout)
		defer timer.Stop()
		expired = timer.C
		// The reads get a little longer than the watch, so that one cut
		// short by the timeout is not taken for a failure: the timer tells
		// the timeout, and a read that hangs still ends.
		var cancel context.CancelFunc
		reads, cancel = context.WithTimeout(ctx, timeout+readGrace)
		defer cancel()
	}
	deadline := time.Now().Add(timeout)
	ticker := time.NewTicker(pollInterval)
	defer ticker.Stop()
	var last *snapshot
	var shown, lastWarning string
	for {
		snap, err := takeSnapshot(reads, s.c, s.key)
		switch {
		case err != nil && timeout > 0 && !time.Now().Before(deadline):
			return s.timedOut(last, timeout)
		case err != nil && ctx.Err() != nil:
			return ctx.Err()
		case err != nil && last != nil && transient(err):
			// A watch may last many minutes; one failed read must not end
			// it. The first read fails at once: a wrong name or missing
			// permission will not mend.
			if err.Error() != lastWarning {
				fmt.Fprintf(s.errOut, "warning: %v; retrying\n", err)
				lastWarning = err.Error()
			}
		case err != nil:
			return err
		default:
			last = snap
			if shown, err = s.show(snap, shown); err != nil {
				return err
			}
			if v := judge(snap.eds); v.outcome != inProgress {
				return s.ended(snap, v)
			}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-expired:
			return s.timedOut(last, timeout)
		case <-ticker.C:
		}
	}
}

// show writes what changed since shown (what was last written) and
// returns what it wrote: the whole status over the screen of a terminal,
// else a summary line.
func (s *statusRun) show(snap *snapshot, shown string) (string, error) {
	var b bytes.Buffer
	if s.terminal {
		if err := writeReport(&b, snap, true); err != nil {
			return shown, err
		}
	} else {
		b.WriteString(summary(snap) + "\n")
	}
	if b.String() == shown {
		return shown, nil
	}
	text := b.String()
	if s.terminal {
		b.Reset()
		b.WriteString(clearScreen + text)
	}
	if _, err := s.out.Write(b.Bytes()); err != nil {
		return shown, fmt.Errorf("writing the status: %w", err)
	}
	return text, nil
}

// ended closes a watch whose rollout ended: the full status once more
// where a terminal does not show it already, and the exit code.
func (s *statusRun) ended(snap *snapshot, v verdict) error {
	if !s.terminal {
		if err := s.writeFinal(snap); err != nil {
			return err
		}
	}
	if v.outcome == failed {
		return s.failure(v)
	}
	return nil
}

// timedOut closes a watch that ran out of time, with the status last read.
func (s *statusRun) timedOut(last *snapshot, timeout time.Duration) error {
	why := "not read yet"
	if last != nil {
		if !s.terminal {
			if err := s.writeFinal(last); err != nil {
				return err
			}
		}
		why = judge(last.eds).why
	}
	return &cli.ExitError{Code: cli.ExitTimeout,
		Err: fmt.Errorf("ExtendedDaemonSet %s still in progress after %s: %s", s.key, timeout, why)}
}

func (s *statusRun) writeFinal(snap *snapshot) error {
	if _, err := fmt.Fprintln(s.out); err != nil {
		return fmt.Errorf("writing the status: %w", err)
	}
	return writeReport(s.out, snap, false)
}

// transient says err may pass by itself: the API server busy, restarting
// or out of reach for a moment.
func transient(err error) bool {
	var netErr net.Error
	return apierrors.IsServerTimeout(err) || apierrors.IsTimeout(err) || apierrors.IsTooManyRequests(err) ||
		apierrors.IsServiceUnavailable(err) || apierrors.IsInternalError(err) || errors.As(err, &netErr)
}
