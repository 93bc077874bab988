package steer

import (
	"fmt"
	"time"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
	"github.com/extendeddaemonset/extendeddaemonset/controllers/canary"
)

// The values of canary-validated, canary-failed, canary-unpaused and
// canary-skip-step name the running canary instance
// (canary.SteeringValue), so a value left from an earlier canary, of the
// same replica set included, steers nothing, and acting on a later
// instance always writes a new value; canary-paused, on the other hand, is
// "true" for whatever canary runs, the next ones included.

func validateCanary(t *target) (change, error) {
	c, err := liveCanary(t, "validate")
	if err != nil {
		return change{}, err
	}
	msg := fmt.Sprintf("canary %s of %s validated: the controller promotes it", c.ReplicaSet, t)
	value := canary.SteeringValue(c)
	if t.eds.Annotations[v1alpha1.CanaryValidatedAnnotation] == value && !pausedByAnnotation(t) {
		return change{message: msg}, nil
	}
	set := map[string]*string{v1alpha1.CanaryValidatedAnnotation: ptr(value)}
	return change{annotations: set, message: msg + endPause(t, set)}, nil
}

func pauseCanary(t *target) (change, error) {
	c, err := liveCanary(t, "pause")
	if err != nil {
		return change{}, err
	}
	if pausedByAnnotation(t) {
		return change{message: fmt.Sprintf("canary %s of %s is already paused: %s lets it go on", c.ReplicaSet, t, t.command("canary unpause"))}, nil
	}
	return change{
		annotations: map[string]*string{v1alpha1.CanaryPausedAnnotation: ptr("true")},
		message: fmt.Sprintf("canary %s of %s paused: it keeps its nodes, and its pods neither promote nor fail it until %s",
			c.ReplicaSet, t, t.command("canary unpause")),
	}, nil
}

// unpauseCanary lifts a person's pause, or lets a canary that autoPause
// stopped go on; other waits are not pauses unpausing can end.
func unpauseCanary(t *target) (change, error) {
	c, err := liveCanary(t, "unpause")
	if err != nil {
		if d := pausedDomainGate(t.eds); d != nil && t.eds.Status.ObservedGeneration == t.eds.Generation {
			// A gate before a domain paused the rolling update: the value
			// names the replica set and the domain, so that it passes no
			// other gate.
			return change{
				annotations: map[string]*string{v1alpha1.CanaryUnpausedAnnotation: ptr(canary.DomainSteering(d.ReplicaSet, d.Domain))},
				message:     fmt.Sprintf("gates before domain %s of %s passed: the rolling update goes on", d.Domain, t),
			}, nil
		}
		if pausedByAnnotation(t) && t.eds.Status.Canary == nil {
			// The annotation would pause the next canary: lifting it is
			// what unpausing means without one.
			return change{
				annotations: map[string]*string{v1alpha1.CanaryPausedAnnotation: nil},
				message:     fmt.Sprintf("no canary runs for %s; removed %s, which would have paused the next one", t, v1alpha1.CanaryPausedAnnotation),
			}, nil
		}
		return change{}, err
	}
	strategy := t.eds.Spec.Strategy.Canary
	switch {
	case pausedByAnnotation(t):
		return change{
			annotations: map[string]*string{v1alpha1.CanaryPausedAnnotation: nil},
			message:     fmt.Sprintf("canary %s of %s unpaused: the controller judges it again", c.ReplicaSet, t),
		}, nil
	case strategy != nil && strategy.Paused:
		return change{}, fmt.Errorf("canary %s of %s is paused by spec.strategy.canary.paused, not by an annotation: set it to false where the spec is kept (git)",
			c.ReplicaSet, t)
	case !c.Paused:
		return change{}, fmt.Errorf("canary %s of %s is not paused: there is nothing to unpause; %s shows what it waits for",
			c.ReplicaSet, t, t.command("status"))
	case c.Reason == canary.ReasonWaitingForValidation:
		return change{}, fmt.Errorf("canary %s of %s waits for a person's validation, which unpausing does not give: %s promotes it, %s fails it",
			c.ReplicaSet, t, t.command("canary validate"), t.command("canary fail"))
	case c.Reason == v1alpha1.ReasonNodeHealthRegressed:
		return change{}, fmt.Errorf("canary %s of %s is paused by a node-health regression (%s), which unpausing cannot lift: its analysis stays failed; "+
			"%s sends its nodes back, %s promotes it anyway", c.ReplicaSet, t, reasonOf(c), t.command("canary fail"), t.command("canary validate"))
	case c.Reason == v1alpha1.ReasonAnalysisError || c.Reason == v1alpha1.ReasonAnalysisInconclusive:
		return change{}, fmt.Errorf("canary %s of %s is held by its analysis (%s), which unpausing cannot override: "+
			"repair what the analysis measures, or decide with %s or %s", c.ReplicaSet, t, reasonOf(c), t.command("canary validate"), t.command("canary fail"))
	}
	msg := fmt.Sprintf("canary %s of %s unpaused: the controller lets it go on despite its auto-pause (%s)", c.ReplicaSet, t, reasonOf(c))
	value := canary.SteeringValue(c)
	if t.eds.Annotations[v1alpha1.CanaryUnpausedAnnotation] == value {
		return change{message: msg}, nil
	}
	return change{annotations: map[string]*string{v1alpha1.CanaryUnpausedAnnotation: ptr(value)}, message: msg}, nil
}

func failCanary(t *target) (change, error) {
	c, err := liveCanary(t, "fail")
	if err != nil {
		return change{}, err
	}
	msg := fmt.Sprintf("canary %s of %s failed: its nodes go back to the active template (%s); %s starts it again",
		c.ReplicaSet, t, t.eds.Status.ActiveReplicaSet, t.command("canary retry"))
	if t.referencing() {
		// The DaemonSet recreates a deleted pod at its own template only.
		msg = fmt.Sprintf("canary %s of %s failed: no other pod of %s is deleted, and its nodes keep its revision until the DaemonSet's "+
			"template is reverted (%s prints the active one's, for git); %s starts it again",
			c.ReplicaSet, t, t.daemonSet(), t.command("rollback"), t.command("canary retry"))
	}
	value := canary.SteeringValue(c)
	if t.eds.Annotations[v1alpha1.CanaryFailedAnnotation] == value && !pausedByAnnotation(t) {
		return change{message: msg}, nil
	}
	set := map[string]*string{v1alpha1.CanaryFailedAnnotation: ptr(value)}
	return change{annotations: set, message: msg + endPause(t, set)}, nil
}

// retryCanary changes the retry token, and clears a canary-failed naming
// the canary: the retried canary is a new instance, which ignores it, but
// nothing is left behind to puzzle a reader. Without a canary, it retries
// a domain bake whose analysis halted the rollout.
func retryCanary(t *target) (change, error) {
	if err := observed(t); err != nil {
		return change{}, err
	}
	c := t.eds.Status.Canary
	switch {
	case c == nil && failedBake(t.eds) != nil:
		b := failedBake(t.eds)
		return change{annotations: map[string]*string{v1alpha1.CanaryRetryAnnotation: ptr(time.Now().UTC().Format(time.RFC3339Nano))},
			message: fmt.Sprintf("bake of domain %s of %s retried: its analysis judges it again", b.Domain, t)}, nil
	case c == nil:
		return change{}, fmt.Errorf("no canary of %s has failed: there is nothing to retry; %s shows where the rollout is", t, t.command("status"))
	case !c.Failed:
		return change{}, fmt.Errorf("canary %s of %s has not failed: there is nothing to retry; %s shows where it is", c.ReplicaSet, t, t.command("status"))
	}
	set := map[string]*string{v1alpha1.CanaryRetryAnnotation: ptr(time.Now().UTC().Format(time.RFC3339Nano))}
	if canary.Addresses(t.eds.Annotations[v1alpha1.CanaryFailedAnnotation], c) {
		set[v1alpha1.CanaryFailedAnnotation] = nil
	}
	return change{annotations: set, message: fmt.Sprintf("canary %s of %s retried: the controller starts it again", c.ReplicaSet, t)}, nil
}

// pausedDomainGate is the record of the gates before a domain of eds's
// rolling update when one of them paused it (reason CanaryPaused without
// a canary), nil otherwise.
func pausedDomainGate(eds *v1alpha1.ExtendedDaemonSet) *v1alpha1.DomainGateStatus {
	st := &eds.Status
	d := st.DomainGate
	if st.Canary != nil || d == nil || d.ReplicaSet != st.ActiveReplicaSet || st.Reason != v1alpha1.ReasonCanaryPaused {
		return nil
	}
	return d
}

func pausedByAnnotation(t *target) bool {
	return t.eds.Annotations[v1alpha1.CanaryPausedAnnotation] == "true"
}

// endPause adds the removal of canary-paused to set when a person decides
// about the canary it paused, and says so: left behind, it would pause the
// next canary.
func endPause(t *target, set map[string]*string) string {
	if !pausedByAnnotation(t) {
		return ""
	}
	set[v1alpha1.CanaryPausedAnnotation] = nil
	return fmt.Sprintf(" (%s is removed with it, or it would pause the next canary)", v1alpha1.CanaryPausedAnnotation)
}

// failedBake is the bake whose analysis halted the active replica set's
// rollout, nil when none did.
func failedBake(eds *v1alpha1.ExtendedDaemonSet) *v1alpha1.DomainBakeStatus {
	b := eds.Status.Bake
	if b == nil || b.Analysis == nil || b.ReplicaSet != eds.Status.ActiveReplicaSet {
		return nil
	}
	switch b.Analysis.Phase {
	case v1alpha1.AnalysisFailed, v1alpha1.AnalysisError, v1alpha1.AnalysisInconclusive:
		return b
	}
	return nil
}
