package controllers

import (
	"fmt"
	"time"

	"github.com/fluxcd/pkg/runtime/conditions"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
	"github.com/extendeddaemonset/extendeddaemonset/controllers/rollout"
)

// fieldOwner names the controller in managed fields.
const fieldOwner = "extendeddaemonset-controller"

// replicaSetOwnedConditions are the conditions the replica set reconciler
// writes; the patch helper lets them win over concurrent writers.
var replicaSetOwnedConditions = []string{
	v1alpha1.ReadyCondition, v1alpha1.ReconcilingCondition, v1alpha1.StalledCondition,
}

// phase is where an object stands in the condition contract of DESIGN.md.
type phase int

const (
	// progressing: Ready=False, Reconciling=True.
	progressing phase = iota
	// done: Ready=True alone.
	done
	// stalled: Ready=False, Stalled=True; only a change of spec or a retry helps.
	stalled
	// idle: Ready=False alone, for a replica set that plays no part.
	idle
)

// progress is the Ready, Reconciling and Stalled conditions of an object,
// decided in one place.
type progress struct {
	phase   phase
	reason  string
	message string
}

// apply writes p as the Ready, Reconciling and Stalled conditions of obj.
func (p progress) apply(obj conditions.Setter) {
	if p.phase == done {
		conditions.MarkTrue(obj, v1alpha1.ReadyCondition, p.reason, "%s", p.message)
	} else {
		conditions.MarkFalse(obj, v1alpha1.ReadyCondition, p.reason, "%s", p.message)
	}
	if p.phase == progressing {
		conditions.MarkReconciling(obj, p.reason, "%s", p.message)
	} else {
		conditions.Delete(obj, v1alpha1.ReconcilingCondition)
	}
	if p.phase == stalled {
		conditions.MarkStalled(obj, p.reason, "%s", p.message)
	} else {
		conditions.Delete(obj, v1alpha1.StalledCondition)
	}
}

// setReplicaSetStatus computes the whole status of a replica set from what
// the reconcile observed and planned.
func setReplicaSetStatus(ers *v1alpha1.ExtendedDaemonSetReplicaSet, obs *observation, plan rollout.Plan, actErr error, now time.Time) {
	c := plan.Counts
	st := &ers.Status
	switch {
	case obs.role != v1alpha1.ReplicaSetActive:
		st.ActiveSince = nil
	case st.Status != v1alpha1.ReplicaSetActive || st.ActiveSince == nil:
		st.ActiveSince = &metav1.Time{Time: now}
	}
	st.Status = obs.role
	st.ObservedGeneration = ers.Generation
	st.Desired, st.Current, st.Ready = int32(c.Desired), int32(c.Current), int32(c.Ready)
	st.Available, st.UpToDate, st.Unschedulable = int32(c.Available), int32(c.UpToDate), int32(c.Unschedulable)
	replicaSetProgress(obs, c, actErr).apply(ers)
}

// replicaSetProgress says where a replica set stands.
func replicaSetProgress(obs *observation, c rollout.Counts, actErr error) progress {
	params := obs.input.Params
	switch {
	case obs.specErr != nil:
		return progress{phase: stalled, reason: v1alpha1.ReasonInvalidSpec, message: obs.specErr.Error()}
	case obs.role == v1alpha1.ReplicaSetUnknown:
		return progress{phase: idle, reason: v1alpha1.ReasonInactive,
			message: fmt.Sprintf("not active: %d of its pods remain, to be replaced", c.Current)}
	case actErr != nil:
		return progress{reason: v1alpha1.ReasonReconcileFailed, message: actErr.Error()}
	}
	updated := fmt.Sprintf("%d of %d nodes up to date", c.UpToDate, c.Desired)
	if c.Unschedulable > 0 {
		updated += fmt.Sprintf(", %d pods cannot be placed", c.Unschedulable)
	}
	keptNew, keptOld := keptPods(obs.input)
	old := c.Old - keptOld
	rolledOut := c.UpToDate == c.Desired && old == 0 && c.Misplaced == 0 && c.Current-keptNew == c.Desired
	switch {
	case rolledOut:
		return progress{phase: done, reason: v1alpha1.ReasonRolledOut, message: fmt.Sprintf("%d pods available", c.Available)}
	case obs.migrationWaiting != "":
		return progress{reason: v1alpha1.ReasonWaitingForOldDaemonSet, message: obs.migrationWaiting + ": " + updated}
	case params.Frozen:
		return progress{reason: v1alpha1.ReasonRolloutFrozen, message: "rollout frozen: " + updated}
	case old > 0 && params.Paused:
		return progress{reason: v1alpha1.ReasonRollingUpdatePaused, message: "rolling update paused: " + updated}
	case old > 0:
		return progress{reason: v1alpha1.ReasonRollingUpdate, message: fmt.Sprintf("rolling update: %s, %d old pods left", updated, old)}
	default:
		return progress{reason: v1alpha1.ReasonProgressing, message: updated}
	}
}

// keptPods counts the live pods, of this replica set and of older ones, on
// nodes that take no new pod but let running ones stay (an untolerated
// NoSchedule taint). The planner leaves them alone, so, as for DaemonSets,
// they must not hold the rollout back.
func keptPods(in rollout.Input) (keptNew, keptOld int) {
	for _, node := range in.Nodes {
		if node.ShouldRun || !node.ShouldContinueRunning {
			continue
		}
		for _, pod := range in.Pods[node.Name] {
			switch {
			case pod.Terminating:
			case pod.New:
				keptNew++
			case !pod.Failed:
				keptOld++
			}
		}
	}
	return keptNew, keptOld
}
