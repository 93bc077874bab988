package controllers

import (
	"reflect"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
	"github.com/extendeddaemonset/extendeddaemonset/controllers/canary"
	"github.com/extendeddaemonset/extendeddaemonset/controllers/internal/store"
)

// podStateChanged lets through pod events that can change a plan or a
// counter: creation, deletion, and updates of what the planner reads (node,
// phase, readiness, schedulability, deletion). Kubelets write pod status
// several times while a pod starts; the other writes are dropped.
func podStateChanged() predicate.Funcs {
	return store.UpdatedWhen(func(oldPod, newPod *corev1.Pod) bool {
		return rolloutPod(oldPod, "", false) != rolloutPod(newPod, "", false) ||
			oldPod.Spec.NodeName != newPod.Spec.NodeName
	})
}

// replicaSetInputsChanged lets through ExtendedDaemonSet events that can
// change what its replica sets do: the spec, the annotations that pause,
// freeze or migrate, and the roles (active replica set, running canary and
// its nodes). The ExtendedDaemonSet's status is written as its replica
// sets' counters move; those writes are dropped, or each would wake every
// replica set again.
func replicaSetInputsChanged() predicate.Funcs {
	return store.UpdatedWhen(func(oldEDS, newEDS *v1alpha1.ExtendedDaemonSet) bool {
		return oldEDS.Generation != newEDS.Generation ||
			!reflect.DeepEqual(oldEDS.Annotations, newEDS.Annotations) ||
			oldEDS.Status.ActiveReplicaSet != newEDS.Status.ActiveReplicaSet ||
			!reflect.DeepEqual(canaryRole(oldEDS), canaryRole(newEDS)) ||
			bakesPassed(oldEDS) != bakesPassed(newEDS) ||
			domainGatesPassed(oldEDS) != domainGatesPassed(newEDS)
	})
}

// domainGatesPassed is what of the gates before domains the active
// replica set's planner reads.
func domainGatesPassed(eds *v1alpha1.ExtendedDaemonSet) string {
	if d := eds.Status.DomainGate; d != nil {
		return d.ReplicaSet + "/" + d.PassedThrough
	}
	return ""
}

// bakesPassed is what of the bakes' verdicts the active replica set's
// planner reads.
func bakesPassed(eds *v1alpha1.ExtendedDaemonSet) string {
	if b := eds.Status.Bake; b != nil {
		return b.ReplicaSet + "/" + b.PassedThrough
	}
	return ""
}

// canaryRole is what of a running canary its replica sets read.
func canaryRole(eds *v1alpha1.ExtendedDaemonSet) any {
	c := canary.Running(eds)
	if c == nil {
		return nil
	}
	return struct {
		replicaSet string
		nodes      []string
	}{c.ReplicaSet, c.Nodes}
}
