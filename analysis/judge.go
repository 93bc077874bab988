package analysis

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	promv1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
)

const (
	// maxSeriesNamed bounds the label sets quoted in a message.
	maxSeriesNamed = 5
	// maxWarningsNamed bounds the warnings quoted in a message.
	maxWarningsNamed = 3
	// maxDetail bounds the HTTP body quoted from a failed query.
	maxDetail = 256
)

// verdict is the judgement of one step of a measurement.
type verdict struct {
	phase   v1alpha1.AnalysisPhase
	message string
}

func successful(format string, args ...any) verdict {
	return verdict{phase: v1alpha1.AnalysisSuccessful, message: fmt.Sprintf(format, args...)}
}

func failed(format string, args ...any) verdict {
	return verdict{phase: v1alpha1.AnalysisFailed, message: fmt.Sprintf(format, args...)}
}

func inconclusive(format string, args ...any) verdict {
	return verdict{phase: v1alpha1.AnalysisInconclusive, message: fmt.Sprintf(format, args...)}
}

func erroneous(format string, args ...any) verdict {
	return verdict{phase: v1alpha1.AnalysisError, message: fmt.Sprintf(format, args...)}
}

// formatValue renders a value for status and messages.
func formatValue(v float64) string {
	return strconv.FormatFloat(v, 'g', 6, 64)
}

// subject names what was queried in a message: "query" or "baseline".
type subject string

const (
	canarySubject   subject = "query"
	baselineSubject subject = "baseline"
)

func (s subject) pods() string {
	if s == baselineSubject {
		return "stable"
	}
	return "canary"
}

// singleValue extracts the one value a query must return. NaN and empty
// results are Inconclusive: they mean "nothing to judge yet", not "bad".
func singleValue(v model.Value, s subject) (float64, *verdict) {
	switch v := v.(type) {
	case *model.Scalar:
		return nanIsInconclusive(float64(v.Value), s)
	case model.Vector:
		switch len(v) {
		case 0:
			return 0, noData(s)
		case 1:
			return nanIsInconclusive(float64(v[0].Value), s)
		default:
			e := erroneous("%s returned %d series where one was expected: %s; aggregate them, for example with sum(...)",
				s, len(v), seriesNames(v))
			return 0, &e
		}
	default:
		return 0, wrongType(v, s)
	}
}

// perPodValues extracts one value per series, for a rank test. Pods whose
// value is NaN (a ratio without traffic) carry no information and are left
// out.
func perPodValues(v model.Value, s subject) ([]float64, *verdict) {
	var values []float64
	switch v := v.(type) {
	case *model.Scalar:
		values = []float64{float64(v.Value)}
	case model.Vector:
		values = make([]float64, 0, len(v))
		for _, sample := range v {
			values = append(values, float64(sample.Value))
		}
	default:
		return nil, wrongType(v, s)
	}
	if len(values) == 0 {
		return nil, noData(s)
	}
	kept := values[:0]
	for _, x := range values {
		if !math.IsNaN(x) {
			kept = append(kept, x)
		}
	}
	if len(kept) == 0 {
		i := inconclusive("%s returned NaN for every pod (for a ratio: no traffic in the window)", s)
		return nil, &i
	}
	return kept, nil
}

func nanIsInconclusive(x float64, s subject) (float64, *verdict) {
	if math.IsNaN(x) {
		i := inconclusive("%s returned NaN (for a ratio: no traffic in the window)", s)
		return x, &i
	}
	return x, nil
}

func noData(s subject) *verdict {
	i := inconclusive("%s returned no data: the metric may not exist yet or the %s pods are not scraped", s, s.pods())
	return &i
}

func wrongType(v model.Value, s subject) *verdict {
	kind := "nothing"
	if v != nil {
		kind = v.Type().String()
	}
	e := erroneous("%s must return an instant vector or scalar, got %s", s, kind)
	return &e
}

func seriesNames(v model.Vector) string {
	names := make([]string, 0, maxSeriesNamed)
	for i := 0; i < len(v) && i < maxSeriesNamed; i++ {
		names = append(names, v[i].Metric.String())
	}
	out := strings.Join(names, ", ")
	if len(v) > maxSeriesNamed {
		out += fmt.Sprintf(" and %d more", len(v)-maxSeriesNamed)
	}
	return out
}

// judgeThreshold checks an inclusive range whose unset bounds are open.
func judgeThreshold(x float64, r *v1alpha1.ThresholdRange) verdict {
	switch {
	case r.Min != nil && x < *r.Min:
		return failed("%s < min %s", formatValue(x), formatValue(*r.Min))
	case r.Max != nil && x > *r.Max:
		return failed("%s > max %s", formatValue(x), formatValue(*r.Max))
	}
	return successful("%s within %s", formatValue(x), rangeString(r))
}

func rangeString(r *v1alpha1.ThresholdRange) string {
	low, high := "-Inf", "+Inf"
	if r.Min != nil {
		low = formatValue(*r.Min)
	}
	if r.Max != nil {
		high = formatValue(*r.Max)
	}
	return "[" + low + ", " + high + "]"
}

// judgeRelativeIncrease fails a canary worse than the baseline by more than
// percent of the baseline.
func judgeRelativeIncrease(canary, baseline, percent float64) verdict {
	limit := baseline * (1 + percent/100)
	c, b, p := formatValue(canary), formatValue(baseline), formatValue(percent)
	switch {
	case baseline == 0 && canary > 0:
		return failed("%s > baseline 0: any increase over a baseline of 0 fails", c)
	case canary > limit:
		return failed("%s > baseline %s + %s%% (%s)", c, b, p, formatValue(limit))
	}
	return successful("%s <= baseline %s + %s%% (%s)", c, b, p, formatValue(limit))
}

// alternativeOf maps the bad direction to the alternative hypothesis.
func alternativeOf(d v1alpha1.ComparisonDirection) (Alternative, error) {
	switch d {
	case v1alpha1.DirectionIncrease, "":
		return AlternativeGreater, nil
	case v1alpha1.DirectionDecrease:
		return AlternativeLess, nil
	case v1alpha1.DirectionEither:
		return AlternativeTwoSided, nil
	}
	return 0, fmt.Errorf("unknown direction %q (known: %s, %s, %s)",
		d, v1alpha1.DirectionIncrease, v1alpha1.DirectionDecrease, v1alpha1.DirectionEither)
}

// defaultConfidence is the Mann-Whitney confidence when the spec has none.
const defaultConfidence = 0.95

// judgeMannWhitney fails the canary when its per-pod values differ from the
// baseline's in the bad direction with the test's confidence.
func judgeMannWhitney(canary, baseline []float64, t *v1alpha1.MannWhitneyTest) verdict {
	alternative, err := alternativeOf(t.Direction)
	if err != nil {
		return erroneous("mannWhitney: %v", err)
	}
	confidence := defaultConfidence
	if t.Confidence != nil {
		confidence = *t.Confidence
	}
	result, err := MannWhitneyU(canary, baseline, alternative)
	if err != nil {
		return erroneous("%v", err)
	}
	alpha := 1 - confidence
	summary := fmt.Sprintf("U=%s, p=%s, %d canary and %d baseline pods",
		formatValue(result.U), formatValue(result.P), len(canary), len(baseline))
	if result.P < alpha {
		return failed("canary differs from baseline (%s) at confidence %s: %s",
			directionWord(t.Direction), formatValue(confidence), summary)
	}
	if best := strongestP(len(canary), len(baseline), alternative); best >= alpha {
		summary += fmt.Sprintf("; with so few pods this test cannot reach confidence %s (best possible p=%s): add canary nodes or lower the confidence",
			formatValue(confidence), formatValue(best))
	}
	return successful("no significant %s at confidence %s: %s", directionWord(t.Direction), formatValue(confidence), summary)
}

// strongestP is the p-value of the most extreme samples of these sizes,
// every canary value beyond every baseline one: when even that is not
// significant, the test can never fail the canary, and a person should know.
func strongestP(canaryPods, baselinePods int, alternative Alternative) float64 {
	canary, baseline := make([]float64, canaryPods), make([]float64, baselinePods)
	sign := 1.0
	if alternative == AlternativeLess {
		sign = -1
	}
	for i := range canary {
		canary[i] = sign * float64(baselinePods+i)
	}
	for j := range baseline {
		baseline[j] = sign * float64(j)
	}
	result, err := MannWhitneyU(canary, baseline, alternative)
	if err != nil {
		return 1
	}
	return result.P
}

func directionWord(d v1alpha1.ComparisonDirection) string {
	switch d {
	case v1alpha1.DirectionDecrease:
		return "decrease"
	case v1alpha1.DirectionEither:
		return "difference"
	}
	return "increase"
}

// queryFailure explains a failed query to a person: the cause, and for an
// HTTP error what the server said.
func queryFailure(s subject, err error) verdict {
	var apiErr *promv1.Error
	if errors.As(err, &apiErr) {
		switch apiErr.Type {
		case promv1.ErrBadData:
			return erroneous("%s rejected by Prometheus: %s", s, apiErr.Msg)
		case promv1.ErrBadResponse:
			return erroneous("%s failed: unreadable answer from Prometheus: %s", s, apiErr.Msg)
		}
		if detail := oneLine(apiErr.Detail, maxDetail); detail != "" {
			return erroneous("%s failed: %v: %s", s, err, detail)
		}
	}
	return erroneous("%s failed: %v", s, err)
}

// withWarnings appends the server's warnings to a verdict's message.
func withWarnings(v verdict, warnings promv1.Warnings) verdict {
	if len(warnings) == 0 {
		return v
	}
	shown := warnings
	if len(shown) > maxWarningsNamed {
		shown = shown[:maxWarningsNamed]
	}
	v.message += " (warnings: " + strings.Join(shown, "; ")
	if len(warnings) > maxWarningsNamed {
		v.message += fmt.Sprintf(" and %d more", len(warnings)-maxWarningsNamed)
	}
	v.message += ")"
	return v
}

// oneLine collapses whitespace and truncates s, for quoting a server's body.
func oneLine(s string, limit int) string {
	return Truncate(strings.Join(strings.Fields(s), " "), limit)
}

// truncationMarker ends a string that was cut short.
const truncationMarker = "...[truncated]"

// Truncate cuts s to at most limit bytes, marker included, on a UTF-8
// boundary, so a message stays within what a status field should hold.
func Truncate(s string, limit int) string {
	if len(s) <= limit {
		return s
	}
	cut := limit - len(truncationMarker)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:max(cut, 0)] + truncationMarker
}
