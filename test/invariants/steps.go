package invariants

import (
	"fmt"
	"time"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
	"github.com/extendeddaemonset/extendeddaemonset/controllers/canary"
)

// promotionDuration is how long the canary last must have run before it
// is promoted: its duration, or, with steps, the durations of the steps a
// person did not skip, together. personal says a person moved the canary
// past its last step, which promotes it as a validation does.
func promotionDuration(eds *v1alpha1.ExtendedDaemonSet, last *v1alpha1.CanaryStatus) (required time.Duration, personal bool) {
	strategy := eds.Spec.Strategy.Canary
	if len(strategy.Steps) == 0 {
		required, _ = time.ParseDuration(v1alpha1.DefaultCanaryDuration)
		if strategy.Duration != nil {
			required = strategy.Duration.Duration
		}
		return required, false
	}
	n := int32(len(strategy.Steps)) //nolint:gosec // steps are at most MaxCanarySteps
	if last.Step == n && canary.SkipRequested(strategy, eds.Annotations, last, n) {
		return 0, true
	}
	skipped := map[int32]bool{}
	for _, rec := range last.Steps {
		skipped[rec.Step] = rec.Result == v1alpha1.CanaryStepSkipped
	}
	for i, step := range strategy.Steps {
		if step.Duration != nil && !skipped[int32(i+1)] { //nolint:gosec // steps are at most MaxCanarySteps
			required += step.Duration.Duration
		}
	}
	return required, false
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
