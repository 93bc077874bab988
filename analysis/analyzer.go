package analysis

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
)

const (
	// maxParallelMeasurements bounds the queries one Step sends at once, so
	// a spec with many metrics does not burst a shared Prometheus.
	maxParallelMeasurements = 4

	// MaxStepDuration bounds one Step, all its due metrics together, so
	// that a reconcile worker is never held for long by a slow Prometheus:
	// room for a canary and a baseline query at their longest. A query
	// still waiting at the deadline is measured as an error.
	MaxStepDuration = 2 * MaxTimeout

	// MaxWindow bounds the window of a measurement, .Window in a query
	// template, when the interval is shorter: a canary left running for
	// days would otherwise be queried over days of samples, slower and
	// slower, though every interval of them was already judged by an
	// earlier measurement.
	MaxWindow = time.Hour
)

// Analyzer runs the analysis of one canary, one reconcile at a time.
type Analyzer struct {
	// Querier queries Prometheus. It must give up when its context ends.
	Querier Querier
	// QuerierError, when set, is why there is no Querier (a missing
	// Secret, a bad CA): each query and preset metric is measured as an
	// error saying so, while web metrics are measured still.
	QuerierError error
	// Web sends the requests of web metrics.
	Web WebQuerier
	// Nodes observes the nodes nodeHealth metrics judge; it is called at
	// most once per Step, and only when such a metric is due.
	Nodes NodeObserver
	// Metrics, when set, exports every measurement for dashboards.
	Metrics *Metrics
	// StepTimeout bounds one Step; zero, or more than MaxStepDuration,
	// means MaxStepDuration.
	StepTimeout time.Duration
}

// Step measures the metrics that are due (in parallel, bounded, within the
// step's timeout) and records them. It returns the new status and how long
// until the next measurement is due. With nothing due it still recomputes
// the phases, so a status written before a spec change reflects the current
// spec.
func (a Analyzer) Step(ctx context.Context, spec *v1alpha1.CanaryAnalysis, st *v1alpha1.AnalysisStatus, target Target, startedAt, now time.Time) (*v1alpha1.AnalysisStatus, time.Duration) {
	due, next := Due(spec, st, startedAt, now)
	if spec == nil {
		return st.DeepCopy(), next
	}
	timeout := a.stepTimeout()
	ctx, cancel := context.WithTimeoutCause(ctx, timeout,
		fmt.Errorf("no answer within the %s an analysis step may take", timeout))
	defer cancel()
	interval := intervalOf(spec)
	vars := Vars{Target: target, Interval: interval, Window: windowOf(interval, now.Sub(startedAt))}
	nodes := a.observeNodes(ctx, spec, due)
	ms := a.measureAll(ctx, spec, due, vars, nodes, now)
	if a.Metrics != nil && len(ms) > 0 {
		a.Metrics.ObserveMeasurements(target.Namespace, target.Name, ms)
	}
	return Record(spec, st, ms), next
}

// windowOf is the span a measurement covers: the canary so far, at least
// one interval and, past that, at most MaxWindow.
func windowOf(interval, running time.Duration) time.Duration {
	return max(interval, min(running, MaxWindow))
}

func (a Analyzer) stepTimeout() time.Duration {
	if a.StepTimeout <= 0 {
		return MaxStepDuration
	}
	return min(a.StepTimeout, MaxStepDuration)
}

func (a Analyzer) measureAll(ctx context.Context, spec *v1alpha1.CanaryAnalysis, names []string, vars Vars, nodes observedNodes, now time.Time) map[string]v1alpha1.Measurement {
	byName := make(map[string]v1alpha1.AnalysisMetric, len(spec.Metrics))
	for _, m := range spec.Metrics {
		byName[m.Name] = m
	}
	var (
		mu    sync.Mutex
		wg    sync.WaitGroup
		slots = make(chan struct{}, maxParallelMeasurements)
		ms    = make(map[string]v1alpha1.Measurement, len(names))
	)
	for _, name := range names {
		wg.Go(func() {
			slots <- struct{}{}
			defer func() { <-slots }()
			m := a.measure(ctx, byName[name], vars, nodes, now)
			mu.Lock()
			ms[name] = m
			mu.Unlock()
		})
	}
	wg.Wait()
	return ms
}

// measure takes one measurement of metric m with the client it needs.
func (a Analyzer) measure(ctx context.Context, m v1alpha1.AnalysisMetric, vars Vars, nodes observedNodes, now time.Time) v1alpha1.Measurement {
	switch {
	case m.Web != nil:
		return MeasureWeb(ctx, a.Web, m, now)
	case m.NodeHealth != nil:
		return nodes.measure(m, now)
	case a.QuerierError != nil:
		return v1alpha1.Measurement{Phase: v1alpha1.AnalysisError, Message: a.QuerierError.Error(), Time: metav1.NewTime(now)}
	}
	return Measure(ctx, a.Querier, m, vars, now)
}

// observedNodes is what the Analyzer's NodeObserver saw for one Step, or
// why it saw nothing.
type observedNodes struct {
	input NodeHealthInput
	err   error
}

// observeNodes observes the nodes once for all the due nodeHealth metrics
// of a Step, and not at all when none is due: the observer lists pods
// around every judged node, which is worth doing once per Step at most.
func (a Analyzer) observeNodes(ctx context.Context, spec *v1alpha1.CanaryAnalysis, due []string) observedNodes {
	needed := false
	for _, m := range spec.Metrics {
		if m.NodeHealth != nil && slices.Contains(due, m.Name) {
			needed = true
			break
		}
	}
	switch {
	case !needed:
		return observedNodes{}
	case a.Nodes == nil:
		return observedNodes{err: errors.New("no node observer: nodeHealth metrics cannot be measured")}
	}
	in, err := a.Nodes.ObserveNodes(ctx)
	if err != nil {
		return observedNodes{err: fmt.Errorf("nodes not observed: %w", withCause(ctx, err))}
	}
	return observedNodes{input: in}
}

// measure takes one measurement of a nodeHealth metric from what was
// observed; a spec error still comes first, as for any metric.
func (o observedNodes) measure(m v1alpha1.AnalysisMetric, now time.Time) v1alpha1.Measurement {
	if o.err != nil && checkMetric(m) == nil {
		return v1alpha1.Measurement{Phase: v1alpha1.AnalysisError, Message: o.err.Error(), Time: metav1.NewTime(now)}
	}
	return MeasureNodeHealth(m, o.input, now)
}
