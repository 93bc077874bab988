package analysis

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
)

func TestMetrics(t *testing.T) {
	reg := prometheus.NewRegistry()
	m := NewMetrics(reg)

	failed := measurementAt(F, t0)
	failed.Value = "0.041"
	m.ObserveMeasurements("ns", "agent", map[string]v1alpha1.Measurement{
		"error-rate": failed,
		"restarts":   measurementAt(I, t0),
	})
	m.ObserveMeasurements("ns", "other", map[string]v1alpha1.Measurement{"restarts": measurementAt(S, t0)})
	m.ObserveResult("ns", "agent", v1alpha1.AnalysisFailed)

	want := `
# HELP extendeddaemonset_analysis_measurement_value Value of the newest measurement of a canary analysis metric.
# TYPE extendeddaemonset_analysis_measurement_value gauge
extendeddaemonset_analysis_measurement_value{metric="error-rate",name="agent",namespace="ns"} 0.041
# HELP extendeddaemonset_analysis_measurement_phase Phase of the newest measurement of a canary analysis metric: 1 for its phase, 0 for the others.
# TYPE extendeddaemonset_analysis_measurement_phase gauge
extendeddaemonset_analysis_measurement_phase{metric="error-rate",name="agent",namespace="ns",phase="Error"} 0
extendeddaemonset_analysis_measurement_phase{metric="error-rate",name="agent",namespace="ns",phase="Failed"} 1
extendeddaemonset_analysis_measurement_phase{metric="error-rate",name="agent",namespace="ns",phase="Inconclusive"} 0
extendeddaemonset_analysis_measurement_phase{metric="error-rate",name="agent",namespace="ns",phase="Successful"} 0
extendeddaemonset_analysis_measurement_phase{metric="restarts",name="agent",namespace="ns",phase="Error"} 0
extendeddaemonset_analysis_measurement_phase{metric="restarts",name="agent",namespace="ns",phase="Failed"} 0
extendeddaemonset_analysis_measurement_phase{metric="restarts",name="agent",namespace="ns",phase="Inconclusive"} 1
extendeddaemonset_analysis_measurement_phase{metric="restarts",name="agent",namespace="ns",phase="Successful"} 0
extendeddaemonset_analysis_measurement_phase{metric="restarts",name="other",namespace="ns",phase="Error"} 0
extendeddaemonset_analysis_measurement_phase{metric="restarts",name="other",namespace="ns",phase="Failed"} 0
extendeddaemonset_analysis_measurement_phase{metric="restarts",name="other",namespace="ns",phase="Inconclusive"} 0
extendeddaemonset_analysis_measurement_phase{metric="restarts",name="other",namespace="ns",phase="Successful"} 1
# HELP extendeddaemonset_analysis_measurements_total Measurements of canary analysis metrics, by phase.
# TYPE extendeddaemonset_analysis_measurements_total counter
extendeddaemonset_analysis_measurements_total{metric="error-rate",name="agent",namespace="ns",phase="Failed"} 1
extendeddaemonset_analysis_measurements_total{metric="restarts",name="agent",namespace="ns",phase="Inconclusive"} 1
extendeddaemonset_analysis_measurements_total{metric="restarts",name="other",namespace="ns",phase="Successful"} 1
# HELP extendeddaemonset_analysis_results_total Canary analyses that reached a final result, by result.
# TYPE extendeddaemonset_analysis_results_total counter
extendeddaemonset_analysis_results_total{name="agent",namespace="ns",result="Failed"} 1
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want)); err != nil {
		t.Error(err)
	}

	// A measurement without a value removes the stale one.
	m.ObserveMeasurements("ns", "agent", map[string]v1alpha1.Measurement{"error-rate": measurementAt(I, t0)})
	if n := testutil.CollectAndCount(m.value, "extendeddaemonset_analysis_measurement_value"); n != 0 {
		t.Errorf("%d value series left after a measurement without value", n)
	}
	if got := testutil.ToFloat64(m.measurements.WithLabelValues("ns", "agent", "error-rate", "Inconclusive")); got != 1 {
		t.Errorf("inconclusive count = %v", got)
	}

	m.Forget("ns", "agent")
	for name, c := range map[string]prometheus.Collector{"value": m.value, "phase": m.phase, "measurements": m.measurements, "results": m.results} {
		problems, err := testutil.CollectAndLint(c)
		if err != nil || len(problems) > 0 {
			t.Errorf("%s: lint %v %v", name, problems, err)
		}
	}
	if n := testutil.CollectAndCount(m.phase); n != 4 {
		t.Errorf("%d phase series after Forget, want the other ExtendedDaemonSet's 4", n)
	}
	if n := testutil.CollectAndCount(m.measurements) + testutil.CollectAndCount(m.results); n != 1 {
		t.Errorf("%d counter series after Forget, want the other ExtendedDaemonSet's 1", n)
	}
}
