package store

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
	"github.com/extendeddaemonset/extendeddaemonset/controllers/placement"
)

// The store's indexes of the pod store: by "<namespace>/<extendeddaemonset>",
// and by the node a pod is bound or pinned to (placement.TargetNode).
const (
	podsByExtendedDaemonSet = "eds.pods.by-extendeddaemonset"
	podsByNodeName          = "eds.pods.by-node"
)

// Store reads the cached pods and nodes in place, from the informers' own
// stores. Listing through the cache client copies every object into the
// list's array: on 5,000 nodes a replica set pass listed 5,000 pods and
// 5,000 nodes, about 10 MB a pass, two thirds of all the manager allocated
// during a rollout, and what its RSS followed. What the store returns is
// shared with the cache: read it, copy an object before writing it.
//
// A cache restricted to some namespaces (--watch-namespaces) keeps an
// informer per namespace and no single store; the pods are then listed
// through reader, without deep copies.
type Store struct {
	reader      client.Reader
	pods, nodes toolscache.Indexer
}

// indexerOf is what an informer of controller-runtime's cache is beside
// cache.Informer: client-go's shared informer.
type indexerOf interface {
	GetIndexer() toolscache.Indexer
}

// New gets the pod and node informers of c and indexes the pods by
// ExtendedDaemonSet and by node. It must run before the cache starts;
// reader is c's client, for a cache without single stores.
func New(ctx context.Context, c cache.Cache, reader client.Reader) (*Store, error) {
	s := &Store{reader: reader}
	var err error
	if s.pods, err = informerIndexer(ctx, c, &corev1.Pod{}); err != nil {
		return nil, err
	}
	if s.nodes, err = informerIndexer(ctx, c, &corev1.Node{}); err != nil {
		return nil, err
	}
	// One index of pods by ExtendedDaemonSet and one by node, where they
	// are read: the store's own, or the cache's for ListPods and
	// ListPodsOnNode. Both would double the indexes' memory and their
	// upkeep on every pod event; and the cache's keeps each pod twice (for
	// its namespace and for all), under keys of its own making, where the
	// store's uses the pod's own node name: a third of the pod's memory.
	if s.pods == nil {
		for _, ix := range []FieldIndex{podsByOwner, podsByNode} {
			if err := ix.register(ctx, c); err != nil {
				return nil, err
			}
		}
		return s, nil
	}
	return s, s.indexPods()
}

// FromIndexers is a Store that reads pods and nodes from these stores of
// their informers, as New does from a cache's; it indexes the pods by
// ExtendedDaemonSet and by node.
func FromIndexers(pods, nodes toolscache.Indexer) (*Store, error) {
	s := &Store{pods: pods, nodes: nodes}
	return s, s.indexPods()
}

func (s *Store) indexPods() error {
	if err := s.pods.AddIndexers(toolscache.Indexers{podsByExtendedDaemonSet: extendedDaemonSetOfPod, podsByNodeName: nodeOfPod}); err != nil {
		return fmt.Errorf("indexing pods by ExtendedDaemonSet and node: %w", err)
	}
	return nil
}

// informerIndexer is the store of c's informer of obj's kind, nil when
// that informer has none.
func informerIndexer(ctx context.Context, c cache.Cache, obj client.Object) (toolscache.Indexer, error) {
	informer, err := c.GetInformer(ctx, obj)
	if err != nil {
		return nil, fmt.Errorf("getting the %T informer: %w", obj, err)
	}
	if shared, ok := informer.(indexerOf); ok {
		return shared.GetIndexer(), nil
	}
	return nil, nil
}

func extendedDaemonSetOfPod(obj any) ([]string, error) {
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return nil, nil
	}
	if name := pod.Labels[v1alpha1.ExtendedDaemonSetNameLabel]; name != "" {
		return []string{pod.Namespace + "/" + name}, nil
	}
	return nil, nil
}

func nodeOfPod(obj any) ([]string, error) {
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return nil, nil
	}
	if node := placement.TargetNode(pod); node != "" {
		return []string{node}, nil
	}
	return nil, nil
}

// Reads reports whether the store reads the informers' stores in place;
// only then can a pass read one node's pods (PodsOn, Node) without a list.
func (s *Store) Reads() bool { return s.pods != nil && s.nodes != nil }

// PodsOn returns the cached pods of an ExtendedDaemonSet on node,
// read-only: those of the node's pods (one per agent, as a rule) that
// carry its label. The store must read in place (Reads).
func (s *Store) PodsOn(namespace, eds, node string) ([]*corev1.Pod, error) {
	objs, err := s.pods.ByIndex(podsByNodeName, node)
	if err != nil {
		return nil, fmt.Errorf("listing pods of %s/%s on node %s: %w", namespace, eds, node, err)
	}
	pods := make([]*corev1.Pod, 0, len(objs))
	for _, obj := range objs {
		if pod, ok := obj.(*corev1.Pod); ok && pod.Namespace == namespace && pod.Labels[v1alpha1.ExtendedDaemonSetNameLabel] == eds {
			pods = append(pods, pod)
		}
	}
	return pods, nil
}

// Node returns the cached node name, nil when there is none; the store
// must read in place (Reads).
func (s *Store) Node(name string) (*corev1.Node, error) {
	obj, ok, err := s.nodes.GetByKey(name)
	if err != nil || !ok {
		return nil, err
	}
	node, _ := obj.(*corev1.Node)
	return node, nil
}

// PodsOf returns the cached pods of an ExtendedDaemonSet, read-only.
func (s *Store) PodsOf(ctx context.Context, namespace, eds string) ([]*corev1.Pod, error) {
	if s.pods == nil {
		return ListPods(ctx, s.reader, namespace, eds)
	}
	objs, err := s.pods.ByIndex(podsByExtendedDaemonSet, namespace+"/"+eds)
	if err != nil {
		return nil, fmt.Errorf("listing pods of %s/%s: %w", namespace, eds, err)
	}
	return typed[*corev1.Pod](objs), nil
}

// PodsOnNode returns the cached pods bound or pinned to node, read-only.
func (s *Store) PodsOnNode(ctx context.Context, node string) ([]*corev1.Pod, error) {
	if s.pods == nil {
		return ListPodsOnNode(ctx, s.reader, node)
	}
	objs, err := s.pods.ByIndex(podsByNodeName, node)
	if err != nil {
		return nil, fmt.Errorf("listing pods of node %s: %w", node, err)
	}
	return typed[*corev1.Pod](objs), nil
}

// AllNodes returns the cached nodes, read-only.
func (s *Store) AllNodes(ctx context.Context) ([]*corev1.Node, error) {
	if s.nodes == nil {
		return ListNodes(ctx, s.reader)
	}
	return typed[*corev1.Node](s.nodes.List()), nil
}

func typed[T any](objs []any) []T {
	out := make([]T, 0, len(objs))
	for _, o := range objs {
		if t, ok := o.(T); ok {
			out = append(out, t)
		}
	}
	return out
}

// Listing is a Store that lists the pods and nodes through reader, as for
// a cache without single stores; reader must have the FieldIndexes.
func Listing(reader client.Reader) *Store { return &Store{reader: reader} }
