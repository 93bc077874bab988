package controllers

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fluxcd/pkg/runtime/conditions"
	"github.com/onsi/gomega"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
)

const (
	imageV1 = "registry.k8s.io/pause:3.9"
	imageV2 = "registry.k8s.io/pause:3.10"
	imageV3 = "registry.k8s.io/pause:3.10.1"
)

func TestCreatingAnExtendedDaemonSetCreatesOneReplicaSet(t *testing.T) {
	s := newScenario(t)
	node := s.createNode("a", nil)
	eds := s.newEDS("agent", imageV1)
	s.create(eds)

	var ers v1alpha1.ExtendedDaemonSetReplicaSet
	s.g.Eventually(func(g gomega.Gomega) {
		sets := s.replicaSets(g, eds.Name)
		g.Expect(sets).To(gomega.HaveLen(1))
		ers = sets[0]
	}).Should(gomega.Succeed())
	s.g.Consistently(func(g gomega.Gomega) {
		g.Expect(s.replicaSets(g, eds.Name)).To(gomega.HaveLen(1))
	}).Should(gomega.Succeed(), "a second replica set was created for the same template")

	s.g.Expect(ers.GenerateName).To(gomega.Equal(eds.Name + "-"))
	s.g.Expect(ers.Name).To(gomega.HavePrefix(eds.Name + "-"))
	owner := metav1.GetControllerOf(&ers)
	s.g.Expect(owner).NotTo(gomega.BeNil(), "the replica set has no controller owner reference")
	s.g.Expect(*owner).To(gomega.Equal(metav1.OwnerReference{
		APIVersion: v1alpha1.GroupVersion.String(), Kind: "ExtendedDaemonSet", Name: eds.Name, UID: eds.UID,
		Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true),
	}))
	hash := ers.Annotations[v1alpha1.TemplateHashAnnotation]
	s.g.Expect(hash).NotTo(gomega.BeEmpty())
	s.g.Expect(ers.Labels).To(gomega.HaveKeyWithValue(v1alpha1.ExtendedDaemonSetNameLabel, eds.Name))
	s.g.Expect(ers.Labels).To(gomega.HaveKeyWithValue(v1alpha1.TemplateHashLabel, hash))
	s.g.Expect(ers.Spec.TemplateGeneration).To(gomega.Equal(hash))
	stored := s.getEDS(s.g, eds.Name)
	s.g.Expect(equality.Semantic.DeepEqual(ers.Spec.Template, stored.Spec.Template)).To(gomega.BeTrue(),
		"replica set template %+v differs from the ExtendedDaemonSet's %+v", ers.Spec.Template, stored.Spec.Template)
	s.g.Expect(ers.Spec.Selector).To(gomega.Equal(&v1alpha1.LabelSelector{MatchLabels: stored.Spec.Template.Labels}),
		"without a selector, the template labels select the pods")

	s.g.Expect(s.activeReplicaSet(eds.Name)).To(gomega.Equal(ers.Name))

	s.g.Eventually(func(g gomega.Gomega) {
		var events eventsv1.EventList
		g.Expect(k8s.List(s.ctx, &events, client.InNamespace(s.ns))).To(gomega.Succeed())
		g.Expect(events.Items).To(gomega.ContainElement(gomega.Satisfy(func(e eventsv1.Event) bool {
			return e.Reason == "ReplicaSetCreated" && e.Type == corev1.EventTypeNormal &&
				e.Regarding.Kind == "ExtendedDaemonSet" && e.Regarding.Name == eds.Name && e.Regarding.UID == eds.UID &&
				e.Related != nil && e.Related.Name == ers.Name &&
				e.ReportingController == ControllerName && strings.Contains(e.Note, hash)
		})), "no ReplicaSetCreated event (events.k8s.io/v1) for %s", ers.Name)
	}).Should(gomega.Succeed())

	s.waitForPods(ers.Name, node.Name)
}

func TestStatusReportsRolloutProgress(t *testing.T) {
	s := newScenario(t)
	nodes := []*corev1.Node{s.createNode("a", nil), s.createNode("b", nil)}
	eds := s.newEDS("agent", imageV1)
	s.create(eds)
	ers := s.activeReplicaSet(eds.Name)
	pods := s.waitForPods(ers, nodeNames(nodes...)...)

	// Pods exist but none is running: in progress.
	s.g.Eventually(func(g gomega.Gomega) {
		rs := s.getERS(g, ers)
		g.Expect(rs.Status.Status).To(gomega.Equal(v1alpha1.ReplicaSetActive))
		g.Expect(rs.Status.ObservedGeneration).To(gomega.Equal(rs.Generation))
		g.Expect(rs.Status.Desired).To(gomega.BeEquivalentTo(2))
		g.Expect(rs.Status.Current).To(gomega.BeEquivalentTo(2))
		g.Expect(rs.Status.Ready).To(gomega.BeEquivalentTo(0))
		expectInProgress(g, rs)

		e := s.getEDS(g, eds.Name)
		g.Expect(e.Status.ObservedGeneration).To(gomega.Equal(e.Generation))
		g.Expect(e.Status.Desired).To(gomega.BeEquivalentTo(2))
		g.Expect(e.Status.Current).To(gomega.BeEquivalentTo(2))
		g.Expect(e.Status.Available).To(gomega.BeEquivalentTo(0))
		expectInProgress(g, e)
		g.Expect(e.Status.State).To(gomega.Equal(v1alpha1.StateRollingUpdate))
	}).Should(gomega.Succeed())

	for _, pod := range pods {
		s.runPod(&pod)
	}
	s.g.Eventually(func(g gomega.Gomega) {
		rs := s.getERS(g, ers)
		g.Expect(rs.Status.Status).To(gomega.Equal(v1alpha1.ReplicaSetActive))
		g.Expect(rs.Status.ActiveSince).NotTo(gomega.BeNil())
		g.Expect(rs.Status.ObservedGeneration).To(gomega.Equal(rs.Generation))
		g.Expect(counters(rs.Status.Desired, rs.Status.Current, rs.Status.Ready, rs.Status.Available, rs.Status.UpToDate)).
			To(gomega.Equal(counters(2, 2, 2, 2, 2)))
		expectRolledOut(g, rs)

		e := s.getEDS(g, eds.Name)
		g.Expect(e.Status.ObservedGeneration).To(gomega.Equal(e.Generation))
		g.Expect(e.Status.ActiveReplicaSet).To(gomega.Equal(ers))
		g.Expect(counters(e.Status.Desired, e.Status.Current, e.Status.Ready, e.Status.Available, e.Status.UpToDate)).
			To(gomega.Equal(counters(2, 2, 2, 2, 2)))
		expectRolledOut(g, e)
		g.Expect(e.Status.State).To(gomega.Equal(v1alpha1.StateRunning))
	}).Should(gomega.Succeed())
}

func TestTemplateChangeReplacesPodsAtMostMaxUnavailableAtATime(t *testing.T) {
	s := newScenario(t)
	nodes := []*corev1.Node{s.createNode("a", nil), s.createNode("b", nil), s.createNode("c", nil)}
	eds := s.newEDS("agent", imageV1)
	eds.Spec.Strategy.RollingUpdate.MaxUnavailable = ptr.To(intstr.FromInt32(1))
	first, _ := s.createRolledOut(eds, nodes...)

	s.setImage(eds, imageV2)
	second := s.activeReplicaSet(eds.Name, first)
	s.g.Eventually(func(g gomega.Gomega) {
		g.Expect(s.replicaSets(g, eds.Name)).To(gomega.HaveLen(2))
		old := s.getERS(g, first)
		g.Expect(old.Status.Status).To(gomega.Equal(v1alpha1.ReplicaSetUnknown))
		g.Expect(conditions.IsFalse(old, v1alpha1.ReadyCondition)).To(gomega.BeTrue(), "old replica set conditions: %v", old.Status.Conditions)
		g.Expect(conditions.GetReason(old, v1alpha1.ReadyCondition)).To(gomega.Equal(v1alpha1.ReasonInactive))
		g.Expect(conditions.Has(old, v1alpha1.ReconcilingCondition)).To(gomega.BeFalse())
		g.Expect(conditions.Has(old, v1alpha1.StalledCondition)).To(gomega.BeFalse())
	}).Should(gomega.Succeed())

	remaining := nodeNames(nodes...)
	for len(remaining) > 0 {
		// Exactly one old pod is deleted...
		var victim corev1.Pod
		s.g.Eventually(func(g gomega.Gomega) {
			terminating := terminatingPods(s.podsOf(g, first))
			g.Expect(terminating).To(gomega.HaveLen(1))
			victim = terminating[0]
		}).Should(gomega.Succeed())
		node := victim.Spec.NodeName
		g := s.g
		g.Expect(remaining).To(gomega.ContainElement(node), "pod %s of an already replaced node deleted", victim.Name)
		for _, p := range s.podsOf(g, second) {
			g.Expect(p.Status.Phase).To(gomega.Equal(corev1.PodRunning), "an old pod was deleted while new pod %s was not ready yet", p.Name)
		}
		// ... and, while it terminates, neither another old pod is deleted
		// nor is a new pod put beside it.
		s.g.Consistently(func(g gomega.Gomega) {
			g.Expect(terminatingPods(s.podsOf(g, first))).To(gomega.HaveLen(1))
			g.Expect(podsByNode(s.podsOf(g, second))).NotTo(gomega.HaveKey(node))
		}).Should(gomega.Succeed())
		s.g.Eventually(func(g gomega.Gomega) {
			e := s.getEDS(g, eds.Name)
			g.Expect(conditions.IsFalse(e, v1alpha1.ReadyCondition)).To(gomega.BeTrue())
			g.Expect(conditions.IsTrue(e, v1alpha1.ReconcilingCondition)).To(gomega.BeTrue())
		}).Should(gomega.Succeed())

		// The kubelet finishes the deletion; the new pod comes, and until it
		// is ready no other old pod goes.
		s.finishDeletion(&victim)
		var replacement corev1.Pod
		s.g.Eventually(func(g gomega.Gomega) {
			onNode := podsByNode(s.podsOf(g, second))[node]
			g.Expect(onNode).To(gomega.HaveLen(1))
			replacement = onNode[0]
		}).Should(gomega.Succeed())
		s.g.Consistently(func(g gomega.Gomega) {
			g.Expect(terminatingPods(s.podsOf(g, first))).To(gomega.BeEmpty())
			g.Expect(s.podsOf(g, first)).To(gomega.HaveLen(len(remaining) - 1))
		}).Should(gomega.Succeed(), "an old pod was deleted while the new pod on %s was not ready", node)
		s.runPod(&replacement)
		remaining = removeString(remaining, node)
	}

	s.waitForPods(second, nodeNames(nodes...)...)
	s.g.Eventually(func(g gomega.Gomega) {
		g.Expect(s.podsOf(g, first)).To(gomega.BeEmpty())
		e := s.getEDS(g, eds.Name)
		g.Expect(e.Status.ActiveReplicaSet).To(gomega.Equal(second))
		g.Expect(e.Status.ObservedGeneration).To(gomega.Equal(e.Generation))
		g.Expect(counters(e.Status.Desired, e.Status.Current, e.Status.Ready, e.Status.Available, e.Status.UpToDate)).
			To(gomega.Equal(counters(3, 3, 3, 3, 3)))
		expectRolledOut(g, e)
		old := s.getERS(g, first)
		g.Expect(old.Status.Current).To(gomega.BeEquivalentTo(0))
		g.Expect(old.Status.Status).To(gomega.Equal(v1alpha1.ReplicaSetUnknown))
	}).Should(gomega.Succeed())
}

func TestHistoryLimitZeroDeletesReplicaSetsOnceTheirPodsAreGone(t *testing.T) {
	s := newScenario(t)
	node := s.createNode("a", nil)
	eds := s.newEDS("agent", imageV1)
	eds.Spec.RevisionHistoryLimit = ptr.To[int32](0)
	s.create(eds)
	first := s.activeReplicaSet(eds.Name)
	firstHash := s.getERS(s.g, first).Annotations[v1alpha1.TemplateHashAnnotation]
	pod := s.waitForPods(first, node.Name)[node.Name]
	s.runPod(&pod)

	s.setImage(eds, imageV2)
	second := s.activeReplicaSet(eds.Name, first)
	// The old pod terminates: its replica set still owns it and stays.
	s.g.Eventually(func(g gomega.Gomega) {
		g.Expect(terminatingPods(s.podsOf(g, first))).To(gomega.HaveLen(1))
	}).Should(gomega.Succeed())
	s.g.Consistently(func(g gomega.Gomega) {
		g.Expect(names(s.replicaSets(g, eds.Name))).To(gomega.ConsistOf(first, second))
	}).Should(gomega.Succeed(), "a replica set that still owns a pod was deleted")

	s.finishDeletion(&pod)
	s.g.Eventually(func(g gomega.Gomega) {
		g.Expect(names(s.replicaSets(g, eds.Name))).To(gomega.ConsistOf(second))
	}).Should(gomega.Succeed())

	// Going back to the first template needs a new replica set: the old one
	// is gone.
	pod = s.waitForPods(second, node.Name)[node.Name]
	s.setImage(eds, imageV1)
	third := s.activeReplicaSet(eds.Name, second)
	s.g.Expect(third).NotTo(gomega.Equal(first))
	s.g.Expect(s.getERS(s.g, third).Annotations).To(gomega.HaveKeyWithValue(v1alpha1.TemplateHashAnnotation, firstHash))
	s.g.Eventually(func(g gomega.Gomega) {
		g.Expect(s.gone(g, &pod)).To(gomega.BeTrue())
	}).Should(gomega.Succeed())
	s.finishDeletion(&pod)
	s.g.Eventually(func(g gomega.Gomega) {
		g.Expect(names(s.replicaSets(g, eds.Name))).To(gomega.ConsistOf(third))
	}).Should(gomega.Succeed())
	s.waitForPods(third, node.Name)
}

func TestHistoryLimitOneKeepsTheLastReplicaSetForRevert(t *testing.T) {
	s := newScenario(t)
	node := s.createNode("a", nil)
	eds := s.newEDS("agent", imageV1)
	eds.Spec.RevisionHistoryLimit = ptr.To[int32](1)
	s.create(eds)
	// The pods are never bound: an old pod that is not available is
	// replaced at once, and an unbound pod is deleted at once.
	first := s.activeReplicaSet(eds.Name)
	s.waitForPods(first, node.Name)

	s.setImage(eds, imageV2)
	second := s.activeReplicaSet(eds.Name, first)
	s.waitForPods(second, node.Name)
	s.g.Eventually(func(g gomega.Gomega) { g.Expect(s.podsOf(g, first)).To(gomega.BeEmpty()) }).Should(gomega.Succeed())
	s.g.Consistently(func(g gomega.Gomega) {
		g.Expect(names(s.replicaSets(g, eds.Name))).To(gomega.ConsistOf(first, second))
	}).Should(gomega.Succeed(), "the one replica set of history was deleted")

	s.setImage(eds, imageV3)
	third := s.activeReplicaSet(eds.Name, first, second)
	s.waitForPods(third, node.Name)
	s.g.Eventually(func(g gomega.Gomega) {
		g.Expect(names(s.replicaSets(g, eds.Name))).To(gomega.ConsistOf(second, third))
	}).Should(gomega.Succeed())
	for want, name := range []string{second, third} {
		s.g.Expect(s.getERS(s.g, name).Annotations).To(gomega.HaveKeyWithValue(v1alpha1.RevisionAnnotation, strconv.Itoa(want+2)), name)
	}

	// Back to the second template: its replica set is reused.
	s.setImage(eds, imageV2)
	s.g.Eventually(func(g gomega.Gomega) {
		g.Expect(s.getEDS(g, eds.Name).Status.ActiveReplicaSet).To(gomega.Equal(second))
	}).Should(gomega.Succeed())
	s.waitForPods(second, node.Name)
	s.g.Consistently(func(g gomega.Gomega) {
		g.Expect(names(s.replicaSets(g, eds.Name))).To(gomega.ConsistOf(second, third))
		g.Expect(s.getEDS(g, eds.Name).Status.ActiveReplicaSet).To(gomega.Equal(second))
	}).Should(gomega.Succeed())
	s.g.Eventually(func(g gomega.Gomega) {
		rs := s.getERS(g, second)
		g.Expect(rs.Status.Status).To(gomega.Equal(v1alpha1.ReplicaSetActive))
		g.Expect(s.podsOf(g, third)).To(gomega.BeEmpty())
	}).Should(gomega.Succeed())
}

func TestDeletedActiveReplicaSetIsReplacedEvenWithACanaryStrategy(t *testing.T) {
	s := newScenario(t)
	node := s.createNode("a", nil)
	eds := s.newEDS("agent", imageV1)
	eds.Spec.Strategy.Canary = &v1alpha1.CanaryStrategy{Replicas: ptr.To(intstr.FromInt32(1))}
	s.create(eds)
	first := s.activeReplicaSet(eds.Name)
	pod := s.waitForPods(first, node.Name)[node.Name]
	s.runPod(&pod)
	s.g.Eventually(func(g gomega.Gomega) { expectRolledOut(g, s.getEDS(g, eds.Name)) }).Should(gomega.Succeed())

	// Someone deletes the active replica set (kubectl delete ers, to force a
	// fresh one). With no active template left there is nothing for a
	// canary to be compared against: the new replica set of the same
	// template takes over, as the first template of an ExtendedDaemonSet does.
	s.g.Expect(k8s.Delete(s.ctx, s.getERS(s.g, first))).To(gomega.Succeed())
	recreated := s.activeReplicaSet(eds.Name, first)
	s.g.Expect(s.getERS(s.g, recreated).Annotations[v1alpha1.TemplateHashAnnotation]).To(
		gomega.Equal(pod.Labels[v1alpha1.TemplateHashLabel]))
	// No garbage collector runs here: the orphaned pod is replaced as an old one.
	s.g.Eventually(func(g gomega.Gomega) { g.Expect(s.gone(g, &pod)).To(gomega.BeTrue()) }).Should(gomega.Succeed())
	s.finishDeletion(&pod)
	pod = s.waitForPods(recreated, node.Name)[node.Name]
	s.runPod(&pod)
	s.g.Eventually(func(g gomega.Gomega) {
		e := s.getEDS(g, eds.Name)
		g.Expect(e.Status.ActiveReplicaSet).To(gomega.Equal(recreated))
		expectRolledOut(g, e)
	}).Should(gomega.Succeed())
}

// counters groups status counters for one comparison with a readable
// failure message.
type counterSet struct{ Desired, Current, Ready, Available, UpToDate int32 }

func counters(desired, current, ready, available, upToDate int32) counterSet {
	return counterSet{desired, current, ready, available, upToDate}
}

type conditionedObject interface {
	client.Object
	conditions.Getter
}

// expectInProgress asserts Ready=False, Reconciling=True, no Stalled.
func expectInProgress(g gomega.Gomega, obj conditionedObject) {
	g.Expect(conditions.IsFalse(obj, v1alpha1.ReadyCondition)).To(gomega.BeTrue(), "conditions: %v", obj.GetConditions())
	g.Expect(conditions.IsTrue(obj, v1alpha1.ReconcilingCondition)).To(gomega.BeTrue(), "conditions: %v", obj.GetConditions())
	g.Expect(conditions.Has(obj, v1alpha1.StalledCondition)).To(gomega.BeFalse(), "conditions: %v", obj.GetConditions())
	g.Expect(kstatus(g, obj)).To(gomega.Equal(status.InProgressStatus))
}

// expectRolledOut asserts Ready=True reason RolledOut, no Reconciling, no
// Stalled.
func expectRolledOut(g gomega.Gomega, obj conditionedObject) {
	g.Expect(conditions.IsTrue(obj, v1alpha1.ReadyCondition)).To(gomega.BeTrue(), "conditions: %v", obj.GetConditions())
	g.Expect(conditions.GetReason(obj, v1alpha1.ReadyCondition)).To(gomega.Equal(v1alpha1.ReasonRolledOut))
	g.Expect(conditions.Has(obj, v1alpha1.ReconcilingCondition)).To(gomega.BeFalse(), "conditions: %v", obj.GetConditions())
	g.Expect(conditions.Has(obj, v1alpha1.StalledCondition)).To(gomega.BeFalse(), "conditions: %v", obj.GetConditions())
	g.Expect(kstatus(g, obj)).To(gomega.Equal(status.CurrentStatus))
}

// kstatus is what Flux's health check reads from obj.
func kstatus(g gomega.Gomega, obj client.Object) status.Status {
	content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	g.Expect(err).NotTo(gomega.HaveOccurred())
	res, err := status.Compute(&unstructured.Unstructured{Object: content})
	g.Expect(err).NotTo(gomega.HaveOccurred())
	return res.Status
}

func terminatingPods(pods []corev1.Pod) []corev1.Pod {
	var out []corev1.Pod
	for _, p := range pods {
		if p.DeletionTimestamp != nil {
			out = append(out, p)
		}
	}
	return out
}

func names(sets []v1alpha1.ExtendedDaemonSetReplicaSet) []string {
	out := make([]string, len(sets))
	for i := range sets {
		out[i] = sets[i].Name
	}
	return out
}

func removeString(list []string, s string) []string {
	var out []string
	for _, x := range list {
		if x != s {
			out = append(out, x)
		}
	}
	return out
}

// An old replica set that cannot be deleted (an admission policy refuses
// it) is retried, but says nothing of the rollout: the ExtendedDaemonSet
// rolled out stays Ready instead of flapping with each failed pass, which
// would tell RolledOut again every time.
func TestHistoryThatCannotBePrunedLeavesTheRolloutReady(t *testing.T) {
	s := newScenario(t)
	node := s.createNode("a", nil)
	eds := s.newEDS("agent", imageV1)
	eds.Spec.RevisionHistoryLimit = ptr.To[int32](0)
	s.create(eds)
	first := s.activeReplicaSet(eds.Name)
	pod := s.waitForPods(first, node.Name)[node.Name]
	s.runPod(&pod)
	s.deny(admissionregistrationv1.Delete, v1alpha1.GroupVersion.Group, v1alpha1.GroupVersion.Version,
		"extendeddaemonsetreplicasets", "old replica sets are kept by policy")
	// The policy takes effect once the API server has loaded it: a replica
	// set of no ExtendedDaemonSet tells when.
	probe := &v1alpha1.ExtendedDaemonSetReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: "probe", Namespace: s.ns}}
	probe.Spec.Template = eds.Spec.Template
	probe.Spec.Selector = &v1alpha1.LabelSelector{MatchLabels: eds.Spec.Template.Labels}
	s.g.Eventually(func(g gomega.Gomega) {
		g.Expect(client.IgnoreAlreadyExists(k8s.Create(s.ctx, probe.DeepCopy()))).To(gomega.Succeed())
		g.Expect(k8s.Delete(s.ctx, probe)).To(gomega.MatchError(gomega.ContainSubstring("kept by policy")))
	}).Should(gomega.Succeed())

	s.setImage(eds, imageV2)
	second := s.activeReplicaSet(eds.Name, first)
	s.g.Eventually(func(g gomega.Gomega) {
		g.Expect(terminatingPods(s.podsOf(g, first))).To(gomega.HaveLen(1))
	}).Should(gomega.Succeed())
	s.finishDeletion(&pod)
	pod = s.waitForPods(second, node.Name)[node.Name]
	s.runPod(&pod)
	s.g.Eventually(func(g gomega.Gomega) {
		g.Expect(conditions.IsReady(s.getEDS(g, eds.Name))).To(gomega.BeTrue())
	}).Should(gomega.Succeed())
	s.g.Consistently(func(g gomega.Gomega) {
		latest := s.getEDS(g, eds.Name)
		g.Expect(conditions.IsReady(latest)).To(gomega.BeTrue(), "%v", latest.Status.Conditions)
		g.Expect(names(s.replicaSets(g, eds.Name))).To(gomega.ConsistOf(first, second), "the policy refuses the deletion")
	}).WithTimeout(3 * time.Second).Should(gomega.Succeed())
}

// A rolled-out ExtendedDaemonSet costs the API server nothing: passes woken
// by its nodes, its pods and its own objects write no status, as long as
// nothing a reader needs has changed.
func TestSteadyStateWritesNothing(t *testing.T) {
	s := newScenario(t)
	nodes := []*corev1.Node{s.createNode("a", nil), s.createNode("b", nil)}
	eds := s.newEDS("agent", imageV1)
	s.create(eds)
	active := s.activeReplicaSet(eds.Name)
	pods := s.waitForPods(active, nodes[0].Name, nodes[1].Name)
	for _, pod := range pods {
		s.runPod(&pod)
	}
	var edsVersion, ersVersion string
	s.g.Eventually(func(g gomega.Gomega) {
		latest := s.getEDS(g, eds.Name)
		expectRolledOut(g, latest)
		g.Expect(latest.Status.Available).To(gomega.BeEquivalentTo(2))
		edsVersion, ersVersion = latest.ResourceVersion, s.getERS(g, active).ResourceVersion
	}).Should(gomega.Succeed())

	// Wake every reconciler: a node label (the replica set and settings),
	// a pod annotation, and an annotation of the ExtendedDaemonSet itself.
	s.updateNode(nodes[0].Name, func(n *corev1.Node) { n.Labels["example.com/touched"] = "1" })
	pod := pods[nodes[1].Name]
	s.g.Expect(k8s.Patch(s.ctx, &pod, client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"annotations":{"touched":"1"}}}`)))).To(gomega.Succeed())
	touched := s.getEDS(s.g, eds.Name)
	s.g.Expect(k8s.Patch(s.ctx, touched, client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"annotations":{"touched":"1"}}}`)))).To(gomega.Succeed())
	edsVersion = touched.ResourceVersion
	s.g.Consistently(func(g gomega.Gomega) {
		g.Expect(s.getEDS(g, eds.Name).ResourceVersion).To(gomega.Equal(edsVersion), "ExtendedDaemonSet written")
		g.Expect(s.getERS(g, active).ResourceVersion).To(gomega.Equal(ersVersion), "replica set written")
	}).WithTimeout(3 * time.Second).Should(gomega.Succeed())
}
