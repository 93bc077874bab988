package rollout

import (
	"fmt"
	"testing"
	"time"
)

// nodeCountsOf counts Counts.Running, KeptNew and KeptOld the plain way,
// over every node and pod of in: what the planner's per-node counting must
// agree with.
func nodeCountsOf(in Input) (running NodeCounts, keptNew, keptOld int) {
	for _, node := range in.Nodes {
		switch {
		case node.ShouldRun && !node.Unresponsive && !node.Maintenance:
			var current, ready, available bool
			for _, pod := range in.Pods[node.Name] {
				if pod.Terminating || pod.Failed {
					continue
				}
				current = true
				ready = ready || pod.Ready()
				available = available || pod.Available(in.Params.MinReady, in.Now)
			}
			running.Current += b2i(current)
			running.Ready += b2i(ready)
			running.Available += b2i(available)
		case !node.ShouldRun && node.ShouldContinueRunning:
			for _, pod := range in.Pods[node.Name] {
				switch {
				case pod.Terminating:
				case pod.New:
					keptNew++
				case !pod.Failed:
					keptOld++
				}
			}
		}
	}
	return running, keptNew, keptOld
}

// sameNodeCounts says how plan's node counts differ from a plain count
// over in, empty when they do not.
func sameNodeCounts(in Input, plan Plan) string {
	running, keptNew, keptOld := nodeCountsOf(in)
	c := plan.Counts
	if c.Running != running || c.KeptNew != keptNew || c.KeptOld != keptOld {
		return fmt.Sprintf("node counts: running %+v, kept %d new and %d old; counted over the input: %+v, %d and %d",
			c.Running, c.KeptNew, c.KeptOld, running, keptNew, keptOld)
	}
	return ""
}

// Desired nodes count once whatever their pods, nodes the planner leaves
// alone not at all, and pods kept on a NoSchedule misfit one by one.
func TestNodeCounts(t *testing.T) {
	minReady := time.Minute
	readyLongAgo := readyFor(time.Hour)
	in := Input{
		Now:    now,
		Params: Params{MaxUnavailable: 1, MinReady: minReady, MaxParallelPodCreation: 10},
		Nodes: append(desiredNodes("available", "surging", "just-ready", "not-ready", "terminating", "failed", "empty"),
			Node{Name: "gone-quiet", ShouldRun: true, ShouldContinueRunning: true, Unresponsive: true},
			Node{Name: "drained", ShouldRun: true, ShouldContinueRunning: true, Maintenance: true},
			misfit("tainted")),
		Pods: map[string][]Pod{
			"available":   {pod("a", "available", true, readyLongAgo)},
			"surging":     {pod("s-old", "surging", false, readyLongAgo), pod("s-new", "surging", true, readyLongAgo)},
			"just-ready":  {pod("j", "just-ready", true, readyFor(time.Second))},
			"not-ready":   {pod("n", "not-ready", true)},
			"terminating": {pod("t", "terminating", false, readyLongAgo, terminating)},
			"failed":      {pod("f", "failed", true, failed)},
			"gone-quiet":  {pod("q", "gone-quiet", false, readyLongAgo)},
			"drained":     {pod("d", "drained", false, readyLongAgo)},
			"tainted":     {pod("k-new", "tainted", true, readyLongAgo), pod("k-old", "tainted", false), pod("k-failed", "tainted", false, failed)},
		},
	}
	c := Compute(in).Counts
	if want := (NodeCounts{Current: 4, Ready: 3, Available: 2}); c.Running != want {
		t.Errorf("Running = %+v, want %+v", c.Running, want)
	}
	if c.KeptNew != 1 || c.KeptOld != 1 {
		t.Errorf("kept %d new and %d old, want 1 and 1", c.KeptNew, c.KeptOld)
	}
	if diff := sameNodeCounts(in, Compute(in)); diff != "" {
		t.Error(diff)
	}
}
