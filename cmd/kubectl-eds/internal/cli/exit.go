package cli

import (
	"errors"
	"fmt"
)

// Exit codes of kubectl-eds. A pipeline that waits on `kubectl eds status
// --watch` tells a failed rollout from one that ran out of time.
const (
	ExitOK = 0
	// ExitFailed: the command failed, or the rollout it watched failed
	// (canary failed, Stalled).
	ExitFailed = 1
	// ExitTimeout: the rollout was still in progress at --timeout.
	ExitTimeout = 2
)

// ExitError ends the command with Code after printing its message, when it
// has one.
type ExitError struct {
	Code int
	Err  error
}

func (e *ExitError) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("exit code %d", e.Code)
	}
	return e.Err.Error()
}

func (e *ExitError) Unwrap() error { return e.Err }

// ExitCode is the process exit code for err: ExitOK for nil, the code of
// an ExitError, ExitFailed for any other error.
func ExitCode(err error) int {
	if err == nil {
		return ExitOK
	}
	var exit *ExitError
	if errors.As(err, &exit) {
		return exit.Code
	}
	return ExitFailed
}
