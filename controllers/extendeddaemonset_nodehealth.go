package controllers

import (
	"context"
	"fmt"

	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/extendeddaemonset/extendeddaemonset/analysis"
	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
	"github.com/extendeddaemonset/extendeddaemonset/controllers/canary"
	"github.com/extendeddaemonset/extendeddaemonset/controllers/internal/store"
)

// maxParallelNodeLists bounds the pod lists one nodeHealth measurement
// sends at once, so that a canary of many nodes does not burst the API
// server.
const maxParallelNodeLists = 4

// podNodeNameField is the API server's field selector of the node a pod is
// bound to.
const podNodeNameField = "spec.nodeName"

// nodeHealthObserver observes the nodes of an ExtendedDaemonSet's
// nodeHealth metrics, only when one is due: pick chooses them among the
// cached nodes and the ExtendedDaemonSet's pods, and the pods of other
// workloads on each are listed around the cache, which holds only ours.
type nodeHealthObserver struct {
	r    *ExtendedDaemonSetReconciler
	eds  *v1alpha1.ExtendedDaemonSet
	pick func(nodes []*corev1.Node, pods []*corev1.Pod) canary.HealthNodes
}

// canaryNodeHealth observes the nodes of the running canary c: its nodes
// against the nodes of their zones that run the active replica set.
func (r *ExtendedDaemonSetReconciler) canaryNodeHealth(eds *v1alpha1.ExtendedDaemonSet, c *v1alpha1.CanaryStatus) analysis.NodeObserver {
	active := eds.Status.ActiveReplicaSet
	return nodeHealthObserver{r: r, eds: eds, pick: func(nodes []*corev1.Node, pods []*corev1.Pod) canary.HealthNodes {
		changed, unchanged := splitPods(pods, c.ReplicaSet, func(rs string) bool { return rs == active })
		return canary.HealthNodesOf(nodeHealthSeed(eds), nodes, c.Nodes, changed, unchanged)
	}}
}

// bakeNodeHealth observes the nodes of the baking domain that run the
// active replica set against the nodes of their zones still on an older
// template.
func (r *ExtendedDaemonSetReconciler) bakeNodeHealth(eds *v1alpha1.ExtendedDaemonSet, domain string) analysis.NodeObserver {
	active, key := eds.Status.ActiveReplicaSet, topologyKey(eds)
	return nodeHealthObserver{r: r, eds: eds, pick: func(nodes []*corev1.Node, pods []*corev1.Pod) canary.HealthNodes {
		changed, unchanged := splitPods(pods, active, func(rs string) bool { return rs != active })
		var baking []string
		for _, node := range nodes {
			if domainOf(node, key) == domain {
				baking = append(baking, node.Name)
			}
		}
		return canary.HealthNodesOf(nodeHealthSeed(eds), nodes, baking, changed, unchanged)
	}}
}

// nodeHealthSeed orders the nodes an ExtendedDaemonSet's measurements
// sample: its own order, so that agents sample different nodes.
func nodeHealthSeed(eds *v1alpha1.ExtendedDaemonSet) string { return eds.Namespace + "/" + eds.Name }

// splitPods sorts pods into those of the replica set changed and those of
// the replica sets unchanged says are the old version.
func splitPods(pods []*corev1.Pod, changed string, unchanged func(rs string) bool) (newer, older []*corev1.Pod) {
	for _, pod := range pods {
		switch rs := pod.Labels[v1alpha1.ExtendedDaemonSetReplicaSetNameLabel]; {
		case rs == changed:
			newer = append(newer, pod)
		case unchanged(rs):
			older = append(older, pod)
		}
	}
	return newer, older
}

// ObserveNodes picks the nodes and lists the other workloads' pods of each.
func (o nodeHealthObserver) ObserveNodes(ctx context.Context) (analysis.NodeHealthInput, error) {
	nodes, err := o.r.store.AllNodes(ctx)
	if err != nil {
		return analysis.NodeHealthInput{}, err
	}
	pods, err := o.r.podsOf(ctx, o.eds)
	if err != nil {
		return analysis.NodeHealthInput{}, err
	}
	chosen := o.pick(nodes, pods)
	if chosen.JudgedLeftOut > 0 || chosen.BaselineLeftOut > 0 {
		ctrl.LoggerFrom(ctx).V(1).Info("node health judged on a sample of the nodes",
			"judged", len(chosen.Judged), "judgedLeftOut", chosen.JudgedLeftOut,
			"baseline", len(chosen.Baseline), "baselineLeftOut", chosen.BaselineLeftOut)
	}
	ours, err := o.ours(ctx)
	if err != nil {
		return analysis.NodeHealthInput{}, err
	}
	in := chosen.NodeHealthInput
	observed := make([]*analysis.NodeObservation, 0, len(in.Judged)+len(in.Baseline))
	for i := range in.Judged {
		observed = append(observed, &in.Judged[i])
	}
	for i := range in.Baseline {
		observed = append(observed, &in.Baseline[i])
	}
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(maxParallelNodeLists)
	for _, obs := range observed {
		g.Go(func() error {
			others, err := o.otherPods(ctx, obs.Node.Name, ours)
			obs.Pods = others
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return analysis.NodeHealthInput{}, err
	}
	return in, nil
}

// otherPods lists the live pods bound to node, less those ours says are
// the ExtendedDaemonSet's own.
func (o nodeHealthObserver) otherPods(ctx context.Context, node string, ours func(*corev1.Pod) bool) ([]*corev1.Pod, error) {
	var list corev1.PodList
	if err := o.r.APIReader.List(ctx, &list, client.MatchingFields{podNodeNameField: node}); err != nil {
		return nil, fmt.Errorf("listing the pods of node %s: %w", node, err)
	}
	var out []*corev1.Pod
	for i := range list.Items {
		pod := &list.Items[i]
		if pod.DeletionTimestamp == nil && !ours(pod) {
			out = append(out, pod)
		}
	}
	return out, nil
}

// ours says whether a pod is the ExtendedDaemonSet's, whichever its
// version: one of its own, or, with a workloadRef, of the DaemonSet it
// drives.
func (o nodeHealthObserver) ours(ctx context.Context) (func(*corev1.Pod) bool, error) {
	eds := o.eds
	var daemonSet types.UID
	if eds.Spec.WorkloadRef != nil {
		ds, err := store.DaemonSetOf(ctx, o.r.Client, eds)
		if err != nil {
			return nil, err
		}
		daemonSet = ds.UID
	}
	return func(pod *corev1.Pod) bool {
		if pod.Namespace != eds.Namespace {
			return false
		}
		if pod.Labels[v1alpha1.ExtendedDaemonSetNameLabel] == eds.Name {
			return true
		}
		ref := metav1.GetControllerOf(pod)
		return daemonSet != "" && ref != nil && ref.UID == daemonSet
	}, nil
}
