package canary

import (
	"fmt"
	"testing"

	"github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/util/intstr"
)

func TestCount(t *testing.T) {
	pct := func(s string) *intstr.IntOrString { v := intstr.FromString(s); return &v }
	num := func(n int) *intstr.IntOrString { v := intstr.FromInt32(int32(n)); return &v }
	cases := []struct {
		name     string
		replicas *intstr.IntOrString
		desired  int
		want     int
	}{
		{"unset means one", nil, 10, 1},
		{"a count", num(3), 10, 3},
		{"a count above desired is capped", num(30), 10, 10},
		{"a percentage rounds up", pct("10%"), 25, 3},
		{"a small percentage still gives one", pct("1%"), 5, 1},
		{"all nodes", pct("100%"), 7, 7},
		{"no node, no canary", num(2), 0, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := gomega.NewWithT(t)
			got, err := Count(tc.replicas, tc.desired)
			g.Expect(err).NotTo(gomega.HaveOccurred())
			g.Expect(got).To(gomega.Equal(tc.want))
		})
	}
	_, err := Count(pct("ten%"), 10)
	gomega.NewWithT(t).Expect(err).To(gomega.MatchError(gomega.ContainSubstring("spec.strategy.canary.replicas")))
}

func zoned(n int, zones ...string) []Candidate {
	out := make([]Candidate, n)
	for i := range out {
		out[i] = Candidate{Name: fmt.Sprintf("node-%02d", i), Labels: map[string]string{"zone": zones[i%len(zones)]}}
	}
	return out
}

func TestSelectNodesSpreadsAcrossKeyValues(t *testing.T) {
	g := gomega.NewWithT(t)
	// Zones in blocks, so that name order alone would pick one zone only.
	nodes := zoned(12, "a")
	for i := range nodes {
		nodes[i].Labels["zone"] = []string{"a", "b", "c"}[i/4]
	}
	got := SelectNodes(nodes, 3, []string{"zone"}, nil)
	zones := map[string]bool{}
	for _, name := range got {
		for _, n := range nodes {
			if n.Name == name {
				zones[n.Labels["zone"]] = true
			}
		}
	}
	g.Expect(got).To(gomega.HaveLen(3))
	g.Expect(zones).To(gomega.HaveLen(3), "one canary per zone: %v", got)
	g.Expect(got).To(gomega.Equal([]string{"node-00", "node-04", "node-08"}))
}

func TestSelectNodesWithoutKeysPrefersFewestRestarts(t *testing.T) {
	g := gomega.NewWithT(t)
	nodes := zoned(4, "a")
	nodes[0].Restarts, nodes[1].Restarts, nodes[2].Restarts = 5, 0, 2
	g.Expect(SelectNodes(nodes, 2, nil, nil)).To(gomega.Equal([]string{"node-01", "node-03"}))
}

func TestSelectNodesRestartsBreakTiesWithinSpread(t *testing.T) {
	g := gomega.NewWithT(t)
	nodes := zoned(4, "a", "b") // node-00 a, node-01 b, node-02 a, node-03 b
	nodes[0].Restarts = 3
	g.Expect(SelectNodes(nodes, 2, []string{"zone"}, nil)).To(gomega.Equal([]string{"node-01", "node-02"}))
}

func TestSelectNodesIsStableAndReplacesVanishedNodes(t *testing.T) {
	g := gomega.NewWithT(t)
	nodes := zoned(9, "a", "b", "c")
	first := SelectNodes(nodes, 3, []string{"zone"}, nil)
	// Restart counts change later: the chosen nodes stay.
	for i := range nodes {
		nodes[i].Restarts = int32(10 - i)
	}
	g.Expect(SelectNodes(nodes, 3, []string{"zone"}, first)).To(gomega.Equal(first))

	// node-01 (zone b) disappears: one new pick, in zone b, the rest kept.
	var remaining []Candidate
	for _, n := range nodes {
		if n.Name != "node-01" {
			remaining = append(remaining, n)
		}
	}
	again := SelectNodes(remaining, 3, []string{"zone"}, first)
	g.Expect(again).To(gomega.ContainElements("node-00", "node-02"))
	g.Expect(again).To(gomega.HaveLen(3))
	g.Expect(again).NotTo(gomega.ContainElement("node-01"))
	g.Expect(again).To(gomega.ContainElement(gomega.BeElementOf("node-04", "node-07")), "replacement in zone b")
}

func TestSelectNodesBounds(t *testing.T) {
	g := gomega.NewWithT(t)
	nodes := zoned(3, "a")
	g.Expect(SelectNodes(nodes, 5, nil, nil)).To(gomega.HaveLen(3), "never more than the candidates")
	g.Expect(SelectNodes(nodes, 1, nil, []string{"node-02", "node-00"})).To(gomega.Equal([]string{"node-02"}),
		"fewer wanted than before: the earliest kept")
	g.Expect(SelectNodes(nil, 2, nil, []string{"node-00"})).To(gomega.BeEmpty())
	g.Expect(SelectNodes(nodes, 2, nil, []string{"node-00", "node-00"})).To(gomega.HaveLen(2), "a repeated name counts once")
}

func TestSelectNodesAtScale(t *testing.T) {
	g := gomega.NewWithT(t)
	nodes := zoned(5000, "a", "b", "c", "d", "e")
	got := SelectNodes(nodes, 500, []string{"zone"}, nil)
	g.Expect(got).To(gomega.HaveLen(500))
	perZone := map[string]int{}
	for _, n := range nodes {
		for _, name := range got {
			if name == n.Name {
				perZone[n.Labels["zone"]]++
			}
		}
	}
	for zone, count := range perZone {
		g.Expect(count).To(gomega.Equal(100), "zone %s", zone)
	}
}
