package controllers

import (
	"fmt"
	"strings"
	"time"

	"github.com/fluxcd/pkg/runtime/conditions"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/extendeddaemonset/extendeddaemonset/analysis"
	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
	"github.com/extendeddaemonset/extendeddaemonset/controllers/bake"
	"github.com/extendeddaemonset/extendeddaemonset/controllers/canary"
	"github.com/extendeddaemonset/extendeddaemonset/controllers/internal/outcome"
)

// edsObservation is what the status of an ExtendedDaemonSet is computed
// from.
type edsObservation struct {
	// sets are its replica sets and current the one of its template; nil
	// when the reconcile failed before finding them.
	sets    []*v1alpha1.ExtendedDaemonSetReplicaSet
	current *v1alpha1.ExtendedDaemonSetReplicaSet
	// malformedOverrides lists the node annotations that do not parse.
	malformedOverrides error
	// canaryNote is what a canary step did, told once the status is written.
	canaryNote *canaryNote
	// bakeMeasured are the measurements a bake's analysis took, exported
	// once the status is written.
	bakeMeasured map[string]v1alpha1.Measurement
	// domainGate is where the gates before the domains stand.
	domainGate canary.DomainGateDecision
	// pruneErr is why old replica sets could not be deleted; retried, and
	// not part of the status.
	pruneErr error
	// now is when the status is computed: the time left of a canary step
	// is told from it.
	now time.Time
}

// setExtendedDaemonSetStatus computes the status of an ExtendedDaemonSet,
// on every path of a reconcile, from what the pass observed and how it
// ended: observedGeneration once the spec was read through, the counters
// summed from its replica sets, the Canary and Analysis conditions, the
// Ready, Reconciling and Stalled conditions of extendedDaemonSetProgress
// with the printer columns, and the ResourceOverrides condition.
func setExtendedDaemonSetStatus(eds *v1alpha1.ExtendedDaemonSet, obs edsObservation, err error) {
	st := &eds.Status
	if err == nil || outcome.IsStalling(err) {
		st.ObservedGeneration = eds.Generation
	}
	if obs.current != nil {
		sumReplicaSets(eds, obs.sets, obs.current)
		setCanaryConditions(eds, obs.now)
	}
	p := extendedDaemonSetProgress(eds, obs, err)
	p.Apply(eds)
	st.State, st.Reason = stateOf(p), p.Reason
	if st.Canary == nil && (st.State == v1alpha1.StateCanary || st.State == v1alpha1.StateCanaryPaused) {
		// Without a canary, a gate holds or paused the rolling update.
		st.State = v1alpha1.StateRollingUpdate
	}
	if err := obs.malformedOverrides; err != nil {
		conditions.Set(eds, &metav1.Condition{Type: v1alpha1.ResourceOverridesCondition, Status: metav1.ConditionFalse,
			Reason: v1alpha1.ReasonMalformedNodeAnnotation, Message: analysis.Truncate(err.Error(), outcome.MaxConditionMessage)})
	} else {
		conditions.Delete(eds, v1alpha1.ResourceOverridesCondition)
	}
}

// extendedDaemonSetProgress is where an ExtendedDaemonSet stands. The
// first of these that applies decides:
//  1. an error of the pass: a spec error stalls it (InvalidSpec), any other
//     leaves it progressing with the error as the reason, retried;
//  2. replica sets not found yet: progressing;
//  3. a canary, running, paused or failed, speaks for it; a canary that
//     found no nodes past the progress deadline stalls it;
//  4. a bake whose analysis failed stalls it (DomainBakeFailed);
//  5. the gates before a domain hold it (WaitingForGate), pause it or,
//     timed out, stall it (GateTimedOut);
//  6. otherwise the active replica set's conditions, once its status
//     describes it as the active one, with the time left of a domain that
//     bakes.
func extendedDaemonSetProgress(eds *v1alpha1.ExtendedDaemonSet, obs edsObservation, err error) outcome.Progress {
	st := &eds.Status
	switch {
	case outcome.IsStalling(err):
		return outcome.Progress{Phase: outcome.Stalled, Reason: v1alpha1.ReasonInvalidSpec, Message: analysis.Truncate(err.Error(), outcome.MaxConditionMessage)}
	case err != nil:
		return outcome.Progress{Phase: outcome.Progressing, Reason: v1alpha1.ReasonReconcileFailed, Message: analysis.Truncate(err.Error(), outcome.MaxConditionMessage)}
	case obs.current == nil:
		return outcome.Progress{Phase: outcome.Progressing, Reason: v1alpha1.ReasonProgressing}
	case st.Canary != nil:
		c := st.Canary
		if deadline := eds.Spec.ProgressDeadline(); canary.WaitingForNodesPastDeadline(c, deadline, obs.now) {
			return outcome.Progress{Phase: outcome.Stalled, Reason: v1alpha1.ReasonProgressDeadlineExceeded,
				Message: fmt.Sprintf("canary %s found no nodes to run on for %s: %s", c.ReplicaSet, deadline, c.Message)}
		}
		return canaryProgress(c, byName(obs.sets, c.ReplicaSet), canary.StepMessage(c, eds.Spec.Strategy.Canary, obs.now), afterFailure(eds))
	case bake.Failed(st.Bake) && st.Bake.ReplicaSet == st.ActiveReplicaSet:
		return outcome.Progress{Phase: outcome.Stalled, Reason: v1alpha1.ReasonDomainBakeFailed,
			Message: analysis.Truncate(bake.FailedMessage(st.Bake), outcome.MaxConditionMessage)}
	}
	if p, ok := domainGateProgress(eds, obs.domainGate); ok {
		p.Message = analysis.Truncate(p.Message, outcome.MaxConditionMessage)
		return p
	}
	return withBakeMessage(eds, activeProgress(byName(obs.sets, st.ActiveReplicaSet), obs.current), obs.now)
}

// sumReplicaSets sums the counters of the replica sets that place pods,
// the active one and a running canary: between them they take care of
// every node once, and count nodes (any pod of ours on them), so no sum
// exceeds the desired nodes. A replica set without a role counts nothing,
// whatever its last status says: a failed canary's, written before its
// nodes went back, would count them twice. Up to date are the nodes the
// current template's replica set runs on alone, available.
func sumReplicaSets(eds *v1alpha1.ExtendedDaemonSet, sets []*v1alpha1.ExtendedDaemonSetReplicaSet, current *v1alpha1.ExtendedDaemonSetReplicaSet) {
	st := &eds.Status
	st.Desired, st.Current, st.Ready, st.Available, st.UpToDate, st.IgnoredUnresponsiveNodes, st.NodesInMaintenance = 0, 0, 0, 0, 0, 0, 0
	for _, s := range sets {
		role := canary.RoleOf(eds, s.Name)
		if role != v1alpha1.ReplicaSetActive && role != v1alpha1.ReplicaSetCanary {
			continue
		}
		st.Desired += s.Status.Desired
		st.IgnoredUnresponsiveNodes += s.Status.IgnoredUnresponsiveNodes
		st.NodesInMaintenance += s.Status.NodesInMaintenance
		st.Current += s.Status.Current
		st.Ready += s.Status.Ready
		st.Available += s.Status.Available
		if s.Name == current.Name {
			st.UpToDate = s.Status.UpToDate
		}
	}
}

// setCanaryConditions sets the Canary and Analysis conditions while a
// canary runs, waits or has failed, the Analysis condition alone while a
// bake is judged or has failed, and removes them otherwise.
func setCanaryConditions(eds *v1alpha1.ExtendedDaemonSet, now time.Time) {
	c := eds.Status.Canary
	if c == nil {
		conditions.Delete(eds, v1alpha1.CanaryCondition)
		if cond := bakeAnalysisCondition(eds); cond != nil {
			conditions.Set(eds, cond)
		} else {
			conditions.Delete(eds, v1alpha1.AnalysisCondition)
		}
		return
	}
	p := canaryProgress(c, nil, canary.StepMessage(c, eds.Spec.Strategy.Canary, now), afterFailure(eds))
	status := metav1.ConditionTrue
	if c.Failed {
		status = metav1.ConditionFalse
	}
	conditions.Set(eds, &metav1.Condition{Type: v1alpha1.CanaryCondition, Status: status, Reason: p.Reason,
		Message: analysis.Truncate(p.Message, outcome.MaxConditionMessage)})
	if c.Analysis != nil {
		conditions.Set(eds, analysisCondition(c.Analysis))
	} else {
		conditions.Delete(eds, v1alpha1.AnalysisCondition)
	}
}

// bakeAnalysisCondition is the Analysis condition of the bake being
// judged, or that halted the rollout; nil otherwise.
func bakeAnalysisCondition(eds *v1alpha1.ExtendedDaemonSet) *metav1.Condition {
	b := eds.Status.Bake
	if b == nil || b.Analysis == nil || b.ReplicaSet != eds.Status.ActiveReplicaSet || bake.Passed(b, b.Domain) {
		return nil
	}
	c := analysisCondition(b.Analysis)
	c.Message = analysis.Truncate("bake of domain "+b.Domain+": "+c.Message, outcome.MaxConditionMessage)
	return c
}

// analysisCondition is the Analysis condition of an analysis: True once
// it succeeds, False when it failed or cannot conclude, Unknown meanwhile.
func analysisCondition(a *v1alpha1.AnalysisStatus) *metav1.Condition {
	status := metav1.ConditionUnknown
	switch a.Phase {
	case v1alpha1.AnalysisSuccessful:
		status = metav1.ConditionTrue
	case v1alpha1.AnalysisFailed, v1alpha1.AnalysisError, v1alpha1.AnalysisInconclusive:
		status = metav1.ConditionFalse
	}
	message := a.Message
	if message == "" {
		message = "waiting for the first measurement"
	}
	return &metav1.Condition{Type: v1alpha1.AnalysisCondition, Status: status, Reason: analysisReasons[a.Phase],
		Message: analysis.Truncate(message, outcome.MaxConditionMessage)}
}

// afterFailure says what becomes of the nodes of a failed canary of eds.
// A DaemonSet a workloadRef names recreates pods only at its current
// template: the canary's nodes keep running the failed one, and no pod is
// replaced, until its template is reverted.
func afterFailure(eds *v1alpha1.ExtendedDaemonSet) string {
	c := eds.Status.Canary
	if ref := eds.Spec.WorkloadRef; ref != nil && c != nil {
		return fmt.Sprintf("its nodes %s keep running its revision, since DaemonSet %s recreates pods only at its current template: "+
			"no pod is replaced until the DaemonSet's template is reverted (in git) to the revision of replica set %s, which then returns them at once",
			namedNodes(c.Nodes), ref.Name, eds.Status.ActiveReplicaSet)
	}
	return "its nodes run the active template again until the template changes or a retry is asked for"
}

// maxCanaryNodesNamed bounds the nodes a failed canary's message names.
const maxCanaryNodesNamed = 5

// namedNodes names the first of nodes, and counts the others.
func namedNodes(nodes []string) string {
	if n := len(nodes); n > maxCanaryNodesNamed {
		return fmt.Sprintf("%s and %d more", strings.Join(nodes[:maxCanaryNodesNamed], ", "), n-maxCanaryNodesNamed)
	}
	return strings.Join(nodes, ", ")
}

// canaryProgress is where an ExtendedDaemonSet stands while a canary runs,
// waits or has failed. A canary whose replica set missed its progress
// deadline (its pods never become available) stalls the ExtendedDaemonSet
// too. step tells where a canary with steps stands (canary.StepMessage),
// empty without steps.
func canaryProgress(c *v1alpha1.CanaryStatus, ers *v1alpha1.ExtendedDaemonSetReplicaSet, step, afterFailure string) outcome.Progress {
	detail := ""
	if c.Reason != "" {
		detail = fmt.Sprintf(": %s: %s", c.Reason, c.Message)
	}
	switch {
	case c.Failed:
		at := ""
		if c.Step > 0 {
			at = fmt.Sprintf(" at step %d", c.Step)
		}
		return outcome.Progress{Phase: outcome.Stalled, Reason: v1alpha1.ReasonCanaryFailed,
			Message: fmt.Sprintf("canary %s failed%s%s; %s", c.ReplicaSet, at, detail, afterFailure)}
	case c.Paused && step != "":
		return outcome.Progress{Phase: outcome.Progressing, Reason: v1alpha1.ReasonCanaryPaused, Message: fmt.Sprintf("canary %s paused, %s%s", c.ReplicaSet, step, detail)}
	case c.Paused:
		return outcome.Progress{Phase: outcome.Progressing, Reason: v1alpha1.ReasonCanaryPaused, Message: fmt.Sprintf("canary %s paused%s", c.ReplicaSet, detail)}
	}
	if ers != nil {
		if s := conditions.Get(ers, v1alpha1.StalledCondition); s != nil && s.Status == metav1.ConditionTrue {
			return outcome.Progress{Phase: outcome.Stalled, Reason: s.Reason, Message: fmt.Sprintf("canary %s: %s", c.ReplicaSet, s.Message)}
		}
	}
	if c.Reason == v1alpha1.ReasonWaitingForGate {
		return outcome.Progress{Phase: outcome.Progressing, Reason: v1alpha1.ReasonWaitingForGate, Message: fmt.Sprintf("canary %s %s", c.ReplicaSet, c.Message)}
	}
	if step != "" {
		return outcome.Progress{Phase: outcome.Progressing, Reason: v1alpha1.ReasonCanaryRunning,
			Message: fmt.Sprintf("canary %s running, %s%s", c.ReplicaSet, step, detail)}
	}
	return outcome.Progress{Phase: outcome.Progressing, Reason: v1alpha1.ReasonCanaryRunning,
		Message: fmt.Sprintf("canary %s running on %d nodes%s", c.ReplicaSet, len(c.Nodes), detail)}
}

// activeProgress mirrors the active replica set's conditions, once its status
// describes it as the active one of the current template.
func activeProgress(active, current *v1alpha1.ExtendedDaemonSetReplicaSet) outcome.Progress {
	switch {
	case active == nil:
		return outcome.Progress{Phase: outcome.Progressing, Reason: v1alpha1.ReasonProgressing, Message: "waiting for the active replica set"}
	case active.Status.Status != v1alpha1.ReplicaSetActive || active.Status.ObservedGeneration != active.Generation:
		return outcome.Progress{Phase: outcome.Progressing, Reason: v1alpha1.ReasonProgressing,
			Message: fmt.Sprintf("waiting for replica set %s to take over", active.Name)}
	}
	ready := conditions.Get(active, v1alpha1.ReadyCondition)
	if ready == nil {
		return outcome.Progress{Phase: outcome.Progressing, Reason: v1alpha1.ReasonProgressing, Message: "waiting for replica set " + active.Name}
	}
	p := outcome.Progress{Reason: ready.Reason, Message: ready.Message}
	switch {
	case conditions.IsStalled(active):
		p.Phase = outcome.Stalled
	case conditions.IsReady(active) && active.Name == current.Name:
		p.Phase = outcome.Done
	default:
		p.Phase = outcome.Progressing
	}
	return p
}

// withBakeMessage is p, the active replica set's progress, with the time
// left of the domain that bakes while one does.
func withBakeMessage(eds *v1alpha1.ExtendedDaemonSet, p outcome.Progress, now time.Time) outcome.Progress {
	if p.Phase != outcome.Progressing || p.Reason != v1alpha1.ReasonDomainBaking {
		return p
	}
	if msg, _ := bake.Message(eds.Status.Domains, eds.Status.Bake, bakeTime(eds), now); msg != "" {
		p.Message = msg
	}
	return p
}

// stateOf is the one-word summary of the printer column.
func stateOf(p outcome.Progress) v1alpha1.ExtendedDaemonSetState {
	switch {
	case p.Phase == outcome.Done:
		return v1alpha1.StateRunning
	case p.Reason == v1alpha1.ReasonCanaryFailed:
		return v1alpha1.StateCanaryFailed
	case p.Phase == outcome.Stalled:
		return v1alpha1.StateError
	case p.Reason == v1alpha1.ReasonRolloutFrozen:
		return v1alpha1.StateFrozen
	case p.Reason == v1alpha1.ReasonCanaryPaused:
		return v1alpha1.StateCanaryPaused
	case p.Reason == v1alpha1.ReasonCanaryRunning, p.Reason == v1alpha1.ReasonWaitingForGate:
		return v1alpha1.StateCanary
	default:
		return v1alpha1.StateRollingUpdate
	}
}
