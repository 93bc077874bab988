package placement

import (
	"time"

	corev1 "k8s.io/api/core/v1"
)

// DefaultUnresponsiveGrace is how long a node may stay not Ready before its
// agent stops counting against a rollout's budget.
const DefaultUnresponsiveGrace = 5 * time.Minute

// Readiness is what a node's Ready condition says: True, False or Unknown,
// and since when; Since is zero when nothing says.
type Readiness struct {
	Status corev1.ConditionStatus
	Since  time.Time
}

// Ready says whether the node's kubelet reports it Ready.
func (r Readiness) Ready() bool { return r.Status == corev1.ConditionTrue }

// NodeReadiness is the one reading of a node's Ready condition every
// decision shares. A node without one reads Unknown, since no known time:
// its kubelet has not reported yet (or its report was lost), which is what
// Unknown means; the node lifecycle controller writes the same Unknown
// when it finds such a node (reason NodeStatusNeverUpdated). So it is no
// Ready node to start a canary on, and, as nothing says for how long it
// has been silent, not yet past any grace either.
func NodeReadiness(node *corev1.Node) Readiness {
	for _, c := range node.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return Readiness{Status: c.Status, Since: c.LastTransitionTime.Time}
		}
	}
	return Readiness{Status: corev1.ConditionUnknown}
}

// Unresponsive reports whether node has not been Ready (its Ready condition
// False or Unknown) for longer than grace at now. Its kubelet
// neither starts new pods nor confirms deletions, so a pod deleted there
// stays terminating until the node returns: a rollout that waited for it
// would wait forever.
func Unresponsive(node *corev1.Node, now time.Time, grace time.Duration) bool {
	return NodeReadiness(node).UnresponsiveAt(now, grace)
}

// UnresponsiveAt reports whether a node of readiness r is unresponsive at
// now (Unresponsive).
func (r Readiness) UnresponsiveAt(now time.Time, grace time.Duration) bool {
	return !r.Ready() && !r.Since.IsZero() && now.Sub(r.Since) > grace
}

// UnresponsiveIn is how long until a node that is not Ready becomes
// unresponsive at grace: no event marks that moment, so a rollout the node
// holds back looks again then. It is zero when the node is Ready, is
// already unresponsive, or has no known time of leaving Ready.
func UnresponsiveIn(node *corev1.Node, now time.Time, grace time.Duration) time.Duration {
	r := NodeReadiness(node)
	if r.Ready() || r.Since.IsZero() || Unresponsive(node, now, grace) {
		return 0
	}
	// Unresponsive holds strictly past the grace: a millisecond more.
	return r.Since.Add(grace).Sub(now) + time.Millisecond
}
