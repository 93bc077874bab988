package controllers

import (
	"testing"

	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
	"github.com/extendeddaemonset/extendeddaemonset/controllers/internal/store"
)

func TestPredicatesDropUpdatesThatChangeNothingWeRead(t *testing.T) {
	g := gomega.NewWithT(t)
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n", Labels: map[string]string{"a": "1"}}}
	heartbeat := node.DeepCopy()
	heartbeat.Status.Images = []corev1.ContainerImage{{Names: []string{"x"}}}
	relabelled := node.DeepCopy()
	relabelled.Labels["a"] = "2"
	nodes := store.NodePlacementChanged()
	g.Expect(nodes.Update(event.UpdateEvent{ObjectOld: node, ObjectNew: heartbeat})).To(gomega.BeFalse())
	g.Expect(nodes.Update(event.UpdateEvent{ObjectOld: node, ObjectNew: relabelled})).To(gomega.BeTrue())
	g.Expect(nodes.Create(event.CreateEvent{Object: node})).To(gomega.BeTrue())
	unknown := node.DeepCopy()
	unknown.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionUnknown}}
	g.Expect(nodes.Update(event.UpdateEvent{ObjectOld: node, ObjectNew: unknown})).To(gomega.BeFalse(), "no Ready condition reads Unknown")
	notReady := node.DeepCopy()
	notReady.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionFalse}}
	g.Expect(nodes.Update(event.UpdateEvent{ObjectOld: unknown, ObjectNew: notReady})).To(gomega.BeTrue())
	g.Expect(store.NodeReadinessChanged().Update(event.UpdateEvent{ObjectOld: unknown, ObjectNew: notReady})).To(gomega.BeTrue())
	g.Expect(store.NodeReadinessChanged().Update(event.UpdateEvent{ObjectOld: node, ObjectNew: relabelled})).To(gomega.BeFalse())

	// Entering or leaving maintenance wakes the replica sets and the
	// canary, whether by a lifecycle condition, a taint or a deletion;
	// a condition that puts no node in maintenance does not.
	draining := node.DeepCopy()
	draining.Status.Conditions = []corev1.NodeCondition{{Type: "DrainInProgress", Status: corev1.ConditionTrue}}
	planned := node.DeepCopy()
	planned.Status.Conditions = []corev1.NodeCondition{{Type: "MaintenancePlanned", Status: corev1.ConditionTrue}}
	deleting := node.DeepCopy()
	deleting.DeletionTimestamp = &metav1.Time{}
	disrupted := node.DeepCopy()
	disrupted.Spec.Taints = []corev1.Taint{{Key: "karpenter.sh/disrupted", Effect: corev1.TaintEffectNoSchedule}}
	canaryNodes := store.NodeReadinessOrMaintenanceChanged()
	for _, p := range []predicate.Funcs{nodes, canaryNodes} {
		g.Expect(p.Update(event.UpdateEvent{ObjectOld: node, ObjectNew: draining})).To(gomega.BeTrue(), "a drain starts")
		g.Expect(p.Update(event.UpdateEvent{ObjectOld: draining, ObjectNew: node})).To(gomega.BeTrue(), "a drain ends")
		g.Expect(p.Update(event.UpdateEvent{ObjectOld: node, ObjectNew: deleting})).To(gomega.BeTrue(), "a deletion starts")
		g.Expect(p.Update(event.UpdateEvent{ObjectOld: node, ObjectNew: disrupted})).To(gomega.BeTrue(), "Karpenter disrupts")
		g.Expect(p.Update(event.UpdateEvent{ObjectOld: node, ObjectNew: planned})).To(gomega.BeFalse(), "maintenance planned only")
	}
	g.Expect(canaryNodes.Update(event.UpdateEvent{ObjectOld: unknown, ObjectNew: notReady})).To(gomega.BeTrue())
	g.Expect(canaryNodes.Update(event.UpdateEvent{ObjectOld: node, ObjectNew: heartbeat})).To(gomega.BeFalse())

	overridden := node.DeepCopy()
	overridden.Annotations = map[string]string{v1alpha1.NodeResourcesAnnotationPrefix + "ns.agent.main": "{}"}
	otherAnnotation := node.DeepCopy()
	otherAnnotation.Annotations = map[string]string{"example.com/x": "y"}
	g.Expect(store.ResourceOverridesChanged().Update(event.UpdateEvent{ObjectOld: node, ObjectNew: relabelled})).To(gomega.BeFalse())
	g.Expect(store.ResourceOverridesChanged().Update(event.UpdateEvent{ObjectOld: node, ObjectNew: otherAnnotation})).To(gomega.BeFalse())
	g.Expect(store.ResourceOverridesChanged().Update(event.UpdateEvent{ObjectOld: node, ObjectNew: overridden})).To(gomega.BeTrue())
	g.Expect(store.ResourceOverridesChanged().Update(event.UpdateEvent{ObjectOld: overridden, ObjectNew: node})).To(gomega.BeTrue(), "a removed annotation can clear the condition")

	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p"}}
	annotated := pod.DeepCopy()
	annotated.Annotations = map[string]string{"x": "y"}
	restarted := pod.DeepCopy()
	restarted.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "c", RestartCount: 1}}
	ready := pod.DeepCopy()
	ready.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: metav1.Now()}}
	g.Expect(podStateChanged().Update(event.UpdateEvent{ObjectOld: pod, ObjectNew: annotated})).To(gomega.BeFalse())
	g.Expect(podStateChanged().Update(event.UpdateEvent{ObjectOld: pod, ObjectNew: ready})).To(gomega.BeTrue())
	g.Expect(store.ContainerStateChanged().Update(event.UpdateEvent{ObjectOld: pod, ObjectNew: annotated})).To(gomega.BeFalse())
	g.Expect(store.ContainerStateChanged().Update(event.UpdateEvent{ObjectOld: pod, ObjectNew: restarted})).To(gomega.BeTrue())
}

// Replica sets wake for what they read of their ExtendedDaemonSet, not for
// the status writes their own counters cause.
func TestReplicaSetsWakeForTheirInputsOnly(t *testing.T) {
	g := gomega.NewWithT(t)
	eds := &v1alpha1.ExtendedDaemonSet{ObjectMeta: metav1.ObjectMeta{Name: "agent", Generation: 1}}
	eds.Status.ActiveReplicaSet = "agent-a"
	eds.Status.Canary = &v1alpha1.CanaryStatus{ReplicaSet: "agent-b", Nodes: []string{"n1"}}
	wakes := func(change func(*v1alpha1.ExtendedDaemonSet)) bool {
		updated := eds.DeepCopy()
		change(updated)
		return replicaSetInputsChanged().Update(event.UpdateEvent{ObjectOld: eds, ObjectNew: updated})
	}
	g.Expect(wakes(func(e *v1alpha1.ExtendedDaemonSet) { e.Status.Available = 10; e.Status.Ready = 12 })).To(gomega.BeFalse(), "counters")
	g.Expect(wakes(func(e *v1alpha1.ExtendedDaemonSet) {
		e.Status.Conditions = []metav1.Condition{{Type: v1alpha1.ReadyCondition, Status: metav1.ConditionTrue}}
	})).To(gomega.BeFalse(), "conditions")
	g.Expect(wakes(func(e *v1alpha1.ExtendedDaemonSet) { e.Status.Canary.Message = "measuring" })).To(gomega.BeFalse(), "canary progress")

	g.Expect(wakes(func(e *v1alpha1.ExtendedDaemonSet) { e.Generation = 2 })).To(gomega.BeTrue(), "spec")
	g.Expect(wakes(func(e *v1alpha1.ExtendedDaemonSet) {
		e.Annotations = map[string]string{v1alpha1.RollingUpdatePausedAnnotation: "true"}
	})).To(gomega.BeTrue(), "pause annotation")
	g.Expect(wakes(func(e *v1alpha1.ExtendedDaemonSet) { e.Status.ActiveReplicaSet = "agent-b"; e.Status.Canary = nil })).To(gomega.BeTrue(), "promotion")
	g.Expect(wakes(func(e *v1alpha1.ExtendedDaemonSet) { e.Status.Canary.Nodes = []string{"n2"} })).To(gomega.BeTrue(), "canary nodes")
	g.Expect(wakes(func(e *v1alpha1.ExtendedDaemonSet) { e.Status.Canary.Failed = true })).To(gomega.BeTrue(), "canary failed")
	g.Expect(replicaSetInputsChanged().Delete(event.DeleteEvent{Object: eds})).To(gomega.BeTrue())
}

// A pod event wakes its own replica set and those that place pods, never
// the rest of the history: each pass reads every node and pod.
func TestPodEventsWakeTheReplicaSetsTheyMatterTo(t *testing.T) {
	g := gomega.NewWithT(t)
	eds := &v1alpha1.ExtendedDaemonSet{}
	eds.Status.ActiveReplicaSet = "agent-b"
	g.Expect(podReplicaSets("agent-a", eds)).To(gomega.Equal([]string{"agent-a", "agent-b"}), "an old pod: its own and the active one")
	g.Expect(podReplicaSets("agent-b", eds)).To(gomega.Equal([]string{"agent-b"}))
	eds.Status.Canary = &v1alpha1.CanaryStatus{ReplicaSet: "agent-c"}
	g.Expect(podReplicaSets("agent-b", eds)).To(gomega.Equal([]string{"agent-b", "agent-c"}), "the canary spends the same budget")
	eds.Status.Canary.Failed = true
	g.Expect(podReplicaSets("agent-a", eds)).To(gomega.Equal([]string{"agent-a", "agent-b", "agent-c"}), "a failed canary's nodes go back")
	g.Expect(podReplicaSets("agent-a", nil)).To(gomega.Equal([]string{"agent-a"}), "no ExtendedDaemonSet: only counted")
	g.Expect(podReplicaSets("", &v1alpha1.ExtendedDaemonSet{})).To(gomega.BeEmpty())
}
