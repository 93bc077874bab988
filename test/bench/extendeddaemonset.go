package bench

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
)

// extendedDaemonSet is the agent as an ExtendedDaemonSet, run by our
// manager.
type extendedDaemonSet struct {
	c   client.Client
	eds *v1alpha1.ExtendedDaemonSet
	// ref, when set, names the DaemonSet whose pods it rolls out, in place
	// of a template of its own.
	ref *v1alpha1.WorkloadRef
}

func (w *extendedDaemonSet) create(ctx context.Context, namespace string, sc scenario, version string) error {
	w.eds = &v1alpha1.ExtendedDaemonSet{
		ObjectMeta: metav1.ObjectMeta{Name: "agent", Namespace: namespace},
		Spec:       v1alpha1.ExtendedDaemonSetSpec{WorkloadRef: w.ref, Strategy: sc.strategy()},
	}
	if w.ref == nil {
		w.eds.Spec.Template = agentTemplate(version)
	}
	if err := w.c.Create(ctx, w.eds); err != nil {
		return fmt.Errorf("creating the ExtendedDaemonSet: %w", err)
	}
	return nil
}

func (w *extendedDaemonSet) setImage(ctx context.Context, version string) error {
	return setContainerImage(ctx, w.c, w.eds, func() *corev1.PodTemplateSpec { return &w.eds.Spec.Template }, version)
}

func (w *extendedDaemonSet) rollout(ctx context.Context) (rolloutState, error) {
	eds, err := w.latest(ctx)
	if err != nil {
		return rolloutState{}, err
	}
	return rolloutOf(eds), nil
}

// rolloutOf is where eds's status says its rollout stands.
func rolloutOf(eds *v1alpha1.ExtendedDaemonSet) rolloutState {
	s := eds.Status
	ready := metav1.ConditionUnknown
	for _, c := range s.Conditions {
		if c.Type == v1alpha1.ReadyCondition {
			ready = c.Status
		}
	}
	return rolloutState{
		done: ready == metav1.ConditionTrue && s.Canary == nil && s.ObservedGeneration == eds.Generation && s.Desired > 0 &&
			s.UpToDate == s.Desired && s.Available == s.Desired && s.Current == s.Desired,
		summary: fmt.Sprintf("generation %d/%d, state %s, ready %s, canary %t, desired %d, current %d, up to date %d, available %d",
			s.ObservedGeneration, eds.Generation, s.State, ready, s.Canary != nil, s.Desired, s.Current, s.UpToDate, s.Available),
	}
}

// latest reads the ExtendedDaemonSet as it is now.
func (w *extendedDaemonSet) latest(ctx context.Context) (*v1alpha1.ExtendedDaemonSet, error) {
	eds := &v1alpha1.ExtendedDaemonSet{}
	if err := w.c.Get(ctx, client.ObjectKeyFromObject(w.eds), eds); err != nil {
		return nil, fmt.Errorf("reading the ExtendedDaemonSet: %w", err)
	}
	return eds, nil
}

func (w *extendedDaemonSet) deleteAll(ctx context.Context) error {
	if w.eds == nil {
		return nil
	}
	if err := client.IgnoreNotFound(w.c.Delete(ctx, w.eds)); err != nil {
		return fmt.Errorf("deleting the ExtendedDaemonSet: %w", err)
	}
	// The replica sets go too, or the manager would recreate the pods the
	// benchmark deletes until the garbage collector got to them.
	if err := w.c.DeleteAllOf(ctx, &v1alpha1.ExtendedDaemonSetReplicaSet{}, client.InNamespace(w.eds.Namespace)); err != nil {
		return fmt.Errorf("deleting the replica sets: %w", err)
	}
	return nil
}
