package model

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/extendeddaemonset/extendeddaemonset/test/scenario"
)

// quiet is how long a sequence's quiet tail may last: the longest path to
// an end is a canary with steps (2 x 30s) and an analysis (2 minutes
// after ready), a rollout under a progress deadline of 2 minutes after an
// unresponsive node is ignored (5 minutes), and three 30s bakes.
const quiet = 20 * time.Minute

// sequence is one drawn case: its seed, the cluster and the actions.
type sequence struct {
	seed uint64
	cfg  Config
	seq  []scenario.Action
}

func drawSequence(seed uint64, steps int, opts scenario.Options) sequence {
	rng := scenario.Rand(seed)
	cfg := DrawConfig(rng)
	return sequence{seed: seed, cfg: cfg, seq: scenario.Draw(rng, steps, opts)}
}

func play(cfg Config, seq []scenario.Action) []Violation {
	return New(cfg).Play(seq, quiet)
}

func envInt(t *testing.T, name string, def uint64) uint64 {
	t.Helper()
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.ParseUint(v, 10, 64)
	if err != nil {
		t.Fatalf("%s=%q: %v", name, v, err)
	}
	return n
}

// TestEverySequenceKeepsThePromises plays drawn sequences of ordinary
// actions on the model and fails, with the seed and a shrunk sequence, on
// the first broken promise. SCENARIO_SEED
// picks the first seed (each sequence i plays seed+i) and SCENARIO_N the
// number of sequences, for longer hunts; SCENARIO_STEPS their length.
func TestEverySequenceKeepsThePromises(t *testing.T) {
	keepsThePromises(t, 2000, scenario.Options{})
}

// TestMaintenanceSequencesKeepThePromises plays sequences where nodes
// also enter and leave maintenance (cordoned, drained, disrupted by
// Karpenter), as TestEverySequenceKeepsThePromises plays the others.
func TestMaintenanceSequencesKeepThePromises(t *testing.T) {
	keepsThePromises(t, 500, scenario.Options{Weights: map[scenario.Kind]int{
		scenario.CordonNode: 3, scenario.UncordonNode: 3,
		scenario.DrainNode: 4, scenario.DisruptNode: 4,
	}})
}

// keepsThePromises plays n drawn sequences (SCENARIO_N when set) and
// reports, shrunk, the first three broken promises.
func keepsThePromises(t *testing.T, defaultN uint64, opts scenario.Options) {
	t.Helper()
	n := envInt(t, "SCENARIO_N", defaultN)
	base := envInt(t, "SCENARIO_SEED", 1)
	steps := int(envInt(t, "SCENARIO_STEPS", 40))
	start := time.Now()
	var shrinkTime time.Duration
	failures, played := 0, uint64(0)
	for i := range n {
		played++
		s := drawSequence(base+i, steps, opts)
		for _, v := range play(s.cfg, s.seq) {
			shrinking := time.Now()
			seq := s.seq
			if step := v.Step; step <= len(seq) {
				// What came after the broken promise played no part in it.
				seq = seq[:step]
			}
			shrunk := scenario.Shrink(seq, func(seq []scenario.Action) bool { return broken(play(s.cfg, seq), v.Kind) != nil })
			shrinkTime += time.Since(shrinking)
			last := broken(play(s.cfg, shrunk), v.Kind)
			if last == nil {
				last = &v
			}
			failures++
			t.Errorf("SCENARIO_SEED=%d SCENARIO_N=1: cluster %+v\n%s\nshrunk from %d to %d actions:\n%s%s",
				s.seed, s.cfg, last, len(s.seq), len(shrunk), scenario.Story(shrunk), traceOf(s.cfg, shrunk))
		}
		if failures >= 3 {
			break
		}
	}
	t.Logf("%d sequences of %d actions and a quiet tail (seeds %d..%d) in %s (%s of it shrinking)",
		played, steps, base, base+played-1, time.Since(start).Round(time.Millisecond), shrinkTime.Round(time.Millisecond))
}

// traceOf plays seq again, telling where the cluster stands after each
// action and every pod the controller creates and deletes, with
// SCENARIO_TRACE set; empty otherwise.
func traceOf(cfg Config, seq []scenario.Action) string {
	if os.Getenv("SCENARIO_TRACE") == "" {
		return ""
	}
	var b strings.Builder
	c := New(cfg)
	c.trace = func(format string, args ...any) { fmt.Fprintf(&b, "      "+format+"\n", args...) }
	fmt.Fprintf(&b, "trace:\n    start: %s\n", c.describe())
	for i, a := range seq {
		c.step = i + 1
		fmt.Fprintf(&b, "%3d. %s\n", i+1, a)
		c.Do(a)
		fmt.Fprintf(&b, "    now %s: %s\n", c.now.Sub(c.start), c.describe())
	}
	c.Play(nil, quiet)
	fmt.Fprintf(&b, "    after the quiet tail, %s: %s %v\n", c.now.Sub(c.start), c.describe(), c.violations)
	return b.String()
}

// broken is the violation of kind among vs, nil when there is none.
func broken(vs []Violation, kind Kind) *Violation {
	for i := range vs {
		if vs[i].Kind == kind {
			return &vs[i]
		}
	}
	return nil
}
