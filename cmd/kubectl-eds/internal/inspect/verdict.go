package inspect

import (
	"fmt"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
)

// outcome is where a rollout stands, as the exit code of status tells it.
type outcome int

const (
	inProgress outcome = iota
	rolledOut
	failed
)

// verdict is the outcome of a rollout and why.
type verdict struct {
	outcome outcome
	why     string
}

// judge reads the outcome from the status of eds. A status written for an
// older generation says nothing about the current spec: a failure it
// reports may already be fixed, so it is in progress until the controller
// has seen the spec. A failed canary stays failed (and the object Stalled)
// until the spec changes or a retry is asked for, so waiting longer would
// not help.
func judge(eds *v1alpha1.ExtendedDaemonSet) verdict {
	st := &eds.Status
	if st.ObservedGeneration != eds.Generation {
		return verdict{inProgress, fmt.Sprintf("the controller has not yet seen generation %d", eds.Generation)}
	}
	if c := st.Canary; c != nil && c.Failed {
		return verdict{failed, fmt.Sprintf("canary %s failed%s", c.ReplicaSet, reasonSuffix(c.Reason, c.Message))}
	}
	if s := apimeta.FindStatusCondition(st.Conditions, v1alpha1.StalledCondition); s != nil && s.Status == metav1.ConditionTrue {
		return verdict{failed, fmt.Sprintf("stalled%s", reasonSuffix(s.Reason, s.Message))}
	}
	ready := apimeta.FindStatusCondition(st.Conditions, v1alpha1.ReadyCondition)
	if ready != nil && ready.Status == metav1.ConditionTrue && st.Canary == nil && st.UpToDate == st.Desired && st.Available == st.Desired {
		return verdict{rolledOut, fmt.Sprintf("%d of %d pods up to date and available", st.Available, st.Desired)}
	}
	if ready != nil && ready.Message != "" {
		return verdict{inProgress, ready.Message}
	}
	return verdict{inProgress, fmt.Sprintf("%d of %d pods up to date, %d available", st.UpToDate, st.Desired, st.Available)}
}

// reasonSuffix is ": reason: message" with the empty parts left out.
func reasonSuffix(reason, message string) string {
	switch {
	case reason != "" && message != "":
		return ": " + reason + ": " + message
	case reason != "":
		return ": " + reason
	case message != "":
		return ": " + message
	}
	return ""
}
