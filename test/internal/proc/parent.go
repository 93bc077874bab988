package proc

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// TerminateWithParent asks the kernel for SIGTERM when the parent dies.
// Under "go run", which does not forward SIGTERM, killing the go command
// would otherwise leave the caller, and whatever it owns, running.
func TerminateWithParent() error {
	if _, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, syscall.PR_SET_PDEATHSIG, uintptr(syscall.SIGTERM), 0); errno != 0 {
		return fmt.Errorf("setting the parent-death signal: %w", errno)
	}
	// The parent may have died before the request; we are then init's.
	if os.Getppid() == 1 {
		return errors.New("parent process already exited")
	}
	return nil
}
