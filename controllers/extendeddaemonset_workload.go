package controllers

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
	"github.com/extendeddaemonset/extendeddaemonset/controllers/internal/store"
)

// An ExtendedDaemonSet whose workloadRef names a DaemonSet keeps one
// replica set per revision of the DaemonSet's template, as it keeps one per
// template of its own: the current revision is the DaemonSet's, and the
// pods of each replica set are the DaemonSet's pods of its revision.
// Everything else (the canary, its analysis, the bakes) is decided as for
// pods of its own.

// currentRevision is eds's current template and its hash: its own, or the
// current revision of the DaemonSet its workloadRef names.
func (r *ExtendedDaemonSetReconciler) currentRevision(ctx context.Context, eds *v1alpha1.ExtendedDaemonSet) (*store.Revision, error) {
	if eds.Spec.WorkloadRef == nil {
		hash, err := templateHash(&eds.Spec.Template)
		if err != nil {
			return nil, err
		}
		return &store.Revision{Hash: hash, Template: eds.Spec.Template}, nil
	}
	ds, err := store.DaemonSetOf(ctx, r.Client, eds)
	if err != nil {
		return nil, err
	}
	rev, err := store.CurrentRevision(ctx, r.APIReader, ds)
	if err != nil {
		return nil, err
	}
	if rev == nil {
		return nil, errRevisionPending(ds.Name)
	}
	return rev, nil
}

// podsOf returns the pods of eds: its own from the cache, or those of the
// DaemonSet its workloadRef names, each as a pod of the replica set of its
// revision.
func (r *ExtendedDaemonSetReconciler) podsOf(ctx context.Context, eds *v1alpha1.ExtendedDaemonSet) ([]*corev1.Pod, error) {
	if eds.Spec.WorkloadRef == nil {
		return r.store.PodsOf(ctx, eds.Namespace, eds.Name)
	}
	ds, err := store.DaemonSetOf(ctx, r.Client, eds)
	if err != nil {
		return nil, err
	}
	return store.DaemonSetPods(ctx, r.APIReader, ds, eds.Name)
}

// extendedDaemonSetsOfDaemonSet maps a DaemonSet to the ExtendedDaemonSets
// whose workloadRef names it. Its status moves with its pods, which no
// watch of ours sees: it is what wakes them.
func (r *ExtendedDaemonSetReconciler) extendedDaemonSetsOfDaemonSet(ctx context.Context, ds client.Object) []reconcile.Request {
	var out []reconcile.Request
	for _, eds := range store.Referencing(ctx, r.Client, ds) {
		out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(eds)})
	}
	return out
}

// errRevisionPending is a DaemonSet whose controller has not recorded its
// current template yet: retried, the DaemonSet's status change wakes the
// ExtendedDaemonSet as soon as it has.
func errRevisionPending(ds string) error {
	return fmt.Errorf("waiting for the controller of DaemonSet %s to record its current template", ds)
}
