package chaos

import (
	"context"
	"testing"
	"time"

	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
	"github.com/extendeddaemonset/extendeddaemonset/controllers/canary"
	"github.com/extendeddaemonset/extendeddaemonset/test/invariants"
)

// maxTakeover is how long the manager may lead nobody after its leader
// dies: the figure, met by fastLease.
const maxTakeover = 20 * time.Second

// Two managers, the leader SIGKILLed mid-canary: the other takes over
// once the lease expires and goes on with the canary as it was (same
// replica set, nodes, start time and pods), telling neither its start nor
// its promotion a second time.
func TestLeaderFailover(t *testing.T) {
	s := newScenario(t, "failover")
	first := s.startManager("first", s.env.kubeconfig, fastLease...)
	leader, _ := s.waitLeader("")
	// Started once the first leads, so that the leader is known.
	s.startManager("second", s.env.kubeconfig, fastLease...)
	eds := s.agent("v1", prof.failoverCanary)
	s.waitRolledOut(eds, "v1")

	s.setVersion(eds, "v2")
	before, pods := s.waitCanaryReady(eds)
	holder, err := s.leaseHolder(s.ctx)
	s.g.Expect(err).NotTo(gomega.HaveOccurred())
	s.g.Expect(holder).To(gomega.Equal(leader), "the first manager no longer leads")
	killed := time.Now()
	s.g.Expect(first.Kill()).To(gomega.Succeed())
	s.result.Kills++
	_, tookOver := s.waitLeader(leader)
	s.result.Takeover = tookOver.Sub(killed)
	t.Logf("the second manager took over %s after the kill", s.result.Takeover.Round(time.Millisecond))
	s.g.Expect(s.result.Takeover).To(gomega.BeNumerically("<=", maxTakeover), "time to take over")

	s.expectCanaryKept(eds, before, pods)
	s.waitRolledOut(eds, "v2")
	s.result.Converge = time.Since(killed)
	for _, reason := range []string{canary.Started, canary.Promoted} {
		notes, err := s.events(reason, before.ReplicaSet)
		s.g.Expect(err).NotTo(gomega.HaveOccurred())
		s.g.Expect(notes).To(gomega.HaveLen(1), "%s events of %s", reason, before.ReplicaSet)
	}
	s.verify()
}

// waitCanaryReady waits until eds's canary runs a Ready pod on each of its
// nodes, and returns the canary and its pods by node.
func (s *scenario) waitCanaryReady(eds *v1alpha1.ExtendedDaemonSet) (v1alpha1.CanaryStatus, map[string]types.UID) {
	s.t.Helper()
	var c v1alpha1.CanaryStatus
	var pods map[string]types.UID
	err := wait.PollUntilContextTimeout(s.ctx, pollInterval, prof.rolloutTimeout, true, func(ctx context.Context) (bool, error) {
		latest := &v1alpha1.ExtendedDaemonSet{}
		if err := s.env.client.Get(ctx, client.ObjectKeyFromObject(eds), latest); err != nil || latest.Status.Canary == nil {
			return false, nil
		}
		c = *latest.Status.Canary
		var err error
		pods, err = s.canaryPods(ctx, c.ReplicaSet)
		return err == nil && len(c.Nodes) > 0 && len(pods) == len(c.Nodes), nil
	})
	s.g.Expect(err).NotTo(gomega.HaveOccurred(), "no canary with Ready pods on all its nodes")
	return c, pods
}

// canaryPods returns the Running and Ready pods of replica set rs by node.
func (s *scenario) canaryPods(ctx context.Context, rs string) (map[string]types.UID, error) {
	var list corev1.PodList
	if err := s.env.client.List(ctx, &list, client.InNamespace(s.ns),
		client.MatchingLabels{v1alpha1.ExtendedDaemonSetReplicaSetNameLabel: rs}); err != nil {
		return nil, err
	}
	pods := map[string]types.UID{}
	for i := range list.Items {
		if pod := &list.Items[i]; pod.DeletionTimestamp == nil && invariants.RunningAndReady(pod) {
			pods[pod.Spec.NodeName] = pod.UID
		}
	}
	return pods, nil
}

// expectCanaryKept checks, from the takeover until the promotion, that the
// canary stays what it was before: same replica set, nodes, start time
// and pods. It fails if the canary was promoted before the takeover, when
// there was nothing to keep.
func (s *scenario) expectCanaryKept(eds *v1alpha1.ExtendedDaemonSet, before v1alpha1.CanaryStatus, pods map[string]types.UID) {
	s.t.Helper()
	checked := 0
	// What must hold at every poll fails at once (s.g); only the end of
	// the canary is waited for (g).
	s.g.Eventually(func(g gomega.Gomega) {
		latest := &v1alpha1.ExtendedDaemonSet{}
		g.Expect(s.env.client.Get(s.ctx, client.ObjectKeyFromObject(eds), latest)).To(gomega.Succeed())
		c := latest.Status.Canary
		if c == nil {
			return
		}
		checked++
		s.g.Expect(c.ReplicaSet).To(gomega.Equal(before.ReplicaSet), "canary replica set")
		s.g.Expect(c.Nodes).To(gomega.Equal(before.Nodes), "canary nodes")
		s.g.Expect(c.StartedAt.Equal(before.StartedAt)).To(gomega.BeTrue(), "canary started at %v, before at %v", c.StartedAt, before.StartedAt)
		now, err := s.canaryPods(s.ctx, c.ReplicaSet)
		g.Expect(err).NotTo(gomega.HaveOccurred())
		s.g.Expect(now).To(gomega.Equal(pods), "canary pods by node")
		g.Expect(c).To(gomega.BeNil(), "canary still running")
	}).WithTimeout(prof.rolloutTimeout).WithPolling(pollInterval).Should(gomega.Succeed())
	s.g.Expect(checked).To(gomega.BeNumerically(">", 0), "the canary was promoted before the takeover: lengthen failoverCanary")
}
