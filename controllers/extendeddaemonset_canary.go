package controllers

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
	"github.com/extendeddaemonset/extendeddaemonset/controllers/canary"
	"github.com/extendeddaemonset/extendeddaemonset/controllers/placement"
)

// chooseActive makes the current template's replica set the active one, at
// once without a canary strategy, and through the canary lifecycle with
// one. The first template of an ExtendedDaemonSet has nothing to compare
// against and becomes active at once, as does a template whose active
// replica set was deleted. It returns when time alone changes the decision.
func (r *ExtendedDaemonSetReconciler) chooseActive(ctx context.Context, eds *v1alpha1.ExtendedDaemonSet,
	sets []*v1alpha1.ExtendedDaemonSetReplicaSet, current *v1alpha1.ExtendedDaemonSetReplicaSet, nodes []corev1.Node,
) (time.Duration, error) {
	st := &eds.Status
	if st.ActiveReplicaSet == current.Name || eds.Spec.Strategy.Canary == nil || byName(sets, st.ActiveReplicaSet) == nil {
		st.ActiveReplicaSet, st.Canary = current.Name, nil
		return 0, nil
	}
	in, stablePods, err := r.canaryInput(ctx, eds, current, nodes)
	if err != nil {
		return 0, err
	}
	before := analysisIn(eds, current.Name)
	var untilMeasured time.Duration
	if c := in.Status; eds.Spec.Strategy.Canary.Analysis != nil && c != nil && c.ReplicaSet == current.Name && !c.Failed {
		in.Analysis, untilMeasured = r.analyze(ctx, eds, in, stablePods)
	}
	res, err := canary.Step(in)
	if err != nil {
		return 0, err
	}
	st.LastHandledRetry = res.LastHandledRetry
	if res.Promote {
		st.ActiveReplicaSet, st.Canary = current.Name, nil
	} else {
		st.Canary = res.Status
	}
	r.recordCanaryTransition(eds, current, res)
	extendedDaemonSetMetrics().observeCanaryEnd(eds, res, in.Now)
	r.recordAnalysisTransition(eds, current, before, res, in.Analysis)
	return soonest(res.RequeueAfter, untilMeasured), nil
}

// soonest is the shorter of two waits, where zero means no wait is needed.
func soonest(a, b time.Duration) time.Duration {
	switch {
	case a <= 0:
		return b
	case b <= 0:
		return a
	default:
		return min(a, b)
	}
}

// canaryInput observes what the canary step needs: the nodes the new
// template fits, with the restarts of the pods they run now, and the canary
// pods; and the names of the active replica set's pods, the baseline of an
// analysis.
func (r *ExtendedDaemonSetReconciler) canaryInput(ctx context.Context, eds *v1alpha1.ExtendedDaemonSet,
	current *v1alpha1.ExtendedDaemonSetReplicaSet, nodes []corev1.Node,
) (in canary.Input, stablePods []string, err error) {
	strategy := eds.Spec.Strategy.Canary
	in = canary.Input{
		Strategy: strategy, Annotations: eds.Annotations, Status: eds.Status.Canary,
		LastHandledRetry: eds.Status.LastHandledRetry, ReplicaSet: current.Name,
		TemplateHash: current.Spec.TemplateGeneration, Now: metav1.Now().Time,
	}
	selector := labels.Everything()
	if strategy.NodeSelector != nil {
		s, err := metav1.LabelSelectorAsSelector(strategy.NodeSelector)
		if err != nil {
			return in, nil, fmt.Errorf("spec.strategy.canary.nodeSelector: %w", err)
		}
		selector = s
	}
	pods, err := listPods(ctx, r.Client, eds.Namespace, eds.Name)
	if err != nil {
		return in, nil, err
	}
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
	for i := range nodes {
		node := &nodes[i]
		if !placement.NodeFit(&current.Spec.Template, node).ShouldRun {
			continue
		}
		in.Desired++
		if selector.Matches(labels.Set(node.Labels)) {
			in.Candidates = append(in.Candidates, canary.NewCandidate(node, restarts[node.Name]))
		}
	}
	s := current.Status
	in.Ready = s.Status == v1alpha1.ReplicaSetCanary && s.ObservedGeneration == current.Generation &&
		eds.Status.Canary != nil && int(s.UpToDate) == len(eds.Status.Canary.Nodes) && s.UpToDate == s.Desired && s.Desired > 0
	return in, stablePods, nil
}

func (r *ExtendedDaemonSetReconciler) recordCanaryTransition(eds *v1alpha1.ExtendedDaemonSet, current *v1alpha1.ExtendedDaemonSetReplicaSet, res canary.Result) {
	if res.Transition == "" {
		return
	}
	kind, note := corev1.EventTypeNormal, ""
	switch res.Transition {
	case canary.Promoted:
		note = fmt.Sprintf("canary %s promoted: rolling it out to every node", current.Name)
	case canary.Failed:
		kind = corev1.EventTypeWarning
		note = fmt.Sprintf("canary %s failed: %s: %s; its nodes go back to %s", current.Name, res.Status.Reason, res.Status.Message, eds.Status.ActiveReplicaSet)
	case canary.Paused:
		kind = corev1.EventTypeWarning
		note = fmt.Sprintf("canary %s paused: %s: %s", current.Name, res.Status.Reason, res.Status.Message)
	default:
		note = fmt.Sprintf("canary %s on nodes %v", current.Name, res.Status.Nodes)
	}
	r.Recorder.Eventf(eds, current, kind, res.Transition, "Canary", "%s", note)
}
