package bench

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/extendeddaemonset/extendeddaemonset/test/harness/testenv"
)

// config is what a benchmark runs; the BENCH_* variables set it.
type config struct {
	nodes int
	// qps are the client rate limits compared, one full comparison each;
	// bursts[i] and reps[i] go with qps[i].
	qps, bursts, reps []int
	scenarios         []scenario
	// peers are the controllers ours is compared with, in the table's
	// order: native, kruise or both.
	peers []string
	// kruiseDir holds OpenKruise's manager and its Advanced DaemonSet CRD,
	// as test/tools/kruise.sh builds them, when kruise is a peer.
	kruiseDir string
	// out is where the JSON report goes.
	out string
	// profileDir, when set, receives Go profiles of our manager's runs.
	profileDir string
	// managerEnv is added to our manager's environment: BENCH_MANAGER_ENV,
	// and the GOMEMLIMIT of its Deployment at the recommended memory limit
	// unless BENCH_MANAGER_ENV sets one.
	managerEnv []string
}

// The environment variables of `make bench`; the Makefile documents them.
const (
	nodesEnv     = "BENCH_NODES"
	qpsEnv       = "BENCH_QPS"
	burstEnv     = "BENCH_BURST"
	scenariosEnv = "BENCH_SCENARIOS"
	repsEnv      = "BENCH_REPS"
	outEnv       = "BENCH_OUT"
	profileEnv   = "BENCH_PROFILE"
	managerEnv   = "BENCH_MANAGER_ENV"
	peersEnv     = "BENCH_PEERS"
	kruiseEnv    = "BENCH_KRUISE"
)

// The peers ours can be compared with.
const (
	native = "native"
	kruise = "kruise"
)

var knownPeers = []string{native, kruise}

// noPeer, as BENCH_PEERS, runs ours alone.
const noPeer = "none"

// configFromEnv reads the BENCH_* variables over the defaults: 1000
// nodes, QPS 20 then 200 with a burst of twice the QPS, every scenario
// but the workloadRef ones (doc.go says why they are left to be asked
// for), three runs each, the native controller and, when BENCH_KRUISE
// holds its build, Kruise as peers, the report in bin/bench.json, which
// git ignores.
// BENCH_BURST and BENCH_REPS take one value, or one per QPS.
func configFromEnv() (config, error) {
	cfg := config{out: filepath.Join(testenv.RepoRoot(), "bin", "bench.json")}
	var err error
	if cfg.nodes, err = positiveInt(nodesEnv, "1000"); err != nil {
		return cfg, err
	}
	if cfg.qps, err = positiveInts(qpsEnv, "20,200"); err != nil {
		return cfg, err
	}
	if cfg.reps, err = onePerQPS(repsEnv, "3", cfg.qps); err != nil {
		return cfg, err
	}
	if os.Getenv(burstEnv) == "" {
		for _, q := range cfg.qps {
			cfg.bursts = append(cfg.bursts, 2*q)
		}
	} else if cfg.bursts, err = onePerQPS(burstEnv, "", cfg.qps); err != nil {
		return cfg, err
	}
	if cfg.scenarios, err = scenariosNamed(envOr(scenariosEnv, "create,update,surge,canary,inplace")); err != nil {
		return cfg, fmt.Errorf("%s: %w", scenariosEnv, err)
	}
	cfg.kruiseDir = os.Getenv(kruiseEnv)
	if cfg.peers, err = peersNamed(os.Getenv(peersEnv), kruiseBuilt(cfg.kruiseDir)); err != nil {
		return cfg, fmt.Errorf("%s: %w", peersEnv, err)
	}
	if v := os.Getenv(outEnv); v != "" {
		cfg.out = v
	}
	for _, kv := range strings.Fields(os.Getenv(managerEnv)) {
		if k, _, ok := strings.Cut(kv, "="); !ok || k == "" {
			return cfg, fmt.Errorf("%s: %q is not KEY=VALUE", managerEnv, kv)
		}
		cfg.managerEnv = append(cfg.managerEnv, kv)
	}
	cfg.managerEnv = withSoftMemoryLimit(cfg.managerEnv, cfg.nodes)
	if v := os.Getenv(profileEnv); v != "" {
		if cfg.profileDir, err = filepath.Abs(v); err != nil {
			return cfg, fmt.Errorf("%s: %w", profileEnv, err)
		}
	}
	return cfg, nil
}

// kruiseBuilt says why dir holds no build of test/tools/kruise.sh, empty
// when it holds one.
func kruiseBuilt(dir string) string {
	if dir == "" {
		return kruiseEnv + " is not set"
	}
	for _, name := range []string{kruiseManager, kruiseCRD} {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			return fmt.Sprintf("%s=%s holds no %s", kruiseEnv, dir, name)
		}
	}
	return ""
}

// peersNamed returns the peers of a comma-separated list in the list's
// order; an empty list is the native controller, and Kruise when it is
// built (notBuilt says why it is not); "none" is ours alone, to profile it
// without waiting on the peers' runs. Naming Kruise unbuilt is an error.
func peersNamed(list, notBuilt string) ([]string, error) {
	if strings.TrimSpace(list) == noPeer {
		return nil, nil
	}
	if strings.TrimSpace(list) == "" {
		if notBuilt == "" {
			return []string{native, kruise}, nil
		}
		return []string{native}, nil
	}
	var out []string
	for name := range strings.SplitSeq(list, ",") {
		name = strings.TrimSpace(name)
		switch {
		case !slices.Contains(knownPeers, name):
			return nil, fmt.Errorf("unknown peer %q (known: %s)", name, strings.Join(knownPeers, ","))
		case slices.Contains(out, name):
			return nil, fmt.Errorf("peer %q named twice", name)
		case name == kruise && notBuilt != "":
			return nil, fmt.Errorf("kruise is not built (%s): run test/tools/kruise.sh and set %s to the directory it prints last, as make bench does", notBuilt, kruiseEnv)
		}
		out = append(out, name)
	}
	return out, nil
}

func envOr(name, fallback string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return fallback
}

func positiveInt(name, fallback string) (int, error) {
	v := envOr(name, fallback)
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil || n < 1 {
		return 0, fmt.Errorf("%s=%q is not a positive number", name, v)
	}
	return n, nil
}

// onePerQPS reads a list of one value for every QPS, or one value for all.
func onePerQPS(name, fallback string, qps []int) ([]int, error) {
	values, err := positiveInts(name, fallback)
	if err != nil {
		return nil, err
	}
	if len(values) == 1 {
		for range qps[1:] {
			values = append(values, values[0])
		}
	}
	if len(values) != len(qps) {
		return nil, fmt.Errorf("%s has %d values for the %d of %s: give one, or one per QPS", name, len(values), len(qps), qpsEnv)
	}
	return values, nil
}

func positiveInts(name, fallback string) ([]int, error) {
	var out []int
	for v := range strings.SplitSeq(envOr(name, fallback), ",") {
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("%s: %q is not a positive number", name, v)
		}
		out = append(out, n)
	}
	return out, nil
}
