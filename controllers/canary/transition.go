package canary

import (
	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
)

// Transition is the change from one recorded canary to the next worth
// telling, empty when there is none: the event reason of a canary that
// started, went on to its next step, was promoted, failed, was retried,
// paused or resumed. before is
// the canary recorded so far (nil when none), after the one recorded now;
// promoted says after's template became the active one. It is derived from
// the two states alone, so whoever compares what was written before and
// after tells the same story.
func Transition(before, after *v1alpha1.CanaryStatus, promoted bool) string {
	if before != nil && after != nil && before.ReplicaSet != after.ReplicaSet {
		before = nil
	}
	switch {
	case promoted:
		return Promoted
	case after == nil:
		return ""
	case after.Failed:
		if before != nil && before.Failed {
			return ""
		}
		return Failed
	case before != nil && before.Failed:
		return Retried
	case before == nil:
		return Started
	case after.Step > before.Step:
		return StepStarted
	case after.Paused:
		return pauseTransition(before, after.Reason)
	case before.Paused:
		return Resumed
	}
	return ""
}
