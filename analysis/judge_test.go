package analysis

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"

	promv1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
)

func TestMeasureJudgesOneValue(t *testing.T) {
	withinRange := &v1alpha1.ThresholdRange{Min: ptr(0.0), Max: ptr(0.01)}
	manySeries := vector(1, 2, 3, 4, 5, 6, 7)
	cases := []struct {
		name      string
		threshold *v1alpha1.ThresholdRange
		answer    answer
		phase     v1alpha1.AnalysisPhase
		value     string
		message   []string
	}{
		{"within range", withinRange, answer{value: vector(0.002)},
			v1alpha1.AnalysisSuccessful, "0.002", []string{"0.002 within [0, 0.01]"}},
		{"above max", withinRange, answer{value: vector(0.041)},
			v1alpha1.AnalysisFailed, "0.041", []string{"0.041 > max 0.01"}},
		{"below min", &v1alpha1.ThresholdRange{Min: ptr(10.0)}, answer{value: scalar(9.5)},
			v1alpha1.AnalysisFailed, "9.5", []string{"9.5 < min 10"}},
		{"bounds are inclusive", withinRange, answer{value: scalar(0.01)},
			v1alpha1.AnalysisSuccessful, "0.01", []string{"within [0, 0.01]"}},
		{"open lower bound", maxRange(1), answer{value: vector(-1e9)},
			v1alpha1.AnalysisSuccessful, "-1e+09", []string{"-1e+09 within [-Inf, 1]"}},
		{"+Inf is judged", maxRange(1), answer{value: vector(math.Inf(1))},
			v1alpha1.AnalysisFailed, "+Inf", []string{"+Inf > max 1"}},
		{"-Inf is judged", &v1alpha1.ThresholdRange{Min: ptr(0.0)}, answer{value: vector(math.Inf(-1))},
			v1alpha1.AnalysisFailed, "-Inf", []string{"-Inf < min 0"}},
		{"six significant digits", maxRange(1), answer{value: vector(1.0 / 3)},
			v1alpha1.AnalysisSuccessful, "0.333333", nil},
		{"empty vector", maxRange(1), answer{value: model.Vector{}},
			v1alpha1.AnalysisInconclusive, "", []string{"query returned no data", "may not exist yet", "not scraped"}},
		{"NaN", maxRange(1), answer{value: vector(math.NaN())},
			v1alpha1.AnalysisInconclusive, "NaN", []string{"query returned NaN (for a ratio: no traffic in the window)"}},
		{"several series", maxRange(1), answer{value: manySeries},
			v1alpha1.AnalysisError, "", []string{"7 series where one was expected", `{pod="pod-a"}`, `{pod="pod-e"}`, "and 2 more"}},
		{"matrix", maxRange(1), answer{value: model.Matrix{}},
			v1alpha1.AnalysisError, "", []string{"query must return an instant vector or scalar, got matrix"}},
		{"string", maxRange(1), answer{value: &model.String{Value: "x"}},
			v1alpha1.AnalysisError, "", []string{"got string"}},
		{"query error", maxRange(1), answer{err: errors.New("dial tcp 10.0.0.1:9090: connect: connection refused")},
			v1alpha1.AnalysisError, "", []string{"query failed: dial tcp", "connection refused"}},
		{"bad_data", maxRange(1), answer{err: &promv1.Error{Type: promv1.ErrBadData, Msg: "parse error: unexpected }"}},
			v1alpha1.AnalysisError, "", []string{"query rejected by Prometheus: parse error: unexpected }"}},
		{"HTTP error with a body", maxRange(1), answer{err: &promv1.Error{Type: promv1.ErrServer, Msg: "server error: 503", Detail: "upstream\n  unavailable"}},
			v1alpha1.AnalysisError, "", []string{"server error: 503: upstream unavailable"}},
		{"warnings are appended", maxRange(1), answer{value: vector(0.5), warnings: promv1.Warnings{"w1", "w2", "w3", "w4", "w5"}},
			v1alpha1.AnalysisSuccessful, "0.5", []string{"0.5 within [-Inf, 1] (warnings: w1; w2; w3 and 2 more)"}},
		{"warnings explain an error", maxRange(1), answer{err: errors.New("boom"), warnings: promv1.Warnings{"partial response"}},
			v1alpha1.AnalysisError, "", []string{"boom (warnings: partial response)"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			q := &fakeQuerier{canary: c.answer}
			m := Measure(context.Background(), q, v1alpha1.AnalysisMetric{Name: "m", Query: "q", ThresholdRange: c.threshold}, testVars(), t0)
			if m.Phase != c.phase || m.Value != c.value {
				t.Errorf("got %s %q (%s), want %s %q", m.Phase, m.Value, m.Message, c.phase, c.value)
			}
			for _, part := range c.message {
				if !strings.Contains(m.Message, part) {
					t.Errorf("message %q lacks %q", m.Message, part)
				}
			}
			if !m.Time.Time.Equal(t0) {
				t.Errorf("time = %s", m.Time)
			}
		})
	}
}

func TestMeasureWithoutAnythingToMeasure(t *testing.T) {
	noPods := testVars()
	noPods.Target.CanaryPods = nil
	noThreshold := v1alpha1.AnalysisMetric{Name: "m", Query: "q"}
	valid := v1alpha1.AnalysisMetric{Name: "m", Query: "q", ThresholdRange: maxRange(1)}
	cases := []struct {
		name    string
		q       Querier
		metric  v1alpha1.AnalysisMetric
		vars    Vars
		phase   v1alpha1.AnalysisPhase
		message string
	}{
		{"no querier", nil, valid, testVars(), v1alpha1.AnalysisError, "no Prometheus client"},
		{"no canary pods", &fakeQuerier{}, valid, noPods, v1alpha1.AnalysisInconclusive, "no canary pods"},
		{"a spec error comes before anything else", nil, noThreshold, noPods, v1alpha1.AnalysisError, "neither thresholdRange nor baseline"},
		{"nothing to judge against", &fakeQuerier{canary: answer{value: scalar(1)}}, noThreshold, testVars(),
			v1alpha1.AnalysisError, "neither thresholdRange nor baseline"},
		{"bad template", &fakeQuerier{}, v1alpha1.AnalysisMetric{Name: "m", Query: "{{.Nope}}", ThresholdRange: maxRange(1)}, testVars(),
			v1alpha1.AnalysisError, "Nope"},
		{"bad preset", &fakeQuerier{}, errorRateMetric(`x`), testVars(), v1alpha1.AnalysisError, "errorSelector"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := Measure(context.Background(), c.q, c.metric, c.vars, t0)
			if m.Phase != c.phase || !strings.Contains(m.Message, c.message) {
				t.Errorf("got %s %q, want %s with %q", m.Phase, m.Message, c.phase, c.message)
			}
		})
	}
}

func TestMeasureRestartsPreset(t *testing.T) {
	q := &fakeQuerier{canary: answer{value: vector(1)}}
	m := Measure(context.Background(), q, v1alpha1.AnalysisMetric{Name: "restarts", Preset: v1alpha1.MetricPresetRestarts}, testVars(), t0)
	if m.Phase != v1alpha1.AnalysisFailed || m.Message != "1 > max 0" {
		t.Errorf("one restart: %s %q", m.Phase, m.Message)
	}
	want := `sum(increase(kube_pod_container_status_restarts_total{namespace="agents",pod=~"canary-a|canary-b"}[10m]))` +
		` and on() kube_pod_container_status_restarts_total{namespace="agents",pod=~"canary-a|canary-b"}`
	if m.Query != want || len(q.queries) != 1 || q.queries[0] != want {
		t.Errorf("query %q, sent %q", m.Query, q.queries)
	}
}

// Against a baseline, restarts are compared per pod: the stable side's
// total over a whole fleet would dwarf any canary. Any restart still fails
// the default max 0.
func TestMeasureRestartsPresetAgainstABaseline(t *testing.T) {
	metric := v1alpha1.AnalysisMetric{Name: "restarts", Preset: v1alpha1.MetricPresetRestarts,
		Baseline: &v1alpha1.BaselineComparison{MaxRelativeIncrease: ptr(50.0)}}
	perPod := func(pods string) string {
		return `avg(sum by (pod) (increase(kube_pod_container_status_restarts_total{namespace="agents",pod=~"` + pods + `"}[10m])))` +
			` and on() kube_pod_container_status_restarts_total{namespace="agents",pod=~"` + pods + `"}`
	}
	q := &fakeQuerier{canary: answer{value: vector(0.5)}, baseline: answer{value: vector(0.1)}}
	m := Measure(context.Background(), q, metric, testVars(), t0)
	if m.Phase != v1alpha1.AnalysisFailed || !strings.Contains(m.Message, "0.5 > max 0") {
		t.Errorf("a restart on one of two canary pods: %s %q", m.Phase, m.Message)
	}
	want := []string{perPod("canary-a|canary-b"), perPod("stable-a|stable-b|stable-c")}
	if len(q.queries) != 2 || q.queries[0] != want[0] || q.queries[1] != want[1] {
		t.Errorf("sent %q, want %q", q.queries, want)
	}

	metric.ThresholdRange = maxRange(5)
	m = Measure(context.Background(), q, metric, testVars(), t0)
	if m.Phase != v1alpha1.AnalysisFailed || !strings.Contains(m.Message, "0.5 > baseline 0.1 + 50% (0.15)") {
		t.Errorf("0.5 restarts a canary pod against 0.1 a stable one: %s %q", m.Phase, m.Message)
	}
}

func relativeMetric(percent float64) v1alpha1.AnalysisMetric {
	return v1alpha1.AnalysisMetric{
		Name:     "latency",
		Query:    `avg(latency{pod=~"{{.CanaryPodRegex}}"})`,
		Baseline: &v1alpha1.BaselineComparison{MaxRelativeIncrease: ptr(percent)},
	}
}

func TestMeasureMaxRelativeIncrease(t *testing.T) {
	withThreshold := relativeMetric(50)
	withThreshold.ThresholdRange = maxRange(0.1)
	cases := []struct {
		name             string
		metric           v1alpha1.AnalysisMetric
		canary, baseline answer
		phase            v1alpha1.AnalysisPhase
		value, base      string
		message          []string
	}{
		{"within", relativeMetric(50), answer{value: scalar(0.3)}, answer{value: scalar(0.2)},
			v1alpha1.AnalysisSuccessful, "0.3", "0.2", []string{"0.3 <= baseline 0.2 + 50% (0.3)"}},
		{"above", relativeMetric(50), answer{value: scalar(0.31)}, answer{value: scalar(0.2)},
			v1alpha1.AnalysisFailed, "0.31", "0.2", []string{"0.31 > baseline 0.2 + 50% (0.3)"}},
		{"baseline 0, canary above", relativeMetric(50), answer{value: scalar(0.001)}, answer{value: scalar(0)},
			v1alpha1.AnalysisFailed, "0.001", "0", []string{"any increase over a baseline of 0 fails"}},
		{"baseline 0, canary 0", relativeMetric(50), answer{value: scalar(0)}, answer{value: scalar(0)},
			v1alpha1.AnalysisSuccessful, "0", "0", nil},
		{"baseline without data", relativeMetric(50), answer{value: scalar(1)}, answer{value: model.Vector{}},
			v1alpha1.AnalysisInconclusive, "1", "", []string{"baseline returned no data", "stable pods"}},
		{"baseline NaN", relativeMetric(50), answer{value: scalar(1)}, answer{value: scalar(math.NaN())},
			v1alpha1.AnalysisInconclusive, "1", "NaN", []string{"baseline returned NaN"}},
		{"baseline error", relativeMetric(50), answer{value: scalar(1)}, answer{err: errors.New("timeout")},
			v1alpha1.AnalysisError, "1", "", []string{"baseline failed: timeout"}},
		{"canary without data skips the baseline", relativeMetric(50), answer{value: model.Vector{}}, answer{value: scalar(1)},
			v1alpha1.AnalysisInconclusive, "", "", []string{"query returned no data"}},
		{"threshold failure wins over the baseline", withThreshold, answer{value: scalar(0.2)}, answer{value: model.Vector{}},
			v1alpha1.AnalysisFailed, "0.2", "", []string{"0.2 > max 0.1", "baseline returned no data"}},
		{"threshold and baseline both pass", withThreshold, answer{value: scalar(0.05)}, answer{value: scalar(0.05)},
			v1alpha1.AnalysisSuccessful, "0.05", "0.05", []string{"0.05 within [-Inf, 0.1]; 0.05 <= baseline 0.05"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			q := &fakeQuerier{canary: c.canary, baseline: c.baseline}
			m := Measure(context.Background(), q, c.metric, testVars(), t0)
			if m.Phase != c.phase || m.Value != c.value || m.BaselineValue != c.base {
				t.Errorf("got %s %q baseline %q (%s), want %s %q baseline %q", m.Phase, m.Value, m.BaselineValue, m.Message, c.phase, c.value, c.base)
			}
			for _, part := range c.message {
				if !strings.Contains(m.Message, part) {
					t.Errorf("message %q lacks %q", m.Message, part)
				}
			}
		})
	}
}

func TestMeasureQueryNamesBothQueries(t *testing.T) {
	q := &fakeQuerier{canary: answer{value: scalar(1)}, baseline: answer{value: scalar(1)}}
	m := Measure(context.Background(), q, relativeMetric(10), testVars(), t0)
	want := `avg(latency{pod=~"canary-a|canary-b"})` + "\nbaseline: " + `avg(latency{pod=~"stable-a|stable-b|stable-c"})`
	if m.Query != want {
		t.Errorf("query = %q, want %q", m.Query, want)
	}

	noStable := testVars()
	noStable.Target.StablePods = nil
	m = Measure(context.Background(), q, relativeMetric(10), noStable, t0)
	if m.Phase != v1alpha1.AnalysisInconclusive || !strings.Contains(m.Message, "no stable pods") {
		t.Errorf("without stable pods: %s %q", m.Phase, m.Message)
	}

	byNode := relativeMetric(10)
	byNode.Query = `avg(latency{node=~"{{.CanaryNodeRegex}}"})`
	m = Measure(context.Background(), q, byNode, testVars(), t0)
	if m.Phase != v1alpha1.AnalysisError || !strings.Contains(m.Message, "nodes of the stable pods are not known") {
		t.Errorf("node query with a baseline: %s %q", m.Phase, m.Message)
	}
}

func mannWhitneyMetric(direction v1alpha1.ComparisonDirection) v1alpha1.AnalysisMetric {
	return v1alpha1.AnalysisMetric{
		Name:   "error-rate",
		Preset: v1alpha1.MetricPresetErrorRate,
		ErrorRate: &v1alpha1.ErrorRatePreset{
			RequestMetric: "http_requests_total", ErrorSelector: `code=~"5.."`,
		},
		Baseline: &v1alpha1.BaselineComparison{
			MannWhitney: &v1alpha1.MannWhitneyTest{Confidence: ptr(0.95), Direction: direction},
		},
	}
}

func TestMeasureMannWhitney(t *testing.T) {
	high := vector(0.30, 0.31, 0.32, 0.33, 0.34, 0.35, 0.36, 0.37)
	low := vector(0.10, 0.11, 0.12, 0.13, 0.14, 0.15, 0.16, 0.17, 0.18, 0.19)
	withMean := mannWhitneyMetric(v1alpha1.DirectionIncrease)
	withMean.ThresholdRange = maxRange(0.2)
	cases := []struct {
		name             string
		metric           v1alpha1.AnalysisMetric
		canary, baseline model.Value
		phase            v1alpha1.AnalysisPhase
		message          []string
	}{
		{"canary higher fails an increase test", mannWhitneyMetric(v1alpha1.DirectionIncrease), high, low,
			v1alpha1.AnalysisFailed, []string{"canary differs from baseline (increase) at confidence 0.95", "U=80", "8 canary and 10 baseline pods"}},
		{"canary lower passes an increase test", mannWhitneyMetric(v1alpha1.DirectionIncrease), low, high,
			v1alpha1.AnalysisSuccessful, []string{"no significant increase", "U=0"}},
		{"canary lower fails a decrease test", mannWhitneyMetric(v1alpha1.DirectionDecrease), low, high,
			v1alpha1.AnalysisFailed, []string{"(decrease)"}},
		{"either direction", mannWhitneyMetric(v1alpha1.DirectionEither), low, high,
			v1alpha1.AnalysisFailed, []string{"(difference)"}},
		{"same distribution passes", mannWhitneyMetric(v1alpha1.DirectionEither), low, low,
			v1alpha1.AnalysisSuccessful, []string{"p=1"}},
		{"threshold applies to the canary mean", withMean, high, low,
			v1alpha1.AnalysisFailed, []string{"0.335 > max 0.2"}},
		{"pods without traffic are left out", mannWhitneyMetric(v1alpha1.DirectionIncrease), vector(math.NaN(), 0.1), low,
			v1alpha1.AnalysisSuccessful, []string{"1 canary and 10 baseline pods"}},
		{"no canary pod with traffic", mannWhitneyMetric(v1alpha1.DirectionIncrease), vector(math.NaN()), low,
			v1alpha1.AnalysisInconclusive, []string{"NaN for every pod"}},
		{"empty baseline", mannWhitneyMetric(v1alpha1.DirectionIncrease), high, model.Vector{},
			v1alpha1.AnalysisInconclusive, []string{"baseline returned no data"}},
		{"unknown direction", mannWhitneyMetric("sideways"), high, low,
			v1alpha1.AnalysisError, []string{`unknown direction "sideways"`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			q := &fakeQuerier{canary: answer{value: c.canary}, baseline: answer{value: c.baseline}}
			m := Measure(context.Background(), q, c.metric, testVars(), t0)
			if m.Phase != c.phase {
				t.Errorf("got %s (%s), want %s", m.Phase, m.Message, c.phase)
			}
			for _, part := range c.message {
				if !strings.Contains(m.Message, part) {
					t.Errorf("message %q lacks %q", m.Message, part)
				}
			}
			for _, sent := range q.queries {
				if !strings.HasPrefix(sent, "(sum by (pod) (rate(") {
					t.Errorf("Mann-Whitney must query per pod, sent %s", sent)
				}
			}
		})
	}
}

func TestMeasureMannWhitneyValues(t *testing.T) {
	q := &fakeQuerier{canary: answer{value: vector(1, 2, 3)}, baseline: answer{value: vector(4, 5)}}
	m := Measure(context.Background(), q, mannWhitneyMetric(v1alpha1.DirectionIncrease), testVars(), t0)
	if m.Value != "2" || m.BaselineValue != "4.5" {
		t.Errorf("value %q baseline %q, want the means 2 and 4.5", m.Value, m.BaselineValue)
	}
	if len(q.queries) != 2 {
		t.Errorf("sent %d queries, want canary and baseline", len(q.queries))
	}
}

func TestTruncateKeepsUTF8(t *testing.T) {
	s := strings.Repeat("é", 100)
	got := Truncate(s, 50)
	if len(got) > 50 || !strings.HasSuffix(got, truncationMarker) || !strings.HasPrefix(s, strings.TrimSuffix(got, truncationMarker)) {
		t.Errorf("truncate = %q", got)
	}
	if Truncate("short", 50) != "short" {
		t.Error("a short string must be kept")
	}
}

// With one canary pod a Mann-Whitney test can never be significant at 95%:
// the verdict passes, and says so rather than look like evidence.
func TestMeasureMannWhitneyTooFewPodsSaysSo(t *testing.T) {
	many := vector(0.10, 0.11, 0.12, 0.13, 0.14, 0.15, 0.16, 0.17, 0.18, 0.19)
	for _, c := range []struct {
		name   string
		canary model.Value
		warned bool
	}{
		{"one canary pod", vector(0.9), true},
		{"eight canary pods", vector(0.10, 0.11, 0.12, 0.13, 0.14, 0.15, 0.16, 0.17), false},
	} {
		t.Run(c.name, func(t *testing.T) {
			q := &fakeQuerier{canary: answer{value: c.canary}, baseline: answer{value: many}}
			m := Measure(context.Background(), q, mannWhitneyMetric(v1alpha1.DirectionIncrease), testVars(), t0)
			if m.Phase != v1alpha1.AnalysisSuccessful {
				t.Errorf("got %s (%s), want Successful", m.Phase, m.Message)
			}
			if warned := strings.Contains(m.Message, "cannot reach confidence 0.95"); warned != c.warned {
				t.Errorf("warned %v, want %v: %s", warned, c.warned, m.Message)
			}
		})
	}
}
