package canary

import "github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"

// RoleOf is the part a replica set plays, read from its ExtendedDaemonSet's
// status, which is where the decision lives so that it survives restarts.
func RoleOf(eds *v1alpha1.ExtendedDaemonSet, ers string) v1alpha1.ReplicaSetRole {
	c := Running(eds)
	switch {
	case eds.Status.ActiveReplicaSet == ers:
		return v1alpha1.ReplicaSetActive
	case c != nil && c.ReplicaSet == ers:
		return v1alpha1.ReplicaSetCanary
	default:
		return v1alpha1.ReplicaSetUnknown
	}
}

// Running is the canary that holds its nodes, nil when there is none or it
// failed (its nodes then went back to the active replica set).
func Running(eds *v1alpha1.ExtendedDaemonSet) *v1alpha1.CanaryStatus {
	if c := eds.Status.Canary; c != nil && !c.Failed && c.ReplicaSet != "" {
		return c
	}
	return nil
}
