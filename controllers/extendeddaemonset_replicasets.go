package controllers

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"slices"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilrand "k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
	"github.com/extendeddaemonset/extendeddaemonset/controllers/canary"
	"github.com/extendeddaemonset/extendeddaemonset/controllers/internal/store"
)

// replicaSets lists the replica sets eds controls, from reader.
func (r *ExtendedDaemonSetReconciler) replicaSets(ctx context.Context, eds *v1alpha1.ExtendedDaemonSet, reader client.Reader) ([]*v1alpha1.ExtendedDaemonSetReplicaSet, error) {
	var list v1alpha1.ExtendedDaemonSetReplicaSetList
	if err := reader.List(ctx, &list, client.InNamespace(eds.Namespace),
		client.MatchingLabels{v1alpha1.ExtendedDaemonSetNameLabel: eds.Name}); err != nil {
		return nil, fmt.Errorf("listing replica sets: %w", err)
	}
	return ownedReplicaSets(eds, list.Items), nil
}

// currentReplicaSet returns the replica set of the current template,
// creating it when neither the cache nor the API server has it.
func (r *ExtendedDaemonSetReconciler) currentReplicaSet(ctx context.Context, eds *v1alpha1.ExtendedDaemonSet,
	cached []*v1alpha1.ExtendedDaemonSetReplicaSet,
) (*v1alpha1.ExtendedDaemonSetReplicaSet, error) {
	rev, err := r.currentRevision(ctx, eds)
	if err != nil {
		return nil, err
	}
	hash := rev.Hash
	if ers := byHash(cached, hash); ers != nil {
		return ers, nil
	}
	live, err := r.replicaSets(ctx, eds, r.APIReader)
	if err != nil {
		return nil, err
	}
	if ers := byHash(live, hash); ers != nil {
		return ers, nil
	}
	// Numbered after every replica set the cache or the API server knows:
	// the cache may not hold one created a moment ago.
	ers := newReplicaSet(eds, rev, append(slices.Clone(cached), live...))
	if err := controllerutil.SetControllerReference(eds, ers, r.Scheme()); err != nil {
		return nil, fmt.Errorf("owning replica set: %w", err)
	}
	if err := r.Create(ctx, ers); err != nil {
		return nil, fmt.Errorf("creating replica set for template %s: %w", hash, err)
	}
	ctrl.LoggerFrom(ctx).Info("created replica set", "replicaSet", klog.KObj(ers), "templateHash", hash)
	r.Recorder.Eventf(eds, ers, corev1.EventTypeNormal, "ReplicaSetCreated", "Create",
		"created replica set %s for pod template %s", ers.Name, hash)
	return ers, nil
}

// pruneHistory deletes replica sets beyond revisionHistoryLimit that own no
// pods any more.
func (r *ExtendedDaemonSetReconciler) pruneHistory(ctx context.Context, eds *v1alpha1.ExtendedDaemonSet,
	sets []*v1alpha1.ExtendedDaemonSetReplicaSet, current *v1alpha1.ExtendedDaemonSetReplicaSet,
) error {
	limit := 10
	if eds.Spec.RevisionHistoryLimit != nil {
		limit = int(*eds.Spec.RevisionHistoryLimit)
	}
	inUse := map[string]bool{current.Name: true, eds.Status.ActiveReplicaSet: true}
	if c := canary.Running(eds); c != nil {
		inUse[c.ReplicaSet] = true
	}
	if len(historyToDelete(sets, inUse, nil, limit)) == 0 {
		// Nothing beyond the limit: the pods need not be counted, and a
		// pass stays independent of the number of nodes.
		return nil
	}
	pods, err := r.podsOf(ctx, eds)
	if err != nil {
		return err
	}
	podsOf := map[string]int{}
	for _, p := range pods {
		podsOf[p.Labels[v1alpha1.ExtendedDaemonSetReplicaSetNameLabel]]++
	}
	for _, ers := range historyToDelete(sets, inUse, podsOf, limit) {
		if err := r.Delete(ctx, ers); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("deleting old replica set %s: %w", ers.Name, err)
		}
		ctrl.LoggerFrom(ctx).Info("deleted old replica set", "replicaSet", klog.KObj(ers))
	}
	return nil
}

// templateHash names a pod template: equal templates hash alike, so going
// back to an earlier template finds its replica set again.
func templateHash(template *corev1.PodTemplateSpec) (string, error) {
	data, err := json.Marshal(template)
	if err != nil {
		return "", fmt.Errorf("hashing pod template: %w", err)
	}
	h := fnv.New64a()
	_, _ = h.Write(data) // a hash never fails to write
	return utilrand.SafeEncodeString(fmt.Sprint(h.Sum64()))[:10], nil
}

// newReplicaSet is the replica set of eds's current template, rev,
// numbered after every replica set in existing.
func newReplicaSet(eds *v1alpha1.ExtendedDaemonSet, rev *store.Revision, existing []*v1alpha1.ExtendedDaemonSetReplicaSet) *v1alpha1.ExtendedDaemonSetReplicaSet {
	hash := rev.Hash
	selector := eds.Spec.Selector.DeepCopy()
	if selector == nil {
		selector = &v1alpha1.LabelSelector{MatchLabels: rev.Template.Labels}
	}
	ers := &v1alpha1.ExtendedDaemonSetReplicaSet{
		ObjectMeta: metav1.ObjectMeta{
			GenerateName: eds.Name + "-",
			Namespace:    eds.Namespace,
			Labels: map[string]string{
				v1alpha1.ExtendedDaemonSetNameLabel: eds.Name,
				v1alpha1.TemplateHashLabel:          hash,
			},
			Annotations: map[string]string{
				v1alpha1.TemplateHashAnnotation: hash,
				v1alpha1.RevisionAnnotation:     strconv.FormatInt(nextRevision(existing), 10),
			},
		},
		Spec: v1alpha1.ExtendedDaemonSetReplicaSetSpec{
			Selector:           selector,
			Template:           *rev.Template.DeepCopy(),
			TemplateGeneration: hash,
		},
	}
	if eds.Spec.WorkloadRef != nil {
		// The DaemonSet's pods name their revision, and so their replica set.
		ers.GenerateName, ers.Name = "", store.WorkloadReplicaSetName(eds.Name, hash)
	}
	return ers
}

// ownedReplicaSets keeps the replica sets eds controls.
func ownedReplicaSets(eds *v1alpha1.ExtendedDaemonSet, list []v1alpha1.ExtendedDaemonSetReplicaSet) []*v1alpha1.ExtendedDaemonSetReplicaSet {
	var out []*v1alpha1.ExtendedDaemonSetReplicaSet
	for i := range list {
		if ref := metav1.GetControllerOf(&list[i]); ref != nil && ref.UID == eds.UID && list[i].DeletionTimestamp.IsZero() {
			out = append(out, &list[i])
		}
	}
	return out
}

// byHash finds the replica set of a template hash; the oldest wins should
// two exist.
func byHash(sets []*v1alpha1.ExtendedDaemonSetReplicaSet, hash string) *v1alpha1.ExtendedDaemonSetReplicaSet {
	var found *v1alpha1.ExtendedDaemonSetReplicaSet
	for _, s := range sets {
		if s.Annotations[v1alpha1.TemplateHashAnnotation] == hash && (found == nil || olderFirst(s, found) < 0) {
			found = s
		}
	}
	return found
}

func byName(sets []*v1alpha1.ExtendedDaemonSetReplicaSet, name string) *v1alpha1.ExtendedDaemonSetReplicaSet {
	for _, s := range sets {
		if s.Name == name {
			return s
		}
	}
	return nil
}

// revisionOf is the revision a replica set was created with; 0 when it has
// none, as those made before revisions were numbered.
func revisionOf(ers *v1alpha1.ExtendedDaemonSetReplicaSet) int64 {
	revision, err := strconv.ParseInt(ers.Annotations[v1alpha1.RevisionAnnotation], 10, 64)
	if err != nil || revision < 0 {
		return 0
	}
	return revision
}

func nextRevision(existing []*v1alpha1.ExtendedDaemonSetReplicaSet) int64 {
	var highest int64
	for _, s := range existing {
		highest = max(highest, revisionOf(s))
	}
	return highest + 1
}

// olderFirst orders replica sets by revision, then, for those without one,
// by creation timestamp, whose resolution is one second, then by name.
func olderFirst(a, b *v1alpha1.ExtendedDaemonSetReplicaSet) int {
	if c := cmp.Compare(revisionOf(a), revisionOf(b)); c != 0 {
		return c
	}
	if c := a.CreationTimestamp.Compare(b.CreationTimestamp.Time); c != 0 {
		return c
	}
	if a.Name < b.Name {
		return -1
	}
	if a.Name > b.Name {
		return 1
	}
	return 0
}

// historyToDelete returns the replica sets beyond the history limit that own
// no pod, oldest first. In-use replica sets (active, current template,
// canary) are never history.
func historyToDelete(sets []*v1alpha1.ExtendedDaemonSetReplicaSet, inUse map[string]bool, podsOf map[string]int, limit int) []*v1alpha1.ExtendedDaemonSetReplicaSet {
	var history []*v1alpha1.ExtendedDaemonSetReplicaSet
	for _, s := range sets {
		if !inUse[s.Name] {
			history = append(history, s)
		}
	}
	slices.SortFunc(history, olderFirst)
	var out []*v1alpha1.ExtendedDaemonSetReplicaSet
	for _, s := range history[:max(0, len(history)-limit)] {
		if podsOf[s.Name] == 0 {
			out = append(out, s)
		}
	}
	return out
}
