package bench

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// clockTicks is USER_HZ, the unit of /proc/<pid>/stat times: 100 on every
// Linux architecture Go runs on.
const clockTicks = 100

// cpuSeconds is the user and system time the process has used, all its
// threads included.
func cpuSeconds(pid int) (float64, error) {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, fmt.Errorf("reading CPU time of process %d: %w", pid, err)
	}
	// The command name, in parentheses, may hold spaces: fields are counted
	// after its closing parenthesis, where field 3 (state) starts.
	end := bytes.LastIndexByte(raw, ')')
	if end < 0 {
		return 0, fmt.Errorf("process %d: malformed stat %q", pid, raw)
	}
	fields := strings.Fields(string(raw[end+1:]))
	const utime, stime = 14 - 3, 15 - 3
	if len(fields) <= stime {
		return 0, fmt.Errorf("process %d: stat has %d fields", pid, len(fields)+2)
	}
	var ticks float64
	for _, f := range []string{fields[utime], fields[stime]} {
		n, err := strconv.ParseUint(f, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("process %d: stat time %q: %w", pid, f, err)
		}
		ticks += float64(n)
	}
	return ticks / clockTicks, nil
}

// peakRSSBytes is the process's resident set high-water mark (VmHWM).
func peakRSSBytes(pid int) (float64, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, fmt.Errorf("reading peak RSS of process %d: %w", pid, err)
	}
	defer f.Close()
	scanner := bufio.NewScanner(f)
	for scanner.Scan() {
		rest, ok := strings.CutPrefix(scanner.Text(), "VmHWM:")
		if !ok {
			continue
		}
		kb, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 64)
		if err != nil {
			return 0, fmt.Errorf("process %d: VmHWM %q: %w", pid, rest, err)
		}
		return kb * 1024, nil
	}
	if err := scanner.Err(); err != nil {
		return 0, fmt.Errorf("reading peak RSS of process %d: %w", pid, err)
	}
	return 0, fmt.Errorf("process %d: no VmHWM in its status", pid)
}

// resetPeakRSS sets the process's high-water mark back to its current
// RSS, so that the peak read at the end of a scenario is the scenario's,
// not that of an earlier one.
func resetPeakRSS(pid int) error {
	if err := os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", pid), []byte("5"), 0); err != nil {
		return fmt.Errorf("resetting peak RSS of process %d: %w", pid, err)
	}
	return nil
}
