package canary

import (
	"cmp"
	"hash/fnv"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/extendeddaemonset/extendeddaemonset/analysis"
	"github.com/extendeddaemonset/extendeddaemonset/controllers/placement"
)

// Bounds of a nodeHealth measurement: each judged or baseline node costs
// one pod list against the API server per interval, so a canary of
// hundreds of nodes, or a baking zone of thousands, is judged on a sample.
const (
	// MaxJudgedNodes bounds the judged nodes of one measurement.
	MaxJudgedNodes = 20
	// MaxBaselineNodes bounds the baseline nodes of one measurement.
	MaxBaselineNodes = 20
	// MaxBaselineNodesPerZone bounds the baseline nodes of one zone, so
	// that the baseline spreads over the judged nodes' zones.
	MaxBaselineNodesPerZone = 10
)

// HealthNodes are the nodes a nodeHealth measurement judges and compares
// with, without their pods yet.
type HealthNodes struct {
	analysis.NodeHealthInput
	// JudgedLeftOut and BaselineLeftOut count the nodes left out of the
	// sample past MaxJudgedNodes and MaxBaselineNodes.
	JudgedLeftOut, BaselineLeftOut int
}

// HealthNodesOf picks the nodes of a nodeHealth measurement among nodes.
// Judged are the nodes named in judged that run a started pod of the new
// version (changed); each one's Since is when that pod first started
// there. Baseline are the nodes of the judged nodes' zones (the label
// topology.kubernetes.io/zone; nodes without it form one zone) that run a
// live pod of the old version (unchanged) and none of the new one, with the
// earliest Since of the judged nodes, so both sides cover the same time.
// Nodes in maintenance are neither: what happens to them is no verdict on
// the new version. Past the bounds, the nodes are sampled by a hash of
// their name and seed (the ExtendedDaemonSet), so that one canary keeps
// its sample from one measurement to the next while canaries of other
// agents spread over other nodes.
func HealthNodesOf(seed string, nodes []*corev1.Node, judged []string, changed, unchanged []*corev1.Pod) HealthNodes {
	// One pass over the pods: a bake's are the whole cluster's.
	started, newOn := firstStarts(changed)
	isJudged := make(map[string]bool, len(judged))
	for _, name := range judged {
		isJudged[name] = true
	}
	oldOn := map[string]bool{}
	for _, pod := range unchanged {
		if pod.DeletionTimestamp == nil {
			oldOn[placement.TargetNode(pod)] = true
		}
	}
	var out HealthNodes
	var candidates []*corev1.Node
	for _, node := range nodes {
		switch {
		case placement.InMaintenance(node):
		case isJudged[node.Name] && !started[node.Name].IsZero():
			out.Judged = append(out.Judged, analysis.NodeObservation{Node: node, Since: started[node.Name]})
		case oldOn[node.Name] && !newOn[node.Name]:
			candidates = append(candidates, node)
		}
	}
	out.Judged, out.JudgedLeftOut = sample(seed, out.Judged, MaxJudgedNodes)
	if len(out.Judged) == 0 {
		return out
	}
	zones := map[string]bool{}
	since := out.Judged[0].Since
	for _, o := range out.Judged {
		zones[zoneOf(o.Node)] = true
		if o.Since.Before(since) {
			since = o.Since
		}
	}
	byZone := map[string][]analysis.NodeObservation{}
	for _, node := range candidates {
		if z := zoneOf(node); zones[z] {
			byZone[z] = append(byZone[z], analysis.NodeObservation{Node: node, Since: since})
		}
	}
	out.Baseline, out.BaselineLeftOut = spread(seed, byZone)
	return out
}

// firstStarts is, per node, when the kubelet first started one of pods
// there (as podStarted says for one node), and the nodes where a live one
// of them is, started or not.
func firstStarts(pods []*corev1.Pod) (started map[string]time.Time, on map[string]bool) {
	started, on = map[string]time.Time{}, map[string]bool{}
	for _, pod := range pods {
		node := placement.TargetNode(pod)
		if pod.DeletionTimestamp == nil {
			on[node] = true
		}
		if s := pod.Status.StartTime; s != nil && (started[node].IsZero() || s.Time.Before(started[node])) {
			started[node] = s.Time
		}
	}
	return started, on
}

// spread takes at most MaxBaselineNodesPerZone nodes of each zone, then
// one zone after the other until MaxBaselineNodes, so that no zone
// crowds the others out. It returns how many it left out.
func spread(seed string, byZone map[string][]analysis.NodeObservation) ([]analysis.NodeObservation, int) {
	zones := make([]string, 0, len(byZone))
	total := 0
	for z, obs := range byZone {
		zones = append(zones, z)
		byRank(seed, obs)
		total += len(obs)
	}
	slices.Sort(zones)
	var out []analysis.NodeObservation
	for i := 0; i < MaxBaselineNodesPerZone; i++ {
		for _, z := range zones {
			if obs := byZone[z]; i < len(obs) && len(out) < MaxBaselineNodes {
				out = append(out, obs[i])
			}
		}
	}
	slices.SortFunc(out, byNodeName)
	return out, total - len(out)
}

// sample keeps at most limit of obs, the first in seed's order, sorted by
// name; it returns how many it left out.
func sample(seed string, obs []analysis.NodeObservation, limit int) ([]analysis.NodeObservation, int) {
	left := max(0, len(obs)-limit)
	if left > 0 {
		byRank(seed, obs)
		obs = obs[:limit]
	}
	slices.SortFunc(obs, byNodeName)
	return obs, left
}

// byRank orders obs by where their nodes fall in seed's order: a hash of
// seed and node name.
func byRank(seed string, obs []analysis.NodeObservation) {
	slices.SortFunc(obs, func(a, b analysis.NodeObservation) int {
		return cmp.Or(cmp.Compare(rank(seed, a.Node.Name), rank(seed, b.Node.Name)), byNodeName(a, b))
	})
}

func byNodeName(a, b analysis.NodeObservation) int { return cmp.Compare(a.Node.Name, b.Node.Name) }

// rank is where node falls in seed's order.
func rank(seed, node string) uint64 {
	h := fnv.New64a()
	_, _ = h.Write([]byte(seed))
	_, _ = h.Write([]byte{0})
	_, _ = h.Write([]byte(node))
	return h.Sum64()
}

// zoneOf is the zone of node, empty without the label.
func zoneOf(node *corev1.Node) string { return node.Labels[corev1.LabelTopologyZone] }
