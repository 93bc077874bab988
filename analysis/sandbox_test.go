package analysis

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
)

// hostileTemplates are templates that do more than look up a field: each
// would burn CPU or memory, reach a function, or run logic the controller
// does not offer.
var hostileTemplates = map[string]string{
	`{{range 3000000000}}{{end}}vector(0)`:   "{{range ...}}",
	`{{range 1000000000000}}x{{end}}`:        "{{range ...}}",
	`{{range $i, $x := 5}}{{$x}}{{end}}`:     "{{range ...}}",
	`{{printf "%0999999999d" 1}}`:            `{{printf "%0999999999d" 1}}`,
	`{{len .Name}}`:                          "{{len .Name}}",
	`{{print}}`:                              "{{print}}",
	`{{.Name | printf "%s"}}`:                `{{.Name | printf "%s"}}`,
	`{{$x := .Name}}{{$x}}`:                  "{{$x := .Name}}",
	`{{$}}`:                                  "{{$}}",
	`{{.}}`:                                  "{{.}}",
	`{{.Name.Length}}`:                       "{{.Name.Length}}",
	`{{(.Name)}}`:                            "{{(.Name)}}",
	`{{1}}`:                                  "{{1}}",
	`{{true}}`:                               "{{true}}",
	`{{if .Name}}x{{end}}`:                   "{{if ...}}",
	`{{with .Name}}{{.}}{{end}}`:             "{{with ...}}",
	`{{template "x"}}`:                       "{{template ...}}",
	`{{define "x"}}{{.Name}}{{end}}`:         "{{define ...}} or {{block ...}}",
	`{{block "x" .}}{{.Name}}{{end}}`:        "{{define ...}} or {{block ...}}",
	`{{range .Name}}{{break}}{{end}}`:        "{{range ...}}",
	`up{pod=~"{{index .CanaryPodRegex 0}}"}`: "{{index .CanaryPodRegex 0}}",
}

func TestRenderRefusesAnythingButFieldsAndStrings(t *testing.T) {
	for tmpl, action := range hostileTemplates {
		started := time.Now()
		got, err := Render(tmpl, testVars())
		if elapsed := time.Since(started); elapsed > time.Second {
			t.Errorf("Render(%q) took %s", tmpl, elapsed)
		}
		if err == nil {
			t.Errorf("Render(%q) = %q, want an error", Truncate(tmpl, 80), Truncate(got, 80))
			continue
		}
		want := "query template: " + action + " is not allowed: a query template may only use the fields .Namespace, .Name,"
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Render(%q) error %q lacks %q", tmpl, err, want)
		}
		if verr := ValidateQuery(tmpl); verr == nil || verr.Error() != err.Error() {
			t.Errorf("ValidateQuery(%q) = %v, want %v", tmpl, verr, err)
		}
		var specErr *SpecError
		if !errors.As(err, &specErr) {
			t.Errorf("Render(%q) error %v is not a *SpecError", tmpl, err)
		}
	}
}

func TestValidateQueryRefusesUnknownFieldsBeforeAnyQuery(t *testing.T) {
	for _, tmpl := range []string{"{{.Namspace}}", "{{.canaryNodeRegex}}", "{{.Target}}", "{{.Baseline}}", `{{"x"}}{{.Vars}}`} {
		err := ValidateQuery(tmpl)
		var specErr *SpecError
		if !errors.As(err, &specErr) {
			t.Fatalf("ValidateQuery(%q) = %v, want a *SpecError", tmpl, err)
		}
		for _, part := range []string{"unknown field", ".Namespace", ".Window"} {
			if !strings.Contains(err.Error(), part) {
				t.Errorf("ValidateQuery(%q) error %q lacks %q", tmpl, err, part)
			}
		}
	}
	if err := ValidateQuery("{{.Namespace"); err == nil {
		t.Error("an unclosed action passed validation")
	}
}

func TestRenderKeepsFieldsStringsCommentsAndTrimming(t *testing.T) {
	cases := map[string]string{
		`{{"{{"}}.Name}}`:                     "{{.Name}}",
		"{{`{{`}}":                            "{{",
		`{{/* the canary pods */}}up`:         "up",
		"x {{- .Name -}} y":                   "xnode-agenty",
		`{{.Namespace}}{{.Namespace}}`:        "agentsagents",
		`sum(up{pod=~"{{.CanaryPodRegex}}"})`: `sum(up{pod=~"canary-a|canary-b"})`,
	}
	for tmpl, want := range cases {
		got, err := Render(tmpl, testVars())
		if err != nil || got != want {
			t.Errorf("Render(%q) = %q, %v; want %q", tmpl, got, err, want)
		}
		if err := ValidateQuery(tmpl); err != nil {
			t.Errorf("ValidateQuery(%q): %v", tmpl, err)
		}
	}
}

func TestRenderBoundsTheQuerySize(t *testing.T) {
	vars := testVars()
	// 5,000 distinct names of 63 characters, as long as a pod name gets:
	// the regex keeps each name once, so they must all differ.
	for i := range 5000 {
		vars.Target.StablePods = append(vars.Target.StablePods, fmt.Sprintf("%s-%05d", strings.Repeat("x", 57), i))
	}
	// The errorRate preset uses the regex four times: a fleet of 5,000
	// pods with the longest names still fits.
	preset, err := QueryOf(errorRateMetric(`code=~"5.."`), false)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Render(preset, vars.Baseline()); err != nil {
		t.Errorf("the errorRate preset over 5,000 pods: %v", err)
	}

	tooLong := strings.Repeat(`{{.StablePodRegex}}`, MaxRenderedQuery/len(alternation(vars.Target.StablePods))+1)
	got, err := Render(tooLong, vars)
	if err == nil || !strings.Contains(err.Error(), "over the limit of 2097152 bytes") {
		t.Errorf("a query of %d bytes rendered: %v", len(got), err)
	}
	var specErr *SpecError
	if errors.As(err, &specErr) {
		t.Errorf("the size of a query depends on the pods, not only the spec: %v", err)
	}
}

func TestCheckMetrics(t *testing.T) {
	rankedErrors := errorRateMetric(`msg="{{.Namespace}}"`)
	rankedErrors.Baseline = &v1alpha1.BaselineComparison{MannWhitney: &v1alpha1.MannWhitneyTest{}}
	good := []v1alpha1.AnalysisMetric{
		{Name: "restarts", Preset: v1alpha1.MetricPresetRestarts},
		{Name: "restarts-baseline", Preset: v1alpha1.MetricPresetRestarts, Baseline: &v1alpha1.BaselineComparison{MaxRelativeIncrease: ptr(10.0)}},
		rankedErrors,
		{Name: "nodes", Query: `up{node=~"{{.CanaryNodeRegex}}"}`, ThresholdRange: maxRange(1)},
	}
	spec := &v1alpha1.CanaryAnalysis{Metrics: good}
	if err := CheckMetrics(spec); err != nil {
		t.Errorf("a good spec: %v", err)
	}
	if err := CheckMetrics(nil); err != nil {
		t.Errorf("no analysis: %v", err)
	}

	bad := map[string]v1alpha1.AnalysisMetric{
		"is not allowed":                           {Name: "loop", Query: `{{range 9}}{{end}}`, ThresholdRange: maxRange(1)},
		"unknown field .Pods":                      {Name: "field", Query: `{{.Pods}}`, ThresholdRange: maxRange(1)},
		"cannot use .CanaryNodeRegex":              {Name: "nodes", Query: `up{node=~"{{.CanaryNodeRegex}}"}`, Baseline: &v1alpha1.BaselineComparison{MaxRelativeIncrease: ptr(1.0)}},
		"sets both query and preset":               {Name: "both", Query: "up", Preset: v1alpha1.MetricPresetRestarts},
		"neither thresholdRange nor baseline":      {Name: "nothing", Query: "up"},
		"needs maxRelativeIncrease or mannWhitney": {Name: "empty-baseline", Query: "up", Baseline: &v1alpha1.BaselineComparison{}},
		`unknown direction "sideways"`: {Name: "direction", Query: "up", Baseline: &v1alpha1.BaselineComparison{
			MannWhitney: &v1alpha1.MannWhitneyTest{Direction: "sideways"}}},
		"errorRate.requestMetric": {Name: "rate", Preset: v1alpha1.MetricPresetErrorRate,
			ErrorRate: &v1alpha1.ErrorRatePreset{RequestMetric: "1x", ErrorSelector: `code="500"`}, ThresholdRange: maxRange(1)},
	}
	for want, m := range bad {
		spec := spec.DeepCopy()
		spec.Metrics = append(spec.Metrics, m)
		err := CheckMetrics(spec)
		var specErr *SpecError
		if !errors.As(err, &specErr) || specErr.Metric != m.Name || !strings.Contains(err.Error(), want) ||
			!strings.Contains(err.Error(), "metric "+m.Name+": ") {
			t.Errorf("metric %s: got %v, want a *SpecError of that metric saying %q", m.Name, err, want)
		}
	}
}

// A metric whose spec is wrong is Error from its first measurement whatever
// consecutiveErrorLimit allows: measuring it again can never help. Its
// message says why, and Prometheus is never asked.
func TestSpecErrorIsErrorAtOnce(t *testing.T) {
	spec := &v1alpha1.CanaryAnalysis{
		ConsecutiveErrorLimit: ptr[int32](10),
		Metrics: []v1alpha1.AnalysisMetric{
			{Name: "ok", Query: "up", ThresholdRange: maxRange(1)},
			{Name: "loop", Query: `{{range 3000000000}}{{end}}vector(0)`, ThresholdRange: maxRange(1)},
		},
	}
	q := &fakeQuerier{canary: answer{value: vector(0)}}
	st, _ := Analyzer{Querier: q}.Step(t.Context(), spec, nil, testVars().Target, t0, t0)
	if st.Phase != v1alpha1.AnalysisError {
		t.Fatalf("phase %s (%s), want Error", st.Phase, st.Message)
	}
	loop := st.Metrics[1]
	if loop.Phase != v1alpha1.AnalysisError || loop.Count != 1 || loop.Measurements[0].Phase != v1alpha1.AnalysisError {
		t.Errorf("metric loop: %+v", loop)
	}
	for _, message := range []string{st.Message, loop.Message} {
		if !strings.Contains(message, "{{range ...}} is not allowed") {
			t.Errorf("message %q does not say what is wrong", message)
		}
	}
	if !strings.Contains(st.Message, "loop: query template:") || !strings.Contains(st.Message, "fix the metric") {
		t.Errorf("message %q does not say to fix the spec", st.Message)
	}
	if len(q.queries) != 1 || q.queries[0] != "up" {
		t.Errorf("queries sent: %q", q.queries)
	}

	// Fixing the spec clears the error without waiting for a measurement.
	spec.Metrics[1].Query = "up"
	if st := Record(spec, st, nil); st.Metrics[1].Phase == v1alpha1.AnalysisError {
		t.Errorf("still Error after the fix: %s", st.Message)
	}
}

// The spec error shows even before the first measurement, during the
// initial delay.
func TestSpecErrorShowsBeforeAnyMeasurement(t *testing.T) {
	spec := &v1alpha1.CanaryAnalysis{Metrics: []v1alpha1.AnalysisMetric{{Name: "field", Query: `{{.Pods}}`, ThresholdRange: maxRange(1)}}}
	st := Record(spec, nil, nil)
	if st.Phase != v1alpha1.AnalysisError || !strings.Contains(st.Message, "unknown field .Pods") {
		t.Errorf("%s: %s", st.Phase, st.Message)
	}
}

func FuzzRender(f *testing.F) {
	for tmpl := range hostileTemplates {
		f.Add(tmpl)
	}
	for _, tmpl := range []string{
		`sum(rate(x{namespace="{{.Namespace}}",pod=~"{{.CanaryPodRegex}}"}[{{.Window}}]))`,
		`{{"{{"}}{{.Interval}}`, `{{/* c */}}{{- .Name -}}`, "{{", "}}", "{{.Namespace", `{{"\x00"}}`,
	} {
		f.Add(tmpl)
	}
	vars := testVars()
	f.Fuzz(func(t *testing.T, tmpl string) {
		started := time.Now()
		out, err := Render(tmpl, vars)
		if elapsed := time.Since(started); elapsed > time.Second {
			t.Fatalf("Render(%q) took %s", tmpl, elapsed)
		}
		if err != nil {
			return
		}
		// Every action is a field or a constant of the template: the
		// query grows by at most the values of the fields.
		if limit := len(tmpl) * (1 + len(alternation(vars.Target.StablePods))); len(out) > limit {
			t.Fatalf("Render(%q) made %d bytes", tmpl, len(out))
		}
		if ValidateQuery(tmpl) != nil {
			t.Fatalf("Render(%q) succeeded where ValidateQuery fails", tmpl)
		}
	})
}
