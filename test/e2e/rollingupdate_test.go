package e2e

import (
	"testing"

	"github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
)

// A new template replaces pods in place of the old ones, never leaving more
// than maxUnavailable nodes without a ready pod nor a node with two pods,
// and reports the rollout as in progress until it is done.
func TestRollingUpdateRespectsMaxUnavailable(t *testing.T) {
	s := newScenario(t)
	eds := agentEDS(s.ns, "agent", "v1")
	eds.Spec.Strategy.RollingUpdate.MaxUnavailable = ptr.To(intstr.FromInt32(2))
	eds = s.create(eds)
	nodes := s.nodeNames()
	eds, first := s.expectRolledOut(eds, "v1", nodes)

	pods, statuses := s.startWatching(eds, edsPods(eds.Name), nodes)
	s.update(eds, func(e *v1alpha1.ExtendedDaemonSet) { setVersion(e, "v2") })
	eds, second := s.expectRolledOut(eds, "v2", nodes)

	seen := s.stopWatching(pods, statuses)
	s.g.Expect(seen.MaxUnavailable).To(gomega.BeNumerically("<=", 2), "nodes without a ready pod at once")
	s.g.Expect(seen.MaxUnavailable).To(gomega.BeNumerically(">=", 1), "the watcher saw no pod replaced")
	s.g.Expect(seen.MaxPerNode).To(gomega.Equal(1), "non-terminating pods on one node")
	s.g.Expect(second.Name).NotTo(gomega.Equal(first.Name))
	s.g.Expect(replicaSetNames(s.replicaSets(s.g, eds))).To(gomega.ConsistOf(first.Name, second.Name),
		"the old replica set is kept as history")
	s.expectEvent(eds, "RollingUpdateStarted", second.Name)
	s.expectEvent(eds, "RolledOut", second.Name)
}

// With maxSurge, the new pod starts beside the old one: no node is ever
// without a ready pod, and at most maxSurge nodes hold two.
func TestRollingUpdateWithMaxSurge(t *testing.T) {
	s := newScenario(t)
	eds := agentEDS(s.ns, "agent", "v1")
	eds.Spec.Strategy.RollingUpdate.MaxUnavailable = ptr.To(intstr.FromInt32(0))
	eds.Spec.Strategy.RollingUpdate.MaxSurge = ptr.To(intstr.FromInt32(2))
	eds = s.create(eds)
	nodes := s.nodeNames()
	eds, _ = s.expectRolledOut(eds, "v1", nodes)

	pods, statuses := s.startWatching(eds, edsPods(eds.Name), nodes)
	s.update(eds, func(e *v1alpha1.ExtendedDaemonSet) { setVersion(e, "v2") })
	s.expectRolledOut(eds, "v2", nodes)

	seen := s.stopWatching(pods, statuses)
	s.g.Expect(seen.MaxUnavailable).To(gomega.Equal(0), "nodes without a ready pod at once")
	s.g.Expect(seen.MaxSurging).To(gomega.BeNumerically("<=", 2), "nodes with two pods at once")
	s.g.Expect(seen.MaxSurging).To(gomega.BeNumerically(">=", 1), "the watcher saw no surge")
	s.g.Expect(seen.MaxPerNode).To(gomega.Equal(2), "non-terminating pods on one node")
}

// startWatching starts a pod watcher on the pods selector selects and a
// status recorder on eds, which need not exist yet.
func (s *scenario) startWatching(eds *v1alpha1.ExtendedDaemonSet, selector string, nodes []string) (*podWatcher, *statusRecorder) {
	s.t.Helper()
	pods, err := watchPods(s.ctx, eds.Namespace, selector, nodes)
	s.g.Expect(err).NotTo(gomega.HaveOccurred())
	statuses, err := recordStatus(s.ctx, eds.Namespace, eds.Name)
	s.g.Expect(err).NotTo(gomega.HaveOccurred())
	return pods, statuses
}

// stopWatching stops both and checks that the rollout was reported in
// progress, as a rolling update, while it ran.
func (s *scenario) stopWatching(pods *podWatcher, statuses *statusRecorder) podCounts {
	s.t.Helper()
	seen, err := pods.Stop()
	s.g.Expect(err).NotTo(gomega.HaveOccurred())
	samples, err := statuses.Stop()
	s.g.Expect(err).NotTo(gomega.HaveOccurred())
	s.g.Expect(samples).To(gomega.ContainElement(statusSample{Status: status.InProgressStatus, Reconciling: v1alpha1.ReasonRollingUpdate}))
	s.t.Logf("pods: %+v; %d status versions", seen, len(samples))
	return seen
}
