package steer

import (
	"fmt"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
	"github.com/extendeddaemonset/extendeddaemonset/controllers/canary"
)

// skipStep moves a canary with steps on from its current step. The
// annotation names the canary instance and the step, so running the
// command twice skips one step, not two, a value left behind skips nothing
// of the next canary, and the same step of a later instance of the same
// replica set is skipped by a value that differs.
func skipStep(t *target) (change, error) {
	c, err := liveCanary(t, "skip a step of")
	if err != nil {
		return change{}, err
	}
	strategy := t.eds.Spec.Strategy.Canary
	if strategy == nil || len(strategy.Steps) == 0 || c.Step == 0 {
		return change{}, fmt.Errorf("canary %s of %s has no steps (spec.strategy.canary.steps): %s promotes it",
			c.ReplicaSet, t, t.command("canary validate"))
	}
	next := "the controller promotes it"
	if int(c.Step) < len(strategy.Steps) {
		next = fmt.Sprintf("the controller starts step %d of %d", c.Step+1, len(strategy.Steps))
	}
	msg := fmt.Sprintf("step %d of canary %s of %s skipped: %s", c.Step, c.ReplicaSet, t, next)
	value := canary.SkipValue(c, c.Step)
	if t.eds.Annotations[v1alpha1.CanarySkipStepAnnotation] == value {
		return change{message: msg}, nil
	}
	return change{annotations: map[string]*string{v1alpha1.CanarySkipStepAnnotation: ptr(value)}, message: msg}, nil
}
