package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// CanaryAnalysis measures the canary with Prometheus queries or web
// requests while it runs.
// +kubebuilder:validation:XValidation:rule="!self.metrics.exists(m, has(m.query) || has(m.preset)) || (has(self.provider) && has(self.provider.prometheus))",message="metrics with a query or preset need provider.prometheus"
type CanaryAnalysis struct {
	// Provider is where the query and preset metrics are queried; an
	// analysis whose metrics are all web metrics needs none.
	// +optional
	Provider AnalysisProvider `json:"provider,omitzero"`

	// Interval is the time between two measurements of a metric.
	// +kubebuilder:default="1m"
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern=`^([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$`
	// +kubebuilder:validation:XValidation:rule="duration(self) >= duration('1s')",message="interval must be at least 1s"
	// +optional
	Interval *metav1.Duration `json:"interval,omitempty"`

	// InitialDelay is how long after the canary starts the first
	// measurement is taken, so new pods can warm up.
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern=`^([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$`
	// +kubebuilder:validation:XValidation:rule="duration(self) > duration('0s')",message="initialDelay must be a positive duration"
	// +optional
	InitialDelay *metav1.Duration `json:"initialDelay,omitempty"`

	// FailureLimit is the number of Failed measurements of a metric that is
	// tolerated; one more fails the canary.
	// +kubebuilder:default=0
	// +kubebuilder:validation:Minimum=0
	// +optional
	FailureLimit *int32 `json:"failureLimit,omitempty"`

	// InconclusiveLimit is the number of Inconclusive measurements (no data,
	// NaN) of a metric in a row that is tolerated; one more pauses the canary
	// until a measurement is conclusive again. An analysis never promotes on
	// missing data.
	// +kubebuilder:default=0
	// +kubebuilder:validation:Minimum=0
	// +optional
	InconclusiveLimit *int32 `json:"inconclusiveLimit,omitempty"`

	// ConsecutiveErrorLimit is the number of measurements in a row that may
	// fail to query Prometheus or the web endpoint; one more pauses the
	// canary until a measurement works again.
	// +kubebuilder:default=4
	// +kubebuilder:validation:Minimum=0
	// +optional
	ConsecutiveErrorLimit *int32 `json:"consecutiveErrorLimit,omitempty"`

	// DryRun measures and reports every metric without letting any of them
	// decide the canary's fate.
	// +optional
	DryRun bool `json:"dryRun,omitempty"`

	// Metrics are the measurements taken; each must succeed for promotion.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=20
	// +listType=map
	// +listMapKey=name
	// +required
	Metrics []AnalysisMetric `json:"metrics"`
}

// AnalysisProvider names the metrics backend.
type AnalysisProvider struct {
	// Prometheus is a Prometheus-compatible query API, needed when a metric
	// has a query or a preset.
	// +optional
	Prometheus *PrometheusProvider `json:"prometheus,omitempty"`
}

// PrometheusProvider is a Prometheus query API endpoint.
type PrometheusProvider struct {
	// Address is the base URL of the Prometheus API, for example
	// http://prometheus.monitoring:9090.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=2048
	// +kubebuilder:validation:XValidation:rule="isURL(self) && url(self).getScheme() in ['http', 'https'] && url(self).getHostname() != ''",message="address must be an http or https URL with a host"
	// +required
	Address string `json:"address"`

	// Timeout bounds one query; at most 30s, so an analysis never holds a
	// reconcile for long.
	// +kubebuilder:default="10s"
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern=`^([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$`
	// +kubebuilder:validation:XValidation:rule="duration(self) > duration('0s')",message="timeout must be a positive duration"
	// +kubebuilder:validation:XValidation:rule="duration(self) <= duration('30s')",message="timeout must be at most 30s"
	// +optional
	Timeout *metav1.Duration `json:"timeout,omitempty"`

	// SecretRef names a Secret in the ExtendedDaemonSet's namespace with the
	// credentials: key "token" (bearer token), or "username" and "password"
	// (basic auth), and optionally "ca.crt" (PEM CA bundle).
	// +optional
	SecretRef *corev1.LocalObjectReference `json:"secretRef,omitempty"`

	// InsecureSkipVerify disables TLS certificate verification.
	// +optional
	InsecureSkipVerify bool `json:"insecureSkipVerify,omitempty"`
}

// MetricPreset names a built-in query.
// +kubebuilder:validation:Enum=restarts;errorRate
type MetricPreset string

const (
	// MetricPresetRestarts is the increase of
	// kube_pod_container_status_restarts_total on canary pods over the window.
	MetricPresetRestarts MetricPreset = "restarts"
	// MetricPresetErrorRate is errors / total of the user's request metric on
	// canary pods over the window.
	MetricPresetErrorRate MetricPreset = "errorRate"
)

// AnalysisMetric is one measurement judged against a threshold.
// +kubebuilder:validation:XValidation:rule="[has(self.query), has(self.preset), has(self.web), has(self.nodeHealth)].filter(x, x).size() == 1",message="exactly one of query, preset, web or nodeHealth must be set"
// +kubebuilder:validation:XValidation:rule="!has(self.nodeHealth) || (!has(self.thresholdRange) && !has(self.baseline))",message="a nodeHealth metric has its own thresholds and baseline: thresholdRange and baseline do not apply"
// +kubebuilder:validation:XValidation:rule="!has(self.web) || !has(self.baseline)",message="a web metric has no baseline: it is judged by thresholdRange alone"
// +kubebuilder:validation:XValidation:rule="!has(self.web) || has(self.thresholdRange)",message="a web metric needs thresholdRange"
// +kubebuilder:validation:XValidation:rule="!has(self.preset) || self.preset != 'errorRate' || has(self.errorRate)",message="preset errorRate needs errorRate.requestMetric and errorRate.errorSelector"
// +kubebuilder:validation:XValidation:rule="!has(self.errorRate) || (has(self.preset) && self.preset == 'errorRate')",message="errorRate is only used with preset errorRate"
type AnalysisMetric struct {
	// Name identifies the metric in status, events and conditions.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-zA-Z0-9]([-_.a-zA-Z0-9]*[a-zA-Z0-9])?$`
	// +required
	Name string `json:"name"`

	// Query is a PromQL query that returns one value, written as a
	// template whose actions may only be these fields: {{ .Namespace }},
	// {{ .Name }}, {{ .CanaryReplicaSet }}, {{ .StableReplicaSet }},
	// {{ .CanaryPodRegex }}, {{ .StablePodRegex }}, {{ .CanaryNodeRegex }},
	// {{ .Interval }} and {{ .Window }} (the time since the canary pods were
	// all available, at least one interval and at most 1h); no functions,
	// loops or conditions. Every value is escaped for use inside a PromQL
	// string. A template that does more, or names another field, is a spec
	// error: the analysis is in Error and the ExtendedDaemonSet Stalled. A
	// baseline renders the same template with the stable pods in place of
	// the canary pods; a Mann-Whitney baseline needs one series per pod.
	// +kubebuilder:validation:MinLength=1
	// +optional
	Query string `json:"query,omitempty"`

	// Preset is a built-in query: restarts or errorRate.
	// +optional
	Preset MetricPreset `json:"preset,omitempty"`

	// ErrorRate configures the errorRate preset.
	// +optional
	ErrorRate *ErrorRatePreset `json:"errorRate,omitempty"`

	// Web measures the metric with an HTTP request to an endpoint of
	// yours, on the analysis' interval like any metric: the number at
	// jsonPath in its JSON answer is judged by thresholdRange.
	// +optional
	Web *WebMetric `json:"web,omitempty"`

	// NodeHealth judges what the new version does to its nodes rather
	// than to its own pods, and needs no Prometheus: the nodes' conditions
	// and the pods of other workloads on them, since the change, against
	// same-zone nodes that did not change.
	// +optional
	NodeHealth *NodeHealthMetric `json:"nodeHealth,omitempty"`

	// ThresholdRange is the range a successful measurement falls in. The
	// restarts preset defaults to max 0.
	// +optional
	ThresholdRange *ThresholdRange `json:"thresholdRange,omitempty"`

	// Baseline compares the canary with the stable pods over the same window.
	// +optional
	Baseline *BaselineComparison `json:"baseline,omitempty"`

	// DryRun measures and reports this metric without letting it decide.
	// +optional
	DryRun bool `json:"dryRun,omitempty"`
}

// ErrorRatePreset names the request metric of the errorRate preset.
type ErrorRatePreset struct {
	// RequestMetric is the counter of requests, for example http_requests_total.
	// +kubebuilder:validation:Pattern=`^[a-zA-Z_:][a-zA-Z0-9_:]*$`
	// +required
	RequestMetric string `json:"requestMetric"`

	// ErrorSelector is the label matcher that selects errors, for example
	// code=~"5..".
	// +kubebuilder:validation:MinLength=1
	// +required
	ErrorSelector string `json:"errorSelector"`

	// PodLabel is the label of the request metric that holds the pod name.
	// +kubebuilder:default=pod
	// +kubebuilder:validation:Pattern=`^[a-zA-Z_][a-zA-Z0-9_]*$`
	// +optional
	PodLabel string `json:"podLabel,omitempty"`
}

// ThresholdRange is an inclusive range; an unset bound is open.
// +kubebuilder:validation:XValidation:rule="has(self.min) || has(self.max)",message="thresholdRange needs min or max"
// +kubebuilder:validation:XValidation:rule="!has(self.min) || !has(self.max) || self.min <= self.max",message="thresholdRange.min must be less than or equal to thresholdRange.max"
type ThresholdRange struct {
	// Min is the smallest successful value.
	// +optional
	Min *float64 `json:"min,omitempty"`
	// Max is the largest successful value.
	// +optional
	Max *float64 `json:"max,omitempty"`
}

// ComparisonDirection says which way of differing from the baseline is bad.
// +kubebuilder:validation:Enum=increase;decrease;either
type ComparisonDirection string

const (
	// DirectionIncrease: the canary is worse when its values are higher.
	DirectionIncrease ComparisonDirection = "increase"
	// DirectionDecrease: the canary is worse when its values are lower.
	DirectionDecrease ComparisonDirection = "decrease"
	// DirectionEither: any significant difference is bad.
	DirectionEither ComparisonDirection = "either"
)

// BaselineComparison judges the canary against the stable pods.
// +kubebuilder:validation:XValidation:rule="has(self.maxRelativeIncrease) || has(self.mannWhitney)",message="baseline needs maxRelativeIncrease or mannWhitney"
type BaselineComparison struct {
	// MaxRelativeIncrease is how much worse (in percent of the baseline value)
	// the canary may be; 50 allows a canary value 1.5 times the baseline.
	// +kubebuilder:validation:Minimum=0
	// +optional
	MaxRelativeIncrease *float64 `json:"maxRelativeIncrease,omitempty"`

	// MannWhitney runs a Mann-Whitney U test over per-pod samples of the
	// canary and the baseline.
	// +optional
	MannWhitney *MannWhitneyTest `json:"mannWhitney,omitempty"`
}

// MannWhitneyTest is a rank test between canary and baseline samples.
type MannWhitneyTest struct {
	// Confidence is the confidence level at which a difference fails the
	// canary, between 0.5 and 0.999.
	// +kubebuilder:default=0.95
	// +kubebuilder:validation:Minimum=0.5
	// +kubebuilder:validation:Maximum=0.999
	// +optional
	Confidence *float64 `json:"confidence,omitempty"`

	// Direction is which difference is bad: increase, decrease or either.
	// +kubebuilder:default=increase
	// +optional
	Direction ComparisonDirection `json:"direction,omitempty"`
}

// AnalysisPhase is the verdict of a measurement, a metric or an analysis.
// +kubebuilder:validation:Enum=Pending;Running;Successful;Failed;Inconclusive;Error
type AnalysisPhase string

const (
	AnalysisPending      AnalysisPhase = "Pending"
	AnalysisRunning      AnalysisPhase = "Running"
	AnalysisSuccessful   AnalysisPhase = "Successful"
	AnalysisFailed       AnalysisPhase = "Failed"
	AnalysisInconclusive AnalysisPhase = "Inconclusive"
	AnalysisError        AnalysisPhase = "Error"
)

// AnalysisStatus is the state of the canary's analysis.
type AnalysisStatus struct {
	// Phase is the overall verdict.
	// +optional
	Phase AnalysisPhase `json:"phase,omitempty"`
	// Message explains the phase.
	// +optional
	Message string `json:"message,omitempty"`
	// Metrics holds the results of each metric.
	// +listType=map
	// +listMapKey=name
	// +optional
	Metrics []MetricResult `json:"metrics,omitempty"`
}

// MetricResult counts the measurements of one metric.
type MetricResult struct {
	// Name of the metric.
	Name string `json:"name"`
	// Phase is the metric's verdict so far.
	// +optional
	Phase AnalysisPhase `json:"phase,omitempty"`
	// Count is the number of measurements taken.
	Count int32 `json:"count"`
	// Successful is the number of Successful measurements.
	Successful int32 `json:"successful"`
	// Failed is the number of Failed measurements.
	Failed int32 `json:"failed"`
	// Inconclusive is the number of Inconclusive measurements.
	Inconclusive int32 `json:"inconclusive"`
	// Error is the number of measurements that could not be taken.
	Error int32 `json:"error"`
	// ConsecutiveError is the number of errors in a row so far.
	ConsecutiveError int32 `json:"consecutiveError"`
	// ConsecutiveInconclusive is the number of Inconclusive measurements in
	// a row so far; a conclusive one resets it, so a canary paused for
	// missing data resumes when the data returns.
	// +optional
	ConsecutiveInconclusive int32 `json:"consecutiveInconclusive,omitempty"`
	// Message explains the last measurement.
	// +optional
	Message string `json:"message,omitempty"`
	// Measurements are the latest measurements, newest last.
	// +kubebuilder:validation:MaxItems=10
	// +optional
	Measurements []Measurement `json:"measurements,omitempty"`
}

// Measurement is one query and its verdict.
type Measurement struct {
	// Phase is the verdict of this measurement.
	Phase AnalysisPhase `json:"phase"`
	// Value is the measured value as text ("NaN" and "" for no data).
	// +optional
	Value string `json:"value,omitempty"`
	// BaselineValue is the stable pods' value when a baseline is compared.
	// +optional
	BaselineValue string `json:"baselineValue,omitempty"`
	// Query is the resolved PromQL that was sent; for a web metric, the
	// method and the URL the spec writes, or the Secret and key a URL is
	// read from (never the URL read).
	// +optional
	Query string `json:"query,omitempty"`
	// Message explains the verdict.
	// +optional
	Message string `json:"message,omitempty"`
	// Time is when the measurement was taken.
	Time metav1.Time `json:"time"`
	// Nodes is the evidence of a nodeHealth measurement: the nodes it
	// found regressed, each with what went wrong there.
	// +kubebuilder:validation:MaxItems=5
	// +optional
	Nodes []NodeEvidence `json:"nodes,omitempty"`
}
