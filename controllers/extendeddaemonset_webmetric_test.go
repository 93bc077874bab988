package controllers

import (
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
)

// The suite's controllers run without --allowed-webhook-hosts: a web metric
// whose receiver listens on loopback is refused before any request, and
// the analysis status says which flag lets it in.
func TestWebMetricToLoopbackIsRefusedWithoutTheFlag(t *testing.T) {
	s := newScenario(t)
	var asked atomic.Int32
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		asked.Add(1)
		_, _ = io.WriteString(w, `{"value": 0}`)
	}))
	defer receiver.Close()

	nodes := []*corev1.Node{s.createNode("a", nil), s.createNode("b", nil)}
	eds := s.newEDS("agent", imageV1)
	eds.Spec.Strategy.Canary = &v1alpha1.CanaryStrategy{
		Replicas: ptr.To(intstr.FromInt32(1)), Duration: &metav1.Duration{Duration: time.Hour},
		Analysis: &v1alpha1.CanaryAnalysis{
			Interval: &metav1.Duration{Duration: time.Second},
			Metrics: []v1alpha1.AnalysisMetric{{
				Name:           "synthetic",
				Web:            &v1alpha1.WebMetric{WebRequest: v1alpha1.WebRequest{URL: receiver.URL + "/value"}, JSONPath: "{.value}"},
				ThresholdRange: &v1alpha1.ThresholdRange{Max: ptr.To(1.0)},
			}},
		},
	}
	_, stable := s.createRolledOut(eds, nodes...)
	s.setImage(eds, imageV2)
	second, canaryNodes := s.runningCanary(eds.Name)
	s.replaceOnNode(stable[canaryNodes[0]], second)

	s.g.Eventually(func(g gomega.Gomega) {
		a := s.getEDS(g, eds.Name).Status.Canary.Analysis
		g.Expect(a).NotTo(gomega.BeNil())
		g.Expect(a.Metrics).To(gomega.HaveLen(1))
		g.Expect(a.Metrics[0].Error).To(gomega.BeNumerically(">", 0))
		g.Expect(a.Metrics[0].Message).To(gomega.Equal(
			"web request refused: host 127.0.0.1 is not allowed for webhooks and web metrics: add it to --allowed-webhook-hosts"))
	}).Should(gomega.Succeed())
	s.g.Expect(asked.Load()).To(gomega.BeZero(), "the refused receiver was asked")
}
