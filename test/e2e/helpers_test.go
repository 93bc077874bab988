package e2e

import (
	"context"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
	"github.com/extendeddaemonset/extendeddaemonset/controllers"
)

// Timeouts are generous: the machine may be small and busy. Nothing is
// asserted about speed.
const (
	rolloutTimeout = 4 * time.Minute
	cleanupTimeout = 2 * time.Minute
	pollInterval   = 250 * time.Millisecond
	// holdWindow is how long a state that must not change is watched.
	holdWindow = 5 * time.Second
)

// scenario is one test on the shared cluster, in a namespace of its own.
type scenario struct {
	t   *testing.T
	g   *gomega.WithT
	ctx context.Context
	ns  string
	// nodes are the nodes the test added, deleted at its end.
	nodes []string
}

var unsafeNameChars = regexp.MustCompile(`[^a-z0-9-]+`)

// newScenario creates the test's namespace. At the end, the logs are
// dumped if the test failed, then its ExtendedDaemonSets are deleted and
// their pods awaited, so the next test starts on empty nodes, and the nodes
// it added are deleted. The namespace itself stays: no namespace controller
// runs to finalize it.
func newScenario(t *testing.T) *scenario {
	t.Helper()
	name := strings.Trim(unsafeNameChars.ReplaceAllString(strings.ToLower(t.Name()), "-"), "-")
	s := &scenario{t: t, g: gomega.NewWithT(t), ctx: t.Context(), ns: "e2e-" + name[:min(len(name), 50)]}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: s.ns}}
	s.g.Expect(env.Client.Create(s.ctx, ns)).To(gomega.Succeed())
	t.Cleanup(s.deleteWorkloads)
	t.Cleanup(func() {
		if t.Failed() {
			var logs strings.Builder
			env.DumpLogs(&logs, 60)
			t.Log(logs.String())
		}
	})
	return s
}

func (s *scenario) deleteWorkloads() {
	// t.Context is done once cleanup runs.
	ctx, cancel := context.WithTimeout(context.Background(), cleanupTimeout)
	defer cancel()
	defer s.deleteNodes(ctx)
	err := env.Client.DeleteAllOf(ctx, &v1alpha1.ExtendedDaemonSet{}, client.InNamespace(s.ns),
		client.PropagationPolicy(metav1.DeletePropagationBackground))
	s.g.Expect(err).NotTo(gomega.HaveOccurred())
	s.g.Eventually(func(g gomega.Gomega) {
		var pods corev1.PodList
		g.Expect(env.Client.List(ctx, &pods, client.InNamespace(s.ns))).To(gomega.Succeed())
		g.Expect(podNames(pods.Items)).To(gomega.BeEmpty(), "pods left in %s", s.ns)
	}).WithContext(ctx).WithPolling(pollInterval).Should(gomega.Succeed())
}

// deleteNodes deletes the nodes the test added.
func (s *scenario) deleteNodes(ctx context.Context) {
	for _, name := range s.nodes {
		err := env.Kube.CoreV1().Nodes().Delete(ctx, name, metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			s.t.Errorf("deleting node %s: %v", name, err)
		}
	}
}

// agentEDS is a node agent with no canary; version changes its template.
func agentEDS(namespace, name, version string) *v1alpha1.ExtendedDaemonSet {
	labels := map[string]string{"app": name}
	return &v1alpha1.ExtendedDaemonSet{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
		Spec: v1alpha1.ExtendedDaemonSetSpec{
			Selector: &v1alpha1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{
					Name: "agent", Image: agentImage(version),
				}}},
			},
		},
	}
}

func agentImage(version string) string { return "registry.example/agent:" + version }

// setVersion changes the agent's template to version.
func setVersion(eds *v1alpha1.ExtendedDaemonSet, version string) {
	eds.Spec.Template.Spec.Containers[0].Image = agentImage(version)
}

func (s *scenario) create(eds *v1alpha1.ExtendedDaemonSet) *v1alpha1.ExtendedDaemonSet {
	s.t.Helper()
	s.g.Expect(env.Client.Create(s.ctx, eds)).To(gomega.Succeed())
	return eds
}

// update applies mutate to the latest version of eds and writes it back,
// retrying on conflicts; eds is refreshed.
func (s *scenario) update(eds *v1alpha1.ExtendedDaemonSet, mutate func(*v1alpha1.ExtendedDaemonSet)) {
	s.t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := env.Client.Get(s.ctx, client.ObjectKeyFromObject(eds), eds); err != nil {
			return err
		}
		mutate(eds)
		return env.Client.Update(s.ctx, eds)
	})
	s.g.Expect(err).NotTo(gomega.HaveOccurred())
}

func (s *scenario) get(eds *v1alpha1.ExtendedDaemonSet) *v1alpha1.ExtendedDaemonSet {
	s.t.Helper()
	latest := &v1alpha1.ExtendedDaemonSet{}
	s.g.Expect(env.Client.Get(s.ctx, client.ObjectKeyFromObject(eds), latest)).To(gomega.Succeed())
	return latest
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

// counters are the status counters of an ExtendedDaemonSet or replica set.
type counters struct{ Desired, Current, Ready, Available, UpToDate int32 }

func countersOf(st v1alpha1.ExtendedDaemonSetStatus) counters {
	return counters{st.Desired, st.Current, st.Ready, st.Available, st.UpToDate}
}

// allCounters is the status of n nodes that all run an available pod of
// the current template.
func allCounters(n int) counters {
	c := int32(n)
	return counters{c, c, c, c, c}
}

// kstatusOf computes what Flux's health check reads from obj.
func kstatusOf(g gomega.Gomega, obj client.Object) *status.Result {
	gvk, err := apiutil.GVKForObject(obj, env.Client.Scheme())
	g.Expect(err).NotTo(gomega.HaveOccurred())
	content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	g.Expect(err).NotTo(gomega.HaveOccurred())
	u := &unstructured.Unstructured{Object: content}
	u.SetGroupVersionKind(gvk)
	res, err := status.Compute(u)
	g.Expect(err).NotTo(gomega.HaveOccurred())
	return res
}

// expectReady checks that eds reports a finished rollout of its current
// generation, in its conditions and for kstatus.
func expectReady(g gomega.Gomega, eds *v1alpha1.ExtendedDaemonSet) {
	g.Expect(eds.Status.ObservedGeneration).To(gomega.Equal(eds.Generation), "observedGeneration")
	g.Expect(apimeta.IsStatusConditionTrue(eds.Status.Conditions, v1alpha1.ReadyCondition)).To(gomega.BeTrue(),
		"Ready in %v", eds.Status.Conditions)
	g.Expect(apimeta.FindStatusCondition(eds.Status.Conditions, v1alpha1.ReconcilingCondition)).To(gomega.BeNil())
	g.Expect(apimeta.FindStatusCondition(eds.Status.Conditions, v1alpha1.StalledCondition)).To(gomega.BeNil())
	g.Expect(kstatusOf(g, eds).Status).To(gomega.Equal(status.CurrentStatus))
	g.Expect(eds.Status.State).To(gomega.Equal(v1alpha1.StateRunning))
}

// expectRolledOut waits until eds has rolled version out to exactly nodes:
// status done, the active replica set holding the EDS's template, and one
// Running, Ready pod of it per node and none elsewhere, except the kept
// pods, which must still run untouched on nodes that take no new pod
// (untolerated NoSchedule taint). It returns the EDS and its active replica
// set as last seen.
func (s *scenario) expectRolledOut(eds *v1alpha1.ExtendedDaemonSet, version string, nodes []string, kept ...corev1.Pod) (*v1alpha1.ExtendedDaemonSet, *v1alpha1.ExtendedDaemonSetReplicaSet) {
	s.t.Helper()
	latest := &v1alpha1.ExtendedDaemonSet{}
	active := &v1alpha1.ExtendedDaemonSetReplicaSet{}
	s.g.Eventually(func(g gomega.Gomega) {
		g.Expect(env.Client.Get(s.ctx, client.ObjectKeyFromObject(eds), latest)).To(gomega.Succeed())
		g.Expect(latest.Spec.Template.Spec.Containers[0].Image).To(gomega.Equal(agentImage(version)))
		expectReady(g, latest)
		if len(kept) == 0 {
			g.Expect(countersOf(latest.Status)).To(gomega.Equal(allCounters(len(nodes))))
		} else {
			// Current counts the nodes that run a pod, kept ones included.
			g.Expect(latest.Status.Desired).To(gomega.BeEquivalentTo(len(nodes)), "desired")
			g.Expect(latest.Status.Current).To(gomega.BeEquivalentTo(len(nodes)+len(kept)), "current")
		}
		key := client.ObjectKey{Namespace: eds.Namespace, Name: latest.Status.ActiveReplicaSet}
		g.Expect(env.Client.Get(s.ctx, key, active)).To(gomega.Succeed())
		g.Expect(equality.Semantic.DeepEqual(active.Spec.Template, latest.Spec.Template)).To(gomega.BeTrue(),
			"active replica set %s holds another template", active.Name)
		g.Expect(active.Status.Status).To(gomega.Equal(v1alpha1.ReplicaSetActive))
		g.Expect(kstatusOf(g, active).Status).To(gomega.Equal(status.CurrentStatus))

		keptUIDs := map[types.UID]bool{}
		for _, pod := range kept {
			keptUIDs[pod.UID] = true
		}
		var placed []string
		for _, pod := range s.pods(g, eds) {
			g.Expect(pod.DeletionTimestamp).To(gomega.BeNil(), "pod %s terminating", pod.Name)
			if keptUIDs[pod.UID] {
				delete(keptUIDs, pod.UID)
				continue
			}
			placed = append(placed, pod.Spec.NodeName)
			g.Expect(pod.Labels).To(gomega.HaveKeyWithValue(v1alpha1.ExtendedDaemonSetReplicaSetNameLabel, active.Name), pod.Name)
			g.Expect(pod.Spec.Containers[0].Image).To(gomega.Equal(agentImage(version)), pod.Name)
			g.Expect(runningAndReady(&pod)).To(gomega.BeTrue(), "pod %s on %s is not Running and Ready", pod.Name, pod.Spec.NodeName)
		}
		g.Expect(keptUIDs).To(gomega.BeEmpty(), "kept pods gone")
		g.Expect(placed).To(gomega.ConsistOf(nodes), "nodes with a pod")
	}).WithTimeout(rolloutTimeout).WithPolling(pollInterval).Should(gomega.Succeed())
	return latest, active
}

// pods lists the pods of eds.
func (s *scenario) pods(g gomega.Gomega, eds *v1alpha1.ExtendedDaemonSet) []corev1.Pod {
	var list corev1.PodList
	g.Expect(env.Client.List(s.ctx, &list, client.InNamespace(eds.Namespace),
		client.MatchingLabels{v1alpha1.ExtendedDaemonSetNameLabel: eds.Name})).To(gomega.Succeed())
	return list.Items
}

// podOn returns the pod of eds on node; it fails unless there is exactly one.
func (s *scenario) podOn(eds *v1alpha1.ExtendedDaemonSet, node string) corev1.Pod {
	s.t.Helper()
	var on []corev1.Pod
	for _, pod := range s.pods(s.g, eds) {
		if pod.Spec.NodeName == node {
			on = append(on, pod)
		}
	}
	s.g.Expect(on).To(gomega.HaveLen(1), "pods of %s on %s", eds.Name, node)
	return on[0]
}

// replicaSets lists the replica sets labelled with eds's name.
func (s *scenario) replicaSets(g gomega.Gomega, eds *v1alpha1.ExtendedDaemonSet) []v1alpha1.ExtendedDaemonSetReplicaSet {
	var list v1alpha1.ExtendedDaemonSetReplicaSetList
	g.Expect(env.Client.List(s.ctx, &list, client.InNamespace(eds.Namespace),
		client.MatchingLabels{v1alpha1.ExtendedDaemonSetNameLabel: eds.Name})).To(gomega.Succeed())
	return list.Items
}

func replicaSetNames(sets []v1alpha1.ExtendedDaemonSetReplicaSet) []string {
	names := make([]string, len(sets))
	for i := range sets {
		names[i] = sets[i].Name
	}
	slices.Sort(names)
	return names
}

// expectEvent waits for an event of reason about eds whose note mentions
// about (a replica set name, for instance), reported by the controller
// through the events.k8s.io API.
func (s *scenario) expectEvent(eds *v1alpha1.ExtendedDaemonSet, reason, about string) {
	s.t.Helper()
	s.g.Eventually(func(g gomega.Gomega) {
		list, err := env.Kube.EventsV1().Events(eds.Namespace).List(s.ctx, metav1.ListOptions{})
		g.Expect(err).NotTo(gomega.HaveOccurred())
		var seen []string
		for _, ev := range list.Items {
			if ev.Regarding.Kind == "ExtendedDaemonSet" && ev.Regarding.Name == eds.Name && ev.Regarding.UID == eds.UID &&
				ev.ReportingController == controllers.ControllerName {
				seen = append(seen, ev.Reason+": "+ev.Note)
			}
		}
		g.Expect(seen).To(gomega.ContainElement(gomega.And(
			gomega.HavePrefix(reason+": "), gomega.ContainSubstring(about))), "events of %s", eds.Name)
	}).WithTimeout(time.Minute).WithPolling(pollInterval).Should(gomega.Succeed())
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

func runningAndReady(pod *corev1.Pod) bool {
	if pod.Status.Phase != corev1.PodRunning {
		return false
	}
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func podNames(pods []corev1.Pod) []string {
	names := make([]string, len(pods))
	for i := range pods {
		names[i] = pods[i].Name
	}
	return names
}

// without returns list less the given items.
func without(list []string, drop ...string) []string {
	return slices.DeleteFunc(slices.Clone(list), func(s string) bool { return slices.Contains(drop, s) })
}
