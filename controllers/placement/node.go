package placement

import (
	"time"

	corev1 "k8s.io/api/core/v1"
)

// DefaultUnresponsiveGrace is how long a node may stay not Ready before its
// agent stops counting against a rollout's budget.
const DefaultUnresponsiveGrace = 5 * time.Minute

// Unresponsive reports whether node has not been Ready (its Ready condition
// False or Unknown) for longer than grace at now. Its kubelet
// neither starts new pods nor confirms deletions, so a pod deleted there
// stays terminating until the node returns: a rollout that waited for it
// would wait forever.
func Unresponsive(node *corev1.Node, now time.Time, grace time.Duration) bool {
	since, ok := notReadySince(node)
	return ok && now.Sub(since) > grace
}

// UnresponsiveIn is how long until a node that is not Ready becomes
// unresponsive at grace: no event marks that moment, so a rollout the node
// holds back looks again then. It is zero when the node is Ready, is
// already unresponsive, or has no Ready condition.
func UnresponsiveIn(node *corev1.Node, now time.Time, grace time.Duration) time.Duration {
	since, ok := notReadySince(node)
	if !ok || Unresponsive(node, now, grace) {
		return 0
	}
	// Unresponsive holds strictly past the grace: a millisecond more.
	return since.Add(grace).Sub(now) + time.Millisecond
}

// notReadySince is when the node's Ready condition last left True, false
// when it is True.
func notReadySince(node *corev1.Node) (time.Time, bool) {
	for _, c := range node.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.LastTransitionTime.Time, c.Status != corev1.ConditionTrue
		}
	}
	// A node without a Ready condition has not been judged by anyone yet
	// (the node lifecycle controller sets it Unknown when its kubelet goes
	// silent): nothing says its agent is beyond help.
	return time.Time{}, false
}
