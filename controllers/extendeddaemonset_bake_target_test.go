package controllers

import (
	"testing"

	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/extendeddaemonset/extendeddaemonset/analysis"
	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
)

// A bake measures the live pods of the replica set rolling out against the
// live pods still on an older template, the older replica set most of them
// belong to naming the baseline.
func TestBakeTargetOf(t *testing.T) {
	g := gomega.NewWithT(t)
	eds := &v1alpha1.ExtendedDaemonSet{ObjectMeta: metav1.ObjectMeta{Name: "agent", Namespace: "ns"}}
	eds.Status.ActiveReplicaSet = "agent-3"
	pod := func(name, rs, node string, deleting bool) *corev1.Pod {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns",
			Labels: map[string]string{v1alpha1.ExtendedDaemonSetReplicaSetNameLabel: rs}}}
		p.Spec.NodeName = node
		if deleting {
			p.DeletionTimestamp = &metav1.Time{}
		}
		return p
	}
	got := bakeTargetOf(eds, []*corev1.Pod{
		pod("p-b", "agent-3", "node-b", false), pod("p-a", "agent-3", "node-a", false), pod("p-x", "agent-3", "node-x", true),
		pod("o-c", "agent-2", "node-c", false), pod("o-d", "agent-2", "node-d", false), pod("o-e", "agent-1", "node-e", false),
		pod("o-f", "agent-1", "node-f", true),
	})
	g.Expect(got).To(gomega.Equal(analysis.Target{
		Namespace: "ns", Name: "agent", CanaryReplicaSet: "agent-3", StableReplicaSet: "agent-2",
		CanaryPods: []string{"p-a", "p-b"}, CanaryNodes: []string{"node-a", "node-b"}, StablePods: []string{"o-c", "o-d", "o-e"},
	}))
	g.Expect(bakeTargetOf(eds, nil).StableReplicaSet).To(gomega.BeEmpty())
}
