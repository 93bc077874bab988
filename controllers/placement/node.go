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
	for _, c := range node.Status.Conditions {
		if c.Type != corev1.NodeReady {
			continue
		}
		return c.Status != corev1.ConditionTrue && now.Sub(c.LastTransitionTime.Time) > grace
	}
	// A node without a Ready condition has not been judged by anyone yet
	// (the node lifecycle controller sets it Unknown when its kubelet goes
	// silent): nothing says its agent is beyond help.
	return false
}
