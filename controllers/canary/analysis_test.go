package canary

import (
	"testing"
	"time"

	"github.com/onsi/gomega"
	"k8s.io/utils/ptr"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
)

func analysisAt(phase v1alpha1.AnalysisPhase, message string) *v1alpha1.AnalysisStatus {
	return &v1alpha1.AnalysisStatus{Phase: phase, Message: message}
}

// The analysis gates promotion: the duration alone is not enough, a failed
// analysis fails the canary, missing data pauses it, and nothing but a
// person's validation promotes without a successful analysis.
func TestStepIsGatedByTheAnalysis(t *testing.T) {
	analyzed := &v1alpha1.CanaryStrategy{Duration: dur(10 * time.Minute), Analysis: &v1alpha1.CanaryAnalysis{}}
	cases := []struct {
		name       string
		after      time.Duration
		analysis   *v1alpha1.AnalysisStatus
		mutate     func(*Input)
		promote    bool
		failed     bool
		paused     bool
		reason     string
		transition string
	}{
		{name: "no measurement yet", after: 11 * time.Minute, reason: ReasonWaitingForAnalysis},
		{name: "still measuring", after: 11 * time.Minute, analysis: analysisAt(v1alpha1.AnalysisRunning, "1 of 2 metrics successful"), reason: ReasonWaitingForAnalysis},
		{name: "successful but the duration has not elapsed", after: 5 * time.Minute, analysis: analysisAt(v1alpha1.AnalysisSuccessful, "2 metrics successful")},
		{name: "successful after the duration: the verdict is recorded first", after: 11 * time.Minute, analysis: analysisAt(v1alpha1.AnalysisSuccessful, "2 metrics successful"),
			reason: ReasonWaitingForAnalysis},
		{name: "recorded successful after the duration", after: 11 * time.Minute, analysis: analysisAt(v1alpha1.AnalysisSuccessful, "2 metrics successful"),
			mutate:  func(in *Input) { in.Status.Analysis = analysisAt(v1alpha1.AnalysisSuccessful, "2 metrics successful") },
			promote: true, transition: Promoted},
		{name: "failed before the duration", after: time.Minute, analysis: analysisAt(v1alpha1.AnalysisFailed, "error-rate: 0.4 > max 0.01"),
			failed: true, reason: ReasonAnalysisFailed, transition: Failed},
		{name: "errors pause", after: 11 * time.Minute, analysis: analysisAt(v1alpha1.AnalysisError, "connection refused"),
			paused: true, reason: v1alpha1.ReasonAnalysisError, transition: Paused},
		{name: "no data pauses", after: 11 * time.Minute, analysis: analysisAt(v1alpha1.AnalysisInconclusive, "no data"),
			paused: true, reason: v1alpha1.ReasonAnalysisInconclusive, transition: Paused},
		{name: "an unpause does not promote on missing data", after: 11 * time.Minute, analysis: analysisAt(v1alpha1.AnalysisInconclusive, "no data"),
			mutate: func(in *Input) { in.Annotations = map[string]string{v1alpha1.CanaryUnpausedAnnotation: "rs-2"} },
			paused: true, reason: v1alpha1.ReasonAnalysisInconclusive, transition: Paused},
		{name: "data back: resumed", after: 11 * time.Minute, analysis: analysisAt(v1alpha1.AnalysisSuccessful, "ok"),
			mutate: func(in *Input) { in.Status.Paused, in.Status.Reason = true, v1alpha1.ReasonAnalysisError },
			reason: ReasonWaitingForAnalysis, transition: Resumed},
		{name: "a person's validation promotes without the analysis", after: time.Minute, analysis: analysisAt(v1alpha1.AnalysisInconclusive, "no data"),
			mutate:  func(in *Input) { in.Annotations = map[string]string{v1alpha1.CanaryValidatedAnnotation: "rs-2"} },
			promote: true, transition: Promoted},
		{name: "a person's pause holds a failing analysis", after: time.Minute, analysis: analysisAt(v1alpha1.AnalysisFailed, "bad"),
			mutate: func(in *Input) { in.Annotations = map[string]string{v1alpha1.CanaryPausedAnnotation: "true"} },
			paused: true, reason: ReasonPausedByUser, transition: Paused},
		{name: "crashing pods fail first", after: time.Minute, analysis: analysisAt(v1alpha1.AnalysisFailed, "bad"),
			mutate: func(in *Input) {
				s := *in.Strategy
				s.AutoFail = &v1alpha1.CanaryAutoFail{MaxRestarts: ptr.To[int32](1)}
				in.Strategy = &s
				in.Pods[0] = canaryPod("rs-2-x", restarts(3, "CrashLoopBackOff", ""))
			},
			failed: true, reason: "CrashLoopBackOff", transition: Failed},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := gomega.NewWithT(t)
			in := stepInput(tc.after, analyzed)
			in.Analysis = tc.analysis
			if tc.mutate != nil {
				tc.mutate(&in)
			}
			res := expectOutcome(g, in, outcome{tc.promote, tc.failed, tc.paused, tc.reason, tc.transition})
			if tc.analysis != nil && (tc.failed || tc.paused) && tc.reason != ReasonPausedByUser && tc.reason != "CrashLoopBackOff" {
				g.Expect(res.Status.Message).To(gomega.Equal(tc.analysis.Message), "the analysis says why")
			}
		})
	}
}
