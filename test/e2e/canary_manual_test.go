package e2e

import (
	"testing"

	"github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
)

// A manual canary waits for a person however long it runs, reported as
// paused (what GitOps tools show as suspended) rather than as running; a
// validation, by the annotation kubectl eds sets or by the spec field git
// owns, promotes it and the rolling update takes every node.
func TestManualCanaryWaitsForValidation(t *testing.T) {
	s := newScenario(t)
	eds, nodes := s.createAgent(&v1alpha1.CanaryStrategy{
		Replicas: ptr.To(intstr.FromInt32(2)), ValidationMode: v1alpha1.CanaryValidationManual,
	})

	s.update(eds, func(e *v1alpha1.ExtendedDaemonSet) { setVersion(e, "v2") })
	canary := s.expectCanaryHolds(eds, nodes, "v1", "v2", canaryPaused, "WaitingForValidation", 0)
	s.g.Expect(canary.Nodes).To(gomega.HaveLen(2))
	s.expectEvent(eds, "CanaryStarted", canary.ReplicaSet)
	s.update(eds, func(e *v1alpha1.ExtendedDaemonSet) {
		annotate(e, v1alpha1.CanaryValidatedAnnotation, canary.ReplicaSet)
	})
	s.expectPromoted(eds, "v2", nodes, canary.ReplicaSet)

	s.update(eds, func(e *v1alpha1.ExtendedDaemonSet) { setVersion(e, "v3") })
	canary = s.expectCanaryHolds(eds, nodes, "v2", "v3", canaryPaused, "WaitingForValidation", 0)
	s.update(eds, func(e *v1alpha1.ExtendedDaemonSet) { e.Spec.Strategy.Canary.Validate = canary.ReplicaSet })
	s.expectPromoted(eds, "v3", nodes, canary.ReplicaSet)
}
