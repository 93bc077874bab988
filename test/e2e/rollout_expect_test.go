package e2e

import (
	"slices"
	"time"

	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
	"github.com/extendeddaemonset/extendeddaemonset/controllers/placement"
	"github.com/extendeddaemonset/extendeddaemonset/test/argocd"
	"github.com/extendeddaemonset/extendeddaemonset/test/invariants"
)

// counters are the status counters of an ExtendedDaemonSet or replica set.
type counters struct{ Desired, Current, Ready, Available, UpToDate int32 }

func countersOf(st v1alpha1.ExtendedDaemonSetStatus) counters {
	return counters{st.Desired, st.Current, st.Ready, st.Available, st.UpToDate}
}

// allCounters is the status of n nodes that all run an available pod of
// the current template.
func allCounters(n int) counters {
	c := int32(n)
	return counters{c, c, c, c, c}
}

// expectReady checks that eds reports a finished rollout of its current
// generation, in its conditions and for kstatus.
func expectReady(g gomega.Gomega, eds *v1alpha1.ExtendedDaemonSet) {
	g.Expect(eds.Status.ObservedGeneration).To(gomega.Equal(eds.Generation), "observedGeneration")
	g.Expect(apimeta.IsStatusConditionTrue(eds.Status.Conditions, v1alpha1.ReadyCondition)).To(gomega.BeTrue(),
		"Ready in %v", eds.Status.Conditions)
	g.Expect(apimeta.FindStatusCondition(eds.Status.Conditions, v1alpha1.ReconcilingCondition)).To(gomega.BeNil())
	g.Expect(apimeta.FindStatusCondition(eds.Status.Conditions, v1alpha1.StalledCondition)).To(gomega.BeNil())
	g.Expect(kstatusOf(g, eds).Status).To(gomega.Equal(status.CurrentStatus))
	health, message := argoHealthOf(g, eds)
	g.Expect(health).To(gomega.Equal(argocd.Healthy), "Argo CD health: %s", message)
	g.Expect(eds.Status.State).To(gomega.Equal(v1alpha1.StateRunning))
}

// expectRolledOut waits until eds has rolled version out to exactly nodes:
// status done, the active replica set holding the EDS's template, and one
// Running, Ready pod of it per node and none elsewhere, except the kept
// pods, which must still run untouched on nodes that take no new pod
// (untolerated NoSchedule taint, maintenance). It returns the EDS and its active replica
// set as last seen.
func (s *scenario) expectRolledOut(eds *v1alpha1.ExtendedDaemonSet, version string, nodes []string, kept ...corev1.Pod) (*v1alpha1.ExtendedDaemonSet, *v1alpha1.ExtendedDaemonSetReplicaSet) {
	s.t.Helper()
	latest := &v1alpha1.ExtendedDaemonSet{}
	active := &v1alpha1.ExtendedDaemonSetReplicaSet{}
	s.g.Eventually(func(g gomega.Gomega) {
		g.Expect(env.Client.Get(s.ctx, client.ObjectKeyFromObject(eds), latest)).To(gomega.Succeed())
		g.Expect(latest.Spec.Template.Spec.Containers[0].Image).To(gomega.Equal(agentImage(version)))
		expectReady(g, latest)
		// The counters count desired nodes, as a DaemonSet's do: the kept
		// pods' nodes take no new pod, and are not among them.
		g.Expect(countersOf(latest.Status)).To(gomega.Equal(allCounters(len(nodes))))
		key := client.ObjectKey{Namespace: eds.Namespace, Name: latest.Status.ActiveReplicaSet}
		g.Expect(env.Client.Get(s.ctx, key, active)).To(gomega.Succeed())
		g.Expect(equality.Semantic.DeepEqual(active.Spec.Template, latest.Spec.Template)).To(gomega.BeTrue(),
			"active replica set %s holds another template", active.Name)
		g.Expect(active.Status.Status).To(gomega.Equal(v1alpha1.ReplicaSetActive))
		g.Expect(kstatusOf(g, active).Status).To(gomega.Equal(status.CurrentStatus))
		health, message := argoHealthOf(g, active)
		g.Expect(health).To(gomega.Equal(argocd.Healthy), "Argo CD health of %s: %s", active.Name, message)

		keptUIDs := map[types.UID]bool{}
		for _, pod := range kept {
			keptUIDs[pod.UID] = true
		}
		var placed []string
		for _, pod := range s.pods(g, eds) {
			g.Expect(pod.DeletionTimestamp).To(gomega.BeNil(), "pod %s terminating", pod.Name)
			if keptUIDs[pod.UID] {
				delete(keptUIDs, pod.UID)
				continue
			}
			placed = append(placed, pod.Spec.NodeName)
			g.Expect(pod.Labels).To(gomega.HaveKeyWithValue(v1alpha1.ExtendedDaemonSetReplicaSetNameLabel, active.Name), pod.Name)
			g.Expect(pod.Spec.Containers[0].Image).To(gomega.Equal(agentImage(version)), pod.Name)
			g.Expect(invariants.RunningAndReady(&pod)).To(gomega.BeTrue(), "pod %s on %s is not Running and Ready", pod.Name, pod.Spec.NodeName)
		}
		g.Expect(keptUIDs).To(gomega.BeEmpty(), "kept pods gone")
		g.Expect(placed).To(gomega.ConsistOf(nodes), "nodes with a pod")
	}).WithTimeout(rolloutTimeout).WithPolling(pollInterval).Should(gomega.Succeed())
	return latest, active
}

// expectVersions waits until each of nodes runs exactly one live pod of
// eds, Running and Ready, of version canary on canaryNodes and of version
// stable elsewhere, and no other node runs one.
func (s *scenario) expectVersions(eds *v1alpha1.ExtendedDaemonSet, nodes []string, stable string, canaryNodes []string, canary string) {
	s.t.Helper()
	s.g.Eventually(func(g gomega.Gomega) {
		var placed []string
		for _, pod := range s.pods(g, eds) {
			if pod.DeletionTimestamp != nil {
				continue
			}
			node, want := placement.TargetNode(&pod), stable
			if slices.Contains(canaryNodes, node) {
				want = canary
			}
			placed = append(placed, node)
			g.Expect(pod.Spec.Containers[0].Image).To(gomega.Equal(agentImage(want)), "pod %s on %s", pod.Name, node)
			g.Expect(invariants.RunningAndReady(&pod)).To(gomega.BeTrue(), "pod %s on %s is not Running and Ready", pod.Name, node)
		}
		g.Expect(placed).To(gomega.ConsistOf(nodes), "nodes with a live pod")
	}).WithTimeout(rolloutTimeout).WithPolling(pollInterval).Should(gomega.Succeed())
}

// expectPodsKept checks for hold that the pods of eds stay as they are,
// none deleted, replaced or added, and that check holds meanwhile.
func (s *scenario) expectPodsKept(eds *v1alpha1.ExtendedDaemonSet, hold time.Duration, check func(gomega.Gomega)) {
	s.t.Helper()
	held := map[types.UID]string{}
	for _, pod := range s.pods(s.g, eds) {
		held[pod.UID] = pod.Spec.NodeName
	}
	s.g.Consistently(func(g gomega.Gomega) {
		check(g)
		now := map[types.UID]string{}
		for _, pod := range s.pods(g, eds) {
			g.Expect(pod.DeletionTimestamp).To(gomega.BeNil(), "pod %s deleted", pod.Name)
			now[pod.UID] = pod.Spec.NodeName
		}
		g.Expect(now).To(gomega.Equal(held), "pods replaced")
	}).WithTimeout(hold).WithPolling(pollInterval).Should(gomega.Succeed())
}
