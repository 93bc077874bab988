package controllers

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
)

// staticListWatch lists objects once and never hears of a change: an
// informer fed by it holds what a synced informer of the manager would.
type staticListWatch struct{ list runtime.Object }

func (lw staticListWatch) List(metav1.ListOptions) (runtime.Object, error) {
	return lw.list.DeepCopyObject(), nil
}

func (staticListWatch) Watch(metav1.ListOptions) (watch.Interface, error) {
	return watch.NewFake(), nil
}

// IsWatchListSemanticsUnSupported has the reflector list, then watch,
// rather than wait for a streamed list's bookmark.
func (staticListWatch) IsWatchListSemanticsUnSupported() bool { return true }

// cachedExtendedDaemonSets is a client reading a controller-runtime cache,
// the manager's kind, whose ExtendedDaemonSet informer holds items: the pod
// handlers read through the same cache reader as in the manager, copies
// included, with no API server.
func cachedExtendedDaemonSets(tb testing.TB, items ...v1alpha1.ExtendedDaemonSet) client.Client {
	tb.Helper()
	scheme := runtime.NewScheme()
	if err := v1alpha1.AddToScheme(scheme); err != nil {
		tb.Fatal(err)
	}
	mapper := apimeta.NewDefaultRESTMapper(nil)
	mapper.Add(v1alpha1.GroupVersion.WithKind("ExtendedDaemonSet"), apimeta.RESTScopeNamespace)
	// Never dialled: the informer lists through staticListWatch.
	cfg := &rest.Config{Host: "http://127.0.0.1:1"}
	list := &v1alpha1.ExtendedDaemonSetList{Items: items}
	c, err := cache.New(cfg, cache.Options{Scheme: scheme, Mapper: mapper,
		NewInformer: func(_ toolscache.ListerWatcher, obj runtime.Object, resync time.Duration, indexers toolscache.Indexers) toolscache.SharedIndexInformer {
			return toolscache.NewSharedIndexInformer(staticListWatch{list}, obj, resync, indexers)
		}})
	if err != nil {
		tb.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	tb.Cleanup(cancel)
	go func() { _ = c.Start(ctx) }()
	if _, err := c.GetInformer(ctx, &v1alpha1.ExtendedDaemonSet{}); err != nil {
		tb.Fatal(err)
	}
	if !c.WaitForCacheSync(ctx) {
		tb.Fatal("the ExtendedDaemonSet informer did not sync")
	}
	k, err := client.New(cfg, client.Options{Scheme: scheme, Mapper: mapper, Cache: &client.CacheOptions{Reader: c}})
	if err != nil {
		tb.Fatal(err)
	}
	return k
}

// podOf is a pod of replica set ers of the ExtendedDaemonSet eds.
func podOf(eds, ers string) *corev1.Pod {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "bench", Name: ers + "-node-00000", Labels: map[string]string{}}}
	if eds != "" {
		pod.Labels[v1alpha1.ExtendedDaemonSetNameLabel] = eds
	}
	if ers != "" {
		pod.Labels[v1alpha1.ExtendedDaemonSetReplicaSetNameLabel] = ers
	}
	return pod
}

func requestNames(reqs []reconcile.Request) []string {
	var names []string
	for _, r := range reqs {
		names = append(names, r.Namespace+"/"+r.Name)
	}
	return names
}

// A pod event maps to the replica sets and the ExtendedDaemonSet it
// matters to, read from the cache without a copy, and the cached
// ExtendedDaemonSet is left as it was.
func TestPodEventsMapThroughTheCachedExtendedDaemonSet(t *testing.T) {
	g := gomega.NewWithT(t)
	eds := benchCanary(100).eds // agent-1 active, a canary of agent-2
	listed := eds.DeepCopy()
	k := cachedExtendedDaemonSets(t, *eds)
	replicaSets, extendedDaemonSets := &ReplicaSetReconciler{Client: k}, &ExtendedDaemonSetReconciler{Client: k}
	ctx := context.Background()

	for _, tc := range []struct {
		name       string
		pod        *corev1.Pod
		rs, parent []string
	}{
		{name: "a pod of a replica set left behind", pod: podOf("agent", "agent-0"),
			rs: []string{"bench/agent-0", "bench/agent-1", "bench/agent-2"}},
		{name: "an active pod", pod: podOf("agent", "agent-1"), rs: []string{"bench/agent-1", "bench/agent-2"}},
		{name: "a canary pod", pod: podOf("agent", "agent-2"), rs: []string{"bench/agent-1", "bench/agent-2"},
			parent: []string{"bench/agent"}},
		{name: "no ExtendedDaemonSet in the cache", pod: podOf("gone", "gone-1"), rs: []string{"bench/gone-1"}},
		{name: "not an ExtendedDaemonSet's pod", pod: podOf("", "")},
	} {
		g.Expect(requestNames(replicaSets.replicaSetsOfPod(ctx, tc.pod))).To(gomega.Equal(tc.rs), tc.name+": replica sets")
		g.Expect(requestNames(extendedDaemonSets.extendedDaemonSetOfCanaryPod(ctx, tc.pod))).To(gomega.Equal(tc.parent), tc.name+": its ExtendedDaemonSet")
	}

	cached := &v1alpha1.ExtendedDaemonSet{}
	g.Expect(k.Get(ctx, types.NamespacedName{Namespace: "bench", Name: "agent"}, cached)).To(gomega.Succeed())
	g.Expect(cached.Status).To(gomega.Equal(listed.Status), "the handlers read the cached object and never write it")
	g.Expect(slices.Equal(cached.Status.Canary.Nodes, listed.Status.Canary.Nodes)).To(gomega.BeTrue())
}

// BenchmarkPodEventMapping is what a canary pod's event costs the two
// handlers that map it, on a 5,000-node ExtendedDaemonSet with a canary on
// a tenth of its nodes: what they allocate is what the cache reader copies.
func BenchmarkPodEventMapping(b *testing.B) {
	k := cachedExtendedDaemonSets(b, *benchCanary(5000).eds)
	replicaSets, extendedDaemonSets := &ReplicaSetReconciler{Client: k}, &ExtendedDaemonSetReconciler{Client: k}
	ctx, pod := context.Background(), podOf("agent", "agent-2")
	b.ReportAllocs()
	for b.Loop() {
		if len(replicaSets.replicaSetsOfPod(ctx, pod)) != 2 || len(extendedDaemonSets.extendedDaemonSetOfCanaryPod(ctx, pod)) != 1 {
			b.Fatal("the canary pod maps to neither its replica sets nor its ExtendedDaemonSet")
		}
	}
}
