package controllers

import (
	"reflect"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
	"github.com/extendeddaemonset/extendeddaemonset/controllers/placement"
)

// updatedWhen lets through creations, deletions, and the updates of a T
// for which changed says yes; an update of another type passes.
func updatedWhen[T any](changed func(oldObj, newObj T) bool) predicate.Funcs {
	return predicate.Funcs{
		UpdateFunc: func(e event.UpdateEvent) bool {
			oldObj, okOld := e.ObjectOld.(T)
			newObj, okNew := e.ObjectNew.(T)
			return !okOld || !okNew || changed(oldObj, newObj)
		},
	}
}

// nodePlacementChanged lets through node events that can change where pods
// go: a node added or deleted, or its labels, taints or readiness changed.
// Kubelets update node status every few seconds; those updates are dropped.
func nodePlacementChanged() predicate.Funcs {
	return updatedWhen(func(oldNode, newNode *corev1.Node) bool {
		return !reflect.DeepEqual(oldNode.Labels, newNode.Labels) ||
			!reflect.DeepEqual(oldNode.Spec.Taints, newNode.Spec.Taints) ||
			oldNode.Spec.Unschedulable != newNode.Spec.Unschedulable ||
			readinessChanged(oldNode, newNode)
	})
}

// nodeReadinessChanged lets through node events that change the node's
// readiness (Ready True, False or Unknown).
func nodeReadinessChanged() predicate.Funcs { return updatedWhen(readinessChanged) }

func readinessChanged(oldNode, newNode *corev1.Node) bool {
	return placement.NodeReadiness(oldNode).Status != placement.NodeReadiness(newNode).Status
}

// resourceOverridesChanged lets through node events that can change which
// resource override annotations a node carries.
func resourceOverridesChanged() predicate.Funcs {
	return updatedWhen(func(oldNode, newNode *corev1.Node) bool {
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

// podStateChanged lets through pod events that can change a plan or a
// counter: creation, deletion, and updates of what the planner reads (node,
// phase, readiness, schedulability, deletion). Kubelets write pod status
// several times while a pod starts; the other writes are dropped.
func podStateChanged() predicate.Funcs {
	return updatedWhen(func(oldPod, newPod *corev1.Pod) bool {
		return rolloutPod(oldPod, "", false) != rolloutPod(newPod, "", false) ||
			oldPod.Spec.NodeName != newPod.Spec.NodeName
	})
}

// containerStateChanged lets through pod events that can change a canary
// verdict: creation, deletion, and changes of container restart counts,
// states or phase.
func containerStateChanged() predicate.Funcs {
	return updatedWhen(func(oldPod, newPod *corev1.Pod) bool {
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

// replicaSetInputsChanged lets through ExtendedDaemonSet events that can
// change what its replica sets do: the spec, the annotations that pause,
// freeze or migrate, and the roles (active replica set, running canary and
// its nodes). The ExtendedDaemonSet's status is written as its replica
// sets' counters move; those writes are dropped, or each would wake every
// replica set again.
func replicaSetInputsChanged() predicate.Funcs {
	return updatedWhen(func(oldEDS, newEDS *v1alpha1.ExtendedDaemonSet) bool {
		return oldEDS.Generation != newEDS.Generation ||
			!reflect.DeepEqual(oldEDS.Annotations, newEDS.Annotations) ||
			oldEDS.Status.ActiveReplicaSet != newEDS.Status.ActiveReplicaSet ||
			!reflect.DeepEqual(canaryRole(oldEDS), canaryRole(newEDS)) ||
			bakesPassed(oldEDS) != bakesPassed(newEDS)
	})
}

// bakesPassed is what of the bakes' verdicts the active replica set's
// planner reads.
func bakesPassed(eds *v1alpha1.ExtendedDaemonSet) string {
	if b := eds.Status.Bake; b != nil {
		return b.ReplicaSet + "/" + b.PassedThrough
	}
	return ""
}

// canaryRole is what of a running canary its replica sets read.
func canaryRole(eds *v1alpha1.ExtendedDaemonSet) any {
	c := runningCanary(eds)
	if c == nil {
		return nil
	}
	return struct {
		replicaSet string
		nodes      []string
	}{c.ReplicaSet, c.Nodes}
}
