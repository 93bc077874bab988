package analysis

import (
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// NewPodGrace is how long a pod created after the change has before it is
// counted: a pod that other workloads schedule onto a node (a rollout of
// theirs, a Job) starts not ready, and counting it at once would blame the
// new version for its start-up. A minute covers the start of an ordinary
// pod and still catches one that never becomes ready within an interval
// or two.
const NewPodGrace = time.Minute

// builtinBadWhenTrue are the node conditions that are bad when True; Ready
// is bad when it is anything but True.
var builtinBadWhenTrue = []corev1.NodeConditionType{
	corev1.NodeNetworkUnavailable,
	corev1.NodeMemoryPressure,
	corev1.NodeDiskPressure,
	corev1.NodePIDPressure,
}

// podFault is why a counted pod is not ready since the change.
type podFault string

const (
	podNotReady  podFault = "not ready"
	podRestarted podFault = "restarted"
	podFailed    podFault = "failed"
)

// badPod is a counted pod that is not ready since the change.
type badPod struct {
	name  string // namespace/name
	fault podFault
}

// nodeExam is what one node shows since the change reached it.
type nodeExam struct {
	name string
	// turnedBad are its conditions that are bad and turned so at or after
	// Since, as "Type=Status (Reason)".
	turnedBad []string
	// counted is how many other pods are counted; bad are those not ready
	// since the change.
	counted int
	bad     []badPod
}

func (e nodeExam) unhealthy() bool { return len(e.turnedBad) > 0 }

// examineNode judges one observed node by itself before the change: only
// what turned bad at or after o.Since is held against it, so no state from
// an earlier measurement is needed. A time that is not known (zero) cannot
// tell before from after and blames nothing.
func examineNode(o NodeObservation, userConditions []string, now time.Time) nodeExam {
	e := nodeExam{name: o.Node.Name}
	for _, c := range o.Node.Status.Conditions {
		if conditionBad(c, userConditions) && since(c.LastTransitionTime.Time, o.Since) {
			e.turnedBad = append(e.turnedBad, describeCondition(c))
		}
	}
	for _, p := range o.Pods {
		counted, fault := examinePod(p, o.Since, now)
		if !counted {
			continue
		}
		e.counted++
		if fault != "" {
			e.bad = append(e.bad, badPod{name: p.Namespace + "/" + p.Name, fault: fault})
		}
	}
	slices.SortFunc(e.bad, func(a, b badPod) int { return strings.Compare(a.name, b.name) })
	return e
}

// since is whether t is known and at or after start.
func since(t, start time.Time) bool {
	return !t.IsZero() && !t.Before(start)
}

// conditionBad is whether a node condition says the node is unwell.
func conditionBad(c corev1.NodeCondition, userConditions []string) bool {
	if c.Type == corev1.NodeReady {
		return c.Status != corev1.ConditionTrue
	}
	return c.Status == corev1.ConditionTrue &&
		(slices.Contains(builtinBadWhenTrue, c.Type) || slices.Contains(userConditions, string(c.Type)))
}

// maxReasonQuoted bounds the reason of a node condition quoted in a
// message: whoever runs the node writes it.
const maxReasonQuoted = 64

func describeCondition(c corev1.NodeCondition) string {
	if c.Reason == "" {
		return fmt.Sprintf("%s=%s", c.Type, c.Status)
	}
	return fmt.Sprintf("%s=%s (%s)", c.Type, c.Status, oneLine(c.Reason, maxReasonQuoted))
}

// examinePod says whether a pod of another workload counts for readiness,
// and if so why it is not ready since the change ("" when it is ready).
// Succeeded and terminating pods are done, not broken, and are not
// counted. A pod that was not ready before the change is not counted
// either: the new version did not break it. A pod created after the change
// is counted once NewPodGrace has passed, and then everything in its life
// happened since the change.
func examinePod(p *corev1.Pod, start, now time.Time) (bool, podFault) {
	if p == nil || p.DeletionTimestamp != nil || p.Status.Phase == corev1.PodSucceeded {
		return false, ""
	}
	fresh := p.CreationTimestamp.After(start)
	if fresh {
		if now.Sub(p.CreationTimestamp.Time) < NewPodGrace {
			return false, ""
		}
		// The whole life of this pod is after the change.
		start = p.CreationTimestamp.Time
	}
	ready := podReadyCondition(p)
	switch {
	case p.Status.Phase == corev1.PodFailed:
		return fresh || since(failedAt(p, ready), start), podFailed
	case ready == nil || ready.Status != corev1.ConditionTrue:
		return fresh || ready != nil && since(ready.LastTransitionTime.Time, start), podNotReady
	case restartedSince(p, start):
		return true, podRestarted
	}
	return true, ""
}

// podReadyCondition is the pod's Ready condition, or nil.
func podReadyCondition(p *corev1.Pod) *corev1.PodCondition {
	for i := range p.Status.Conditions {
		if p.Status.Conditions[i].Type == corev1.PodReady {
			return &p.Status.Conditions[i]
		}
	}
	return nil
}

// failedAt is the latest sign of when a failed pod stopped: its
// containers' termination, or its Ready condition turning False.
func failedAt(p *corev1.Pod, ready *corev1.PodCondition) time.Time {
	var at time.Time
	if ready != nil && ready.LastTransitionTime.After(at) {
		at = ready.LastTransitionTime.Time
	}
	for _, s := range containerStatuses(p) {
		if t := s.State.Terminated; t != nil && t.FinishedAt.After(at) {
			at = t.FinishedAt.Time
		}
	}
	return at
}

// restartedSince is whether a container of the pod ended at or after start
// and was started again.
func restartedSince(p *corev1.Pod, start time.Time) bool {
	for _, s := range containerStatuses(p) {
		if t := s.LastTerminationState.Terminated; t != nil && since(t.FinishedAt.Time, start) {
			return true
		}
	}
	return false
}

func containerStatuses(p *corev1.Pod) []corev1.ContainerStatus {
	return slices.Concat(p.Status.InitContainerStatuses, p.Status.ContainerStatuses)
}
