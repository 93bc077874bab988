package placement

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
)

// Node lifecycle conditions that say a node is being taken out of service.
// Kubernetes 1.37 adds them as alpha (KEP-5683); no kubelet or controller
// of an older cluster writes them, so their absence means nothing.
const (
	NodeDrainInProgress               corev1.NodeConditionType = "DrainInProgress"
	NodeDrained                       corev1.NodeConditionType = "Drained"
	NodeMaintenanceInProgress         corev1.NodeConditionType = "MaintenanceInProgress"
	NodeGracefulShutdownInProgress    corev1.NodeConditionType = "GracefulNodeShutdownInProgress"
	taintKarpenterDisrupted                                    = "karpenter.sh/disrupted"
	taintKarpenterDisruption                                   = "karpenter.sh/disruption"
	taintClusterAutoscalerToBeDeleted                          = "ToBeDeletedByClusterAutoscaler"
)

// maintenanceConditions are the lifecycle conditions that, True, put a node
// in maintenance. MaintenancePlanned is not one: the node still serves, and
// its agent with it, until the maintenance starts.
var maintenanceConditions = []corev1.NodeConditionType{
	NodeDrainInProgress, NodeDrained, NodeMaintenanceInProgress, NodeGracefulShutdownInProgress,
}

// maintenanceTaints are the taints of the tools that take nodes away:
// Karpenter's disruption (v1 and the earlier key), the cluster
// autoscaler's scale-down, and the out-of-service taint of a node shut
// down for good.
var maintenanceTaints = []string{
	taintKarpenterDisrupted, taintKarpenterDisruption, taintClusterAutoscalerToBeDeleted, corev1.TaintNodeOutOfService,
}

// Maintenance says why node is in maintenance, empty when it is not. It is
// the one definition of a node the controller leaves alone: being deleted,
// cordoned, disrupted by Karpenter or the cluster autoscaler, out of
// service, or with a True lifecycle condition (draining or drained, in
// maintenance, shutting down). Such a node is never picked as a canary, is
// neither judged nor a baseline for node health, and keeps the agent it
// has: a rollout does not replace it there, and its being unavailable does
// not count against maxUnavailable or a domain's budget, so maintenance
// neither blocks a rollout nor eats its budget. A node that is only not
// Ready is not in maintenance: that is what a broken agent can cause and
// what node health judges.
func Maintenance(node *corev1.Node) string {
	if node.DeletionTimestamp != nil {
		return "being deleted"
	}
	for _, c := range node.Status.Conditions {
		if c.Status == corev1.ConditionTrue && isMaintenanceCondition(c.Type) {
			return string(c.Type)
		}
	}
	for _, t := range node.Spec.Taints {
		for _, key := range maintenanceTaints {
			if t.Key == key {
				return fmt.Sprintf("taint %s", key)
			}
		}
	}
	if node.Spec.Unschedulable {
		return "cordoned"
	}
	return ""
}

// InMaintenance says whether node is in maintenance (see Maintenance).
func InMaintenance(node *corev1.Node) bool { return Maintenance(node) != "" }

func isMaintenanceCondition(t corev1.NodeConditionType) bool {
	for _, m := range maintenanceConditions {
		if t == m {
			return true
		}
	}
	return false
}
