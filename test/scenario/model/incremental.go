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
	if got := k.state.Plan(in); !reflect.DeepEqual(emptyAsNil(got), emptyAsNil(want)) {
		c.violate(IncrementalPlan, fmt.Sprintf("replica set %s: the kept planner state plans %+v, the whole input %+v", ers, got, want))
	}
}

// emptyAsNil is plan with its empty lists nil.
func emptyAsNil(plan rollout.Plan) rollout.Plan {
	if len(plan.Create) == 0 {
		plan.Create = nil
	}
	if len(plan.Delete) == 0 {
		plan.Delete = nil
	}
	if len(plan.UpdateInPlace) == 0 {
		plan.UpdateInPlace = nil
	}
	if len(plan.Reopen) == 0 {
		plan.Reopen = nil
	}
	if len(plan.FailedNodes) == 0 {
		plan.FailedNodes = nil
	}
	return plan
}
