package controllers

import (
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
	"github.com/extendeddaemonset/extendeddaemonset/controllers/canary"
)

// responsibleFor reports whether a replica set of the given role takes care
// of a node: the canary of its canary nodes, the active one of all others.
func responsibleFor(eds *v1alpha1.ExtendedDaemonSet, role v1alpha1.ReplicaSetRole) func(node string) bool {
	canaryNodes := map[string]bool{}
	if c := canary.Running(eds); c != nil {
		for _, n := range c.Nodes {
			canaryNodes[n] = true
		}
	}
	switch role {
	case v1alpha1.ReplicaSetActive:
		return func(node string) bool { return !canaryNodes[node] }
	case v1alpha1.ReplicaSetCanary:
		return func(node string) bool { return canaryNodes[node] }
	default:
		return func(string) bool { return false }
	}
}

// returnsAtOnce picks, for the active replica set, the pods of other
// replica sets it takes back rather than rolls forward: they return their
// nodes to the active template, which runs around them already, so no
// domain's turn nor bake holds them there (the budgets still do). Those
// are a failed canary's pods, and every pod of ours created since the
// replica set became active: from then on only a canary creates pods of
// another template, so such a pod on a node the active replica set takes
// care of is of a canary that let the node go (reverted in git, replaced
// by a third template, or no longer holding that node). The pods of the
// replica set it rolls out over are older, and wait for their domain's
// turn. It is nil for the other roles.
func returnsAtOnce(eds *v1alpha1.ExtendedDaemonSet, ers *v1alpha1.ExtendedDaemonSetReplicaSet) func(*corev1.Pod) bool {
	if canary.RoleOf(eds, ers.Name) != v1alpha1.ReplicaSetActive {
		return nil
	}
	failed := ""
	if c := eds.Status.Canary; c != nil && c.Failed {
		failed = c.ReplicaSet
	}
	var since time.Time
	if ers.Status.ActiveSince != nil {
		since = ers.Status.ActiveSince.Time
	}
	return func(pod *corev1.Pod) bool {
		switch pod.Labels[v1alpha1.ExtendedDaemonSetReplicaSetNameLabel] {
		case "", ers.Name:
			// A pod of the DaemonSet handed over, or its own.
			return false
		case failed:
			return true
		default:
			// Both times are kept to the second, so a pod created in the
			// second the replica set became active is not told apart from
			// the pods it rolls out over, which may have been created in
			// that second too: it waits for its domain's turn, which costs
			// time but never a budget or the order of the domains.
			return !since.IsZero() && pod.CreationTimestamp.After(since)
		}
	}
}
