package analysis

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
)

// fakeNodes observes what it is told to, and counts its calls.
type fakeNodes struct {
	in    NodeHealthInput
	err   error
	calls atomic.Int32
	// stuck makes it wait for its context to end, as an API server that
	// never answers.
	stuck bool
}

func (f *fakeNodes) ObserveNodes(ctx context.Context) (NodeHealthInput, error) {
	f.calls.Add(1)
	if f.stuck {
		<-ctx.Done()
		return NodeHealthInput{}, ctx.Err()
	}
	return f.in, f.err
}

// The observations a nodeHealth metric is measured from in these tests.
var (
	healthyInput = NodeHealthInput{
		Judged:   []NodeObservation{observed(healthyNode("canary-1"), readyPods("a", 4)...)},
		Baseline: baselineOf(2),
	}
	regressedInput = NodeHealthInput{
		Judged:   []NodeObservation{observed(sick("canary-1", corev1.NodeReady, corev1.ConditionFalse, after), readyPods("a", 4)...)},
		Baseline: baselineOf(2),
	}
	missingInput = NodeHealthInput{Baseline: baselineOf(2)}
)

func nodeHealthSpec(names ...string) *v1alpha1.CanaryAnalysis {
	spec := &v1alpha1.CanaryAnalysis{Interval: &metav1.Duration{Duration: time.Minute}}
	for _, n := range names {
		spec.Metrics = append(spec.Metrics, nodeHealthMetric(v1alpha1.NodeHealthMetric{}))
		spec.Metrics[len(spec.Metrics)-1].Name = n
	}
	return spec
}

// stepNodes runs one Step a minute per observation, the observer answering
// each in turn (an error where errs has one), and returns the last status.
func stepNodes(t *testing.T, spec *v1alpha1.CanaryAnalysis, inputs []NodeHealthInput, errs map[int]error) *v1alpha1.AnalysisStatus {
	t.Helper()
	var st *v1alpha1.AnalysisStatus
	nodes := &fakeNodes{}
	for i, in := range inputs {
		nodes.in, nodes.err = in, errs[i]
		st, _ = Analyzer{Nodes: nodes}.Step(context.Background(), spec, st, Target{}, t0, nhNow.Add(time.Duration(i)*time.Minute))
	}
	return st
}

// A nodeHealth metric takes part in failureLimit, inconclusiveLimit,
// consecutiveErrorLimit and dry run like any metric.
func TestNodeHealthInTheAnalysisLimits(t *testing.T) {
	with := func(mutate func(*v1alpha1.CanaryAnalysis)) *v1alpha1.CanaryAnalysis {
		spec := nodeHealthSpec("node-health")
		mutate(spec)
		return spec
	}
	observerDown := errors.New("the API server is away")
	cases := []struct {
		name    string
		spec    *v1alpha1.CanaryAnalysis
		inputs  []NodeHealthInput
		errs    map[int]error
		phase   v1alpha1.AnalysisPhase
		message []string
	}{
		{"healthy nodes pass", nodeHealthSpec("node-health"), []NodeHealthInput{healthyInput}, nil, S,
			[]string{"1 metric successful"}},
		{"a regression fails at failureLimit 0", nodeHealthSpec("node-health"), []NodeHealthInput{healthyInput, regressedInput}, nil, F,
			[]string{"node-health: regressed", "canary-1: Ready=False", "1 of 2 measurements failed, failureLimit 0"}},
		{"a regression within failureLimit keeps running",
			with(func(s *v1alpha1.CanaryAnalysis) { s.FailureLimit = ptr[int32](1) }),
			[]NodeHealthInput{regressedInput}, nil, v1alpha1.AnalysisRunning, nil},
		{"regressions past failureLimit fail",
			with(func(s *v1alpha1.CanaryAnalysis) { s.FailureLimit = ptr[int32](1) }),
			[]NodeHealthInput{regressedInput, healthyInput, regressedInput}, nil, F,
			[]string{"2 of 3 measurements failed, failureLimit 1"}},
		{"no node to judge is inconclusive past inconclusiveLimit", nodeHealthSpec("node-health"),
			[]NodeHealthInput{missingInput}, nil, I, []string{"no node to judge", "inconclusiveLimit 0"}},
		{"no node to judge within inconclusiveLimit keeps running",
			with(func(s *v1alpha1.CanaryAnalysis) { s.InconclusiveLimit = ptr[int32](1) }),
			[]NodeHealthInput{missingInput}, nil, v1alpha1.AnalysisRunning, nil},
		{"observer errors within consecutiveErrorLimit keep running", nodeHealthSpec("node-health"),
			make([]NodeHealthInput, 4), map[int]error{0: observerDown, 1: observerDown, 2: observerDown, 3: observerDown},
			v1alpha1.AnalysisRunning, nil},
		{"observer errors past consecutiveErrorLimit are an error", nodeHealthSpec("node-health"),
			make([]NodeHealthInput, 5), map[int]error{0: observerDown, 1: observerDown, 2: observerDown, 3: observerDown, 4: observerDown},
			E, []string{"nodes not observed: the API server is away", "5 errors in a row, consecutiveErrorLimit 4"}},
		{"a dry-run analysis does not let a regression decide",
			with(func(s *v1alpha1.CanaryAnalysis) { s.DryRun = true }),
			[]NodeHealthInput{regressedInput}, nil, S, []string{"dry run"}},
		{"a dry-run metric does not let a regression decide",
			with(func(s *v1alpha1.CanaryAnalysis) { s.Metrics[0].DryRun = true }),
			[]NodeHealthInput{regressedInput}, nil, S, []string{"dry run, not deciding: node-health Failed: regressed"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			st := stepNodes(t, c.spec, c.inputs, c.errs)
			if st.Phase != c.phase {
				t.Errorf("overall %s, want %s (%s)", st.Phase, c.phase, st.Message)
			}
			for _, part := range c.message {
				if !strings.Contains(st.Message, part) {
					t.Errorf("message %q lacks %q", st.Message, part)
				}
			}
		})
	}
}

// The observer lists pods around every judged node: it is called once per
// Step whatever the number of due nodeHealth metrics, and not at all when
// none is due.
func TestAnalyzerObservesNodesOncePerStep(t *testing.T) {
	spec := nodeHealthSpec("conditions", "readiness")
	spec.Metrics = append(spec.Metrics, v1alpha1.AnalysisMetric{Name: "load", Query: "q", ThresholdRange: maxRange(1)})
	nodes := &fakeNodes{in: regressedInput}
	a := Analyzer{Nodes: nodes, Querier: &fakeQuerier{canary: answer{value: vector(0)}}}
	st, _ := a.Step(context.Background(), spec, nil, testVars().Target, t0, t0)
	if got := nodes.calls.Load(); got != 1 {
		t.Errorf("observed the nodes %d times in a step, want 1", got)
	}
	for _, m := range st.Metrics[:2] {
		if m.Phase != F || len(m.Measurements) != 1 || len(m.Measurements[0].Nodes) != 1 || m.Measurements[0].Nodes[0].Node != "canary-1" {
			t.Errorf("metric %s: %s, %+v", m.Name, m.Phase, m.Measurements)
		}
	}
	// Nothing is due half an interval later.
	a.Step(context.Background(), spec, st, testVars().Target, t0, t0.Add(30*time.Second))
	if got := nodes.calls.Load(); got != 1 {
		t.Errorf("observed the nodes with no nodeHealth metric due: %d calls", got)
	}
	// A spec with no nodeHealth metric never observes.
	a.Step(context.Background(), analysisSpec("m"), nil, testVars().Target, t0, t0)
	if got := nodes.calls.Load(); got != 1 {
		t.Errorf("observed the nodes for a spec without nodeHealth: %d calls", got)
	}
}

func TestAnalyzerNodeHealthErrors(t *testing.T) {
	spec := nodeHealthSpec("node-health")
	cases := []struct {
		name     string
		analyzer Analyzer
		spec     *v1alpha1.CanaryAnalysis
		// phase is the measurement's, metric the metric's after it: an
		// error is tolerated up to consecutiveErrorLimit, a spec error
		// never.
		phase, metric v1alpha1.AnalysisPhase
		message       string
	}{
		{"no observer", Analyzer{}, spec, E, v1alpha1.AnalysisRunning, "no node observer: nodeHealth metrics cannot be measured"},
		{"an observer that never answers is bounded by the step",
			Analyzer{Nodes: &fakeNodes{stuck: true}, StepTimeout: 50 * time.Millisecond}, spec, E, v1alpha1.AnalysisRunning,
			"nodes not observed: no answer within the 50ms an analysis step may take"},
		{"no Prometheus does not matter", Analyzer{Nodes: &fakeNodes{in: healthyInput}, QuerierError: errors.New("no Secret")}, spec, S, S,
			"0 of 1 node turned unhealthy"},
		{"a spec error comes before the observer's",
			Analyzer{}, func() *v1alpha1.CanaryAnalysis {
				s := nodeHealthSpec("node-health")
				s.Metrics[0].ThresholdRange = maxRange(1)
				return s
			}(), E, E, "thresholdRange and baseline do not apply"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			st, _ := c.analyzer.Step(context.Background(), c.spec, nil, Target{}, t0, t0)
			m := st.Metrics[0]
			if m.Phase != c.metric {
				t.Errorf("metric %s, want %s: %s", m.Phase, c.metric, m.Message)
			}
			if m.Measurements[0].Phase != c.phase || !strings.Contains(m.Message, c.message) {
				t.Errorf("measured %s %q, want %s with %q", m.Measurements[0].Phase, m.Message, c.phase, c.message)
			}
		})
	}
}

// The status keeps the evidence the API allows, on the newest measurement
// and on the newest failed one, which explains the failure the metric's
// message names; older evidence goes.
func TestRecordKeepsEvidenceBounded(t *testing.T) {
	spec := nodeHealthSpec("node-health")
	spec.FailureLimit = ptr[int32](5)
	evidence := func(n int) []v1alpha1.NodeEvidence {
		var out []v1alpha1.NodeEvidence
		for i := range n {
			out = append(out, v1alpha1.NodeEvidence{Node: string(rune('a' + i)), Message: strings.Repeat("x", 5000)})
		}
		return out
	}
	var st *v1alpha1.AnalysisStatus
	for i, phase := range []v1alpha1.AnalysisPhase{F, F, S, F, S, S} {
		m := measurementAt(phase, t0.Add(time.Duration(i)*time.Minute))
		m.Nodes = evidence(8)
		st = Record(spec, st, map[string]v1alpha1.Measurement{"node-health": m})
	}
	var kept []int
	for i, m := range st.Metrics[0].Measurements {
		if len(m.Nodes) == 0 {
			continue
		}
		kept = append(kept, i)
		if len(m.Nodes) != maxNodesNamed {
			t.Errorf("measurement %d keeps %d nodes of evidence, want %d", i, len(m.Nodes), maxNodesNamed)
		}
		for _, e := range m.Nodes {
			if len(e.Message) > maxEvidenceMessage {
				t.Errorf("measurement %d: evidence of %s is %d bytes", i, e.Node, len(e.Message))
			}
		}
	}
	if want := []int{3, 5}; !slices.Equal(kept, want) {
		t.Errorf("evidence kept on measurements %v, want %v (the newest failed and the newest)", kept, want)
	}
}
