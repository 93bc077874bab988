package store

import (
	"context"
	"testing"

	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
	"github.com/extendeddaemonset/extendeddaemonset/controllers/placement"
	"github.com/extendeddaemonset/extendeddaemonset/test/harness/testenv"
)

// The store reads the informers' own objects when the cache has one
// informer per kind, and lists through the cache when it keeps one per
// namespace (--watch-namespaces): both see the same pods and nodes.
func TestStoreReadsPodsAndNodesWithEitherCache(t *testing.T) {
	testenv.RequireAssets(t)
	ctx := t.Context()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "store-"}}
	gomega.NewWithT(t).Expect(k8s.Create(ctx, ns)).To(gomega.Succeed())
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{GenerateName: "store-"}}
	gomega.NewWithT(t).Expect(k8s.Create(ctx, node)).To(gomega.Succeed())
	t.Cleanup(func() { _ = k8s.Delete(context.Background(), node) })
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "agent-x", Namespace: ns.Name, Labels: map[string]string{v1alpha1.ExtendedDaemonSetNameLabel: "agent"}},
		Spec:       corev1.PodSpec{NodeName: node.Name, Containers: []corev1.Container{{Name: "agent", Image: "agent:v1"}}},
	}
	gomega.NewWithT(t).Expect(k8s.Create(ctx, pod)).To(gomega.Succeed())
	other := pod.DeepCopy()
	other.Name, other.ResourceVersion, other.Labels = "other-x", "", map[string]string{v1alpha1.ExtendedDaemonSetNameLabel: "other"}
	gomega.NewWithT(t).Expect(k8s.Create(ctx, other)).To(gomega.Succeed())

	for name, opts := range map[string]cache.Options{
		"one informer per kind":      CacheOptions(),
		"one informer per namespace": withNamespaces(CacheOptions(), ns.Name),
	} {
		t.Run(name, func(t *testing.T) {
			g := gomega.NewWithT(t)
			opts.Scheme = testenv.Scheme()
			c, err := cache.New(adminConfig, opts)
			g.Expect(err).NotTo(gomega.HaveOccurred())
			ctx, cancel := context.WithCancel(ctx)
			defer cancel()
			g.Expect(SetupIndexes(ctx, c)).To(gomega.Succeed())
			reader, err := client.New(adminConfig, client.Options{Scheme: testenv.Scheme(), Cache: &client.CacheOptions{Reader: c}})
			g.Expect(err).NotTo(gomega.HaveOccurred())
			st, err := New(ctx, c, reader)
			g.Expect(err).NotTo(gomega.HaveOccurred())
			g.Expect(st.pods != nil).To(gomega.Equal(len(opts.DefaultNamespaces) == 0), "pods read in place")
			g.Expect(st.nodes).NotTo(gomega.BeNil(), "nodes are cluster-wide: one informer either way")
			go func() { _ = c.Start(ctx) }()
			g.Expect(c.WaitForCacheSync(ctx)).To(gomega.BeTrue())

			g.Eventually(func(g gomega.Gomega) {
				pods, err := st.PodsOf(ctx, ns.Name, "agent")
				g.Expect(err).NotTo(gomega.HaveOccurred())
				g.Expect(pods).To(gomega.HaveLen(1))
				g.Expect(pods[0].Name).To(gomega.Equal("agent-x"))
				g.Expect(pods[0].Spec.Containers[0].Image).To(gomega.Equal("agent:v1"), "trimmed, not emptied")
				onNode, err := st.PodsOnNode(ctx, node.Name)
				g.Expect(err).NotTo(gomega.HaveOccurred())
				g.Expect(onNode).To(gomega.ConsistOf(gomega.HaveField("Name", "agent-x"), gomega.HaveField("Name", "other-x")))
				nodes, err := st.AllNodes(ctx)
				g.Expect(err).NotTo(gomega.HaveOccurred())
				g.Expect(nodes).To(gomega.ContainElement(gomega.HaveField("Name", node.Name)))
			}).Should(gomega.Succeed())
		})
	}
}

// The store finds the pods of a node, bound there or pinned there before
// the scheduler binds them, whatever their ExtendedDaemonSet.
func TestStoreFindsThePodsOfANode(t *testing.T) {
	g := gomega.NewWithT(t)
	pods := toolscache.NewIndexer(toolscache.MetaNamespaceKeyFunc, toolscache.Indexers{})
	st, err := FromIndexers(pods, toolscache.NewIndexer(toolscache.MetaNamespaceKeyFunc, toolscache.Indexers{}))
	g.Expect(err).NotTo(gomega.HaveOccurred())
	bound := agentPod(1)
	pinned := placement.NewPod(&corev1.PodTemplateSpec{}, bound.Spec.NodeName, map[string]string{v1alpha1.ExtendedDaemonSetNameLabel: "other"})
	pinned.Namespace, pinned.Name = "others", "other-1"
	elsewhere := agentPod(2)
	for _, pod := range []*corev1.Pod{bound, pinned, elsewhere} {
		g.Expect(pods.Add(pod)).To(gomega.Succeed())
	}
	onNode, err := st.PodsOnNode(t.Context(), bound.Spec.NodeName)
	g.Expect(err).NotTo(gomega.HaveOccurred())
	g.Expect(onNode).To(gomega.ConsistOf(gomega.BeIdenticalTo(bound), gomega.BeIdenticalTo(pinned)))
	g.Expect(st.PodsOnNode(t.Context(), "node-none")).To(gomega.BeEmpty())
}

func withNamespaces(opts cache.Options, namespaces ...string) cache.Options {
	opts.DefaultNamespaces = map[string]cache.Config{}
	for _, ns := range namespaces {
		opts.DefaultNamespaces[ns] = cache.Config{}
	}
	return opts
}
