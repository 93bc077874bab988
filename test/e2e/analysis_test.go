package e2e

import (
	"testing"
	"time"

	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
	"github.com/extendeddaemonset/extendeddaemonset/test/argocd"
	"github.com/extendeddaemonset/extendeddaemonset/test/invariants"
)

// analyzedCanary is a canary under metric analysis, as first seen running.
type analyzedCanary struct {
	eds        *v1alpha1.ExtendedDaemonSet
	replicaSet string
	nodes      []string
	// stable are the UIDs of the stable pods off the canary nodes.
	stable map[types.UID]string
}

// startAnalyzedCanary rolls v1 out with a canary strategy judged by
// analysis, then changes the template to v2 and waits for the canary to run
// on its two nodes.
func (s *scenario) startAnalyzedCanary(duration time.Duration, analysis *v1alpha1.CanaryAnalysis) *analyzedCanary {
	s.t.Helper()
	eds := agentEDS(s.ns, "agent", "v1")
	eds.Spec.Strategy.Canary = &v1alpha1.CanaryStrategy{
		Replicas: ptr.To(intstr.FromInt32(2)), Duration: &metav1.Duration{Duration: duration}, Analysis: analysis,
	}
	s.create(eds)
	s.expectRolledOut(eds, "v1", s.nodeNames())
	s.update(eds, func(e *v1alpha1.ExtendedDaemonSet) { setVersion(e, "v2") })
	c := &analyzedCanary{eds: eds, stable: map[types.UID]string{}}
	s.g.Eventually(func(g gomega.Gomega) {
		latest := s.get(eds)
		g.Expect(latest.Status.Canary).NotTo(gomega.BeNil())
		g.Expect(latest.Status.Canary.Nodes).To(gomega.HaveLen(2))
		c.replicaSet, c.nodes = latest.Status.Canary.ReplicaSet, latest.Status.Canary.Nodes
		for _, node := range c.nodes {
			pod := s.livePodOn(g, eds, node)
			g.Expect(pod.Labels[v1alpha1.ExtendedDaemonSetReplicaSetNameLabel]).To(gomega.Equal(c.replicaSet))
		}
	}).WithTimeout(rolloutTimeout).WithPolling(pollInterval).Should(gomega.Succeed())
	for _, pod := range s.pods(s.g, eds) {
		if pod.Labels[v1alpha1.ExtendedDaemonSetReplicaSetNameLabel] != c.replicaSet && pod.DeletionTimestamp == nil {
			c.stable[pod.UID] = pod.Spec.NodeName
		}
	}
	return c
}

// expectAnalysis waits until the analysis of the running canary reaches
// phase, checking the conditions that go with it, and returns the status.
func (s *scenario) expectAnalysis(c *analyzedCanary, phase v1alpha1.AnalysisPhase, conditionStatus metav1.ConditionStatus) *v1alpha1.ExtendedDaemonSet {
	s.t.Helper()
	return s.expectAnalysisWithin(c, phase, conditionStatus, rolloutTimeout)
}

// expectAnalysisWithin is expectAnalysis for a phase that must come
// within timeout.
func (s *scenario) expectAnalysisWithin(c *analyzedCanary, phase v1alpha1.AnalysisPhase, conditionStatus metav1.ConditionStatus,
	timeout time.Duration,
) *v1alpha1.ExtendedDaemonSet {
	s.t.Helper()
	var latest *v1alpha1.ExtendedDaemonSet
	s.g.Eventually(func(g gomega.Gomega) {
		latest = s.get(c.eds)
		g.Expect(latest.Status.Canary).NotTo(gomega.BeNil())
		g.Expect(latest.Status.Canary.ReplicaSet).To(gomega.Equal(c.replicaSet))
		g.Expect(latest.Status.Canary.Analysis).NotTo(gomega.BeNil())
		g.Expect(latest.Status.Canary.Analysis.Phase).To(gomega.Equal(phase), latest.Status.Canary.Analysis.Message)
		cond := apimeta.FindStatusCondition(latest.Status.Conditions, v1alpha1.AnalysisCondition)
		g.Expect(cond).NotTo(gomega.BeNil())
		g.Expect(cond.Status).To(gomega.Equal(conditionStatus))
		g.Expect(cond.Reason).To(gomega.Equal("Analysis" + string(phase)))
		g.Expect(cond.ObservedGeneration).To(gomega.Equal(latest.Generation))
	}).WithTimeout(timeout).WithPolling(pollInterval).Should(gomega.Succeed())
	return latest
}

// expectFailedByAnalysis waits for the canary to fail on its analysis and
// checks what a person and a GitOps tool see: Stalled with the metric in the
// message, the spec untouched, the canary nodes back on v1, and the stable
// pods never touched.
func (s *scenario) expectFailedByAnalysis(c *analyzedCanary, written *v1alpha1.ExtendedDaemonSet, mentions ...string) {
	s.t.Helper()
	s.g.Eventually(func(g gomega.Gomega) {
		latest := s.get(c.eds)
		g.Expect(latest.Status.Canary).NotTo(gomega.BeNil())
		g.Expect(latest.Status.Canary.Failed).To(gomega.BeTrue())
		g.Expect(latest.Status.Canary.Reason).To(gomega.Equal(v1alpha1.ReasonAnalysisFailed))
		stalled := apimeta.FindStatusCondition(latest.Status.Conditions, v1alpha1.StalledCondition)
		g.Expect(stalled).NotTo(gomega.BeNil())
		g.Expect(stalled.Reason).To(gomega.Equal(v1alpha1.ReasonCanaryFailed))
		for _, m := range mentions {
			g.Expect(stalled.Message).To(gomega.ContainSubstring(m))
		}
		g.Expect(kstatusOf(g, latest).Status).To(gomega.Equal(status.FailedStatus))
		health, _ := argoHealthOf(g, latest)
		g.Expect(health).To(gomega.Equal(argocd.Degraded))
		g.Expect(apimeta.FindStatusCondition(latest.Status.Conditions, v1alpha1.AnalysisCondition)).To(gomega.And(
			gomega.HaveField("Status", metav1.ConditionFalse), gomega.HaveField("Reason", v1alpha1.ReasonAnalysisFailed)))
	}).WithTimeout(rolloutTimeout).WithPolling(pollInterval).Should(gomega.Succeed())
	s.expectWarning(c.eds, "CanaryFailed", c.replicaSet)
	s.expectWarning(c.eds, v1alpha1.ReasonAnalysisFailed, c.replicaSet)

	after := s.get(c.eds)
	s.g.Expect(specJSON(s.g, after)).To(gomega.Equal(specJSON(s.g, written)), "the controller modified the spec")
	s.g.Expect(after.Generation).To(gomega.Equal(written.Generation))
	s.g.Eventually(func(g gomega.Gomega) {
		live := map[types.UID]string{}
		for _, pod := range s.pods(g, c.eds) {
			if pod.DeletionTimestamp != nil {
				continue
			}
			g.Expect(pod.Spec.Containers[0].Image).To(gomega.Equal(agentImage("v1")), "pod on %s", pod.Spec.NodeName)
			g.Expect(invariants.RunningAndReady(&pod)).To(gomega.BeTrue())
			live[pod.UID] = pod.Spec.NodeName
		}
		for uid, node := range c.stable {
			g.Expect(live).To(gomega.HaveKeyWithValue(uid, node), "stable pod on %s was replaced", node)
		}
		g.Expect(live).To(gomega.HaveLen(len(c.stable) + len(c.nodes)))
	}).WithTimeout(rolloutTimeout).WithPolling(pollInterval).Should(gomega.Succeed())
}

// A healthy canary passes every measurement and is promoted once its
// duration has elapsed; the status shows what was asked of Prometheus.
func TestAnalysisHealthyCanaryPromotes(t *testing.T) {
	s := newScenario(t)
	m := s.startMetrics()
	m.setTraffic(func(*corev1.Pod) map[string]float64 { return requests(10, 0) })
	restarts := v1alpha1.AnalysisMetric{Name: "restarts", Preset: v1alpha1.MetricPresetRestarts}
	analysis := m.analysisOf(restarts, errorRateMetric("error-rate", 0.05))
	analysis.InconclusiveLimit = ptr.To[int32](2)
	queriesBefore := m.queriesAnswered(s.g)
	c := s.startAnalyzedCanary(15*time.Second, analysis)

	latest := s.expectAnalysis(c, v1alpha1.AnalysisSuccessful, metav1.ConditionTrue)
	s.g.Expect(latest.Status.ActiveReplicaSet).NotTo(gomega.Equal(c.replicaSet), "promoted before its duration")
	results := latest.Status.Canary.Analysis.Metrics
	s.g.Expect(results).To(gomega.HaveLen(2))
	for _, r := range results {
		s.g.Expect(r.Measurements).NotTo(gomega.BeEmpty())
		newest := r.Measurements[len(r.Measurements)-1]
		s.g.Expect(newest.Phase).To(gomega.Equal(v1alpha1.AnalysisSuccessful), "%s: %s", r.Name, newest.Message)
		s.g.Expect(newest.Query).To(gomega.ContainSubstring(s.ns), "the resolved query names the namespace")
		s.g.Expect(newest.Query).To(gomega.ContainSubstring(c.replicaSet), "the resolved query names the canary pods")
	}
	s.expectEvent(c.eds, v1alpha1.ReasonAnalysisSuccessful, c.replicaSet)

	_, active := s.expectRolledOut(c.eds, "v2", s.nodeNames())
	s.g.Expect(active.Name).To(gomega.Equal(c.replicaSet))
	s.expectEvent(c.eds, "CanaryPromoted", c.replicaSet)
	s.g.Expect(s.eventCount(c.eds, "CanaryStarted")).To(gomega.Equal(1), "a transition is told once")
	s.g.Expect(s.eventCount(c.eds, v1alpha1.ReasonAnalysisSuccessful)).To(gomega.Equal(1), "a transition is told once")
	s.t.Logf("Prometheus answered %d queries for one canary", m.queriesAnswered(s.g)-queriesBefore)
}

// An error rate rising on the canary pods alone fails the canary with the
// metric, its value and threshold in the message; the stable pods are
// never touched.
func TestAnalysisErrorRateFailsTheCanary(t *testing.T) {
	s := newScenario(t)
	m := s.startMetrics()
	m.setTraffic(func(*corev1.Pod) map[string]float64 { return requests(10, 0) })
	analysis := m.analysisOf(errorRateMetric("error-rate", 0.05))
	analysis.FailureLimit = ptr.To[int32](1)
	analysis.InconclusiveLimit = ptr.To[int32](2)
	c := s.startAnalyzedCanary(5*time.Minute, analysis)
	written := s.get(c.eds)
	s.expectAnalysis(c, v1alpha1.AnalysisSuccessful, metav1.ConditionTrue)

	m.setTraffic(ofReplicaSet(c.replicaSet, requests(10, 0.5), requests(10, 0)))
	s.expectFailedByAnalysis(c, written, "error-rate", "max 0.05")
}

// A canary three times worse than the stable pods fails on the baseline
// comparison, where the absolute threshold alone would pass it.
func TestAnalysisBaselineCatchesAWorseCanary(t *testing.T) {
	s := newScenario(t)
	m := s.startMetrics()
	m.setTraffic(func(*corev1.Pod) map[string]float64 { return requests(20, 0.01) })
	absolute := errorRateMetric("error-rate-absolute", 0.05)
	compared := errorRateMetric("error-rate-vs-baseline", 0.05)
	compared.Baseline = &v1alpha1.BaselineComparison{MaxRelativeIncrease: ptr.To(100.0)}
	analysis := m.analysisOf(absolute, compared)
	analysis.InconclusiveLimit = ptr.To[int32](2)
	c := s.startAnalyzedCanary(5*time.Minute, analysis)
	written := s.get(c.eds)
	m.setTraffic(ofReplicaSet(c.replicaSet, requests(20, 0.03), requests(20, 0.01)))

	s.expectFailedByAnalysis(c, written, "error-rate-vs-baseline", "baseline")
	final := s.get(c.eds).Status.Canary.Analysis
	for _, r := range final.Metrics {
		newest := r.Measurements[len(r.Measurements)-1]
		switch r.Name {
		case absolute.Name:
			s.g.Expect(newest.Phase).To(gomega.Equal(v1alpha1.AnalysisSuccessful), "the absolute threshold passes a 3%% error rate: %s", newest.Message)
		case compared.Name:
			s.g.Expect(newest.Phase).To(gomega.Equal(v1alpha1.AnalysisFailed))
			s.g.Expect(newest.BaselineValue).NotTo(gomega.BeEmpty())
			s.g.Expect(newest.Query).To(gomega.ContainSubstring("baseline"))
		}
	}
}

// With Prometheus gone the analysis cannot conclude: the canary pauses and
// is not promoted past its duration; once Prometheus is back, measuring
// resumes and the canary is promoted.
func TestAnalysisPrometheusDownPausesThenResumes(t *testing.T) {
	s := newScenario(t)
	m := s.startMetrics()
	m.setTraffic(func(*corev1.Pod) map[string]float64 { return requests(10, 0) })
	analysis := m.analysisOf(errorRateMetric("error-rate", 0.05))
	analysis.ConsecutiveErrorLimit = ptr.To[int32](0)
	analysis.InconclusiveLimit = ptr.To[int32](2)
	duration := 12 * time.Second
	c := s.startAnalyzedCanary(duration, analysis)
	s.expectAnalysis(c, v1alpha1.AnalysisSuccessful, metav1.ConditionTrue)

	s.g.Expect(m.prom.Stop()).To(gomega.Succeed())
	latest := s.expectAnalysis(c, v1alpha1.AnalysisError, metav1.ConditionFalse)
	s.g.Expect(latest.Status.Canary.Paused).To(gomega.BeTrue())
	s.g.Expect(latest.Status.Canary.Reason).To(gomega.Equal(v1alpha1.ReasonAnalysisError))
	s.g.Expect(apimeta.FindStatusCondition(latest.Status.Conditions, v1alpha1.ReconcilingCondition)).To(
		gomega.HaveField("Reason", v1alpha1.ReasonCanaryPaused))
	s.g.Expect(kstatusOf(s.g, latest).Status).To(gomega.Equal(status.InProgressStatus))
	health, message := argoHealthOf(s.g, latest)
	s.g.Expect(health).To(gomega.Equal(argocd.Suspended), message)
	s.g.Expect(message).To(gomega.ContainSubstring("connection refused"), "Argo CD shows why")
	s.expectWarning(c.eds, v1alpha1.ReasonAnalysisError, c.replicaSet)

	// Past the duration, still no promotion on missing data.
	pastDuration := time.Until(latest.Status.Canary.StartedAt.Add(duration)) + holdWindow
	s.g.Consistently(func(g gomega.Gomega) {
		latest := s.get(c.eds)
		g.Expect(latest.Status.ActiveReplicaSet).NotTo(gomega.Equal(c.replicaSet), "promoted without the analysis")
		g.Expect(latest.Status.Canary).NotTo(gomega.BeNil())
		g.Expect(latest.Status.Canary.Paused).To(gomega.BeTrue())
	}).WithTimeout(max(pastDuration, holdWindow)).WithPolling(pollInterval).Should(gomega.Succeed())

	s.g.Expect(m.prom.Start(s.ctx)).To(gomega.Succeed())
	_, active := s.expectRolledOut(c.eds, "v2", s.nodeNames())
	s.g.Expect(active.Name).To(gomega.Equal(c.replicaSet))
	// The first measurement after the return succeeds; past its duration,
	// the canary is promoted at once, without a separate resume.
	s.expectEvent(c.eds, v1alpha1.ReasonAnalysisSuccessful, c.replicaSet)
	s.expectEvent(c.eds, "CanaryPromoted", c.replicaSet)
}

// eventCount is the number of events of reason the controller reported
// about obj, repeats of one event included.
func (s *scenario) eventCount(obj client.Object, reason string) int {
	s.t.Helper()
	n := 0
	for _, ev := range s.controllerEvents(s.g, obj) {
		if ev.Reason == reason {
			n++
			if ev.Series != nil {
				n += int(ev.Series.Count) - 1
			}
		}
	}
	return n
}
