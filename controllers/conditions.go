package controllers

import (
	"github.com/fluxcd/pkg/runtime/conditions"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
)

// The condition contract, which Flux (kstatus) and Argo CD read. Every
// ExtendedDaemonSet and replica set carries observedGeneration and:
//
//	situation                                  Ready  Reconciling        Stalled           kstatus     Argo CD
//	rolled out, every pod available            True   -                  -                 Current     Healthy
//	canary running, rolling update             False  True (why)         -                 InProgress  Progressing
//	canary paused (manual, autoPause, no data) False  True CanaryPaused  -                 InProgress  Suspended
//	canary failed                              False  -                  True CanaryFailed Failed      Degraded
//	spec error, no progress past the deadline  False  -                  True (why)        Failed      Degraded
//	not yet observed (observedGeneration old)  -      -                  -                 InProgress  Progressing
//
// A progress value is decided once per reconcile, by the status functions
// of each kind, and written by apply; messages change with the reason
// only, never with live counters, so a status write means news.

// phase is where an object stands in the condition contract.
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

// waitsForProgress reports whether p is a rollout that the pods must move
// on: not done, not held by a person, not waiting for something else.
func (p progress) waitsForProgress() bool {
	if p.phase != progressing {
		return false
	}
	switch p.reason {
	case v1alpha1.ReasonRollingUpdate, v1alpha1.ReasonProgressing, v1alpha1.ReasonReconcileFailed:
		return true
	}
	return false
}
