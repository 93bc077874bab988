package e2e

import (
	"testing"

	"github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
	"github.com/extendeddaemonset/extendeddaemonset/test/invariants"
)

// A controller restarted in the middle of a canary resumes it as it was:
// same canary replica set, nodes, start time and pods, still waiting for
// validation; a validation then promotes it.
func TestRestartMidCanaryKeepsTheCanary(t *testing.T) {
	s := newScenario(t)
	nodes := s.nodeNames()
	eds := agentEDS(s.ns, "agent", "v1")
	eds.Spec.Strategy.Canary = &v1alpha1.CanaryStrategy{
		Replicas: ptr.To(intstr.FromInt32(2)), ValidationMode: v1alpha1.CanaryValidationManual,
	}
	s.create(eds)
	s.expectRolledOut(eds, "v1", nodes)

	s.update(eds, func(e *v1alpha1.ExtendedDaemonSet) { setVersion(e, "v2") })
	var before v1alpha1.CanaryStatus
	canaryPods := map[string]types.UID{}
	s.g.Eventually(func(g gomega.Gomega) {
		latest := s.get(eds)
		g.Expect(latest.Status.Canary).NotTo(gomega.BeNil())
		g.Expect(latest.Status.Canary.Nodes).To(gomega.HaveLen(2))
		g.Expect(kstatusOf(g, latest).Status).To(gomega.Equal(status.InProgressStatus))
		before = *latest.Status.Canary
		for _, pod := range s.pods(g, eds) {
			if pod.Labels[v1alpha1.ExtendedDaemonSetReplicaSetNameLabel] == before.ReplicaSet {
				g.Expect(invariants.RunningAndReady(&pod)).To(gomega.BeTrue(), pod.Name)
				canaryPods[pod.Spec.NodeName] = pod.UID
			}
		}
		g.Expect(canaryPods).To(gomega.HaveLen(2))
	}).WithTimeout(rolloutTimeout).WithPolling(pollInterval).Should(gomega.Succeed())

	s.g.Expect(env.RestartControllers(s.ctx)).To(gomega.Succeed())
	s.g.Consistently(func(g gomega.Gomega) {
		latest := s.get(eds)
		g.Expect(latest.Status.Canary).NotTo(gomega.BeNil())
		g.Expect(latest.Status.Canary.ReplicaSet).To(gomega.Equal(before.ReplicaSet))
		g.Expect(latest.Status.Canary.Nodes).To(gomega.Equal(before.Nodes))
		g.Expect(latest.Status.Canary.StartedAt.Equal(before.StartedAt)).To(gomega.BeTrue())
		g.Expect(latest.Status.ActiveReplicaSet).NotTo(gomega.Equal(before.ReplicaSet), "promoted without validation")
		for node, uid := range canaryPods {
			g.Expect(s.podOn(eds, node).UID).To(gomega.Equal(uid), "canary pod on %s replaced", node)
		}
	}).WithTimeout(3 * holdWindow).WithPolling(pollInterval).Should(gomega.Succeed())

	s.update(eds, func(e *v1alpha1.ExtendedDaemonSet) { e.Spec.Strategy.Canary.Validate = before.ReplicaSet })
	s.expectRolledOut(eds, "v2", nodes)
}
