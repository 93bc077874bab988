package controllers

// Pure tests: run them with -short (TestMain starts envtest otherwise).

import (
	"testing"
	"time"

	"github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
	"github.com/extendeddaemonset/extendeddaemonset/controllers/rollout"
)

// The active replica set takes back at once every pod of a template that
// is neither its own nor the running canary's on the canary's nodes: a
// failed canary's, and one of a canary reverted in git or replaced by a
// third template. The pods of the replica set it rolls out over wait for
// their domain's turn.
func TestReturnsAtOnce(t *testing.T) {
	activeSince := metav1.NewTime(benchNow.Add(-90 * time.Minute))
	c := newBenchCluster(1, func(int) (bool, bool) { return true, true })
	c.current.Status.ActiveSince = &activeSince
	abandoned := benchReplicaSet("agent-3", "agent:v3")
	running := benchReplicaSet("agent-4", "agent:v4")
	for _, tc := range []struct {
		name    string
		canary  *v1alpha1.CanaryStatus
		since   *metav1.Time
		ers     *v1alpha1.ExtendedDaemonSetReplicaSet
		created time.Duration // before benchNow
		label   bool          // the pod carries its replica set's label
		want    bool
	}{
		{name: "its own pod", ers: c.current, created: time.Hour, label: true},
		{name: "a pod of the replica set it rolls out over", ers: c.old, created: 2 * time.Hour, label: true},
		{name: "a pod of a canary reverted in git", ers: abandoned, created: 10 * time.Minute, label: true, want: true},
		{
			name: "a pod of a canary a third template replaced", ers: abandoned, created: 10 * time.Minute, label: true, want: true,
			canary: &v1alpha1.CanaryStatus{ReplicaSet: running.Name, Nodes: []string{"elsewhere"}},
		},
		{
			name: "a pod the running canary left on a node no longer its own", ers: running, created: 10 * time.Minute, label: true, want: true,
			canary: &v1alpha1.CanaryStatus{ReplicaSet: running.Name, Nodes: []string{"elsewhere"}},
		},
		{
			name: "a failed canary's pod, whenever it was created", ers: abandoned, created: 2 * time.Hour, label: true, want: true,
			canary: &v1alpha1.CanaryStatus{ReplicaSet: abandoned.Name, Failed: true},
		},
		{
			name: "not active since a known time: a failed canary's pods alone", ers: abandoned, created: 10 * time.Minute, label: true,
			since: &metav1.Time{},
		},
		{name: "a pod of a DaemonSet handed over, not ours", ers: abandoned, created: 10 * time.Minute},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := gomega.NewWithT(t)
			eds, active := c.eds.DeepCopy(), c.current.DeepCopy()
			eds.Status.Canary = tc.canary
			if tc.since != nil {
				active.Status.ActiveSince = nil
			}
			pod := benchPod(tc.ers, "node-00000", true)
			pod.CreationTimestamp = metav1.NewTime(benchNow.Add(-tc.created))
			if !tc.label {
				delete(pod.Labels, v1alpha1.ExtendedDaemonSetReplicaSetNameLabel)
			}
			returning := returnsAtOnce(eds, active)
			g.Expect(returning != nil && returning(pod)).To(gomega.Equal(tc.want))
		})
	}
	// Only the active replica set takes pods back.
	g := gomega.NewWithT(t)
	g.Expect(returnsAtOnce(c.eds, c.old)).To(gomega.BeNil())
}

// A canary reverted in git under a Sequential topology: its nodes in the
// later domains go back to the active template at once, within the
// budgets, while the first domain bakes; the pods the rollout replaces
// there wait for their domain's turn.
func TestRevertedCanaryNodesReturnAtOnce(t *testing.T) {
	g := gomega.NewWithT(t)
	// Nine nodes in zones 0, 1 and 2 (node i in zone i%3); zone 0 runs
	// the active template, available for an hour, and bakes for two.
	c := newBenchCluster(9, func(i int) (bool, bool) { return i%3 == 0, true })
	c.eds.Spec.Strategy.RollingUpdate.MaxUnavailable = ptr.To(intstr.FromInt32(3))
	c.eds.Spec.Strategy.RollingUpdate.Topology = &v1alpha1.RollingUpdateTopology{
		Key: "topology.kubernetes.io/zone", DomainBakeTime: &metav1.Duration{Duration: 2 * time.Hour},
	}
	c.current.Status.ActiveSince = &metav1.Time{Time: benchNow.Add(-90 * time.Minute)}
	// The canary of agent:v3 ran on nodes 1 and 2 until git went back to
	// agent:v2: the status holds no canary any more.
	reverted := benchReplicaSet("agent-3", "agent:v3")
	for _, i := range []int{1, 2} {
		c.pods[i] = benchPod(reverted, c.nodes[i].Name, true)
		c.pods[i].CreationTimestamp = metav1.NewTime(benchNow.Add(-10 * time.Minute))
	}
	obs, err := c.observe(c.current)
	g.Expect(err).NotTo(gomega.HaveOccurred())
	plan := rollout.Compute(obs.input)
	g.Expect(plan.Counts.Domains).To(gomega.HaveExactElements(
		gomega.HaveField("State", rollout.DomainBaking), gomega.HaveField("State", rollout.DomainPending),
		gomega.HaveField("State", rollout.DomainPending)))
	g.Expect(plan.Delete).To(gomega.ConsistOf(
		rollout.Deletion{Pod: c.pods[1].Name, Node: c.nodes[1].Name, Reason: rollout.DeleteReplaced},
		rollout.Deletion{Pod: c.pods[2].Name, Node: c.nodes[2].Name, Reason: rollout.DeleteReplaced}),
		"the reverted canary's nodes wait for no domain's turn")
}
