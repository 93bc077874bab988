package analysis

import (
	"context"
	"sync"
	"time"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
)

// maxParallelMeasurements bounds the queries one Step sends at once, so a
// spec with many metrics does not burst a shared Prometheus.
const maxParallelMeasurements = 4

// Analyzer runs the analysis of one canary, one reconcile at a time.
type Analyzer struct {
	// Querier queries Prometheus.
	Querier Querier
	// Metrics, when set, exports every measurement for dashboards.
	Metrics *Metrics
}

// Step measures the metrics that are due (in parallel, bounded) and records
// them. It returns the new status and how long until the next measurement
// is due. With nothing due it still recomputes the phases, so a status
// written before a spec change reflects the current spec.
func (a Analyzer) Step(ctx context.Context, spec *v1alpha1.CanaryAnalysis, st *v1alpha1.AnalysisStatus, target Target, startedAt, now time.Time) (*v1alpha1.AnalysisStatus, time.Duration) {
	due, next := Due(spec, st, startedAt, now)
	if spec == nil {
		return st.DeepCopy(), next
	}
	vars := Vars{Target: target, Interval: intervalOf(spec), Window: max(now.Sub(startedAt), intervalOf(spec))}
	ms := a.measureAll(ctx, spec, due, vars, now)
	if a.Metrics != nil && len(ms) > 0 {
		a.Metrics.ObserveMeasurements(target.Namespace, target.Name, ms)
	}
	return Record(spec, st, ms), next
}

func (a Analyzer) measureAll(ctx context.Context, spec *v1alpha1.CanaryAnalysis, names []string, vars Vars, now time.Time) map[string]v1alpha1.Measurement {
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
			m := Measure(ctx, a.Querier, byName[name], vars, now)
			mu.Lock()
			ms[name] = m
			mu.Unlock()
		})
	}
	wg.Wait()
	return ms
}
