package controllers

import (
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
	"github.com/extendeddaemonset/extendeddaemonset/controllers/internal/outcome"
	"github.com/extendeddaemonset/extendeddaemonset/controllers/rollout"
)

// markProgress sets the progress time and mark of st, the status after a
// pass, from before, the status the pass started from, and p, where the
// replica set now stands: the progress deadline runs only while it waits
// for its pods.
//
// The deadline starts when that wait first does (a rollout starting, a new
// role), from where the pods stand then. A hold (a pause, a freeze, a
// domain's bake, the DaemonSet it replaces) stops its clock, which goes on
// from where it stood once the wait resumes: a hold longer than the
// deadline does not stall the rollout as it ends, and a pod that flips the
// rollout between a hold and a wait (a crash-looping pod of a baking
// domain) does not start the deadline over. While it runs, only progress
// refreshes it: a write is none (a pod deleted as failed and recreated,
// again and again, is a write each time), nor is a counter that moves back
// and forth. Once the replica set is done, or has no role, the mark goes.
func markProgress(before, st *v1alpha1.ExtendedDaemonSetReplicaSetStatus, c rollout.Counts, p outcome.Progress, now time.Time) {
	stand := v1alpha1.ProgressMark{UpToDate: int32(c.UpToDate), Old: int32(c.Old)}
	waiting := p.WaitsForProgress()
	held := !waiting && p.Phase == outcome.Progressing
	kept := before.ProgressMark != nil && before.LastProgressTime != nil && before.Status == st.Status
	switch {
	case !waiting && (!held || !kept):
		st.ProgressMark = nil
		return
	case !kept:
		st.ProgressMark, st.LastProgressTime = &stand, &metav1.Time{Time: now}
		return
	}
	mark, moved := progressed(*before.ProgressMark, before.Desired, stand, st.Desired)
	mark.HeldSince = before.ProgressMark.HeldSince
	last := before.LastProgressTime.Time
	switch {
	case moved:
		last, mark.HeldSince = now, nil
	case waiting && mark.HeldSince != nil:
		// The clock goes on from where the hold stopped it.
		last, mark.HeldSince = last.Add(now.Sub(mark.HeldSince.Time)), nil
	}
	if held && mark.HeldSince == nil {
		mark.HeldSince = &metav1.Time{Time: now}
	}
	st.ProgressMark, st.LastProgressTime = &mark, &metav1.Time{Time: last}
}

// progressed compares where the pods stand, on desired nodes, with the
// mark of the last progress, set when desiredBefore nodes were: progress
// is a node more up to date than the mark, or an old pod fewer. It returns
// the mark to keep.
//
// Without progress the mark follows the nodes, not the pods: when fewer
// nodes are desired (removed, gone unresponsive, taken by a canary), the
// up-to-date ones among them leave with their pods, and old pods that come
// (a failed canary's, returning) are work to do from now on. A pod that
// comes and goes moves neither.
func progressed(mark v1alpha1.ProgressMark, desiredBefore int32, stand v1alpha1.ProgressMark, desired int32) (v1alpha1.ProgressMark, bool) {
	if stand.UpToDate > mark.UpToDate || stand.Old < mark.Old {
		return stand, true
	}
	if desired < desiredBefore {
		mark.UpToDate = min(mark.UpToDate, stand.UpToDate)
	}
	mark.Old = max(mark.Old, stand.Old)
	return mark, false
}

// maxStuckNodesNamed bounds the nodes a progress-deadline message names.
const maxStuckNodesNamed = 5

// deadlineMessage says why a replica set made no progress in time: the
// nodes without an available pod and what holds each back, and the last
// error of the API server, if any.
func deadlineMessage(obs *observation, actErr error) string {
	var stuck []string
	for _, node := range obs.input.Nodes {
		if !node.ShouldRun || node.Unresponsive || node.Maintenance {
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
