package analysis

import (
	"strconv"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
)

// measurementPhases are the phases a single measurement can have.
var measurementPhases = []v1alpha1.AnalysisPhase{
	v1alpha1.AnalysisSuccessful,
	v1alpha1.AnalysisFailed,
	v1alpha1.AnalysisInconclusive,
	v1alpha1.AnalysisError,
}

// Metrics exports the analyses for dashboards and alerts.
type Metrics struct {
	value        *prometheus.GaugeVec
	phase        *prometheus.GaugeVec
	measurements *prometheus.CounterVec
	results      *prometheus.CounterVec
}

// NewMetrics creates the analysis metrics and registers them with reg
// (none when reg is nil).
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		value: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "extendeddaemonset_analysis_measurement_value",
			Help: "Value of the newest measurement of a canary analysis metric.",
		}, []string{"namespace", "name", "metric"}),
		phase: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "extendeddaemonset_analysis_measurement_phase",
			Help: "Phase of the newest measurement of a canary analysis metric: 1 for its phase, 0 for the others.",
		}, []string{"namespace", "name", "metric", "phase"}),
		measurements: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "extendeddaemonset_analysis_measurements_total",
			Help: "Measurements of canary analysis metrics, by phase.",
		}, []string{"namespace", "name", "metric", "phase"}),
		results: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "extendeddaemonset_analysis_results_total",
			Help: "Canary analyses that reached a final result, by result.",
		}, []string{"namespace", "name", "result"}),
	}
	if reg != nil {
		reg.MustRegister(m.value, m.phase, m.measurements, m.results)
	}
	return m
}

// ObserveMeasurements exports new measurements of an ExtendedDaemonSet's
// analysis, by metric name.
func (m *Metrics) ObserveMeasurements(namespace, name string, ms map[string]v1alpha1.Measurement) {
	for metric, measurement := range ms {
		if v, err := strconv.ParseFloat(measurement.Value, 64); err == nil {
			m.value.WithLabelValues(namespace, name, metric).Set(v)
		} else {
			// No value: a stale one would mislead a dashboard.
			m.value.DeleteLabelValues(namespace, name, metric)
		}
		for _, phase := range measurementPhases {
			current := 0.0
			if phase == measurement.Phase {
				current = 1
			}
			m.phase.WithLabelValues(namespace, name, metric, string(phase)).Set(current)
		}
		m.measurements.WithLabelValues(namespace, name, metric, string(measurement.Phase)).Inc()
	}
}

// ObserveResult counts an analysis of an ExtendedDaemonSet that reached its
// final result.
func (m *Metrics) ObserveResult(namespace, name string, result v1alpha1.AnalysisPhase) {
	m.results.WithLabelValues(namespace, name, string(result)).Inc()
}

// Forget deletes every series of an ExtendedDaemonSet, once it is gone.
func (m *Metrics) Forget(namespace, name string) {
	labels := prometheus.Labels{"namespace": namespace, "name": name}
	m.value.DeletePartialMatch(labels)
	m.phase.DeletePartialMatch(labels)
	m.measurements.DeletePartialMatch(labels)
	m.results.DeletePartialMatch(labels)
}
