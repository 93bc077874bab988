package invariants

import (
	"fmt"
	"testing"
	"time"

	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
)

// fleet drives a Checker through a scripted story on nodes node-0..n-1,
// one ExtendedDaemonSet "agent" with one Ready pod of replica set "v1" on
// each, the clock moving a second per step.
type fleet struct {
	t   *testing.T
	c   *Checker
	now time.Time
	eds *v1alpha1.ExtendedDaemonSet
	// pods by node, the latest version shown to the checker.
	pods map[string][]*corev1.Pod
	seq  int
}

func newFleet(t *testing.T, nodes int, maxUnavailable, maxSurge intstr.IntOrString) *fleet {
	f := &fleet{t: t, c: NewChecker(ControllerFieldManager), now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), pods: map[string][]*corev1.Pod{}}
	f.eds = &v1alpha1.ExtendedDaemonSet{ObjectMeta: metav1.ObjectMeta{Name: "agent", Generation: 1}}
	f.eds.Spec.Strategy.RollingUpdate.MaxUnavailable = &maxUnavailable
	f.eds.Spec.Strategy.RollingUpdate.MaxSurge = &maxSurge
	f.eds.Status.ActiveReplicaSet = "v1"
	f.eds.Status.ObservedGeneration = 1
	f.eds.Status.Conditions = []metav1.Condition{{Type: v1alpha1.ReadyCondition, Status: metav1.ConditionTrue, Reason: v1alpha1.ReasonRolledOut}}
	f.c.ExtendedDaemonSet(f.eds.DeepCopy(), false, f.now)
	for i := range nodes {
		f.c.Node(readyNode(fmt.Sprintf("node-%d", i)), false, f.now)
		f.create(fmt.Sprintf("node-%d", i), "v1", true)
	}
	f.c.Synced()
	return f
}

func readyNode(name string) *corev1.Node {
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Status:     corev1.NodeStatus{Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}},
	}
}

func (f *fleet) step() time.Time {
	f.now = f.now.Add(time.Second)
	f.c.Tick(f.now)
	return f.now
}

// create adds a pod of replicaSet on node.
func (f *fleet) create(node, replicaSet string, ready bool) *corev1.Pod {
	f.seq++
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{
		Name: fmt.Sprintf("agent-%d", f.seq), UID: types.UID(fmt.Sprint(f.seq)),
		Labels: map[string]string{v1alpha1.ExtendedDaemonSetNameLabel: "agent", v1alpha1.ExtendedDaemonSetReplicaSetNameLabel: replicaSet},
	}, Spec: corev1.PodSpec{NodeName: node}}
	setReady(pod, ready)
	f.pods[node] = append(f.pods[node], pod)
	f.c.Pod(pod.DeepCopy(), false, f.step())
	return pod
}

func setReady(pod *corev1.Pod, ready bool) {
	status := corev1.ConditionFalse
	if ready {
		status = corev1.ConditionTrue
	}
	pod.Status = corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: status}}}
}

// remove deletes the first pod on node, gracefully: terminating, then gone.
func (f *fleet) remove(node string) {
	pod := f.pods[node][0]
	f.pods[node] = f.pods[node][1:]
	pod.DeletionTimestamp = ptr.To(metav1.NewTime(f.now))
	f.c.Pod(pod.DeepCopy(), false, f.step())
	f.c.Pod(pod.DeepCopy(), true, f.step())
}

// fail turns the first pod on node unready, as a crashing agent would.
func (f *fleet) fail(node string) {
	setReady(f.pods[node][0], false)
	f.c.Pod(f.pods[node][0].DeepCopy(), false, f.step())
}

func (f *fleet) writeStatus(mutate func(*v1alpha1.ExtendedDaemonSetStatus)) {
	mutate(&f.eds.Status)
	f.c.ExtendedDaemonSet(f.eds.DeepCopy(), false, f.step())
}

// settle lets every suspect's grace pass.
func (f *fleet) settle() []Violation {
	for range 3 {
		f.step()
	}
	return f.c.Violations()
}

func rules(vs []Violation) []Rule {
	out := make([]Rule, 0, len(vs))
	for _, v := range vs {
		out = append(out, v.Rule)
	}
	return out
}

func TestUnavailableBeyondTheBudgetIsCaught(t *testing.T) {
	g := gomega.NewWithT(t)
	f := newFleet(t, 4, intstr.FromInt32(1), intstr.FromInt32(0))
	f.remove("node-0")
	g.Expect(f.settle()).To(gomega.BeEmpty(), "one node down is the budget")
	f.remove("node-1")
	g.Expect(rules(f.settle())).To(gomega.Equal([]Rule{Unavailable}))
	g.Expect(f.c.Violations()[0].Message).To(gomega.ContainSubstring("2 nodes without an available agent (node-0, node-1), maxUnavailable allows 1 of 4"))
}

func TestPercentBudgetRoundsUpAgainstTheNodes(t *testing.T) {
	g := gomega.NewWithT(t)
	f := newFleet(t, 10, intstr.FromString("15%"), intstr.FromInt32(0))
	f.remove("node-0")
	f.remove("node-1")
	g.Expect(f.settle()).To(gomega.BeEmpty(), "15% of 10 rounds up to 2")
	f.remove("node-2")
	g.Expect(rules(f.settle())).To(gomega.Equal([]Rule{Unavailable}))
}

// Agents that fail on their own are not the rollout's doing, and the
// rollout may replace them; but it must take down no healthy one while
// they exceed the budget.
func TestAgentsFailingAloneAreNotTheRollouts(t *testing.T) {
	g := gomega.NewWithT(t)
	f := newFleet(t, 4, intstr.FromInt32(1), intstr.FromInt32(0))
	f.fail("node-0")
	f.fail("node-1")
	f.remove("node-0")
	f.create("node-0", "v2", false)
	g.Expect(f.settle()).To(gomega.BeEmpty(), "replacing an agent already down spends nothing")
	f.remove("node-2")
	g.Expect(rules(f.settle())).To(gomega.Equal([]Rule{Unavailable}))
}

// A node that goes away, or stops matching, takes its pod with it; the
// watch of nodes may tell it after the pod's deletion.
func TestNodesLeavingAreNotOutages(t *testing.T) {
	g := gomega.NewWithT(t)
	f := newFleet(t, 4, intstr.FromInt32(1), intstr.FromInt32(0))
	f.remove("node-0")
	f.remove("node-1")
	f.c.Node(readyNode("node-1"), true, f.now)
	notReady := readyNode("node-0")
	notReady.Status.Conditions[0].Status = corev1.ConditionUnknown
	f.c.Node(notReady, false, f.now)
	g.Expect(f.settle()).To(gomega.BeEmpty())
}

func TestNewPodsAreNotOutages(t *testing.T) {
	g := gomega.NewWithT(t)
	f := newFleet(t, 0, intstr.FromInt32(1), intstr.FromInt32(0))
	for i := range 5 {
		f.c.Node(readyNode(fmt.Sprintf("node-%d", i)), false, f.now)
	}
	for i := range 5 {
		f.create(fmt.Sprintf("node-%d", i), "v1", false)
	}
	g.Expect(f.settle()).To(gomega.BeEmpty(), "nodes that never had an agent lose none")
	g.Expect(f.c.PodsCreated()).To(gomega.HaveLen(5))
}

func TestSecondPodOnANodeIsCaught(t *testing.T) {
	g := gomega.NewWithT(t)
	f := newFleet(t, 3, intstr.FromInt32(1), intstr.FromInt32(0))
	f.create("node-0", "v2", false)
	g.Expect(rules(f.settle())).To(gomega.Equal([]Rule{TwoPods}))
	g.Expect(f.c.Violations()[0].Message).To(gomega.ContainSubstring("2 pods on node node-0 and maxSurge allows none"))
	g.Expect(f.c.PodsCreated()).To(gomega.Equal(map[string]int{"node-0/v2": 1}))
}

func TestSurgeBeyondMaxSurgeIsCaught(t *testing.T) {
	g := gomega.NewWithT(t)
	f := newFleet(t, 3, intstr.FromInt32(0), intstr.FromInt32(1))
	f.create("node-0", "v2", true)
	f.remove("node-0")
	f.create("node-1", "v2", true)
	g.Expect(f.settle()).To(gomega.BeEmpty(), "one surging node at a time")
	f.create("node-2", "v2", false)
	g.Expect(rules(f.settle())).To(gomega.Equal([]Rule{TwoPods}))
	g.Expect(f.c.Violations()[0].Message).To(gomega.ContainSubstring("2 nodes with two pods, maxSurge allows 1"))
}

func TestSpecWrittenByTheControllerIsCaught(t *testing.T) {
	g := gomega.NewWithT(t)
	f := newFleet(t, 1, intstr.FromInt32(1), intstr.FromInt32(0))
	entry := func(manager, subresource, fields string) metav1.ManagedFieldsEntry {
		return metav1.ManagedFieldsEntry{Manager: manager, Operation: metav1.ManagedFieldsOperationUpdate, Subresource: subresource,
			FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(fields)}
	}
	f.eds.ManagedFields = []metav1.ManagedFieldsEntry{
		entry("kubectl", "", `{"f:spec":{"f:template":{}}}`),
		entry(ControllerFieldManager, "status", `{"f:status":{"f:activeReplicaSet":{}}}`),
	}
	f.writeStatus(func(*v1alpha1.ExtendedDaemonSetStatus) {})
	g.Expect(f.settle()).To(gomega.BeEmpty(), "the user owns the spec, the controller the status")
	f.eds.Generation++
	f.eds.ManagedFields = append(f.eds.ManagedFields, entry(ControllerFieldManager, "", `{"f:spec":{"f:minReadySeconds":{}}}`))
	f.writeStatus(func(*v1alpha1.ExtendedDaemonSetStatus) {})
	g.Expect(rules(f.settle())).To(gomega.Equal([]Rule{SpecWritten}))
}

func TestFailedTemplateOffItsCanaryNodesIsCaught(t *testing.T) {
	g := gomega.NewWithT(t)
	f := canaryFleet(t, false)
	f.remove("node-0")
	f.create("node-0", "v2", true)
	f.writeStatus(func(st *v1alpha1.ExtendedDaemonSetStatus) { st.Canary.Failed = true })
	g.Expect(f.settle()).To(gomega.BeEmpty(), "the failed template may stay on its canary node until replaced")
	f.remove("node-1")
	f.create("node-1", "v2", true)
	g.Expect(rules(f.settle())).To(gomega.ContainElement(FailedTemplate))
	g.Expect(f.c.Violations()).To(gomega.ContainElement(gomega.HaveField("Message", gomega.ContainSubstring("of failed template v2 on node-1"))))
}

// The controller cannot know of an agent that failed a moment before it
// took another one down: its view lags the API server's.
func TestAgentFailingAsTheRolloutActsIsNotHeldAgainstIt(t *testing.T) {
	g := gomega.NewWithT(t)
	f := newFleet(t, 4, intstr.FromInt32(1), intstr.FromInt32(0))
	f.c.ReactionTime = 1500 * time.Millisecond
	f.fail("node-0")
	f.remove("node-1")
	g.Expect(f.settle()).To(gomega.BeEmpty())
	f.create("node-1", "v2", true)
	f.remove("node-2")
	g.Expect(rules(f.settle())).To(gomega.Equal([]Rule{Unavailable}), "by now it has seen node-0 fail")
	g.Expect(f.c.Violations()[0].Message).To(gomega.ContainSubstring("(node-0, node-2)"))
}
