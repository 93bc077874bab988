package simcluster

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// FakeNodeAnnotation marks the nodes kwok manages; its value is "fake".
const FakeNodeAnnotation = "kwok.x-k8s.io/node"

// nodeWorkers bounds concurrent node creations: enough to create a thousand
// nodes in seconds, few enough to stay within the client's rate limit.
const nodeWorkers = 16

// NewNode returns a fake node for kwok to manage, sized so that resource
// requests of test workloads never decide where pods go.
func NewNode(name string) *corev1.Node {
	resources := corev1.ResourceList{
		corev1.ResourceCPU:    resource.MustParse("32"),
		corev1.ResourceMemory: resource.MustParse("256Gi"),
		corev1.ResourcePods:   resource.MustParse("110"),
	}
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name:        name,
			Annotations: map[string]string{FakeNodeAnnotation: "fake"},
			Labels: map[string]string{
				corev1.LabelHostname: name,
				corev1.LabelOSStable: "linux",
				"type":               "kwok",
			},
		},
		Status: corev1.NodeStatus{Capacity: resources, Allocatable: resources.DeepCopy()},
	}
}

// AddNodes creates fake nodes with NewNode and waits until all are Ready.
func (c *Cluster) AddNodes(ctx context.Context, names ...string) error {
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(nodeWorkers)
	for _, name := range names {
		g.Go(func() error {
			if _, err := c.client.CoreV1().Nodes().Create(gctx, NewNode(name), metav1.CreateOptions{}); err != nil {
				return fmt.Errorf("creating node %s: %w", name, err)
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}
	return c.component(kwokName).WaitReady(ctx, func(ctx context.Context) error { return c.nodesReady(ctx, names) })
}

// nodesReady fails while any of names is not Ready.
func (c *Cluster) nodesReady(ctx context.Context, names []string) error {
	if len(names) == 0 {
		return nil
	}
	// Served from the API server's cache: this polls, and at thousands of
	// nodes a quorum read per poll would load etcd for nothing.
	list, err := c.client.CoreV1().Nodes().List(ctx, metav1.ListOptions{ResourceVersion: "0"})
	if err != nil {
		return err
	}
	ready := map[string]bool{}
	for i := range list.Items {
		ready[list.Items[i].Name] = isReady(&list.Items[i])
	}
	notReady := slices.DeleteFunc(slices.Clone(names), func(n string) bool { return ready[n] })
	if len(notReady) == 0 {
		return nil
	}
	const shown = 5
	return fmt.Errorf("%d of %d nodes not Ready: %s", len(notReady), len(names), strings.Join(notReady[:min(shown, len(notReady))], ", "))
}

func isReady(node *corev1.Node) bool {
	for _, cond := range node.Status.Conditions {
		if cond.Type == corev1.NodeReady {
			return cond.Status == corev1.ConditionTrue
		}
	}
	return false
}
