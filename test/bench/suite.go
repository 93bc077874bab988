package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/extendeddaemonset/extendeddaemonset/test/internal/daemon"
	"github.com/extendeddaemonset/extendeddaemonset/test/internal/managerproc"
)

// logf reports progress, as testing.TB.Logf does.
type logf func(format string, args ...any)

// runBenchmark runs a comparison per client rate limit of cfg, each on a
// cluster of its own, writes each one's table to out as soon as it is
// done and the report to cfg.out after each, so that a failure keeps what
// was measured before it. The logs stay in a directory it names when
// something fails.
func runBenchmark(ctx context.Context, cfg config, log logf, out io.Writer) (rep *report, err error) {
	dir, err := os.MkdirTemp("", "bench-")
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			err = fmt.Errorf("%w (logs kept in %s)", err, dir)
		} else {
			err = os.RemoveAll(dir)
		}
	}()
	binary := filepath.Join(dir, managerBinary)
	if err := managerproc.Build(ctx, binary); err != nil {
		return nil, err
	}
	rep = &report{Started: time.Now().UTC()}
	for i, qps := range cfg.qps {
		limit := rateLimit{qps: qps, burst: cfg.bursts[i], reps: cfg.reps[i]}
		cmp, err := runComparison(ctx, cfg, limit, dir, binary, log)
		cmp.summarize()
		rep.Comparisons = append(rep.Comparisons, cmp)
		err = errors.Join(err, cmp.writeTable(out), rep.writeJSON(cfg.out))
		if err != nil {
			return rep, err
		}
	}
	return rep, nil
}

// rateLimit is the client rate limit of one comparison, and how many
// times it runs each scenario.
type rateLimit struct{ qps, burst, reps int }

// runComparison runs every scenario of cfg limit.reps times at one rate
// limit, the peers and ours in turn, so that whatever slows the machine
// down meanwhile slows them all.
func runComparison(ctx context.Context, cfg config, limit rateLimit, dir, binary string, log logf) (cmp *comparison, err error) {
	cmp = &comparison{Nodes: cfg.nodes, QPS: limit.qps, Burst: limit.burst, Reps: limit.reps, Peers: cfg.peers, ManagerEnv: cfg.managerEnv}
	for _, sc := range cfg.scenarios {
		cmp.Scenarios = append(cmp.Scenarios, sc.name)
	}
	log("%d nodes, QPS %d, burst %d: starting the cluster, %s and ours (%s)", cfg.nodes, limit.qps, limit.burst,
		strings.Join(cfg.peers, ", "), strings.Join(cfg.managerEnv, " "))
	// Each comparison's audit log and manager log are its own.
	if dir, err = os.MkdirTemp(dir, fmt.Sprintf("qps-%d-", limit.qps)); err != nil {
		return cmp, err
	}
	env, err := startEnvironment(ctx, dir, binary, cfg, limit)
	defer func() { err = errors.Join(err, env.stop()) }()
	if err != nil {
		return cmp, err
	}
	// A feature a controller missed once it misses every time.
	notAvailable := map[[2]string]bool{}
	for rep := 1; rep <= limit.reps; rep++ {
		for _, sc := range cfg.scenarios {
			for _, c := range env.controllersOf(sc) {
				if notAvailable[[2]string{sc.name, c.name}] {
					continue
				}
				r, err := env.measure(ctx, sc, c, rep)
				if exits := env.manager.Exits(); len(exits) > 0 {
					// A restart resets the counters the figures are made of.
					err = errors.Join(err, fmt.Errorf("the manager exited: %s", strings.Join(exits, "; ")))
				}
				if k := env.kruiseManager; k != nil && k.Exited() {
					err = errors.Join(err, fmt.Errorf("kruise's manager exited; end of its log:\n%s", daemon.Tail(k.LogPath(), daemon.TailLines)))
				}
				if err != nil {
					return cmp, fmt.Errorf("%s, %s, run %d: %w", sc.name, c.name, rep, err)
				}
				cmp.Runs = append(cmp.Runs, r)
				if r.NotAvailable != "" {
					notAvailable[[2]string{sc.name, c.name}] = true
					log("%s, %s, run %d: %s", sc.name, c.name, rep, r.NotAvailable)
					continue
				}
				log("%s, %s, run %d: %.1fs, %.0f writes", sc.name, c.name, rep, r.Figures[figWall], r.Figures[figWrites])
				if r.OverRateLimit != "" {
					log("%s, %s, run %d: over the rate limit: %s", sc.name, c.name, rep, r.OverRateLimit)
				}
			}
		}
	}
	return cmp, nil
}

// controllersOf are the controllers that run sc: the peers that have a
// counterpart, in their order, then ours.
func (e *environment) controllersOf(sc scenario) []*controller {
	var out []*controller
	for _, p := range e.peers {
		if sc.runBy(p.name) {
			out = append(out, p)
		}
	}
	return append(out, e.ours)
}
