package analysis

import (
	"strings"
	"testing"
	"time"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
)

const (
	S = v1alpha1.AnalysisSuccessful
	F = v1alpha1.AnalysisFailed
	I = v1alpha1.AnalysisInconclusive
	E = v1alpha1.AnalysisError
)

func analysisSpec(names ...string) *v1alpha1.CanaryAnalysis {
	spec := &v1alpha1.CanaryAnalysis{}
	for _, n := range names {
		spec.Metrics = append(spec.Metrics, v1alpha1.AnalysisMetric{Name: n, Query: "q", ThresholdRange: maxRange(1)})
	}
	return spec
}

// recordAll records the phases of each metric one reconcile at a time, a
// minute apart; a metric with fewer phases is not measured in later rounds.
func recordAll(spec *v1alpha1.CanaryAnalysis, phases map[string][]v1alpha1.AnalysisPhase) *v1alpha1.AnalysisStatus {
	var st *v1alpha1.AnalysisStatus
	for round := 0; ; round++ {
		ms := map[string]v1alpha1.Measurement{}
		for name, ps := range phases {
			if round < len(ps) {
				ms[name] = measurementAt(ps[round], t0.Add(time.Duration(round)*time.Minute))
			}
		}
		if len(ms) == 0 && round > 0 {
			return st
		}
		st = Record(spec, st, ms)
	}
}

func TestRecordPhases(t *testing.T) {
	limited := func(failure, inconclusive, consecutiveError int32) *v1alpha1.CanaryAnalysis {
		spec := analysisSpec("m")
		spec.FailureLimit = &failure
		spec.InconclusiveLimit = &inconclusive
		spec.ConsecutiveErrorLimit = &consecutiveError
		return spec
	}
	cases := []struct {
		name    string
		spec    *v1alpha1.CanaryAnalysis
		phases  []v1alpha1.AnalysisPhase
		phase   v1alpha1.AnalysisPhase
		message []string
	}{
		{"nothing measured", analysisSpec("m"), nil, v1alpha1.AnalysisPending, []string{"no measurement yet"}},
		{"one success", analysisSpec("m"), []v1alpha1.AnalysisPhase{S}, S, []string{"1 metric successful"}},
		{"failure over the default limit 0", analysisSpec("m"), []v1alpha1.AnalysisPhase{S, F}, F,
			[]string{"m: measured Failed (1 of 2 measurements failed, failureLimit 0)"}},
		{"failure within the limit", limited(1, 0, 4), []v1alpha1.AnalysisPhase{F}, v1alpha1.AnalysisRunning, nil},
		{"failure within the limit then success", limited(1, 0, 4), []v1alpha1.AnalysisPhase{F, S}, S, nil},
		{"failures over the limit", limited(1, 0, 4), []v1alpha1.AnalysisPhase{F, S, F}, F,
			[]string{"2 of 3 measurements failed, failureLimit 1"}},
		{"failed is sticky", analysisSpec("m"), []v1alpha1.AnalysisPhase{F, S, S}, F,
			[]string{"m: measured Failed (1 of 3"}},
		{"inconclusive over the default limit 0", analysisSpec("m"), []v1alpha1.AnalysisPhase{I}, I,
			[]string{"1 inconclusive in a row, inconclusiveLimit 0"}},
		{"inconclusive within the limit", limited(0, 2, 4), []v1alpha1.AnalysisPhase{I, I}, v1alpha1.AnalysisRunning, nil},
		{"inconclusive over the limit", limited(0, 2, 4), []v1alpha1.AnalysisPhase{I, I, I}, I,
			[]string{"3 inconclusive in a row, inconclusiveLimit 2"}},
		{"inconclusive resumes when data returns", limited(0, 1, 4), []v1alpha1.AnalysisPhase{I, I, S}, S, nil},
		{"inconclusive runs do not add up", limited(0, 1, 4), []v1alpha1.AnalysisPhase{I, S, I, S, I}, v1alpha1.AnalysisRunning, nil},
		{"errors within the default limit 4", analysisSpec("m"), []v1alpha1.AnalysisPhase{E, E, E, E}, v1alpha1.AnalysisRunning, nil},
		{"errors over the default limit 4", analysisSpec("m"), []v1alpha1.AnalysisPhase{E, E, E, E, E}, E,
			[]string{"5 errors in a row, consecutiveErrorLimit 4"}},
		{"an error run resets", analysisSpec("m"), []v1alpha1.AnalysisPhase{E, E, E, E, S, E, E}, v1alpha1.AnalysisRunning, nil},
		{"every measurement errored never passes", limited(0, 0, 100), []v1alpha1.AnalysisPhase{E, E, E, E, E, E, E, E, E, E, E, E}, v1alpha1.AnalysisRunning,
			[]string{"0 of 1 metric successful"}},
		{"consecutiveErrorLimit 0", limited(0, 0, 0), []v1alpha1.AnalysisPhase{S, E}, E, nil},
		{"errors then inconclusive", analysisSpec("m"), []v1alpha1.AnalysisPhase{E, I}, I, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			st := recordAll(c.spec, map[string][]v1alpha1.AnalysisPhase{"m": c.phases})
			if st.Phase != c.phase || st.Metrics[0].Phase != c.phase {
				t.Errorf("overall %s, metric %s, want %s (%s)", st.Phase, st.Metrics[0].Phase, c.phase, st.Message)
			}
			for _, part := range c.message {
				if !strings.Contains(st.Message, part) {
					t.Errorf("message %q lacks %q", st.Message, part)
				}
			}
		})
	}
}

func TestRecordCounters(t *testing.T) {
	st := recordAll(analysisSpec("m"), map[string][]v1alpha1.AnalysisPhase{"m": {S, F, I, I, E, E, E, S, I, I}})
	r := st.Metrics[0]
	got := [7]int32{r.Count, r.Successful, r.Failed, r.Inconclusive, r.Error, r.ConsecutiveError, r.ConsecutiveInconclusive}
	if want := [7]int32{10, 2, 1, 4, 3, 0, 2}; got != want {
		t.Errorf("count, successful, failed, inconclusive, error, consecutive error, consecutive inconclusive = %v, want %v", got, want)
	}
	if r.Message != "measured Inconclusive" {
		t.Errorf("metric message %q is not the newest measurement's", r.Message)
	}
}

func TestRecordOverallAcrossMetrics(t *testing.T) {
	dryRunSpec := func(global bool, dryRun ...string) *v1alpha1.CanaryAnalysis {
		spec := analysisSpec("a", "b", "c")
		spec.DryRun = global
		for i := range spec.Metrics {
			for _, n := range dryRun {
				if spec.Metrics[i].Name == n {
					spec.Metrics[i].DryRun = true
				}
			}
		}
		return spec
	}
	cases := []struct {
		name    string
		spec    *v1alpha1.CanaryAnalysis
		phases  map[string][]v1alpha1.AnalysisPhase
		phase   v1alpha1.AnalysisPhase
		message []string
		absent  []string
	}{
		{"all successful", dryRunSpec(false), map[string][]v1alpha1.AnalysisPhase{"a": {S}, "b": {S}, "c": {S}}, S,
			[]string{"3 metrics successful"}, nil},
		{"failed beats error beats inconclusive", dryRunSpec(false), map[string][]v1alpha1.AnalysisPhase{"a": {I}, "b": {E, E, E, E, E}, "c": {F}}, F,
			[]string{"c: "}, []string{"a: ", "b: "}},
		{"error beats inconclusive", dryRunSpec(false), map[string][]v1alpha1.AnalysisPhase{"a": {I}, "b": {E, E, E, E, E}, "c": {S}}, E,
			[]string{"b: "}, nil},
		{"several failures are all named", dryRunSpec(false), map[string][]v1alpha1.AnalysisPhase{"a": {F}, "b": {F}, "c": {S}}, F,
			[]string{"a: ", "b: "}, nil},
		{"one metric not yet successful", dryRunSpec(false), map[string][]v1alpha1.AnalysisPhase{"a": {S}, "b": {S}}, v1alpha1.AnalysisRunning,
			[]string{"2 of 3 metrics successful", "c: not measured yet"}, nil},
		{"a dry-run failure does not decide", dryRunSpec(false, "c"), map[string][]v1alpha1.AnalysisPhase{"a": {S}, "b": {S}, "c": {F}}, S,
			[]string{"2 metrics successful", "dry run, not deciding: c Failed: measured Failed"}, nil},
		{"a dry-run metric need not succeed", dryRunSpec(false, "c"), map[string][]v1alpha1.AnalysisPhase{"a": {S}, "b": {S}}, S,
			[]string{"c Pending: not measured yet"}, nil},
		{"a deciding failure still decides", dryRunSpec(false, "c"), map[string][]v1alpha1.AnalysisPhase{"a": {F}, "b": {S}, "c": {F}}, F,
			[]string{"a: measured Failed", "dry run, not deciding"}, nil},
		{"global dry run", dryRunSpec(true), map[string][]v1alpha1.AnalysisPhase{"a": {F}, "b": {E, E, E, E, E}}, S,
			[]string{"dry run: no metric decides"}, nil},
		{"every metric dry run, nothing measured", dryRunSpec(false, "a", "b", "c"), nil, S,
			[]string{"dry run"}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			st := recordAll(c.spec, c.phases)
			if st.Phase != c.phase {
				t.Errorf("overall %s, want %s (%s)", st.Phase, c.phase, st.Message)
			}
			for _, part := range c.message {
				if !strings.Contains(st.Message, part) {
					t.Errorf("message %q lacks %q", st.Message, part)
				}
			}
			for _, part := range c.absent {
				if strings.Contains(st.Message, part) {
					t.Errorf("message %q names %q, which does not decide", st.Message, part)
				}
			}
		})
	}
}

func TestRecordIsBounded(t *testing.T) {
	spec := analysisSpec("m")
	longQuery := strings.Repeat("x", 100_000)
	var st *v1alpha1.AnalysisStatus
	for i := range 25 {
		m := measurementAt(S, t0.Add(time.Duration(i)*time.Minute))
		m.Query = longQuery
		m.Message = strings.Repeat("y", 100_000)
		st = Record(spec, st, map[string]v1alpha1.Measurement{"m": m})
	}
	r := st.Metrics[0]
	if len(r.Measurements) != MaxMeasurements || r.Count != 25 {
		t.Fatalf("kept %d measurements of %d, want %d", len(r.Measurements), r.Count, MaxMeasurements)
	}
	if !r.Measurements[MaxMeasurements-1].Time.Time.Equal(t0.Add(24 * time.Minute)) {
		t.Errorf("newest measurement is not last: %s", r.Measurements[MaxMeasurements-1].Time)
	}
	for i, m := range r.Measurements[:MaxMeasurements-1] {
		if m.Query != "" {
			t.Errorf("measurement %d keeps its query", i)
		}
	}
	newestQuery := r.Measurements[MaxMeasurements-1].Query
	if len(newestQuery) > MaxQueryLength || !strings.HasSuffix(newestQuery, truncationMarker) {
		t.Errorf("newest query is %d bytes, ends %q", len(newestQuery), newestQuery[len(newestQuery)-20:])
	}
	if len(r.Message) > 1024 || len(st.Message) > 2048 {
		t.Errorf("messages of %d and %d bytes", len(r.Message), len(st.Message))
	}
}

func TestRecordLeavesItsInputAlone(t *testing.T) {
	spec := analysisSpec("m", "gone")
	before := Record(spec, nil, map[string]v1alpha1.Measurement{"m": measurementAt(S, t0), "gone": measurementAt(S, t0)})
	snapshot := before.DeepCopy()
	after := Record(analysisSpec("m", "new"), before, map[string]v1alpha1.Measurement{"m": measurementAt(F, t0.Add(time.Minute)), "unknown": measurementAt(S, t0)})
	if before.Metrics[0].Count != snapshot.Metrics[0].Count || len(before.Metrics[0].Measurements) != 1 {
		t.Error("Record modified the status it was given")
	}
	if len(after.Metrics) != 2 || after.Metrics[0].Name != "m" || after.Metrics[1].Name != "new" {
		t.Fatalf("metrics follow the spec, got %+v", after.Metrics)
	}
	if after.Metrics[0].Count != 2 || after.Metrics[1].Phase != v1alpha1.AnalysisPending {
		t.Errorf("m counted %d, new is %s", after.Metrics[0].Count, after.Metrics[1].Phase)
	}
}
