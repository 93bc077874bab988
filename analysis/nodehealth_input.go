package analysis

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// NodeObservation is one node as a nodeHealth measurement sees it.
type NodeObservation struct {
	// Node is the node, with its conditions.
	Node *corev1.Node
	// Since is when the change reached the node: when the new version's
	// pod first started there. For a baseline node, the earliest Since of
	// the judged nodes it is compared with, so both sides cover the same
	// time.
	Since time.Time
	// Pods are the pods of other workloads bound to the node: neither the
	// ExtendedDaemonSet's own pods nor those of the DaemonSet it drives.
	Pods []*corev1.Pod
}

// NodeHealthInput is what a nodeHealth measurement judges: the nodes the
// new version reached and same-zone nodes that did not change. Nodes in
// maintenance are in neither list: the observer leaves them out.
type NodeHealthInput struct {
	// Judged are the canary nodes, or the baking domain's nodes that run
	// the new version.
	Judged []NodeObservation
	// Baseline are nodes in the judged nodes' zones that still run the
	// stable version.
	Baseline []NodeObservation
}

// NodeObserver observes the nodes a nodeHealth metric judges. The
// controller's reads the nodes from its cache and lists the other pods of
// each node around it; it must give up when its context ends.
type NodeObserver interface {
	ObserveNodes(ctx context.Context) (NodeHealthInput, error)
}
