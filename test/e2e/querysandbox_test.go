package e2e

import (
	"testing"
	"time"

	"github.com/onsi/gomega"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
)

// spinningQuery would loop three billion times if the template were run
// as Go's text/template runs it.
const spinningQuery = "{{range 3000000000}}{{end}}vector(0)"

// invalidSpecWithin is how soon after the canary starts a spec error must
// show: the template is refused before any query, not after a measurement
// times out.
const invalidSpecWithin = 30 * time.Second

// A canary analysis metric whose query template would spin is refused
// before anything is asked of Prometheus: within seconds the
// ExtendedDaemonSet is Stalled with InvalidSpec naming the metric and the
// refused action, its analysis in Error, and the canary is not promoted
// past its duration. Meanwhile the controller rolls another
// ExtendedDaemonSet out: no worker is held. With the query fixed, the
// analysis measures and the canary is promoted.
func TestSpinningQueryTemplateStallsWithoutHanging(t *testing.T) {
	s := newScenario(t)
	m := s.startMetrics()
	nodes := s.nodeNames()
	other := s.create(agentEDS(s.ns, "other", "v1"))
	spinning := v1alpha1.AnalysisMetric{Name: "spinning", Query: spinningQuery, ThresholdRange: &v1alpha1.ThresholdRange{Max: ptr.To(1.0)}}
	asked := m.queriesAnswered(s.g)
	duration := 10 * time.Second
	c := s.startAnalyzedCanary(duration, m.analysisOf(spinning))

	stalled, latest := s.expectStalled(c.eds, v1alpha1.ReasonInvalidSpec, "metric spinning", "{{range ...}} is not allowed")
	startedAt := latest.Status.Canary.StartedAt.Time
	s.g.Expect(stalled.LastTransitionTime.Time).To(gomega.BeTemporally("<=", startedAt.Add(invalidSpecWithin)))
	s.t.Logf("Stalled %s after the canary started: %s", stalled.LastTransitionTime.Sub(startedAt), stalled.Message)
	// The first measurement is due after the analysis' initialDelay; the
	// metric is in Error from that one on, not after consecutiveErrorLimit.
	errored := s.expectAnalysisWithin(c, v1alpha1.AnalysisError, metav1.ConditionFalse, time.Until(startedAt.Add(invalidSpecWithin)))
	s.g.Expect(errored.Status.Canary.Analysis.Metrics).To(gomega.ConsistOf(gomega.And(
		gomega.HaveField("Name", spinning.Name), gomega.HaveField("Phase", v1alpha1.AnalysisError),
		gomega.HaveField("Message", gomega.ContainSubstring("{{range ...}} is not allowed")))))

	s.expectRolledOut(other, "v1", nodes)
	s.update(other, func(e *v1alpha1.ExtendedDaemonSet) { setVersion(e, "v2") })
	s.expectRolledOut(other, "v2", nodes)

	hold := max(holdWindow, time.Until(startedAt.Add(duration+holdWindow)))
	s.expectPodsKept(c.eds, hold, func(g gomega.Gomega) {
		latest := s.get(c.eds)
		g.Expect(latest.Status.ActiveReplicaSet).NotTo(gomega.Equal(c.replicaSet), "promoted")
		g.Expect(apimeta.FindStatusCondition(latest.Status.Conditions, v1alpha1.StalledCondition)).To(
			gomega.HaveField("Reason", v1alpha1.ReasonInvalidSpec))
		g.Expect(m.queriesAnswered(g)).To(gomega.Equal(asked), "Prometheus was queried")
	})

	s.update(c.eds, func(e *v1alpha1.ExtendedDaemonSet) { e.Spec.Strategy.Canary.Analysis.Metrics[0].Query = "vector(0)" })
	s.expectPromoted(c.eds, "v2", nodes, c.replicaSet)
	s.g.Expect(m.queriesAnswered(s.g)).To(gomega.BeNumerically(">", asked), "the fixed query was measured")
}
