package store

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
	"github.com/extendeddaemonset/extendeddaemonset/controllers/internal/outcome"
)

// An ExtendedDaemonSet whose workloadRef names a DaemonSet rolls out that
// DaemonSet's pods: the DaemonSet is read from the cache (it is watched),
// its ControllerRevisions and pods around it, since they carry no label of
// ours and the cache holds only our pods.

// WorkloadPoll is how often the pods of a DaemonSet an ExtendedDaemonSet
// rolls out are read again: no watch of ours sees them, and the
// DaemonSet's status, which is watched, does not move with every change of
// theirs (a restart, a pod starting to terminate).
const WorkloadPoll = 10 * time.Second

// DaemonSetOf returns the DaemonSet eds's workloadRef names, and an error
// when it may not be rolled out: one gone is retried (it may come, the
// watch then wakes the ExtendedDaemonSet); one whose own controller would
// roll every change out at once (any updateStrategy but OnDelete), or an
// ExtendedDaemonSet that also hands a DaemonSet over, stalls it (a
// stalling error, returned with the DaemonSet).
func DaemonSetOf(ctx context.Context, c client.Reader, eds *v1alpha1.ExtendedDaemonSet) (*appsv1.DaemonSet, error) {
	ref := eds.Spec.WorkloadRef
	if name := eds.Annotations[v1alpha1.OldDaemonSetAnnotation]; name != "" {
		return nil, outcome.Stalling(fmt.Errorf("annotation %s cannot be used with workloadRef: the ExtendedDaemonSet rolls out DaemonSet %s's pods "+
			"and creates none to replace DaemonSet %s's; remove the annotation", v1alpha1.OldDaemonSetAnnotation, ref.Name, name))
	}
	ds := &appsv1.DaemonSet{}
	switch err := c.Get(ctx, types.NamespacedName{Namespace: eds.Namespace, Name: ref.Name}, ds); {
	case apierrors.IsNotFound(err):
		return nil, fmt.Errorf("workloadRef: DaemonSet %s not found in namespace %s", ref.Name, eds.Namespace)
	case err != nil:
		return nil, fmt.Errorf("getting DaemonSet %s: %w", ref.Name, err)
	}
	if t := ds.Spec.UpdateStrategy.Type; t != appsv1.OnDeleteDaemonSetStrategyType {
		return ds, outcome.Stalling(fmt.Errorf("workloadRef: DaemonSet %s has spec.updateStrategy.type %s, and its own controller would roll every "+
			"template change out at once: set spec.updateStrategy.type to OnDelete on it (for a Helm chart, its updateStrategy value, "+
			"such as --set updateStrategy.type=OnDelete)", ds.Name, t))
	}
	return ds, nil
}

// Revision is one revision of a DaemonSet's template, as its controller
// records it: the hash its pods carry in their controller-revision-hash
// label, and the template.
type Revision struct {
	Hash     string
	Template corev1.PodTemplateSpec
}

// CurrentRevision is the revision of ds's current template, nil while the
// DaemonSet controller has not recorded it yet (it has not observed ds's
// generation, or not written its ControllerRevision). The current one is
// the newest: the DaemonSet controller renumbers a revision whose template
// comes back after the newest.
func CurrentRevision(ctx context.Context, reader client.Reader, ds *appsv1.DaemonSet) (*Revision, error) {
	if ds.Status.ObservedGeneration < ds.Generation {
		return nil, nil
	}
	selector, err := metav1.LabelSelectorAsSelector(ds.Spec.Selector)
	if err != nil {
		return nil, fmt.Errorf("selector of DaemonSet %s: %w", ds.Name, err)
	}
	var list appsv1.ControllerRevisionList
	if err := reader.List(ctx, &list, client.InNamespace(ds.Namespace), client.MatchingLabelsSelector{Selector: selector}); err != nil {
		return nil, fmt.Errorf("listing the revisions of DaemonSet %s: %w", ds.Name, err)
	}
	var newest *appsv1.ControllerRevision
	for i := range list.Items {
		cr := &list.Items[i]
		if ref := metav1.GetControllerOf(cr); ref == nil || ref.UID != ds.UID {
			continue
		}
		if newest == nil || cr.Revision > newest.Revision {
			newest = cr
		}
	}
	if newest == nil {
		return nil, nil
	}
	hash := newest.Labels[appsv1.DefaultDaemonSetUniqueLabelKey]
	if hash == "" {
		return nil, fmt.Errorf("revision %s of DaemonSet %s has no %s label", newest.Name, ds.Name, appsv1.DefaultDaemonSetUniqueLabelKey)
	}
	// The DaemonSet controller records a template as a patch that replaces
	// the DaemonSet's: {"spec":{"template":{..., "$patch":"replace"}}}.
	var patch struct {
		Spec struct {
			Template corev1.PodTemplateSpec `json:"template"`
		} `json:"spec"`
	}
	if err := json.Unmarshal(newest.Data.Raw, &patch); err != nil {
		return nil, fmt.Errorf("reading the template of revision %s of DaemonSet %s: %w", newest.Name, ds.Name, err)
	}
	return &Revision{Hash: hash, Template: patch.Spec.Template}, nil
}

// WorkloadReplicaSetName is the name of the replica set of a DaemonSet's
// revision (its hash) for the ExtendedDaemonSet eds: named after the
// revision, so that a pod's revision names its replica set.
func WorkloadReplicaSetName(eds, hash string) string { return eds + "-" + hash }

// DaemonSetPods returns the pods ds controls, as ours: each carries the
// ExtendedDaemonSet eds's labels, the template hash of its revision, and
// the name of the replica set of that revision. The pods are fresh copies,
// read from the API server.
func DaemonSetPods(ctx context.Context, reader client.Reader, ds *appsv1.DaemonSet, eds string) ([]*corev1.Pod, error) {
	selector, err := metav1.LabelSelectorAsSelector(ds.Spec.Selector)
	if err != nil {
		return nil, fmt.Errorf("selector of DaemonSet %s: %w", ds.Name, err)
	}
	var list corev1.PodList
	if err := reader.List(ctx, &list, client.InNamespace(ds.Namespace), client.MatchingLabelsSelector{Selector: selector}); err != nil {
		return nil, fmt.Errorf("listing the pods of DaemonSet %s: %w", ds.Name, err)
	}
	pods := make([]*corev1.Pod, 0, len(list.Items))
	for i := range list.Items {
		pod := &list.Items[i]
		if ref := metav1.GetControllerOf(pod); ref == nil || ref.UID != ds.UID {
			continue
		}
		hash := pod.Labels[appsv1.DefaultDaemonSetUniqueLabelKey]
		labels := make(map[string]string, len(pod.Labels)+3)
		for k, v := range pod.Labels {
			labels[k] = v
		}
		labels[v1alpha1.ExtendedDaemonSetNameLabel] = eds
		labels[v1alpha1.TemplateHashLabel] = hash
		labels[v1alpha1.ExtendedDaemonSetReplicaSetNameLabel] = WorkloadReplicaSetName(eds, hash)
		pod.Labels = labels
		pods = append(pods, pod)
	}
	return pods, nil
}

// Referencing returns the cached ExtendedDaemonSets whose workloadRef names
// ds, read-only.
func Referencing(ctx context.Context, c client.Reader, ds client.Object) []*v1alpha1.ExtendedDaemonSet {
	var list v1alpha1.ExtendedDaemonSetList
	if err := c.List(ctx, &list, client.InNamespace(ds.GetNamespace()), client.UnsafeDisableDeepCopy); err != nil {
		return nil
	}
	var out []*v1alpha1.ExtendedDaemonSet
	for i := range list.Items {
		if ref := list.Items[i].Spec.WorkloadRef; ref != nil && ref.Name == ds.GetName() {
			out = append(out, &list.Items[i])
		}
	}
	return out
}
