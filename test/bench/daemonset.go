package bench

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// daemonSet is the agent as a DaemonSet, run by kube-controller-manager.
type daemonSet struct {
	c  client.Client
	ds *appsv1.DaemonSet
	// onDelete leaves the rollout to whoever deletes the pods, an
	// ExtendedDaemonSet's workloadRef; otherwise the DaemonSet rolls
	// itself with the maxUnavailable and maxSurge of the scenario.
	onDelete bool
}

func (w *daemonSet) create(ctx context.Context, namespace string, sc scenario, version string) error {
	rolling := sc.strategy().RollingUpdate
	strategy := appsv1.DaemonSetUpdateStrategy{
		Type:          appsv1.RollingUpdateDaemonSetStrategyType,
		RollingUpdate: &appsv1.RollingUpdateDaemonSet{MaxUnavailable: rolling.MaxUnavailable, MaxSurge: rolling.MaxSurge},
	}
	if w.onDelete {
		strategy = appsv1.DaemonSetUpdateStrategy{Type: appsv1.OnDeleteDaemonSetStrategyType}
	}
	w.ds = &appsv1.DaemonSet{
		ObjectMeta: metav1.ObjectMeta{Name: "agent", Namespace: namespace},
		Spec: appsv1.DaemonSetSpec{
			Selector:       &metav1.LabelSelector{MatchLabels: agentLabels},
			Template:       agentTemplate(version),
			UpdateStrategy: strategy,
		},
	}
	if err := w.c.Create(ctx, w.ds); err != nil {
		return fmt.Errorf("creating the DaemonSet: %w", err)
	}
	return nil
}

func (w *daemonSet) setImage(ctx context.Context, version string) error {
	return setContainerImage(ctx, w.c, w.ds, func() *corev1.PodTemplateSpec { return &w.ds.Spec.Template }, version)
}

func (w *daemonSet) rollout(ctx context.Context) (rolloutState, error) {
	ds := &appsv1.DaemonSet{}
	if err := w.c.Get(ctx, client.ObjectKeyFromObject(w.ds), ds); err != nil {
		return rolloutState{}, err
	}
	s := ds.Status
	return rolloutState{
		done: s.ObservedGeneration == ds.Generation && s.DesiredNumberScheduled > 0 &&
			s.UpdatedNumberScheduled == s.DesiredNumberScheduled && s.NumberAvailable == s.DesiredNumberScheduled &&
			s.CurrentNumberScheduled == s.DesiredNumberScheduled && s.NumberUnavailable == 0,
		summary: fmt.Sprintf("generation %d/%d, desired %d, current %d, updated %d, available %d",
			s.ObservedGeneration, ds.Generation, s.DesiredNumberScheduled, s.CurrentNumberScheduled,
			s.UpdatedNumberScheduled, s.NumberAvailable),
	}, nil
}

func (w *daemonSet) deleteAll(ctx context.Context) error {
	if w.ds == nil {
		return nil
	}
	return deleteWithRevisions(ctx, w.c, w.ds, "the DaemonSet")
}

// deleteWithRevisions deletes obj, a DaemonSet of either kind, and the
// controller revisions of its namespace; what names it in errors.
func deleteWithRevisions(ctx context.Context, c client.Client, obj client.Object, what string) error {
	if err := client.IgnoreNotFound(c.Delete(ctx, obj)); err != nil {
		return fmt.Errorf("deleting %s: %w", what, err)
	}
	if err := c.DeleteAllOf(ctx, &appsv1.ControllerRevision{}, client.InNamespace(obj.GetNamespace())); err != nil {
		return fmt.Errorf("deleting the revisions of %s: %w", what, err)
	}
	return nil
}
