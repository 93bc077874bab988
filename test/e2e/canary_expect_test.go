package e2e

import (
	"time"

	"github.com/onsi/gomega"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
	"github.com/extendeddaemonset/extendeddaemonset/test/argocd"
)

// createAgent creates the agent at v1 on every node with the canary
// strategy given, replacing half the nodes at a time once a canary is
// promoted (the pace of the rolling update is not what canary tests judge),
// and waits until it has rolled out. It returns the agent and the nodes.
func (s *scenario) createAgent(canary *v1alpha1.CanaryStrategy) (*v1alpha1.ExtendedDaemonSet, []string) {
	s.t.Helper()
	nodes := s.nodeNames()
	eds := agentEDS(s.ns, "agent", "v1")
	eds.Spec.Strategy.RollingUpdate.MaxUnavailable = ptr.To(intstr.FromString("50%"))
	eds.Spec.Strategy.Canary = canary
	s.create(eds)
	eds, _ = s.expectRolledOut(eds, "v1", nodes)
	return eds, nodes
}

// expectPromoted waits until eds has promoted its canary replica set and
// rolled version out to nodes, and has told of the promotion.
func (s *scenario) expectPromoted(eds *v1alpha1.ExtendedDaemonSet, version string, nodes []string, canary string) {
	s.t.Helper()
	_, active := s.expectRolledOut(eds, version, nodes)
	s.g.Expect(active.Name).To(gomega.Equal(canary), "active replica set")
	s.expectEvent(eds, "CanaryPromoted", canary)
}

// canaryPhase is where an ExtendedDaemonSet stands with a canary, in its
// conditions, its state column and for kstatus.
type canaryPhase struct {
	// reason is the reason of the Canary condition, and of Reconciling, or
	// of Stalled once the canary failed.
	reason  string
	state   v1alpha1.ExtendedDaemonSetState
	kstatus status.Status
	// argo is the Argo CD health the shipped check gives.
	argo string
}

var (
	canaryRunning = canaryPhase{v1alpha1.ReasonCanaryRunning, v1alpha1.StateCanary, status.InProgressStatus, argocd.Progressing}
	canaryPaused  = canaryPhase{v1alpha1.ReasonCanaryPaused, v1alpha1.StateCanaryPaused, status.InProgressStatus, argocd.Suspended}
	canaryFailed  = canaryPhase{v1alpha1.ReasonCanaryFailed, v1alpha1.StateCanaryFailed, status.FailedStatus, argocd.Degraded}
)

// checkCanary checks that eds reports its canary in phase, for the reason
// why (status.canary.reason, also in the Canary condition's message)
// unless why is empty.
func checkCanary(g gomega.Gomega, eds *v1alpha1.ExtendedDaemonSet, phase canaryPhase, why string) {
	g.Expect(eds.Status.ObservedGeneration).To(gomega.Equal(eds.Generation), "observedGeneration")
	c := eds.Status.Canary
	g.Expect(c).NotTo(gomega.BeNil(), "no canary")
	g.Expect(c.Failed).To(gomega.Equal(phase == canaryFailed), "canary failed")
	g.Expect(c.Paused).To(gomega.Equal(phase == canaryPaused), "canary paused")
	if why != "" {
		g.Expect(c.Reason).To(gomega.Equal(why), "canary reason: %s", c.Message)
	}
	conds := eds.Status.Conditions
	g.Expect(apimeta.IsStatusConditionFalse(conds, v1alpha1.ReadyCondition)).To(gomega.BeTrue(), "Ready in %v", conds)
	progressing, absent, canaryStatus := v1alpha1.ReconcilingCondition, v1alpha1.StalledCondition, metav1.ConditionTrue
	if phase == canaryFailed {
		progressing, absent, canaryStatus = v1alpha1.StalledCondition, v1alpha1.ReconcilingCondition, metav1.ConditionFalse
	}
	g.Expect(apimeta.FindStatusCondition(conds, progressing)).To(gomega.And(gomega.Not(gomega.BeNil()),
		gomega.HaveField("Status", metav1.ConditionTrue), gomega.HaveField("Reason", phase.reason),
		gomega.HaveField("Message", gomega.ContainSubstring(c.ReplicaSet))), "%s in %v", progressing, conds)
	g.Expect(apimeta.FindStatusCondition(conds, absent)).To(gomega.BeNil(), "%s in %v", absent, conds)
	g.Expect(apimeta.FindStatusCondition(conds, v1alpha1.CanaryCondition)).To(gomega.And(gomega.Not(gomega.BeNil()),
		gomega.HaveField("Status", canaryStatus), gomega.HaveField("Reason", phase.reason),
		gomega.HaveField("Message", gomega.And(gomega.ContainSubstring(c.ReplicaSet), gomega.ContainSubstring(why)))),
		"Canary in %v", conds)
	g.Expect(eds.Status.State).To(gomega.Equal(phase.state))
	g.Expect(kstatusOf(g, eds).Status).To(gomega.Equal(phase.kstatus))
	health, message := argoHealthOf(g, eds)
	g.Expect(health).To(gomega.Equal(phase.argo), "Argo CD health: %s", message)
}

// expectCanary waits until eds reports a canary of its current template
// in phase for the reason why (any reason if empty), and returns it.
func (s *scenario) expectCanary(eds *v1alpha1.ExtendedDaemonSet, phase canaryPhase, why string) *v1alpha1.ExtendedDaemonSet {
	s.t.Helper()
	var latest *v1alpha1.ExtendedDaemonSet
	s.g.Eventually(func(g gomega.Gomega) {
		latest = &v1alpha1.ExtendedDaemonSet{}
		g.Expect(env.Client.Get(s.ctx, client.ObjectKeyFromObject(eds), latest)).To(gomega.Succeed())
		checkCanary(g, latest, phase, why)
		g.Expect(latest.Status.ActiveReplicaSet).NotTo(gomega.Equal(latest.Status.Canary.ReplicaSet), "the canary is active")
	}).WithTimeout(rolloutTimeout).WithPolling(pollInterval).Should(gomega.Succeed())
	return latest
}

// expectCanaryHolds waits until eds runs a canary of version on its
// canary nodes in phase for the reason why, every other node of nodes
// staying on stable. Then it checks that nothing moves until the canary has
// run for past plus holdWindow: neither promoted nor failed, same canary
// replica set, nodes and pods. It returns the canary.
func (s *scenario) expectCanaryHolds(eds *v1alpha1.ExtendedDaemonSet, nodes []string, stable, version string,
	phase canaryPhase, why string, past time.Duration,
) v1alpha1.CanaryStatus {
	s.t.Helper()
	latest := s.expectCanary(eds, phase, why)
	canary, active := *latest.Status.Canary, latest.Status.ActiveReplicaSet
	s.expectVersions(eds, nodes, stable, canary.Nodes, version)
	hold := max(holdWindow, time.Until(canary.StartedAt.Add(past+holdWindow)))
	s.expectPodsKept(eds, hold, func(g gomega.Gomega) {
		latest := s.get(eds)
		checkCanary(g, latest, phase, why)
		g.Expect(latest.Status.ActiveReplicaSet).To(gomega.Equal(active), "promoted")
		g.Expect(latest.Status.Canary.ReplicaSet).To(gomega.Equal(canary.ReplicaSet))
		g.Expect(latest.Status.Canary.Nodes).To(gomega.Equal(canary.Nodes))
	})
	return canary
}
