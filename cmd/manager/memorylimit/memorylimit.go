// Package memorylimit sets the manager's soft memory limit (the Go
// runtime's GOMEMLIMIT) from its container's memory limit, leaving room
// for the memory the runtime does not count.
//
// Without a soft limit the Go heap grows to about twice what is live
// before it is collected, and the runtime keeps what it freed for a while:
// on a large cluster most of the manager's resident memory is that
// headroom. With one, the runtime collects harder, and returns freed
// memory sooner, as it nears the limit. But the limit counts only the Go
// runtime's own memory, not the pages of the manager's binary the kernel
// maps (its text and read-only data, about 44 MiB resident whatever the
// cluster's size), which the container's limit counts too: a soft limit
// equal to the container's would let the process reach the container's
// limit with the binary's pages on top.
package memorylimit

import (
	"fmt"
	"os"
	"runtime/debug"

	"github.com/KimMachineGun/automemlimit/memlimit"
)

// DefaultRatio is the part of the container's memory limit given to the Go
// runtime. Measured at 5,000 nodes (one agent), the Go runtime's memory
// peaks near twice its live heap, 2 x 52 MiB, and the binary's pages add
// 44 MiB: at the container limit that holds both, 150 MiB, the binary's
// pages are 30% of it. A larger container limit leaves more room than the
// binary needs; a smaller one would have the kernel drop and re-read the
// binary's pages.
const DefaultRatio = 0.7

// envGOMEMLIMIT, when set, is the user's own soft limit: the runtime has
// read it at start, and it wins over the container's limit.
const envGOMEMLIMIT = "GOMEMLIMIT"

// Source is where the soft limit in force came from.
type Source string

const (
	// FromEnvironment is the user's GOMEMLIMIT.
	FromEnvironment Source = envGOMEMLIMIT
	// FromContainer is a part of the container's memory limit.
	FromContainer Source = "container"
	// NoLimit is none: no GOMEMLIMIT and no container limit.
	NoLimit Source = "none"
)

// Limit is the soft memory limit in force once Set has run.
type Limit struct {
	Source Source
	// Bytes is the Go runtime's soft limit, math.MaxInt64 for none.
	Bytes int64
	// Container is the container's memory limit, 0 when none was read.
	Container uint64
}

// CheckRatio refuses a ratio that is not a part of the container's limit.
func CheckRatio(ratio float64) error {
	if ratio > 0 && ratio <= 1 {
		return nil
	}
	return fmt.Errorf("memory limit ratio %v: want the part of the container's memory limit the Go runtime may use, more than 0 and at most 1", ratio)
}

// Set gives the Go runtime ratio of the memory limit containerLimit reads
// (memlimit.FromCgroup: cgroup v2's memory.max, or v1's
// memory.limit_in_bytes, the most restrictive of the hierarchy), unless
// GOMEMLIMIT is set. With no container limit, or when it cannot be read,
// the runtime's limit is left as it is; the error says why it could not
// be read.
func Set(ratio float64, containerLimit memlimit.Provider) (Limit, error) {
	if err := CheckRatio(ratio); err != nil {
		return Limit{}, err
	}
	if _, ok := os.LookupEnv(envGOMEMLIMIT); ok {
		return Limit{Source: FromEnvironment, Bytes: debug.SetMemoryLimit(-1)}, nil
	}
	var container uint64
	read := func() (uint64, error) {
		limit, err := containerLimit()
		container = limit
		return limit, err
	}
	bytes, err := memlimit.SetGoMemLimitWithOpts(memlimit.WithRatio(ratio), memlimit.WithProvider(read))
	switch {
	case err != nil:
		return Limit{Source: NoLimit, Bytes: debug.SetMemoryLimit(-1)}, fmt.Errorf("reading the container's memory limit: %w", err)
	case bytes == 0: // no container limit
		return Limit{Source: NoLimit, Bytes: debug.SetMemoryLimit(-1)}, nil
	}
	return Limit{Source: FromContainer, Bytes: bytes, Container: container}, nil
}
