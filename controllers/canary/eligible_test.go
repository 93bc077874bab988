package canary

import (
	"testing"

	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// readyNode is a healthy node: Ready, schedulable, untainted.
func readyNode(name string, mutate ...func(*corev1.Node)) *corev1.Node {
	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"zone": "a"}},
		Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{
			{Type: corev1.NodeMemoryPressure, Status: corev1.ConditionFalse},
			{Type: corev1.NodeReady, Status: corev1.ConditionTrue},
		}},
	}
	for _, m := range mutate {
		m(node)
	}
	return node
}

func readiness(status corev1.ConditionStatus) func(*corev1.Node) {
	return func(n *corev1.Node) { n.Status.Conditions[1].Status = status }
}

func tainted(key string, effect corev1.TaintEffect) func(*corev1.Node) {
	return func(n *corev1.Node) { n.Spec.Taints = append(n.Spec.Taints, corev1.Taint{Key: key, Effect: effect}) }
}

func condition(t corev1.NodeConditionType, s corev1.ConditionStatus) func(*corev1.Node) {
	return func(n *corev1.Node) {
		n.Status.Conditions = append(n.Status.Conditions, corev1.NodeCondition{Type: t, Status: s})
	}
}

func TestEligible(t *testing.T) {
	cases := []struct {
		name   string
		mutate func(*corev1.Node)
		want   bool
	}{
		{"a Ready node", nil, true},
		{"a node with an unrelated taint", tainted("dedicated", corev1.TaintEffectNoSchedule), true},
		{"not Ready", readiness(corev1.ConditionFalse), false},
		{"Ready unknown", readiness(corev1.ConditionUnknown), false},
		{"no Ready condition", func(n *corev1.Node) { n.Status.Conditions = n.Status.Conditions[:1] }, false},
		{"cordoned", func(n *corev1.Node) { n.Spec.Unschedulable = true }, false},
		{"disrupted by Karpenter", tainted("karpenter.sh/disrupted", corev1.TaintEffectNoSchedule), false},
		{"not-ready taint", tainted(corev1.TaintNodeNotReady, corev1.TaintEffectNoExecute), false},
		{"unreachable taint", tainted(corev1.TaintNodeUnreachable, corev1.TaintEffectNoSchedule), false},
		{"removed by the cluster autoscaler", tainted("ToBeDeletedByClusterAutoscaler", corev1.TaintEffectNoSchedule), false},
		{"being deleted", func(n *corev1.Node) { n.DeletionTimestamp = &metav1.Time{Time: start} }, false},
		{"draining", condition("DrainInProgress", corev1.ConditionTrue), false},
		{"drained", condition("Drained", corev1.ConditionTrue), false},
		{"in maintenance", condition("MaintenanceInProgress", corev1.ConditionTrue), false},
		{"shutting down", condition("GracefulNodeShutdownInProgress", corev1.ConditionTrue), false},
		{"out of service", tainted(corev1.TaintNodeOutOfService, corev1.TaintEffectNoExecute), false},
		{"maintenance only planned", condition("MaintenancePlanned", corev1.ConditionTrue), true},
		{"a drain that ended", condition("DrainInProgress", corev1.ConditionFalse), true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := gomega.NewWithT(t)
			node := readyNode("node-00")
			if tc.mutate != nil {
				tc.mutate(node)
			}
			ok, why := Eligible(node)
			g.Expect(ok).To(gomega.Equal(tc.want))
			if tc.want {
				g.Expect(why).To(gomega.BeEmpty())
			} else {
				g.Expect(why).NotTo(gomega.BeEmpty(), "a refusal says why")
			}
		})
	}
}

func TestNewCandidate(t *testing.T) {
	g := gomega.NewWithT(t)
	c := NewCandidate(readyNode("node-00"), 3)
	g.Expect(c).To(gomega.Equal(Candidate{Name: "node-00", Labels: map[string]string{"zone": "a"}, Restarts: 3}))
	c = NewCandidate(readyNode("node-01", readiness(corev1.ConditionFalse)), 0)
	g.Expect(c.Unhealthy).NotTo(gomega.BeEmpty())
	g.Expect(c.Maintenance).To(gomega.BeEmpty(), "not Ready is no maintenance")
	c = NewCandidate(readyNode("node-02", condition("DrainInProgress", corev1.ConditionTrue)), 0)
	g.Expect(c.Maintenance).To(gomega.Equal("DrainInProgress"))
	g.Expect(c.Unhealthy).To(gomega.Equal("the node is in maintenance: DrainInProgress"))
	g.Expect(c.NotReady).To(gomega.BeFalse())
}

// TestSelectNodesPicksOnlyHealthyNodes: new picks are healthy nodes, while
// a node already chosen stays chosen when it turns unhealthy, so a canary
// does not hop nodes when one blips NotReady.
func TestSelectNodesPicksOnlyHealthyNodes(t *testing.T) {
	unhealthy := func(names ...string) []Candidate {
		nodes := zoned(4, "a")
		for i := range nodes {
			for _, name := range names {
				if nodes[i].Name == name {
					nodes[i].Unhealthy = "not Ready"
				}
			}
		}
		return nodes
	}
	cases := []struct {
		name       string
		candidates []Candidate
		want       int
		previous   []string
		chosen     []string
	}{
		{"an unhealthy node is never a new pick", unhealthy("node-00"), 1, nil, []string{"node-01"}},
		{"fewest restarts among healthy nodes only", func() []Candidate {
			nodes := unhealthy("node-01")
			nodes[0].Restarts, nodes[2].Restarts, nodes[3].Restarts = 4, 2, 2
			return nodes
		}(), 1, nil, []string{"node-02"}},
		{"a chosen node that turns unhealthy stays", unhealthy("node-02"), 1, []string{"node-02"}, []string{"node-02"}},
		{"more wanted: new picks healthy, chosen kept", unhealthy("node-00", "node-02"), 3, []string{"node-02"}, []string{"node-01", "node-02", "node-03"}},
		{"no healthy node: no new pick", unhealthy("node-00", "node-01", "node-02", "node-03"), 2, []string{"node-03"}, []string{"node-03"}},
		{"a vanished chosen node is replaced by a healthy one", unhealthy("node-00"), 1, []string{"node-09"}, []string{"node-01"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := gomega.NewWithT(t)
			g.Expect(SelectNodes(tc.candidates, tc.want, nil, tc.previous)).To(gomega.Equal(tc.chosen))
		})
	}
}
