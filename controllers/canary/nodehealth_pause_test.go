package canary

import (
	"strings"
	"testing"
	"time"

	"github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
)

// nodeHealthAnalyzed is a canary judged by a nodeHealth metric that
// pauses on a regression, one that fails, and a query.
func nodeHealthAnalyzed() *v1alpha1.CanaryStrategy {
	return &v1alpha1.CanaryStrategy{Duration: dur(10 * time.Minute), Analysis: &v1alpha1.CanaryAnalysis{Metrics: []v1alpha1.AnalysisMetric{
		{Name: "node-health", NodeHealth: &v1alpha1.NodeHealthMetric{OnRegression: v1alpha1.NodeHealthPause}},
		{Name: "node-conditions", NodeHealth: &v1alpha1.NodeHealthMetric{OnRegression: v1alpha1.NodeHealthFail}},
		{Name: "errors", Query: "q"},
	}}}
}

// failedBy is a Failed analysis whose named metrics failed, the others
// successful.
func failedBy(names ...string) *v1alpha1.AnalysisStatus {
	st := &v1alpha1.AnalysisStatus{Phase: v1alpha1.AnalysisFailed, Message: "node-health: regressed: 1 of 1 node turned unhealthy; on node-01: Ready=False"}
	for _, m := range []string{"node-health", "node-conditions", "errors"} {
		phase := v1alpha1.AnalysisSuccessful
		for _, n := range names {
			if n == m {
				phase = v1alpha1.AnalysisFailed
			}
		}
		st.Metrics = append(st.Metrics, v1alpha1.MetricResult{Name: m, Phase: phase})
	}
	return st
}

// A node-health regression with onRegression Pause pauses the canary for a
// person, who fails it or validates it; it never promotes by itself, and
// any other failed metric fails the canary as usual.
func TestStepPausesOnANodeHealthRegression(t *testing.T) {
	steering := func(annotation, value string) func(*Input) {
		return func(in *Input) { in.Annotations = map[string]string{annotation: value} }
	}
	cases := []struct {
		name     string
		after    time.Duration
		analysis *v1alpha1.AnalysisStatus
		mutate   func(*Input)
		want     outcome
	}{
		{name: "only a Pause-mode nodeHealth metric failed: paused", after: time.Minute, analysis: failedBy("node-health"),
			want: outcome{paused: true, reason: v1alpha1.ReasonNodeHealthRegressed, transition: Paused}},
		{name: "past its duration, all pods ready, it still waits", after: time.Hour, analysis: failedBy("node-health"),
			want: outcome{paused: true, reason: v1alpha1.ReasonNodeHealthRegressed, transition: Paused}},
		{name: "already paused: no new transition", after: 2 * time.Minute, analysis: failedBy("node-health"),
			mutate: func(in *Input) { in.Status.Paused, in.Status.Reason = true, v1alpha1.ReasonNodeHealthRegressed },
			want:   outcome{paused: true, reason: v1alpha1.ReasonNodeHealthRegressed}},
		{name: "a Fail-mode nodeHealth metric failed too: failed", after: time.Minute, analysis: failedBy("node-health", "node-conditions"),
			want: outcome{failed: true, reason: ReasonAnalysisFailed, transition: Failed}},
		{name: "another metric failed too: failed", after: time.Minute, analysis: failedBy("node-health", "errors"),
			want: outcome{failed: true, reason: ReasonAnalysisFailed, transition: Failed}},
		{name: "a person validates: promoted", after: time.Minute, analysis: failedBy("node-health"),
			mutate: steering(v1alpha1.CanaryValidatedAnnotation, "rs-2"), want: outcome{promote: true, transition: Promoted}},
		{name: "a person fails it: failed", after: time.Minute, analysis: failedBy("node-health"),
			mutate: steering(v1alpha1.CanaryFailedAnnotation, "rs-2"), want: outcome{failed: true, reason: ReasonManual, transition: Failed}},
		{name: "an unpause does not lift it: the analysis stays Failed", after: time.Hour, analysis: failedBy("node-health"),
			mutate: steering(v1alpha1.CanaryUnpausedAnnotation, "rs-2"),
			want:   outcome{paused: true, reason: v1alpha1.ReasonNodeHealthRegressed, transition: Paused}},
		{name: "canaryTimeout still fails it", after: time.Hour, analysis: failedBy("node-health"),
			mutate: func(in *Input) {
				s := *in.Strategy
				s.AutoFail = &v1alpha1.CanaryAutoFail{CanaryTimeout: dur(30 * time.Minute)}
				in.Strategy = &s
			},
			want: outcome{failed: true, reason: ReasonTimeoutExceeded, transition: Failed}},
		{name: "a dry-run analysis decides nothing", after: time.Minute, analysis: &v1alpha1.AnalysisStatus{Phase: v1alpha1.AnalysisSuccessful},
			mutate: func(in *Input) {
				s := *in.Strategy
				s.Analysis = s.Analysis.DeepCopy()
				s.Analysis.DryRun = true
				in.Strategy = &s
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := gomega.NewWithT(t)
			in := stepInput(tc.after, nodeHealthAnalyzed())
			in.Analysis = tc.analysis
			if tc.mutate != nil {
				tc.mutate(&in)
			}
			res := expectOutcome(g, in, tc.want)
			if tc.want.reason == v1alpha1.ReasonNodeHealthRegressed {
				g.Expect(res.Status.Message).To(gomega.HavePrefix("node health regressed on the canary nodes and onRegression is Pause: fail the canary"))
				g.Expect(res.Status.Message).To(gomega.HaveSuffix(tc.analysis.Message), "the analysis names the nodes")
			}
		})
	}
}

// At a step that is not the last, a person's skip goes on to the next
// step, whose nodes are judged anew by an analysis of their own; it never
// promotes.
func TestSkipStepPastANodeHealthPause(t *testing.T) {
	g := gomega.NewWithT(t)
	s := nodeHealthAnalyzed()
	s.Duration = nil
	s.Steps = []v1alpha1.CanaryStep{
		{Replicas: intstr.FromInt32(1), Duration: dur(10 * time.Minute)},
		{Replicas: intstr.FromInt32(2), Duration: dur(10 * time.Minute)},
	}
	in := stepInput(time.Minute, s)
	in.Analysis = failedBy("node-health")
	res, err := Step(in)
	g.Expect(err).NotTo(gomega.HaveOccurred())
	g.Expect(res.Status.Reason).To(gomega.Equal(v1alpha1.ReasonNodeHealthRegressed))
	in.Status = res.Status
	in.Annotations = map[string]string{v1alpha1.CanarySkipStepAnnotation: "1"}
	res = expectOutcome(g, in, outcome{transition: StepStarted})
	g.Expect(res.Status.Step).To(gomega.Equal(int32(2)))
	g.Expect(res.Status.Analysis).To(gomega.BeNil(), "the next step's analysis starts over")
	g.Expect(strings.Join(res.Status.Nodes, ",")).To(gomega.Equal("node-00,node-01"))
}
