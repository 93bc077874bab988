package e2e

import (
	"testing"
	"time"

	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
	"github.com/extendeddaemonset/extendeddaemonset/controllers/placement"
	"github.com/extendeddaemonset/extendeddaemonset/test/argocd"
	"github.com/extendeddaemonset/extendeddaemonset/test/invariants"
)

// A zone rollout whose bakes the canary's analysis judges, on a real
// Prometheus: a good version bakes zone by zone, each bake Successful; a
// version whose error rate rises only on zone-b's nodes passes its canary
// (on zone-a) and zone-a's bake, then halts once zone-b bakes: Stalled with
// DomainBakeFailed naming zone-b and the metric, the spec untouched,
// zone-c untouched, and every node still running an available agent.
func TestBakeAnalysisZoneByZone(t *testing.T) {
	s := newScenario(t)
	metrics := s.startMetrics()
	const group = "bake"
	nodes, zoneOf := s.addZonedNodes(group)
	// v3's bug shows only where zone-b's traffic reaches it.
	metrics.setTraffic(func(pod *corev1.Pod) map[string]float64 {
		if pod.Spec.Containers[0].Image == agentImage("v3") && zoneOf[placement.TargetNode(pod)] == "zone-b" {
			return requests(20, 0.5)
		}
		return requests(20, 0)
	})
	eds := agentEDS(s.ns, "agent", "v1")
	eds.Spec.Template.Spec.NodeSelector = onGroup(group)
	eds.Spec.Strategy.RollingUpdate.MaxUnavailable = ptr.To(intstr.FromInt32(nodesPerZone))
	eds.Spec.Strategy.RollingUpdate.Topology = &v1alpha1.RollingUpdateTopology{
		Key: corev1.LabelTopologyZone, DomainBakeTime: &metav1.Duration{Duration: 10 * time.Second},
	}
	eds.Spec.Strategy.Canary = &v1alpha1.CanaryStrategy{
		Replicas: ptr.To(intstr.FromInt32(1)), Duration: &metav1.Duration{Duration: 6 * time.Second},
		NodeSelector: &metav1.LabelSelector{MatchLabels: map[string]string{corev1.LabelTopologyZone: "zone-a"}},
		Analysis:     metrics.analysisOf(errorRateMetric("error-rate", 0.05)),
	}
	eds = s.create(eds)
	eds, _ = s.expectRolledOut(eds, "v1", nodes)

	// A good version: every bake with work after it is judged Successful.
	latest, _, seen := s.rollZones(eds, "v2", nodes, zoneOf)
	s.g.Expect(seen.started).To(gomega.Equal(topologyZones), "order the zones started in")
	s.g.Expect(seen.maxInProgress).To(gomega.Equal(1), "zones updating at once")
	s.g.Expect(latest.Status.Bake).NotTo(gomega.BeNil())
	s.g.Expect(latest.Status.Bake.PassedThrough).To(gomega.Equal("zone-b"), "the last zone holds nothing back and is not judged")
	s.g.Expect(latest.Status.Bake.Analysis.Phase).To(gomega.Equal(v1alpha1.AnalysisSuccessful))
	s.g.Expect(latest.Status.Bake.Analysis.Metrics[0].Count).To(gomega.BeNumerically(">=", 1))
	s.g.Expect(latest.Status.Domains).To(gomega.HaveLen(len(topologyZones)))
	for i, d := range latest.Status.Domains {
		want := v1alpha1.AnalysisSuccessful
		if i == len(topologyZones)-1 {
			want = ""
		}
		s.g.Expect(d).To(gomega.And(gomega.HaveField("Name", topologyZones[i]), gomega.HaveField("State", v1alpha1.DomainDone),
			gomega.HaveField("Analysis", want)), "domain %s", d.Name)
	}
	s.t.Logf("v2 rolled out zone by zone; zone-b's bake: %s", latest.Status.Bake.Analysis.Message)

	// A version bad in zone-b: its canary and zone-a's bake pass, zone-b's
	// bake fails and the rollout halts there.
	zones, err := watchZones(s, latest, zoneOf)
	s.g.Expect(err).NotTo(gomega.HaveOccurred())
	s.update(eds, func(e *v1alpha1.ExtendedDaemonSet) { setVersion(e, "v3") })
	written := s.get(eds)
	var halted *v1alpha1.ExtendedDaemonSet
	s.g.Eventually(func(g gomega.Gomega) {
		halted = s.get(eds)
		g.Expect(halted.Status.Canary).To(gomega.BeNil())
		g.Expect(halted.Status.Bake).NotTo(gomega.BeNil())
		g.Expect(halted.Status.Bake.Domain).To(gomega.Equal("zone-b"))
		g.Expect(halted.Status.Bake.Analysis).NotTo(gomega.BeNil())
		g.Expect(halted.Status.Bake.Analysis.Phase).To(gomega.Equal(v1alpha1.AnalysisFailed), halted.Status.Bake.Analysis.Message)
		stalled := apimeta.FindStatusCondition(halted.Status.Conditions, v1alpha1.StalledCondition)
		g.Expect(stalled).NotTo(gomega.BeNil())
		g.Expect(stalled.Status).To(gomega.Equal(metav1.ConditionTrue))
		g.Expect(stalled.Reason).To(gomega.Equal(v1alpha1.ReasonDomainBakeFailed))
		g.Expect(stalled.Message).To(gomega.And(gomega.ContainSubstring("zone-b"), gomega.ContainSubstring("error-rate")))
		g.Expect(apimeta.IsStatusConditionTrue(halted.Status.Conditions, v1alpha1.ReadyCondition)).To(gomega.BeFalse())
		g.Expect(kstatusOf(g, halted).Status).To(gomega.Equal(status.FailedStatus))
		health, _ := argoHealthOf(g, halted)
		g.Expect(health).To(gomega.Equal(argocd.Degraded))
	}).WithTimeout(rolloutTimeout).WithPolling(pollInterval).Should(gomega.Succeed())
	s.g.Expect(halted.Status.Domains).To(gomega.HaveLen(len(topologyZones)))
	s.g.Expect(halted.Status.Domains[0].Analysis).To(gomega.Equal(v1alpha1.AnalysisSuccessful))
	s.g.Expect(halted.Status.Domains[1]).To(gomega.And(gomega.HaveField("State", v1alpha1.DomainBaking),
		gomega.HaveField("Analysis", v1alpha1.AnalysisFailed)))
	s.g.Expect(halted.Status.Domains[2].State).To(gomega.Equal(v1alpha1.DomainPending))
	s.t.Logf("v3 halted: %s", apimeta.FindStatusCondition(halted.Status.Conditions, v1alpha1.StalledCondition).Message)
	s.expectWarning(eds, v1alpha1.ReasonDomainBakeFailed, "zone-b", "error-rate")

	// Halted, not rolled back: zones a and b run v3, zone-c still v2, and
	// every node an available agent, for as long as we look.
	s.g.Consistently(func(g gomega.Gomega) {
		byNode := map[string][]corev1.Pod{}
		for _, pod := range s.pods(g, eds) {
			if pod.DeletionTimestamp == nil {
				byNode[placement.TargetNode(&pod)] = append(byNode[placement.TargetNode(&pod)], pod)
			}
		}
		for _, node := range nodes {
			g.Expect(byNode[node]).To(gomega.HaveLen(1), "pods on %s", node)
			pod := byNode[node][0]
			g.Expect(invariants.RunningAndReady(&pod)).To(gomega.BeTrue(), "pod on %s", node)
			want := "v3"
			if zoneOf[node] == "zone-c" {
				want = "v2"
			}
			g.Expect(pod.Spec.Containers[0].Image).To(gomega.Equal(agentImage(want)), "pod on %s (%s)", node, zoneOf[node])
		}
	}).WithTimeout(holdWindow).WithPolling(pollInterval).Should(gomega.Succeed())
	seen, err = zones.stop()
	s.g.Expect(err).NotTo(gomega.HaveOccurred())
	s.g.Expect(seen.started).To(gomega.Equal(topologyZones[:2]), "zones started")
	after := s.get(eds)
	s.g.Expect(specJSON(s.g, after)).To(gomega.Equal(specJSON(s.g, written)), "the controller modified the spec")
	s.g.Expect(after.Generation).To(gomega.Equal(written.Generation))
}
