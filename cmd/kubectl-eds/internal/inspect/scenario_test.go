package inspect_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
	"github.com/extendeddaemonset/extendeddaemonset/cmd/kubectl-eds/internal/clitest"
)

// canaryOnFirstNode is a canary of one node, the scenario's first (so that
// what runs where is the same on every run), lasting an hour: it is still
// running when a test looks at it.
func canaryOnFirstNode(s *clitest.Scenario) *v1alpha1.CanaryStrategy {
	one := intstr.FromInt32(1)
	return &v1alpha1.CanaryStrategy{
		Replicas:     &one,
		Duration:     &metav1.Duration{Duration: time.Hour},
		NodeSelector: &metav1.LabelSelector{MatchLabels: map[string]string{corev1.LabelHostname: s.Namespace + "-0"}},
	}
}

// fakePrometheus answers every query with 0, measured now: no restarts.
func fakePrometheus(s *clitest.Scenario) string {
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"status":"success","data":{"resultType":"scalar","result":[%d,"0"]}}`, time.Now().Unix())
	}))
	s.T.Cleanup(server.Close)
	return server.URL
}

// restartsAnalysis measures the canary's restarts once a minute: once
// during a test.
func restartsAnalysis(address string) *v1alpha1.CanaryAnalysis {
	return &v1alpha1.CanaryAnalysis{
		Provider: v1alpha1.AnalysisProvider{Prometheus: &v1alpha1.PrometheusProvider{Address: address}},
		Interval: &metav1.Duration{Duration: time.Minute},
		Metrics:  []v1alpha1.AnalysisMetric{{Name: "restarts", Preset: v1alpha1.MetricPresetRestarts}},
	}
}

func setImage(image string) func(*v1alpha1.ExtendedDaemonSet) {
	return func(eds *v1alpha1.ExtendedDaemonSet) { eds.Spec.Template.Spec.Containers[0].Image = image }
}
