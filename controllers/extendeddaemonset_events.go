package controllers

import (
	"fmt"
	"time"

	"github.com/fluxcd/pkg/runtime/conditions"
	corev1 "k8s.io/api/core/v1"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
	"github.com/extendeddaemonset/extendeddaemonset/controllers/canary"
)

// canaryNote is what a canary step did that is worth telling once its
// status is written: the transition, the canary as decided (also when
// promoted, which drops it from the status), and the measurements taken.
type canaryNote struct {
	replicaSet *v1alpha1.ExtendedDaemonSetReplicaSet
	transition string
	canary     *v1alpha1.CanaryStatus
	measured   map[string]v1alpha1.Measurement
	// asks are the gates the canary waits at, asked once the status is
	// written.
	asks []canary.GateAsk
}

// tellTransitions tells, as events and metrics, what changed between the
// status read and the status written. It runs once the status patch
// succeeded, so a retried reconcile does not tell anything twice.
func (r *ExtendedDaemonSetReconciler) tellTransitions(before, after *v1alpha1.ExtendedDaemonSet, note *canaryNote, now time.Time) {
	if prev, next := before.Status.ActiveReplicaSet, after.Status.ActiveReplicaSet; prev != "" && prev != next {
		r.Recorder.Eventf(after, nil, corev1.EventTypeNormal, "RollingUpdateStarted", "RollingUpdate",
			"rolling out replica set %s in place of %s", next, prev)
	}
	if !conditions.IsReady(before) && conditions.IsReady(after) {
		r.Recorder.Eventf(after, nil, corev1.EventTypeNormal, "RolledOut", "RollingUpdate",
			"replica set %s runs on all %d nodes", after.Status.ActiveReplicaSet, after.Status.Desired)
	}
	if s := conditions.Get(after, v1alpha1.StalledCondition); s != nil && !conditions.HasAnyReason(before, v1alpha1.StalledCondition, s.Reason) &&
		s.Reason != v1alpha1.ReasonCanaryFailed {
		r.Recorder.Eventf(after, nil, corev1.EventTypeWarning, s.Reason, "Reconcile", "%s", s.Message)
	}
	if note != nil {
		r.tellCanary(after, analysisRead(before, note), note, now)
	}
}

// analysisRead is the analysis of the noted canary in the status read,
// nil when that status held another canary: a phase is told when it
// differs from the one recorded, and only then, however many passes
// write the status meanwhile (a failed canary's nodes going back write
// it for every move of the counters).
func analysisRead(before *v1alpha1.ExtendedDaemonSet, note *canaryNote) *v1alpha1.AnalysisStatus {
	c, decided := before.Status.Canary, note.canary
	if c == nil || decided == nil || c.ReplicaSet != note.replicaSet.Name || !c.StartedAt.Equal(decided.StartedAt) {
		return nil
	}
	return c.Analysis
}

// tellCanary tells a canary's transition, its analysis phase changes and
// measurements, and the duration and result of a canary that ended.
func (r *ExtendedDaemonSetReconciler) tellCanary(eds *v1alpha1.ExtendedDaemonSet, analysisBefore *v1alpha1.AnalysisStatus, note *canaryNote, now time.Time) {
	c, rs := note.canary, note.replicaSet
	if note.transition != "" {
		kind, message := corev1.EventTypeNormal, ""
		switch note.transition {
		case canary.Promoted:
			message = fmt.Sprintf("canary %s promoted: rolling it out to every node", rs.Name)
			if c.Reason == canary.ReasonNothingToCanary {
				message = fmt.Sprintf("canary %s promoted at once: %s", rs.Name, c.Message)
			}
		case canary.Failed:
			kind = corev1.EventTypeWarning
			message = fmt.Sprintf("canary %s failed: %s: %s; its nodes go back to %s", rs.Name, c.Reason, c.Message, eds.Status.ActiveReplicaSet)
		case canary.StepStarted:
			message = fmt.Sprintf("canary %s at step %d of %d on %d nodes", rs.Name, c.Step, len(eds.Spec.Strategy.Canary.Steps), len(c.Nodes))
		case canary.Paused:
			kind = corev1.EventTypeWarning
			message = fmt.Sprintf("canary %s paused: %s: %s", rs.Name, c.Reason, c.Message)
		default:
			message = fmt.Sprintf("canary %s on nodes %v", rs.Name, c.Nodes)
		}
		r.Recorder.Eventf(eds, rs, kind, note.transition, "Canary", "%s", message)
		extendedDaemonSetMetrics().observeCanaryEnd(eds, note.transition, c, now)
	}
	a := c.Analysis
	if len(note.measured) > 0 {
		analysisMetrics().ObserveMeasurements(eds.Namespace, eds.Name, note.measured)
	}
	if a == nil {
		return
	}
	if analysisBefore == nil || analysisBefore.Phase != a.Phase {
		kind := corev1.EventTypeNormal
		if a.Phase != v1alpha1.AnalysisSuccessful && a.Phase != v1alpha1.AnalysisRunning && a.Phase != v1alpha1.AnalysisPending {
			kind = corev1.EventTypeWarning
		}
		r.Recorder.Eventf(eds, rs, kind, analysisReasons[a.Phase], "Analysis", "analysis of canary %s: %s: %s", rs.Name, a.Phase, a.Message)
	}
	if note.transition == canary.Promoted || note.transition == canary.Failed {
		analysisMetrics().ObserveResult(eds.Namespace, eds.Name, a.Phase)
	}
}
