package e2e

import (
	"context"
	"encoding/json"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
	"github.com/extendeddaemonset/extendeddaemonset/controllers"
	"github.com/extendeddaemonset/extendeddaemonset/controllers/placement"
	"github.com/extendeddaemonset/extendeddaemonset/test/argocd"
)

// Timeouts are generous: the machine may be small and busy. Nothing is
// asserted about speed.
const (
	rolloutTimeout = 4 * time.Minute
	cleanupTimeout = 2 * time.Minute
	pollInterval   = 250 * time.Millisecond
	// holdWindow is how long a state that must not change is watched.
	holdWindow = 5 * time.Second
	// canaryHeadStart is the duration of an auto canary whose pods a test
	// must report on (restarts, image pull errors) before it could be
	// promoted: room for a busy machine to start them and write their status.
	canaryHeadStart = 15 * time.Second
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
// dumped if the test failed, then its workloads (ExtendedDaemonSets,
// DaemonSets) and settings are deleted and their pods awaited, so the next
// test starts on empty nodes, and the nodes it added are deleted. The
// namespace itself stays: no namespace controller runs to finalize it.
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
	// Settings go too: every node change makes the setting controller look
	// at the settings of every namespace.
	for _, kind := range []client.Object{&v1alpha1.ExtendedDaemonSet{}, &appsv1.DaemonSet{}, &v1alpha1.ExtendedDaemonsetSetting{}} {
		err := env.Client.DeleteAllOf(ctx, kind, client.InNamespace(s.ns),
			client.PropagationPolicy(metav1.DeletePropagationBackground))
		s.g.Expect(err).NotTo(gomega.HaveOccurred())
	}
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

// specJSON is the spec of eds as the API server stores it, to compare.
func specJSON(g gomega.Gomega, eds *v1alpha1.ExtendedDaemonSet) string {
	data, err := json.Marshal(eds.Spec)
	g.Expect(err).NotTo(gomega.HaveOccurred())
	return string(data)
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
	res, err := status.Compute(unstructuredOf(g, obj))
	g.Expect(err).NotTo(gomega.HaveOccurred())
	return res
}

// argoHealthOf runs the shipped Argo CD health check on obj, as Argo CD
// does, and returns the health status with its message.
func argoHealthOf(g gomega.Gomega, obj client.Object) (string, string) {
	health, message, err := argocd.Health(unstructuredOf(g, obj))
	g.Expect(err).NotTo(gomega.HaveOccurred())
	return health, message
}

func unstructuredOf(g gomega.Gomega, obj client.Object) *unstructured.Unstructured {
	gvk, err := apiutil.GVKForObject(obj, env.Client.Scheme())
	g.Expect(err).NotTo(gomega.HaveOccurred())
	content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	g.Expect(err).NotTo(gomega.HaveOccurred())
	u := &unstructured.Unstructured{Object: content}
	u.SetGroupVersionKind(gvk)
	return u
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
	health, message := argoHealthOf(g, eds)
	g.Expect(health).To(gomega.Equal(argocd.Healthy), "Argo CD health: %s", message)
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
		health, message := argoHealthOf(g, active)
		g.Expect(health).To(gomega.Equal(argocd.Healthy), "Argo CD health of %s: %s", active.Name, message)

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

// expectEvent waits for an event of reason about obj whose note mentions
// every string of about (a replica set name, for instance), reported by the
// controller through the events.k8s.io API.
func (s *scenario) expectEvent(obj client.Object, reason string, about ...string) {
	s.t.Helper()
	s.expectEventOfType(obj, "", reason, about)
}

// expectWarning is expectEvent for a Warning event.
func (s *scenario) expectWarning(obj client.Object, reason string, about ...string) {
	s.t.Helper()
	s.expectEventOfType(obj, corev1.EventTypeWarning, reason, about)
}

// expectEventOfType waits for an event as expectEvent does, of eventType
// unless it is empty.
func (s *scenario) expectEventOfType(obj client.Object, eventType, reason string, about []string) {
	s.t.Helper()
	note := []gomega.OmegaMatcher{gomega.HavePrefix(reason + ": ")}
	for _, a := range about {
		note = append(note, gomega.ContainSubstring(a))
	}
	s.g.Eventually(func(g gomega.Gomega) {
		var seen []string
		for _, ev := range s.controllerEvents(g, obj) {
			if eventType == "" || ev.Type == eventType {
				seen = append(seen, ev.Reason+": "+ev.Note)
			}
		}
		g.Expect(seen).To(gomega.ContainElement(gomega.And(note...)), "%s events of %s", eventType, obj.GetName())
	}).WithTimeout(time.Minute).WithPolling(pollInterval).Should(gomega.Succeed())
}

// controllerEvents lists the events the controller reported about obj.
func (s *scenario) controllerEvents(g gomega.Gomega, obj client.Object) []eventsv1.Event {
	gvk, err := apiutil.GVKForObject(obj, env.Client.Scheme())
	g.Expect(err).NotTo(gomega.HaveOccurred())
	list, err := env.Kube.EventsV1().Events(obj.GetNamespace()).List(s.ctx, metav1.ListOptions{})
	g.Expect(err).NotTo(gomega.HaveOccurred())
	var about []eventsv1.Event
	for _, ev := range list.Items {
		if ev.Regarding.Kind == gvk.Kind && ev.Regarding.Name == obj.GetName() && ev.Regarding.UID == obj.GetUID() &&
			ev.ReportingController == controllers.ControllerName {
			about = append(about, ev)
		}
	}
	return about
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

// annotate sets an annotation on obj, which may have none yet.
func annotate(obj metav1.Object, key, value string) {
	annotations := obj.GetAnnotations()
	if annotations == nil {
		annotations = map[string]string{}
	}
	annotations[key] = value
	obj.SetAnnotations(annotations)
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

// expectVersions waits until each of nodes runs exactly one live pod of
// eds, Running and Ready, of version canary on canaryNodes and of version
// stable elsewhere, and no other node runs one.
func (s *scenario) expectVersions(eds *v1alpha1.ExtendedDaemonSet, nodes []string, stable string, canaryNodes []string, canary string) {
	s.t.Helper()
	s.g.Eventually(func(g gomega.Gomega) {
		var placed []string
		for _, pod := range s.pods(g, eds) {
			if pod.DeletionTimestamp != nil {
				continue
			}
			node, want := placement.TargetNode(&pod), stable
			if slices.Contains(canaryNodes, node) {
				want = canary
			}
			placed = append(placed, node)
			g.Expect(pod.Spec.Containers[0].Image).To(gomega.Equal(agentImage(want)), "pod %s on %s", pod.Name, node)
			g.Expect(runningAndReady(&pod)).To(gomega.BeTrue(), "pod %s on %s is not Running and Ready", pod.Name, node)
		}
		g.Expect(placed).To(gomega.ConsistOf(nodes), "nodes with a live pod")
	}).WithTimeout(rolloutTimeout).WithPolling(pollInterval).Should(gomega.Succeed())
}

// setPodStatus waits until replica set ers of eds runs a Running, Ready
// pod on each of nodes, then edits their status as a kubelet would report
// it. kwok only writes the status of pods it has not started yet, so the
// edit sticks once they run.
func (s *scenario) setPodStatus(eds *v1alpha1.ExtendedDaemonSet, ers string, nodes []string, mutate func(*corev1.PodStatus)) {
	s.t.Helper()
	var started []corev1.Pod
	s.g.Eventually(func(g gomega.Gomega) {
		started = nil
		for _, pod := range s.pods(g, eds) {
			if pod.DeletionTimestamp == nil && pod.Labels[v1alpha1.ExtendedDaemonSetReplicaSetNameLabel] == ers {
				g.Expect(runningAndReady(&pod)).To(gomega.BeTrue(), "pod %s on %s is not Running and Ready", pod.Name, pod.Spec.NodeName)
				started = append(started, pod)
			}
		}
		g.Expect(started).To(gomega.HaveLen(len(nodes)))
	}).WithTimeout(rolloutTimeout).WithPolling(pollInterval).Should(gomega.Succeed())
	for i := range started {
		pod := &started[i]
		s.g.Expect(nodes).To(gomega.ContainElement(pod.Spec.NodeName), "pod %s of %s", pod.Name, ers)
		err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			if err := env.Client.Get(s.ctx, client.ObjectKeyFromObject(pod), pod); err != nil {
				return err
			}
			mutate(&pod.Status)
			return env.Client.Status().Update(s.ctx, pod)
		})
		s.g.Expect(err).NotTo(gomega.HaveOccurred())
	}
}

// createAgent creates the agent at v1 on every node with the canary
// strategy given, replacing half the nodes at a time once a canary is
// promoted (the pace of the rolling update is not what canary tests judge),
// and waits until it has rolled out. It returns the agent and the nodes.
func (s *scenario) createAgent(canary *v1alpha1.CanaryStrategy) (*v1alpha1.ExtendedDaemonSet, []string) {
	s.t.Helper()
	nodes := s.nodeNames()
	eds := agentEDS(s.ns, "agent", "v1")
	eds.Spec.Strategy.RollingUpdate.MaxUnavailable = ptr.To(intstr.FromString("50%"))
	eds.Spec.Strategy.Canary = canary
	s.create(eds)
	eds, _ = s.expectRolledOut(eds, "v1", nodes)
	return eds, nodes
}

// expectPromoted waits until eds has promoted its canary replica set and
// rolled version out to nodes, and has told of the promotion.
func (s *scenario) expectPromoted(eds *v1alpha1.ExtendedDaemonSet, version string, nodes []string, canary string) {
	s.t.Helper()
	_, active := s.expectRolledOut(eds, version, nodes)
	s.g.Expect(active.Name).To(gomega.Equal(canary), "active replica set")
	s.expectEvent(eds, "CanaryPromoted", canary)
}

// restarted is a pod status edit: the pod's container exited in error
// count times and is running again, or, given a waiting reason, waits for
// that reason and is not ready. The pod stays Running, as a kubelet leaves
// it, which kwok never rewrites.
func restarted(count int32, waiting string) func(*corev1.PodStatus) {
	return func(st *corev1.PodStatus) {
		now := metav1.Now()
		c := &st.ContainerStatuses[0]
		c.RestartCount = count
		c.LastTerminationState = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
			ExitCode: 1, Reason: "Error", StartedAt: now, FinishedAt: now,
		}}
		c.State = corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: now}}
		if waiting != "" {
			c.State = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: waiting}}
		}
		ready := waiting == ""
		c.Ready, c.Started = ready, ptr.To(ready)
		readiness := corev1.ConditionFalse
		if ready {
			readiness = corev1.ConditionTrue
		}
		for i := range st.Conditions {
			if t := st.Conditions[i].Type; (t == corev1.PodReady || t == corev1.ContainersReady) && st.Conditions[i].Status != readiness {
				st.Conditions[i].Status, st.Conditions[i].LastTransitionTime = readiness, now
			}
		}
	}
}

// canaryPhase is where an ExtendedDaemonSet stands with a canary, in its
// conditions, its state column and for kstatus.
type canaryPhase struct {
	// reason is the reason of the Canary condition, and of Reconciling, or
	// of Stalled once the canary failed.
	reason  string
	state   v1alpha1.ExtendedDaemonSetState
	kstatus status.Status
	// argo is the Argo CD health the shipped check gives.
	argo string
}

var (
	canaryRunning = canaryPhase{v1alpha1.ReasonCanaryRunning, v1alpha1.StateCanary, status.InProgressStatus, argocd.Progressing}
	canaryPaused  = canaryPhase{v1alpha1.ReasonCanaryPaused, v1alpha1.StateCanaryPaused, status.InProgressStatus, argocd.Suspended}
	canaryFailed  = canaryPhase{v1alpha1.ReasonCanaryFailed, v1alpha1.StateCanaryFailed, status.FailedStatus, argocd.Degraded}
)

// checkCanary checks that eds reports its canary in phase, for the reason
// why (status.canary.reason, also in the Canary condition's message)
// unless why is empty.
func checkCanary(g gomega.Gomega, eds *v1alpha1.ExtendedDaemonSet, phase canaryPhase, why string) {
	g.Expect(eds.Status.ObservedGeneration).To(gomega.Equal(eds.Generation), "observedGeneration")
	c := eds.Status.Canary
	g.Expect(c).NotTo(gomega.BeNil(), "no canary")
	g.Expect(c.Failed).To(gomega.Equal(phase == canaryFailed), "canary failed")
	g.Expect(c.Paused).To(gomega.Equal(phase == canaryPaused), "canary paused")
	if why != "" {
		g.Expect(c.Reason).To(gomega.Equal(why), "canary reason: %s", c.Message)
	}
	conds := eds.Status.Conditions
	g.Expect(apimeta.IsStatusConditionFalse(conds, v1alpha1.ReadyCondition)).To(gomega.BeTrue(), "Ready in %v", conds)
	progressing, absent, canaryStatus := v1alpha1.ReconcilingCondition, v1alpha1.StalledCondition, metav1.ConditionTrue
	if phase == canaryFailed {
		progressing, absent, canaryStatus = v1alpha1.StalledCondition, v1alpha1.ReconcilingCondition, metav1.ConditionFalse
	}
	g.Expect(apimeta.FindStatusCondition(conds, progressing)).To(gomega.And(gomega.Not(gomega.BeNil()),
		gomega.HaveField("Status", metav1.ConditionTrue), gomega.HaveField("Reason", phase.reason),
		gomega.HaveField("Message", gomega.ContainSubstring(c.ReplicaSet))), "%s in %v", progressing, conds)
	g.Expect(apimeta.FindStatusCondition(conds, absent)).To(gomega.BeNil(), "%s in %v", absent, conds)
	g.Expect(apimeta.FindStatusCondition(conds, v1alpha1.CanaryCondition)).To(gomega.And(gomega.Not(gomega.BeNil()),
		gomega.HaveField("Status", canaryStatus), gomega.HaveField("Reason", phase.reason),
		gomega.HaveField("Message", gomega.And(gomega.ContainSubstring(c.ReplicaSet), gomega.ContainSubstring(why)))),
		"Canary in %v", conds)
	g.Expect(eds.Status.State).To(gomega.Equal(phase.state))
	g.Expect(kstatusOf(g, eds).Status).To(gomega.Equal(phase.kstatus))
	health, message := argoHealthOf(g, eds)
	g.Expect(health).To(gomega.Equal(phase.argo), "Argo CD health: %s", message)
}

// expectCanary waits until eds reports a canary of its current template
// in phase for the reason why (any reason if empty), and returns it.
func (s *scenario) expectCanary(eds *v1alpha1.ExtendedDaemonSet, phase canaryPhase, why string) *v1alpha1.ExtendedDaemonSet {
	s.t.Helper()
	var latest *v1alpha1.ExtendedDaemonSet
	s.g.Eventually(func(g gomega.Gomega) {
		latest = &v1alpha1.ExtendedDaemonSet{}
		g.Expect(env.Client.Get(s.ctx, client.ObjectKeyFromObject(eds), latest)).To(gomega.Succeed())
		checkCanary(g, latest, phase, why)
		g.Expect(latest.Status.ActiveReplicaSet).NotTo(gomega.Equal(latest.Status.Canary.ReplicaSet), "the canary is active")
	}).WithTimeout(rolloutTimeout).WithPolling(pollInterval).Should(gomega.Succeed())
	return latest
}

// expectCanaryHolds waits until eds runs a canary of version on its
// canary nodes in phase for the reason why, every other node of nodes
// staying on stable. Then it checks that nothing moves until the canary has
// run for past plus holdWindow: neither promoted nor failed, same canary
// replica set, nodes and pods. It returns the canary.
func (s *scenario) expectCanaryHolds(eds *v1alpha1.ExtendedDaemonSet, nodes []string, stable, version string,
	phase canaryPhase, why string, past time.Duration,
) v1alpha1.CanaryStatus {
	s.t.Helper()
	latest := s.expectCanary(eds, phase, why)
	canary, active := *latest.Status.Canary, latest.Status.ActiveReplicaSet
	s.expectVersions(eds, nodes, stable, canary.Nodes, version)
	hold := max(holdWindow, time.Until(canary.StartedAt.Add(past+holdWindow)))
	s.expectPodsKept(eds, hold, func(g gomega.Gomega) {
		latest := s.get(eds)
		checkCanary(g, latest, phase, why)
		g.Expect(latest.Status.ActiveReplicaSet).To(gomega.Equal(active), "promoted")
		g.Expect(latest.Status.Canary.ReplicaSet).To(gomega.Equal(canary.ReplicaSet))
		g.Expect(latest.Status.Canary.Nodes).To(gomega.Equal(canary.Nodes))
	})
	return canary
}

// expectPodsKept checks for hold that the pods of eds stay as they are,
// none deleted, replaced or added, and that check holds meanwhile.
func (s *scenario) expectPodsKept(eds *v1alpha1.ExtendedDaemonSet, hold time.Duration, check func(gomega.Gomega)) {
	s.t.Helper()
	held := map[types.UID]string{}
	for _, pod := range s.pods(s.g, eds) {
		held[pod.UID] = pod.Spec.NodeName
	}
	s.g.Consistently(func(g gomega.Gomega) {
		check(g)
		now := map[types.UID]string{}
		for _, pod := range s.pods(g, eds) {
			g.Expect(pod.DeletionTimestamp).To(gomega.BeNil(), "pod %s deleted", pod.Name)
			now[pod.UID] = pod.Spec.NodeName
		}
		g.Expect(now).To(gomega.Equal(held), "pods replaced")
	}).WithTimeout(hold).WithPolling(pollInterval).Should(gomega.Succeed())
}
