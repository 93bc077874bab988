package e2e

import (
	"context"
	"slices"

	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// deleteNodes deletes the nodes the test added.
func (s *scenario) deleteNodes(ctx context.Context) {
	for _, name := range s.nodes {
		err := env.Kube.CoreV1().Nodes().Delete(ctx, name, metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			s.t.Errorf("deleting node %s: %v", name, err)
		}
	}
}

// nodeNames lists the cluster's nodes.
func (s *scenario) nodeNames() []string {
	s.t.Helper()
	var nodes corev1.NodeList
	s.g.Expect(env.Client.List(s.ctx, &nodes)).To(gomega.Succeed())
	names := make([]string, len(nodes.Items))
	for i := range nodes.Items {
		names[i] = nodes.Items[i].Name
	}
	slices.Sort(names)
	return names
}

// addNodes adds fake nodes for this test alone; they are deleted at its
// end, after its pods.
func (s *scenario) addNodes(names ...string) {
	s.t.Helper()
	s.nodes = append(s.nodes, names...)
	s.g.Expect(env.Cluster.AddNodes(s.ctx, names...)).To(gomega.Succeed())
}

// updateNode applies mutate to the latest version of a node and writes it
// back, retrying on conflicts.
func (s *scenario) updateNode(name string, mutate func(*corev1.Node)) {
	s.t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		node := &corev1.Node{}
		if err := env.Client.Get(s.ctx, client.ObjectKey{Name: name}, node); err != nil {
			return err
		}
		mutate(node)
		return env.Client.Update(s.ctx, node)
	})
	s.g.Expect(err).NotTo(gomega.HaveOccurred())
}

// without returns list less the given items.
func without(list []string, drop ...string) []string {
	return slices.DeleteFunc(slices.Clone(list), func(s string) bool { return slices.Contains(drop, s) })
}

// groupLabel marks the nodes a test added for a workload of its own.
const groupLabel = "e2e-group"

// addNodeGroup adds nodes for this test alone, labelled so that a
// workload whose template selects onGroup(group) runs on them and nowhere
// else.
func (s *scenario) addNodeGroup(group string, names ...string) {
	s.t.Helper()
	s.addNodes(names...)
	for _, name := range names {
		s.updateNode(name, func(n *corev1.Node) { n.Labels[groupLabel] = group })
	}
}

func onGroup(group string) map[string]string { return map[string]string{groupLabel: group} }
