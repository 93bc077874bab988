package analysis

import (
	"errors"
	"fmt"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
)

// SpecError is a mistake in the analysis spec itself: a query template that
// does more than look up fields, an unknown field, a preset without its
// settings, a metric with nothing to judge. Measuring again can never fix
// it, only a new spec can, so a metric with a spec error is in phase Error
// at once, whatever consecutiveErrorLimit allows, and a controller can tell
// it apart with errors.As to report the ExtendedDaemonSet as stalled.
type SpecError struct {
	// Metric names the metric at fault; empty for the provider or for a
	// template checked alone.
	Metric string
	// Err says what is wrong.
	Err error
}

func (e *SpecError) Error() string {
	if e.Metric == "" {
		return e.Err.Error()
	}
	return fmt.Sprintf("metric %s: %v", e.Metric, e.Err)
}

func (e *SpecError) Unwrap() error { return e.Err }

// CheckMetrics finds the mistakes of an analysis spec's metrics that no
// measurement can get past, before any query: for each metric its query or
// preset, its template (as ValidateQuery checks it) and what it is judged
// by, or the settings of a web or nodeHealth metric. The error joins one *SpecError per faulty metric; nil means every
// metric can be measured. A nil spec has no mistakes. The metrics it
// refuses are the ones Record puts in phase Error at once.
func CheckMetrics(spec *v1alpha1.CanaryAnalysis) error {
	if spec == nil {
		return nil
	}
	var errs []error
	for _, m := range spec.Metrics {
		if err := checkMetric(m); err != nil {
			errs = append(errs, &SpecError{Metric: m.Name, Err: err})
		}
	}
	return errors.Join(errs...)
}

// checkMetric is why a metric can never be measured, or nil. Its error is
// the inner one, without the metric's name, for messages that already say
// which metric they are about.
func checkMetric(m v1alpha1.AnalysisMetric) error {
	if m.NodeHealth != nil {
		return checkNodeHealthMetric(m)
	}
	if m.Web != nil {
		return checkWebMetric(m)
	}
	baseline := m.Baseline
	tmpl, err := QueryOf(m, baseline != nil && baseline.MannWhitney != nil)
	if err != nil {
		return err
	}
	parsed, err := parseQuery(tmpl)
	if err != nil {
		return unwrapSpecError(err)
	}
	if baseline == nil {
		if thresholdOf(m) == nil {
			return errors.New("neither thresholdRange nor baseline: nothing to judge a value against")
		}
		return nil
	}
	if parsed.usesNodes {
		return errNodesUnknown
	}
	if baseline.MaxRelativeIncrease == nil && baseline.MannWhitney == nil {
		return errors.New("baseline needs maxRelativeIncrease or mannWhitney")
	}
	if baseline.MannWhitney != nil {
		if _, err := alternativeOf(baseline.MannWhitney.Direction); err != nil {
			return fmt.Errorf("mannWhitney: %w", err)
		}
	}
	return nil
}

// unwrapSpecError is the error inside a *SpecError, so that it is not
// wrapped twice.
func unwrapSpecError(err error) error {
	var specErr *SpecError
	if errors.As(err, &specErr) {
		return specErr.Err
	}
	return err
}

// specErrorsOf are the metrics of spec that can never be measured, with
// why.
func specErrorsOf(spec *v1alpha1.CanaryAnalysis) map[string]error {
	broken := map[string]error{}
	for _, m := range spec.Metrics {
		if err := checkMetric(m); err != nil {
			broken[m.Name] = err
		}
	}
	return broken
}
