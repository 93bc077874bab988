package analysis

import (
	"context"
	"errors"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"text/template"
	"time"
	"unicode/utf8"

	"github.com/prometheus/common/model"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
)

// longPodNames are pods of the longest name a pod gets, as many as a
// regex of them reaches MaxRenderedQuery in a few uses; built once, as the
// fuzzer asks for them at every turn.
var longPodNames = func() []string {
	names := make([]string, 8191)
	for i := range names {
		names[i] = fmt.Sprintf("%s-%04d", strings.Repeat("p", 58), i)
	}
	return names
}()

// fuzzTarget is a target with the canary pods, nodes and stable pods listed
// comma-separated, and copies more canary pods of longPodNames.
func fuzzTarget(namespace, pods, nodes string, copies uint16) Target {
	t := testVars().Target
	t.Namespace = namespace
	t.CanaryPods = strings.Split(pods, ",")
	t.CanaryNodes = strings.Split(nodes, ",")
	t.CanaryPods = append(t.CanaryPods, longPodNames[:int(copies)%(len(longPodNames)+1)]...)
	return t
}

// executed is what text/template itself makes of query with the values
// Render gives each field: the oracle for a template Render accepts, which
// only looks up fields and writes strings, and so is safe to execute.
func executed(query string, vars Vars) (string, error) {
	values := map[string]string{}
	for _, field := range queryFields {
		if v, err := fieldValue(field, vars); err == nil {
			values[field] = v
		}
	}
	tmpl, err := template.New("query").Option("missingkey=error").Parse(query)
	if err != nil {
		return "", fmt.Errorf("parsing the template Render accepted: %w", err)
	}
	var out strings.Builder
	if err := tmpl.Execute(&out, values); err != nil {
		return "", fmt.Errorf("executing the template Render accepted: %w", err)
	}
	return out.String(), nil
}

// FuzzRenderValues renders query templates and field values the fuzzer
// draws, where FuzzRender draws templates alone. A
// template ValidateQuery refuses is refused by Render with the same error,
// at once; an accepted one renders deterministically what text/template
// renders, never over MaxRenderedQuery; every string field reads back as
// its value in a PromQL string, and the pod regex matches exactly the pods.
func FuzzRenderValues(f *testing.F) {
	for tmpl := range hostileTemplates {
		f.Add(tmpl, "agents", "canary-a", "node-1", int64(time.Minute), int64(10*time.Minute), uint16(0), false)
	}
	for _, tmpl := range []string{
		`sum(rate(http_requests_total{namespace="{{.Namespace}}",pod=~"{{.CanaryPodRegex}}"}[{{.Window}}]))`,
		`{{"{{"}}{{/* a comment */}}{{- .Name -}} {{.Interval}}`,
		`{{.CanaryNodeRegex}}`,
		`{{.CanaryPodRegex}}{{.CanaryPodRegex}}{{.CanaryPodRegex}}{{.CanaryPodRegex}}{{.CanaryPodRegex}}`,
		`{{.Namespace`, `{{end}}`, ``,
	} {
		f.Add(tmpl, "agents", "canary-b,canary-a,canary-a", "node-2,node-1", int64(time.Minute), int64(10*time.Minute), uint16(0), false)
	}
	f.Add(`x{pod=~"{{.CanaryPodRegex}}"}`, "a\"b\\c\n\x00\xff", `we"ird.*+?(pod),[x]`, "", int64(-1), int64(math.MaxInt64), uint16(0), true)
	f.Add(`{{.CanaryPodRegex}}{{.CanaryPodRegex}}{{.CanaryPodRegex}}{{.CanaryPodRegex}}{{.CanaryPodRegex}}`,
		"agents", "canary-a", "node-1", int64(time.Minute), int64(time.Hour), uint16(8191), false)
	f.Fuzz(func(t *testing.T, query, namespace, pods, nodes string, interval, window int64, copies uint16, baseline bool) {
		vars := Vars{Target: fuzzTarget(namespace, pods, nodes, copies), Interval: time.Duration(interval), Window: time.Duration(window)}
		if baseline {
			vars = vars.Baseline()
		}
		started := time.Now()
		got, err := Render(query, vars)
		if elapsed := time.Since(started); elapsed > time.Second {
			t.Fatalf("Render took %s", elapsed)
		}
		verr := ValidateQuery(query)
		var specErr *SpecError
		switch {
		case verr != nil && (err == nil || err.Error() != verr.Error()):
			t.Fatalf("ValidateQuery: %v, yet Render: %v", verr, err)
		case verr != nil && !errors.As(err, &specErr):
			t.Fatalf("Render refused the template with %v, not a *SpecError", err)
		case err != nil:
			return
		}
		if len(got) > MaxRenderedQuery {
			t.Fatalf("rendered %d bytes, over MaxRenderedQuery", len(got))
		}
		if again, _ := Render(query, vars); again != got {
			t.Fatalf("Render is not deterministic")
		}
		want, err := executed(query, vars)
		if err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Fatalf("Render(%q) = %q, text/template renders %q", Truncate(query, 200), Truncate(got, 200), Truncate(want, 200))
		}
		checkFields(t, vars)
	})
}

// checkFields renders each field alone: a string field must read back as
// its value inside a PromQL string, the pod regex must match each pod and
// nothing longer, and a duration must be whole seconds, at least one.
func checkFields(t *testing.T, vars Vars) {
	t.Helper()
	unquoted := func(field string) string {
		t.Helper()
		v, err := fieldValue(field, vars)
		if err != nil {
			t.Fatalf(".%s: %v", field, err)
		}
		s, err := strconv.Unquote(`"` + v + `"`)
		if err != nil {
			t.Fatalf(".%s renders %q, which is no PromQL string: %v", field, v, err)
		}
		return s
	}
	if got := unquoted("Namespace"); got != vars.Target.Namespace {
		t.Fatalf(".Namespace reads back as %q, not %q", got, vars.Target.Namespace)
	}
	pods := vars.Target.CanaryPods
	// A regex of thousands of pods is there for MaxRenderedQuery: matching
	// each of them against it would make this fuzzer crawl.
	if len(pods) > 64 || slices.ContainsFunc(pods, func(p string) bool { return !utf8.ValidString(p) }) {
		return
	}
	re, err := regexp.Compile("^(?:" + unquoted("CanaryPodRegex") + ")$")
	if err != nil {
		t.Fatalf(".CanaryPodRegex does not compile: %v", err)
	}
	for _, p := range pods {
		if !re.MatchString(p) {
			t.Fatalf(".CanaryPodRegex does not match pod %q", p)
		}
		if !slices.Contains(pods, p+"x") && re.MatchString(p+"x") {
			t.Fatalf(".CanaryPodRegex matches %q, which is no pod", p+"x")
		}
	}
	for _, field := range []string{"Interval", "Window"} {
		d, err := model.ParseDuration(unquoted(field))
		if err != nil || time.Duration(d) < time.Second || time.Duration(d)%time.Second != 0 {
			t.Fatalf(".%s renders %v (%v), not whole seconds of at least 1s", field, d, err)
		}
	}
}

// fuzzValues reads measurement values from the fuzzer's bytes: NaN, the
// infinities and zeros often, else a byte-sized value or, after tag 7, any
// float64 of the next eight bytes.
func fuzzValues(data []byte) []float64 {
	var out []float64
	for len(data) > 0 && len(out) < 512 {
		tag := data[0]
		data = data[1:]
		switch tag % 8 {
		case 0:
			out = append(out, math.NaN())
		case 1:
			out = append(out, math.Inf(1))
		case 2:
			out = append(out, math.Inf(-1))
		case 3:
			out = append(out, 0)
		case 7:
			var bits uint64
			for i := 0; i < 8 && len(data) > 0; i++ {
				bits = bits<<8 | uint64(data[0])
				data = data[1:]
			}
			out = append(out, math.Float64frombits(bits))
		default:
			out = append(out, float64(int8(tag))/16)
		}
	}
	return out
}

// finite maps x to a value the API can hold: JSON has no NaN nor
// infinity.
func finite(x float64) float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return 0
	}
	return x
}

// answerOf is what a fake Prometheus answers, by kind: an instant vector
// of values, a scalar, a matrix, or an error.
func answerOf(kind uint8, values []float64) answer {
	switch kind % 5 {
	case 1:
		if len(values) > 0 {
			return answer{value: scalar(values[0])}
		}
		return answer{value: &model.Scalar{}}
	case 2:
		return answer{value: model.Matrix{}}
	case 3:
		return answer{err: errors.New("connection refused")}
	}
	return answer{value: vector(values...)}
}

// samples are the values of an instant vector or scalar, none for
// anything else.
func samples(v model.Value) []float64 {
	switch v := v.(type) {
	case *model.Scalar:
		return []float64{float64(v.Value)}
	case model.Vector:
		out := make([]float64, 0, len(v))
		for _, s := range v {
			out = append(out, float64(s.Value))
		}
		return out
	}
	return nil
}

// FuzzMeasure judges answers the fuzzer draws, NaN and infinities
// included, against a threshold, a relative increase or a Mann-Whitney
// test with settings the API admits. A measurement is in one of the four
// phases; a failed query is an Error; a threshold alone judges as its
// bounds say; nothing is Successful without a canary value; a canary no
// worse than a non-negative baseline passes a relative increase.
func FuzzMeasure(f *testing.F) {
	f.Add([]byte{0x10}, []byte{0x08}, uint8(0), uint8(0), uint8(0), 0.0, 1.0, 10.0)
	f.Add([]byte{0x00}, []byte{0x08}, uint8(0), uint8(0), uint8(1), 0.0, 1.0, 10.0)
	f.Add([]byte{0x01, 0x02, 0x03}, []byte{0x01}, uint8(0), uint8(0), uint8(2), 0.0, 0.0, 0.0)
	f.Add([]byte{0x09, 0x11, 0x19, 0x21}, []byte{0x31, 0x39, 0x41}, uint8(0), uint8(0), uint8(3), 0.0, 0.0, 0.97)
	f.Add([]byte{0x00, 0x00}, []byte{}, uint8(0), uint8(0), uint8(3), 0.0, 0.0, 0.5)
	f.Add([]byte{}, []byte{}, uint8(1), uint8(3), uint8(2), -1.0, 1.0, 50.0)
	f.Add([]byte{0x07, 0x7f, 0xef, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, []byte{0x03}, uint8(0), uint8(0), uint8(2), 0.0, 0.0, 100.0)
	f.Fuzz(func(t *testing.T, canaryData, baselineData []byte, canaryKind, baselineKind, judgedBy uint8, low, high, setting float64) {
		canary, baseline := fuzzValues(canaryData), fuzzValues(baselineData)
		low, high, setting = finite(low), finite(high), finite(setting)
		m := v1alpha1.AnalysisMetric{Name: "m", Query: `q{pod=~"{{.CanaryPodRegex}}"}`}
		mode := judgedBy % 4
		if mode <= 1 || judgedBy&0x10 != 0 {
			m.ThresholdRange = &v1alpha1.ThresholdRange{Min: ptr(min(low, high)), Max: ptr(max(low, high))}
		}
		switch mode {
		case 1, 2:
			m.Baseline = &v1alpha1.BaselineComparison{MaxRelativeIncrease: ptr(math.Abs(setting))}
		case 3:
			m.Baseline = &v1alpha1.BaselineComparison{MannWhitney: &v1alpha1.MannWhitneyTest{
				Confidence: ptr(0.5 + math.Mod(math.Abs(setting), 0.499)),
				Direction:  []v1alpha1.ComparisonDirection{"", v1alpha1.DirectionIncrease, v1alpha1.DirectionDecrease, v1alpha1.DirectionEither}[judgedBy/32%4],
			}}
		}
		q := &fakeQuerier{canary: answerOf(canaryKind, canary), baseline: answerOf(baselineKind, baseline)}
		got := Measure(context.Background(), q, m, testVars(), t0)
		if again := Measure(context.Background(), q, m, testVars(), t0); again.Phase != got.Phase || again.Message != got.Message {
			t.Fatalf("Measure is not deterministic: %s then %s", got.Phase, again.Phase)
		}
		if !slices.Contains(measurementPhases, got.Phase) {
			t.Fatalf("phase %q", got.Phase)
		}
		explain := func(format string, args ...any) {
			t.Helper()
			t.Fatalf("%s\nmetric %+v, baseline %+v\ncanary %v (kind %d), baseline %v (kind %d)\ngot %s: %s",
				fmt.Sprintf(format, args...), m.ThresholdRange, m.Baseline, canary, canaryKind%5, baseline, baselineKind%5, got.Phase, got.Message)
		}
		if q.canary.err != nil && got.Phase != v1alpha1.AnalysisError {
			explain("a failed canary query is not an Error")
		}
		values, baseValues := samples(q.canary.value), samples(q.baseline.value)
		usable := slices.ContainsFunc(values, func(x float64) bool { return !math.IsNaN(x) })
		if got.Phase == v1alpha1.AnalysisSuccessful && !usable {
			explain("Successful without a canary value")
		}
		if m.Baseline == nil && len(values) == 1 && !math.IsNaN(values[0]) {
			x, r := values[0], m.ThresholdRange
			want := v1alpha1.AnalysisSuccessful
			if x < *r.Min || x > *r.Max {
				want = v1alpha1.AnalysisFailed
			}
			if got.Phase != want {
				explain("%v against [%v, %v] should be %s", x, *r.Min, *r.Max, want)
			}
		}
		if m.ThresholdRange == nil && mode == 2 && got.Phase == v1alpha1.AnalysisFailed && len(values) == 1 && len(baseValues) == 1 &&
			baseValues[0] >= 0 && values[0] <= baseValues[0] {
			explain("a canary no worse than its baseline failed a relative increase")
		}
	})
}

// FuzzMannWhitneyU tests samples the fuzzer draws, infinities and huge
// values included: NaN or an empty sample is an error, else U is within
// [0, nx*ny], P a probability, and swapping the samples mirrors the test.
func FuzzMannWhitneyU(f *testing.F) {
	f.Add([]byte{0x09, 0x11, 0x19}, []byte{0x21, 0x29}, uint8(0), uint16(0))
	f.Add([]byte{0x01, 0x02, 0x01}, []byte{0x02, 0x03}, uint8(2), uint16(0))
	f.Add([]byte{0x03, 0x03}, []byte{0x03}, uint8(1), uint16(0))
	f.Add([]byte{0x00}, []byte{0x03}, uint8(0), uint16(0))
	f.Add([]byte{}, []byte{0x03}, uint8(3), uint16(0))
	f.Add([]byte{0x09, 0x11}, []byte{0x19}, uint8(2), uint16(5000))
	f.Fuzz(func(t *testing.T, xData, yData []byte, alt uint8, repeat uint16) {
		x, y := fuzzValues(xData), fuzzValues(yData)
		// Many tied pods: the tie correction at scale.
		for i := range int(repeat) % 5001 {
			if len(x) > 0 {
				x = append(x, x[i%len(x)])
			}
		}
		a := Alternative(alt % 4)
		r, err := MannWhitneyU(x, y, a)
		invalid := len(x) == 0 || len(y) == 0 || a > AlternativeTwoSided ||
			slices.ContainsFunc(slices.Concat(x, y), math.IsNaN)
		if invalid != (err != nil) {
			t.Fatalf("MannWhitneyU(%v, %v, %d): %v", x, y, a, err)
		}
		if err != nil {
			return
		}
		nxny := float64(len(x)) * float64(len(y))
		if !(r.P >= 0 && r.P <= 1) || !(r.U >= 0 && r.U <= nxny) || math.IsNaN(r.Z) {
			t.Fatalf("MannWhitneyU(%v, %v, %d) = %+v", x, y, a, r)
		}
		mirror := map[Alternative]Alternative{AlternativeGreater: AlternativeLess, AlternativeLess: AlternativeGreater, AlternativeTwoSided: AlternativeTwoSided}
		back, err := MannWhitneyU(y, x, mirror[a])
		if err != nil || back.U+r.U != nxny || math.Abs(back.P-r.P) > 1e-9 {
			t.Fatalf("swapped: %+v, %v; forward %+v", back, err, r)
		}
	})
}

// FuzzRecord folds rounds of measurements the fuzzer draws into the status
// of an analysis, from a recorded status whose counters may be anything a
// status holds. Phases are the documented ones; a metric whose every
// measurement errored is never Successful; Failed is sticky; the analysis
// is Successful only when every deciding metric is; the status stays
// bounded.
func FuzzRecord(f *testing.F) {
	f.Add([]byte{0, 0, 0, 0}, uint8(2), uint8(0), int32(0), int32(0), int32(0), false)
	f.Add([]byte{3, 3, 3, 3, 3, 3, 3}, uint8(1), uint8(0), int32(0), int32(0), int32(3), false)
	f.Add([]byte{1, 0, 0, 0, 0}, uint8(1), uint8(0), int32(0), int32(0), int32(0), false)
	f.Add([]byte{2, 2, 0, 2, 2, 2}, uint8(3), uint8(5), int32(1), int32(1), int32(0), true)
	f.Add([]byte{1, 0}, uint8(1), uint8(0), int32(0), int32(math.MaxInt32), int32(0), true)
	f.Add([]byte{3, 3, 0}, uint8(1), uint8(0), int32(math.MaxInt32), int32(0), int32(math.MaxInt32), true)
	f.Fuzz(func(t *testing.T, rounds []byte, metrics, dryRun uint8, limit, recordedFailed, recordedErrors int32, recorded bool) {
		spec := analysisSpec("m0", "m1", "m2", "m3")
		spec.Metrics = spec.Metrics[:1+int(metrics)%4]
		for i := range spec.Metrics {
			spec.Metrics[i].DryRun = dryRun&(1<<i) != 0
		}
		spec.DryRun = dryRun&0x10 != 0
		limit = max(limit, 0)
		spec.FailureLimit, spec.InconclusiveLimit, spec.ConsecutiveErrorLimit = &limit, &limit, &limit

		var st *v1alpha1.AnalysisStatus
		if recorded {
			// A status the controller could have written: its counters are
			// the recorded ones, whatever they grew to.
			failed, errs := max(recordedFailed, 0), max(recordedErrors, 0)
			st = &v1alpha1.AnalysisStatus{}
			for _, m := range spec.Metrics {
				r := v1alpha1.MetricResult{Name: m.Name, Failed: failed, Error: errs, ConsecutiveError: errs,
					Count: max(failed, errs)}
				r.Phase = metricPhase(&r, limitsOf(spec), nil)
				st.Metrics = append(st.Metrics, r)
			}
		}
		onlyErrors := map[string]bool{}
		for _, m := range spec.Metrics {
			onlyErrors[m.Name] = !recorded
		}
		for round, b := range rounds {
			ms := map[string]v1alpha1.Measurement{}
			for i, m := range spec.Metrics {
				if b&(1<<(4+i)) != 0 {
					continue // not due this round
				}
				phase := measurementPhases[(int(b)+i)%4]
				onlyErrors[m.Name] = onlyErrors[m.Name] && phase == v1alpha1.AnalysisError
				ms[m.Name] = v1alpha1.Measurement{Phase: phase, Message: strings.Repeat("m", int(b)*8),
					Query: strings.Repeat("q", int(b)*16), Time: metav1.NewTime(t0.Add(time.Duration(round) * time.Minute))}
			}
			next := Record(spec, st, ms)
			checkRecord(t, spec, st, next, ms, onlyErrors)
			st = next
		}
	})
}

var metricPhases = []v1alpha1.AnalysisPhase{
	v1alpha1.AnalysisPending, v1alpha1.AnalysisRunning, v1alpha1.AnalysisSuccessful,
	v1alpha1.AnalysisFailed, v1alpha1.AnalysisInconclusive, v1alpha1.AnalysisError,
}

// checkRecord checks the status Record made of before and the
// measurements ms; onlyErrors names the metrics every measurement of which
// errored.
func checkRecord(t *testing.T, spec *v1alpha1.CanaryAnalysis, before, after *v1alpha1.AnalysisStatus,
	ms map[string]v1alpha1.Measurement, onlyErrors map[string]bool,
) {
	t.Helper()
	if !slices.Contains(metricPhases, after.Phase) {
		t.Fatalf("analysis phase %q", after.Phase)
	}
	allSuccessful := true
	for i, r := range after.Metrics {
		m := spec.Metrics[i]
		switch {
		case !slices.Contains(metricPhases, r.Phase):
			t.Fatalf("metric %s phase %q", r.Name, r.Phase)
		case r.Phase == v1alpha1.AnalysisSuccessful && onlyErrors[r.Name] && r.Count > 0:
			t.Fatalf("metric %s is Successful, yet every measurement of it errored: %+v", r.Name, r)
		case before != nil && before.Metrics[i].Phase == v1alpha1.AnalysisFailed && r.Phase != v1alpha1.AnalysisFailed:
			t.Fatalf("metric %s was Failed (%d failures) and is now %s (%d failures)", r.Name, before.Metrics[i].Failed, r.Phase, r.Failed)
		case before != nil && before.Metrics[i].Phase == v1alpha1.AnalysisError && ms[r.Name].Phase == v1alpha1.AnalysisError &&
			r.Phase != v1alpha1.AnalysisError && r.Phase != v1alpha1.AnalysisFailed:
			t.Fatalf("metric %s was Error (%d in a row), errored again and is now %s (%d in a row)",
				r.Name, before.Metrics[i].ConsecutiveError, r.Phase, r.ConsecutiveError)
		case len(r.Measurements) > MaxMeasurements:
			t.Fatalf("metric %s keeps %d measurements", r.Name, len(r.Measurements))
		}
		for j, ms := range r.Measurements {
			if len(ms.Query) > MaxQueryLength || len(ms.Message) > maxMessageLength || (ms.Query != "" && j != len(r.Measurements)-1) {
				t.Fatalf("metric %s measurement %d keeps a query of %d bytes and a message of %d", r.Name, j, len(ms.Query), len(ms.Message))
			}
		}
		if !spec.DryRun && !m.DryRun && r.Phase != v1alpha1.AnalysisSuccessful {
			allSuccessful = false
		}
	}
	if after.Phase == v1alpha1.AnalysisSuccessful && !allSuccessful {
		t.Fatalf("the analysis is Successful, yet a deciding metric is not: %+v", after.Metrics)
	}
}
