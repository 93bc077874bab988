package controllers

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
)

// roleOf is the part a replica set plays, read from its ExtendedDaemonSet's
// status, which is where the decision lives so that it survives restarts.
func roleOf(eds *v1alpha1.ExtendedDaemonSet, ers string) v1alpha1.ReplicaSetRole {
	c := runningCanary(eds)
	switch {
	case eds.Status.ActiveReplicaSet == ers:
		return v1alpha1.ReplicaSetActive
	case c != nil && c.ReplicaSet == ers:
		return v1alpha1.ReplicaSetCanary
	default:
		return v1alpha1.ReplicaSetUnknown
	}
}

// runningCanary is the canary that holds its nodes, nil when there is none
// or it failed (its nodes then went back to the active replica set).
func runningCanary(eds *v1alpha1.ExtendedDaemonSet) *v1alpha1.CanaryStatus {
	if c := eds.Status.Canary; c != nil && !c.Failed && c.ReplicaSet != "" {
		return c
	}
	return nil
}

// responsibleFor reports whether a replica set of the given role takes care
// of a node: the canary of its canary nodes, the active one of all others.
func responsibleFor(eds *v1alpha1.ExtendedDaemonSet, role v1alpha1.ReplicaSetRole) func(node string) bool {
	canary := map[string]bool{}
	if c := runningCanary(eds); c != nil {
		for _, n := range c.Nodes {
			canary[n] = true
		}
	}
	switch role {
	case v1alpha1.ReplicaSetActive:
		return func(node string) bool { return !canary[node] }
	case v1alpha1.ReplicaSetCanary:
		return func(node string) bool { return canary[node] }
	default:
		return func(string) bool { return false }
	}
}

// returnsAtOnce picks, for the active replica set, the pods of other
// replica sets it takes back rather than rolls forward: a failed canary's.
// They return their nodes to the active template, so no domain's turn nor
// bake holds them there. It is nil for the other roles.
func returnsAtOnce(eds *v1alpha1.ExtendedDaemonSet, ers *v1alpha1.ExtendedDaemonSetReplicaSet) func(*corev1.Pod) bool {
	c := eds.Status.Canary
	if roleOf(eds, ers.Name) != v1alpha1.ReplicaSetActive || c == nil || !c.Failed {
		return nil
	}
	return func(pod *corev1.Pod) bool {
		return pod.Labels[v1alpha1.ExtendedDaemonSetReplicaSetNameLabel] == c.ReplicaSet
	}
}
