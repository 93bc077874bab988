package e2e

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
)

// checksReceiver is a local HTTP server standing in for a user's synthetic
// checks: it answers the failure rate the test sets to requests that carry
// the expected token, and 401 to the others.
type checksReceiver struct {
	server       *httptest.Server
	rate         atomic.Value
	requests     atomic.Int32
	unauthorized atomic.Int32
}

const checksToken = "Bearer e2e-checks-token"

func (s *scenario) startChecksReceiver(rate string) *checksReceiver {
	r := &checksReceiver{}
	r.rate.Store(rate)
	r.server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.requests.Add(1)
		if req.Header.Get("Authorization") != checksToken {
			r.unauthorized.Add(1)
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		_, _ = fmt.Fprintf(w, `{"data": {"failureRate": %q}}`, r.rate.Load())
	}))
	s.t.Cleanup(r.server.Close)
	return r
}

// A web metric fails the canary once the number its endpoint answers goes
// over the threshold. The URL and the Authorization header come from
// Secrets, and the measurement shows neither.
func TestAnalysisWebMetricFailsTheCanary(t *testing.T) {
	s := newScenario(t)
	checks := s.startChecksReceiver("0.01")
	for name, data := range map[string]map[string]string{
		"checks":         {"url": checks.server.URL + "/agent?token=in-the-url\n"},
		"checks-headers": {"Authorization": checksToken},
	} {
		secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: s.ns, Name: name}, StringData: data}
		s.g.Expect(env.Client.Create(s.ctx, secret)).To(gomega.Succeed())
	}
	analysis := &v1alpha1.CanaryAnalysis{
		Interval: &metav1.Duration{Duration: 2 * time.Second},
		Metrics: []v1alpha1.AnalysisMetric{{
			Name: "synthetic-checks",
			Web: &v1alpha1.WebMetric{
				WebRequest: v1alpha1.WebRequest{
					URLFrom:     &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "checks"}, Key: "url"},
					HeadersFrom: &corev1.LocalObjectReference{Name: "checks-headers"},
				},
				JSONPath: "{.data.failureRate}",
			},
			ThresholdRange: &v1alpha1.ThresholdRange{Max: ptr.To(0.05)},
		}},
	}
	c := s.startAnalyzedCanary(5*time.Minute, analysis)
	written := s.get(c.eds)

	latest := s.expectAnalysis(c, v1alpha1.AnalysisSuccessful, metav1.ConditionTrue)
	result := latest.Status.Canary.Analysis.Metrics[0]
	newest := result.Measurements[len(result.Measurements)-1]
	s.g.Expect(newest.Value).To(gomega.Equal("0.01"))
	s.g.Expect(newest.Query).To(gomega.Equal(`GET (url from key "url" of Secret checks)`))

	checks.rate.Store("0.5")
	s.expectFailedByAnalysis(c, written, "synthetic-checks", "0.5 > max 0.05")
	s.g.Expect(checks.unauthorized.Load()).To(gomega.BeZero(), "a request came without the header of the Secret")
	final := s.get(c.eds).Status.Canary.Analysis
	for _, m := range final.Metrics[0].Measurements {
		s.g.Expect(m.Query + m.Message).NotTo(gomega.ContainSubstring("in-the-url"))
	}
	s.t.Logf("the receiver answered %d requests", checks.requests.Load())
}

// A receiver the host policy refuses is never asked: the measurement says
// which flag lets it in, and the canary pauses on the errors rather than
// failing or being promoted.
func TestAnalysisWebMetricToARefusedHostPauses(t *testing.T) {
	s := newScenario(t)
	// 127.0.0.2 is loopback too, but --allowed-webhook-hosts lists
	// 127.0.0.1 alone.
	checks := &checksReceiver{}
	checks.rate.Store("0")
	listener, err := net.Listen("tcp", "127.0.0.2:0")
	s.g.Expect(err).NotTo(gomega.HaveOccurred())
	checks.server = &httptest.Server{Listener: listener, Config: &http.Server{Handler: http.HandlerFunc(func(http.ResponseWriter, *http.Request) {
		checks.requests.Add(1)
	})}}
	checks.server.Start()
	s.t.Cleanup(checks.server.Close)

	analysis := &v1alpha1.CanaryAnalysis{
		Interval:              &metav1.Duration{Duration: time.Second},
		ConsecutiveErrorLimit: ptr.To[int32](1),
		Metrics: []v1alpha1.AnalysisMetric{{
			Name: "synthetic-checks",
			Web: &v1alpha1.WebMetric{
				WebRequest: v1alpha1.WebRequest{URL: checks.server.URL + "/agent"},
				JSONPath:   "{.data.failureRate}",
			},
			ThresholdRange: &v1alpha1.ThresholdRange{Max: ptr.To(0.05)},
		}},
	}
	c := s.startAnalyzedCanary(5*time.Second, analysis)
	s.expectPausedUnlessPromoted(c, v1alpha1.ReasonAnalysisError)
	latest := s.expectAnalysis(c, v1alpha1.AnalysisError, metav1.ConditionFalse)
	s.g.Expect(latest.Status.Canary.Analysis.Metrics[0].Message).To(gomega.Equal(
		"web request refused: host 127.0.0.2 is not allowed for webhooks and web metrics: add it to --allowed-webhook-hosts"))
	s.g.Expect(latest.Status.Canary.Analysis.Message).To(gomega.ContainSubstring("add it to --allowed-webhook-hosts"))
	s.g.Expect(latest.Status.Canary.Failed).To(gomega.BeFalse())
	s.g.Expect(checks.requests.Load()).To(gomega.BeZero(), "the refused receiver was asked")
}
