package inspect

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
)

// metricSpec is the spec of the metric called name in eds's canary
// analysis, or nil when the spec no longer has it.
func metricSpec(eds *v1alpha1.ExtendedDaemonSet, name string) *v1alpha1.AnalysisMetric {
	c := eds.Spec.Strategy.Canary
	if c == nil || c.Analysis == nil {
		return nil
	}
	for i := range c.Analysis.Metrics {
		if c.Analysis.Metrics[i].Name == name {
			return &c.Analysis.Metrics[i]
		}
	}
	return nil
}

// threshold is what a measurement of m is judged against: its range (the
// restarts preset's default of at most 0 when unset), the baseline
// comparison, and whether it decides at all.
func threshold(m *v1alpha1.AnalysisMetric) string {
	if m == nil {
		return "-"
	}
	var parts []string
	r := m.ThresholdRange
	if r == nil && m.Preset == v1alpha1.MetricPresetRestarts {
		zero := 0.0
		r = &v1alpha1.ThresholdRange{Max: &zero}
	}
	switch {
	case r == nil:
	case r.Min != nil && r.Max != nil:
		parts = append(parts, fmt.Sprintf("%s..%s", number(*r.Min), number(*r.Max)))
	case r.Min != nil:
		parts = append(parts, ">= "+number(*r.Min))
	case r.Max != nil:
		parts = append(parts, "<= "+number(*r.Max))
	}
	if m.NodeHealth != nil {
		parts = append(parts, nodeHealthThreshold(m.NodeHealth))
	}
	if b := m.Baseline; b != nil {
		if b.MaxRelativeIncrease != nil {
			parts = append(parts, fmt.Sprintf("<= baseline +%s%%", number(*b.MaxRelativeIncrease)))
		}
		if w := b.MannWhitney; w != nil {
			confidence, direction := 0.95, v1alpha1.DirectionIncrease
			if w.Confidence != nil {
				confidence = *w.Confidence
			}
			if w.Direction != "" {
				direction = w.Direction
			}
			parts = append(parts, fmt.Sprintf("no %s against baseline at %s confidence", direction, number(confidence)))
		}
	}
	if m.DryRun {
		parts = append(parts, "dry run")
	}
	if len(parts) == 0 {
		return "-"
	}
	return strings.Join(parts, ", ")
}

func number(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

// measurementCounts is "count: n successful, n failed, ..." with the
// verdicts that happened.
func measurementCounts(r *v1alpha1.MetricResult) string {
	var parts []string
	for _, c := range []struct {
		n    int32
		name string
	}{{r.Successful, "successful"}, {r.Failed, "failed"}, {r.Inconclusive, "inconclusive"}, {r.Error, "error"}} {
		if c.n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", c.n, c.name))
		}
	}
	if len(parts) == 0 {
		return strconv.Itoa(int(r.Count))
	}
	return fmt.Sprintf("%d: %s", r.Count, strings.Join(parts, ", "))
}

// lastValue is the newest measurement's value, with the baseline's when
// one was compared.
func lastValue(r *v1alpha1.MetricResult) string {
	if len(r.Measurements) == 0 {
		return "-"
	}
	m := r.Measurements[len(r.Measurements)-1]
	value := m.Value
	if value == "" || value == "NaN" {
		value = "no data"
	}
	if m.BaselineValue != "" {
		value += " (baseline " + m.BaselineValue + ")"
	}
	return value
}
