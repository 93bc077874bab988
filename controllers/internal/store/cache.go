package store

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
	"github.com/extendeddaemonset/extendeddaemonset/controllers/overrides"
	"github.com/extendeddaemonset/extendeddaemonset/controllers/placement"
)

// Field indexes on the cached pods.
const (
	// podNodeIndex: the node a pod is bound or pinned to, for a cache
	// whose pods the store cannot read in place (New).
	podNodeIndex = "eds.pod.node"
	// podOwnerIndex: "<namespace>/<extendeddaemonset>" of the pod, for a
	// cache whose pods the store cannot read in place (New).
	podOwnerIndex = "eds.pod.owner"
	// nodeOverridesIndex: "<namespace>/<extendeddaemonset>" of each
	// ExtendedDaemonSet the node's resource override annotations name.
	nodeOverridesIndex = "eds.node.overrides"
)

// CacheOptions keeps the informer cache to what the controllers use, so that
// its memory stays flat on clusters of thousands of nodes: only pods that
// carry the ExtendedDaemonSet label, pods and nodes trimmed to the fields
// some reader reads (trimPod, trimNode) with their repeated values shared,
// and no managed fields on any object.
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

// FieldIndex is an index of cached objects by a field of their own.
type FieldIndex struct {
	Object  client.Object
	Field   string
	Extract client.IndexerFunc
	what    string
}

// FieldIndexes are the indexes the reconcilers query: SetupIndexes
// registers the nodes', New the pods' for a cache without single stores
// (the store indexes its own pod store otherwise).
func FieldIndexes() []FieldIndex {
	return []FieldIndex{podsByNode, nodesByOverrides, podsByOwner}
}

var (
	podsByNode = FieldIndex{Object: &corev1.Pod{}, Field: podNodeIndex, what: "pods by node", Extract: func(o client.Object) []string {
		if node := placement.TargetNode(o.(*corev1.Pod)); node != "" {
			return []string{node}
		}
		return nil
	}}
	nodesByOverrides = FieldIndex{Object: &corev1.Node{}, Field: nodeOverridesIndex, what: "nodes by resource override annotation",
		Extract: func(o client.Object) []string {
			var keys []string
			for _, ref := range overrides.AnnotatedExtendedDaemonSets(o.(*corev1.Node)) {
				keys = append(keys, ref.String())
			}
			return keys
		}}
	podsByOwner = FieldIndex{Object: &corev1.Pod{}, Field: podOwnerIndex, what: "pods by ExtendedDaemonSet", Extract: func(o client.Object) []string {
		keys, _ := extendedDaemonSetOfPod(o)
		return keys
	}}
)

// SetupIndexes registers the node index the reconcilers query; New
// indexes the pods.
func SetupIndexes(ctx context.Context, indexer client.FieldIndexer) error {
	return nodesByOverrides.register(ctx, indexer)
}

func (ix FieldIndex) register(ctx context.Context, indexer client.FieldIndexer) error {
	if err := indexer.IndexField(ctx, ix.Object, ix.Field, ix.Extract); err != nil {
		return fmt.Errorf("indexing %s: %w", ix.what, err)
	}
	return nil
}

// ListPods returns the cached pods of an ExtendedDaemonSet, shared with
// the cache: read them, copy one before writing it. Every pass lists every
// pod; deep copies of thousands of them were most of the manager's
// allocations.
func ListPods(ctx context.Context, c client.Reader, namespace, eds string) ([]*corev1.Pod, error) {
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

// ListNodes returns the cached nodes, shared with the cache: read only.
func ListNodes(ctx context.Context, c client.Reader) ([]*corev1.Node, error) {
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

// ListPodsOnNode returns the cached pods bound or pinned to node, shared
// with the cache: read only.
func ListPodsOnNode(ctx context.Context, c client.Reader, node string) ([]*corev1.Pod, error) {
	var list corev1.PodList
	if err := c.List(ctx, &list, client.MatchingFields{podNodeIndex: node}, client.UnsafeDisableDeepCopy); err != nil {
		return nil, fmt.Errorf("listing pods of node %s: %w", node, err)
	}
	pods := make([]*corev1.Pod, len(list.Items))
	for i := range list.Items {
		pods[i] = &list.Items[i]
	}
	return pods, nil
}

// ListNodesAnnotatingOverrides returns the cached nodes whose resource
// override annotations name the ExtendedDaemonSet eds. Only those are read:
// a pass runs on every replica set status change, and must not walk every
// node of the cluster each time.
func ListNodesAnnotatingOverrides(ctx context.Context, c client.Reader, eds types.NamespacedName) ([]corev1.Node, error) {
	var annotated corev1.NodeList
	if err := c.List(ctx, &annotated, client.MatchingFields{nodeOverridesIndex: eds.String()}); err != nil {
		return nil, fmt.Errorf("listing nodes annotated for %s: %w", eds.Name, err)
	}
	return annotated.Items, nil
}
