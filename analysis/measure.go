package analysis

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/prometheus/common/model"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
)

// baselineQuerySeparator joins the canary and baseline queries in
// Measurement.Query.
const baselineQuerySeparator = "\nbaseline: "

// Measure takes one measurement of one metric at now: it renders the query
// for the canary, queries Prometheus and judges the answer; with a baseline
// it does the same for Vars.Baseline() and compares. It never returns an
// error: a problem becomes a measurement in phase Error (or Inconclusive)
// whose message says what to do. Measurement.Query is the canary query,
// followed by "\nbaseline: " and the baseline query when one is used.
func Measure(ctx context.Context, q Querier, m v1alpha1.AnalysisMetric, vars Vars, now time.Time) v1alpha1.Measurement {
	mm := measurement{ctx: ctx, querier: q, metric: m, vars: vars, now: now}
	return mm.take()
}

// measurement is the state of one Measure call.
type measurement struct {
	ctx     context.Context
	querier Querier
	metric  v1alpha1.AnalysisMetric
	vars    Vars
	now     time.Time

	result   v1alpha1.Measurement
	warnings []string
}

// canaryValues is the canary side of a measurement: its value, and the
// per-pod values when a rank test needs them.
type canaryValues struct {
	value  float64
	perPod []float64
}

func (mm *measurement) take() v1alpha1.Measurement {
	mm.result = v1alpha1.Measurement{Time: metav1.NewTime(mm.now)}
	v := withWarnings(mm.judge(), mm.warnings)
	mm.result.Phase = v.phase
	mm.result.Message = v.message
	return mm.result
}

func (mm *measurement) judge() verdict {
	// A spec error comes first: no wait and no other client would help.
	if err := checkMetric(mm.metric); err != nil {
		return erroneous("%v", err)
	}
	if mm.querier == nil {
		return erroneous("no Prometheus client: provider.prometheus is not set or could not be configured")
	}
	if len(mm.vars.Target.CanaryPods) == 0 {
		return inconclusive("no canary pods to measure yet")
	}
	baseline := mm.metric.Baseline
	perPod := baseline != nil && baseline.MannWhitney != nil
	tmpl, err := QueryOf(mm.metric, perPod)
	if err != nil {
		return erroneous("%v", err)
	}

	canary, v := mm.measureCanary(tmpl, perPod)
	if v != nil {
		return *v
	}
	verdicts := []verdict{}
	if threshold := thresholdOf(mm.metric); threshold != nil {
		verdicts = append(verdicts, judgeThreshold(canary.value, threshold))
	}
	if baseline != nil {
		verdicts = append(verdicts, mm.compareBaseline(tmpl, canary, baseline)...)
	}
	// checkMetric made sure there is a threshold or a baseline to judge by.
	return combine(verdicts)
}

// measureCanary renders and runs the canary query.
func (mm *measurement) measureCanary(tmpl string, perPod bool) (canaryValues, *verdict) {
	query, err := Render(tmpl, mm.vars)
	if err != nil {
		return canaryValues{}, verdictOf(erroneous("%v", err))
	}
	mm.result.Query = query
	if perPod {
		values, v := mm.queryPerPod(query, canarySubject)
		if v != nil {
			return canaryValues{}, v
		}
		c := canaryValues{value: mean(values), perPod: values}
		mm.result.Value = formatValue(c.value)
		return c, nil
	}
	value, v := mm.querySingle(query, canarySubject)
	if v == nil || math.IsNaN(value) {
		mm.result.Value = formatValue(value)
	}
	if v != nil {
		return canaryValues{}, v
	}
	return canaryValues{value: value}, nil
}

// compareBaseline renders and runs the baseline query and compares the
// canary with it.
func (mm *measurement) compareBaseline(tmpl string, canary canaryValues, b *v1alpha1.BaselineComparison) []verdict {
	vars := mm.vars.Baseline()
	if len(vars.Target.CanaryPods) == 0 {
		return []verdict{inconclusive("no stable pods to compare with")}
	}
	query, err := Render(tmpl, vars)
	if err != nil {
		return []verdict{erroneous("baseline: %v", err)}
	}
	mm.result.Query += baselineQuerySeparator + query

	var baseline float64
	var verdicts []verdict
	if b.MannWhitney != nil {
		values, v := mm.queryPerPod(query, baselineSubject)
		if v != nil {
			return []verdict{*v}
		}
		baseline = mean(values)
		verdicts = append(verdicts, judgeMannWhitney(canary.perPod, values, b.MannWhitney))
	} else {
		value, v := mm.querySingle(query, baselineSubject)
		if v != nil {
			if math.IsNaN(value) {
				mm.result.BaselineValue = formatValue(value)
			}
			return []verdict{*v}
		}
		baseline = value
	}
	mm.result.BaselineValue = formatValue(baseline)
	if b.MaxRelativeIncrease != nil {
		verdicts = append(verdicts, judgeRelativeIncrease(canary.value, baseline, *b.MaxRelativeIncrease))
	}
	return verdicts
}

func (mm *measurement) querySingle(query string, s subject) (float64, *verdict) {
	value, v := mm.query(query, s)
	if v != nil {
		return 0, v
	}
	return singleValue(value, s)
}

func (mm *measurement) queryPerPod(query string, s subject) ([]float64, *verdict) {
	value, v := mm.query(query, s)
	if v != nil {
		return nil, v
	}
	return perPodValues(value, s)
}

// query runs a query; its warnings go into the final message whatever the
// verdict, since they often explain it.
func (mm *measurement) query(query string, s subject) (model.Value, *verdict) {
	value, warnings, err := mm.querier.Query(mm.ctx, query, mm.now)
	mm.warnings = append(mm.warnings, warnings...)
	if err != nil {
		return nil, verdictOf(queryFailure(s, withCause(mm.ctx, err)))
	}
	return value, nil
}

// withCause says why the context of a failed query ended, when it ended for
// a reason of its own such as the deadline of an analysis step: the error
// of the query only says "context deadline exceeded".
func withCause(ctx context.Context, err error) error {
	cause := context.Cause(ctx)
	if cause == nil || errors.Is(err, cause) {
		return err
	}
	return fmt.Errorf("%w: %w", cause, err)
}

// severity orders the verdicts of one measurement: a canary outside its
// threshold has failed whatever the baseline says; an error hides more than
// missing data does.
var severity = map[v1alpha1.AnalysisPhase]int{
	v1alpha1.AnalysisSuccessful:   0,
	v1alpha1.AnalysisInconclusive: 1,
	v1alpha1.AnalysisError:        2,
	v1alpha1.AnalysisFailed:       3,
}

// combine is the most severe verdict, explained by every message.
func combine(verdicts []verdict) verdict {
	worst := verdicts[0].phase
	messages := make([]string, 0, len(verdicts))
	for _, v := range verdicts {
		if severity[v.phase] > severity[worst] {
			worst = v.phase
		}
		messages = append(messages, v.message)
	}
	return verdict{phase: worst, message: strings.Join(messages, "; ")}
}

func verdictOf(v verdict) *verdict { return &v }

func mean(values []float64) float64 {
	sum := 0.0
	for _, x := range values {
		sum += x
	}
	return sum / float64(len(values))
}
