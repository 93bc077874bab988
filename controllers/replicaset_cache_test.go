package controllers

import (
	"testing"
	"time"

	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/event"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
	"github.com/extendeddaemonset/extendeddaemonset/controllers/internal/store"
	"github.com/extendeddaemonset/extendeddaemonset/controllers/placement"
)

// A trimmed pod reads the same to every function that judges pods, and
// an in-place patch built from it addresses the same containers.
func TestTrimPodKeepsWhatTheControllersRead(t *testing.T) {
	g := gomega.NewWithT(t)
	start := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	full := placement.NewPod(&corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "agent"}},
		Spec: corev1.PodSpec{
			InitContainers: []corev1.Container{{Name: "init", Image: "init:v1", Command: []string{"setup"}}},
			Containers: []corev1.Container{
				{Name: "agent", Image: "agent:v1", Env: []corev1.EnvVar{{Name: "API_KEY", Value: "x"}},
					Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")}}},
				{Name: "trace", Image: "trace:v1", Args: []string{"--verbose"}},
			},
			Volumes:        []corev1.Volume{{Name: "logs", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/var/log"}}}},
			ReadinessGates: []corev1.PodReadinessGate{{ConditionType: v1alpha1.InPlaceUpdateReadyCondition}},
		},
	}, "node-1", nil)
	full.Name, full.Labels[v1alpha1.ExtendedDaemonSetReplicaSetNameLabel] = "agent-x", "agent-a"
	full.Status = corev1.PodStatus{
		Phase: corev1.PodRunning,
		Conditions: []corev1.PodCondition{
			{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: start, Message: "scheduled"},
			{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: start},
			{Type: v1alpha1.InPlaceUpdateReadyCondition, Status: corev1.ConditionFalse, Reason: gateReasonUpdating, LastTransitionTime: start},
		},
		ContainerStatuses: []corev1.ContainerStatus{
			{Name: "agent", Image: "agent:v1", Ready: true, RestartCount: 2},
			{Name: "trace", Image: "trace:v0", State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ImagePullBackOff"}}},
		},
	}
	trimmed := trimmedByTheCache(g, full.DeepCopy())

	g.Expect(trimmed.Spec.Volumes).To(gomega.BeEmpty())
	g.Expect(trimmed.Spec.Containers[0].Env).To(gomega.BeEmpty())
	g.Expect(placement.TargetNode(trimmed)).To(gomega.Equal("node-1"))
	g.Expect(rolloutPod(trimmed, "node-1", true)).To(gomega.Equal(rolloutPod(full, "node-1", true)))
	g.Expect(imagesPending(trimmed)).To(gomega.Equal(imagesPending(full)))
	g.Expect(gated(trimmed)).To(gomega.Equal(gated(full)))
	g.Expect(waitingReason(trimmed)).To(gomega.Equal(": ImagePullBackOff"))
	g.Expect(store.ContainerStateChanged().Update(event.UpdateEvent{ObjectOld: full, ObjectNew: trimmed})).To(gomega.BeFalse(),
		"the canary's containers read the same")

	ers := &v1alpha1.ExtendedDaemonSetReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: "agent-b"}}
	ers.Spec.Template.Spec.InitContainers = []corev1.Container{{Name: "init", Image: "init:v2"}}
	ers.Spec.Template.Spec.Containers = []corev1.Container{{Name: "agent", Image: "agent:v1"}, {Name: "trace", Image: "trace:v2"}}
	owner := metav1.OwnerReference{Name: "agent-b"}
	g.Expect(inPlacePatch(trimmed, ers, owner).ops).To(gomega.Equal(inPlacePatch(full, ers, owner).ops))
	g.Expect(gatePatch(trimmed, corev1.ConditionTrue, gateReasonReady, start).ops).To(gomega.Equal(gatePatch(full, corev1.ConditionTrue, gateReasonReady, start).ops),
		"the gate's condition is patched at its position")
	g.Expect(closedForUpdate(trimmed)).To(gomega.Equal(closedForUpdate(full)))

	// A pod without the gate keeps fewer conditions, and reads the same.
	ungated := full.DeepCopy()
	ungated.Spec.ReadinessGates = nil
	ungated.Status.Conditions[0] = corev1.PodCondition{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable}
	trimmed = trimmedByTheCache(g, ungated.DeepCopy())
	g.Expect(trimmed.Status.Conditions).To(gomega.HaveLen(2))
	g.Expect(rolloutPod(trimmed, "node-1", true)).To(gomega.Equal(rolloutPod(ungated, "node-1", true)))
	g.Expect(rolloutPod(trimmed, "node-1", true).Unschedulable).To(gomega.BeTrue())
}

// trimmedByTheCache is pod as the cache of CacheOptions keeps it.
func trimmedByTheCache(g gomega.Gomega, pod *corev1.Pod) *corev1.Pod {
	for obj, by := range CacheOptions().ByObject {
		if _, ok := obj.(*corev1.Pod); ok {
			trimmed, err := by.Transform(pod)
			g.Expect(err).NotTo(gomega.HaveOccurred())
			return trimmed.(*corev1.Pod)
		}
	}
	g.Expect("a transform of pods").To(gomega.BeEmpty(), "the cache keeps pods whole")
	return nil
}
