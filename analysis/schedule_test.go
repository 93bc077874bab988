package analysis

import (
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
)

func TestDue(t *testing.T) {
	started := t0
	spec := func(interval, initialDelay time.Duration) *v1alpha1.CanaryAnalysis {
		s := analysisSpec("a", "b")
		if interval > 0 {
			s.Interval = &metav1.Duration{Duration: interval}
		}
		if initialDelay > 0 {
			s.InitialDelay = &metav1.Duration{Duration: initialDelay}
		}
		return s
	}
	measuredAt := func(times map[string]time.Time) *v1alpha1.AnalysisStatus {
		st := &v1alpha1.AnalysisStatus{}
		for _, name := range []string{"a", "b"} {
			r := v1alpha1.MetricResult{Name: name}
			if at, ok := times[name]; ok {
				r.Count = 1
				r.Measurements = []v1alpha1.Measurement{measurementAt(S, at.Add(-time.Hour)), measurementAt(S, at)}
			}
			st.Metrics = append(st.Metrics, r)
		}
		return st
	}
	cases := []struct {
		name string
		spec *v1alpha1.CanaryAnalysis
		st   *v1alpha1.AnalysisStatus
		now  time.Time
		due  []string
		next time.Duration
	}{
		{"nothing configured", nil, nil, started, nil, 0},
		{"no metrics", &v1alpha1.CanaryAnalysis{}, nil, started, nil, 0},
		{"first measurement at start without delay", spec(0, 0), nil, started, []string{"a", "b"}, time.Minute},
		{"before the initial delay", spec(time.Minute, 5*time.Minute), nil, started.Add(2 * time.Minute), nil, 3 * time.Minute},
		{"at the initial delay", spec(time.Minute, 5*time.Minute), nil, started.Add(5 * time.Minute), []string{"a", "b"}, time.Minute},
		{"interval after the newest measurement", spec(2*time.Minute, 0),
			measuredAt(map[string]time.Time{"a": started, "b": started.Add(30 * time.Second)}), started.Add(2 * time.Minute),
			[]string{"a"}, 30 * time.Second},
		{"not yet due", spec(2*time.Minute, 0),
			measuredAt(map[string]time.Time{"a": started, "b": started}), started.Add(90 * time.Second),
			nil, 30 * time.Second},
		{"a metric new to the status is due", spec(0, time.Minute),
			measuredAt(map[string]time.Time{"a": started.Add(time.Minute)}), started.Add(90 * time.Second),
			[]string{"b"}, 30 * time.Second},
		{"late reconcile measures once", spec(time.Minute, 0),
			measuredAt(map[string]time.Time{"a": started, "b": started}), started.Add(time.Hour),
			[]string{"a", "b"}, time.Minute},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			due, next := Due(c.spec, c.st, started, c.now)
			if !slices.Equal(due, c.due) || next != c.next {
				t.Errorf("Due = %v, %s; want %v, %s", due, next, c.due, c.next)
			}
		})
	}
}
