package controllers

import (
	"time"

	"github.com/fluxcd/pkg/runtime/conditions"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
	"github.com/extendeddaemonset/extendeddaemonset/controllers/canary"
	"github.com/extendeddaemonset/extendeddaemonset/controllers/internal/fluxevents"
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
// status read and the status written; active is the active replica set
// written, nil when none. It runs once the status patch succeeded, so a
// retried reconcile does not tell anything twice.
//
// A message says the same each time its transition is told, so that
// Flux's notification-controller sends a repeat once; what may change
// between tellings (a count, a measured value, the cause in the API
// server's words) is a fluxevents.Detail.
func (r *ExtendedDaemonSetReconciler) tellTransitions(before, after *v1alpha1.ExtendedDaemonSet, active *v1alpha1.ExtendedDaemonSetReplicaSet,
	note *canaryNote, now time.Time,
) {
	// The active replica set is the related object when there is one: an
	// untyped nil otherwise, which the recorders take for none.
	var related runtime.Object
	if active != nil {
		related = active
	}
	if prev, next := before.Status.ActiveReplicaSet, after.Status.ActiveReplicaSet; prev != "" && prev != next {
		r.Recorder.Eventf(after, related, corev1.EventTypeNormal, "RollingUpdateStarted", "RollingUpdate",
			"rolling out replica set %s in place of %s", next, prev)
	}
	if !conditions.IsReady(before) && conditions.IsReady(after) {
		r.Recorder.Eventf(after, related, corev1.EventTypeNormal, "RolledOut", "RollingUpdate",
			"replica set %s runs on every node", after.Status.ActiveReplicaSet)
	}
	if s := conditions.Get(after, v1alpha1.StalledCondition); s != nil && !conditions.HasAnyReason(before, v1alpha1.StalledCondition, s.Reason) &&
		s.Reason != v1alpha1.ReasonCanaryFailed {
		r.Recorder.Eventf(after, related, corev1.EventTypeWarning, s.Reason, "Reconcile", "rollout stalled%v", fluxevents.Detail(s.Message))
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
		kind, format, args := corev1.EventTypeNormal, "", []any{rs.Name}
		switch note.transition {
		case canary.Promoted:
			format = "canary %s promoted: rolling it out to every node"
			if c.Reason == canary.ReasonNothingToCanary {
				format, args = "canary %s promoted at once: %s", append(args, c.Message)
			}
		case canary.Failed:
			kind = corev1.EventTypeWarning
			format = "canary %s failed: %s%v; its nodes go back to %s"
			args = append(args, c.Reason, fluxevents.Detail(c.Message), eds.Status.ActiveReplicaSet)
		case canary.StepStarted:
			format = "canary %s at step %d of %d on %d nodes"
			args = append(args, c.Step, len(eds.Spec.Strategy.Canary.Steps), len(c.Nodes))
		case canary.Paused:
			kind = corev1.EventTypeWarning
			format, args = "canary %s paused: %s%v", append(args, c.Reason, fluxevents.Detail(c.Message))
		default:
			format, args = "canary %s on nodes %v", append(args, c.Nodes)
		}
		r.Recorder.Eventf(eds, rs, kind, note.transition, "Canary", format, args...)
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
		r.Recorder.Eventf(eds, rs, kind, analysisReasons[a.Phase], "Analysis", "analysis of canary %s: %s%v", rs.Name, a.Phase, fluxevents.Detail(a.Message))
	}
	if note.transition == canary.Promoted || note.transition == canary.Failed {
		analysisMetrics().ObserveResult(eds.Namespace, eds.Name, a.Phase)
	}
}
