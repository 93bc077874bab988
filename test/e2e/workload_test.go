package e2e

import (
	"slices"
	"testing"
	"time"

	"github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
	"github.com/extendeddaemonset/extendeddaemonset/controllers"
	"github.com/extendeddaemonset/extendeddaemonset/test/invariants"
)

// agentDaemonSet is an apps/v1 DaemonSet of the agent at version on the
// nodes of group, updated OnDelete as a workloadRef requires.
func agentDaemonSet(namespace, name, group, version string) *appsv1.DaemonSet {
	labels := map[string]string{"app": name}
	return &appsv1.DaemonSet{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
		Spec: appsv1.DaemonSetSpec{
			Selector:       &metav1.LabelSelector{MatchLabels: labels},
			UpdateStrategy: appsv1.DaemonSetUpdateStrategy{Type: appsv1.OnDeleteDaemonSetStrategyType},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					NodeSelector: onGroup(group),
					Containers:   []corev1.Container{{Name: "agent", Image: agentImage(version)}},
				},
			},
		},
	}
}

// referencing is an ExtendedDaemonSet that rolls out ds's pods.
func referencing(ds *appsv1.DaemonSet, canary *v1alpha1.CanaryStrategy) *v1alpha1.ExtendedDaemonSet {
	eds := &v1alpha1.ExtendedDaemonSet{
		ObjectMeta: metav1.ObjectMeta{Name: ds.Name, Namespace: ds.Namespace},
		Spec: v1alpha1.ExtendedDaemonSetSpec{
			WorkloadRef: &v1alpha1.WorkloadRef{APIVersion: "apps/v1", Kind: "DaemonSet", Name: ds.Name},
		},
	}
	eds.Spec.Strategy.Canary = canary
	return eds
}

// setDaemonSetVersion changes ds's template to version, as a person
// changing it in git would.
func (s *scenario) setDaemonSetVersion(ds *appsv1.DaemonSet, version string) {
	s.t.Helper()
	s.g.Expect(retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := env.Client.Get(s.ctx, client.ObjectKeyFromObject(ds), ds); err != nil {
			return err
		}
		ds.Spec.Template.Spec.Containers[0].Image = agentImage(version)
		return env.Client.Update(s.ctx, ds)
	})).To(gomega.Succeed())
}

// versionsOn maps each node of ds's live pods to the agent version it runs.
func (s *scenario) versionsOn(g gomega.Gomega, ds *appsv1.DaemonSet) map[string]string {
	out := map[string]string{}
	for _, pod := range s.daemonSetPods(g, ds) {
		if pod.DeletionTimestamp == nil {
			out[pod.Spec.NodeName] = pod.Spec.Containers[0].Image
		}
	}
	return out
}

// expectDaemonSetOn waits until every node of nodes runs one live, Ready
// pod of ds at version, and no other node runs one.
func (s *scenario) expectDaemonSetOn(ds *appsv1.DaemonSet, version string, nodes []string) {
	s.t.Helper()
	s.g.Eventually(func(g gomega.Gomega) {
		pods := s.daemonSetPods(g, ds)
		var on []string
		for _, pod := range pods {
			g.Expect(pod.DeletionTimestamp).To(gomega.BeNil(), "pod %s terminating", pod.Name)
			g.Expect(pod.Spec.Containers[0].Image).To(gomega.Equal(agentImage(version)), "pod %s", pod.Name)
			g.Expect(invariants.RunningAndReady(&pod)).To(gomega.BeTrue(), "pod %s ready", pod.Name)
			on = append(on, pod.Spec.NodeName)
		}
		g.Expect(on).To(gomega.ConsistOf(nodes))
	}).WithTimeout(rolloutTimeout).WithPolling(pollInterval).Should(gomega.Succeed())
}

// expectNeverWritten checks that the controller wrote nothing of ds: no
// field of it is managed by the controller, and its generation is the
// user's last change.
func (s *scenario) expectNeverWritten(ds *appsv1.DaemonSet, generation int64) {
	s.t.Helper()
	latest := &appsv1.DaemonSet{}
	s.g.Expect(env.Client.Get(s.ctx, client.ObjectKeyFromObject(ds), latest)).To(gomega.Succeed())
	s.g.Expect(latest.Generation).To(gomega.Equal(generation), "the DaemonSet's spec changed")
	for _, m := range latest.ManagedFields {
		s.g.Expect(m.Manager).NotTo(gomega.Equal(controllers.FieldOwner), "the controller wrote the DaemonSet: %+v", m)
	}
}

// An ExtendedDaemonSet whose workloadRef names an OnDelete DaemonSet, with
// the native DaemonSet controller running: a template change of the
// DaemonSet runs on the canary's node first (its pod deleted, recreated by
// the DaemonSet at the new revision), every other node keeps the old one
// until the canary is promoted, then the rolling update takes them all
// within maxUnavailable. A controller restarted mid-canary resumes it. The
// DaemonSet is never written.
func TestWorkloadRefCanaryPromotes(t *testing.T) {
	s := newScenario(t)
	const group = "workload-promote"
	nodes := []string{"e2e-workload-promote-0", "e2e-workload-promote-1", "e2e-workload-promote-2", "e2e-workload-promote-3"}
	s.addNodeGroup(group, nodes...)
	ds := agentDaemonSet(s.ns, "agent", group, "v1")
	s.g.Expect(env.Client.Create(s.ctx, ds)).To(gomega.Succeed())
	s.expectDaemonSetOn(ds, "v1", nodes)

	eds := s.create(referencing(ds, &v1alpha1.CanaryStrategy{
		Replicas: ptr.To(intstr.FromInt32(1)), Duration: &metav1.Duration{Duration: 10 * time.Second},
	}))
	s.g.Eventually(func(g gomega.Gomega) {
		latest := s.get(eds)
		g.Expect(kstatusOf(g, latest).Status).To(gomega.Equal(status.CurrentStatus))
		g.Expect(latest.Status.Desired).To(gomega.BeEquivalentTo(len(nodes)))
		g.Expect(latest.Status.UpToDate).To(gomega.BeEquivalentTo(len(nodes)))
	}).WithTimeout(rolloutTimeout).WithPolling(pollInterval).Should(gomega.Succeed())
	stable := s.get(eds).Status.ActiveReplicaSet

	s.setDaemonSetVersion(ds, "v2")
	generation := ds.Generation
	var canaryNodes []string
	s.g.Eventually(func(g gomega.Gomega) {
		latest := s.get(eds)
		g.Expect(latest.Status.Canary).NotTo(gomega.BeNil())
		g.Expect(latest.Status.Canary.Nodes).To(gomega.HaveLen(1))
		g.Expect(apimeta.FindStatusCondition(latest.Status.Conditions, v1alpha1.ReconcilingCondition)).To(
			gomega.HaveField("Reason", v1alpha1.ReasonCanaryRunning))
		canaryNodes = latest.Status.Canary.Nodes
		versions := s.versionsOn(g, ds)
		g.Expect(versions).To(gomega.HaveKeyWithValue(canaryNodes[0], agentImage("v2")))
	}).WithTimeout(rolloutTimeout).WithPolling(pollInterval).Should(gomega.Succeed())
	// A controller restarted mid-canary resumes it as it was: the state
	// lives in the status, the revisions in the DaemonSet's history.
	before := *s.get(eds).Status.Canary
	s.g.Expect(env.RestartControllers(s.ctx)).To(gomega.Succeed())
	// While the canary runs, the other nodes keep the stable revision.
	s.g.Consistently(func(g gomega.Gomega) {
		latest := s.get(eds)
		if latest.Status.Canary == nil {
			return // promoted meanwhile
		}
		g.Expect(latest.Status.Canary.ReplicaSet).To(gomega.Equal(before.ReplicaSet))
		g.Expect(latest.Status.Canary.Nodes).To(gomega.Equal(before.Nodes))
		g.Expect(latest.Status.Canary.StartedAt.Equal(before.StartedAt)).To(gomega.BeTrue(), "the canary started over")
		for node, image := range s.versionsOn(g, ds) {
			if !slices.Contains(canaryNodes, node) {
				g.Expect(image).To(gomega.Equal(agentImage("v1")), "node %s left the stable revision during the canary", node)
			}
		}
	}).WithTimeout(5 * time.Second).WithPolling(pollInterval).Should(gomega.Succeed())

	s.expectDaemonSetOn(ds, "v2", nodes)
	s.g.Eventually(func(g gomega.Gomega) {
		latest := s.get(eds)
		g.Expect(latest.Status.Canary).To(gomega.BeNil())
		g.Expect(latest.Status.ActiveReplicaSet).NotTo(gomega.Equal(stable))
		g.Expect(kstatusOf(g, latest).Status).To(gomega.Equal(status.CurrentStatus))
		g.Expect(latest.Status.UpToDate).To(gomega.BeEquivalentTo(len(nodes)))
	}).WithTimeout(rolloutTimeout).WithPolling(pollInterval).Should(gomega.Succeed())
	s.expectEvent(eds, "CanaryPromoted")
	s.expectNeverWritten(ds, generation)
}

// A canary of a DaemonSet's new revision that its analysis fails, measured
// by a real Prometheus, stops everything: no pod beyond the canary's node
// is deleted, the ExtendedDaemonSet is Stalled, naming the node that keeps
// the failed revision and saying that reverting the DaemonSet's template
// returns it. The revert does, at once, without a canary.
func TestWorkloadRefFailedCanaryHoldsUntilReverted(t *testing.T) {
	s := newScenario(t)
	m := s.startMetrics()
	// The new revision answers half its requests with errors.
	m.setTraffic(func(pod *corev1.Pod) map[string]float64 {
		if pod.Spec.Containers[0].Image == agentImage("v2") {
			return requests(10, 0.5)
		}
		return requests(10, 0)
	})
	analysis := m.analysisOf(errorRateMetric("error-rate", 0.05))
	analysis.FailureLimit = ptr.To[int32](1)
	const group = "workload-fail"
	nodes := []string{"e2e-workload-fail-0", "e2e-workload-fail-1", "e2e-workload-fail-2"}
	s.addNodeGroup(group, nodes...)
	ds := agentDaemonSet(s.ns, "agent", group, "v1")
	s.g.Expect(env.Client.Create(s.ctx, ds)).To(gomega.Succeed())
	s.expectDaemonSetOn(ds, "v1", nodes)
	eds := s.create(referencing(ds, &v1alpha1.CanaryStrategy{
		Replicas: ptr.To(intstr.FromInt32(1)), Duration: &metav1.Duration{Duration: 5 * time.Minute}, Analysis: analysis,
	}))
	s.g.Eventually(func(g gomega.Gomega) {
		g.Expect(kstatusOf(g, s.get(eds)).Status).To(gomega.Equal(status.CurrentStatus))
	}).WithTimeout(rolloutTimeout).WithPolling(pollInterval).Should(gomega.Succeed())

	s.setDaemonSetVersion(ds, "v2")
	var canaryNode string
	s.g.Eventually(func(g gomega.Gomega) {
		latest := s.get(eds)
		g.Expect(latest.Status.Canary).NotTo(gomega.BeNil())
		g.Expect(latest.Status.Canary.Nodes).To(gomega.HaveLen(1))
		canaryNode = latest.Status.Canary.Nodes[0]
	}).WithTimeout(rolloutTimeout).WithPolling(pollInterval).Should(gomega.Succeed())
	stableUIDs := map[string]string{}
	s.g.Eventually(func(g gomega.Gomega) {
		for _, pod := range s.daemonSetPods(g, ds) {
			if pod.Spec.NodeName != canaryNode {
				stableUIDs[pod.Spec.NodeName] = string(pod.UID)
			}
		}
		g.Expect(stableUIDs).To(gomega.HaveLen(len(nodes) - 1))
	}).Should(gomega.Succeed())

	s.g.Eventually(func(g gomega.Gomega) {
		latest := s.get(eds)
		stalled := apimeta.FindStatusCondition(latest.Status.Conditions, v1alpha1.StalledCondition)
		g.Expect(stalled).NotTo(gomega.BeNil())
		g.Expect(stalled.Reason).To(gomega.Equal(v1alpha1.ReasonCanaryFailed))
		g.Expect(stalled.Message).To(gomega.And(gomega.ContainSubstring(canaryNode), gomega.ContainSubstring("reverted"),
			gomega.ContainSubstring("error-rate")))
		g.Expect(kstatusOf(g, latest).Status).To(gomega.Equal(status.FailedStatus))
	}).WithTimeout(rolloutTimeout).WithPolling(pollInterval).Should(gomega.Succeed())
	// Nothing else moves: a pod deleted would come back at the failed revision.
	s.g.Consistently(func(g gomega.Gomega) {
		for _, pod := range s.daemonSetPods(g, ds) {
			if pod.Spec.NodeName != canaryNode {
				g.Expect(string(pod.UID)).To(gomega.Equal(stableUIDs[pod.Spec.NodeName]), "pod on %s replaced", pod.Spec.NodeName)
				g.Expect(pod.DeletionTimestamp).To(gomega.BeNil(), "pod on %s deleted", pod.Spec.NodeName)
			}
		}
	}).WithTimeout(10 * time.Second).WithPolling(pollInterval).Should(gomega.Succeed())

	// Reverted in git: the canary's node returns at once, without a canary.
	s.setDaemonSetVersion(ds, "v1")
	s.expectDaemonSetOn(ds, "v1", nodes)
	s.g.Eventually(func(g gomega.Gomega) {
		latest := s.get(eds)
		g.Expect(latest.Status.Canary).To(gomega.BeNil())
		g.Expect(kstatusOf(g, latest).Status).To(gomega.Equal(status.CurrentStatus))
	}).WithTimeout(rolloutTimeout).WithPolling(pollInterval).Should(gomega.Succeed())
	for _, pod := range s.daemonSetPods(s.g, ds) {
		if pod.Spec.NodeName != canaryNode {
			s.g.Expect(string(pod.UID)).To(gomega.Equal(stableUIDs[pod.Spec.NodeName]), "stable pod on %s replaced by the revert", pod.Spec.NodeName)
		}
	}
}

// A DaemonSet left on RollingUpdate would roll every change out itself:
// the ExtendedDaemonSet naming it is Stalled, saying which field to set.
func TestWorkloadRefStallsOnARollingUpdateDaemonSet(t *testing.T) {
	s := newScenario(t)
	const group = "workload-rolling"
	nodes := []string{"e2e-workload-rolling-0"}
	s.addNodeGroup(group, nodes...)
	ds := agentDaemonSet(s.ns, "agent", group, "v1")
	ds.Spec.UpdateStrategy = appsv1.DaemonSetUpdateStrategy{Type: appsv1.RollingUpdateDaemonSetStrategyType}
	s.g.Expect(env.Client.Create(s.ctx, ds)).To(gomega.Succeed())
	eds := s.create(referencing(ds, nil))
	s.expectStalled(eds, v1alpha1.ReasonInvalidSpec, "spec.updateStrategy.type", "OnDelete")
	s.expectNeverWritten(ds, 1)
}

// A DaemonSet's new revision through canary steps, then zone by zone: the
// steps grow the canary on the DaemonSet's pods, and once promoted the
// zones go one at a time, in order, never more than one node of a zone
// without an available agent, as the DaemonSet's own pods show (the
// invariant monitor holds the budgets meanwhile).
func TestWorkloadRefStepsThenZoneByZone(t *testing.T) {
	s := newScenario(t)
	const group = "workload-zones"
	nodes, zoneOf := s.addZonedNodes(group)
	ds := agentDaemonSet(s.ns, "agent", group, "v1")
	s.g.Expect(env.Client.Create(s.ctx, ds)).To(gomega.Succeed())
	s.expectDaemonSetOn(ds, "v1", nodes)
	eds := referencing(ds, &v1alpha1.CanaryStrategy{Steps: []v1alpha1.CanaryStep{
		{Replicas: intstr.FromInt32(1), Duration: &metav1.Duration{Duration: 5 * time.Second}},
		{Replicas: intstr.FromInt32(2), Duration: &metav1.Duration{Duration: 5 * time.Second}},
	}})
	eds.Spec.Strategy.RollingUpdate.MaxUnavailable = ptr.To(intstr.FromInt32(2 * nodesPerZone))
	eds.Spec.Strategy.RollingUpdate.Topology = &v1alpha1.RollingUpdateTopology{Key: corev1.LabelTopologyZone}
	eds = s.create(eds)
	s.g.Eventually(func(g gomega.Gomega) {
		g.Expect(kstatusOf(g, s.get(eds)).Status).To(gomega.Equal(status.CurrentStatus))
	}).WithTimeout(rolloutTimeout).WithPolling(pollInterval).Should(gomega.Succeed())

	s.setDaemonSetVersion(ds, "v2")
	var steps []int32
	var canaryNodes []string
	// zoneStarted is the poll in which a zone was first seen updating: one
	// instant per poll, so zones seen together tie.
	zoneStarted := map[string]int{}
	maxZoneDown, poll := 0, 0
	s.g.Eventually(func(g gomega.Gomega) {
		poll++
		latest := s.get(eds)
		if c := latest.Status.Canary; c != nil {
			if len(steps) == 0 || steps[len(steps)-1] != c.Step {
				steps = append(steps, c.Step)
			}
			canaryNodes = c.Nodes
		}
		down := map[string]int{}
		live := map[string]bool{}
		for _, pod := range s.daemonSetPods(g, ds) {
			if pod.DeletionTimestamp == nil && invariants.RunningAndReady(&pod) {
				live[pod.Spec.NodeName] = true
			}
			if pod.Spec.Containers[0].Image == agentImage("v2") && !slices.Contains(canaryNodes, pod.Spec.NodeName) {
				if _, ok := zoneStarted[zoneOf[pod.Spec.NodeName]]; !ok {
					zoneStarted[zoneOf[pod.Spec.NodeName]] = poll
				}
			}
		}
		for _, node := range nodes {
			if !live[node] {
				down[zoneOf[node]]++
			}
		}
		for _, n := range down {
			maxZoneDown = max(maxZoneDown, n)
		}
		// Until the canary was seen, the status may still be the last
		// rollout's.
		g.Expect(steps).NotTo(gomega.BeEmpty(), "no canary seen yet")
		g.Expect(latest.Status.Canary).To(gomega.BeNil())
		g.Expect(kstatusOf(g, latest).Status).To(gomega.Equal(status.CurrentStatus))
		g.Expect(latest.Status.UpToDate).To(gomega.BeEquivalentTo(len(nodes)))
	}).WithTimeout(2 * rolloutTimeout).WithPolling(pollInterval).Should(gomega.Succeed())
	s.expectDaemonSetOn(ds, "v2", nodes)
	s.t.Logf("canary steps seen %v on %v; zones started in polls %v; at most %d nodes of one zone without an available agent", steps, canaryNodes, zoneStarted, maxZoneDown)
	s.g.Expect(steps).To(gomega.ContainElements(int32(1), int32(2)), "both canary steps ran")
	s.g.Expect(maxZoneDown).To(gomega.BeNumerically("<=", 1), "nodes of one zone without an available agent at once")
	// No zone was seen updating in an earlier poll than a zone before it;
	// kwok replaces pods faster than the polls, so zones seen in one poll
	// tie, and the order within a poll is the event-driven monitor's to
	// hold (its per-domain budget).
	for _, zone := range topologyZones {
		for _, earlier := range topologyZones {
			if earlier < zone {
				s.g.Expect(zoneStarted[earlier]).To(gomega.BeNumerically("<=", zoneStarted[zone]), "zone %s started before zone %s: %v", zone, earlier, zoneStarted)
			}
		}
	}
}
