package proc

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Leftovers lists the live processes, other than the caller, that either
// carry the environment entry marker ("KEY=VALUE", inherited from a test
// that set it, so orphans reparented to init are found too) or run an
// executable from exeDir while descending from the caller. Tests use it to
// prove that a teardown left nothing behind.
func Leftovers(marker, exeDir string) ([]Leftover, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, fmt.Errorf("listing processes: %w", err)
	}
	self := os.Getpid()
	parents := map[int]int{}
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if ppid, ok := parentOf(pid); ok {
			parents[pid] = ppid
			pids = append(pids, pid)
		}
	}
	var found []Leftover
	for _, pid := range pids {
		if pid == self {
			continue
		}
		exe, _ := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid))
		inExeDir := exeDir != "" && exe != "" && filepath.Dir(exe) == filepath.Clean(exeDir)
		if hasEnv(pid, marker) || (inExeDir && descends(pid, self, parents)) {
			found = append(found, Leftover{PID: pid, Command: command(pid, exe)})
		}
	}
	return found, nil
}

// parentOf reads the parent PID from /proc/PID/stat; the command name there
// may hold spaces and parentheses, so fields are counted from the last ')'.
func parentOf(pid int) (int, bool) {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, false
	}
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, false
	}
	fields := strings.Fields(string(stat[i+1:]))
	if len(fields) < 2 || fields[0] == "Z" {
		return 0, false
	}
	ppid, err := strconv.Atoi(fields[1])
	return ppid, err == nil
}

func descends(pid, ancestor int, parents map[int]int) bool {
	for seen := 0; pid > 1 && seen < len(parents); seen++ {
		if pid == ancestor {
			return true
		}
		pid = parents[pid]
	}
	return false
}

func hasEnv(pid int, marker string) bool {
	if marker == "" {
		return false
	}
	env, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
	if err != nil {
		return false
	}
	for _, kv := range bytes.Split(env, []byte{0}) {
		if string(kv) == marker {
			return true
		}
	}
	return false
}

// Leftover is a process found by Leftovers.
type Leftover struct {
	PID     int
	Command string
}

func (l Leftover) String() string { return fmt.Sprintf("pid %d: %s", l.PID, l.Command) }

func command(pid int, exe string) string {
	cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if args := strings.TrimSpace(strings.ReplaceAll(string(cmdline), "\x00", " ")); args != "" {
		return args
	}
	return exe
}

// Kill sends SIGKILL to each leftover, so that a failed test does not leave
// its processes to the next one.
func Kill(leftovers []Leftover) {
	for _, l := range leftovers {
		_ = syscall.Kill(l.PID, syscall.SIGKILL)
	}
}

// MarkerEnv is the environment variable that Mark sets.
const MarkerEnv = "HARNESS_PROCESS_MARKER"

// Mark sets a marker unique to this process in its environment, inherited by
// every child started afterwards, and returns it for Leftovers.
func Mark() string {
	value := fmt.Sprintf("%d-%d", os.Getpid(), time.Now().UnixNano())
	if err := os.Setenv(MarkerEnv, value); err != nil {
		panic(fmt.Sprintf("proc: setting %s: %v", MarkerEnv, err))
	}
	return MarkerEnv + "=" + value
}
