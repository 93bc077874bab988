package controllers

import (
	"testing"

	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/event"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
)

func TestPredicatesDropUpdatesThatChangeNothingWeRead(t *testing.T) {
	g := gomega.NewWithT(t)
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n", Labels: map[string]string{"a": "1"}}}
	heartbeat := node.DeepCopy()
	heartbeat.Status.Images = []corev1.ContainerImage{{Names: []string{"x"}}}
	relabelled := node.DeepCopy()
	relabelled.Labels["a"] = "2"
	nodes := nodePlacementChanged()
	g.Expect(nodes.Update(event.UpdateEvent{ObjectOld: node, ObjectNew: heartbeat})).To(gomega.BeFalse())
	g.Expect(nodes.Update(event.UpdateEvent{ObjectOld: node, ObjectNew: relabelled})).To(gomega.BeTrue())
	g.Expect(nodes.Create(event.CreateEvent{Object: node})).To(gomega.BeTrue())

	overridden := node.DeepCopy()
	overridden.Annotations = map[string]string{v1alpha1.NodeResourcesAnnotationPrefix + "ns.agent.main": "{}"}
	otherAnnotation := node.DeepCopy()
	otherAnnotation.Annotations = map[string]string{"example.com/x": "y"}
	g.Expect(resourceOverridesChanged().Update(event.UpdateEvent{ObjectOld: node, ObjectNew: relabelled})).To(gomega.BeFalse())
	g.Expect(resourceOverridesChanged().Update(event.UpdateEvent{ObjectOld: node, ObjectNew: otherAnnotation})).To(gomega.BeFalse())
	g.Expect(resourceOverridesChanged().Update(event.UpdateEvent{ObjectOld: node, ObjectNew: overridden})).To(gomega.BeTrue())
	g.Expect(resourceOverridesChanged().Update(event.UpdateEvent{ObjectOld: overridden, ObjectNew: node})).To(gomega.BeTrue(), "a removed annotation can clear the condition")

	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p"}}
	annotated := pod.DeepCopy()
	annotated.Annotations = map[string]string{"x": "y"}
	restarted := pod.DeepCopy()
	restarted.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "c", RestartCount: 1}}
	ready := pod.DeepCopy()
	ready.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: metav1.Now()}}
	g.Expect(podStateChanged().Update(event.UpdateEvent{ObjectOld: pod, ObjectNew: annotated})).To(gomega.BeFalse())
	g.Expect(podStateChanged().Update(event.UpdateEvent{ObjectOld: pod, ObjectNew: ready})).To(gomega.BeTrue())
	g.Expect(containerStateChanged().Update(event.UpdateEvent{ObjectOld: pod, ObjectNew: annotated})).To(gomega.BeFalse())
	g.Expect(containerStateChanged().Update(event.UpdateEvent{ObjectOld: pod, ObjectNew: restarted})).To(gomega.BeTrue())
}
