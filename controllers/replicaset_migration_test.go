package controllers

import (
	"testing"
	"time"

	"github.com/fluxcd/pkg/runtime/conditions"
	"github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
	"github.com/extendeddaemonset/extendeddaemonset/controllers/placement"
)

// legacyDaemonSet creates a DaemonSet named legacy whose pods carry
// podLabels, and its pods on nodes, Running and Ready, as the DaemonSet
// controller (which does not run here) would; it returns them by node.
func (s *scenario) legacyDaemonSet(podLabels map[string]string, nodes ...*corev1.Node) (*appsv1.DaemonSet, map[string]*corev1.Pod) {
	s.t.Helper()
	legacy := &appsv1.DaemonSet{
		ObjectMeta: metav1.ObjectMeta{Name: "legacy", Namespace: s.ns},
		Spec: appsv1.DaemonSetSpec{
			Selector:       &metav1.LabelSelector{MatchLabels: podLabels},
			UpdateStrategy: appsv1.DaemonSetUpdateStrategy{Type: appsv1.OnDeleteDaemonSetStrategyType},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: podLabels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "agent", Image: imageV1}}},
			},
		},
	}
	s.create(legacy)
	old := map[string]*corev1.Pod{}
	for _, n := range nodes {
		old[n.Name] = s.runBarePod("legacy-", podLabels, n.Name, metav1.OwnerReference{
			APIVersion: "apps/v1", Kind: "DaemonSet", Name: legacy.Name, UID: legacy.UID, Controller: ptr.To(true),
		})
	}
	return legacy, old
}

// runBarePod creates a pod bound to node, owned by owners, and reports it
// Running and Ready.
func (s *scenario) runBarePod(generateName string, podLabels map[string]string, node string, owners ...metav1.OwnerReference) *corev1.Pod {
	s.t.Helper()
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{GenerateName: generateName, Namespace: s.ns, Labels: podLabels, OwnerReferences: owners},
		Spec:       corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "main", Image: imageV1}}},
	}
	s.create(pod)
	s.runPod(pod)
	return pod
}

// placed names pods with the nodes they are bound or pinned to.
func placed(pods []corev1.Pod) []string {
	out := make([]string, 0, len(pods))
	for _, p := range pods {
		out = append(out, p.Name+" on "+placement.TargetNode(&p))
	}
	return out
}

// expectWaitingForOldDaemonSet waits for eds to say it waits for the
// DaemonSet, with the command that lets it go on.
func (s *scenario) expectWaitingForOldDaemonSet(eds string) {
	s.t.Helper()
	s.g.Eventually(func(g gomega.Gomega) {
		g.Expect(conditions.GetReason(s.getEDS(g, eds), v1alpha1.ReconcilingCondition)).To(gomega.Equal(v1alpha1.ReasonWaitingForOldDaemonSet))
		g.Expect(conditions.GetMessage(s.getEDS(g, eds), v1alpha1.ReconcilingCondition)).To(gomega.ContainSubstring("--cascade=orphan"))
	}).Should(gomega.Succeed())
}

// replaceOldPods lets the handover of eds replace old, one node at a time
// (maxUnavailable 1): each old pod is deleted only while every other node
// still runs a pod, and the node gets a pod of replicaSetOn(node) as soon as
// the old one is gone. No pod of keep is ever deleted.
func (s *scenario) replaceOldPods(eds string, old map[string]*corev1.Pod, replicaSetOn func(node string) string, keep ...*corev1.Pod) {
	s.t.Helper()
	total := len(old)
	for range total {
		var node string
		s.g.Eventually(func(g gomega.Gomega) {
			for _, pod := range keep {
				if s.gone(g, pod) {
					gomega.StopTrying("pod " + pod.Name + ", not the agent's, was deleted").Now()
				}
			}
			var gone []string
			for name, pod := range old {
				if s.gone(g, pod) {
					gone = append(gone, name)
				}
			}
			g.Expect(gone).To(gomega.HaveLen(1), "old pods being replaced at once")
			node = gone[0]
		}).Should(gomega.Succeed())
		s.g.Expect(s.pods(s.g, map[string]string{v1alpha1.ExtendedDaemonSetNameLabel: eds})).To(gomega.HaveLen(total-len(old)),
			"a new pod beside a terminating old one")
		s.finishDeletion(old[node])
		delete(old, node)
		next := s.podOn(replicaSetOn(node), node)
		s.runPod(&next)
	}
}

// An ExtendedDaemonSet annotated with the DaemonSet it replaces leaves the
// DaemonSet's pods alone while it manages them, then, once it is deleted
// with --cascade=orphan, takes over its nodes one at a time (maxUnavailable
// 1): each old pod is deleted only while every other node still runs a pod,
// and the node gets its new pod as soon as the old one is gone.
func TestMigrationFromDaemonSetReplacesItsPodsUnderMaxUnavailable(t *testing.T) {
	s := newScenario(t)
	nodes := []*corev1.Node{s.createNode("a", nil), s.createNode("b", nil), s.createNode("c", nil)}
	legacy, old := s.legacyDaemonSet(map[string]string{"app": "legacy"}, nodes...)

	eds := s.newEDS("agent", imageV2)
	eds.Annotations = map[string]string{v1alpha1.OldDaemonSetAnnotation: legacy.Name}
	s.create(eds)
	ers := s.activeReplicaSet(eds.Name)

	// While the DaemonSet manages its pods, they hold their nodes.
	s.expectWaitingForOldDaemonSet(eds.Name)
	s.g.Consistently(func(g gomega.Gomega) {
		for _, pod := range old {
			g.Expect(s.gone(g, pod)).To(gomega.BeFalse(), "a pod its DaemonSet would recreate was deleted")
		}
		g.Expect(placed(s.podsOf(g, ers))).To(gomega.BeEmpty(), "a second agent beside a DaemonSet pod")
	}).WithTimeout(3 * time.Second).Should(gomega.Succeed())

	// No garbage collector runs here: the DaemonSet stays, terminating, with
	// the orphan finalizer, as it does until the collector releases its pods.
	s.g.Expect(k8s.Delete(s.ctx, legacy, client.PropagationPolicy(metav1.DeletePropagationOrphan))).To(gomega.Succeed())
	s.replaceOldPods(eds.Name, old, func(string) string { return ers })
	s.g.Eventually(func(g gomega.Gomega) { expectRolledOut(g, s.getEDS(g, eds.Name)) }).Should(gomega.Succeed())
}

// A template change pushed while the ExtendedDaemonSet waits for the
// DaemonSet starts a canary on nodes that run the DaemonSet's pods: the
// canary sees them as the old pods of its nodes, waits with the active
// replica set, and replaces them, under the one budget, once the DaemonSet
// is gone. No node ever runs two agents.
func TestCanaryDuringHandoverPutsNoSecondAgentBesideTheDaemonSetPod(t *testing.T) {
	s := newScenario(t)
	nodes := []*corev1.Node{s.createNode("a", nil), s.createNode("b", nil)}
	legacy, old := s.legacyDaemonSet(map[string]string{"app": "legacy"}, nodes...)

	eds := s.newEDS("agent", imageV2)
	eds.Annotations = map[string]string{v1alpha1.OldDaemonSetAnnotation: legacy.Name}
	eds.Spec.Strategy.Canary = &v1alpha1.CanaryStrategy{Replicas: ptr.To(intstr.FromInt32(1)), ValidationMode: v1alpha1.CanaryValidationManual}
	s.create(eds)
	active := s.activeReplicaSet(eds.Name)
	s.expectWaitingForOldDaemonSet(eds.Name)

	s.setImage(eds, imageV3)
	canary, canaryNodes := s.runningCanary(eds.Name)
	s.g.Expect(canaryNodes).To(gomega.HaveLen(1))
	s.g.Consistently(func(g gomega.Gomega) {
		for _, pod := range old {
			g.Expect(s.gone(g, pod)).To(gomega.BeFalse(), "a pod its DaemonSet would recreate was deleted")
		}
		g.Expect(placed(s.podsOf(g, canary))).To(gomega.BeEmpty(), "a canary pod beside a DaemonSet pod")
		g.Expect(placed(s.podsOf(g, active))).To(gomega.BeEmpty(), "a second agent beside a DaemonSet pod")
	}).WithTimeout(3 * time.Second).Should(gomega.Succeed())

	s.g.Expect(k8s.Delete(s.ctx, legacy, client.PropagationPolicy(metav1.DeletePropagationOrphan))).To(gomega.Succeed())
	s.replaceOldPods(eds.Name, old, func(node string) string {
		if node == canaryNodes[0] {
			return canary
		}
		return active
	})
}

// With the DaemonSet gone and spec.selector unset (or empty, which selects
// nothing in particular), the old pods are the pods without a controller
// that carry the template labels: a bare pod of another application in the
// namespace is not an agent, and stays.
func TestHandoverWithoutSelectorReplacesOnlyTheAgentsOrphans(t *testing.T) {
	for name, selector := range map[string]*v1alpha1.LabelSelector{"unset": nil, "empty": {}} {
		t.Run(name, func(t *testing.T) {
			s := newScenario(t)
			nodes := []*corev1.Node{s.createNode("a", nil), s.createNode("b", nil)}
			eds := s.newEDS("agent", imageV2)
			eds.Spec.Selector = selector
			// What kubectl delete daemonset --cascade=orphan leaves, once the
			// garbage collector has released the pods and the DaemonSet is gone.
			old := map[string]*corev1.Pod{}
			for _, n := range nodes {
				old[n.Name] = s.runBarePod("legacy-", eds.Spec.Template.Labels, n.Name)
			}
			database := s.runBarePod("database-", map[string]string{"app": "database"}, nodes[0].Name)

			eds.Annotations = map[string]string{v1alpha1.OldDaemonSetAnnotation: "legacy"}
			s.create(eds)
			ers := s.activeReplicaSet(eds.Name)
			s.replaceOldPods(eds.Name, old, func(string) string { return ers }, database)
			s.g.Eventually(func(g gomega.Gomega) { expectRolledOut(g, s.getEDS(g, eds.Name)) }).Should(gomega.Succeed())
			s.g.Expect(s.gone(s.g, database)).To(gomega.BeFalse(), "the database pod was taken for an old agent")
		})
	}
}

// With the DaemonSet gone, a selector and template labels that name no
// label value cannot tell its orphans from other pods: the handover stalls,
// saying so, and no pod is deleted or created.
func TestHandoverStallsWhenNothingTellsTheAgentsPods(t *testing.T) {
	s := newScenario(t)
	node := s.createNode("a", nil)
	orphan := s.runBarePod("legacy-", nil, node.Name)
	database := s.runBarePod("database-", map[string]string{"app": "database"}, node.Name)
	eds := s.newEDS("agent", imageV2)
	eds.Spec.Template.Labels = nil
	eds.Annotations = map[string]string{v1alpha1.OldDaemonSetAnnotation: "legacy"}
	s.create(eds)
	s.g.Eventually(func(g gomega.Gomega) {
		latest := s.getEDS(g, eds.Name)
		g.Expect(conditions.GetReason(latest, v1alpha1.StalledCondition)).To(gomega.Equal(v1alpha1.ReasonInvalidSpec))
		g.Expect(conditions.GetMessage(latest, v1alpha1.StalledCondition)).To(gomega.ContainSubstring(v1alpha1.OldDaemonSetAnnotation))
	}).Should(gomega.Succeed())
	s.g.Consistently(func(g gomega.Gomega) {
		g.Expect(s.gone(g, orphan)).To(gomega.BeFalse(), "a pod not provably the agent's was deleted")
		g.Expect(s.gone(g, database)).To(gomega.BeFalse(), "a pod not provably the agent's was deleted")
		g.Expect(placed(s.pods(g, map[string]string{v1alpha1.ExtendedDaemonSetNameLabel: eds.Name}))).To(gomega.BeEmpty(), "a second agent beside an old one")
	}).Should(gomega.Succeed())
}
