package controllers

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
	"github.com/extendeddaemonset/extendeddaemonset/controllers/canary"
	"github.com/extendeddaemonset/extendeddaemonset/controllers/placement"
	"github.com/extendeddaemonset/extendeddaemonset/controllers/rollout"
)

// spentElsewhere is what the other replica set of the ExtendedDaemonSet (the
// canary beside the active one, or the other way round) spends of the
// shared budgets on its nodes now, counted by the planner from the same
// pods, through the view otherView states for it. Reconciles of one
// ExtendedDaemonSet's replica sets are serialized (lockExtendedDaemonSet),
// so each sees the other's writes.
func (r *ReplicaSetReconciler) spentElsewhere(ctx context.Context, eds *v1alpha1.ExtendedDaemonSet, obs *observation,
	otherView func(viewSpec) (*view, error),
) (rollout.Spent, error) {
	c := canary.Running(eds)
	if c == nil {
		return rollout.Spent{}, nil
	}
	name := c.ReplicaSet
	if obs.role == v1alpha1.ReplicaSetCanary {
		name = eds.Status.ActiveReplicaSet
	}
	ers := &v1alpha1.ExtendedDaemonSetReplicaSet{}
	missing := false
	switch err := r.Get(ctx, types.NamespacedName{Namespace: eds.Namespace, Name: name}, ers); {
	case client.IgnoreNotFound(err) != nil:
		return rollout.Spent{}, fmt.Errorf("getting replica set %s: %w", name, err)
	case err != nil:
		// Not in the cache (yet, or any more): judge its nodes by the
		// template of the ExtendedDaemonSet, which is what they will run.
		ers.Name, ers.Spec.Template, missing = name, *obs.template, true
	}
	other, err := otherView(otherViewSpec(eds, obs, ers, missing, r.unresponsiveGrace()))
	if err != nil {
		return rollout.Spent{}, err
	}
	return spentBy(obs, other), nil
}

// otherViewSpec is what the view of other, the replica set beside the one
// obs observes, states the nodes for: what it spends of the shared budgets;
// missing when other is not in the cache, and given the template of the
// ExtendedDaemonSet.
func otherViewSpec(eds *v1alpha1.ExtendedDaemonSet, obs *observation, other *v1alpha1.ExtendedDaemonSetReplicaSet,
	missing bool, grace time.Duration,
) viewSpec {
	role := v1alpha1.ReplicaSetCanary
	if obs.role == v1alpha1.ReplicaSetCanary {
		role = v1alpha1.ReplicaSetActive
	}
	key := viewKey(eds, other, role, false, nil, grace)
	if missing {
		// Judged by the ExtendedDaemonSet's template: its generation,
		// in the key already, tells the template.
		key += "|template of the ExtendedDaemonSet"
	}
	// It counts the nodes obs's template fits too, which spentBy does not
	// read: a view of the canary is then the canary's own view, and serves
	// both replica sets' passes (replicaSetViews.otherOf).
	return viewSpec{
		role: role, name: other.Name, template: &other.Spec.Template, percentOf: obs.template,
		responsible: responsibleFor(eds, role), topologyKey: obs.topologyKey, grace: grace, key: key,
	}
}

// spentBy is what the replica set other states the nodes for spends of the
// shared budgets, seen from the pass of obs.
func spentBy(obs *observation, other *view) rollout.Spent {
	in := rollout.Input{Now: obs.input.Now, Params: obs.input.Params}
	if other.spec.role == v1alpha1.ReplicaSetCanary {
		// The active replica set takes the scheduler-failure allowance
		// first; the canary has what is left. Seen from here, the canary
		// is left none, which only ever overstates what it spends.
		in.Elsewhere.Excused = obs.input.Params.MaxPodSchedulerFailure
	}
	in.Params.Frozen = true
	return other.state.Plan(in).Counts.Spent()
}

func (r *ReplicaSetReconciler) unresponsiveGrace() time.Duration {
	if r.UnresponsiveNodeGrace > 0 {
		return r.UnresponsiveNodeGrace
	}
	return placement.DefaultUnresponsiveGrace
}
