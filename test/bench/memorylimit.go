package bench

import (
	"fmt"
	"slices"
	"strings"

	"github.com/extendeddaemonset/extendeddaemonset/cmd/manager/memorylimit"
)

const (
	kib = int64(1) << 10
	mib = int64(1) << 20
)

// recommendedMemoryLimit is the container memory limit README's Scale
// section recommends for a cluster of nodes nodes running one agent:
// max(147 MiB, 29 MiB + 18 KiB per node). The manager's Go memory peaks near
// twice its live heap, about 10 MiB of its own plus 6.1 KiB per node (3.7
// of cache, 1.0 of the views its passes keep, 1.4 a full pass allocates),
// and its soft limit is 70% of the container's: 2 x (10 MiB + 6.1 KiB per
// node) / 0.7. The other 30% holds the binary's 44 MiB of pages, which
// needs at least 147 MiB.
func recommendedMemoryLimit(nodes int) int64 {
	return max(147*mib, 29*mib+18*kib*int64(nodes))
}

// softMemoryLimitEnv is the GOMEMLIMIT our manager gives itself in a
// container of the recommended limit for nodes nodes. The benchmark runs it
// as a process, outside any cgroup, where it would set none: the
// environment gives it the one its Deployment would have.
func softMemoryLimitEnv(nodes int) string {
	soft := int64(memorylimit.DefaultRatio * float64(recommendedMemoryLimit(nodes)))
	return fmt.Sprintf("GOMEMLIMIT=%dMiB", soft/mib)
}

// withSoftMemoryLimit adds the soft limit of nodes nodes to env, unless env
// sets GOMEMLIMIT itself (GOMEMLIMIT=off runs the manager without one).
func withSoftMemoryLimit(env []string, nodes int) []string {
	if slices.ContainsFunc(env, func(kv string) bool { return strings.HasPrefix(kv, "GOMEMLIMIT=") }) {
		return env
	}
	return append(env, softMemoryLimitEnv(nodes))
}
