package controllers

// The envtest suite: one API server and etcd, with the CRDs, and one manager
// running the real reconcilers (wired as cmd/manager wires them) for every
// test of the package. The API server has no scheduler, no kubelet, no
// garbage collector and no node lifecycle controller: the tests create
// nodes, bind pods and set their status themselves, and never rely on
// owner-reference cascades.
//
// The suite starts them through test/harness/testenv: test/harness itself
// imports this package.

import (
	"context"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilrand "k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/retry"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
	"github.com/extendeddaemonset/extendeddaemonset/controllers/placement"
	"github.com/extendeddaemonset/extendeddaemonset/test/harness/testenv"
)

// Timeouts are generous: the machine is small and shared. Nothing is
// asserted about speed.
const (
	eventually = 2 * time.Minute
	polling    = 200 * time.Millisecond
	// holdWindow is how long a state that must not change is watched.
	holdWindow = 3 * time.Second
)

// logsEnv, when set, sends the manager's logs to stderr.
const logsEnv = "EDS_TEST_LOGS"

// nodeLabel carries, on every node a test creates, the test's namespace;
// each test's templates select on it, so tests never see each other's nodes.
const nodeLabel = "controllers-test.extendeddaemonset.io/suite"

// k8s reads and writes straight to the API server, around the manager's cache.
var k8s client.Client

// adminConfig is the admin's connection to the API server.
var adminConfig *rest.Config

func TestMain(m *testing.M) {
	if testenv.Short() {
		os.Exit(m.Run())
	}
	os.Exit(testenv.Run(func(env *envtest.Environment, c client.Client) int {
		k8s, adminConfig = c, env.Config
		return runWithControllers(m, env.Config)
	}))
}

// runWithControllers runs the tests with the reconcilers started against
// cfg, wired as cmd/manager wires them.
func runWithControllers(m *testing.M, cfg *rest.Config) int {
	sink := io.Discard
	if os.Getenv(logsEnv) != "" {
		sink = os.Stderr
	}
	mgr, err := testenv.StartManager(context.Background(), cfg, testenv.Wiring{
		Cache:   CacheOptions(),
		Client:  ClientOptions(),
		Metrics: MetricsServerOptions("0", false),
		Setup: func(ctx context.Context, mgr ctrl.Manager) error {
			return Setup(ctx, mgr, Options{})
		},
	}, zap.New(zap.WriteTo(sink), zap.UseDevMode(true)))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	code := m.Run()
	if err := mgr.Stop(); err != nil {
		fmt.Fprintf(os.Stderr, "manager: %v\n", err)
		code = max(code, 1)
	}
	return code
}

// scenario is one test in a namespace of its own, with nodes of its own.
type scenario struct {
	t   *testing.T
	g   *gomega.WithT
	ctx context.Context
	ns  string
}

var unsafeNameChars = regexp.MustCompile(`[^a-z0-9-]+`)

// newScenario creates the test's namespace. At the end the test's
// ExtendedDaemonSets, replica sets and pods are deleted (no garbage collector
// would), then its nodes. The namespace stays: no namespace controller runs
// to finalize it.
func newScenario(t *testing.T) *scenario {
	t.Helper()
	testenv.RequireAssets(t)
	name := strings.Trim(unsafeNameChars.ReplaceAllString(strings.ToLower(strings.TrimPrefix(t.Name(), "Test")), "-"), "-")
	s := &scenario{
		t: t, g: gomega.NewWithT(t), ctx: t.Context(),
		ns: name[:min(len(name), 40)] + "-" + utilrand.String(5),
	}
	s.g.SetDefaultEventuallyTimeout(eventually)
	s.g.SetDefaultEventuallyPollingInterval(polling)
	s.g.SetDefaultConsistentlyDuration(holdWindow)
	s.g.SetDefaultConsistentlyPollingInterval(polling)
	s.g.Expect(k8s.Create(s.ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: s.ns}})).To(gomega.Succeed())
	t.Cleanup(s.cleanup)
	return s
}

func (s *scenario) cleanup() {
	ctx := context.Background()
	ns := client.InNamespace(s.ns)
	for _, obj := range []client.Object{&v1alpha1.ExtendedDaemonSet{}, &v1alpha1.ExtendedDaemonSetReplicaSet{}} {
		if err := k8s.DeleteAllOf(ctx, obj, ns); err != nil {
			s.t.Logf("cleanup: %v", err)
		}
	}
	if err := k8s.DeleteAllOf(ctx, &corev1.Pod{}, ns, client.GracePeriodSeconds(0)); err != nil {
		s.t.Logf("cleanup: %v", err)
	}
	if err := k8s.DeleteAllOf(ctx, &corev1.Node{}, client.MatchingLabels{nodeLabel: s.ns}); err != nil {
		s.t.Logf("cleanup: %v", err)
	}
}

// createNode creates a Ready node carrying the scenario's label plus
// labels, with exactly the given taints. The API server's
// TaintNodesByCondition admission gives new nodes a not-ready taint that
// only the node lifecycle controller would remove; the node is updated to
// drop it, as that controller would once the node reports Ready.
func (s *scenario) createNode(name string, labels map[string]string, taints ...corev1.Taint) *corev1.Node {
	s.t.Helper()
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: s.ns + "-" + name, Labels: map[string]string{nodeLabel: s.ns}}}
	for k, v := range labels {
		node.Labels[k] = v
	}
	s.g.Expect(k8s.Create(s.ctx, node)).To(gomega.Succeed())
	node.Status.Conditions = []corev1.NodeCondition{{
		Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady",
		LastHeartbeatTime: metav1.Now(), LastTransitionTime: metav1.Now(),
	}}
	s.g.Expect(k8s.Status().Update(s.ctx, node)).To(gomega.Succeed())
	s.updateNode(node.Name, func(n *corev1.Node) { n.Spec.Taints = taints })
	return node
}

// updateNode changes a node, retrying on conflicts.
func (s *scenario) updateNode(name string, change func(*corev1.Node)) {
	s.t.Helper()
	s.g.Expect(retry.RetryOnConflict(retry.DefaultRetry, func() error {
		node := &corev1.Node{}
		if err := k8s.Get(s.ctx, client.ObjectKey{Name: name}, node); err != nil {
			return err
		}
		change(node)
		return k8s.Update(s.ctx, node)
	})).To(gomega.Succeed())
}

// newEDS returns an ExtendedDaemonSet whose pods go on the scenario's nodes.
func (s *scenario) newEDS(name, image string) *v1alpha1.ExtendedDaemonSet {
	return &v1alpha1.ExtendedDaemonSet{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: s.ns},
		Spec: v1alpha1.ExtendedDaemonSetSpec{
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": name}},
				Spec: corev1.PodSpec{
					NodeSelector: map[string]string{nodeLabel: s.ns},
					Containers:   []corev1.Container{{Name: "agent", Image: image}},
				},
			},
		},
	}
}

// create creates obj in the scenario's namespace.
func (s *scenario) create(obj client.Object) {
	s.t.Helper()
	obj.SetNamespace(s.ns)
	s.g.Expect(k8s.Create(s.ctx, obj)).To(gomega.Succeed())
}

// setImage changes the image of the ExtendedDaemonSet's container: a new
// pod template.
func (s *scenario) setImage(eds *v1alpha1.ExtendedDaemonSet, image string) {
	s.t.Helper()
	s.updateEDS(eds, func(e *v1alpha1.ExtendedDaemonSet) { e.Spec.Template.Spec.Containers[0].Image = image })
}

// updateEDS changes the spec of an ExtendedDaemonSet and refreshes eds.
func (s *scenario) updateEDS(eds *v1alpha1.ExtendedDaemonSet, change func(*v1alpha1.ExtendedDaemonSet)) {
	s.t.Helper()
	s.g.Expect(retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := k8s.Get(s.ctx, client.ObjectKeyFromObject(eds), eds); err != nil {
			return err
		}
		change(eds)
		return k8s.Update(s.ctx, eds)
	})).To(gomega.Succeed())
}

// getEDS reads an ExtendedDaemonSet from the API server.
func (s *scenario) getEDS(g gomega.Gomega, name string) *v1alpha1.ExtendedDaemonSet {
	eds := &v1alpha1.ExtendedDaemonSet{}
	g.Expect(k8s.Get(s.ctx, client.ObjectKey{Namespace: s.ns, Name: name}, eds)).To(gomega.Succeed())
	return eds
}

// getERS reads a replica set from the API server.
func (s *scenario) getERS(g gomega.Gomega, name string) *v1alpha1.ExtendedDaemonSetReplicaSet {
	ers := &v1alpha1.ExtendedDaemonSetReplicaSet{}
	g.Expect(k8s.Get(s.ctx, client.ObjectKey{Namespace: s.ns, Name: name}, ers)).To(gomega.Succeed())
	return ers
}

// replicaSets lists the replica sets of an ExtendedDaemonSet, oldest first.
func (s *scenario) replicaSets(g gomega.Gomega, eds string) []v1alpha1.ExtendedDaemonSetReplicaSet {
	var list v1alpha1.ExtendedDaemonSetReplicaSetList
	g.Expect(k8s.List(s.ctx, &list, client.InNamespace(s.ns),
		client.MatchingLabels{v1alpha1.ExtendedDaemonSetNameLabel: eds})).To(gomega.Succeed())
	slices.SortFunc(list.Items, func(a, b v1alpha1.ExtendedDaemonSetReplicaSet) int { return olderFirst(&a, &b) })
	return list.Items
}

// activeReplicaSet waits for the ExtendedDaemonSet to name an active replica
// set other than all of not, and returns its name.
func (s *scenario) activeReplicaSet(name string, not ...string) string {
	s.t.Helper()
	var active string
	s.g.Eventually(func(g gomega.Gomega) {
		active = s.getEDS(g, name).Status.ActiveReplicaSet
		g.Expect(active).NotTo(gomega.BeEmpty())
		g.Expect(not).NotTo(gomega.ContainElement(active))
	}).Should(gomega.Succeed())
	return active
}

// pods lists the scenario's pods that select applies to (all when nil),
// live or terminating.
func (s *scenario) pods(g gomega.Gomega, selector map[string]string) []corev1.Pod {
	var list corev1.PodList
	g.Expect(k8s.List(s.ctx, &list, client.InNamespace(s.ns), client.MatchingLabels(selector))).To(gomega.Succeed())
	return list.Items
}

// podsOf lists the pods of a replica set.
func (s *scenario) podsOf(g gomega.Gomega, ers string) []corev1.Pod {
	return s.pods(g, map[string]string{v1alpha1.ExtendedDaemonSetReplicaSetNameLabel: ers})
}

// podsByNode indexes pods by the node they are bound or pinned to.
func podsByNode(pods []corev1.Pod) map[string][]corev1.Pod {
	out := map[string][]corev1.Pod{}
	for _, p := range pods {
		node := placement.TargetNode(&p)
		out[node] = append(out[node], p)
	}
	return out
}

// nodeNames returns the names of nodes.
func nodeNames(nodes ...*corev1.Node) []string {
	out := make([]string, len(nodes))
	for i, n := range nodes {
		out[i] = n.Name
	}
	return out
}

// waitForPods waits until the replica set has exactly one live pod on each
// of nodes and no pod elsewhere, and returns them by node.
func (s *scenario) waitForPods(ers string, nodes ...string) map[string]corev1.Pod {
	s.t.Helper()
	out := map[string]corev1.Pod{}
	s.g.Eventually(func(g gomega.Gomega) {
		byNode := podsByNode(s.podsOf(g, ers))
		g.Expect(byNode).To(gomega.HaveLen(len(nodes)))
		for _, n := range nodes {
			g.Expect(byNode[n]).To(gomega.HaveLen(1), "pods on node %s", n)
			g.Expect(byNode[n][0].DeletionTimestamp).To(gomega.BeNil(), "pod on node %s", n)
			out[n] = byNode[n][0]
		}
	}).Should(gomega.Succeed())
	return out
}

// runPod does what the scheduler and the kubelet would: binds the pod to
// the node its affinity names, then reports it Running and Ready.
func (s *scenario) runPod(pod *corev1.Pod) {
	s.t.Helper()
	node := placement.TargetNode(pod)
	s.g.Expect(node).NotTo(gomega.BeEmpty(), "pod %s names no node", pod.Name)
	if pod.Spec.NodeName == "" {
		binding := &corev1.Binding{
			ObjectMeta: metav1.ObjectMeta{Name: pod.Name, Namespace: pod.Namespace},
			Target:     corev1.ObjectReference{Kind: "Node", Name: node},
		}
		s.g.Expect(k8s.SubResource("binding").Create(s.ctx, pod, binding)).To(gomega.Succeed())
	}
	s.setPodStatus(pod.Name, func(st *corev1.PodStatus) {
		now := metav1.Now()
		st.Phase = corev1.PodRunning
		st.StartTime = &now
		st.Conditions = []corev1.PodCondition{
			{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: now},
			{Type: corev1.PodInitialized, Status: corev1.ConditionTrue, LastTransitionTime: now},
			{Type: corev1.ContainersReady, Status: corev1.ConditionTrue, LastTransitionTime: now},
			{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: now},
		}
	})
}

// setPodStatus changes the status of a pod, as a kubelet would.
func (s *scenario) setPodStatus(name string, change func(*corev1.PodStatus)) {
	s.t.Helper()
	s.g.Expect(retry.RetryOnConflict(retry.DefaultRetry, func() error {
		pod := &corev1.Pod{}
		if err := k8s.Get(s.ctx, client.ObjectKey{Namespace: s.ns, Name: name}, pod); err != nil {
			return err
		}
		change(&pod.Status)
		return k8s.Status().Update(s.ctx, pod)
	})).To(gomega.Succeed())
}

// finishDeletion removes a terminating pod, as the kubelet would once its
// containers stopped.
func (s *scenario) finishDeletion(pod *corev1.Pod) {
	s.t.Helper()
	err := k8s.Delete(s.ctx, pod, client.GracePeriodSeconds(0))
	s.g.Expect(client.IgnoreNotFound(err)).To(gomega.Succeed())
	s.g.Eventually(func() bool {
		return apierrors.IsNotFound(k8s.Get(s.ctx, client.ObjectKeyFromObject(pod), &corev1.Pod{}))
	}).Should(gomega.BeTrue(), "pod %s still exists", pod.Name)
}

// gone reports whether a pod was deleted or is being deleted.
func (s *scenario) gone(g gomega.Gomega, pod *corev1.Pod) bool {
	live := &corev1.Pod{}
	err := k8s.Get(s.ctx, client.ObjectKeyFromObject(pod), live)
	if apierrors.IsNotFound(err) {
		return true
	}
	g.Expect(err).NotTo(gomega.HaveOccurred())
	return live.UID != pod.UID || live.DeletionTimestamp != nil
}

// createRolledOut creates eds, runs its first replica set's pod on each of
// nodes as the scheduler and kubelet would, waits until it is rolled out,
// and returns the replica set and its pods by node.
func (s *scenario) createRolledOut(eds *v1alpha1.ExtendedDaemonSet, nodes ...*corev1.Node) (string, map[string]corev1.Pod) {
	s.t.Helper()
	s.create(eds)
	first := s.activeReplicaSet(eds.Name)
	pods := s.waitForPods(first, nodeNames(nodes...)...)
	for _, pod := range pods {
		s.runPod(&pod)
	}
	s.g.Eventually(func(g gomega.Gomega) { expectRolledOut(g, s.getEDS(g, eds.Name)) }).Should(gomega.Succeed())
	return first, pods
}
