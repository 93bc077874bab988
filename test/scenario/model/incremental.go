package model

import (
	"fmt"
	"reflect"

	"github.com/extendeddaemonset/extendeddaemonset/controllers/rollout"
)

// keptPlan is a replica set's planner state kept from pass to pass, as the
// controller keeps it, with what each node was last stated as.
type keptPlan struct {
	state *rollout.State
	nodes map[string]rollout.Node
	pods  map[string][]rollout.Pod
}

// checkIncremental tells the replica set's kept planner state only of the
// nodes whose statement changed since its last pass, and checks that it
// plans as Compute did from the whole input (IncrementalPlan).
func (c *Cluster) checkIncremental(ers string, in rollout.Input, want rollout.Plan) {
	k := c.planned[ers]
	if k == nil {
		k = &keptPlan{state: rollout.NewState(), nodes: map[string]rollout.Node{}, pods: map[string][]rollout.Pod{}}
		c.planned[ers] = k
	}
	seen := make(map[string]bool, len(in.Nodes))
	for _, n := range in.Nodes {
		seen[n.Name] = true
		if old, ok := k.nodes[n.Name]; ok && old == n && reflect.DeepEqual(k.pods[n.Name], in.Pods[n.Name]) {
			continue
		}
		k.nodes[n.Name], k.pods[n.Name] = n, in.Pods[n.Name]
		k.state.SetNode(n, in.Pods[n.Name])
	}
	for name := range k.nodes {
		if !seen[name] {
			delete(k.nodes, name)
			delete(k.pods, name)
			k.state.DeleteNode(name)
		}
	}
	if diff := rollout.DiffPlans(want, k.state.Plan(in)); diff != "" {
		c.violate(IncrementalPlan, fmt.Sprintf("replica set %s: the kept planner state plans otherwise than the whole input (-whole +kept):\n%s", ers, diff))
	}
}
