package controllers

import (
	"testing"

	"github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
	"github.com/extendeddaemonset/extendeddaemonset/controllers/canary"
)

// v2 validated, rolled back to v1, then v2 applied again: its replica set
// is reused, and the validation left behind for it is not taken for a
// validation of the new canary, which waits; a validation naming the new
// instance promotes it.
func TestCanarySteeringLeftBehindDoesNotPromoteAReappliedTemplate(t *testing.T) {
	s := newScenario(t)
	node := s.createNode("a", nil)
	eds := s.newEDS("agent", imageV1)
	eds.Spec.Strategy.Canary = &v1alpha1.CanaryStrategy{
		Replicas: ptr.To(intstr.FromInt32(1)), ValidationMode: v1alpha1.CanaryValidationManual,
	}
	first, stable := s.createRolledOut(eds, node)
	pod := stable[node.Name]

	waitCanary := func(rs string) *v1alpha1.CanaryStatus {
		var c *v1alpha1.CanaryStatus
		s.g.Eventually(func(g gomega.Gomega) {
			c = s.getEDS(g, eds.Name).Status.Canary
			g.Expect(c).NotTo(gomega.BeNil())
			g.Expect(c.ReplicaSet).To(gomega.Equal(rs))
			g.Expect(c.Nodes).To(gomega.HaveLen(1))
		}).Should(gomega.Succeed())
		return c
	}
	waitActive := func(rs string) {
		s.g.Eventually(func(g gomega.Gomega) {
			e := s.getEDS(g, eds.Name)
			g.Expect(e.Status.ActiveReplicaSet).To(gomega.Equal(rs))
			g.Expect(e.Status.Canary).To(gomega.BeNil())
		}).Should(gomega.Succeed())
	}

	// v2, validated by the annotation naming its replica set.
	s.setImage(eds, imageV2)
	var second string
	s.g.Eventually(func(g gomega.Gomega) {
		c := s.getEDS(g, eds.Name).Status.Canary
		g.Expect(c).NotTo(gomega.BeNil())
		second = c.ReplicaSet
	}).Should(gomega.Succeed())
	pod = s.replaceOnNode(pod, second)
	s.annotate(eds, v1alpha1.CanaryValidatedAnnotation, second)
	waitActive(second)

	// Rolled back to v1, validated from git.
	s.setImage(eds, imageV1)
	waitCanary(first)
	pod = s.replaceOnNode(pod, first)
	s.updateEDS(eds, func(e *v1alpha1.ExtendedDaemonSet) { e.Spec.Strategy.Canary.Validate = first })
	waitActive(first)

	// v2 again: the same replica set, a new canary instance.
	s.setImage(eds, imageV2)
	again := waitCanary(second)
	s.replaceOnNode(pod, second)
	s.g.Expect(again.LeftoverSteering).To(gomega.HaveKeyWithValue(v1alpha1.CanaryValidatedAnnotation, second))
	s.g.Consistently(func(g gomega.Gomega) {
		e := s.getEDS(g, eds.Name)
		g.Expect(e.Status.ActiveReplicaSet).To(gomega.Equal(first), "promoted by the validation of an earlier canary")
		g.Expect(e.Status.Canary).NotTo(gomega.BeNil())
		g.Expect(e.Status.Canary.Reason).To(gomega.Equal(canary.ReasonWaitingForValidation))
	}).Should(gomega.Succeed())

	s.annotate(eds, v1alpha1.CanaryValidatedAnnotation, canary.SteeringValue(again))
	waitActive(second)
}
