package outcome

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
// A Progress is decided once per reconcile, by the status function of each
// kind, and written by Apply; messages change with the reason only, never
// with live counters, so a status write means news.

// MaxConditionMessage keeps condition messages readable and far below the
// API server's limit of 32768 bytes, even when thousands of nodes or twenty
// metrics have something to say.
const MaxConditionMessage = 1024

// Phase is where an object stands in the condition contract.
type Phase int

const (
	// Progressing: Ready=False, Reconciling=True.
	Progressing Phase = iota
	// Done: Ready=True alone.
	Done
	// Stalled: Ready=False, Stalled=True; only a change of spec or a retry helps.
	Stalled
	// Idle: Ready=False alone, for a replica set that plays no part.
	Idle
)

// Progress is the Ready, Reconciling and Stalled conditions of an object,
// decided in one place.
type Progress struct {
	Phase   Phase
	Reason  string
	Message string
}

// Apply writes p as the Ready, Reconciling and Stalled conditions of obj.
func (p Progress) Apply(obj conditions.Setter) {
	if p.Phase == Done {
		conditions.MarkTrue(obj, v1alpha1.ReadyCondition, p.Reason, "%s", p.Message)
	} else {
		conditions.MarkFalse(obj, v1alpha1.ReadyCondition, p.Reason, "%s", p.Message)
	}
	if p.Phase == Progressing {
		conditions.MarkReconciling(obj, p.Reason, "%s", p.Message)
	} else {
		conditions.Delete(obj, v1alpha1.ReconcilingCondition)
	}
	if p.Phase == Stalled {
		conditions.MarkStalled(obj, p.Reason, "%s", p.Message)
	} else {
		conditions.Delete(obj, v1alpha1.StalledCondition)
	}
}

// WaitsForProgress reports whether p is a rollout that the pods must move
// on: not done, not held by a person, not waiting for something else.
func (p Progress) WaitsForProgress() bool {
	if p.Phase != Progressing {
		return false
	}
	switch p.Reason {
	case v1alpha1.ReasonRollingUpdate, v1alpha1.ReasonProgressing, v1alpha1.ReasonReconcileFailed:
		return true
	}
	return false
}
