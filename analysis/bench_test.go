package analysis

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/prometheus/common/model"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
)

// BenchmarkJudge times one judgement of a single value against a threshold.
func BenchmarkJudge(b *testing.B) {
	value := vector(0.002)
	threshold := &v1alpha1.ThresholdRange{Min: ptr(0.0), Max: ptr(0.01)}
	for b.Loop() {
		x, v := singleValue(value, canarySubject)
		if v != nil || judgeThreshold(x, threshold).phase != v1alpha1.AnalysisSuccessful {
			b.Fatal("unexpected verdict")
		}
	}
}

// BenchmarkMeasure times a whole measurement of the errorRate preset, from
// rendering the query to the verdict, with an in-memory Prometheus.
func BenchmarkMeasure(b *testing.B) {
	q := &fakeQuerier{canary: answer{value: vector(0.002)}}
	metric := errorRateMetric(`code=~"5.."`)
	metric.ThresholdRange = maxRange(0.01)
	vars := testVars()
	for b.Loop() {
		q.queries = q.queries[:0]
		if m := Measure(context.Background(), q, metric, vars, t0); m.Phase != v1alpha1.AnalysisSuccessful {
			b.Fatal(m.Message)
		}
	}
}

// BenchmarkMeasureMannWhitney times a Mann-Whitney measurement of 50 canary
// pods against 5,000 baseline pods: two queries rendered with every pod name,
// per-pod values and the rank test.
func BenchmarkMeasureMannWhitney(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	samples := func(n int, prefix string) (model.Vector, []string) {
		v := make(model.Vector, n)
		names := make([]string, n)
		for i := range v {
			names[i] = fmt.Sprintf("node-agent-%s-%05d", prefix, i)
			v[i] = &model.Sample{
				Metric: model.Metric{"pod": model.LabelValue(names[i])},
				Value:  model.SampleValue(rng.NormFloat64()*0.001 + 0.01),
			}
		}
		return v, names
	}
	canary, canaryPods := samples(50, "canary")
	baseline, stablePods := samples(5000, "stable")
	vars := testVars()
	vars.Target.CanaryPods, vars.Target.StablePods = canaryPods, stablePods
	q := &fakeQuerier{canary: answer{value: canary}, baseline: answer{value: baseline}}
	metric := mannWhitneyMetric(v1alpha1.DirectionIncrease)
	for b.Loop() {
		q.queries = q.queries[:0]
		if m := Measure(context.Background(), q, metric, vars, t0); m.Phase != v1alpha1.AnalysisSuccessful {
			b.Fatal(m.Phase, m.Message)
		}
	}
}
