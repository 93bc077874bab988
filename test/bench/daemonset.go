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
	// itself with maxUnavailable 10%.
	onDelete bool
}

func (w *daemonSet) create(ctx context.Context, namespace string, _ scenario, version string) error {
	strategy := appsv1.DaemonSetUpdateStrategy{
		Type:          appsv1.RollingUpdateDaemonSetStrategyType,
		RollingUpdate: &appsv1.RollingUpdateDaemonSet{MaxUnavailable: &maxUnavailable},
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
	if err := client.IgnoreNotFound(w.c.Delete(ctx, w.ds)); err != nil {
		return fmt.Errorf("deleting the DaemonSet: %w", err)
	}
	if err := w.c.DeleteAllOf(ctx, &appsv1.ControllerRevision{}, client.InNamespace(w.ds.Namespace)); err != nil {
		return fmt.Errorf("deleting the DaemonSet's revisions: %w", err)
	}
	return nil
}
