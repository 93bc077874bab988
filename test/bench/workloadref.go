package bench

import (
	"context"
	"errors"
	"fmt"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
)

// referencedDaemonSet is the agent as a DaemonSet updated OnDelete, rolled
// out by an ExtendedDaemonSet whose workloadRef names it: our manager
// deletes the pods within the budget, and kube-controller-manager's
// DaemonSet controller recreates them at the DaemonSet's template.
type referencedDaemonSet struct {
	ds  daemonSet
	eds extendedDaemonSet
	// replaced is the replica set that was active when the image changed:
	// until another one is, the ExtendedDaemonSet's status may still be
	// the one of the rolled-out old revision, which reads as done.
	replaced string
}

func newReferencedDaemonSet(c client.Client) *referencedDaemonSet {
	return &referencedDaemonSet{
		ds:  daemonSet{c: c, onDelete: true},
		eds: extendedDaemonSet{c: c, ref: &v1alpha1.WorkloadRef{APIVersion: "apps/v1", Kind: "DaemonSet", Name: "agent"}},
	}
}

func (w *referencedDaemonSet) create(ctx context.Context, namespace string, sc scenario, version string) error {
	if err := w.ds.create(ctx, namespace, sc, version); err != nil {
		return err
	}
	return w.eds.create(ctx, namespace, sc, version)
}

func (w *referencedDaemonSet) setImage(ctx context.Context, version string) error {
	eds, err := w.eds.latest(ctx)
	if err != nil {
		return err
	}
	w.replaced = eds.Status.ActiveReplicaSet
	return w.ds.setImage(ctx, version)
}

// rollout is done when the DaemonSet says every pod runs its template and
// is available, and the ExtendedDaemonSet says it is rolled out, with
// another replica set active than before the change.
func (w *referencedDaemonSet) rollout(ctx context.Context) (rolloutState, error) {
	ds, err := w.ds.rollout(ctx)
	if err != nil {
		return rolloutState{}, err
	}
	latest, err := w.eds.latest(ctx)
	if err != nil {
		return rolloutState{}, err
	}
	eds, active := rolloutOf(latest), latest.Status.ActiveReplicaSet
	return rolloutState{
		done:    ds.done && eds.done && active != "" && active != w.replaced,
		summary: fmt.Sprintf("DaemonSet: %s; ExtendedDaemonSet: %s, active %q", ds.summary, eds.summary, active),
	}, nil
}

// deleteAll deletes the ExtendedDaemonSet and its replica sets first, so
// that nothing deletes pods once the DaemonSet is gone.
func (w *referencedDaemonSet) deleteAll(ctx context.Context) error {
	return errors.Join(w.eds.deleteAll(ctx), w.ds.deleteAll(ctx))
}
