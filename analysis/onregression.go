package analysis

import (
	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
)

// PausesOnRegression says whether the Failed analysis st failed only
// through nodeHealth metrics whose onRegression is Pause: every deciding
// metric in phase Failed is one. Such a canary waits for a person, who
// fails it or validates it, rather than failing at once: a node agent's
// owner may know that what broke the nodes was not the agent. Any other
// failed metric fails the canary as usual, and a dry run decides nothing.
func PausesOnRegression(spec *v1alpha1.CanaryAnalysis, st *v1alpha1.AnalysisStatus) bool {
	if spec == nil || st == nil || st.Phase != v1alpha1.AnalysisFailed || spec.DryRun {
		return false
	}
	byName := make(map[string]v1alpha1.AnalysisMetric, len(spec.Metrics))
	for _, m := range spec.Metrics {
		byName[m.Name] = m
	}
	pausing := 0
	for _, r := range st.Metrics {
		m, ok := byName[r.Name]
		if r.Phase != v1alpha1.AnalysisFailed || !ok || m.DryRun {
			continue
		}
		if m.NodeHealth == nil || m.NodeHealth.OnRegression != v1alpha1.NodeHealthPause {
			return false
		}
		pausing++
	}
	return pausing > 0
}
