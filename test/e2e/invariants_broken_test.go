package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
	"github.com/extendeddaemonset/extendeddaemonset/controllers"
	"github.com/extendeddaemonset/extendeddaemonset/test/invariants"
)

// The monitor every scenario runs catches each broken promise on the live
// cluster: here the test plays a faulty controller and breaks them all, one
// after the other, through the API.
func TestInvariantMonitorCatchesEveryBrokenRule(t *testing.T) {
	s := newScenario(t)
	s.breakingOnPurpose.Store(true)
	eds := agentEDS(s.ns, "agent", "v1")
	eds.Spec.Strategy.Canary = &v1alpha1.CanaryStrategy{Replicas: ptr.To(intstr.FromInt32(2)), Duration: &metav1.Duration{Duration: time.Hour}}
	s.create(eds)
	nodes := s.nodeNames()
	s.expectRolledOut(eds, "v1", nodes)
	s.g.Expect(s.monitor.Report().Violations).To(gomega.BeEmpty(), "a clean rollout breaks nothing")

	// A second pod on a node, with maxSurge 0.
	s.createStray(eds, s.podOn(eds, nodes[0]), "")
	s.expectBroken(invariants.TwoPods)

	// Three agents down at once, with maxUnavailable 1.
	for _, node := range nodes[1:4] {
		pod := s.podOn(eds, node)
		s.g.Expect(env.Client.Delete(s.ctx, &pod)).To(gomega.Succeed())
	}
	s.expectBroken(invariants.Unavailable)

	// The spec written by the controller's field manager.
	s.g.Eventually(func(g gomega.Gomega) {
		latest := s.get(eds)
		setVersion(latest, "v2")
		g.Expect(env.Client.Update(s.ctx, latest, client.FieldOwner(controllers.FieldOwner))).To(gomega.Succeed())
	}).WithTimeout(rolloutTimeout).WithPolling(pollInterval).Should(gomega.Succeed())
	s.expectBroken(invariants.SpecWritten)

	// A pod of the failed canary's template off its nodes.
	var canary *v1alpha1.CanaryStatus
	s.g.Eventually(func(g gomega.Gomega) {
		canary = s.get(eds).Status.Canary
		g.Expect(canary).NotTo(gomega.BeNil())
		g.Expect(canary.Nodes).To(gomega.HaveLen(2))
	}).WithTimeout(rolloutTimeout).WithPolling(pollInterval).Should(gomega.Succeed())
	s.update(eds, func(e *v1alpha1.ExtendedDaemonSet) { annotate(e, v1alpha1.CanaryFailedAnnotation, canary.ReplicaSet) })
	s.g.Eventually(func(g gomega.Gomega) {
		g.Expect(s.get(eds).Status.Canary.Failed).To(gomega.BeTrue())
	}).WithTimeout(rolloutTimeout).WithPolling(pollInterval).Should(gomega.Succeed())
	offCanary := without(nodes[4:], canary.Nodes...)[0]
	s.createStray(eds, s.podOn(eds, offCanary), canary.ReplicaSet)
	s.expectBroken(invariants.FailedTemplate)

	// The canary promoted long before its hour.
	s.g.Eventually(func(g gomega.Gomega) {
		latest := s.get(eds)
		latest.Status.ActiveReplicaSet, latest.Status.Canary = canary.ReplicaSet, nil
		g.Expect(env.Client.Status().Update(s.ctx, latest)).To(gomega.Succeed())
	}).WithTimeout(rolloutTimeout).WithPolling(pollInterval).Should(gomega.Succeed())
	s.expectBroken(invariants.EarlyPromotion)
	t.Logf("the monitor saw:\n%s", s.monitor.Report())
}

// createStray creates a pod like model on its node, of replicaSet when
// given, that no controller owns; it is deleted at the end of the test.
func (s *scenario) createStray(eds *v1alpha1.ExtendedDaemonSet, model corev1.Pod, replicaSet string) {
	stray := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{
		Name: fmt.Sprintf("stray-%s", model.Spec.NodeName), Namespace: s.ns, Labels: model.Labels,
	}, Spec: model.Spec}
	if replicaSet != "" {
		stray.Labels = map[string]string{v1alpha1.ExtendedDaemonSetNameLabel: eds.Name, v1alpha1.ExtendedDaemonSetReplicaSetNameLabel: replicaSet}
	}
	s.g.Expect(env.Client.Create(s.ctx, stray)).To(gomega.Succeed())
	s.t.Cleanup(func() { _ = env.Client.Delete(context.Background(), stray, client.GracePeriodSeconds(0)) })
}

// expectBroken waits until the monitor reports a violation of rule.
func (s *scenario) expectBroken(rule invariants.Rule) {
	s.t.Helper()
	s.g.Eventually(func() []invariants.Rule {
		var rules []invariants.Rule
		for _, v := range s.monitor.Report().Violations {
			rules = append(rules, v.Rule)
		}
		return rules
	}).WithTimeout(rolloutTimeout).WithPolling(pollInterval).Should(gomega.ContainElement(rule))
}
