package canary

import (
	"github.com/extendeddaemonset/extendeddaemonset/analysis"
	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
)

// Reasons of a canary's state set by its metric analysis.
const (
	// ReasonAnalysisFailed: a metric failed beyond its failureLimit.
	ReasonAnalysisFailed = v1alpha1.ReasonAnalysisFailed
	// ReasonWaitingForAnalysis: the duration has elapsed, the analysis has
	// not succeeded yet.
	ReasonWaitingForAnalysis = "WaitingForAnalysis"
)

// nodeHealthNext is what a person does with a canary paused by a node-health
// regression. Unpausing is not among them: the analysis stays Failed, so
// the canary could never be promoted by itself again.
const nodeHealthNext = "node health regressed on the canary nodes and onRegression is Pause: " +
	"fail the canary to send its nodes back to the active template, or validate it to promote the version anyway; "

// analysisVerdict is what the metric analysis calls for: a failed analysis
// fails the canary, unless only nodeHealth metrics with onRegression Pause
// failed, which pauses it for a person to fail or validate (it is never
// promoted by itself: the analysis stays Failed); an analysis that cannot
// conclude (no data, Prometheus unreachable) pauses it, since promoting on
// missing data is exactly what an analysis is there to prevent. A person's
// pause holds the canary where it is, so the analysis then decides nothing.
func analysisVerdict(in Input) Verdict {
	a := in.Analysis
	if in.Strategy.Analysis == nil || a == nil || pausedByUser(in) {
		return Verdict{}
	}
	switch a.Phase {
	case v1alpha1.AnalysisFailed:
		if analysis.PausesOnRegression(in.Strategy.Analysis, a) {
			return Verdict{Pause, v1alpha1.ReasonNodeHealthRegressed, nodeHealthNext + a.Message}
		}
		return Verdict{Fail, ReasonAnalysisFailed, a.Message}
	case v1alpha1.AnalysisError:
		return Verdict{Pause, v1alpha1.ReasonAnalysisError, a.Message}
	case v1alpha1.AnalysisInconclusive:
		return Verdict{Pause, v1alpha1.ReasonAnalysisInconclusive, a.Message}
	default:
		return Verdict{}
	}
}

// analysisPending says why an auto canary whose duration has elapsed still
// waits for its analysis, empty when it has none or it succeeded.
func analysisPending(in Input) string {
	switch a := in.Analysis; {
	case in.Strategy.Analysis == nil:
		return ""
	case a == nil || a.Phase == "" || a.Phase == v1alpha1.AnalysisPending:
		return "the canary duration has elapsed; waiting for the first measurement of every metric"
	case a.Phase != v1alpha1.AnalysisSuccessful:
		return "the canary duration has elapsed; waiting for the analysis to succeed: " + a.Message
	}
	return ""
}
