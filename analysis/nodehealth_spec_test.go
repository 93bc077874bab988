package analysis

import (
	"errors"
	"strings"
	"testing"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
)

// A nodeHealth metric that can never be measured is a spec error, found
// before any observation: the CRD refuses these, a spec written around it
// gets the same answer.
func TestCheckMetricsRefusesBrokenNodeHealthMetrics(t *testing.T) {
	valid := func() v1alpha1.AnalysisMetric {
		return nodeHealthMetric(v1alpha1.NodeHealthMetric{Conditions: []string{"KernelDeadlock"}, OnRegression: v1alpha1.NodeHealthPause})
	}
	cases := []struct {
		name   string
		change func(*v1alpha1.AnalysisMetric)
		want   string
	}{
		{"query too", func(m *v1alpha1.AnalysisMetric) { m.Query = "up" }, "set exactly one"},
		{"preset too", func(m *v1alpha1.AnalysisMetric) { m.Preset = v1alpha1.MetricPresetRestarts }, "set exactly one"},
		{"web too", func(m *v1alpha1.AnalysisMetric) { m.Web = &v1alpha1.WebMetric{JSONPath: "{.x}"} }, "set exactly one"},
		{"thresholdRange", func(m *v1alpha1.AnalysisMetric) { m.ThresholdRange = maxRange(1) }, "thresholdRange and baseline do not apply"},
		{"baseline", func(m *v1alpha1.AnalysisMetric) {
			m.Baseline = &v1alpha1.BaselineComparison{MaxRelativeIncrease: new(10.0)}
		}, "thresholdRange and baseline do not apply"},
		{"errorRate", func(m *v1alpha1.AnalysisMetric) { m.ErrorRate = &v1alpha1.ErrorRatePreset{} }, "only used with preset errorRate"},
		{"negative maxUnhealthyNodes", func(m *v1alpha1.AnalysisMetric) { m.NodeHealth.MaxUnhealthyNodes = ptr[int32](-1) }, "maxUnhealthyNodes -1"},
		{"maxPodReadinessDrop over 100", func(m *v1alpha1.AnalysisMetric) { m.NodeHealth.MaxPodReadinessDrop = ptr[int32](101) }, "maxPodReadinessDrop 101"},
		{"unknown onRegression", func(m *v1alpha1.AnalysisMetric) { m.NodeHealth.OnRegression = "Rollback" }, `onRegression "Rollback": use Fail or Pause`},
		{"empty condition", func(m *v1alpha1.AnalysisMetric) { m.NodeHealth.Conditions = []string{""} }, "condition type is empty"},
	}
	for _, c := range cases {
		m := valid()
		c.change(&m)
		err := CheckMetrics(&v1alpha1.CanaryAnalysis{Metrics: []v1alpha1.AnalysisMetric{m}})
		var specErr *SpecError
		if !errors.As(err, &specErr) || !strings.Contains(err.Error(), c.want) || specErr.Metric != "node-health" {
			t.Errorf("%s: got %v, want a spec error with %q", c.name, err, c.want)
		}
		if got := MeasureNodeHealth(m, healthyInput, t0); got.Phase != v1alpha1.AnalysisError || !strings.Contains(got.Message, c.want) {
			t.Errorf("%s: measured %+v", c.name, got)
		}
	}
	if err := CheckMetrics(&v1alpha1.CanaryAnalysis{Metrics: []v1alpha1.AnalysisMetric{valid()}}); err != nil {
		t.Errorf("valid nodeHealth metric: %v", err)
	}
	if _, err := QueryOf(valid(), false); err == nil || !strings.Contains(err.Error(), "nodeHealth metric: it has no query") {
		t.Errorf("QueryOf a nodeHealth metric: %v", err)
	}
}
