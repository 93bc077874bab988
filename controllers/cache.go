package controllers

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
	"github.com/extendeddaemonset/extendeddaemonset/controllers/overrides"
	"github.com/extendeddaemonset/extendeddaemonset/controllers/placement"
)

// Field indexes on the cached pods.
const (
	// podNodeIndex: the node a pod is bound or pinned to.
	podNodeIndex = "eds.pod.node"
	// podOwnerIndex: "<namespace>/<extendeddaemonset>" of the pod, for a
	// cache whose pods the store cannot read in place (newStore).
	podOwnerIndex = "eds.pod.owner"
	// nodeOverridesIndex: "<namespace>/<extendeddaemonset>" of each
	// ExtendedDaemonSet the node's resource override annotations name.
	nodeOverridesIndex = "eds.node.overrides"
)

// CacheOptions keeps the informer cache to what the controllers use, so that
// its memory stays flat on clusters of thousands of nodes: only pods that
// carry the ExtendedDaemonSet label, trimmed to what the rollout reads, no
// managed fields on any object, and nodes without their image lists and
// volume records.
func CacheOptions() cache.Options {
	managed, err := labels.NewRequirement(v1alpha1.ExtendedDaemonSetNameLabel, selection.Exists, nil)
	if err != nil {
		panic(fmt.Sprintf("pod label requirement: %v", err)) // a constant; cannot fail
	}
	return cache.Options{
		DefaultTransform: cache.TransformStripManagedFields(),
		ByObject: map[client.Object]cache.ByObject{
			&corev1.Pod{}:  {Label: labels.NewSelector().Add(*managed), Transform: trimPod},
			&corev1.Node{}: {Transform: trimNode},
		},
	}
}

// trimNode keeps the node fields placement and status read: metadata
// (labels, annotations), taints, and conditions.
func trimNode(obj any) (any, error) {
	node, ok := obj.(*corev1.Node)
	if !ok {
		return obj, nil
	}
	node.ManagedFields = nil
	node.Status = corev1.NodeStatus{Conditions: node.Status.Conditions}
	return node, nil
}

// trimPod keeps the pod fields the controllers read: metadata, status, and
// of the spec the node it is bound or pinned to, its readiness gates, and
// each container's name, image and restart policy (an in-place update
// patches images by position). A node agent's environment, volumes and probes can make a
// pod tens of kilobytes; thousands of them were most of the cache.
func trimPod(obj any) (any, error) {
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return obj, nil
	}
	pod.ManagedFields = nil
	pod.Spec = corev1.PodSpec{
		NodeName:       pod.Spec.NodeName,
		Affinity:       pod.Spec.Affinity,
		ReadinessGates: pod.Spec.ReadinessGates,
		Containers:     namesAndImages(pod.Spec.Containers),
		InitContainers: namesAndImages(pod.Spec.InitContainers),
	}
	return pod, nil
}

func namesAndImages(containers []corev1.Container) []corev1.Container {
	if containers == nil {
		return nil
	}
	out := make([]corev1.Container, len(containers))
	for i, c := range containers {
		// A restartable init container (a sidecar) keeps running: its
		// restart policy says so.
		out[i] = corev1.Container{Name: c.Name, Image: c.Image, RestartPolicy: c.RestartPolicy}
	}
	return out
}

// setupIndexes registers the pod and node indexes the reconcilers query.
func setupIndexes(ctx context.Context, indexer client.FieldIndexer) error {
	if err := indexer.IndexField(ctx, &corev1.Pod{}, podNodeIndex, func(o client.Object) []string {
		if node := placement.TargetNode(o.(*corev1.Pod)); node != "" {
			return []string{node}
		}
		return nil
	}); err != nil {
		return fmt.Errorf("indexing pods by node: %w", err)
	}
	if err := indexer.IndexField(ctx, &corev1.Node{}, nodeOverridesIndex, func(o client.Object) []string {
		var keys []string
		for _, ref := range overrides.AnnotatedExtendedDaemonSets(o.(*corev1.Node)) {
			keys = append(keys, ref.String())
		}
		return keys
	}); err != nil {
		return fmt.Errorf("indexing nodes by resource override annotation: %w", err)
	}
	return nil
}

// listPods returns the cached pods of an ExtendedDaemonSet, shared with
// the cache: read them, copy one before writing it. Every pass lists every
// pod; deep copies of thousands of them were most of the manager's
// allocations.
func listPods(ctx context.Context, c client.Reader, namespace, eds string) ([]*corev1.Pod, error) {
	var list corev1.PodList
	if err := c.List(ctx, &list, client.InNamespace(namespace), client.MatchingFields{podOwnerIndex: namespace + "/" + eds},
		client.UnsafeDisableDeepCopy); err != nil {
		return nil, fmt.Errorf("listing pods of %s/%s: %w", namespace, eds, err)
	}
	pods := make([]*corev1.Pod, len(list.Items))
	for i := range list.Items {
		pods[i] = &list.Items[i]
	}
	return pods, nil
}

// listNodes returns the cached nodes, shared with the cache: read only.
func listNodes(ctx context.Context, c client.Reader) ([]*corev1.Node, error) {
	var list corev1.NodeList
	if err := c.List(ctx, &list, client.UnsafeDisableDeepCopy); err != nil {
		return nil, fmt.Errorf("listing nodes: %w", err)
	}
	nodes := make([]*corev1.Node, len(list.Items))
	for i := range list.Items {
		nodes[i] = &list.Items[i]
	}
	return nodes, nil
}
