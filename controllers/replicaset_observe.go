package controllers

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
	"github.com/extendeddaemonset/extendeddaemonset/controllers/canary"
	"github.com/extendeddaemonset/extendeddaemonset/controllers/internal/store"
	"github.com/extendeddaemonset/extendeddaemonset/controllers/overrides"
	"github.com/extendeddaemonset/extendeddaemonset/controllers/placement"
	"github.com/extendeddaemonset/extendeddaemonset/controllers/rollout"
)

// defaultMaxParallelPodCreation applies when the schema default is absent,
// as in objects stored before it existed.
const defaultMaxParallelPodCreation = 250

// observation is what a replica set reconcile sees: its role, the planner's
// input, and the pods behind it.
type observation struct {
	role  v1alpha1.ReplicaSetRole
	input rollout.Input
	// pods are the pods of the input by name, for the writes.
	pods map[string]*corev1.Pod
	// specErr is a spec the schema let through but the planner cannot use.
	specErr error
	// nodes are the cluster's nodes by name, and settings the valid
	// resource overrides of the ExtendedDaemonSet, for the pods created.
	nodes    map[string]*corev1.Node
	settings []v1alpha1.ExtendedDaemonsetSetting
	// migrating counts the pods of a DaemonSet being migrated from; no
	// watch tells of their changes, so the reconcile polls while any is left.
	migrating int
	// migrationWaiting, when set, says why the pods of that DaemonSet may
	// not be replaced yet; nothing is created or deleted meanwhile.
	migrationWaiting string
	// workload: the pods are those of the DaemonSet a workloadRef names,
	// which creates them; workloadWaiting, when set, says why this replica
	// set replaces none.
	workload        bool
	workloadWaiting string
	// template is what new pods of the ExtendedDaemonSet are created from:
	// its template, or that of the DaemonSet its workloadRef names.
	template *corev1.PodTemplateSpec
	// unresponsive holds the nodes not Ready for longer than the grace
	// period; the planner leaves them alone.
	unresponsive map[string]bool
	// deadline is spec.progressDeadlineSeconds.
	deadline time.Duration
	// topologyKey is the node label of the rollout's domains, empty
	// without a topology.
	topologyKey string
	// returning, for the active replica set, picks the pods of other
	// replica sets it takes back rather than rolls forward (returnsAtOnce);
	// nil for the other roles.
	returning func(*corev1.Pod) bool
	// view states the nodes and pods of input, nodes and pods: they are
	// the view's, shared with the next pass's; never change them.
	view *view
}

// observe reads nodes and pods from the cache, with the writes the cache
// may not show yet, and states them for the planner: through the views the
// replica set keeps from pass to pass when it can, which state again only
// the nodes changed since its last pass.
func (r *ReplicaSetReconciler) observe(ctx context.Context, eds *v1alpha1.ExtendedDaemonSet,
	ers *v1alpha1.ExtendedDaemonSetReplicaSet, now time.Time,
) (*observation, error) {
	obs := &observation{
		role:        canary.RoleOf(eds, ers.Name),
		input:       rollout.Input{Now: now},
		topologyKey: topologyKey(eds),
	}
	obs.returning = returnsAtOnce(eds, ers)
	var old handover
	var err error
	if obs.role != v1alpha1.ReplicaSetUnknown {
		// Every replica set that places pods, the canary's too, takes the
		// old DaemonSet's pods for the old pods of its nodes and holds
		// them while the DaemonSet manages them. A canary started during
		// the handover that did not would find its nodes empty and put a
		// second agent beside the DaemonSet's pod; seen by both, the old
		// pods count in the one budget whichever replica set replaces
		// them. This is simpler than holding the canary back, which would
		// need the ExtendedDaemonSet's reconcile to read the DaemonSet too.
		if old, err = r.oldDaemonSetPods(ctx, eds); err != nil {
			return nil, err
		}
	}
	obs.migrating, obs.migrationWaiting = len(old.pods), old.waiting
	var updatable map[string]bool
	// A canary replaces pods as Standard does: it is judged by its pods'
	// restarts, and an update in place would bring a pod's past restarts,
	// and one more, into the verdict.
	if inPlaceMode(eds) && obs.role == v1alpha1.ReplicaSetActive {
		if updatable, err = r.updatableBy(ctx, eds, ers); err != nil {
			return nil, err
		}
	}
	st := &stater{
		source: r.store, journal: r.journal, expectations: r.expectations, eds: eds, now: now,
		checkEvery: r.viewCheckInterval(), mismatch: reportMismatch(ctx, eds),
	}
	// Kept views read the journal, which tells of the cached pods of the
	// ExtendedDaemonSet only: not of a workload's pods, nor of a migrated
	// DaemonSet's. A replica set without a role keeps one too: every pod
	// event of a rollout wakes the one it replaces, to count its pods.
	var work *workloadPods
	var otherView func(viewSpec) (*view, error)
	if r.journal != nil && r.store.Reads() && eds.Spec.WorkloadRef == nil && len(old.pods) == 0 {
		obs.template = &eds.Spec.Template
		kept := r.views.of(types.NamespacedName{Namespace: ers.Namespace, Name: ers.Name})
		own, err := st.update(ctx, &kept.own, ownViewSpec(eds, ers, obs, updatable, r.unresponsiveGrace()))
		if err != nil {
			return nil, err
		}
		obs.from(own)
		otherView = func(spec viewSpec) (*view, error) {
			other := types.NamespacedName{Namespace: ers.Namespace, Name: spec.name}
			return st.update(ctx, r.views.otherOf(kept, other, spec.key), spec)
		}
	} else {
		nodes, err := r.store.AllNodes(ctx)
		if err != nil {
			return nil, err
		}
		var cached []*corev1.Pod
		if cached, work, err = r.podsOf(ctx, eds, ers); err != nil {
			return nil, err
		}
		cached = append(cached, old.pods...)
		pods := r.expectations.Apply(edsKey(eds), cached, now)
		obs.template = work.templateOr(&eds.Spec.Template)
		own := newView(ownViewSpec(eds, ers, obs, updatable, r.unresponsiveGrace()))
		own.restate(nil, nodes, pods, now)
		obs.from(own)
		otherView = func(spec viewSpec) (*view, error) {
			v := newView(spec)
			v.restate(nil, nodes, pods, now)
			return v, nil
		}
	}

	if obs.role == v1alpha1.ReplicaSetUnknown {
		// A replica set without a role only counts its pods; the active one
		// replaces them.
		obs.input.Params.Frozen = true
		return obs, nil
	}
	obs.input.Params, obs.specErr = rolloutParams(eds, ers, obs.view.fitting, now)
	obs.specErr = errors.Join(obs.specErr, old.refused, work.err())
	obs.workload, obs.workloadWaiting = work != nil, work.waiting()
	obs.deadline = eds.Spec.ProgressDeadline()
	if obs.role == v1alpha1.ReplicaSetActive {
		judgeBakes(obs.input.Params.Topology, eds, ers.Name)
		gateDomains(obs.input.Params.Topology, eds, ers.Name)
	}
	if obs.role == v1alpha1.ReplicaSetCanary {
		// The canary replaces the pods of its nodes under the same budget
		// as the rolling update; pausing the rolling update does not hold
		// a canary back. Its nodes are spread across the domains on
		// purpose, so it takes them all at once, each within its budget.
		obs.input.Params.Paused = false
		if t := obs.input.Params.Topology; t != nil {
			parallel := *t
			parallel.Sequential, parallel.BakeTime = false, 0
			obs.input.Params.Topology = &parallel
		}
	}
	if obs.input.Elsewhere, err = r.spentElsewhere(ctx, eds, obs, otherView); err != nil {
		return nil, err
	}
	if obs.specErr != nil || obs.migrationWaiting != "" || obs.workloadWaiting != "" {
		obs.input.Params.Frozen = true
	}
	failedNodes := obs.view.failedNodes()
	for i, n := range failedNodes {
		failedNodes[i] = backoffKey(eds, n)
	}
	obs.input.BackoffUntil = nodeBackoff(r.backoff.Until(failedNodes, now), eds)
	st.checkPlanner(obs.view, obs.input)
	if obs.settings, err = r.validSettings(ctx, eds, &ers.Spec.Template); err != nil {
		return nil, err
	}
	return obs, nil
}

// from takes the nodes and pods v states.
func (o *observation) from(v *view) {
	o.view = v
	o.input.Nodes, o.input.Pods = v.nodes, v.pods
	o.pods, o.nodes = v.objects, v.nodeObjects
}

// ownViewSpec is what the replica set's own view states the nodes for.
func ownViewSpec(eds *v1alpha1.ExtendedDaemonSet, ers *v1alpha1.ExtendedDaemonSetReplicaSet,
	obs *observation, updatable map[string]bool, grace time.Duration,
) viewSpec {
	return viewSpec{
		role: obs.role, name: ers.Name, template: &ers.Spec.Template, percentOf: obs.template,
		responsible: responsibleFor(eds, obs.role), returning: obs.returning, updatable: updatable,
		topologyKey: obs.topologyKey, grace: grace,
		key: viewKey(eds, ers, obs.role, obs.returning != nil, updatable, grace),
	}
}

// validSettings are the valid resource overrides of eds. Whether one is
// valid depends on the others of the same ExtendedDaemonSet only, so the
// nodes are read only when it has any.
func (r *ReplicaSetReconciler) validSettings(ctx context.Context, eds *v1alpha1.ExtendedDaemonSet,
	template *corev1.PodTemplateSpec,
) ([]v1alpha1.ExtendedDaemonsetSetting, error) {
	all, err := store.ListSettings(ctx, r.Client, eds.Namespace)
	if err != nil {
		return nil, err
	}
	settings := slices.DeleteFunc(all, func(s v1alpha1.ExtendedDaemonsetSetting) bool {
		return s.Spec.Reference == nil || s.Spec.Reference.Name != eds.Name
	})
	if len(settings) == 0 {
		return nil, nil
	}
	nodes, err := r.store.AllNodes(ctx)
	if err != nil {
		return nil, err
	}
	invalid := overrides.Validate(settings, nodes, map[string]*corev1.PodTemplateSpec{eds.Name: template})
	return slices.DeleteFunc(settings, func(s v1alpha1.ExtendedDaemonsetSetting) bool { return invalid[s.Name] != nil }), nil
}

// edsKey is the key of an ExtendedDaemonSet in the expectations.
func edsKey(eds *v1alpha1.ExtendedDaemonSet) types.NamespacedName {
	return types.NamespacedName{Namespace: eds.Namespace, Name: eds.Name}
}

func backoffKey(eds *v1alpha1.ExtendedDaemonSet, node string) string {
	return eds.Namespace + "/" + eds.Name + "/" + node
}

// nodeBackoff re-keys backoff deadlines by node name.
func nodeBackoff(byKey map[string]time.Time, eds *v1alpha1.ExtendedDaemonSet) map[string]time.Time {
	out := make(map[string]time.Time, len(byKey))
	prefix := len(backoffKey(eds, ""))
	for k, until := range byKey {
		out[k[prefix:]] = until
	}
	return out
}

// addNodes states, for every node the replica set takes care of, whether its
// template fits there, and whether it is in maintenance (left alone).
func (o *observation) addNodes(nodes []*corev1.Node, template *corev1.PodTemplateSpec, responsible func(string) bool) {
	fitter := placement.NewFitter(template)
	for _, node := range nodes {
		if !responsible(node.Name) {
			continue
		}
		fit := fitter.Fit(node)
		o.input.Nodes = append(o.input.Nodes, rollout.Node{
			Name: node.Name, ShouldRun: fit.ShouldRun, ShouldContinueRunning: fit.ShouldContinueRunning,
			Unresponsive: o.unresponsive[node.Name], Maintenance: placement.InMaintenance(node), Domain: domainOf(node, o.topologyKey),
		})
	}
}

// addPods adds the pods on the replica set's nodes. The active replica set
// also takes the pods on nodes that no longer exist, to delete them; a
// replica set without a role only its own pods, to count them.
func (o *observation) addPods(pods []*corev1.Pod, nodes []*corev1.Node, ers string, responsible func(string) bool) {
	// down holds every node, true for those not Ready.
	down := make(map[string]bool, len(nodes))
	for _, node := range nodes {
		down[node.Name] = !placement.NodeReadiness(node).Ready()
	}
	extra := map[string]bool{}
	for _, pod := range pods {
		node := placement.TargetNode(pod)
		mine := pod.Labels[v1alpha1.ExtendedDaemonSetReplicaSetNameLabel] == ers
		switch {
		case node == "":
			continue
		case o.role == v1alpha1.ReplicaSetUnknown:
			if !mine {
				continue
			}
			if !extra[node] {
				extra[node] = true
				o.input.Nodes = append(o.input.Nodes, rollout.Node{Name: node, ShouldContinueRunning: true})
			}
		case hasNode(down, node):
			if !responsible(node) {
				continue
			}
		case o.role == v1alpha1.ReplicaSetActive:
			if !extra[node] {
				extra[node] = true
				o.input.Nodes = append(o.input.Nodes, rollout.Node{Name: node})
			}
		default:
			continue
		}
		p := rolloutPod(pod, node, mine)
		p.Returning = o.returning != nil && o.returning(pod)
		// A pod the scheduler cannot place on a node that is down (its
		// NoSchedule taints) waits for the node, not for room: no
		// scheduler failure the allowance excuses, or the node would
		// stop holding the budget while it lacks its agent.
		p.Unschedulable = p.Unschedulable && !down[node]
		o.input.Pods[node] = append(o.input.Pods[node], p)
		o.pods[pod.Name] = pod
	}
}

func hasNode(nodes map[string]bool, node string) bool {
	_, ok := nodes[node]
	return ok
}

func rolloutPod(pod *corev1.Pod, node string, mine bool) rollout.Pod {
	return rollout.Pod{
		Name:          pod.Name,
		Node:          node,
		New:           mine,
		Failed:        pod.Status.Phase == corev1.PodFailed || pod.Status.Phase == corev1.PodSucceeded,
		Terminating:   pod.DeletionTimestamp != nil,
		Unschedulable: placement.Unschedulable(pod),
		Updating:      updating(pod),
		Draining:      draining(pod),
		GateClosed:    closedForUpdate(pod),
		ReadySince:    inPlaceReadySince(pod, placement.ReadySince(pod).Time),
		CreatedAt:     pod.CreationTimestamp.Time,
	}
}

// rolloutParams resolves the rolling-update strategy against the number of
// nodes the ExtendedDaemonSet runs on (canary nodes included: the budgets
// are shared). Percentages round up, as for DaemonSets.
func rolloutParams(eds *v1alpha1.ExtendedDaemonSet, ers *v1alpha1.ExtendedDaemonSetReplicaSet, desired int, now time.Time) (rollout.Params, error) {
	ru := eds.Spec.Strategy.RollingUpdate
	p := rollout.Params{
		MinReady:               time.Duration(eds.Spec.MinReadySeconds) * time.Second,
		MaxParallelPodCreation: defaultMaxParallelPodCreation,
		Paused:                 ru.Paused || eds.Annotations[v1alpha1.RollingUpdatePausedAnnotation] == "true",
		Frozen:                 ru.Frozen || eds.Annotations[v1alpha1.RolloutFrozenAnnotation] == "true",
		StartedAt:              now,
	}
	if ru.MaxParallelPodCreation != nil {
		p.MaxParallelPodCreation = int(*ru.MaxParallelPodCreation)
	}
	if ers.Status.ActiveSince != nil {
		p.StartedAt = ers.Status.ActiveSince.Time
	}
	if ru.SlowStartIntervalDuration != nil {
		p.SlowStartInterval = ru.SlowStartIntervalDuration.Duration
	}
	var err error
	resolve := func(field string, v *intstr.IntOrString, def int) int {
		if err != nil || v == nil {
			return def
		}
		n, e := intstr.GetScaledValueFromIntOrPercent(v, desired, true)
		if e != nil {
			err = fmt.Errorf("spec.strategy.rollingUpdate.%s %q: %w", field, v.String(), e)
		}
		return n
	}
	p.MaxUnavailable = resolve("maxUnavailable", ru.MaxUnavailable, 1)
	p.MaxSurge = resolve("maxSurge", ru.MaxSurge, 0)
	p.MaxPodSchedulerFailure = resolve("maxPodSchedulerFailure", ru.MaxPodSchedulerFailure, 0)
	p.SlowStartIncrease = resolve("slowStartAdditiveIncrease", ru.SlowStartAdditiveIncrease, 1)
	if err == nil {
		p.Topology, err = topologyParams(ru.Topology)
	}
	if err == nil && p.MaxUnavailable == 0 && p.MaxSurge == 0 && desired > 0 {
		err = fmt.Errorf("spec.strategy.rollingUpdate: maxUnavailable and maxSurge both resolve to 0 for %d nodes: the rolling update could never make progress", desired)
	}
	return p, err
}
