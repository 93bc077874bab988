package analysis

import (
	"context"
	"strings"
	"sync"
	"time"

	promv1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
)

var t0 = time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC)

// answer is what a fake Prometheus returns for one query.
type answer struct {
	value    model.Value
	warnings promv1.Warnings
	err      error
}

// fakeQuerier answers the canary query with canary and any query on the
// stable pods with baseline, and records the queries it was sent.
type fakeQuerier struct {
	canary, baseline answer

	mu      sync.Mutex
	queries []string
}

func (f *fakeQuerier) Query(_ context.Context, query string, _ time.Time, _ ...promv1.Option) (model.Value, promv1.Warnings, error) {
	f.mu.Lock()
	f.queries = append(f.queries, query)
	f.mu.Unlock()
	a := f.canary
	if strings.Contains(query, "stable-") {
		a = f.baseline
	}
	return a.value, a.warnings, a.err
}

func testVars() Vars {
	return Vars{
		Target: Target{
			Namespace:        "agents",
			Name:             "node-agent",
			CanaryReplicaSet: "node-agent-canary",
			StableReplicaSet: "node-agent-stable",
			CanaryPods:       []string{"canary-b", "canary-a"},
			StablePods:       []string{"stable-a", "stable-b", "stable-c"},
			CanaryNodes:      []string{"node-2", "node-1"},
		},
		Interval: time.Minute,
		Window:   10 * time.Minute,
	}
}

// vector is one series per value, labelled pod="pod-i".
func vector(values ...float64) model.Vector {
	v := make(model.Vector, len(values))
	for i, x := range values {
		v[i] = &model.Sample{
			Metric: model.Metric{"pod": model.LabelValue("pod-" + string(rune('a'+i%26)))},
			Value:  model.SampleValue(x),
		}
	}
	return v
}

func scalar(x float64) *model.Scalar { return &model.Scalar{Value: model.SampleValue(x)} }

func ptr[T any](v T) *T { return &v }

func maxRange(x float64) *v1alpha1.ThresholdRange { return &v1alpha1.ThresholdRange{Max: &x} }

func measurementAt(phase v1alpha1.AnalysisPhase, at time.Time) v1alpha1.Measurement {
	return v1alpha1.Measurement{Phase: phase, Message: "measured " + string(phase), Time: metav1.NewTime(at)}
}
