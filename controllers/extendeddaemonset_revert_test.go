package controllers

import (
	"testing"
	"time"

	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
)

// A canary reverted in git under a Sequential topology with an hour's
// bake: its node, in the last zone, goes back to the active template at
// once, not after the earlier zones' bakes.
func TestRevertedCanaryReturnsAtOnceUnderATopology(t *testing.T) {
	s := newScenario(t)
	nodes := []*corev1.Node{
		s.createNode("a", map[string]string{zoneLabel: "zone-a"}),
		s.createNode("b", map[string]string{zoneLabel: "zone-b"}),
		s.createNode("c", map[string]string{zoneLabel: "zone-c"}),
	}
	eds := s.newEDS("agent", imageV1)
	eds.Spec.Strategy.RollingUpdate.MaxUnavailable = ptr.To(intstr.FromInt32(3))
	eds.Spec.Strategy.RollingUpdate.Topology = &v1alpha1.RollingUpdateTopology{
		Key: zoneLabel, DomainBakeTime: &metav1.Duration{Duration: time.Hour},
	}
	eds.Spec.Strategy.Canary = &v1alpha1.CanaryStrategy{
		Replicas: ptr.To(intstr.FromInt32(1)), ValidationMode: v1alpha1.CanaryValidationManual,
		NodeSelector: &metav1.LabelSelector{MatchLabels: map[string]string{zoneLabel: "zone-c"}},
	}
	first, stable := s.createRolledOut(eds, nodes...)
	// Status times are kept to the second: a canary pod is told from the
	// pods the active replica set rolls out over by being created in a
	// later second than it became active, as any canary of a person's is.
	time.Sleep(time.Second)
	s.setImage(eds, imageV2)
	second, canaryNodes := s.runningCanary(eds.Name)
	s.g.Expect(canaryNodes).To(gomega.Equal([]string{nodes[2].Name}))
	canaryPod := s.replaceOnNode(stable[nodes[2].Name], second)

	s.setImage(eds, imageV1)
	s.g.Eventually(func(g gomega.Gomega) {
		e := s.getEDS(g, eds.Name)
		g.Expect(e.Status.ActiveReplicaSet).To(gomega.Equal(first))
		g.Expect(e.Status.Canary).To(gomega.BeNil())
	}).Should(gomega.Succeed())
	s.g.Eventually(func(g gomega.Gomega) { g.Expect(s.gone(g, &canaryPod)).To(gomega.BeTrue()) }).WithTimeout(30*time.Second).
		Should(gomega.Succeed(), "the reverted canary's node waits for zone-a's and zone-b's bakes")
	s.replaceOnNode(canaryPod, first)
	s.g.Eventually(func(g gomega.Gomega) { expectRolledOut(g, s.getEDS(g, eds.Name)) }).Should(gomega.Succeed())
}
