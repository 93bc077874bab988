// Package canary holds the canary lifecycle's decisions as pure functions of
// observed state: how many canary nodes, and which.
package canary

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
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
	// it is one. A canary already on the node keeps it: moving a canary
	// because its node blipped NotReady would restart its duration
	// elsewhere for nothing.
	Unhealthy string
}

// NewCandidate is node as a canary candidate whose current pod restarted
// restarts times.
func NewCandidate(node *corev1.Node, restarts int32) Candidate {
	_, why := Eligible(node)
	return Candidate{Name: node.Name, Labels: node.Labels, Restarts: restarts, Unhealthy: why}
}

// unhealthyTaints mark nodes that are down or on their way out: a canary
// there would fail, or be judged, for reasons that are not its own.
var unhealthyTaints = []string{
	corev1.TaintNodeUnschedulable,
	corev1.TaintNodeNotReady,
	corev1.TaintNodeUnreachable,
	"karpenter.sh/disrupted",
	"ToBeDeletedByClusterAutoscaler",
}

// Eligible says whether node makes a good new canary node and, when not,
// why: it must be Ready, schedulable, not drained or disrupted, and not
// going away.
func Eligible(node *corev1.Node) (bool, string) {
	if node.DeletionTimestamp != nil {
		return false, "the node is being deleted"
	}
	if node.Spec.Unschedulable {
		return false, "the node is cordoned"
	}
	for _, t := range node.Spec.Taints {
		if slices.Contains(unhealthyTaints, t.Key) {
			return false, fmt.Sprintf("the node has taint %s", t.Key)
		}
	}
	if !ready(node) {
		return false, "the node is not Ready"
	}
	return true, ""
}

func ready(node *corev1.Node) bool {
	for _, c := range node.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
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
	for len(chosen) < want && len(rest) > 0 {
		// rest is in preference order, so the first candidate of the least
		// used group is the best pick.
		best := 0
		for i, c := range rest {
			if perGroup[groupOf[c.Name]] < perGroup[groupOf[rest[best].Name]] {
				best = i
			}
		}
		take(rest[best])
		rest = slices.Delete(rest, best, best+1)
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
