package controllers

// Pure tests: run them with -short (TestMain starts envtest otherwise).

import (
	"testing"
	"time"

	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
	"github.com/extendeddaemonset/extendeddaemonset/controllers/placement"
	"github.com/extendeddaemonset/extendeddaemonset/controllers/rollout"
)

// turnNotReady does to node what the node lifecycle controller does when
// its kubelet goes silent: Ready Unknown since since, and the unreachable
// taints, NoSchedule and NoExecute.
func turnNotReady(node *corev1.Node, since time.Time) {
	node.Status.Conditions = []corev1.NodeCondition{{
		Type: corev1.NodeReady, Status: corev1.ConditionUnknown, Reason: "NodeStatusUnknown", LastTransitionTime: metav1.NewTime(since),
	}}
	node.Spec.Taints = append(node.Spec.Taints,
		corev1.Taint{Key: corev1.TaintNodeUnreachable, Effect: corev1.TaintEffectNoSchedule},
		corev1.Taint{Key: corev1.TaintNodeUnreachable, Effect: corev1.TaintEffectNoExecute})
}

// A node whose agent the rolling update took down, and that then turns
// NotReady, still lacks its agent: within the unresponsive grace it holds
// maxUnavailable, and the rollout takes no other node down, or two nodes
// would lack an agent once it is back. Past the grace it is left alone.
func TestNotReadyNodeTakenDownHoldsTheBudget(t *testing.T) {
	for _, tc := range []struct {
		name string
		// pending: the node holds the new pod the rollout created there,
		// which the scheduler cannot place while the node is down.
		pending bool
		// notReadyFor is how long the node has been NotReady.
		notReadyFor  time.Duration
		wantDeleted  int
		wantIgnored  int
		wantUnavail  int
		schedFailure int
	}{
		{name: "its pod gone", notReadyFor: time.Minute, wantUnavail: 1},
		{name: "its new pod pending", pending: true, notReadyFor: time.Minute, wantUnavail: 1},
		{
			name: "its new pod pending, with a scheduler-failure allowance: the node is down, not full", pending: true,
			notReadyFor: time.Minute, wantUnavail: 1, schedFailure: 1,
		},
		{name: "past the unresponsive grace", notReadyFor: placement.DefaultUnresponsiveGrace + time.Minute, wantDeleted: 1, wantIgnored: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := gomega.NewWithT(t)
			c := newBenchCluster(4, func(int) (bool, bool) { return false, true })
			c.eds.Spec.Strategy.RollingUpdate.MaxUnavailable = ptr.To(intstr.FromInt32(1))
			c.eds.Spec.Strategy.RollingUpdate.MaxPodSchedulerFailure = ptr.To(intstr.FromInt32(int32(tc.schedFailure)))
			down := c.nodes[0]
			turnNotReady(down, benchNow.Add(-tc.notReadyFor))
			c.pods = c.pods[1:]
			if tc.pending {
				pod := benchPod(c.current, down.Name, false)
				pod.Spec.NodeName = ""
				pod.Status = corev1.PodStatus{Phase: corev1.PodPending, Conditions: []corev1.PodCondition{{
					Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable,
					Message: "0/4 nodes are available: 1 node(s) had untolerated taint {node.kubernetes.io/unreachable: }",
				}}}
				c.pods = append(c.pods, pod)
			}
			obs, err := c.observe(c.current)
			g.Expect(err).NotTo(gomega.HaveOccurred())
			plan := rollout.Compute(obs.input)
			g.Expect(plan.Delete).To(gomega.HaveLen(tc.wantDeleted), "old pods taken down")
			g.Expect(plan.Counts.Unavailable).To(gomega.Equal(tc.wantUnavail), "nodes without an available agent")
			g.Expect(plan.Counts.IgnoredUnresponsive).To(gomega.Equal(tc.wantIgnored))
		})
	}
}

// With a topology, the node taken down holds its domain's budget too: no
// other node of its zone goes while it is NotReady; the other zones go on.
func TestNotReadyNodeTakenDownHoldsItsDomainBudget(t *testing.T) {
	g := gomega.NewWithT(t)
	c := newBenchCluster(6, func(int) (bool, bool) { return false, true })
	ru := &c.eds.Spec.Strategy.RollingUpdate
	ru.MaxUnavailable = ptr.To(intstr.FromInt32(3))
	ru.Topology = &v1alpha1.RollingUpdateTopology{Key: corev1.LabelTopologyZone, Order: v1alpha1.TopologyParallel}
	down := c.nodes[0]
	turnNotReady(down, benchNow.Add(-time.Minute))
	c.pods = c.pods[1:]
	obs, err := c.observe(c.current)
	g.Expect(err).NotTo(gomega.HaveOccurred())
	plan := rollout.Compute(obs.input)
	var deleted []string
	for _, d := range plan.Delete {
		deleted = append(deleted, d.Node)
	}
	// node-00000 and node-00003 are zone-0, the others zone-1 and zone-2.
	g.Expect(deleted).To(gomega.ConsistOf("node-00001", "node-00002"), "one node down per zone, %s's zone already has one", down.Name)
}
