package store

import (
	"reflect"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
	"github.com/extendeddaemonset/extendeddaemonset/controllers/placement"
)

// UpdatedWhen lets through creations, deletions, and the updates of a T
// for which changed says yes; an update of another type passes.
func UpdatedWhen[T any](changed func(oldObj, newObj T) bool) predicate.Funcs {
	return predicate.Funcs{
		UpdateFunc: func(e event.UpdateEvent) bool {
			oldObj, okOld := e.ObjectOld.(T)
			newObj, okNew := e.ObjectNew.(T)
			return !okOld || !okNew || changed(oldObj, newObj)
		},
	}
}

// NodePlacementChanged lets through node events that can change where pods
// go: a node added or deleted, its labels, taints or readiness changed, or
// it entered or left maintenance (a lifecycle condition, a deletion).
// Kubelets update node status every few seconds; those updates are dropped.
func NodePlacementChanged() predicate.Funcs {
	return UpdatedWhen(func(oldNode, newNode *corev1.Node) bool {
		return !reflect.DeepEqual(oldNode.Labels, newNode.Labels) ||
			!reflect.DeepEqual(oldNode.Spec.Taints, newNode.Spec.Taints) ||
			oldNode.Spec.Unschedulable != newNode.Spec.Unschedulable ||
			readinessChanged(oldNode, newNode) || maintenanceChanged(oldNode, newNode)
	})
}

// NodeReadinessChanged lets through node events that change the node's
// readiness (Ready True, False or Unknown).
func NodeReadinessChanged() predicate.Funcs { return UpdatedWhen(readinessChanged) }

// NodeReadinessOrMaintenanceChanged lets through node events that change
// the node's readiness or why it is in maintenance: what moves a canary
// off its node.
func NodeReadinessOrMaintenanceChanged() predicate.Funcs {
	return UpdatedWhen(func(oldNode, newNode *corev1.Node) bool {
		return readinessChanged(oldNode, newNode) || maintenanceChanged(oldNode, newNode)
	})
}

func readinessChanged(oldNode, newNode *corev1.Node) bool {
	return placement.NodeReadiness(oldNode).Status != placement.NodeReadiness(newNode).Status
}

func maintenanceChanged(oldNode, newNode *corev1.Node) bool {
	return placement.Maintenance(oldNode) != placement.Maintenance(newNode)
}

// ResourceOverridesChanged lets through node events that can change which
// resource override annotations a node carries.
func ResourceOverridesChanged() predicate.Funcs {
	return UpdatedWhen(func(oldNode, newNode *corev1.Node) bool {
		return !reflect.DeepEqual(resourceOverrideAnnotations(oldNode), resourceOverrideAnnotations(newNode))
	})
}

func resourceOverrideAnnotations(node *corev1.Node) map[string]string {
	out := map[string]string{}
	for k, v := range node.Annotations {
		if strings.HasPrefix(k, v1alpha1.NodeResourcesAnnotationPrefix) {
			out[k] = v
		}
	}
	return out
}

// ContainerStateChanged lets through pod events that can change a canary
// verdict: creation, deletion, and changes of container restart counts,
// states or phase.
func ContainerStateChanged() predicate.Funcs {
	return UpdatedWhen(func(oldPod, newPod *corev1.Pod) bool {
		return oldPod.Status.Phase != newPod.Status.Phase ||
			!reflect.DeepEqual(containerStates(oldPod), containerStates(newPod))
	})
}

// containerStates are the restart counts and states of a pod's containers.
func containerStates(pod *corev1.Pod) []any {
	var out []any
	for _, list := range [][]corev1.ContainerStatus{pod.Status.InitContainerStatuses, pod.Status.ContainerStatuses} {
		for _, c := range list {
			out = append(out, c.RestartCount, c.State.Waiting, c.State.Terminated != nil, c.LastTerminationState.Terminated)
		}
	}
	return out
}
