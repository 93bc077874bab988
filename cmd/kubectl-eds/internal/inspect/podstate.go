package inspect

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
)

// Roles of a pod in its ExtendedDaemonSet's rollout.
const (
	roleCanary = "canary"
	roleActive = "active"
	// roleOld: a pod of a replica set that is neither active nor canary,
	// which the rollout is about to replace.
	roleOld = "old"
)

// podRole is the part a pod of the replica set rs plays in eds's rollout,
// read from the status of eds.
func podRole(eds *v1alpha1.ExtendedDaemonSet, rs string) string {
	switch {
	case eds.Status.Canary != nil && rs == eds.Status.Canary.ReplicaSet:
		return roleCanary
	case rs != "" && rs == eds.Status.ActiveReplicaSet:
		return roleActive
	}
	return roleOld
}

// podStatus is the one word kubectl get pods shows: why a container
// waits or ended (CrashLoopBackOff, ImagePullBackOff, Error), else the
// phase.
func podStatus(pod *corev1.Pod) string {
	if pod.DeletionTimestamp != nil {
		return "Terminating"
	}
	status := string(pod.Status.Phase)
	if pod.Status.Reason != "" {
		status = pod.Status.Reason
	}
	for _, c := range pod.Status.ContainerStatuses {
		switch {
		case c.State.Waiting != nil && c.State.Waiting.Reason != "":
			return c.State.Waiting.Reason
		case c.State.Terminated != nil && c.State.Terminated.Reason != "":
			return c.State.Terminated.Reason
		}
	}
	if status == "" {
		return string(corev1.PodPending)
	}
	return status
}

// podReady says whether pod's Ready condition is True.
func podReady(pod *corev1.Pod) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// readyContainers is "ready/all" as kubectl get pods shows it.
func readyContainers(pod *corev1.Pod) string {
	ready := 0
	for _, c := range pod.Status.ContainerStatuses {
		if c.Ready {
			ready++
		}
	}
	return fmt.Sprintf("%d/%d", ready, len(pod.Spec.Containers))
}

// restarts adds up the restarts of pod's containers.
func restarts(pod *corev1.Pod) int32 {
	var n int32
	for _, c := range pod.Status.ContainerStatuses {
		n += c.RestartCount
	}
	return n
}
