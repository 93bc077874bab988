package e2e

import (
	"fmt"
	"testing"
	"time"

	"github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
)

// budgetNodes is the size of a budget test's node group: a 50% canary of
// it takes three nodes, more than the budget of one, so a canary that
// replaced its nodes all at once would show.
const budgetNodes = 6

// budgetCanaryDuration leaves the canary's one-at-a-time replacements
// plenty of time to finish, and the test time to see them finished,
// before it can be promoted.
const budgetCanaryDuration = 20 * time.Second

// A canary replaces its pods under the rolling update's maxUnavailable, one
// node at a time here, and once promoted its rolling update spends the same
// budget: no moment of the whole rollout has more than one node without an
// available agent, nor a node with two pods.
func TestCanaryAndRollingUpdateShareMaxUnavailable(t *testing.T) {
	s := newScenario(t)
	canary, whole := s.rollOutThroughCanary("budget-unavailable", intstr.FromInt32(1), intstr.FromInt32(0))
	for phase, seen := range map[string]podCounts{"canary": canary, "canary and rolling update": whole} {
		s.g.Expect(seen.MaxUnavailable).To(gomega.Equal(1), "%s: nodes without an available agent at once", phase)
		s.g.Expect(seen.MaxPerNode).To(gomega.Equal(1), "%s: non-terminating pods on one node", phase)
	}
}

// With maxSurge 1 and maxUnavailable 0, the canary starts each new pod
// beside the old one, as the rolling update after it does, and the two
// share the one surge: never more than one extra pod, never a node
// without an available agent.
func TestCanaryAndRollingUpdateShareMaxSurge(t *testing.T) {
	s := newScenario(t)
	canary, whole := s.rollOutThroughCanary("budget-surge", intstr.FromInt32(0), intstr.FromInt32(1))
	for phase, seen := range map[string]podCounts{"canary": canary, "canary and rolling update": whole} {
		s.g.Expect(seen.MaxUnavailable).To(gomega.Equal(0), "%s: nodes without an available agent at once", phase)
		s.g.Expect(seen.MaxSurging).To(gomega.Equal(1), "%s: nodes with two pods at once", phase)
		s.g.Expect(seen.MaxPerNode).To(gomega.Equal(2), "%s: non-terminating pods on one node", phase)
	}
}

// rollOutThroughCanary rolls v1 out to a node group of its own with the
// given budget and a 50% auto canary, then changes the template to v2 and
// watches the pods until the canary is promoted and v2 runs everywhere. It
// returns the worst moments the pod watcher saw until every canary node
// ran an available v2 pod, and over the whole rollout.
func (s *scenario) rollOutThroughCanary(group string, maxUnavailable, maxSurge intstr.IntOrString) (canary, whole podCounts) {
	s.t.Helper()
	nodes := groupNodeNames(group, budgetNodes)
	s.addNodeGroup(group, nodes...)
	eds := agentEDS(s.ns, "agent", "v1")
	eds.Spec.Template.Spec.NodeSelector = onGroup(group)
	eds.Spec.Strategy.RollingUpdate.MaxUnavailable = &maxUnavailable
	eds.Spec.Strategy.RollingUpdate.MaxSurge = &maxSurge
	eds.Spec.Strategy.Canary = &v1alpha1.CanaryStrategy{
		Replicas:       ptr.To(intstr.FromString("50%")),
		Duration:       &metav1.Duration{Duration: budgetCanaryDuration},
		ValidationMode: v1alpha1.CanaryValidationAuto,
	}
	s.create(eds)
	s.expectRolledOut(eds, "v1", nodes)

	pods, statuses := s.startWatching(eds, edsPods(eds.Name), nodes)
	s.update(eds, func(e *v1alpha1.ExtendedDaemonSet) { setVersion(e, "v2") })
	running := *s.expectCanary(eds, canaryRunning, "").Status.Canary
	s.g.Expect(running.Nodes).To(gomega.HaveLen(budgetNodes/2), "canary nodes")
	s.expectVersions(eds, nodes, "v1", running.Nodes, "v2")
	canary = pods.Counts()
	s.t.Logf("canary %s on %v, worst moment: %d nodes without an available agent, %d nodes with two pods, %d pods on one node, longest gap %s on %s",
		running.ReplicaSet, running.Nodes, canary.MaxUnavailable, canary.MaxSurging, canary.MaxPerNode, canary.LongestGap, canary.GapNode)

	s.expectPromoted(eds, "v2", nodes, running.ReplicaSet)
	whole = s.stopWatching(pods, statuses)
	s.t.Logf("whole rollout, worst moment: %d nodes without an available agent, %d nodes with two pods, %d pods on one node, longest gap %s on %s, %d pods created",
		whole.MaxUnavailable, whole.MaxSurging, whole.MaxPerNode, whole.LongestGap, whole.GapNode, whole.Created["ExtendedDaemonSetReplicaSet"])
	return canary, whole
}

// groupNodeNames names n nodes of a group, for addNodeGroup.
func groupNodeNames(group string, n int) []string {
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("e2e-%s-%d", group, i)
	}
	return names
}
