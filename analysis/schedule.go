package analysis

import (
	"time"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
)

// DefaultInterval is the time between two measurements of a metric when the
// spec does not say.
const DefaultInterval = time.Minute

// intervalOf is the spec's interval, or the default.
func intervalOf(spec *v1alpha1.CanaryAnalysis) time.Duration {
	if spec.Interval != nil && spec.Interval.Duration > 0 {
		return spec.Interval.Duration
	}
	return DefaultInterval
}

// Due returns the metrics to measure at now and how long until the next
// measurement is due, counting the due ones as measured at now (0 when no
// metric is configured). The first measurement of a metric is due at
// startedAt + InitialDelay, each later one Interval after that metric's
// newest measurement. The schedule lives in the status, so a restarted
// controller keeps it.
func Due(spec *v1alpha1.CanaryAnalysis, st *v1alpha1.AnalysisStatus, startedAt, now time.Time) (due []string, next time.Duration) {
	if spec == nil || len(spec.Metrics) == 0 {
		return nil, 0
	}
	interval := intervalOf(spec)
	first := startedAt
	if spec.InitialDelay != nil {
		first = first.Add(spec.InitialDelay.Duration)
	}
	lastByName := map[string]time.Time{}
	if st != nil {
		for i := range st.Metrics {
			if m := newest(&st.Metrics[i]); m != nil {
				lastByName[st.Metrics[i].Name] = m.Time.Time
			}
		}
	}

	for i, metric := range spec.Metrics {
		dueAt := first
		if last, ok := lastByName[metric.Name]; ok {
			dueAt = last.Add(interval)
		}
		wait := dueAt.Sub(now)
		if wait <= 0 {
			due = append(due, metric.Name)
			wait = interval
		}
		if i == 0 || wait < next {
			next = wait
		}
	}
	return due, next
}
