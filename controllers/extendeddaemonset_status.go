package controllers

import (
	"fmt"

	"github.com/fluxcd/pkg/runtime/conditions"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
)

// extendedDaemonSetOwnedConditions are the conditions the ExtendedDaemonSet
// reconciler writes.
var extendedDaemonSetOwnedConditions = []string{
	v1alpha1.ReadyCondition, v1alpha1.ReconcilingCondition, v1alpha1.StalledCondition,
}

// setExtendedDaemonSetStatus computes the status of an ExtendedDaemonSet
// from its replica sets: counters summed, and the conditions of the active
// replica set once it has seen itself active, unless blocked says otherwise.
func setExtendedDaemonSetStatus(eds *v1alpha1.ExtendedDaemonSet, sets []*v1alpha1.ExtendedDaemonSetReplicaSet,
	current *v1alpha1.ExtendedDaemonSetReplicaSet, blocked *progress,
) {
	st := &eds.Status
	st.ObservedGeneration = eds.Generation
	st.Desired, st.Current, st.Ready, st.Available = 0, 0, 0, 0
	for _, s := range sets {
		if s.Name == st.ActiveReplicaSet || (runningCanary(eds) != nil && s.Name == runningCanary(eds).ReplicaSet) {
			st.Desired += s.Status.Desired
		}
		st.Current += s.Status.Current
		st.Ready += s.Status.Ready
		st.Available += s.Status.Available
	}
	st.UpToDate = current.Status.Current

	p := edsProgress(byName(sets, st.ActiveReplicaSet), current)
	if blocked != nil {
		p = *blocked
	}
	p.apply(eds)
	st.State, st.Reason = stateOf(p), p.reason
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
	case p.phase == stalled:
		return v1alpha1.StateError
	case p.reason == v1alpha1.ReasonRolloutFrozen:
		return v1alpha1.StateFrozen
	default:
		return v1alpha1.StateRollingUpdate
	}
}
