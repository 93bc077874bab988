package placement

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestUnresponsive(t *testing.T) {
	now := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	grace := 5 * time.Minute
	withReady := func(status corev1.ConditionStatus, since time.Duration) *corev1.Node {
		return &corev1.Node{
			ObjectMeta: metav1.ObjectMeta{CreationTimestamp: metav1.NewTime(now.Add(-time.Hour))},
			Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{
				{Type: corev1.NodeMemoryPressure, Status: corev1.ConditionFalse},
				{Type: corev1.NodeReady, Status: status, LastTransitionTime: metav1.NewTime(now.Add(-since))},
			}},
		}
	}
	for _, tc := range []struct {
		name string
		node *corev1.Node
		want bool
	}{
		{"ready for long", withReady(corev1.ConditionTrue, time.Hour), false},
		{"not ready within the grace period", withReady(corev1.ConditionFalse, time.Minute), false},
		{"not ready past the grace period", withReady(corev1.ConditionFalse, 6*time.Minute), true},
		{"unknown past the grace period", withReady(corev1.ConditionUnknown, 6*time.Minute), true},
		{"new node without conditions", &corev1.Node{ObjectMeta: metav1.ObjectMeta{CreationTimestamp: metav1.NewTime(now.Add(-time.Minute))}}, false},
		{"old node without conditions", &corev1.Node{ObjectMeta: metav1.ObjectMeta{CreationTimestamp: metav1.NewTime(now.Add(-time.Hour))}}, false},
	} {
		if got := Unresponsive(tc.node, now, grace); got != tc.want {
			t.Errorf("%s: Unresponsive = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// A node not Ready within the grace becomes unresponsive at its Ready
// condition's last transition plus the grace, and no event marks that
// moment: UnresponsiveIn is when to look again.
func TestUnresponsiveIn(t *testing.T) {
	now := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	grace := 5 * time.Minute
	withReady := func(status corev1.ConditionStatus, since time.Duration) *corev1.Node {
		return &corev1.Node{Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{
			{Type: corev1.NodeReady, Status: status, LastTransitionTime: metav1.NewTime(now.Add(-since))},
		}}}
	}
	for _, tc := range []struct {
		name string
		node *corev1.Node
		want time.Duration
	}{
		{"ready", withReady(corev1.ConditionTrue, time.Hour), 0},
		{"not ready for a minute", withReady(corev1.ConditionFalse, time.Minute), 4*time.Minute + time.Millisecond},
		{"unknown for a minute", withReady(corev1.ConditionUnknown, time.Minute), 4*time.Minute + time.Millisecond},
		{"not ready for exactly the grace", withReady(corev1.ConditionFalse, grace), time.Millisecond},
		{"already unresponsive", withReady(corev1.ConditionFalse, 6*time.Minute), 0},
		{"without conditions", &corev1.Node{}, 0},
	} {
		got := UnresponsiveIn(tc.node, now, grace)
		if got != tc.want {
			t.Errorf("%s: UnresponsiveIn = %v, want %v", tc.name, got, tc.want)
		}
		// At the time it names, the node is unresponsive.
		if got > 0 && !Unresponsive(tc.node, now.Add(got), grace) {
			t.Errorf("%s: not unresponsive %v later", tc.name, got)
		}
	}
}

func TestNodeReadiness(t *testing.T) {
	since := time.Date(2025, 6, 1, 11, 0, 0, 0, time.UTC)
	node := func(conds ...corev1.NodeCondition) *corev1.Node {
		return &corev1.Node{Status: corev1.NodeStatus{Conditions: conds}}
	}
	ready := func(status corev1.ConditionStatus) corev1.NodeCondition {
		return corev1.NodeCondition{Type: corev1.NodeReady, Status: status, LastTransitionTime: metav1.NewTime(since)}
	}
	pressure := corev1.NodeCondition{Type: corev1.NodeMemoryPressure, Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(since.Add(time.Hour))}
	for _, tc := range []struct {
		name      string
		node      *corev1.Node
		want      Readiness
		wantReady bool
	}{
		{"ready", node(pressure, ready(corev1.ConditionTrue)), Readiness{corev1.ConditionTrue, since}, true},
		{"not ready", node(ready(corev1.ConditionFalse)), Readiness{corev1.ConditionFalse, since}, false},
		{"unknown: the kubelet went silent", node(ready(corev1.ConditionUnknown)), Readiness{corev1.ConditionUnknown, since}, false},
		{"no Ready condition is Unknown, since no known time", node(pressure), Readiness{Status: corev1.ConditionUnknown}, false},
		{"no condition at all", node(), Readiness{Status: corev1.ConditionUnknown}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := NodeReadiness(tc.node)
			if got != tc.want || got.Ready() != tc.wantReady {
				t.Errorf("NodeReadiness = %+v (ready %v), want %+v (ready %v)", got, got.Ready(), tc.want, tc.wantReady)
			}
		})
	}
}
