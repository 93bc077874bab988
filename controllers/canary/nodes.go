// Package canary holds the canary lifecycle's decisions as pure functions of
// observed state: how many canary nodes, and which.
package canary

import (
	"cmp"
	"container/heap"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/extendeddaemonset/extendeddaemonset/controllers/placement"
)

// Count resolves spec.strategy.canary.replicas against the number of
// desired nodes: a count, or a percentage rounded up; never more than
// desired, and at least one when there is any node.
func Count(replicas *intstr.IntOrString, desired int) (int, error) {
	if desired <= 0 {
		return 0, nil
	}
	if replicas == nil {
		return 1, nil
	}
	n, err := intstr.GetScaledValueFromIntOrPercent(replicas, desired, true)
	if err != nil {
		return 0, fmt.Errorf("spec.strategy.canary.replicas %q: %w", replicas.String(), err)
	}
	return min(max(n, 1), desired), nil
}

// Candidate is a node a canary may run on.
type Candidate struct {
	Name   string
	Labels map[string]string
	// Restarts are the container restarts of the pod on the node now: a
	// node whose agent already restarts would blame the canary for it.
	Restarts int32
	// Unhealthy says why the node is no new pick (see Eligible), empty when
	// it is one. A canary already on the node keeps it unless the node is
	// in maintenance (Maintenance) or not Ready: then nothing is judged
	// there, and canaryNodes replaces it (or, not Ready, fails or pauses
	// the canary).
	Unhealthy string
	// Maintenance says why the node is in maintenance
	// (placement.Maintenance), empty when it is not.
	Maintenance string
	// NotReady: the node's kubelet does not report it Ready (False or
	// Unknown), since NotReadySince; zero when nothing says since when.
	NotReady      bool
	NotReadySince time.Time
}

// NewCandidate is node as a canary candidate whose current pod restarted
// restarts times.
func NewCandidate(node *corev1.Node, restarts int32) Candidate {
	_, why := Eligible(node)
	c := Candidate{Name: node.Name, Labels: node.Labels, Restarts: restarts, Unhealthy: why, Maintenance: placement.Maintenance(node)}
	if r := placement.NodeReadiness(node); !r.Ready() {
		c.NotReady, c.NotReadySince = true, r.Since
	}
	return c
}

// notReadyTaints are the node lifecycle controller's signs that a node is
// down, set before (or without) its Ready condition saying so: a canary
// there would fail, or be judged, for reasons that are not its own.
var notReadyTaints = []string{corev1.TaintNodeNotReady, corev1.TaintNodeUnreachable}

// Eligible says whether node makes a good new canary node and, when not,
// why: it must not be in maintenance (placement.Maintenance: draining,
// cordoned, disrupted, going away) and must be Ready.
func Eligible(node *corev1.Node) (bool, string) {
	if why := placement.Maintenance(node); why != "" {
		return false, "the node is in maintenance: " + why
	}
	for _, t := range node.Spec.Taints {
		if slices.Contains(notReadyTaints, t.Key) {
			return false, fmt.Sprintf("the node has taint %s", t.Key)
		}
	}
	if !placement.NodeReadiness(node).Ready() {
		return false, "the node is not Ready"
	}
	return true, ""
}

// SelectNodes picks want canary nodes among candidates. Nodes already
// chosen (previous) that are still candidates are kept, so the choice is
// stable across reconciles and restarts and a vanished node is replaced by
// one new pick. New picks are healthy candidates only, and spread across
// the values of keys (the node antiaffinity keys): each goes to the value
// combination holding the fewest canaries so far, then to the node with the
// fewest restarts, then by name.
func SelectNodes(candidates []Candidate, want int, keys []string, previous []string) []string {
	byName := make(map[string]*Candidate, len(candidates))
	groupOf := make(map[string]string, len(candidates))
	for i := range candidates {
		byName[candidates[i].Name] = &candidates[i]
		groupOf[candidates[i].Name] = group(&candidates[i], keys)
	}
	var chosen []string
	picked := map[string]bool{}
	perGroup := map[string]int{}
	take := func(c *Candidate) {
		chosen = append(chosen, c.Name)
		picked[c.Name] = true
		perGroup[groupOf[c.Name]]++
	}
	for _, name := range previous {
		if c, ok := byName[name]; ok && len(chosen) < want && !picked[name] {
			take(c)
		}
	}
	rest := make([]*Candidate, 0, len(candidates))
	for i := range candidates {
		if !picked[candidates[i].Name] && candidates[i].Unhealthy == "" {
			rest = append(rest, &candidates[i])
		}
	}
	slices.SortFunc(rest, func(a, b *Candidate) int {
		// Not a.Restarts - b.Restarts: the int32 difference overflows for
		// counts far apart (the controller sums a node's restarts, which
		// may wrap), and the order, so the pick, then depends on how the
		// cache lists the nodes.
		if c := cmp.Compare(a.Restarts, b.Restarts); c != 0 {
			return c
		}
		return strings.Compare(a.Name, b.Name)
	})
	// rest is in preference order, so the best pick is the first
	// candidate of the least used group: groups queue their candidates in
	// that order, and a heap orders the groups by use, then by their first
	// candidate. A pick costs log(groups), not a scan of every candidate.
	queues := &groupQueues{used: perGroup}
	index := map[string]int{}
	for i, c := range rest {
		g := groupOf[c.Name]
		q, ok := index[g]
		if !ok {
			q = len(queues.groups)
			index[g] = q
			queues.groups = append(queues.groups, &groupQueue{name: g})
		}
		queues.groups[q].candidates = append(queues.groups[q].candidates, rankedCandidate{c, i})
	}
	heap.Init(queues)
	for len(chosen) < want && queues.Len() > 0 {
		q := queues.groups[0]
		take(q.candidates[0].Candidate)
		if q.candidates = q.candidates[1:]; len(q.candidates) == 0 {
			heap.Pop(queues)
		} else {
			heap.Fix(queues, 0)
		}
	}
	slices.Sort(chosen)
	return chosen
}

// group names the combination of a node's values for keys; a missing label
// is a value of its own.
func group(c *Candidate, keys []string) string {
	var b strings.Builder
	for _, k := range keys {
		v, ok := c.Labels[k]
		if !ok {
			v = "\x00"
		}
		b.WriteString(v)
		b.WriteByte('\x01')
	}
	return b.String()
}

// rankedCandidate is a candidate with its place in preference order.
type rankedCandidate struct {
	*Candidate
	rank int
}

// groupQueue holds a group's candidates not picked yet, best first.
type groupQueue struct {
	name       string
	candidates []rankedCandidate
}

// groupQueues is a heap of the groups that have candidates left: the least
// used group first, then the one whose best candidate ranks first.
type groupQueues struct {
	groups []*groupQueue
	used   map[string]int
}

func (h *groupQueues) Len() int { return len(h.groups) }

func (h *groupQueues) Less(i, j int) bool {
	a, b := h.groups[i], h.groups[j]
	if ua, ub := h.used[a.name], h.used[b.name]; ua != ub {
		return ua < ub
	}
	return a.candidates[0].rank < b.candidates[0].rank
}

func (h *groupQueues) Swap(i, j int) { h.groups[i], h.groups[j] = h.groups[j], h.groups[i] }

func (h *groupQueues) Push(x any) { h.groups = append(h.groups, x.(*groupQueue)) }

func (h *groupQueues) Pop() any {
	last := h.groups[len(h.groups)-1]
	h.groups = h.groups[:len(h.groups)-1]
	return last
}
