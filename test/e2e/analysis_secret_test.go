package e2e

import (
	"testing"
	"time"

	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
)

// The Prometheus credentials come from the Secret the analysis names: while
// it is missing, measuring fails and the canary pauses, saying which Secret;
// once it exists, measuring resumes and the canary is promoted.
func TestAnalysisCredentialsFromSecret(t *testing.T) {
	s := newScenario(t)
	m := s.startMetrics()
	m.setTraffic(func(*corev1.Pod) map[string]float64 { return requests(10, 0) })
	analysis := m.analysisOf(errorRateMetric("error-rate", 0.05))
	analysis.Provider.Prometheus.SecretRef = &corev1.LocalObjectReference{Name: "prometheus-credentials"}
	analysis.ConsecutiveErrorLimit = ptr.To[int32](0)
	analysis.InconclusiveLimit = ptr.To[int32](2)
	c := s.startAnalyzedCanary(8*time.Second, analysis)

	latest := s.expectAnalysis(c, v1alpha1.AnalysisError, metav1.ConditionFalse)
	s.g.Expect(latest.Status.Canary.Paused).To(gomega.BeTrue())
	s.g.Expect(latest.Status.Canary.Message).To(gomega.ContainSubstring("prometheus-credentials"))

	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "prometheus-credentials", Namespace: s.ns},
		Data:       map[string][]byte{"token": []byte("a-token")},
	}
	s.g.Expect(env.Client.Create(s.ctx, secret)).To(gomega.Succeed())
	_, active := s.expectRolledOut(c.eds, "v2", s.nodeNames())
	s.g.Expect(active.Name).To(gomega.Equal(c.replicaSet))
}
