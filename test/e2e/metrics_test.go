package e2e

import (
	"crypto/tls"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/onsi/gomega"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
	"github.com/extendeddaemonset/extendeddaemonset/test/harness"
)

// The controller's metrics are served on the secured endpoint to callers
// bound to the shipped metrics-reader ClusterRole only, and follow an
// ExtendedDaemonSet through a canary to its rollout.
func TestMetricsOnTheSecuredEndpoint(t *testing.T) {
	s := newScenario(t)
	scraper, stranger := s.serviceAccountToken("scraper", true), s.serviceAccountToken("stranger", false)
	s.g.Expect(scrapeStatus(s.g, "")).To(gomega.Equal(http.StatusUnauthorized))
	s.g.Expect(scrapeStatus(s.g, stranger)).To(gomega.Equal(http.StatusForbidden))

	eds, nodes := s.createAgent(&v1alpha1.CanaryStrategy{
		Replicas: ptr.To(intstr.FromInt32(1)), ValidationMode: v1alpha1.CanaryValidationManual,
	})
	s.update(eds, func(e *v1alpha1.ExtendedDaemonSet) { setVersion(e, "v2") })
	canary := s.expectCanary(eds, canaryPaused, "WaitingForValidation").Status.Canary.ReplicaSet
	of := map[string]string{"namespace": s.ns, "name": eds.Name}
	s.g.Eventually(func(g gomega.Gomega) {
		m := scrape(g, scraper)
		g.Expect(gauge(m, "extendeddaemonset_status_desired_pods", of)).To(gomega.BeEquivalentTo(len(nodes)))
		g.Expect(gauge(m, "extendeddaemonset_canary_nodes", of)).To(gomega.Equal(1.0))
		g.Expect(gauge(m, "extendeddaemonset_canary_state", with(of, "state", "paused"))).To(gomega.Equal(1.0))
		g.Expect(gauge(m, "extendeddaemonset_status_condition",
			with(with(with(of, "type", v1alpha1.ReconcilingCondition), "status", "True"), "reason", v1alpha1.ReasonCanaryPaused))).To(gomega.Equal(1.0))
	}).WithTimeout(rolloutTimeout).WithPolling(time.Second).Should(gomega.Succeed())

	s.update(eds, func(e *v1alpha1.ExtendedDaemonSet) { e.Spec.Strategy.Canary.Validate = canary })
	s.expectPromoted(eds, "v2", nodes, canary)
	s.g.Eventually(func(g gomega.Gomega) {
		m := scrape(g, scraper)
		g.Expect(gauge(m, "extendeddaemonset_status_available_pods", of)).To(gomega.BeEquivalentTo(len(nodes)))
		g.Expect(gauge(m, "extendeddaemonset_status_updated_pods", of)).To(gomega.BeEquivalentTo(len(nodes)))
		g.Expect(gauge(m, "extendeddaemonset_canary_state", with(of, "state", "none"))).To(gomega.Equal(1.0))
		g.Expect(gauge(m, "extendeddaemonset_canary_state", with(of, "state", "paused"))).To(gomega.BeNil(), "a former state is dropped")
		g.Expect(gauge(m, "extendeddaemonset_status_condition",
			with(with(with(of, "type", v1alpha1.ReadyCondition), "status", "True"), "reason", v1alpha1.ReasonRolledOut))).To(gomega.Equal(1.0))
		g.Expect(histogramCount(m, "extendeddaemonset_canary_duration_seconds", with(of, "result", "promoted"))).To(gomega.Equal(uint64(1)))
		// The first template and the promoted one each rolled out once.
		g.Expect(histogramCount(m, "extendeddaemonset_rollout_duration_seconds", of)).To(gomega.Equal(uint64(2)))
	}).WithTimeout(rolloutTimeout).WithPolling(time.Second).Should(gomega.Succeed())
}

// serviceAccountToken creates a service account, bound to the shipped
// metrics-reader ClusterRole when reader is true, and returns a token of it.
func (s *scenario) serviceAccountToken(name string, reader bool) string {
	s.t.Helper()
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: s.ns}}
	s.g.Expect(env.Client.Create(s.ctx, sa)).To(gomega.Succeed())
	if reader {
		data, err := os.ReadFile(filepath.Join(harness.RepoRoot(), "config", "rbac", "metrics_reader_role.yaml"))
		s.g.Expect(err).NotTo(gomega.HaveOccurred())
		role := &rbacv1.ClusterRole{}
		s.g.Expect(yaml.UnmarshalStrict(data, role)).To(gomega.Succeed())
		role.Name = s.ns + "-metrics-reader"
		s.g.Expect(env.Client.Create(s.ctx, role)).To(gomega.Succeed())
		binding := &rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: role.Name},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: name, Namespace: s.ns}},
		}
		s.g.Expect(env.Client.Create(s.ctx, binding)).To(gomega.Succeed())
		s.t.Cleanup(func() {
			_ = env.Client.Delete(s.ctx, binding)
			_ = env.Client.Delete(s.ctx, role)
		})
	}
	token, err := env.Kube.CoreV1().ServiceAccounts(s.ns).CreateToken(s.ctx, name,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](3600)}}, metav1.CreateOptions{})
	s.g.Expect(err).NotTo(gomega.HaveOccurred())
	return token.Status.Token
}

// metricsClient skips certificate checks: the controllers serve metrics
// with a certificate they made themselves, as the manager does by default.
var metricsClient = &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
	TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // self-signed serving certificate of the test's own controllers
}}

func scrapeRequest(g gomega.Gomega, token string) *http.Response {
	req, err := http.NewRequest(http.MethodGet, "https://"+env.MetricsAddr+"/metrics", http.NoBody)
	g.Expect(err).NotTo(gomega.HaveOccurred())
	req.Header.Set("Accept", string(expfmt.NewFormat(expfmt.TypeTextPlain)))
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := metricsClient.Do(req)
	g.Expect(err).NotTo(gomega.HaveOccurred())
	return resp
}

func scrapeStatus(g gomega.Gomega, token string) int {
	resp := scrapeRequest(g, token)
	defer resp.Body.Close()
	return resp.StatusCode
}

// scrape reads the metrics as token, by family name.
func scrape(g gomega.Gomega, token string) map[string]*dto.MetricFamily {
	resp := scrapeRequest(g, token)
	defer resp.Body.Close()
	g.Expect(resp.StatusCode).To(gomega.Equal(http.StatusOK))
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(resp.Body)
	g.Expect(err).NotTo(gomega.HaveOccurred())
	return families
}

// series is the metric of family name whose labels include labels.
func series(families map[string]*dto.MetricFamily, name string, labels map[string]string) *dto.Metric {
	for _, m := range families[name].GetMetric() {
		matched := 0
		for _, l := range m.GetLabel() {
			if v, ok := labels[l.GetName()]; ok && v == l.GetValue() {
				matched++
			}
		}
		if matched == len(labels) {
			return m
		}
	}
	return nil
}

// gauge is the value of a gauge series, nil when there is none.
func gauge(families map[string]*dto.MetricFamily, name string, labels map[string]string) any {
	if m := series(families, name, labels); m != nil {
		return m.GetGauge().GetValue()
	}
	return nil
}

func histogramCount(families map[string]*dto.MetricFamily, name string, labels map[string]string) uint64 {
	return series(families, name, labels).GetHistogram().GetSampleCount()
}

// with is labels plus one more.
func with(labels map[string]string, key, value string) map[string]string {
	out := map[string]string{key: value}
	for k, v := range labels {
		out[k] = v
	}
	return out
}
