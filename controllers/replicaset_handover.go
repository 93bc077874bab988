package controllers

import (
	"context"
	"errors"
	"fmt"
	"maps"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
)

// handover is what a replica set sees of the DaemonSet that the
// extendeddaemonset.io/old-daemonset annotation names.
type handover struct {
	// pods are the DaemonSet's pods: the old pods of the nodes they are on.
	pods []*corev1.Pod
	// waiting, when set, says why they may not be replaced yet.
	waiting string
	// refused, when set, says why no pod can be proved the agent's; only a
	// spec change lets the handover go on.
	refused error
}

// oldDaemonSetPods reads the pods of the DaemonSet the annotation names.
// They carry no label of ours, so they are read from the API server rather
// than the cache, and only while the annotation is there.
//
// A DaemonSet recreates any pod of its own that is deleted, whatever its
// update strategy: its pods are replaced only once it no longer manages
// them, deleted with --cascade=orphan. Until then they hold their nodes, so
// no node ever runs two agents.
//
// Only pods provably the agent's are taken: those whose controller is the
// DaemonSet, and pods without a controller that its selector matches (the
// ExtendedDaemonSet's once the DaemonSet is gone), narrowed by
// orphanSelector so that a selector naming no label value does not take
// the whole namespace.
func (r *ReplicaSetReconciler) oldDaemonSetPods(ctx context.Context, eds *v1alpha1.ExtendedDaemonSet) (handover, error) {
	name := eds.Annotations[v1alpha1.OldDaemonSetAnnotation]
	if name == "" {
		return handover{}, nil
	}
	ds := &appsv1.DaemonSet{}
	switch err := r.APIReader.Get(ctx, types.NamespacedName{Namespace: eds.Namespace, Name: name}, ds); {
	case apierrors.IsNotFound(err):
		ds = nil
	case err != nil:
		return handover{}, fmt.Errorf("getting DaemonSet %s to migrate from: %w", name, err)
	}
	var listed, orphans labels.Selector
	var err error
	if ds != nil {
		// The API server refuses a DaemonSet without a selector, or with
		// an empty one: listing by it never lists the namespace.
		if listed, err = metav1.LabelSelectorAsSelector(ds.Spec.Selector); err != nil {
			return handover{}, fmt.Errorf("selector of the pods of DaemonSet %s: %w", name, err)
		}
		if orphans, err = orphanSelector(ds.Spec.Selector, ds.Spec.Template.Labels); err != nil {
			return handover{refused: fmt.Errorf("annotation %s: DaemonSet %s: %w", v1alpha1.OldDaemonSetAnnotation, name, err)}, nil
		}
	} else {
		if orphans, err = orphanSelector(eds.Spec.Selector.AsMeta(), eds.Spec.Template.Labels); err != nil {
			return handover{refused: fmt.Errorf("annotation %s: DaemonSet %s is gone and its orphans cannot be told from other pods: %w; "+
				"give spec.template a label they carry, or remove the annotation", v1alpha1.OldDaemonSetAnnotation, name, err)}, nil
		}
		listed = orphans
	}
	var list corev1.PodList
	if err := r.APIReader.List(ctx, &list, client.InNamespace(eds.Namespace), client.MatchingLabelsSelector{Selector: listed}); err != nil {
		return handover{}, fmt.Errorf("listing pods of DaemonSet %s: %w", name, err)
	}
	var h handover
	for i := range list.Items {
		pod := &list.Items[i]
		if _, ours := pod.Labels[v1alpha1.ExtendedDaemonSetNameLabel]; ours {
			continue
		}
		ref := metav1.GetControllerOf(pod)
		if ref == nil && orphans.Matches(labels.Set(pod.Labels)) || ref != nil && ds != nil && ref.UID == ds.UID {
			h.pods = append(h.pods, pod)
		}
	}
	if ds != nil && ds.DeletionTimestamp.IsZero() && len(h.pods) > 0 {
		h.waiting = fmt.Sprintf("DaemonSet %s still manages its pods and would recreate any pod replaced: "+
			"delete it with `kubectl delete daemonset %s --cascade=orphan` to migrate", name, name)
	}
	return h, nil
}

// orphanSelector selects the pods without a controller that are taken for a
// workload's own: those selector matches, when it names a label value (a
// matchLabels entry or an In requirement). A selector that names none
// (unset, `{}`, or only Exists, NotIn and DoesNotExist requirements) holds
// for pods of any application, an `app: database` pod as much as the agent,
// so the template labels, which every pod of the workload carries and which
// an unset selector stands for, are required on top of it; the schema
// already requires the selector to match them. With no template labels
// either, nothing tells the workload's pods apart, and it is an error.
func orphanSelector(selector *metav1.LabelSelector, templateLabels map[string]string) (labels.Selector, error) {
	narrowed := &metav1.LabelSelector{}
	if selector != nil {
		narrowed = selector.DeepCopy()
	}
	if !namesALabelValue(narrowed) {
		if len(templateLabels) == 0 {
			return nil, errors.New("neither the selector nor the pod template labels name a label value, " +
				"so any pod of the namespace would pass for one of its pods")
		}
		narrowed.MatchLabels = maps.Clone(templateLabels)
	}
	return metav1.LabelSelectorAsSelector(narrowed)
}

// namesALabelValue reports whether selector requires a label to have a
// given value.
func namesALabelValue(selector *metav1.LabelSelector) bool {
	if len(selector.MatchLabels) > 0 {
		return true
	}
	for _, r := range selector.MatchExpressions {
		if r.Operator == metav1.LabelSelectorOpIn {
			return true
		}
	}
	return false
}
