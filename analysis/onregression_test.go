package analysis

import (
	"testing"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
)

func TestPausesOnRegression(t *testing.T) {
	spec := func(mutate func(*v1alpha1.CanaryAnalysis)) *v1alpha1.CanaryAnalysis {
		s := &v1alpha1.CanaryAnalysis{Metrics: []v1alpha1.AnalysisMetric{
			{Name: "pause", NodeHealth: &v1alpha1.NodeHealthMetric{OnRegression: v1alpha1.NodeHealthPause}},
			{Name: "pause-too", NodeHealth: &v1alpha1.NodeHealthMetric{OnRegression: v1alpha1.NodeHealthPause}},
			{Name: "fail", NodeHealth: &v1alpha1.NodeHealthMetric{OnRegression: v1alpha1.NodeHealthFail}},
			{Name: "default", NodeHealth: &v1alpha1.NodeHealthMetric{}},
			{Name: "query", Query: "q", ThresholdRange: maxRange(1)},
		}}
		if mutate != nil {
			mutate(s)
		}
		return s
	}
	failed := func(names ...string) *v1alpha1.AnalysisStatus {
		st := &v1alpha1.AnalysisStatus{Phase: F}
		for _, n := range names {
			st.Metrics = append(st.Metrics, v1alpha1.MetricResult{Name: n, Phase: F})
		}
		return st
	}
	cases := []struct {
		name string
		spec *v1alpha1.CanaryAnalysis
		st   *v1alpha1.AnalysisStatus
		want bool
	}{
		{"one Pause-mode metric failed", spec(nil), failed("pause"), true},
		{"two Pause-mode metrics failed", spec(nil), failed("pause", "pause-too"), true},
		{"a Fail-mode metric failed too", spec(nil), failed("pause", "fail"), false},
		{"onRegression unset is Fail", spec(nil), failed("default"), false},
		{"a query failed too", spec(nil), failed("pause", "query"), false},
		{"a dry-run query failed too", spec(func(s *v1alpha1.CanaryAnalysis) { s.Metrics[4].DryRun = true }), failed("pause", "query"), true},
		{"only a dry-run Pause-mode metric failed", spec(func(s *v1alpha1.CanaryAnalysis) { s.Metrics[0].DryRun = true }), failed("pause"), false},
		{"not Failed", spec(nil), &v1alpha1.AnalysisStatus{Phase: I, Metrics: []v1alpha1.MetricResult{{Name: "pause", Phase: I}}}, false},
		{"a dry-run analysis", spec(func(s *v1alpha1.CanaryAnalysis) { s.DryRun = true }), failed("pause"), false},
		{"no status", spec(nil), nil, false},
		{"no spec", nil, failed("pause"), false},
	}
	for _, c := range cases {
		if got := PausesOnRegression(c.spec, c.st); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}
