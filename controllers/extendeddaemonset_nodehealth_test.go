package controllers

import (
	"testing"
	"time"

	"github.com/fluxcd/pkg/runtime/conditions"
	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
)

// nodeHealthCanary is an ExtendedDaemonSet on nodes a, b and c, each
// running a pod of another workload, whose canary of one node is judged
// by a nodeHealth metric with its defaults, every second.
func (s *scenario) nodeHealthCanary(duration time.Duration) (eds *v1alpha1.ExtendedDaemonSet, nodes []*corev1.Node, others map[string]string) {
	s.t.Helper()
	nodes = []*corev1.Node{s.createNode("a", nil), s.createNode("b", nil), s.createNode("c", nil)}
	others = map[string]string{}
	for _, node := range nodes {
		others[node.Name] = s.runOtherPod(node.Name)
	}
	eds = s.newEDS("agent", imageV1)
	eds.Spec.Strategy.Canary = &v1alpha1.CanaryStrategy{
		Replicas: ptr.To(intstr.FromInt32(1)), Duration: &metav1.Duration{Duration: duration},
		Analysis: &v1alpha1.CanaryAnalysis{
			Interval: &metav1.Duration{Duration: time.Second},
			Metrics:  []v1alpha1.AnalysisMetric{{Name: "node-health", NodeHealth: &v1alpha1.NodeHealthMetric{}}},
		},
	}
	return eds, nodes, others
}

// runOtherPod runs a pod of another workload on node, Ready, and returns
// its name.
func (s *scenario) runOtherPod(node string) string {
	s.t.Helper()
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "web-", Labels: map[string]string{"app": "web"}},
		Spec:       corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "web", Image: "registry.example/web:1"}}},
	}
	s.create(pod)
	s.runPod(pod)
	return pod.Name
}

// breakPod turns a pod not ready, as its kubelet would when it lost its
// network.
func (s *scenario) breakPod(name string) {
	s.t.Helper()
	s.setPodStatus(name, func(st *corev1.PodStatus) {
		for i := range st.Conditions {
			if st.Conditions[i].Type == corev1.PodReady || st.Conditions[i].Type == corev1.ContainersReady {
				st.Conditions[i].Status, st.Conditions[i].LastTransitionTime = corev1.ConditionFalse, metav1.Now()
			}
		}
	})
}

// A canary under which the other pods of its node turn not ready fails on
// node health: the analysis names the node and the pod, the
// ExtendedDaemonSet is Stalled by the failed canary, and the canary node
// goes back to the active template.
func TestNodeHealthFailsACanaryThatBreaksItsNode(t *testing.T) {
	s := newScenario(t)
	eds, nodes, others := s.nodeHealthCanary(time.Hour)
	first, stable := s.createRolledOut(eds, nodes...)
	s.setImage(eds, imageV2)
	second, canaryNodes := s.runningCanary(eds.Name)
	canaryNode := canaryNodes[0]
	canaryPod := s.replaceOnNode(stable[canaryNode], second)

	// The first measurements find the node as healthy as the others.
	s.g.Eventually(func(g gomega.Gomega) {
		m := newestMeasurement(g, s.getEDS(g, eds.Name).Status.Canary, "node-health")
		g.Expect(m.Phase).To(gomega.Equal(v1alpha1.AnalysisSuccessful), m.Message)
	}).Should(gomega.Succeed())
	// Transition times are in seconds: the breakage comes a second after
	// the canary started, as it would.
	time.Sleep(time.Second)
	s.breakPod(others[canaryNode])

	s.g.Eventually(func(g gomega.Gomega) {
		e := s.getEDS(g, eds.Name)
		g.Expect(e.Status.Canary).NotTo(gomega.BeNil())
		g.Expect(e.Status.Canary.Failed).To(gomega.BeTrue())
		g.Expect(conditions.GetReason(e, v1alpha1.StalledCondition)).To(gomega.Equal(v1alpha1.ReasonCanaryFailed))
		m := newestMeasurement(g, e.Status.Canary, "node-health")
		g.Expect(m.Phase).To(gomega.Equal(v1alpha1.AnalysisFailed))
		g.Expect(m.Nodes).To(gomega.HaveLen(1))
		g.Expect(m.Nodes[0].Node).To(gomega.Equal(canaryNode))
		g.Expect(m.Nodes[0].Message).To(gomega.ContainSubstring(others[canaryNode]))
		g.Expect(e.Status.ActiveReplicaSet).To(gomega.Equal(first))
	}).Should(gomega.Succeed())
	s.replaceOnNode(canaryPod, first)
}

// A canary that leaves the other pods of its node alone passes node health
// and is promoted.
func TestNodeHealthPromotesAHealthyCanary(t *testing.T) {
	s := newScenario(t)
	eds, nodes, _ := s.nodeHealthCanary(3 * time.Second)
	_, stable := s.createRolledOut(eds, nodes...)
	s.setImage(eds, imageV2)
	second, canaryNodes := s.runningCanary(eds.Name)
	s.replaceOnNode(stable[canaryNodes[0]], second)

	s.g.Eventually(func(g gomega.Gomega) {
		e := s.getEDS(g, eds.Name)
		g.Expect(e.Status.ActiveReplicaSet).To(gomega.Equal(second), "canary: %+v", e.Status.Canary)
	}).Should(gomega.Succeed())
}

// newestMeasurement is the newest measurement of a metric of the canary's
// analysis.
func newestMeasurement(g gomega.Gomega, c *v1alpha1.CanaryStatus, metric string) v1alpha1.Measurement {
	g.Expect(c).NotTo(gomega.BeNil())
	g.Expect(c.Analysis).NotTo(gomega.BeNil())
	for _, m := range c.Analysis.Metrics {
		if m.Name == metric {
			g.Expect(m.Measurements).NotTo(gomega.BeEmpty())
			return m.Measurements[len(m.Measurements)-1]
		}
	}
	g.Expect(c.Analysis.Metrics).To(gomega.ContainElement(gomega.HaveField("Name", metric)))
	return v1alpha1.Measurement{}
}

// A bake is judged by node health too: rolling out rack by rack, the
// baking rack's node whose other pods turn not ready is compared with the
// node of its zone still on the old version, and the bake fails, halting
// the rollout with the node named.
func TestNodeHealthFailsABakeThatBreaksItsNode(t *testing.T) {
	s := newScenario(t)
	nodes := []*corev1.Node{
		s.createNode("a", map[string]string{zoneLabel: "zone-a", "rack": "rack-1"}),
		s.createNode("b", map[string]string{zoneLabel: "zone-a", "rack": "rack-2"}),
	}
	others := map[string]string{}
	for _, node := range nodes {
		others[node.Name] = s.runOtherPod(node.Name)
	}
	eds := s.newEDS("agent", imageV1)
	eds.Spec.Strategy.RollingUpdate.Topology = &v1alpha1.RollingUpdateTopology{
		Key: "rack", DomainBakeTime: &metav1.Duration{Duration: time.Hour},
	}
	eds.Spec.Strategy.Canary = &v1alpha1.CanaryStrategy{
		Replicas: ptr.To(intstr.FromInt32(1)), ValidationMode: v1alpha1.CanaryValidationManual,
		NodeSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"rack": "rack-1"}},
		Analysis: &v1alpha1.CanaryAnalysis{
			Interval: &metav1.Duration{Duration: time.Second},
			Metrics:  []v1alpha1.AnalysisMetric{{Name: "node-health", NodeHealth: &v1alpha1.NodeHealthMetric{}}},
		},
	}
	_, stable := s.createRolledOut(eds, nodes...)
	s.setImage(eds, imageV2)
	second, _ := s.runningCanary(eds.Name)
	s.replaceOnNode(stable[nodes[0].Name], second)
	s.annotate(eds, v1alpha1.CanaryValidatedAnnotation, second)
	s.g.Eventually(func(g gomega.Gomega) {
		e := s.getEDS(g, eds.Name)
		g.Expect(e.Status.ActiveReplicaSet).To(gomega.Equal(second))
		g.Expect(e.Status.Bake).NotTo(gomega.BeNil())
		g.Expect(e.Status.Bake.Domain).To(gomega.Equal("rack-1"))
		g.Expect(e.Status.Bake.Analysis).NotTo(gomega.BeNil())
		g.Expect(e.Status.Bake.Analysis.Phase).To(gomega.Equal(v1alpha1.AnalysisSuccessful))
	}).Should(gomega.Succeed())

	s.breakPod(others[nodes[0].Name])
	s.g.Eventually(func(g gomega.Gomega) {
		e := s.getEDS(g, eds.Name)
		g.Expect(e.Status.Bake.Analysis.Phase).To(gomega.Equal(v1alpha1.AnalysisFailed))
		g.Expect(conditions.GetReason(e, v1alpha1.StalledCondition)).To(gomega.Equal(v1alpha1.ReasonDomainBakeFailed))
		m := e.Status.Bake.Analysis.Metrics[0]
		newest := m.Measurements[len(m.Measurements)-1]
		g.Expect(newest.Nodes).To(gomega.ConsistOf(gomega.And(gomega.HaveField("Node", nodes[0].Name),
			gomega.HaveField("Message", gomega.ContainSubstring(others[nodes[0].Name])))))
		g.Expect(newest.Message).To(gomega.ContainSubstring("against 100% on the baseline (1 of 1)"))
	}).Should(gomega.Succeed())
}
