package inspect

import (
	"testing"

	"github.com/onsi/gomega"
	"k8s.io/utils/ptr"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
)

func TestThresholdSaysWhatAMeasurementIsJudgedAgainst(t *testing.T) {
	one, two, fifty, confidence := 1.0, 2.5, 50.0, 0.99
	for want, m := range map[string]*v1alpha1.AnalysisMetric{
		"-":    nil,
		"<= 0": {Preset: v1alpha1.MetricPresetRestarts},
		">= 1": {Query: "q", ThresholdRange: &v1alpha1.ThresholdRange{Min: &one}},
		"<= 2.5": {Web: &v1alpha1.WebMetric{WebRequest: v1alpha1.WebRequest{URL: "http://checks.example/agent"}, JSONPath: "{.rate}"},
			ThresholdRange: &v1alpha1.ThresholdRange{Max: &two}},
		"1..2.5, dry run":  {Query: "q", ThresholdRange: &v1alpha1.ThresholdRange{Min: &one, Max: &two}, DryRun: true},
		"<= baseline +50%": {Query: "q", Baseline: &v1alpha1.BaselineComparison{MaxRelativeIncrease: &fifty}},
		"<= 0 unhealthy nodes, pod readiness <= 10 points below baseline": {NodeHealth: &v1alpha1.NodeHealthMetric{}},
		"<= 1 unhealthy nodes, pod readiness <= 0 points below baseline, dry run": {NodeHealth: &v1alpha1.NodeHealthMetric{
			MaxUnhealthyNodes: ptr.To[int32](1), MaxPodReadinessDrop: ptr.To[int32](0)}, DryRun: true},
		"no either against baseline at 0.99 confidence": {Query: "q", Baseline: &v1alpha1.BaselineComparison{
			MannWhitney: &v1alpha1.MannWhitneyTest{Confidence: &confidence, Direction: v1alpha1.DirectionEither}}},
	} {
		gomega.NewWithT(t).Expect(threshold(m)).To(gomega.Equal(want))
	}
}

func TestMeasurementsShowCountsAndTheLastValue(t *testing.T) {
	g := gomega.NewWithT(t)
	r := &v1alpha1.MetricResult{Count: 5, Successful: 3, Failed: 1, Inconclusive: 1, Measurements: []v1alpha1.Measurement{
		{Phase: v1alpha1.AnalysisSuccessful, Value: "0"},
		{Phase: v1alpha1.AnalysisInconclusive, Value: "NaN"},
	}}
	g.Expect(measurementCounts(r)).To(gomega.Equal("5: 3 successful, 1 failed, 1 inconclusive"))
	g.Expect(lastValue(r)).To(gomega.Equal("no data"))

	r.Measurements = append(r.Measurements, v1alpha1.Measurement{Phase: v1alpha1.AnalysisFailed, Value: "0.3", BaselineValue: "0.1"})
	g.Expect(lastValue(r)).To(gomega.Equal("0.3 (baseline 0.1)"))
	g.Expect(lastValue(&v1alpha1.MetricResult{})).To(gomega.Equal("-"))
	g.Expect(measurementCounts(&v1alpha1.MetricResult{})).To(gomega.Equal("0"))
}
