package analysis

import (
	"testing"
	"time"

	"github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/extendeddaemonset/extendeddaemonset/analysis"
	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
)

// A Prometheus that stops answering makes the analysis Error at once with
// consecutiveErrorLimit 0, saying why; once it answers again the next step
// is Successful, with the error kept in the history and the run of errors
// over.
func TestPrometheusOutage(t *testing.T) {
	t.Parallel()
	g := gomega.NewWithT(t)
	const namespace = "outage"
	serve(namespace, "canary", 10, 0.01)
	startedAt := time.Now()
	srv, q := ownPrometheus(t, app.Addr())

	spec := &v1alpha1.CanaryAnalysis{
		Provider:              v1alpha1.AnalysisProvider{Prometheus: &v1alpha1.PrometheusProvider{Address: srv.URL()}},
		Interval:              &metav1.Duration{Duration: time.Second},
		ConsecutiveErrorLimit: ptr.To[int32](0),
		Metrics:               []v1alpha1.AnalysisMetric{errorRateMetric(0.05)},
	}
	s := stepper{t: t, analyzer: analysis.Analyzer{Querier: q}, spec: spec, target: canaryOf(namespace, "canary"), startedAt: startedAt}

	up := s.next(nil, v1alpha1.AnalysisSuccessful)

	g.Expect(srv.Stop()).To(gomega.Succeed())
	down := s.next(up, v1alpha1.AnalysisError)
	g.Expect(down.Message).To(gomega.ContainSubstring("connection refused"))
	g.Expect(down.Metrics[0].ConsecutiveError).To(gomega.Equal(int32(1)))

	g.Expect(srv.Start(t.Context())).To(gomega.Succeed())
	back := s.next(down, v1alpha1.AnalysisSuccessful)
	result := back.Metrics[0]
	g.Expect([]int32{result.Count, result.Successful, result.Error, result.ConsecutiveError}).To(gomega.Equal([]int32{3, 2, 1, 0}),
		"count, successful, error and consecutive errors of %+v", result)
	phases := make([]v1alpha1.AnalysisPhase, 0, len(result.Measurements))
	for _, m := range result.Measurements {
		phases = append(phases, m.Phase)
	}
	g.Expect(phases).To(gomega.Equal([]v1alpha1.AnalysisPhase{
		v1alpha1.AnalysisSuccessful, v1alpha1.AnalysisError, v1alpha1.AnalysisSuccessful,
	}))
	g.Expect(result.Measurements[1].Message).To(gomega.ContainSubstring("connection refused"))
}

// stepper runs the reconciles of one canary's analysis.
type stepper struct {
	t         *testing.T
	analyzer  analysis.Analyzer
	spec      *v1alpha1.CanaryAnalysis
	target    analysis.Target
	startedAt time.Time
}

// next steps from st until a step takes a measurement and leaves the
// analysis in phase want, and returns that status. A step that measures
// nothing yet (the interval has not elapsed) or gives another phase (no
// samples yet) is dropped, as if it had not happened.
func (s stepper) next(st *v1alpha1.AnalysisStatus, want v1alpha1.AnalysisPhase) *v1alpha1.AnalysisStatus {
	s.t.Helper()
	var count int32
	if st != nil {
		count = st.Metrics[0].Count
	}
	var out *v1alpha1.AnalysisStatus
	gomega.NewWithT(s.t).Eventually(func(g gomega.Gomega) {
		out, _ = s.analyzer.Step(s.t.Context(), s.spec, st, s.target, s.startedAt, time.Now())
		g.Expect(out.Metrics[0].Count).To(gomega.Equal(count+1), "no measurement was due")
		g.Expect(out.Phase).To(gomega.Equal(want), out.Message)
	}).WithTimeout(eventually).WithPolling(poll).Should(gomega.Succeed())
	return out
}
