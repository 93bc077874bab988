package canary

import (
	"fmt"
	"testing"
	"time"

	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/extendeddaemonset/extendeddaemonset/analysis"
)

// inZone puts a node in a zone.
func inZone(zone string) func(*corev1.Node) {
	return func(n *corev1.Node) { n.Labels = map[string]string{corev1.LabelTopologyZone: zone} }
}

func cordoned(n *corev1.Node) { n.Spec.Unschedulable = true }

// podOn is a started pod of a replica set on node.
func podOn(rs, node string, started time.Duration, mutate ...func(*corev1.Pod)) *corev1.Pod {
	pod := canaryPod(rs+"-"+node, startedOn(node, start.Add(started)))
	for _, m := range mutate {
		m(pod)
	}
	return pod
}

func terminating(p *corev1.Pod) { p.DeletionTimestamp = &metav1.Time{Time: start} }

// observed is "node@since" for each observation, since in seconds after start.
func observed(obs []analysis.NodeObservation) []string {
	out := []string{}
	for _, o := range obs {
		out = append(out, fmt.Sprintf("%s@%s", o.Node.Name, o.Since.Sub(start)))
	}
	return out
}

func TestHealthNodesOf(t *testing.T) {
	tests := []struct {
		name               string
		nodes              []*corev1.Node
		judged             []string
		changed, unchanged []*corev1.Pod
		wantJudged         []string
		wantBaseline       []string
	}{{
		name:         "a canary node against the stable nodes of its zone, since the canary's first start",
		nodes:        []*corev1.Node{readyNode("a1", inZone("a")), readyNode("a2", inZone("a")), readyNode("b1", inZone("b"))},
		judged:       []string{"a1"},
		changed:      []*corev1.Pod{podOn("new", "a1", 5*time.Second)},
		unchanged:    []*corev1.Pod{podOn("old", "a2", 0), podOn("old", "b1", 0)},
		wantJudged:   []string{"a1@5s"},
		wantBaseline: []string{"a2@5s"},
	}, {
		name:   "each judged node since its own start, the baseline since the earliest",
		nodes:  []*corev1.Node{readyNode("a1", inZone("a")), readyNode("b1", inZone("b")), readyNode("b2", inZone("b"))},
		judged: []string{"a1", "b1"},
		changed: []*corev1.Pod{podOn("new", "a1", 9*time.Second), podOn("new", "b1", 3*time.Second),
			podOn("new", "b1", 7*time.Second)},
		unchanged:    []*corev1.Pod{podOn("old", "b2", 0)},
		wantJudged:   []string{"a1@9s", "b1@3s"},
		wantBaseline: []string{"b2@3s"},
	}, {
		name:         "nodes without a zone are one zone",
		nodes:        []*corev1.Node{readyNode("x"), readyNode("y"), readyNode("z", inZone("a"))},
		judged:       []string{"x"},
		changed:      []*corev1.Pod{podOn("new", "x", time.Second)},
		unchanged:    []*corev1.Pod{podOn("old", "y", 0), podOn("old", "z", 0)},
		wantJudged:   []string{"x@1s"},
		wantBaseline: []string{"y@1s"},
	}, {
		name: "nodes in maintenance are neither judged nor a baseline",
		nodes: []*corev1.Node{readyNode("a1", inZone("a"), cordoned), readyNode("a2", inZone("a")),
			readyNode("a3", inZone("a"), cordoned), readyNode("a4", inZone("a"))},
		judged:       []string{"a1", "a2"},
		changed:      []*corev1.Pod{podOn("new", "a1", time.Second), podOn("new", "a2", 2*time.Second)},
		unchanged:    []*corev1.Pod{podOn("old", "a3", 0), podOn("old", "a4", 0)},
		wantJudged:   []string{"a2@2s"},
		wantBaseline: []string{"a4@2s"},
	}, {
		name:       "a canary node whose pod has not started is not judged yet, a gone one not at all",
		nodes:      []*corev1.Node{readyNode("a1", inZone("a")), readyNode("a2", inZone("a"))},
		judged:     []string{"a1", "gone"},
		changed:    []*corev1.Pod{canaryPod("new-a1", func(p *corev1.Pod) { p.Spec.NodeName = "a1" })},
		unchanged:  []*corev1.Pod{podOn("old", "a2", 0)},
		wantJudged: []string{},
		// Nothing judged, nothing to compare with.
		wantBaseline: []string{},
	}, {
		name:   "a baseline node runs a live old pod and no new one",
		nodes:  []*corev1.Node{readyNode("a1", inZone("a")), readyNode("a2", inZone("a")), readyNode("a3", inZone("a")), readyNode("a4", inZone("a"))},
		judged: []string{"a1"},
		changed: []*corev1.Pod{podOn("new", "a1", time.Second),
			podOn("new", "a3", time.Second)},
		unchanged:    []*corev1.Pod{podOn("old", "a2", 0, terminating), podOn("old", "a3", 0), podOn("old", "a4", 0)},
		wantJudged:   []string{"a1@1s"},
		wantBaseline: []string{"a4@1s"},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := gomega.NewWithT(t)
			got := HealthNodesOf("ns/agent", tt.nodes, tt.judged, tt.changed, tt.unchanged)
			g.Expect(observed(got.Judged)).To(gomega.Equal(tt.wantJudged))
			g.Expect(observed(got.Baseline)).To(gomega.Equal(tt.wantBaseline))
			g.Expect(got.JudgedLeftOut + got.BaselineLeftOut).To(gomega.BeZero())
		})
	}
}

// zoneOfNodes is n ready nodes of zone, named <zone>-<i>, each running a
// started pod of rs.
func zoneOfNodes(zone string, n int, rs string) ([]*corev1.Node, []*corev1.Pod) {
	var nodes []*corev1.Node
	var pods []*corev1.Pod
	for i := range n {
		name := fmt.Sprintf("%s-%02d", zone, i)
		nodes = append(nodes, readyNode(name, inZone(zone)))
		pods = append(pods, podOn(rs, name, time.Second))
	}
	return nodes, pods
}

// Past the bounds the nodes are sampled: at most 20 judged, at most 10
// baseline nodes per zone and 20 in all, spread over the zones; the same
// sample each time for one seed, another for another seed.
func TestHealthNodesOfSamplesPastTheBounds(t *testing.T) {
	g := gomega.NewWithT(t)
	newA, changed := zoneOfNodes("a", 30, "new")
	oldB, unchangedB := zoneOfNodes("b", 40, "old")
	oldC, unchangedC := zoneOfNodes("c", 5, "old")
	oldD, unchangedD := zoneOfNodes("d", 40, "old")
	newB, changedB := zoneOfNodes("b-new", 1, "new")
	newB[0].Labels[corev1.LabelTopologyZone] = "b"
	newC, changedC := zoneOfNodes("c-new", 1, "new")
	newC[0].Labels[corev1.LabelTopologyZone] = "c"
	newD, changedD := zoneOfNodes("d-new", 1, "new")
	newD[0].Labels[corev1.LabelTopologyZone] = "d"

	var nodes []*corev1.Node
	for _, ns := range [][]*corev1.Node{newA, oldB, oldC, oldD, newB, newC, newD} {
		nodes = append(nodes, ns...)
	}
	changed = append(append(append(changed, changedB...), changedC...), changedD...)
	unchanged := append(append(unchangedB, unchangedC...), unchangedD...)
	var judged []string
	for _, n := range append(append(append(newA, newB...), newC...), newD...) {
		judged = append(judged, n.Name)
	}

	got := HealthNodesOf("ns/agent", nodes, judged, changed, unchanged)
	g.Expect(got.Judged).To(gomega.HaveLen(MaxJudgedNodes))
	g.Expect(got.JudgedLeftOut).To(gomega.Equal(len(judged) - MaxJudgedNodes))

	// The baseline of the zones b, c and d: 10 of b and d each, c's 5, 20
	// in all taken one zone after the other.
	few := HealthNodesOf("ns/agent", nodes, judged[len(newA):], changed, unchanged)
	g.Expect(few.Judged).To(gomega.HaveLen(3))
	perZone := map[string]int{}
	for _, o := range few.Baseline {
		perZone[zoneOf(o.Node)]++
	}
	g.Expect(perZone).To(gomega.Equal(map[string]int{"b": 8, "c": 5, "d": 7}))
	g.Expect(few.BaselineLeftOut).To(gomega.Equal(40 + 5 + 40 - MaxBaselineNodes))

	again := HealthNodesOf("ns/agent", nodes, judged, changed, unchanged)
	g.Expect(observed(again.Judged)).To(gomega.Equal(observed(got.Judged)))
	g.Expect(observed(again.Baseline)).To(gomega.Equal(observed(got.Baseline)))

	other := HealthNodesOf("ns/other-agent", nodes, judged, changed, unchanged)
	g.Expect(observed(other.Judged)).NotTo(gomega.Equal(observed(got.Judged)), "another agent's canary samples other nodes")
	// Not the first nodes by name: spread over the zone.
	first := []string{}
	for _, n := range newA[:MaxJudgedNodes] {
		first = append(first, n.Name+"@1s")
	}
	g.Expect(observed(got.Judged)).NotTo(gomega.Equal(first))
}
