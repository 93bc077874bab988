package controllers

import (
	"fmt"

	"github.com/fluxcd/pkg/runtime/conditions"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/extendeddaemonset/extendeddaemonset/analysis"
	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
)

// extendedDaemonSetOwnedConditions are the conditions the ExtendedDaemonSet
// reconciler writes.
var extendedDaemonSetOwnedConditions = []string{
	v1alpha1.ReadyCondition, v1alpha1.ReconcilingCondition, v1alpha1.StalledCondition, v1alpha1.CanaryCondition,
	v1alpha1.ResourceOverridesCondition, v1alpha1.AnalysisCondition,
}

// maxConditionMessage keeps condition messages readable and far below the
// API server's limit of 32768 bytes, even when thousands of nodes or twenty
// metrics have something to say.
const maxConditionMessage = 1024

// edsObservation is what the status of an ExtendedDaemonSet is computed
// from besides its replica sets.
type edsObservation struct {
	// malformedOverrides lists the node annotations that do not parse.
	malformedOverrides error
}

// setExtendedDaemonSetStatus computes the status of an ExtendedDaemonSet
// from its replica sets: counters summed, and the conditions of the active
// replica set once it has seen itself active, unless a canary runs.
func setExtendedDaemonSetStatus(eds *v1alpha1.ExtendedDaemonSet, sets []*v1alpha1.ExtendedDaemonSetReplicaSet,
	current *v1alpha1.ExtendedDaemonSetReplicaSet, obs edsObservation,
) {
	st := &eds.Status
	st.ObservedGeneration = eds.Generation
	st.Desired, st.Current, st.Ready, st.Available = 0, 0, 0, 0
	for _, s := range sets {
		if role := roleOf(eds, s.Name); role == v1alpha1.ReplicaSetActive || role == v1alpha1.ReplicaSetCanary {
			st.Desired += s.Status.Desired
		}
		st.Current += s.Status.Current
		st.Ready += s.Status.Ready
		st.Available += s.Status.Available
	}
	st.UpToDate = current.Status.Current

	p := edsProgress(byName(sets, st.ActiveReplicaSet), current)
	if c := st.Canary; c != nil {
		p = canaryProgress(c)
		status := metav1.ConditionTrue
		if c.Failed {
			status = metav1.ConditionFalse
		}
		conditions.Set(eds, &metav1.Condition{Type: v1alpha1.CanaryCondition, Status: status, Reason: p.reason, Message: p.message})
	} else {
		conditions.Delete(eds, v1alpha1.CanaryCondition)
	}
	if c := st.Canary; c != nil && c.Analysis != nil {
		conditions.Set(eds, analysisCondition(c.Analysis))
	} else {
		conditions.Delete(eds, v1alpha1.AnalysisCondition)
	}
	p.apply(eds)
	st.State, st.Reason = stateOf(p), p.reason

	if err := obs.malformedOverrides; err != nil {
		conditions.Set(eds, &metav1.Condition{Type: v1alpha1.ResourceOverridesCondition, Status: metav1.ConditionFalse,
			Reason: v1alpha1.ReasonMalformedNodeAnnotation, Message: analysis.Truncate(err.Error(), maxConditionMessage)})
	} else {
		conditions.Delete(eds, v1alpha1.ResourceOverridesCondition)
	}
}

// canaryProgress is where an ExtendedDaemonSet stands while a canary runs,
// waits or has failed.
func canaryProgress(c *v1alpha1.CanaryStatus) progress {
	detail := ""
	if c.Reason != "" {
		detail = fmt.Sprintf(": %s: %s", c.Reason, c.Message)
	}
	switch {
	case c.Failed:
		return progress{phase: stalled, reason: v1alpha1.ReasonCanaryFailed,
			message: fmt.Sprintf("canary %s failed%s; its nodes run the active template again until the template changes or a retry is asked for", c.ReplicaSet, detail)}
	case c.Paused:
		return progress{phase: progressing, reason: v1alpha1.ReasonCanaryPaused, message: fmt.Sprintf("canary %s paused%s", c.ReplicaSet, detail)}
	default:
		return progress{phase: progressing, reason: v1alpha1.ReasonCanaryRunning,
			message: fmt.Sprintf("canary %s running on %d nodes%s", c.ReplicaSet, len(c.Nodes), detail)}
	}
}

// edsProgress mirrors the active replica set's conditions, once its status
// describes it as the active one of the current template.
func edsProgress(active, current *v1alpha1.ExtendedDaemonSetReplicaSet) progress {
	switch {
	case active == nil:
		return progress{phase: progressing, reason: v1alpha1.ReasonProgressing, message: "waiting for the active replica set"}
	case active.Status.Status != v1alpha1.ReplicaSetActive || active.Status.ObservedGeneration != active.Generation:
		return progress{phase: progressing, reason: v1alpha1.ReasonProgressing,
			message: fmt.Sprintf("waiting for replica set %s to take over", active.Name)}
	}
	ready := conditions.Get(active, v1alpha1.ReadyCondition)
	if ready == nil {
		return progress{phase: progressing, reason: v1alpha1.ReasonProgressing, message: "waiting for replica set " + active.Name}
	}
	p := progress{reason: ready.Reason, message: ready.Message}
	switch {
	case conditions.IsStalled(active):
		p.phase = stalled
	case conditions.IsReady(active) && active.Name == current.Name:
		p.phase = done
	default:
		p.phase = progressing
	}
	return p
}

// stateOf is the one-word summary of the printer column.
func stateOf(p progress) v1alpha1.ExtendedDaemonSetState {
	switch {
	case p.phase == done:
		return v1alpha1.StateRunning
	case p.reason == v1alpha1.ReasonCanaryFailed:
		return v1alpha1.StateCanaryFailed
	case p.phase == stalled:
		return v1alpha1.StateError
	case p.reason == v1alpha1.ReasonRolloutFrozen:
		return v1alpha1.StateFrozen
	case p.reason == v1alpha1.ReasonCanaryPaused:
		return v1alpha1.StateCanaryPaused
	case p.reason == v1alpha1.ReasonCanaryRunning:
		return v1alpha1.StateCanary
	default:
		return v1alpha1.StateRollingUpdate
	}
}
