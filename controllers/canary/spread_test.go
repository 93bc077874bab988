package canary

import (
	"testing"

	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
)

// The canary spreads across the topology key unless it names keys of its
// own.
func TestSpread(t *testing.T) {
	g := gomega.NewWithT(t)
	eds := &v1alpha1.ExtendedDaemonSet{}
	g.Expect(Spread(eds)).To(gomega.BeNil(), "no canary")
	eds.Spec.Strategy.Canary = &v1alpha1.CanaryStrategy{}
	g.Expect(Spread(eds).NodeAntiAffinityKeys).To(gomega.BeEmpty())
	eds.Spec.Strategy.RollingUpdate.Topology = &v1alpha1.RollingUpdateTopology{Key: corev1.LabelTopologyZone}
	g.Expect(Spread(eds).NodeAntiAffinityKeys).To(gomega.Equal([]string{corev1.LabelTopologyZone}))
	g.Expect(eds.Spec.Strategy.Canary.NodeAntiAffinityKeys).To(gomega.BeEmpty(), "the spec was changed")
	eds.Spec.Strategy.Canary.NodeAntiAffinityKeys = []string{"rack"}
	g.Expect(Spread(eds).NodeAntiAffinityKeys).To(gomega.Equal([]string{"rack"}))
}
