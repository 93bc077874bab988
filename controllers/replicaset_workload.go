package controllers

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
	"github.com/extendeddaemonset/extendeddaemonset/controllers/internal/outcome"
	"github.com/extendeddaemonset/extendeddaemonset/controllers/internal/store"
)

// A replica set of an ExtendedDaemonSet whose workloadRef names a DaemonSet
// runs the DaemonSet's pods of its revision. It only deletes pods: the
// DaemonSet creates one on every node that lacks one, at its current
// template. So only the replica set of that template replaces pods (those
// deleted come back as its own); any other holds, since a pod it deleted
// would come back at a template it does not run. A failed canary therefore
// stops the rollout until the DaemonSet's template changes back.

// workloadPods is what a replica set sees of the DaemonSet eds's
// workloadRef names: its pods, each as a pod of the replica set of its
// revision, the template the DaemonSet creates pods from, and a spec error
// (a DaemonSet that is not OnDelete).
type workloadPods struct {
	daemonSet string
	pods      []*corev1.Pod
	template  *corev1.PodTemplateSpec
	specErr   error
	// own: the DaemonSet creates pods at this replica set's template.
	own bool
}

// podsOf returns the pods of eds: its own from the cache, or those of the
// DaemonSet its workloadRef names, with what the replica set sees of it.
func (r *ReplicaSetReconciler) podsOf(ctx context.Context, eds *v1alpha1.ExtendedDaemonSet,
	ers *v1alpha1.ExtendedDaemonSetReplicaSet,
) ([]*corev1.Pod, *workloadPods, error) {
	if eds.Spec.WorkloadRef == nil {
		pods, err := r.store.PodsOf(ctx, eds.Namespace, eds.Name)
		return pods, nil, err
	}
	ds, err := store.DaemonSetOf(ctx, r.Client, eds)
	w := &workloadPods{daemonSet: eds.Spec.WorkloadRef.Name}
	switch {
	case outcome.IsStalling(err) && ds != nil:
		w.specErr = err
	case err != nil:
		return nil, nil, err
	}
	if w.pods, err = store.DaemonSetPods(ctx, r.APIReader, ds, eds.Name); err != nil {
		return nil, nil, err
	}
	w.template = &ds.Spec.Template
	w.own = equality.Semantic.DeepEqual(&ers.Spec.Template, &ds.Spec.Template)
	return w.pods, w, nil
}

// templateOr is the template the DaemonSet creates pods from, or
// otherwise's without a workloadRef.
func (w *workloadPods) templateOr(otherwise *corev1.PodTemplateSpec) *corev1.PodTemplateSpec {
	if w == nil {
		return otherwise
	}
	return w.template
}

// refused is the DaemonSet's spec error, nil without a workloadRef.
func (w *workloadPods) refused() error {
	if w == nil {
		return nil
	}
	return w.specErr
}

// waiting says why the replica set replaces no pod, empty when it may.
func (w *workloadPods) waiting() string {
	if w == nil || w.own || w.specErr != nil {
		return ""
	}
	return fmt.Sprintf("DaemonSet %s creates pods at another template than this replica set's: a pod deleted would come back at that one, "+
		"so none is replaced until the DaemonSet's template is this replica set's", w.daemonSet)
}

// replicaSetsOfDaemonSet maps a DaemonSet to the replica sets that place
// its pods for the ExtendedDaemonSets whose workloadRef names it: the
// active one and the canary's. The DaemonSet's status moves with its pods.
func (r *ReplicaSetReconciler) replicaSetsOfDaemonSet(ctx context.Context, ds client.Object) []reconcile.Request {
	var out []reconcile.Request
	for _, eds := range store.Referencing(ctx, r.Client, ds) {
		for _, name := range podReplicaSets("", eds) {
			out = append(out, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: eds.Namespace, Name: name}})
		}
	}
	return out
}
