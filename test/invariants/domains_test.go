package invariants

import (
	"fmt"
	"testing"

	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
)

// zonedFleet is a fleet of 6 nodes, node-0..2 in zone-a and node-3..5 in
// zone-b, rolled out by zone with perDomain, under a global budget of 3.
func zonedFleet(t *testing.T, perDomain *intstr.IntOrString) *fleet {
	f := newFleet(t, 6, intstr.FromInt32(3), intstr.FromInt32(0))
	f.eds.Spec.Strategy.RollingUpdate.Topology = &v1alpha1.RollingUpdateTopology{
		Key: corev1.LabelTopologyZone, MaxUnavailablePerDomain: perDomain,
	}
	f.c.ExtendedDaemonSet(f.eds.DeepCopy(), false, f.step())
	for i := range 6 {
		node := readyNode(fmt.Sprintf("node-%d", i))
		node.Labels = map[string]string{corev1.LabelTopologyZone: []string{"zone-a", "zone-b"}[i/3]}
		f.c.Node(node, false, f.step())
	}
	return f
}

func TestDomainBeyondItsBudgetIsCaughtWithinTheGlobalOne(t *testing.T) {
	g := gomega.NewWithT(t)
	f := zonedFleet(t, nil)
	f.remove("node-0")
	f.remove("node-3")
	g.Expect(f.settle()).To(gomega.BeEmpty(), "one node down in each zone is each zone's default budget")
	f.remove("node-1")
	g.Expect(rules(f.settle())).To(gomega.Equal([]Rule{DomainUnavailable}), "3 nodes down is the global budget, 2 in zone-a is not")
	g.Expect(f.c.Violations()[0].Message).To(gomega.ContainSubstring(
		"2 nodes of domain zone-a without an available agent (node-0, node-1), maxUnavailablePerDomain allows 1 of 3"))
}

func TestDomainPercentBudgetRoundsUpAgainstTheDomainsNodes(t *testing.T) {
	g := gomega.NewWithT(t)
	f := zonedFleet(t, new(intstr.FromString("50%")))
	f.remove("node-0")
	f.remove("node-1")
	g.Expect(f.settle()).To(gomega.BeEmpty(), "50% of zone-a's 3 nodes rounds up to 2")
	f.remove("node-2")
	g.Expect(rules(f.settle())).To(gomega.Equal([]Rule{DomainUnavailable}))
}

func TestNodesWithoutTheKeyAreADomainOfTheirOwn(t *testing.T) {
	g := gomega.NewWithT(t)
	f := zonedFleet(t, nil)
	for _, name := range []string{"node-2", "node-5"} {
		f.c.Node(readyNode(name), false, f.step()) // the zone label removed
	}
	f.remove("node-0")
	f.remove("node-3")
	f.remove("node-2")
	g.Expect(f.settle()).To(gomega.BeEmpty(), "node-2 is in no zone: one node down in each of 3 domains")
	f.remove("node-5")
	g.Expect(rules(f.settle())).To(gomega.ContainElement(DomainUnavailable))
	g.Expect(f.c.Violations()).To(gomega.ContainElement(gomega.HaveField("Message", gomega.ContainSubstring("domain (none)"))))
}
