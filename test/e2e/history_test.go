package e2e

import (
	"strconv"
	"testing"

	"github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
)

// Going back to an earlier template reuses its replica set, and
// revisionHistoryLimit prunes the oldest replica sets once they own no pods.
func TestReplicaSetHistory(t *testing.T) {
	s := newScenario(t)
	eds := agentEDS(s.ns, "agent", "v1")
	// Faster rollouts: this test is about replica sets, not availability.
	eds.Spec.Strategy.RollingUpdate.MaxUnavailable = ptr.To(intstr.FromString("25%"))
	eds = s.create(eds)
	nodes := s.nodeNames()
	eds, v1 := s.expectRolledOut(eds, "v1", nodes)

	s.update(eds, func(e *v1alpha1.ExtendedDaemonSet) { setVersion(e, "v2") })
	eds, v2 := s.expectRolledOut(eds, "v2", nodes)
	s.g.Expect(replicaSetNames(s.replicaSets(s.g, eds))).To(gomega.ConsistOf(v1.Name, v2.Name))

	s.update(eds, func(e *v1alpha1.ExtendedDaemonSet) { setVersion(e, "v1") })
	eds, back := s.expectRolledOut(eds, "v1", nodes)
	s.g.Expect(back.Name).To(gomega.Equal(v1.Name), "going back to v1 reuses its replica set")
	s.g.Expect(back.UID).To(gomega.Equal(v1.UID))
	s.g.Expect(replicaSetNames(s.replicaSets(s.g, eds))).To(gomega.ConsistOf(v1.Name, v2.Name), "no third replica set")

	// History is then v1 and v2, oldest first: with a limit of 1, v1 is
	// beyond it, but stays while it owns pods (the update is paused), and
	// goes once they are replaced. v2 stays.
	s.update(eds, func(e *v1alpha1.ExtendedDaemonSet) {
		setVersion(e, "v3")
		e.Spec.RevisionHistoryLimit = ptr.To[int32](1)
		e.Spec.Strategy.RollingUpdate.Paused = true
	})
	s.expectPaused(eds, "v1")
	s.g.Expect(replicaSetNames(s.replicaSets(s.g, eds))).To(gomega.And(gomega.HaveLen(3), gomega.ContainElements(v1.Name, v2.Name)))
	s.update(eds, func(e *v1alpha1.ExtendedDaemonSet) { e.Spec.Strategy.RollingUpdate.Paused = false })
	eds, v3 := s.expectRolledOut(eds, "v3", nodes)
	// Numbered in creation order: history is pruned by it, since v1 and v2
	// can be created within one second and creation timestamps tie.
	for want, ers := range []*v1alpha1.ExtendedDaemonSetReplicaSet{v1, v2, v3} {
		s.g.Expect(ers.Annotations).To(gomega.HaveKeyWithValue(v1alpha1.RevisionAnnotation, strconv.Itoa(want+1)), ers.Name)
	}
	s.g.Eventually(func(g gomega.Gomega) {
		g.Expect(replicaSetNames(s.replicaSets(g, eds))).To(gomega.ConsistOf(v2.Name, v3.Name))
	}).WithTimeout(rolloutTimeout).WithPolling(pollInterval).Should(gomega.Succeed())
}
