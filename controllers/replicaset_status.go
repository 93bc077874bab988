package controllers

import (
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
	"github.com/extendeddaemonset/extendeddaemonset/controllers/internal/outcome"
	"github.com/extendeddaemonset/extendeddaemonset/controllers/rollout"
)

// setReplicaSetStatus computes the whole status of a replica set from what
// the reconcile observed and planned. It returns when time alone will
// change the status: the progress deadline.
func setReplicaSetStatus(ers *v1alpha1.ExtendedDaemonSetReplicaSet, obs *observation, plan rollout.Plan, actErr error, now time.Time) time.Duration {
	c := plan.Counts
	st := &ers.Status
	before := *st
	switch {
	case obs.role != v1alpha1.ReplicaSetActive:
		st.ActiveSince = nil
	case st.Status != v1alpha1.ReplicaSetActive || st.ActiveSince == nil:
		st.ActiveSince = &metav1.Time{Time: now}
	}
	st.Status = obs.role
	st.ObservedGeneration = ers.Generation
	// Nodes, not pods, as a DaemonSet's status counts (Counts.Running).
	st.Desired, st.Current, st.Ready = int32(c.Desired), int32(c.Running.Current), int32(c.Running.Ready)
	st.Available, st.UpToDate, st.Unschedulable = int32(c.Running.Available), int32(c.UpToDate), int32(c.Unschedulable)
	st.IgnoredUnresponsiveNodes, st.NodesInMaintenance = int32(c.IgnoredUnresponsive), int32(c.InMaintenance)
	st.Domains = nil
	if obs.role == v1alpha1.ReplicaSetActive {
		st.Domains = domainStatuses(c.Domains)
	}
	p := replicaSetProgress(obs, c, actErr)
	markProgress(&before, st, c, p, now)
	var untilStalled time.Duration
	if p.WaitsForProgress() {
		// markProgress has set the time of the last progress of a
		// replica set that waits; one that does not may have none.
		if stalledAt := st.LastProgressTime.Add(obs.deadline); now.Before(stalledAt) {
			untilStalled = stalledAt.Sub(now) + time.Second
		} else {
			p = outcome.Progress{Phase: outcome.Stalled, Reason: v1alpha1.ReasonProgressDeadlineExceeded, Message: deadlineMessage(obs, actErr)}
		}
	}
	p.Apply(ers)
	return untilStalled
}

// replicaSetProgress says where a replica set stands. Messages change with
// the reason only; the counters are in the status fields.
func replicaSetProgress(obs *observation, c rollout.Counts, actErr error) outcome.Progress {
	params := obs.input.Params
	switch {
	case obs.specErr != nil:
		return outcome.Progress{Phase: outcome.Stalled, Reason: v1alpha1.ReasonInvalidSpec, Message: obs.specErr.Error()}
	case obs.role == v1alpha1.ReplicaSetUnknown:
		return outcome.Progress{Phase: outcome.Idle, Reason: v1alpha1.ReasonInactive,
			Message: "not active: the active replica set replaces its pods"}
	case actErr != nil:
		return outcome.Progress{Reason: v1alpha1.ReasonReconcileFailed, Message: actErr.Error()}
	}
	// Pods kept on a node that takes no new one (Counts.KeptNew,
	// KeptOld) are left alone, so, as for DaemonSets, they do not hold the
	// rollout back.
	old := c.Old - c.KeptOld
	rolledOut := c.UpToDate == c.Desired && old == 0 && c.Misplaced == 0 && c.Current-c.KeptNew == c.Desired
	switch {
	case rolledOut:
		return outcome.Progress{Phase: outcome.Done, Reason: v1alpha1.ReasonRolledOut, Message: "every node runs an available pod of this replica set"}
	case obs.migrationWaiting != "":
		return outcome.Progress{Reason: v1alpha1.ReasonWaitingForOldDaemonSet, Message: obs.migrationWaiting}
	case obs.workloadWaiting != "":
		return outcome.Progress{Reason: v1alpha1.ReasonWaitingForWorkload, Message: obs.workloadWaiting}
	case params.Frozen:
		return outcome.Progress{Reason: v1alpha1.ReasonRolloutFrozen, Message: "rollout frozen: no pod is created or deleted until it is unfrozen"}
	case old > 0 && params.Paused:
		return outcome.Progress{Reason: v1alpha1.ReasonRollingUpdatePaused, Message: "rolling update paused: old pods stay until it is resumed"}
	case old > 0 && baking(c.Domains) != "":
		// The next domain waits for the bake's time and verdict, not for
		// pods: no progress deadline runs.
		return outcome.Progress{Reason: v1alpha1.ReasonDomainBaking,
			Message: fmt.Sprintf("rolling update: domain %s bakes before the next one starts", baking(c.Domains))}
	case old > 0 && rollout.WaitingAtGates(c.Domains) != "":
		// The next domain waits for its gates, which the ExtendedDaemonSet
		// asks, not for pods: no progress deadline runs.
		return outcome.Progress{Reason: v1alpha1.ReasonWaitingForGate,
			Message: fmt.Sprintf("rolling update: domain %s waits for its gates", rollout.WaitingAtGates(c.Domains))}
	case old > 0:
		return outcome.Progress{Reason: v1alpha1.ReasonRollingUpdate, Message: "rolling update: replacing old pods within maxUnavailable and maxSurge"}
	default:
		return outcome.Progress{Reason: v1alpha1.ReasonProgressing, Message: "creating pods and waiting for them to be available"}
	}
}

// baking is the domain that bakes, empty when none does.
func baking(domains []rollout.DomainCounts) string {
	for _, d := range domains {
		if d.State == rollout.DomainBaking {
			return d.Name
		}
	}
	return ""
}
