package controllers

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"

	"github.com/extendeddaemonset/extendeddaemonset/analysis"
	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
	"github.com/extendeddaemonset/extendeddaemonset/controllers/canary"
	"github.com/extendeddaemonset/extendeddaemonset/controllers/internal/outcome"
	"github.com/extendeddaemonset/extendeddaemonset/controllers/placement"
)

// chooseActive makes the current template's replica set the active one, at
// once without a canary strategy, and through the canary lifecycle with
// one: observe (the canary's pods and nodes, its due measurements), decide
// (canary.Step, a pure function), and record the decision in the status.
// The first template of an ExtendedDaemonSet has nothing to compare against
// and becomes active at once. A failed template stays failed, whatever the
// strategy, until the template changes or a retry is asked for. It returns
// the replica sets (with the active one should the cache lack it), what a
// canary step did, and when time alone changes the decision.
func (r *ExtendedDaemonSetReconciler) chooseActive(ctx context.Context, eds *v1alpha1.ExtendedDaemonSet,
	sets []*v1alpha1.ExtendedDaemonSetReplicaSet, current *v1alpha1.ExtendedDaemonSetReplicaSet, now time.Time,
) ([]*v1alpha1.ExtendedDaemonSetReplicaSet, *canaryNote, time.Duration, error) {
	st := &eds.Status
	if st.ActiveReplicaSet == current.Name || st.ActiveReplicaSet == "" {
		st.ActiveReplicaSet, st.Canary = current.Name, nil
		return sets, nil, 0, nil
	}
	sets, activeGone, err := r.withActive(ctx, eds, sets)
	if err != nil {
		return sets, nil, 0, err
	}
	canaryOfCurrent := st.Canary != nil && st.Canary.ReplicaSet == current.Name
	switch {
	case activeGone && !canaryOfCurrent:
		// Nothing to go back to: the new template is all there is.
		st.ActiveReplicaSet, st.Canary = current.Name, nil
		return sets, nil, 0, nil
	case eds.Spec.Strategy.Canary == nil:
		if canaryOfCurrent && st.Canary.Failed {
			token := canary.RetryToken(nil, eds.Annotations)
			if !canary.RetryAsked(token, st.LastHandledRetry) {
				return sets, nil, 0, nil
			}
			st.LastHandledRetry = canary.RetryHandled(token, st.LastHandledRetry)
		}
		st.ActiveReplicaSet, st.Canary = current.Name, nil
		return sets, nil, 0, nil
	}
	note, requeue, err := r.stepCanary(ctx, eds, current, now)
	return sets, note, requeue, err
}

// withActive makes sure the active replica set is among sets: a replica set
// missing from the cache may only be missing from the cache, and a canary
// must not be skipped for it. activeGone reports that the API server does
// not have it either (a person deleted it).
func (r *ExtendedDaemonSetReconciler) withActive(ctx context.Context, eds *v1alpha1.ExtendedDaemonSet,
	sets []*v1alpha1.ExtendedDaemonSetReplicaSet,
) (_ []*v1alpha1.ExtendedDaemonSetReplicaSet, activeGone bool, _ error) {
	name := eds.Status.ActiveReplicaSet
	if byName(sets, name) != nil {
		return sets, false, nil
	}
	live := &v1alpha1.ExtendedDaemonSetReplicaSet{}
	switch err := r.APIReader.Get(ctx, types.NamespacedName{Namespace: eds.Namespace, Name: name}, live); {
	case apierrors.IsNotFound(err):
		return sets, true, nil
	case err != nil:
		return sets, false, fmt.Errorf("getting active replica set %s: %w", name, err)
	}
	if owned := ownedReplicaSets(eds, []v1alpha1.ExtendedDaemonSetReplicaSet{*live}); len(owned) == 1 {
		return append(sets, owned[0]), false, nil
	}
	return sets, true, nil
}

// stepCanary is one step of the canary's life at now: observe, measure
// what is due, decide, record. It returns what is worth telling once the
// status is written.
func (r *ExtendedDaemonSetReconciler) stepCanary(ctx context.Context, eds *v1alpha1.ExtendedDaemonSet,
	current *v1alpha1.ExtendedDaemonSetReplicaSet, now time.Time,
) (*canaryNote, time.Duration, error) {
	// The canary picks its nodes among all, and keeps them healthy.
	nodes, err := r.store.AllNodes(ctx)
	if err != nil {
		return nil, 0, err
	}
	in, stablePods, err := r.canaryInput(ctx, eds, current, nodes, now)
	if err != nil {
		return nil, 0, err
	}
	in.Answers = r.gateAnswers(eds, current.Name)
	note := &canaryNote{replicaSet: current}
	var untilMeasured time.Duration
	if c := in.Status; eds.Spec.Strategy.Canary.Analysis != nil && c != nil && c.ReplicaSet == current.Name && !c.Failed {
		if readyAt := canary.ReadyAt(c, in.Ready, in.Now); readyAt != nil {
			in.Analysis, note.measured, untilMeasured = r.analyze(ctx, eds, in, stablePods, readyAt.Time)
		}
	}
	// Steps that cannot resolve stall the object, but the canary was still
	// judged (failed, maybe): what it decided is recorded all the same.
	res, stepErr := canary.Step(in)
	note.transition, note.canary, note.asks = res.Transition, res.Status, res.Asks
	st := &eds.Status
	st.LastHandledRetry = res.LastHandledRetry
	if res.Promote {
		st.ActiveReplicaSet, st.Canary = current.Name, nil
	} else {
		st.Canary = res.Status
	}
	requeue := outcome.Soonest(res.RequeueAfter, untilMeasured)
	if stepErr != nil {
		return note, requeue, outcome.Stalling(stepErr)
	}
	if c := st.Canary; c != nil && !c.Failed {
		// A metric that can never be measured holds the canary (its
		// analysis goes to Error when it is due) until the spec changes:
		// say so as a stall, and keep the canary's schedule.
		if err := analysis.CheckMetrics(eds.Spec.Strategy.Canary.Analysis); err != nil {
			return note, requeue, outcome.Stalling(fmt.Errorf("spec.strategy.canary.analysis: %w", err))
		}
	}
	return note, requeue, nil
}

// canaryInput observes what the canary step needs: the nodes the new
// template fits, with the restarts of the pods they run now, and the canary
// pods; and the names of the active replica set's pods, the baseline of an
// analysis.
func (r *ExtendedDaemonSetReconciler) canaryInput(ctx context.Context, eds *v1alpha1.ExtendedDaemonSet,
	current *v1alpha1.ExtendedDaemonSetReplicaSet, nodes []*corev1.Node, now time.Time,
) (in canary.Input, stablePods []string, err error) {
	strategy := canary.Spread(eds)
	in = canary.Input{
		Strategy: strategy, Annotations: eds.Annotations, Status: eds.Status.Canary,
		LastHandledRetry: eds.Status.LastHandledRetry, ReplicaSet: current.Name,
		TemplateHash: current.Spec.TemplateGeneration, ProgressDeadline: eds.Spec.ProgressDeadline(), Now: now,
	}
	selector := labels.Everything()
	if strategy.NodeSelector != nil {
		s, err := metav1.LabelSelectorAsSelector(strategy.NodeSelector)
		if err != nil {
			return in, nil, outcome.Stalling(fmt.Errorf("spec.strategy.canary.nodeSelector: %w", err))
		}
		selector = s
	}
	pods, err := r.podsOf(ctx, eds)
	if err != nil {
		return in, nil, err
	}
	stablePods = observeCanary(&in, eds, current, selector, pods, nodes)
	return in, stablePods, nil
}

// observeCanary fills in the canary's pods, the nodes the new template
// fits (the candidates among them selector matches, with the restarts of
// the pods they run now) and whether the canary is ready, from the pods of
// eds and every node; it returns the names of the active replica set's
// pods.
func observeCanary(in *canary.Input, eds *v1alpha1.ExtendedDaemonSet, current *v1alpha1.ExtendedDaemonSetReplicaSet,
	selector labels.Selector, pods []*corev1.Pod, nodes []*corev1.Node,
) (stablePods []string) {
	restarts := map[string]int32{}
	for _, pod := range pods {
		switch rs := pod.Labels[v1alpha1.ExtendedDaemonSetReplicaSetNameLabel]; {
		case rs == current.Name:
			in.Pods = append(in.Pods, pod)
			continue
		case rs == eds.Status.ActiveReplicaSet && pod.DeletionTimestamp == nil:
			stablePods = append(stablePods, pod.Name)
		}
		for _, c := range pod.Status.ContainerStatuses {
			restarts[placement.TargetNode(pod)] += c.RestartCount
		}
	}
	fitter := placement.NewFitter(&current.Spec.Template)
	for _, node := range nodes {
		if !fitter.Fit(node).ShouldRun {
			continue
		}
		in.Desired++
		if selector.Matches(labels.Set(node.Labels)) {
			in.Candidates = append(in.Candidates, canary.NewCandidate(node, restarts[node.Name]))
		}
	}
	if c := eds.Status.Canary; c != nil && c.ReplicaSet == current.Name {
		in.Ready = availableOnEvery(c.Nodes, in.Pods, time.Duration(eds.Spec.MinReadySeconds)*time.Second, in.Now)
	}
	return stablePods
}

// availableOnEvery says whether each of nodes, and there is at least one,
// runs an available pod among pods. The replica set's counters cannot say
// it: its planner stops counting a node NotReady past the unresponsive
// grace, and would read complete with no pod running there.
func availableOnEvery(nodes []string, pods []*corev1.Pod, minReady time.Duration, now time.Time) bool {
	available := make(map[string]bool, len(nodes))
	for _, pod := range pods {
		node := placement.TargetNode(pod)
		if p := rolloutPod(pod, node, true); p.Available(minReady, now) {
			available[node] = true
		}
	}
	for _, node := range nodes {
		if !available[node] {
			return false
		}
	}
	return len(nodes) > 0
}
