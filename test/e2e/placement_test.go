package e2e

import (
	"testing"

	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
)

// Pods follow the nodes: a new node gets one; a node that leaves the node
// selector, takes an untolerated NoExecute taint or is deleted loses it;
// an untolerated NoSchedule taint keeps the running pod, as for DaemonSets.
// The test works on nodes of its own.
func TestPlacementFollowsNodes(t *testing.T) {
	s := newScenario(t)
	eds := agentEDS(s.ns, "agent", "v1")
	eds.Spec.Template.Spec.NodeSelector = map[string]string{"type": "kwok"}
	eds = s.create(eds)
	base := s.nodeNames()
	s.expectRolledOut(eds, "v1", base)

	relabeled, noExecute, noSchedule, deleted := "e2e-relabeled", "e2e-noexecute", "e2e-noschedule", "e2e-deleted"
	s.addNodes(relabeled, noExecute, noSchedule, deleted)
	all := s.nodeNames()
	s.expectRolledOut(eds, "v1", all)

	s.updateNode(relabeled, func(n *corev1.Node) { n.Labels["type"] = "other" })
	s.expectRolledOut(eds, "v1", without(all, relabeled))

	s.updateNode(noExecute, func(n *corev1.Node) {
		n.Spec.Taints = append(n.Spec.Taints, corev1.Taint{Key: "e2e/evict", Effect: corev1.TaintEffectNoExecute})
	})
	s.expectRolledOut(eds, "v1", without(all, relabeled, noExecute))

	// The node stops counting as desired but keeps its pod, which does not
	// hold the rollout back, not even a rollout of a new template.
	kept := s.podOn(eds, noSchedule)
	s.updateNode(noSchedule, func(n *corev1.Node) {
		n.Spec.Taints = append(n.Spec.Taints, corev1.Taint{Key: "e2e/no-new-pods", Effect: corev1.TaintEffectNoSchedule})
	})
	eligible := without(all, relabeled, noExecute, noSchedule)
	s.expectRolledOut(eds, "v1", eligible, kept)
	s.g.Consistently(func(g gomega.Gomega) {
		pod := &corev1.Pod{}
		g.Expect(env.Client.Get(s.ctx, client.ObjectKeyFromObject(&kept), pod)).To(gomega.Succeed())
		g.Expect(pod.UID).To(gomega.Equal(kept.UID))
		g.Expect(pod.DeletionTimestamp).To(gomega.BeNil(), "pod on the NoSchedule node deleted")
	}).WithTimeout(holdWindow).WithPolling(pollInterval).Should(gomega.Succeed())
	s.update(eds, func(e *v1alpha1.ExtendedDaemonSet) { setVersion(e, "v2") })
	s.expectRolledOut(eds, "v2", eligible, kept)

	// The pod of a deleted node goes (the pod garbage collector finishes
	// what the controller starts: no kubelet is left to).
	gone := s.podOn(eds, deleted)
	s.g.Expect(env.Kube.CoreV1().Nodes().Delete(s.ctx, deleted, metav1.DeleteOptions{})).To(gomega.Succeed())
	s.expectRolledOut(eds, "v2", without(eligible, deleted), kept)
	s.g.Eventually(func(g gomega.Gomega) {
		err := env.Client.Get(s.ctx, client.ObjectKeyFromObject(&gone), &corev1.Pod{})
		g.Expect(apierrors.IsNotFound(err)).To(gomega.BeTrue(), "pod %s of the deleted node: %v", gone.Name, err)
	}).WithTimeout(rolloutTimeout).WithPolling(pollInterval).Should(gomega.Succeed())
}
