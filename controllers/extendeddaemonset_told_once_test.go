package controllers

import (
	"testing"
	"time"

	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
)

// One analysis failure is one AnalysisFailed event and one CanaryFailed
// event, however many status writes follow while the canary's nodes go
// back; and no counter of the ExtendedDaemonSet says more than desired
// meanwhile.
func TestOneAnalysisFailureIsToldOnce(t *testing.T) {
	s := newScenario(t)
	prom := newFakePrometheus(t)
	prom.set("1")
	nodes := []*corev1.Node{s.createNode("a", nil), s.createNode("b", nil), s.createNode("c", nil)}
	eds := s.newEDS("agent", imageV1)
	eds.Spec.Strategy.RollingUpdate.MaxUnavailable = ptr.To(intstr.FromInt32(2))
	maxErrors := 0.5
	eds.Spec.Strategy.Canary = &v1alpha1.CanaryStrategy{
		Replicas: ptr.To(intstr.FromInt32(2)), Duration: &metav1.Duration{Duration: time.Hour},
		Analysis: &v1alpha1.CanaryAnalysis{
			Provider: v1alpha1.AnalysisProvider{Prometheus: &v1alpha1.PrometheusProvider{Address: prom.URL}},
			Interval: &metav1.Duration{Duration: time.Second},
			Metrics: []v1alpha1.AnalysisMetric{{
				Name: "errors", Query: `errors{pod=~"{{ .CanaryPodRegex }}"}`, ThresholdRange: &v1alpha1.ThresholdRange{Max: &maxErrors},
			}},
		},
	}
	first, stable := s.createRolledOut(eds, nodes...)
	s.setImage(eds, imageV2)
	second, canaryNodes := s.runningCanary(eds.Name)
	canaryPods := map[string]corev1.Pod{}
	for _, node := range canaryNodes {
		canaryPods[node] = s.replaceOnNode(stable[node], second)
	}
	s.g.Eventually(func(g gomega.Gomega) {
		c := s.getEDS(g, eds.Name).Status.Canary
		g.Expect(c).NotTo(gomega.BeNil())
		g.Expect(c.Failed).To(gomega.BeTrue())
	}).Should(gomega.Succeed())

	// The canary's nodes go back to the active replica set.
	for _, node := range canaryNodes {
		s.replaceOnNode(canaryPods[node], first)
	}
	told := func(g gomega.Gomega, reason string) int32 {
		var events eventsv1.EventList
		g.Expect(k8s.List(s.ctx, &events, client.InNamespace(s.ns))).To(gomega.Succeed())
		var n int32
		for _, e := range events.Items {
			if e.Reason == reason && e.Regarding.Kind == "ExtendedDaemonSet" && e.Regarding.Name == eds.Name {
				n++
				if e.Series != nil {
					n += e.Series.Count - 1
				}
			}
		}
		return n
	}
	withinDesired := func(g gomega.Gomega) {
		st := s.getEDS(g, eds.Name).Status
		for _, n := range []int32{st.Current, st.Ready, st.Available, st.UpToDate} {
			g.Expect(n).To(gomega.BeNumerically("<=", st.Desired), "%+v", st)
		}
	}
	s.g.Eventually(func(g gomega.Gomega) {
		withinDesired(g)
		g.Expect(told(g, v1alpha1.ReasonAnalysisFailed)).To(gomega.BeEquivalentTo(1))
		g.Expect(s.getEDS(g, eds.Name).Status.Available).To(gomega.BeEquivalentTo(len(nodes)))
	}).Should(gomega.Succeed())
	s.g.Consistently(func(g gomega.Gomega) {
		withinDesired(g)
		g.Expect(told(g, v1alpha1.ReasonAnalysisFailed)).To(gomega.BeEquivalentTo(1), "one analysis failure told again")
		g.Expect(told(g, "CanaryFailed")).To(gomega.BeEquivalentTo(1), "one canary failure told again")
	}).Should(gomega.Succeed())
}
