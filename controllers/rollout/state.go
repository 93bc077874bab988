package rollout

import (
	"slices"
	"strings"
)

// State is a replica set's planner input kept from one plan to the next:
// the nodes it is responsible for and their pods, set node by node as watch
// events tell of changes. Plan decides as Compute does over what was set.
//
// A State is not safe for concurrent use.
type State struct {
	nodes map[string]Node
	pods  map[string][]Pod
}

// NewState returns an empty State.
func NewState() *State {
	return &State{nodes: map[string]Node{}, pods: map[string][]Pod{}}
}

// SetNode records a node and the pods on it, replacing what was recorded
// for that node. The State keeps pods; the caller must not change it after.
func (s *State) SetNode(node Node, pods []Pod) {
	s.nodes[node.Name] = node
	if len(pods) == 0 {
		delete(s.pods, node.Name)
		return
	}
	s.pods[node.Name] = pods
}

// DeleteNode forgets a node and its pods.
func (s *State) DeleteNode(name string) {
	delete(s.nodes, name)
	delete(s.pods, name)
}

// Len is the number of nodes recorded.
func (s *State) Len() int { return len(s.nodes) }

// Input returns what was recorded as a planner input, nodes sorted by
// name, for a full Compute that checks the State.
func (s *State) Input() Input {
	in := Input{Nodes: make([]Node, 0, len(s.nodes)), Pods: make(map[string][]Pod, len(s.pods))}
	for _, n := range s.nodes {
		in.Nodes = append(in.Nodes, n)
	}
	slices.SortFunc(in.Nodes, func(a, b Node) int { return strings.Compare(a.Name, b.Name) })
	for name, pods := range s.pods {
		in.Pods[name] = pods
	}
	return in
}

// Plan plans as Compute(in) would with in.Nodes and in.Pods replaced by
// what the State recorded; in's other fields (Params, Now, BackoffUntil,
// Elsewhere) are taken as given.
func (s *State) Plan(in Input) Plan {
	recorded := s.Input()
	in.Nodes, in.Pods = recorded.Nodes, recorded.Pods
	return Compute(in)
}
