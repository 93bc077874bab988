package invariants

import (
	"testing"

	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// draining is a cordoned node with a drain in progress, as KEP-5683's lifecycle
// conditions say.
func draining(name string) *corev1.Node {
	node := readyNode(name)
	node.Spec.Unschedulable = true
	node.Status.Conditions = append(node.Status.Conditions, corev1.NodeCondition{Type: "DrainInProgress", Status: corev1.ConditionTrue})
	return node
}

// A node in maintenance counts against no budget: its agent may go, and
// the rollout may take one more down elsewhere; back from maintenance, it
// counts again.
func TestNodesInMaintenanceAreOutOfTheBudget(t *testing.T) {
	g := gomega.NewWithT(t)
	f := newFleet(t, 4, intstr.FromInt32(1), intstr.FromInt32(0))
	f.c.Node(draining("node-0"), false, f.step())
	f.remove("node-0")
	f.remove("node-1")
	g.Expect(f.settle()).To(gomega.BeEmpty(), "node-0 is in maintenance: one node down is the budget")
	f.remove("node-2")
	g.Expect(rules(f.settle())).To(gomega.Equal([]Rule{Unavailable}))
	g.Expect(f.c.Violations()[0].Message).To(gomega.ContainSubstring("2 nodes without an available agent (node-1, node-2), maxUnavailable allows 1 of 3"))
}

// The same, per domain.
func TestNodesInMaintenanceAreOutOfTheirDomainsBudget(t *testing.T) {
	g := gomega.NewWithT(t)
	f := zonedFleet(t, nil)
	node := draining("node-0")
	node.Labels = map[string]string{corev1.LabelTopologyZone: "zone-a"}
	f.c.Node(node, false, f.step())
	f.remove("node-0")
	f.remove("node-1")
	g.Expect(f.settle()).To(gomega.BeEmpty(), "node-0 is in maintenance: one node of zone-a down is its budget")
	f.remove("node-2")
	g.Expect(rules(f.settle())).To(gomega.Equal([]Rule{DomainUnavailable}))
	g.Expect(f.c.Violations()[0].Message).To(gomega.ContainSubstring("(node-1, node-2), maxUnavailablePerDomain allows 1 of 2"))
}

// A canary pod never goes on a node in maintenance, unless it entered
// maintenance too recently for the controller to know.
func TestCanaryOnANodeInMaintenanceIsCaught(t *testing.T) {
	g := gomega.NewWithT(t)
	f := canaryFleet(t, false)
	f.c.Node(draining("node-1"), false, f.step())
	f.remove("node-2")
	f.create("node-2", "v2", false)
	g.Expect(f.settle()).To(gomega.BeEmpty(), "node-2 is not in maintenance")
	f.remove("node-1")
	f.create("node-1", "v2", false)
	g.Expect(rules(f.settle())).To(gomega.Equal([]Rule{CanaryInMaintenance}))
	g.Expect(f.c.Violations()[0].Message).To(gomega.ContainSubstring("created on node node-1, in maintenance (DrainInProgress)"))
}

func TestCanaryOnANodeJustEnteringMaintenanceIsNotHeldAgainstIt(t *testing.T) {
	g := gomega.NewWithT(t)
	f := canaryFleet(t, false)
	f.remove("node-1")
	f.c.Node(draining("node-1"), false, f.now)
	f.create("node-1", "v2", false)
	g.Expect(f.settle()).To(gomega.BeEmpty(), "the controller could not know yet")
}

// Percentages resolve, as the controller resolves them, against every node
// the template fits, those in maintenance included: 10% of 11 nodes rounds
// up to 2, though only 10 count against it.
func TestPercentBudgetCountsTheNodesInMaintenance(t *testing.T) {
	g := gomega.NewWithT(t)
	f := newFleet(t, 11, intstr.FromString("10%"), intstr.FromInt32(0))
	f.c.Node(draining("node-10"), false, f.step())
	f.remove("node-0")
	f.remove("node-1")
	g.Expect(f.settle()).To(gomega.BeEmpty(), "10%% of 11 nodes rounds up to 2")
	f.remove("node-2")
	g.Expect(rules(f.settle())).To(gomega.Equal([]Rule{Unavailable}))
}
