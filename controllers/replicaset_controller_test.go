package controllers

import (
	"testing"
	"time"

	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
	"github.com/extendeddaemonset/extendeddaemonset/controllers/placement"
)

// agentLabel is a second node selector key, for nodes of a scenario that
// its template must not select.
const agentLabel = "controllers-test.extendeddaemonset.io/agent"

// standardTolerations are the tolerations upstream gives every DaemonSet pod.
var standardTolerations = []corev1.Toleration{
	{Key: corev1.TaintNodeNotReady, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute},
	{Key: corev1.TaintNodeUnreachable, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute},
	{Key: corev1.TaintNodeDiskPressure, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule},
	{Key: corev1.TaintNodeMemoryPressure, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule},
	{Key: corev1.TaintNodePIDPressure, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule},
	{Key: corev1.TaintNodeUnschedulable, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule},
}

func TestPodsGoOnEveryFittingNodeAndNowhereElse(t *testing.T) {
	s := newScenario(t)
	selected := map[string]string{agentLabel: "yes"}
	fitting := []*corev1.Node{
		s.createNode("plain-a", selected),
		s.createNode("plain-b", selected),
		// Taints every node agent tolerates.
		s.createNode("pressure", selected,
			corev1.Taint{Key: corev1.TaintNodeMemoryPressure, Effect: corev1.TaintEffectNoSchedule},
			corev1.Taint{Key: corev1.TaintNodeDiskPressure, Effect: corev1.TaintEffectNoSchedule},
			corev1.Taint{Key: corev1.TaintNodeUnreachable, Effect: corev1.TaintEffectNoExecute}),
		// A taint the template tolerates.
		s.createNode("dedicated", selected, corev1.Taint{Key: "dedicated", Value: "agents", Effect: corev1.TaintEffectNoSchedule}),
		// A taint that only discourages.
		s.createNode("prefer", selected, corev1.Taint{Key: "dedicated", Value: "other", Effect: corev1.TaintEffectPreferNoSchedule}),
		// The taint the node lifecycle controller gives a node that is
		// not Ready (and leaves a moment after it is Ready again): the
		// node still should run the agent, whose pod waits for it.
		s.createNode("not-ready", selected, corev1.Taint{Key: corev1.TaintNodeNotReady, Effect: corev1.TaintEffectNoSchedule}),
	}
	misfits := []*corev1.Node{
		s.createNode("unselected", nil),
		s.createNode("excluded", map[string]string{agentLabel: "yes", "role": "excluded"}),
		s.createNode("noschedule", selected, corev1.Taint{Key: "dedicated", Value: "other", Effect: corev1.TaintEffectNoSchedule}),
		s.createNode("noexecute", selected, corev1.Taint{Key: "dedicated", Value: "other", Effect: corev1.TaintEffectNoExecute}),
	}
	eds := s.newEDS("agent", imageV1)
	tmpl := &eds.Spec.Template
	tmpl.Spec.NodeSelector[agentLabel] = "yes"
	tmpl.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
		RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
			MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "role", Operator: corev1.NodeSelectorOpNotIn, Values: []string{"excluded"}}},
		}}},
	}}
	tmpl.Spec.Tolerations = []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "agents", Effect: corev1.TaintEffectNoSchedule}}
	s.create(eds)
	ers := s.activeReplicaSet(eds.Name)
	rs := s.getERS(s.g, ers)

	pods := s.waitForPods(ers, nodeNames(fitting...)...)
	s.g.Consistently(func(g gomega.Gomega) {
		byNode := podsByNode(s.pods(g, nil))
		for _, n := range misfits {
			g.Expect(byNode).NotTo(gomega.HaveKey(n.Name), "a pod went on a node the template does not fit")
		}
		g.Expect(byNode).To(gomega.HaveLen(len(fitting)))
	}).Should(gomega.Succeed())

	for node, pod := range pods {
		s.g.Expect(pod.GenerateName).To(gomega.Equal(ers + "-"))
		s.g.Expect(pod.Name).To(gomega.HavePrefix(ers + "-"))
		s.g.Expect(pod.Spec.NodeName).To(gomega.BeEmpty(), "the scheduler binds the pod, not the controller")
		owner := metav1.GetControllerOf(&pod)
		s.g.Expect(owner).NotTo(gomega.BeNil())
		s.g.Expect(*owner).To(gomega.Equal(metav1.OwnerReference{
			APIVersion: v1alpha1.GroupVersion.String(), Kind: "ExtendedDaemonSetReplicaSet", Name: ers, UID: rs.UID,
			Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true),
		}))
		s.g.Expect(pod.Labels).To(gomega.Equal(map[string]string{
			"app":                               eds.Name,
			v1alpha1.ExtendedDaemonSetNameLabel: eds.Name,
			v1alpha1.ExtendedDaemonSetReplicaSetNameLabel: ers,
			v1alpha1.TemplateHashLabel:                    rs.Annotations[v1alpha1.TemplateHashAnnotation],
		}))
		s.g.Expect(pod.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution).To(gomega.Equal(&corev1.NodeSelector{
			NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchFields: []corev1.NodeSelectorRequirement{{
				Key: "metadata.name", Operator: corev1.NodeSelectorOpIn, Values: []string{node},
			}}}},
		}), "the pod must be pinned to its node and nowhere else")
		s.g.Expect(pod.Spec.NodeSelector).To(gomega.Equal(tmpl.Spec.NodeSelector))
		s.g.Expect(pod.Spec.Tolerations).To(gomega.ContainElements(standardTolerations))
		s.g.Expect(pod.Spec.Tolerations).NotTo(gomega.ContainElement(gomega.And(
			gomega.HaveField("Key", gomega.BeElementOf(corev1.TaintNodeNotReady, corev1.TaintNodeUnreachable)),
			gomega.HaveField("Effect", corev1.TaintEffectNoSchedule))),
			"the scheduler keeps the pod off a node that is down (not-ready, unreachable NoSchedule) until it is back")
		s.g.Expect(pod.Spec.Tolerations).To(gomega.ContainElement(tmpl.Spec.Tolerations[0]))
		s.g.Expect(pod.Spec.Tolerations).NotTo(gomega.ContainElement(gomega.HaveField("Key", corev1.TaintNodeNetworkUnavailable)),
			"only host-network pods tolerate an unconfigured network")
		s.g.Expect(pod.Spec.Containers).To(gomega.HaveExactElements(gomega.HaveField("Image", imageV1)))
	}

	s.g.Eventually(func(g gomega.Gomega) {
		st := s.getERS(g, ers).Status
		g.Expect(st.Desired).To(gomega.BeEquivalentTo(len(fitting)))
		g.Expect(st.Current).To(gomega.BeEquivalentTo(len(fitting)))
	}).Should(gomega.Succeed())
}

func TestNodeChangesMovePods(t *testing.T) {
	s := newScenario(t)
	selected := map[string]string{agentLabel: "yes"}
	nodes := []*corev1.Node{s.createNode("a", selected), s.createNode("b", selected), s.createNode("c", selected)}
	eds := s.newEDS("agent", imageV1)
	eds.Spec.Template.Spec.NodeSelector[agentLabel] = "yes"
	s.create(eds)
	ers := s.activeReplicaSet(eds.Name)
	pods := s.waitForPods(ers, nodeNames(nodes...)...)
	for _, pod := range pods {
		s.runPod(&pod)
	}
	s.g.Eventually(func(g gomega.Gomega) { expectRolledOut(g, s.getERS(g, ers)) }).Should(gomega.Succeed())
	a, b, c := pods[nodes[0].Name], pods[nodes[1].Name], pods[nodes[2].Name]

	// Relabelled out of the selector: the pod goes.
	s.updateNode(nodes[0].Name, func(n *corev1.Node) { delete(n.Labels, agentLabel) })
	s.g.Eventually(func(g gomega.Gomega) { g.Expect(s.gone(g, &a)).To(gomega.BeTrue()) }).Should(gomega.Succeed())
	s.finishDeletion(&a)

	// An untolerated NoSchedule taint places no new pod but keeps the
	// running one; a NoExecute taint evicts it.
	s.updateNode(nodes[1].Name, func(n *corev1.Node) {
		n.Spec.Taints = append(n.Spec.Taints, corev1.Taint{Key: "maintenance", Effect: corev1.TaintEffectNoSchedule})
	})
	s.g.Eventually(func(g gomega.Gomega) {
		g.Expect(s.getERS(g, ers).Status.Desired).To(gomega.BeEquivalentTo(1))
	}).Should(gomega.Succeed())
	s.g.Consistently(func(g gomega.Gomega) {
		g.Expect(s.gone(g, &b)).To(gomega.BeFalse(), "a NoSchedule taint evicted a running pod")
		g.Expect(s.gone(g, &c)).To(gomega.BeFalse())
		g.Expect(podsByNode(s.podsOf(g, ers))).NotTo(gomega.HaveKey(nodes[0].Name))
	}).Should(gomega.Succeed())
	s.updateNode(nodes[1].Name, func(n *corev1.Node) {
		n.Spec.Taints = append(n.Spec.Taints, corev1.Taint{Key: "maintenance", Effect: corev1.TaintEffectNoExecute})
	})
	s.g.Eventually(func(g gomega.Gomega) { g.Expect(s.gone(g, &b)).To(gomega.BeTrue()) }).Should(gomega.Succeed())
	s.finishDeletion(&b)

	// Relabelled back in: a new pod.
	s.updateNode(nodes[0].Name, func(n *corev1.Node) { n.Labels[agentLabel] = "yes" })
	s.waitForPods(ers, nodes[0].Name, nodes[2].Name)
	s.g.Eventually(func(g gomega.Gomega) {
		st := s.getERS(g, ers).Status
		g.Expect(st.Desired).To(gomega.BeEquivalentTo(2))
		g.Expect(st.Current).To(gomega.BeEquivalentTo(2))
		g.Expect(st.Available).To(gomega.BeEquivalentTo(1))
	}).Should(gomega.Succeed())
	s.g.Expect(s.gone(s.g, &c)).To(gomega.BeFalse())
}

func TestPodsOnMissingNodesAreDeleted(t *testing.T) {
	s := newScenario(t)
	nodes := []*corev1.Node{s.createNode("a", nil), s.createNode("b", nil)}
	eds := s.newEDS("agent", imageV1)
	s.create(eds)
	ers := s.activeReplicaSet(eds.Name)
	pods := s.waitForPods(ers, nodeNames(nodes...)...)
	for _, pod := range pods {
		s.runPod(&pod)
	}
	s.g.Eventually(func(g gomega.Gomega) { expectRolledOut(g, s.getEDS(g, eds.Name)) }).Should(gomega.Succeed())

	// A node deleted under its pod.
	s.g.Expect(k8s.Delete(s.ctx, nodes[1])).To(gomega.Succeed())
	gonePod := pods[nodes[1].Name]
	s.g.Eventually(func(g gomega.Gomega) { g.Expect(s.gone(g, &gonePod)).To(gomega.BeTrue()) }).Should(gomega.Succeed())
	s.finishDeletion(&gonePod)

	// A pod of the ExtendedDaemonSet pinned to a node that never existed.
	rs := s.getERS(s.g, ers)
	stray := placement.NewPod(&rs.Spec.Template, s.ns+"-ghost", map[string]string{
		v1alpha1.ExtendedDaemonSetNameLabel:           eds.Name,
		v1alpha1.ExtendedDaemonSetReplicaSetNameLabel: ers,
		v1alpha1.TemplateHashLabel:                    rs.Spec.TemplateGeneration,
	})
	stray.GenerateName = ers + "-"
	s.create(stray)
	s.g.Eventually(func(g gomega.Gomega) { g.Expect(s.gone(g, stray)).To(gomega.BeTrue()) }).Should(gomega.Succeed())

	s.g.Expect(s.gone(s.g, ptr.To(pods[nodes[0].Name]))).To(gomega.BeFalse())
	s.g.Eventually(func(g gomega.Gomega) {
		e := s.getEDS(g, eds.Name)
		g.Expect(counters(e.Status.Desired, e.Status.Current, e.Status.Ready, e.Status.Available, e.Status.UpToDate)).
			To(gomega.Equal(counters(1, 1, 1, 1, 1)))
		expectRolledOut(g, e)
	}).Should(gomega.Succeed())
}

func TestFailedPodIsReplaced(t *testing.T) {
	s := newScenario(t)
	node := s.createNode("a", nil)
	eds := s.newEDS("agent", imageV1)
	s.create(eds)
	ers := s.activeReplicaSet(eds.Name)

	// Twice: the second failure comes within the doubled backoff of the first.
	for range 2 {
		pod := s.waitForPods(ers, node.Name)[node.Name]
		s.runPod(&pod)
		s.g.Eventually(func(g gomega.Gomega) { expectRolledOut(g, s.getERS(g, ers)) }).Should(gomega.Succeed())
		s.setPodStatus(pod.Name, func(st *corev1.PodStatus) {
			st.Phase = corev1.PodFailed
			st.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionFalse, LastTransitionTime: metav1.Now()}}
		})
		s.g.Eventually(func(g gomega.Gomega) { g.Expect(s.gone(g, &pod)).To(gomega.BeTrue()) }).Should(gomega.Succeed())
		s.g.Eventually(func(g gomega.Gomega) {
			onNode := podsByNode(s.podsOf(g, ers))[node.Name]
			g.Expect(onNode).To(gomega.HaveLen(1))
			g.Expect(onNode[0].UID).NotTo(gomega.Equal(pod.UID), "the failed pod was not replaced")
			g.Expect(onNode[0].DeletionTimestamp).To(gomega.BeNil())
		}).Should(gomega.Succeed())
	}
}

func TestFailureBackoffDoublesFromOneSecond(t *testing.T) {
	g := gomega.NewWithT(t)
	b := newFailureBackoff()
	now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	g.Expect(b.Until([]string{"n"}, now)).To(gomega.BeEmpty())

	b.Next("n", now)
	g.Expect(b.Until([]string{"n", "other"}, now)).To(gomega.Equal(map[string]time.Time{"n": now.Add(time.Second)}))
	g.Expect(b.Until([]string{"n"}, now.Add(time.Second))).To(gomega.BeEmpty(), "the backoff ends after its delay")

	now = now.Add(time.Second)
	b.Next("n", now)
	g.Expect(b.Until([]string{"n"}, now)).To(gomega.HaveKeyWithValue("n", now.Add(2*time.Second)))
	for range 20 {
		b.Next("n", now)
	}
	g.Expect(b.Until([]string{"n"}, now)).To(gomega.HaveKeyWithValue("n", now.Add(failedPodMaxBackoff)), "the delay is capped")

	// Idle for long enough, a key starts from the shortest delay again, and
	// idle keys are dropped.
	b.Next("other", now)
	later := now.Add(failedPodMaxBackoff + 2*failedPodMaxBackoff + time.Second)
	b.Next("n", later)
	g.Expect(b.Until([]string{"n"}, later)).To(gomega.HaveKeyWithValue("n", later.Add(time.Second)))
	g.Expect(b.entries).NotTo(gomega.HaveKey("other"))
}

func TestMinReadySecondsDelaysAvailability(t *testing.T) {
	s := newScenario(t)
	node := s.createNode("a", nil)
	eds := s.newEDS("agent", imageV1)
	// Long enough that the ready-but-not-available state is seen even on a
	// busy machine; nothing is asserted about how soon it ends.
	eds.Spec.MinReadySeconds = 20
	s.create(eds)
	ers := s.activeReplicaSet(eds.Name)
	pod := s.waitForPods(ers, node.Name)[node.Name]
	s.runPod(&pod)
	readyAt := time.Now()

	s.g.Eventually(func(g gomega.Gomega) {
		rs := s.getERS(g, ers)
		g.Expect(rs.Status.Ready).To(gomega.BeEquivalentTo(1))
		if time.Since(readyAt) < 15*time.Second {
			g.Expect(rs.Status.Available).To(gomega.BeEquivalentTo(0), "available before minReadySeconds")
			expectInProgress(g, rs)
		}
	}).Should(gomega.Succeed())
	// Nothing but time changes now: the reconciler must come back by itself.
	s.g.Eventually(func(g gomega.Gomega) {
		rs := s.getERS(g, ers)
		g.Expect(rs.Status.Available).To(gomega.BeEquivalentTo(1))
		expectRolledOut(g, rs)
		expectRolledOut(g, s.getEDS(g, eds.Name))
	}).Should(gomega.Succeed())
	s.g.Expect(time.Since(readyAt)).To(gomega.BeNumerically(">=", 18*time.Second), "available before minReadySeconds")
}

func TestMaxSurgeCreatesTheNewPodBeforeDeletingTheOld(t *testing.T) {
	s := newScenario(t)
	nodes := []*corev1.Node{s.createNode("a", nil), s.createNode("b", nil)}
	eds := s.newEDS("agent", imageV1)
	eds.Spec.Strategy.RollingUpdate.MaxUnavailable = ptr.To(intstr.FromInt32(0))
	eds.Spec.Strategy.RollingUpdate.MaxSurge = ptr.To(intstr.FromInt32(1))
	first, _ := s.createRolledOut(eds, nodes...)

	s.setImage(eds, imageV2)
	second := s.activeReplicaSet(eds.Name, first)
	for replaced := 0; replaced < len(nodes); replaced++ {
		// One new pod beside an old one, and no old pod deleted meanwhile.
		var surge corev1.Pod
		s.g.Eventually(func(g gomega.Gomega) {
			var pending []corev1.Pod
			for _, p := range s.podsOf(g, second) {
				if p.Spec.NodeName == "" {
					pending = append(pending, p)
				}
			}
			g.Expect(pending).To(gomega.HaveLen(1))
			surge = pending[0]
		}).Should(gomega.Succeed())
		node := placement.TargetNode(&surge)
		s.g.Consistently(func(g gomega.Gomega) {
			old := s.podsOf(g, first)
			g.Expect(old).To(gomega.HaveLen(len(nodes) - replaced))
			g.Expect(terminatingPods(old)).To(gomega.BeEmpty(), "an old pod was deleted before its replacement was available")
			g.Expect(s.podsOf(g, second)).To(gomega.HaveLen(replaced+1), "more nodes surged than maxSurge")
		}).Should(gomega.Succeed())

		// The new pod is available: the old one on its node goes.
		s.runPod(&surge)
		var old corev1.Pod
		s.g.Eventually(func(g gomega.Gomega) {
			onNode := podsByNode(s.podsOf(g, first))[node]
			g.Expect(onNode).To(gomega.HaveLen(1))
			g.Expect(onNode[0].DeletionTimestamp).NotTo(gomega.BeNil())
			old = onNode[0]
		}).Should(gomega.Succeed())
		s.finishDeletion(&old)
	}
	s.waitForPods(second, nodeNames(nodes...)...)
	s.g.Eventually(func(g gomega.Gomega) {
		g.Expect(s.podsOf(g, first)).To(gomega.BeEmpty())
		e := s.getEDS(g, eds.Name)
		g.Expect(counters(e.Status.Desired, e.Status.Current, e.Status.Ready, e.Status.Available, e.Status.UpToDate)).
			To(gomega.Equal(counters(2, 2, 2, 2, 2)))
		expectRolledOut(g, e)
	}).Should(gomega.Succeed())
}

func TestUnschedulablePodsAreReported(t *testing.T) {
	s := newScenario(t)
	node := s.createNode("a", nil)
	eds := s.newEDS("agent", imageV1)
	s.create(eds)
	ers := s.activeReplicaSet(eds.Name)
	pod := s.waitForPods(ers, node.Name)[node.Name]
	s.setPodStatus(pod.Name, func(st *corev1.PodStatus) {
		st.Phase = corev1.PodPending
		st.Conditions = []corev1.PodCondition{{
			Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable,
			Message: "0/1 nodes are available: 1 Insufficient cpu.", LastTransitionTime: metav1.Now(),
		}}
	})
	s.g.Eventually(func(g gomega.Gomega) {
		rs := s.getERS(g, ers)
		g.Expect(rs.Status.Unschedulable).To(gomega.BeEquivalentTo(1))
		expectInProgress(g, rs)

		var events eventsv1.EventList
		g.Expect(k8s.List(s.ctx, &events, client.InNamespace(s.ns))).To(gomega.Succeed())
		g.Expect(events.Items).To(gomega.ContainElement(gomega.Satisfy(func(e eventsv1.Event) bool {
			return e.Reason == "FailedPlacement" && e.Type == corev1.EventTypeWarning && e.Regarding.Name == ers
		})))
	}).Should(gomega.Succeed())
	s.g.Consistently(func(g gomega.Gomega) {
		g.Expect(s.gone(g, &pod)).To(gomega.BeFalse(), "an unschedulable pod is not replaced")
	}).Should(gomega.Succeed())
}

// A rollout held back by a node that is not Ready looks again when the
// first such node of the replica set crosses the unresponsive grace: from
// then on its agent no longer counts against the budget, and nothing else
// wakes the rollout (a dead kubelet sends no more node updates).
func TestUntilUnresponsiveIsTheSoonestCrossing(t *testing.T) {
	now := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	grace := 5 * time.Minute
	node := func(name string, status corev1.ConditionStatus, since time.Duration) *corev1.Node {
		return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}, Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{
			{Type: corev1.NodeReady, Status: status, LastTransitionTime: metav1.NewTime(now.Add(-since))}}}}
	}
	nodes := []*corev1.Node{
		node("ready", corev1.ConditionTrue, time.Hour),
		node("gone-1m-ago", corev1.ConditionUnknown, time.Minute),
		node("gone-3m-ago", corev1.ConditionFalse, 3*time.Minute),
		node("gone-1h-ago", corev1.ConditionUnknown, time.Hour),
		node("another-eds", corev1.ConditionFalse, 4*time.Minute+30*time.Second),
		{ObjectMeta: metav1.ObjectMeta{Name: "without-cond"}},
	}
	v := newView(viewSpec{
		role: v1alpha1.ReplicaSetActive, name: "agent-v1", template: &corev1.PodTemplateSpec{}, grace: grace,
		responsible: func(node string) bool { return node != "another-eds" },
	})
	v.restate(nil, nodes, nil, now)
	if got, want := v.untilUnresponsive(now), 2*time.Minute+time.Millisecond; got != want {
		t.Errorf("untilUnresponsive = %v, want %v (the node not Ready for 3 minutes)", got, want)
	}
	v.restate(nil, nodes[:1], nil, now)
	if got := v.untilUnresponsive(now); got != 0 {
		t.Errorf("untilUnresponsive with every node Ready = %v, want 0", got)
	}
}

// A rollout held by a node gone silent goes on when the node crosses the
// unresponsive grace, with no other event: the node's pod stays
// terminating, and its kubelet sends nothing more.
func TestRolloutGoesOnWhenANodeCrossesTheUnresponsiveGrace(t *testing.T) {
	s := newScenario(t)
	nodes := []*corev1.Node{s.createNode("a", nil), s.createNode("b", nil), s.createNode("c", nil)}
	eds := s.newEDS("agent", imageV1)
	_, stable := s.createRolledOut(eds, nodes...)
	s.setImage(eds, imageV2)

	deleted := func(g gomega.Gomega) []corev1.Pod {
		var gone []corev1.Pod
		for _, p := range stable {
			if s.gone(g, &p) {
				gone = append(gone, p)
			}
		}
		return gone
	}
	var stuck corev1.Pod
	s.g.Eventually(func(g gomega.Gomega) {
		gone := deleted(g)
		g.Expect(gone).To(gomega.HaveLen(1))
		stuck = gone[0]
	}).Should(gomega.Succeed())
	// Silent since a little less than the grace: the rollout, held by the
	// node's terminating pod, waits until the grace is over.
	crossing := time.Now().Add(8 * time.Second)
	s.updateNodeStatus(placement.TargetNode(&stuck), func(st *corev1.NodeStatus) {
		st.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionUnknown,
			Reason: "NodeStatusUnknown", LastTransitionTime: metav1.NewTime(crossing.Add(-placement.DefaultUnresponsiveGrace))}}
	})
	s.g.Consistently(func(g gomega.Gomega) { g.Expect(deleted(g)).To(gomega.HaveLen(1)) }).Should(gomega.Succeed())
	s.g.Eventually(func(g gomega.Gomega) { g.Expect(len(deleted(g))).To(gomega.BeNumerically(">", 1)) }).
		WithTimeout(time.Until(crossing)+20*time.Second).Should(gomega.Succeed(), "the rollout goes on once the grace is over")
}
