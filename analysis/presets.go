package analysis

import (
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
)

// defaultPodLabel is the label of a request metric holding the pod name when
// the errorRate preset does not name one.
const defaultPodLabel = "pod"

var (
	metricNamePattern = regexp.MustCompile(`^[a-zA-Z_:][a-zA-Z0-9_:]*$`)
	labelNamePattern  = regexp.MustCompile(`^[a-zA-Z_][a-zA-Z0-9_]*$`)

	// selectorPattern accepts only comma-separated `label op "string"`
	// matchers. The string alternation consumes a backslash together with
	// the character after it, so an escaped quote cannot end the string and
	// nothing can close the selector's brace.
	selectorPattern = regexp.MustCompile(
		`^\s*` + matcherPattern + `(\s*,\s*` + matcherPattern + `)*\s*$`)
)

const matcherPattern = `[a-zA-Z_][a-zA-Z0-9_]*\s*(=~|!~|!=|=)\s*"([^"\\\n]|\\.)*"`

// QueryOf returns the query template of a metric: its Query, or the preset's
// template. perPod asks a preset for one series per pod (`sum by (pod)`
// instead of `sum`), as the Mann-Whitney comparison needs; a user's Query is
// returned as written and must then return one series per pod itself.
// Against a baseline without perPod, the restarts preset is the mean of the
// pods' restarts rather than their sum, so that a few canary pods compare
// with a whole stable fleet.
func QueryOf(m v1alpha1.AnalysisMetric, perPod bool) (string, error) {
	switch {
	case m.Web != nil:
		return "", fmt.Errorf("metric %s is a web metric: it has no query", m.Name)
	case m.NodeHealth != nil:
		return "", fmt.Errorf("metric %s is a nodeHealth metric: it has no query", m.Name)
	case m.Query != "" && m.Preset != "":
		return "", fmt.Errorf("metric %s sets both query and preset: set exactly one", m.Name)
	case m.Query != "":
		return m.Query, nil
	case m.Preset == v1alpha1.MetricPresetRestarts:
		return restartsQuery(perPod, m.Baseline != nil), nil
	case m.Preset == v1alpha1.MetricPresetErrorRate:
		q, err := errorRateQuery(m.ErrorRate, perPod)
		if err != nil {
			return "", fmt.Errorf("metric %s: %w", m.Name, err)
		}
		return q, nil
	case m.Preset == "":
		return "", fmt.Errorf("metric %s sets neither query nor preset: set exactly one", m.Name)
	default:
		return "", fmt.Errorf("metric %s: unknown preset %q (known: %s, %s)",
			m.Name, m.Preset, v1alpha1.MetricPresetRestarts, v1alpha1.MetricPresetErrorRate)
	}
}

// thresholdOf returns the metric's threshold range, or the preset's default.
// A canary container that restarts at all is unhealthy, hence max 0, which
// means the same for the mean of restarts per pod used against a baseline.
func thresholdOf(m v1alpha1.AnalysisMetric) *v1alpha1.ThresholdRange {
	if m.ThresholdRange == nil && m.Query == "" && m.Preset == v1alpha1.MetricPresetRestarts {
		zero := 0.0
		return &v1alpha1.ThresholdRange{Max: &zero}
	}
	return m.ThresholdRange
}

// aggregation is `sum` or, per pod, `sum by (label)`, followed by a space so
// that both read naturally before a parenthesis.
func aggregation(perPod bool, podLabel string) string {
	if perPod {
		return "sum by (" + podLabel + ") "
	}
	return "sum"
}

// whileExposed keeps the result of query only while the pods still expose
// the series of selector; per pod, each pod only while it does. A range over
// the whole window still holds the samples of series Prometheus has since
// marked stale, and on those alone a query would go on judging pods that no
// longer report, or an exporter that stopped. Only `or` binds looser than
// `and`: a query without a top-level `or` needs no parentheses.
func whileExposed(query string, perPod bool, podLabel, selector string) string {
	on := "on()"
	if perPod {
		on = "on(" + podLabel + ")"
	}
	return query + " and " + on + " " + selector
}

// restartsQuery is the restarts of the canary pods' containers over the
// window: in total; per pod, for a rank test; or, against a baseline, the
// mean per pod, since a stable fleet of hundreds of pods sums to far more
// restarts than a few canary pods however often these crash. The mean is
// over the pods with a restart counter, as the sum is. Without a counter
// still exposed there is no value, so a canary whose kube-state-metrics
// stopped reporting is Inconclusive rather than judged on old restarts.
func restartsQuery(perPod, againstBaseline bool) string {
	selector := `kube_pod_container_status_restarts_total{namespace="{{.Namespace}}",` + defaultPodLabel + `=~"{{.CanaryPodRegex}}"}`
	restarts := "(increase(" + selector + "[{{.Window}}]))"
	var query string
	switch {
	case perPod:
		query = aggregation(true, defaultPodLabel) + restarts
	case againstBaseline:
		query = "avg(" + aggregation(true, defaultPodLabel) + restarts + ")"
	default:
		query = aggregation(false, defaultPodLabel) + restarts
	}
	return whileExposed(query, perPod, defaultPodLabel, selector)
}

// errorRateQuery is errors / requests on the canary pods. The `or ... * 0`
// turns "no error series" into 0 instead of an empty result, so a canary
// without errors is judged; without any request the ratio is NaN, which is
// judged Inconclusive. The ratio is kept only while the pods still expose
// the request counter.
func errorRateQuery(p *v1alpha1.ErrorRatePreset, perPod bool) (string, error) {
	if p == nil {
		return "", errors.New("preset errorRate needs errorRate.requestMetric and errorRate.errorSelector")
	}
	if !metricNamePattern.MatchString(p.RequestMetric) {
		return "", fmt.Errorf("errorRate.requestMetric %q is not a metric name (letters, digits, _ and :, not starting with a digit)", p.RequestMetric)
	}
	podLabel := p.PodLabel
	if podLabel == "" {
		podLabel = defaultPodLabel
	}
	if !labelNamePattern.MatchString(podLabel) {
		return "", fmt.Errorf("errorRate.podLabel %q is not a label name (letters, digits and _, not starting with a digit)", podLabel)
	}
	if !selectorPattern.MatchString(p.ErrorSelector) {
		return "", fmt.Errorf(`errorRate.errorSelector %q must be comma-separated label matchers such as code=~"5..", each a label name, one of = != =~ !~, and a double-quoted string`, p.ErrorSelector)
	}

	selector := p.RequestMetric + `{namespace="{{.Namespace}}",` + podLabel + `=~"{{.CanaryPodRegex}}"`
	rate := func(extra string) string {
		return aggregation(perPod, podLabel) + "(rate(" + selector + extra + "}[{{.Window}}]))"
	}
	errorsOnly := rate("," + templateLiteral(strings.TrimSpace(p.ErrorSelector)))
	all := rate("")
	return whileExposed("("+errorsOnly+" or "+all+" * 0) / "+all, perPod, podLabel, selector+"}"), nil
}

// templateLiteral makes user text come out of the template unchanged: a
// "{{" inside a matcher's string would otherwise start a template action.
func templateLiteral(s string) string {
	return strings.ReplaceAll(s, "{{", `{{"{{"}}`)
}
