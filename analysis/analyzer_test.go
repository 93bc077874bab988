package analysis

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	promv1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/prometheus/common/model"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
)

func TestAnalyzerStep(t *testing.T) {
	spec := &v1alpha1.CanaryAnalysis{
		Interval:     &metav1.Duration{Duration: 2 * time.Minute},
		InitialDelay: &metav1.Duration{Duration: time.Minute},
		Metrics: []v1alpha1.AnalysisMetric{
			{Name: "restarts", Preset: v1alpha1.MetricPresetRestarts},
			{Name: "load", Query: `avg(load{pod=~"{{.CanaryPodRegex}}"}[{{.Window}}])`, ThresholdRange: maxRange(1)},
		},
	}
	q := &fakeQuerier{canary: answer{value: vector(0)}}
	metrics := NewMetrics(nil)
	a := Analyzer{Querier: q, Metrics: metrics}
	target := testVars().Target

	st, next := a.Step(context.Background(), spec, nil, target, t0, t0.Add(30*time.Second))
	if st.Phase != v1alpha1.AnalysisPending || next != 30*time.Second || len(q.queries) != 0 {
		t.Fatalf("before the initial delay: %s, next %s, %d queries", st.Phase, next, len(q.queries))
	}

	st, next = a.Step(context.Background(), spec, st, target, t0, t0.Add(time.Minute))
	if st.Phase != v1alpha1.AnalysisSuccessful || next != 2*time.Minute || len(q.queries) != 2 {
		t.Fatalf("first measurement: %s (%s), next %s, %d queries", st.Phase, st.Message, next, len(q.queries))
	}
	// The window covers the canary so far, but never less than the interval.
	if !strings.Contains(q.queries[0]+q.queries[1], "[2m]") {
		t.Errorf("window below the interval: %q", q.queries)
	}

	st, _ = a.Step(context.Background(), spec, st, target, t0, t0.Add(2*time.Minute))
	if len(q.queries) != 2 {
		t.Errorf("measured before the interval elapsed: %d queries", len(q.queries))
	}

	q.canary = answer{value: vector(3)}
	st, _ = a.Step(context.Background(), spec, st, target, t0, t0.Add(10*time.Minute))
	if st.Phase != v1alpha1.AnalysisFailed || !strings.Contains(st.Message, "restarts: 3 > max 0") {
		t.Errorf("restarts: %s %q", st.Phase, st.Message)
	}
	if !strings.Contains(strings.Join(q.queries[2:], " "), "[10m]") {
		t.Errorf("window is not the canary so far: %q", q.queries[2:])
	}
	if got := testutil.ToFloat64(metrics.measurements.WithLabelValues("agents", "node-agent", "restarts", "Failed")); got != 1 {
		t.Errorf("the step's measurements were not exported: %v", got)
	}
}

// slowQuerier counts the queries in flight.
type slowQuerier struct {
	inFlight, most atomic.Int32
}

func (s *slowQuerier) Query(context.Context, string, time.Time, ...promv1.Option) (model.Value, promv1.Warnings, error) {
	n := s.inFlight.Add(1)
	defer s.inFlight.Add(-1)
	for {
		most := s.most.Load()
		if n <= most || s.most.CompareAndSwap(most, n) {
			break
		}
	}
	time.Sleep(20 * time.Millisecond)
	return scalar(0), nil, nil
}

func TestAnalyzerStepBoundsParallelQueries(t *testing.T) {
	spec := &v1alpha1.CanaryAnalysis{}
	for _, name := range []string{"a", "b", "c", "d", "e", "f", "g", "h", "i", "j"} {
		spec.Metrics = append(spec.Metrics, v1alpha1.AnalysisMetric{Name: name, Query: "q", ThresholdRange: maxRange(1)})
	}
	q := &slowQuerier{}
	st, _ := Analyzer{Querier: q}.Step(context.Background(), spec, nil, testVars().Target, t0, t0)
	if st.Phase != v1alpha1.AnalysisSuccessful {
		t.Fatalf("%s: %s", st.Phase, st.Message)
	}
	// Queries in flight together prove the parallelism; how long the step
	// took depends on how busy the machine is.
	if most := q.most.Load(); most < 2 || most > maxParallelMeasurements {
		t.Errorf("%d queries in flight at most, want between 2 and %d", most, maxParallelMeasurements)
	}
}

func TestAnalyzerStepWithoutSpec(t *testing.T) {
	st, next := Analyzer{}.Step(context.Background(), nil, nil, Target{}, t0, t0)
	if st != nil || next != 0 {
		t.Errorf("got %+v, %s", st, next)
	}
}

// stuckQuerier answers only when its context ends, as a Prometheus that
// accepts connections and never replies.
type stuckQuerier struct{}

func (stuckQuerier) Query(ctx context.Context, _ string, _ time.Time, _ ...promv1.Option) (model.Value, promv1.Warnings, error) {
	<-ctx.Done()
	return nil, nil, ctx.Err()
}

// However many metrics are due and however slow Prometheus is, a step ends
// by its deadline, so a reconcile worker is never held for long; the
// metrics that got no answer are measured as errors that say why.
func TestAnalyzerStepIsBounded(t *testing.T) {
	spec := &v1alpha1.CanaryAnalysis{}
	for _, name := range []string{"a", "b", "c", "d", "e", "f", "g", "h", "i", "j"} {
		spec.Metrics = append(spec.Metrics, v1alpha1.AnalysisMetric{Name: name, Query: "q", ThresholdRange: maxRange(1)})
	}
	started := time.Now()
	st, _ := Analyzer{Querier: stuckQuerier{}, StepTimeout: 100 * time.Millisecond}.Step(context.Background(), spec, nil, testVars().Target, t0, t0)
	if elapsed := time.Since(started); elapsed > time.Second {
		t.Errorf("the step took %s", elapsed)
	}
	for _, m := range st.Metrics {
		if m.Count != 1 || m.Error != 1 || !strings.Contains(m.Message, "no answer within the 100ms an analysis step may take") {
			t.Errorf("metric %s: %d measurements, %d errors, %q", m.Name, m.Count, m.Error, m.Message)
		}
	}
}

func TestStepTimeoutIsAtMostMaxStepDuration(t *testing.T) {
	for timeout, want := range map[time.Duration]time.Duration{
		0:                MaxStepDuration,
		time.Second:      time.Second,
		MaxStepDuration:  MaxStepDuration,
		10 * time.Minute: MaxStepDuration,
	} {
		if got := (Analyzer{StepTimeout: timeout}).stepTimeout(); got != want {
			t.Errorf("StepTimeout %s: %s, want %s", timeout, got, want)
		}
	}
	if MaxStepDuration < 2*MaxTimeout {
		t.Errorf("a step of %s cannot wait for a canary and a baseline query of %s each", MaxStepDuration, MaxTimeout)
	}
}

// A canary left running for days is not queried over days of data: the
// window stops growing at MaxWindow, as older samples were judged by earlier
// measurements. An interval longer than that still covers every sample
// since the previous measurement.
func TestAnalyzerStepCapsTheWindow(t *testing.T) {
	cases := []struct {
		interval, running time.Duration
		want              string
	}{
		{time.Minute, 3 * 24 * time.Hour, "[1h]"},
		{time.Minute, 40 * time.Minute, "[40m]"},
		{2 * time.Hour, 3 * 24 * time.Hour, "[2h]"},
	}
	for _, c := range cases {
		spec := &v1alpha1.CanaryAnalysis{
			Interval: &metav1.Duration{Duration: c.interval},
			Metrics:  []v1alpha1.AnalysisMetric{{Name: "m", Query: "x[{{.Window}}]", ThresholdRange: maxRange(1)}},
		}
		q := &fakeQuerier{canary: answer{value: vector(0)}}
		Analyzer{Querier: q}.Step(context.Background(), spec, nil, testVars().Target, t0, t0.Add(c.running))
		if len(q.queries) != 1 || q.queries[0] != "x"+c.want {
			t.Errorf("interval %s, running for %s: sent %q, want x%s", c.interval, c.running, q.queries, c.want)
		}
	}
}
