package controllers

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/extendeddaemonset/extendeddaemonset/controllers/rollout"
)

// maxStuckNodesNamed bounds the nodes a progress-deadline message names.
const maxStuckNodesNamed = 5

// deadlineMessage says why a replica set made no progress in time: the
// nodes without an available pod and what holds each back, and the last
// error of the API server, if any.
func deadlineMessage(obs *observation, actErr error) string {
	var stuck []string
	for _, node := range obs.input.Nodes {
		if !node.ShouldRun || node.Unresponsive {
			continue
		}
		if cause := stuckOn(obs, obs.input.Pods[node.Name]); cause != "" {
			stuck = append(stuck, node.Name+" ("+cause+")")
		}
	}
	msg := fmt.Sprintf("no progress for %s", obs.deadline)
	switch n := len(stuck); {
	case n == 0:
		msg += ": old pods wait for the unavailability budget"
	case n > maxStuckNodesNamed:
		msg += fmt.Sprintf(": nodes without an available pod: %s and %d more", strings.Join(stuck[:maxStuckNodesNamed], ", "), n-maxStuckNodesNamed)
	default:
		msg += ": nodes without an available pod: " + strings.Join(stuck, ", ")
	}
	if actErr != nil {
		msg += "; last error: " + actErr.Error()
	}
	return msg
}

// stuckOn says what keeps a node from an available pod, empty when it has
// one.
func stuckOn(obs *observation, pods []rollout.Pod) string {
	if len(pods) == 0 {
		return "no pod"
	}
	var causes []string
	for _, p := range pods {
		switch {
		case p.Available(obs.input.Params.MinReady, obs.input.Now):
			return ""
		case p.Terminating:
			causes = append(causes, "pod "+p.Name+" terminating")
		case p.Failed:
			causes = append(causes, "pod "+p.Name+" failed")
		case p.Unschedulable:
			causes = append(causes, "pod "+p.Name+" cannot be scheduled")
		default:
			causes = append(causes, "pod "+p.Name+" not ready"+waitingReason(obs.pods[p.Name]))
		}
	}
	return strings.Join(causes, ", ")
}

// waitingReason is ": <reason>" of the first container that waits or keeps
// restarting, empty when none does.
func waitingReason(pod *corev1.Pod) string {
	if pod == nil {
		return ""
	}
	// Two loops, not an append: the pod is the cache's own, and appending
	// to its slice could write into the cache's array.
	for _, list := range [][]corev1.ContainerStatus{pod.Status.InitContainerStatuses, pod.Status.ContainerStatuses} {
		for _, c := range list {
			if w := c.State.Waiting; w != nil && w.Reason != "" {
				return ": " + w.Reason
			}
		}
	}
	return ""
}
