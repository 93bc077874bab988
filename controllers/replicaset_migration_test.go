package controllers

import (
	"testing"
	"time"

	"github.com/fluxcd/pkg/runtime/conditions"
	"github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
)

// An ExtendedDaemonSet annotated with the DaemonSet it replaces leaves the
// DaemonSet's pods alone while it manages them, then, once it is deleted
// with --cascade=orphan, takes over its nodes one at a time (maxUnavailable
// 1): each old pod is deleted only while every other node still runs a pod,
// and the node gets its new pod as soon as the old one is gone.
func TestMigrationFromDaemonSetReplacesItsPodsUnderMaxUnavailable(t *testing.T) {
	s := newScenario(t)
	nodes := []*corev1.Node{s.createNode("a", nil), s.createNode("b", nil), s.createNode("c", nil)}
	legacy := &appsv1.DaemonSet{
		ObjectMeta: metav1.ObjectMeta{Name: "legacy", Namespace: s.ns},
		Spec: appsv1.DaemonSetSpec{
			Selector:       &metav1.LabelSelector{MatchLabels: map[string]string{"app": "legacy"}},
			UpdateStrategy: appsv1.DaemonSetUpdateStrategy{Type: appsv1.OnDeleteDaemonSetStrategyType},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "legacy"}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "agent", Image: imageV1}}},
			},
		},
	}
	s.create(legacy)
	// No DaemonSet controller runs here: its pods are made as it would.
	old := map[string]*corev1.Pod{}
	for _, n := range nodes {
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{
				GenerateName: "legacy-", Namespace: s.ns, Labels: map[string]string{"app": "legacy"},
				OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "DaemonSet", Name: legacy.Name,
					UID: legacy.UID, Controller: ptr.To(true)}},
			},
			Spec: corev1.PodSpec{NodeName: n.Name, Containers: []corev1.Container{{Name: "agent", Image: imageV1}}},
		}
		s.create(pod)
		s.runPod(pod)
		old[n.Name] = pod
	}

	eds := s.newEDS("agent", imageV2)
	eds.Annotations = map[string]string{v1alpha1.OldDaemonSetAnnotation: legacy.Name}
	s.create(eds)
	ers := s.activeReplicaSet(eds.Name)

	// While the DaemonSet manages its pods, they hold their nodes.
	s.g.Eventually(func(g gomega.Gomega) {
		g.Expect(conditions.GetReason(s.getEDS(g, eds.Name), v1alpha1.ReconcilingCondition)).To(gomega.Equal(v1alpha1.ReasonWaitingForOldDaemonSet))
		g.Expect(conditions.GetMessage(s.getEDS(g, eds.Name), v1alpha1.ReconcilingCondition)).To(gomega.ContainSubstring("--cascade=orphan"))
	}).Should(gomega.Succeed())
	s.g.Consistently(func(g gomega.Gomega) {
		for _, pod := range old {
			g.Expect(s.gone(g, pod)).To(gomega.BeFalse(), "a pod its DaemonSet would recreate was deleted")
		}
		g.Expect(s.podsOf(g, ers)).To(gomega.BeEmpty(), "a second agent beside a DaemonSet pod")
	}).WithTimeout(3 * time.Second).Should(gomega.Succeed())

	// No garbage collector runs here: the DaemonSet stays, terminating, with
	// the orphan finalizer, as it does until the collector releases its pods.
	s.g.Expect(k8s.Delete(s.ctx, legacy, client.PropagationPolicy(metav1.DeletePropagationOrphan))).To(gomega.Succeed())
	for range nodes {
		var node string
		s.g.Eventually(func(g gomega.Gomega) {
			var gone []string
			for name, pod := range old {
				if s.gone(g, pod) {
					gone = append(gone, name)
				}
			}
			g.Expect(gone).To(gomega.HaveLen(1), "DaemonSet pods being replaced at once")
			node = gone[0]
		}).Should(gomega.Succeed())
		s.g.Expect(s.podsOf(s.g, ers)).To(gomega.HaveLen(len(nodes)-len(old)), "a new pod beside a terminating old one")
		s.finishDeletion(old[node])
		delete(old, node)
		next := s.podOn(ers, node)
		s.runPod(&next)
	}
	s.g.Eventually(func(g gomega.Gomega) { expectRolledOut(g, s.getEDS(g, eds.Name)) }).Should(gomega.Succeed())
}
