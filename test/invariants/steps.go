package invariants

import (
	"fmt"
	"time"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
)

// promotionDuration is how long the canary last must have run before it
// is promoted: its duration, or, with steps, the durations of the steps a
// person did not skip, together.
func promotionDuration(strategy *v1alpha1.CanaryStrategy, last *v1alpha1.CanaryStatus) time.Duration {
	if len(strategy.Steps) == 0 {
		required, _ := time.ParseDuration(v1alpha1.DefaultCanaryDuration)
		if strategy.Duration != nil {
			required = strategy.Duration.Duration
		}
		return required
	}
	skipped := map[int32]bool{}
	for _, rec := range last.Steps {
		skipped[rec.Step] = rec.Result == v1alpha1.CanaryStepSkipped
	}
	var required time.Duration
	for i, step := range strategy.Steps {
		if step.Duration != nil && !skipped[int32(i+1)] { //nolint:gosec // steps are at most MaxCanarySteps
			required += step.Duration.Duration
		}
	}
	return required
}

// unjudgedStep names a step of last that ended on its own without a
// Successful analysis, empty when every one had it (or there is no
// analysis to have).
func unjudgedStep(strategy *v1alpha1.CanaryStrategy, last *v1alpha1.CanaryStatus) string {
	if strategy.Analysis == nil {
		return ""
	}
	for _, rec := range last.Steps {
		if rec.Result == v1alpha1.CanaryStepSuccessful && rec.Analysis != v1alpha1.AnalysisSuccessful {
			return fmt.Sprintf("step %d ended with its analysis %q", rec.Step, rec.Analysis)
		}
	}
	return ""
}
