package e2e

import (
	"testing"

	"github.com/onsi/gomega"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
)

// A paused rolling update, by spec field or by annotation, keeps every old
// pod and says so; resuming finishes the rollout.
func TestRollingUpdatePause(t *testing.T) {
	s := newScenario(t)
	eds := agentEDS(s.ns, "agent", "v1")
	eds.Spec.Strategy.RollingUpdate.MaxUnavailable = ptr.To(intstr.FromString("25%"))
	eds = s.create(eds)
	nodes := s.nodeNames()
	eds, _ = s.expectRolledOut(eds, "v1", nodes)

	// Paused by the spec, in the same write as the new template.
	s.update(eds, func(e *v1alpha1.ExtendedDaemonSet) {
		setVersion(e, "v2")
		e.Spec.Strategy.RollingUpdate.Paused = true
	})
	s.expectPaused(eds, "v1")
	s.update(eds, func(e *v1alpha1.ExtendedDaemonSet) { e.Spec.Strategy.RollingUpdate.Paused = false })
	eds, _ = s.expectRolledOut(eds, "v2", nodes)

	// Paused by the annotation kubectl eds sets.
	s.update(eds, func(e *v1alpha1.ExtendedDaemonSet) {
		setVersion(e, "v3")
		annotate(e, v1alpha1.RollingUpdatePausedAnnotation, "true")
	})
	s.expectPaused(eds, "v2")
	s.update(eds, func(e *v1alpha1.ExtendedDaemonSet) { delete(e.Annotations, v1alpha1.RollingUpdatePausedAnnotation) })
	s.expectRolledOut(eds, "v3", nodes)
}

// expectPaused waits for eds to report its rolling update paused, then
// checks that the pods of version stay untouched for a while.
func (s *scenario) expectPaused(eds *v1alpha1.ExtendedDaemonSet, version string) {
	s.t.Helper()
	s.g.Eventually(func(g gomega.Gomega) {
		latest := s.get(eds)
		g.Expect(latest.Status.ObservedGeneration).To(gomega.Equal(latest.Generation))
		reconciling := apimeta.FindStatusCondition(latest.Status.Conditions, v1alpha1.ReconcilingCondition)
		g.Expect(reconciling).NotTo(gomega.BeNil())
		g.Expect(reconciling.Reason).To(gomega.Equal(v1alpha1.ReasonRollingUpdatePaused))
		g.Expect(apimeta.IsStatusConditionFalse(latest.Status.Conditions, v1alpha1.ReadyCondition)).To(gomega.BeTrue())
		g.Expect(kstatusOf(g, latest).Status).To(gomega.Equal(status.InProgressStatus))
	}).WithTimeout(rolloutTimeout).WithPolling(pollInterval).Should(gomega.Succeed())

	pods := s.pods(s.g, eds)
	for _, pod := range pods {
		s.g.Expect(pod.Spec.Containers[0].Image).To(gomega.Equal(agentImage(version)), pod.Name)
	}
	s.g.Expect(pods).To(gomega.HaveLen(int(s.get(eds).Status.Desired)))
	s.expectPodsKept(eds, holdWindow, func(gomega.Gomega) {})
}
