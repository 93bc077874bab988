package placement

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestMaintenance(t *testing.T) {
	now := metav1.NewTime(time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC))
	node := func(mutate func(*corev1.Node)) *corev1.Node {
		n := &corev1.Node{Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{
			{Type: corev1.NodeReady, Status: corev1.ConditionTrue},
		}}}
		if mutate != nil {
			mutate(n)
		}
		return n
	}
	condition := func(t corev1.NodeConditionType, s corev1.ConditionStatus) func(*corev1.Node) {
		return func(n *corev1.Node) {
			n.Status.Conditions = append(n.Status.Conditions, corev1.NodeCondition{Type: t, Status: s})
		}
	}
	taint := func(key string) func(*corev1.Node) {
		return func(n *corev1.Node) {
			n.Spec.Taints = append(n.Spec.Taints, corev1.Taint{Key: key, Effect: corev1.TaintEffectNoSchedule})
		}
	}
	for _, tc := range []struct {
		name   string
		mutate func(*corev1.Node)
		want   string
	}{
		{"a Ready node", nil, ""},
		{"being deleted", func(n *corev1.Node) { n.DeletionTimestamp = &now }, "being deleted"},
		{"draining", condition(NodeDrainInProgress, corev1.ConditionTrue), "DrainInProgress"},
		{"drained", condition(NodeDrained, corev1.ConditionTrue), "Drained"},
		{"in maintenance", condition(NodeMaintenanceInProgress, corev1.ConditionTrue), "MaintenanceInProgress"},
		{"shutting down", condition(NodeGracefulShutdownInProgress, corev1.ConditionTrue), "GracefulNodeShutdownInProgress"},
		{"maintenance only planned", condition("MaintenancePlanned", corev1.ConditionTrue), ""},
		{"a drain that ended", condition(NodeDrainInProgress, corev1.ConditionFalse), ""},
		{"maintenance unknown", condition(NodeMaintenanceInProgress, corev1.ConditionUnknown), ""},
		{"disrupted by Karpenter", taint("karpenter.sh/disrupted"), "taint karpenter.sh/disrupted"},
		{"disrupted by an earlier Karpenter", taint("karpenter.sh/disruption"), "taint karpenter.sh/disruption"},
		{"removed by the cluster autoscaler", taint("ToBeDeletedByClusterAutoscaler"), "taint ToBeDeletedByClusterAutoscaler"},
		{"out of service", taint(corev1.TaintNodeOutOfService), "taint " + corev1.TaintNodeOutOfService},
		{"an unrelated taint", taint("dedicated"), ""},
		{"cordoned", func(n *corev1.Node) { n.Spec.Unschedulable = true }, "cordoned"},
		{"not Ready alone", func(n *corev1.Node) { n.Status.Conditions[0].Status = corev1.ConditionFalse }, ""},
		{"not-ready and unreachable taints alone", func(n *corev1.Node) {
			taint(corev1.TaintNodeNotReady)(n)
			taint(corev1.TaintNodeUnreachable)(n)
		}, ""},
		{"deleted and cordoned: the deletion first", func(n *corev1.Node) {
			n.DeletionTimestamp = &now
			n.Spec.Unschedulable = true
		}, "being deleted"},
	} {
		n := node(tc.mutate)
		if got := Maintenance(n); got != tc.want {
			t.Errorf("%s: Maintenance = %q, want %q", tc.name, got, tc.want)
		}
		if got := InMaintenance(n); got != (tc.want != "") {
			t.Errorf("%s: InMaintenance = %v, want %v", tc.name, got, tc.want != "")
		}
	}
}
