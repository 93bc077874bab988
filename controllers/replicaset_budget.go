package controllers

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
	"github.com/extendeddaemonset/extendeddaemonset/controllers/canary"
	"github.com/extendeddaemonset/extendeddaemonset/controllers/placement"
	"github.com/extendeddaemonset/extendeddaemonset/controllers/rollout"
)

// fitting counts the nodes template fits: what percentages of the shared
// budgets resolve against.
func fitting(template *corev1.PodTemplateSpec, nodes []*corev1.Node) int {
	n, fitter := 0, placement.NewFitter(template)
	for _, node := range nodes {
		if fitter.Fit(node).ShouldRun {
			n++
		}
	}
	return n
}

// spentElsewhere is what the other replica set of the ExtendedDaemonSet (the
// canary beside the active one, or the other way round) spends of the
// shared budgets on its nodes now, counted by the planner from the same
// pods. Reconciles of one ExtendedDaemonSet's replica sets are serialized
// (lockExtendedDaemonSet), so each sees the other's writes.
func (r *ReplicaSetReconciler) spentElsewhere(ctx context.Context, eds *v1alpha1.ExtendedDaemonSet, obs *observation,
	nodes []*corev1.Node, pods []*corev1.Pod,
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
	switch err := r.Get(ctx, types.NamespacedName{Namespace: eds.Namespace, Name: name}, ers); {
	case client.IgnoreNotFound(err) != nil:
		return rollout.Spent{}, fmt.Errorf("getting replica set %s: %w", name, err)
	case err != nil:
		// Not in the cache (yet, or any more): judge its nodes by the
		// template of the ExtendedDaemonSet, which is what they will run.
		ers.Name, ers.Spec.Template = name, *obs.template
	}
	return spentBy(eds, obs, ers, nodes, pods), nil
}

// spentBy is what other, the replica set beside the one obs observes,
// spends of the shared budgets on its nodes, counted by the planner from
// the same nodes and pods.
func spentBy(eds *v1alpha1.ExtendedDaemonSet, obs *observation, other *v1alpha1.ExtendedDaemonSetReplicaSet,
	nodes []*corev1.Node, pods []*corev1.Pod,
) rollout.Spent {
	o := &observation{
		role:         v1alpha1.ReplicaSetCanary,
		input:        rollout.Input{Pods: map[string][]rollout.Pod{}, Now: obs.input.Now, Params: obs.input.Params},
		pods:         map[string]*corev1.Pod{},
		unresponsive: obs.unresponsive,
		topologyKey:  obs.topologyKey,
	}
	if obs.role == v1alpha1.ReplicaSetCanary {
		o.role = v1alpha1.ReplicaSetActive
	} else {
		// The active replica set takes the scheduler-failure allowance
		// first; the canary has what is left. Seen from here, the canary
		// is left none, which only ever overstates what it spends.
		o.input.Elsewhere.Excused = obs.input.Params.MaxPodSchedulerFailure
	}
	responsible := responsibleFor(eds, o.role)
	o.addNodes(nodes, &other.Spec.Template, responsible)
	o.addPods(pods, nodes, other.Name, responsible)
	o.input.Params.Frozen = true
	return rollout.Compute(o.input).Counts.Spent()
}

func (r *ReplicaSetReconciler) unresponsiveGrace() time.Duration {
	if r.UnresponsiveNodeGrace > 0 {
		return r.UnresponsiveNodeGrace
	}
	return placement.DefaultUnresponsiveGrace
}
