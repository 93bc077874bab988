package controllers

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/extendeddaemonset/extendeddaemonset/analysis"
	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
	"github.com/extendeddaemonset/extendeddaemonset/controllers/internal/store"
)

var nodeHealthStart = time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)

// nodeHealthNode is a Ready node of zone.
func nodeHealthNode(name, zone string, cordoned bool) *corev1.Node {
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{corev1.LabelTopologyZone: zone}},
		Spec:       corev1.NodeSpec{Unschedulable: cordoned},
		Status:     corev1.NodeStatus{Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}},
	}
}

// agentPod is a pod of the ExtendedDaemonSet agent's replica set rs on
// node, started at started past nodeHealthStart.
func agentPod(rs, node string, started time.Duration) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: rs + "-" + node, Labels: map[string]string{
			v1alpha1.ExtendedDaemonSetNameLabel: "agent", v1alpha1.ExtendedDaemonSetReplicaSetNameLabel: rs,
		}},
		Spec:   corev1.PodSpec{NodeName: node},
		Status: corev1.PodStatus{StartTime: &metav1.Time{Time: nodeHealthStart.Add(started)}},
	}
}

// otherPod is a pod of namespace/name on node, with labels.
func otherPod(namespace, name, node string, labels map[string]string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name, Labels: labels}, Spec: corev1.PodSpec{NodeName: node}}
}

// nodeHealthReconciler is a reconciler on a fake API server holding objs,
// whose pod lists by node go through listed.
func nodeHealthReconciler(t *testing.T, listed interceptor.Funcs, objs ...client.Object) *ExtendedDaemonSetReconciler {
	t.Helper()
	scheme := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))
	utilruntime.Must(v1alpha1.AddToScheme(scheme))
	b := fake.NewClientBuilder().WithScheme(scheme).WithObjects(objs...).
		WithIndex(&corev1.Pod{}, podNodeNameField, func(o client.Object) []string { return []string{o.(*corev1.Pod).Spec.NodeName} })
	for _, ix := range store.FieldIndexes() {
		b = b.WithIndex(ix.Object, ix.Field, ix.Extract)
	}
	c := b.Build()
	return &ExtendedDaemonSetReconciler{Client: c, APIReader: interceptor.NewClient(c, listed), store: store.Listing(c)}
}

// observedPods is "node: namespace/pod ..." for each observation.
func observedPods(obs []analysis.NodeObservation) map[string][]string {
	out := map[string][]string{}
	for _, o := range obs {
		names := []string{}
		for _, p := range o.Pods {
			names = append(names, p.Namespace+"/"+p.Name)
		}
		slices.Sort(names)
		out[o.Node.Name] = names
	}
	return out
}

func sinceOf(obs []analysis.NodeObservation) map[string]time.Duration {
	out := map[string]time.Duration{}
	for _, o := range obs {
		out[o.Node.Name] = o.Since.Sub(nodeHealthStart)
	}
	return out
}

// The canary's observer judges its nodes against the stable nodes of their
// zone, out of maintenance, each with the other workloads' live pods:
// neither the ExtendedDaemonSet's own pods nor terminating ones.
func TestCanaryNodeHealthObservesTheOtherPodsOfItsNodes(t *testing.T) {
	g := gomega.NewWithT(t)
	eds := &v1alpha1.ExtendedDaemonSet{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "agent"}}
	eds.Status.ActiveReplicaSet = "agent-old"
	eds.Status.Canary = &v1alpha1.CanaryStatus{ReplicaSet: "agent-new", Nodes: []string{"a1"}}
	terminating := otherPod("web", "web-a1-old", "a1", nil)
	terminating.DeletionTimestamp, terminating.Finalizers = &metav1.Time{Time: nodeHealthStart}, []string{"example.com/hold"}
	r := nodeHealthReconciler(t, interceptor.Funcs{},
		nodeHealthNode("a1", "a", false), nodeHealthNode("a2", "a", false), nodeHealthNode("a3", "a", true), nodeHealthNode("b1", "b", false),
		agentPod("agent-new", "a1", 5*time.Second), agentPod("agent-old", "a2", 0), agentPod("agent-old", "a3", 0), agentPod("agent-old", "b1", 0),
		otherPod("web", "web-a1", "a1", nil), terminating,
		// Another agent's pods, in the same namespace, are other pods.
		otherPod("ns", "proxy-a1", "a1", map[string]string{v1alpha1.ExtendedDaemonSetNameLabel: "proxy"}),
		otherPod("web", "web-a2", "a2", nil), otherPod("web", "web-a3", "a3", nil), otherPod("web", "web-b1", "b1", nil),
	)

	in, err := r.canaryNodeHealth(eds, eds.Status.Canary).ObserveNodes(t.Context())
	g.Expect(err).NotTo(gomega.HaveOccurred())
	g.Expect(observedPods(in.Judged)).To(gomega.Equal(map[string][]string{"a1": {"ns/proxy-a1", "web/web-a1"}}))
	g.Expect(sinceOf(in.Judged)).To(gomega.Equal(map[string]time.Duration{"a1": 5 * time.Second}))
	g.Expect(observedPods(in.Baseline)).To(gomega.Equal(map[string][]string{"a2": {"web/web-a2"}}))
	g.Expect(sinceOf(in.Baseline)).To(gomega.Equal(map[string]time.Duration{"a2": 5 * time.Second}))
}

// A bake's observer judges the baking domain's nodes that run the active
// replica set against the nodes of their zone still on an older template.
func TestBakeNodeHealthObservesTheBakingDomain(t *testing.T) {
	g := gomega.NewWithT(t)
	eds := &v1alpha1.ExtendedDaemonSet{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "agent"}}
	eds.Spec.Strategy.RollingUpdate.Topology = &v1alpha1.RollingUpdateTopology{Key: "rack"}
	eds.Status.ActiveReplicaSet = "agent-new"
	rack := func(n *corev1.Node, r string) *corev1.Node { n.Labels["rack"] = r; return n }
	r := nodeHealthReconciler(t, interceptor.Funcs{},
		rack(nodeHealthNode("a1", "a", false), "r1"), rack(nodeHealthNode("a2", "a", false), "r1"),
		rack(nodeHealthNode("a3", "a", false), "r2"), rack(nodeHealthNode("b1", "b", false), "r3"),
		// Updated before, in a rack that baked already.
		rack(nodeHealthNode("a4", "a", false), "r0"),
		agentPod("agent-new", "a1", 2*time.Second), agentPod("agent-new", "a2", 3*time.Second), agentPod("agent-new", "a4", time.Second),
		agentPod("agent-older", "a3", 0), agentPod("agent-older", "b1", 0),
		otherPod("web", "web-a1", "a1", nil), otherPod("web", "web-a3", "a3", nil),
	)

	in, err := r.bakeNodeHealth(eds, "r1").ObserveNodes(t.Context())
	g.Expect(err).NotTo(gomega.HaveOccurred())
	g.Expect(sinceOf(in.Judged)).To(gomega.Equal(map[string]time.Duration{"a1": 2 * time.Second, "a2": 3 * time.Second}))
	g.Expect(observedPods(in.Judged)).To(gomega.Equal(map[string][]string{"a1": {"web/web-a1"}, "a2": {}}))
	g.Expect(sinceOf(in.Baseline)).To(gomega.Equal(map[string]time.Duration{"a3": 2 * time.Second}))
}

// With a workloadRef, the pods of the DaemonSet it drives are the
// ExtendedDaemonSet's own, not other pods.
func TestNodeHealthLeavesOutTheDaemonSetOfAWorkloadRef(t *testing.T) {
	g := gomega.NewWithT(t)
	ds := &appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "cilium", UID: "ds-uid"},
		Spec: appsv1.DaemonSetSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "cilium"}},
			UpdateStrategy: appsv1.DaemonSetUpdateStrategy{Type: appsv1.OnDeleteDaemonSetStrategyType}}}
	dsPod := func(hash, node string, started time.Duration) *corev1.Pod {
		p := otherPod("ns", "cilium-"+node, node, map[string]string{"app": "cilium", appsv1.DefaultDaemonSetUniqueLabelKey: hash})
		p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "DaemonSet", Name: "cilium", UID: ds.UID, Controller: ptr.To(true)}}
		p.Status.StartTime = &metav1.Time{Time: nodeHealthStart.Add(started)}
		return p
	}
	eds := &v1alpha1.ExtendedDaemonSet{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "agent"}}
	eds.Spec.WorkloadRef = &v1alpha1.WorkloadRef{Kind: "DaemonSet", Name: "cilium"}
	eds.Status.ActiveReplicaSet = store.WorkloadReplicaSetName("agent", "old")
	eds.Status.Canary = &v1alpha1.CanaryStatus{ReplicaSet: store.WorkloadReplicaSetName("agent", "new"), Nodes: []string{"a1"}}
	r := nodeHealthReconciler(t, interceptor.Funcs{}, ds,
		nodeHealthNode("a1", "a", false), nodeHealthNode("a2", "a", false),
		dsPod("new", "a1", time.Second), dsPod("old", "a2", 0),
		otherPod("web", "web-a1", "a1", nil),
	)

	in, err := r.canaryNodeHealth(eds, eds.Status.Canary).ObserveNodes(t.Context())
	g.Expect(err).NotTo(gomega.HaveOccurred())
	g.Expect(observedPods(in.Judged)).To(gomega.Equal(map[string][]string{"a1": {"web/web-a1"}}))
	g.Expect(observedPods(in.Baseline)).To(gomega.Equal(map[string][]string{"a2": {}}))
}

// A pod list the API server refuses fails the observation, saying which
// node, so that the measurement is an error and not a verdict on partial
// data.
func TestNodeHealthObservationFailsWithAPodList(t *testing.T) {
	g := gomega.NewWithT(t)
	eds := &v1alpha1.ExtendedDaemonSet{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "agent"}}
	eds.Status.ActiveReplicaSet = "agent-old"
	eds.Status.Canary = &v1alpha1.CanaryStatus{ReplicaSet: "agent-new", Nodes: []string{"a1"}}
	refused := errors.New("pods is forbidden")
	r := nodeHealthReconciler(t, interceptor.Funcs{List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
		return refused
	}}, nodeHealthNode("a1", "a", false), agentPod("agent-new", "a1", 0))

	_, err := r.canaryNodeHealth(eds, eds.Status.Canary).ObserveNodes(t.Context())
	g.Expect(err).To(gomega.MatchError(refused))
	g.Expect(err.Error()).To(gomega.Equal("listing the pods of node a1: pods is forbidden"))
}
