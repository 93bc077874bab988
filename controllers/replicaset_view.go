package controllers

import (
	"maps"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
	"github.com/extendeddaemonset/extendeddaemonset/controllers/internal/outcome"
	"github.com/extendeddaemonset/extendeddaemonset/controllers/internal/store"
	"github.com/extendeddaemonset/extendeddaemonset/controllers/placement"
	"github.com/extendeddaemonset/extendeddaemonset/controllers/rollout"
)

// viewSpec is what a view states the nodes for: one replica set in one
// role, with everything its statement of a node reads besides the node and
// the pods there.
type viewSpec struct {
	role v1alpha1.ReplicaSetRole
	// name is the replica set's: its pods are the new ones.
	name string
	// template says where the replica set's pods run.
	template *corev1.PodTemplateSpec
	// percentOf, when set, is the template the budgets' percentages
	// resolve against: the view counts the nodes it fits.
	percentOf   *corev1.PodTemplateSpec
	responsible func(node string) bool
	returning   func(*corev1.Pod) bool
	// updatable names the replica sets whose pods this one updates in
	// place; nil when it updates none.
	updatable   map[string]bool
	topologyKey string
	grace       time.Duration
	// key tells this spec from any other: a view kept for one key is
	// stated afresh when the key changes.
	key string
}

// view is what a replica set pass states of the nodes: for each node the
// replica set takes care of, its rollout.Node and the pods there, with what
// the rest of the pass reads of them. A view kept from pass to pass
// (replicaSetViews) states again only the nodes the journal names, which
// keeps the work of a pod event from growing with the cluster; a view of
// one pass states every node.
type view struct {
	spec viewSpec
	// nodes and pods are the planner's input, at the index of each node
	// in at; objects are the pods by name, nodeObjects the stated nodes.
	nodes       []rollout.Node
	at          map[string]int
	pods        map[string][]rollout.Pod
	objects     map[string]*corev1.Pod
	nodeObjects map[string]*corev1.Node
	// notReady are the stated nodes that are not Ready: whether they are
	// unresponsive changes with time alone, so each pass states them.
	notReady map[string]bool
	// failed are the nodes with a failed pod.
	failed map[string]bool
	// fits are the nodes percentOf fits, fitting how many.
	fits    map[string]bool
	fitting int
	state   *rollout.State

	// cursor is how far the journal was read; pending are the nodes of
	// the writes the cache did not show at the last pass; checkedAt is
	// when the view was last stated afresh.
	cursor    store.Cursor
	pending   map[string]bool
	checkedAt time.Time
}

func newView(spec viewSpec) *view {
	return &view{
		spec: spec, at: map[string]int{}, pods: map[string][]rollout.Pod{}, objects: map[string]*corev1.Pod{},
		nodeObjects: map[string]*corev1.Node{}, notReady: map[string]bool{}, failed: map[string]bool{}, fits: map[string]bool{},
		state: rollout.NewState(), pending: map[string]bool{},
	}
}

// restate replaces what the view says of the nodes in names by what nodes
// and pods say of them. nodes and pods must be all there is of those nodes
// (the cached nodes, and the pods on them after the expectations); a nil
// names states every node afresh.
func (v *view) restate(names map[string]bool, nodes []*corev1.Node, pods []*corev1.Pod, now time.Time) {
	afresh := names == nil
	if afresh {
		*v = *newView(v.spec)
		v.at, v.nodeObjects, v.fits = make(map[string]int, len(nodes)), make(map[string]*corev1.Node, len(nodes)), make(map[string]bool, len(nodes))
	} else {
		for name := range names {
			v.forget(name)
		}
	}
	s := &observation{
		role:  v.spec.role,
		input: rollout.Input{Pods: make(map[string][]rollout.Pod, len(pods))}, pods: make(map[string]*corev1.Pod, len(pods)),
		unresponsive: map[string]bool{}, topologyKey: v.spec.topologyKey, returning: v.spec.returning,
	}
	notReady := map[string]bool{}
	for _, node := range nodes {
		r := placement.NodeReadiness(node)
		if !r.Ready() {
			notReady[node.Name] = true
		}
		if r.UnresponsiveAt(now, v.spec.grace) {
			s.unresponsive[node.Name] = true
		}
	}
	s.addNodes(nodes, v.spec.template, v.spec.responsible)
	v.countFits(nodes, s.input.Nodes)
	s.addPods(pods, nodes, v.spec.name, v.spec.responsible)
	markInPlace(s, v.spec.updatable)
	if afresh {
		// The statement's own maps become the view's.
		v.nodes, v.pods, v.objects = s.input.Nodes, s.input.Pods, s.pods
	}
	for _, n := range s.input.Nodes {
		statedPods := s.input.Pods[n.Name]
		// One order whichever way the pods were listed, so that a view
		// stated node by node says what a view stated at once says.
		slices.SortFunc(statedPods, func(a, b rollout.Pod) int { return strings.Compare(a.Name, b.Name) })
		if !afresh {
			v.at[n.Name] = len(v.nodes)
			v.nodes = append(v.nodes, n)
			if len(statedPods) > 0 {
				v.pods[n.Name] = statedPods
			}
			for _, p := range statedPods {
				v.objects[p.Name] = s.pods[p.Name]
			}
		}
		for _, p := range statedPods {
			if p.Failed {
				v.failed[n.Name] = true
			}
		}
		v.state.SetNode(n, statedPods)
	}
	if afresh {
		for i, n := range v.nodes {
			v.at[n.Name] = i
		}
	}
	for _, node := range nodes {
		if _, stated := v.at[node.Name]; stated {
			v.nodeObjects[node.Name] = node
			if notReady[node.Name] {
				v.notReady[node.Name] = true
			}
		}
	}
}

// countFits records which of nodes percentOf fits. stated are the nodes
// addNodes stated of them, in their order: where the replica set's
// template fits the same nodes, its statement says already.
func (v *view) countFits(nodes []*corev1.Node, stated []rollout.Node) {
	if v.spec.percentOf == nil {
		return
	}
	same := placement.SameFit(v.spec.percentOf, v.spec.template)
	fitter := placement.NewFitter(v.spec.percentOf)
	for _, node := range nodes {
		var fits bool
		if same && len(stated) > 0 && stated[0].Name == node.Name {
			fits = stated[0].ShouldRun
		} else {
			fits = fitter.Fit(node).ShouldRun
		}
		if len(stated) > 0 && stated[0].Name == node.Name {
			stated = stated[1:]
		}
		if fits {
			v.fits[node.Name] = true
			v.fitting++
		}
	}
}

// forget drops what the view says of node name.
func (v *view) forget(name string) {
	if v.fits[name] {
		delete(v.fits, name)
		v.fitting--
	}
	delete(v.nodeObjects, name)
	delete(v.notReady, name)
	delete(v.failed, name)
	i, ok := v.at[name]
	if !ok {
		return
	}
	last := len(v.nodes) - 1
	if i != last {
		v.nodes[i] = v.nodes[last]
		v.at[v.nodes[i].Name] = i
	}
	v.nodes = v.nodes[:last]
	delete(v.at, name)
	for _, p := range v.pods[name] {
		delete(v.objects, p.Name)
	}
	delete(v.pods, name)
	v.state.DeleteNode(name)
}

// failedNodes are the nodes with a failed pod, sorted.
func (v *view) failedNodes() []string {
	return slices.Sorted(maps.Keys(v.failed))
}

// untilUnresponsive is how long until the first stated node that is not
// Ready crosses the unresponsive grace, zero when none will. The planner
// then leaves it alone and stops counting it against the budget, which may
// let a held rollout go on; but a node whose kubelet died sends no more
// updates, so nothing else wakes the reconcile then.
func (v *view) untilUnresponsive(now time.Time) time.Duration {
	var wait time.Duration
	for name := range v.notReady {
		if i, ok := v.at[name]; ok && !v.nodes[i].Unresponsive {
			wait = outcome.Soonest(wait, placement.UnresponsiveIn(v.nodeObjects[name], now, v.spec.grace))
		}
	}
	return wait
}
