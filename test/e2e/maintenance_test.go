package e2e

import (
	"testing"
	"time"

	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
	"github.com/extendeddaemonset/extendeddaemonset/controllers/placement"
)

// maintenanceNodes is the size of a maintenance test's node group.
const maintenanceNodes = 4

// A node put in maintenance (cordoned, its drain in progress) before a
// template change is never a canary: the canary takes the other nodes,
// is promoted, and the rolling update after it leaves that node with the
// agent it had; the status counts it in maintenance.
func TestNodeInMaintenanceIsNeverACanary(t *testing.T) {
	s := newScenario(t)
	group := "maint-canary"
	nodes := groupNodeNames(group, maintenanceNodes)
	s.addNodeGroup(group, nodes...)
	eds := agentEDS(s.ns, group, "v1")
	eds.Spec.Template.Spec.NodeSelector = onGroup(group)
	eds.Spec.Strategy.RollingUpdate.MaxUnavailable = ptr.To(intstr.FromInt32(1))
	eds.Spec.Strategy.Canary = &v1alpha1.CanaryStrategy{
		Replicas:       ptr.To(intstr.FromString("50%")),
		Duration:       &metav1.Duration{Duration: 5 * time.Second},
		ValidationMode: v1alpha1.CanaryValidationAuto,
	}
	s.create(eds)
	s.expectRolledOut(eds, "v1", nodes)

	// The first node by name is the canary's first pick when all are
	// alike: in maintenance, it must be passed over.
	drained := nodes[0]
	kept := s.podOn(eds, drained)
	s.startDrain(drained)
	s.expectNodesInMaintenance(eds, 1)

	s.update(eds, func(e *v1alpha1.ExtendedDaemonSet) { setVersion(e, "v2") })
	running := *s.expectCanary(eds, canaryRunning, "").Status.Canary
	s.g.Expect(running.Nodes).To(gomega.HaveLen(2), "canary nodes: 50%% of the nodes")
	s.g.Expect(running.Nodes).NotTo(gomega.ContainElement(drained), "a node in maintenance is never a canary")
	latest, active := s.expectRolledOut(eds, "v2", without(nodes, drained), kept)
	s.g.Expect(active.Name).To(gomega.Equal(running.ReplicaSet), "active replica set")
	s.expectEvent(eds, "CanaryPromoted", running.ReplicaSet)
	s.g.Expect(latest.Status.NodesInMaintenance).To(gomega.BeEquivalentTo(1))
}

// Mid-rollout, with maxUnavailable 1, a node is put in maintenance and its
// drain evicts its agent, again and again. The rollout neither waits for
// that node nor counts it against the budget: it ends Ready on the other
// nodes, never more than one of them without an available agent (the pod
// watcher, and the invariant monitor on every node but the drained one),
// and the status counts the node in maintenance.
func TestNodeInMaintenanceMidRolloutNeitherBlocksNorSpendsTheBudget(t *testing.T) {
	s := newScenario(t)
	group := "maint-rollout"
	nodes := groupNodeNames(group, maintenanceNodes)
	s.addNodeGroup(group, nodes...)
	eds := agentEDS(s.ns, group, "v1")
	eds.Spec.Template.Spec.NodeSelector = onGroup(group)
	eds.Spec.Strategy.RollingUpdate.MaxUnavailable = ptr.To(intstr.FromInt32(1))
	// Each replacement takes a few seconds, so that the rollout is still
	// under way when the drain starts.
	eds.Spec.MinReadySeconds = 3
	s.create(eds)
	s.expectRolledOut(eds, "v1", nodes)

	drained := nodes[len(nodes)-1]
	others := without(nodes, drained)
	pods, statuses := s.startWatching(eds, edsPods(eds.Name), others)
	s.update(eds, func(e *v1alpha1.ExtendedDaemonSet) { setVersion(e, "v2") })
	s.g.Eventually(func(g gomega.Gomega) {
		g.Expect(s.versionsOf(g, eds)).To(gomega.ContainElement(agentImage("v2")), "no v2 pod yet")
	}).WithTimeout(rolloutTimeout).WithPolling(pollInterval).Should(gomega.Succeed())
	s.g.Expect(s.versionsOf(s.g, eds)[drained]).To(gomega.Equal(agentImage("v1")), "the drained node is replaced last, by name")
	s.startDrain(drained)
	stop := s.evictAgentsOn(eds, drained)
	defer stop()

	s.expectRolledOut(eds, "v2", others)
	seen := s.stopWatching(pods, statuses)
	s.g.Expect(seen.MaxUnavailable).To(gomega.BeNumerically("<=", 1), "nodes not in maintenance without an available agent at once")
	s.g.Expect(seen.MaxPerNode).To(gomega.Equal(1), "non-terminating pods on one node")
	s.expectNodesInMaintenance(eds, 1)
	s.expectEvent(eds, "RolledOut")
}

// startDrain puts node in maintenance as a drain does: cordoned, with its
// DrainInProgress lifecycle condition True.
func (s *scenario) startDrain(node string) {
	s.t.Helper()
	s.updateNode(node, func(n *corev1.Node) { n.Spec.Unschedulable = true })
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		n := &corev1.Node{}
		if err := env.Client.Get(s.ctx, client.ObjectKey{Name: node}, n); err != nil {
			return err
		}
		n.Status.Conditions = append(n.Status.Conditions, corev1.NodeCondition{
			Type: placement.NodeDrainInProgress, Status: corev1.ConditionTrue, Reason: "Draining",
			LastTransitionTime: metav1.Now(), LastHeartbeatTime: metav1.Now(),
		})
		return env.Client.Status().Update(s.ctx, n)
	})
	s.g.Expect(err).NotTo(gomega.HaveOccurred())
	s.g.Eventually(func(g gomega.Gomega) {
		n := &corev1.Node{}
		g.Expect(env.Client.Get(s.ctx, client.ObjectKey{Name: node}, n)).To(gomega.Succeed())
		g.Expect(placement.Maintenance(n)).To(gomega.Equal(string(placement.NodeDrainInProgress)))
	}).WithTimeout(rolloutTimeout).WithPolling(pollInterval).Should(gomega.Succeed())
}

// evictAgentsOn plays the drain of node: it deletes every pod of eds
// there, as long as the test runs or until stop is called.
func (s *scenario) evictAgentsOn(eds *v1alpha1.ExtendedDaemonSet, node string) (stop func()) {
	done := make(chan struct{})
	go func() {
		tick := time.NewTicker(pollInterval)
		defer tick.Stop()
		for {
			var pods corev1.PodList
			if err := env.Client.List(s.ctx, &pods, client.InNamespace(eds.Namespace),
				client.MatchingLabels{v1alpha1.ExtendedDaemonSetNameLabel: eds.Name}); err == nil {
				for i := range pods.Items {
					if p := &pods.Items[i]; p.Spec.NodeName == node && p.DeletionTimestamp == nil {
						_ = env.Client.Delete(s.ctx, p)
					}
				}
			}
			select {
			case <-done:
				return
			case <-s.ctx.Done():
				return
			case <-tick.C:
			}
		}
	}()
	return func() { close(done) }
}

// versionsOf is the image of the live agent on each node.
func (s *scenario) versionsOf(g gomega.Gomega, eds *v1alpha1.ExtendedDaemonSet) map[string]string {
	out := map[string]string{}
	for _, pod := range s.pods(g, eds) {
		if pod.DeletionTimestamp == nil {
			out[pod.Spec.NodeName] = pod.Spec.Containers[0].Image
		}
	}
	return out
}

// expectNodesInMaintenance waits until eds counts n nodes in maintenance.
func (s *scenario) expectNodesInMaintenance(eds *v1alpha1.ExtendedDaemonSet, n int32) {
	s.t.Helper()
	s.g.Eventually(func(g gomega.Gomega) {
		g.Expect(s.get(eds).Status.NodesInMaintenance).To(gomega.Equal(n), "status.nodesInMaintenance")
	}).WithTimeout(rolloutTimeout).WithPolling(pollInterval).Should(gomega.Succeed())
}
