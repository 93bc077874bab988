package controllers

import (
	"testing"
	"time"

	"github.com/fluxcd/pkg/runtime/conditions"
	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
)

// stopKubelet does what the node lifecycle controller does when a node's
// kubelet goes silent: the node stays, its Ready condition turns Unknown,
// and it gets the unreachable taints, NoSchedule and NoExecute (which
// agents tolerate). Its pods keep their last reported status (no lifecycle
// controller runs here to mark them not ready), as they would for a while
// on a cluster.
func (s *scenario) stopKubelet(name string) {
	s.t.Helper()
	s.g.Expect(retry.RetryOnConflict(retry.DefaultRetry, func() error {
		node := &corev1.Node{}
		if err := k8s.Get(s.ctx, client.ObjectKey{Name: name}, node); err != nil {
			return err
		}
		node.Spec.Taints = append(node.Spec.Taints,
			corev1.Taint{Key: corev1.TaintNodeUnreachable, Effect: corev1.TaintEffectNoSchedule},
			corev1.Taint{Key: corev1.TaintNodeUnreachable, Effect: corev1.TaintEffectNoExecute})
		return k8s.Update(s.ctx, node)
	})).To(gomega.Succeed())
	s.g.Expect(retry.RetryOnConflict(retry.DefaultRetry, func() error {
		node := &corev1.Node{}
		if err := k8s.Get(s.ctx, client.ObjectKey{Name: name}, node); err != nil {
			return err
		}
		node.Status.Conditions = []corev1.NodeCondition{{
			Type: corev1.NodeReady, Status: corev1.ConditionUnknown, Reason: "NodeStatusUnknown",
			LastHeartbeatTime: metav1.Now(), LastTransitionTime: metav1.Now(),
		}}
		return k8s.Status().Update(s.ctx, node)
	})).To(gomega.Succeed())
}

// startCanary rolls out eds on nodes, changes its image, runs the canary
// pod on the canary node (replacing the active one there) and returns the
// active and canary replica sets, the canary node and the active pods.
func (s *scenario) startCanary(eds *v1alpha1.ExtendedDaemonSet, nodes ...*corev1.Node) (first, second, canaryNode string, stable map[string]corev1.Pod) {
	s.t.Helper()
	first, stable = s.createRolledOut(eds, nodes...)
	s.setImage(eds, imageV2)
	s.g.Eventually(func(g gomega.Gomega) {
		c := s.getEDS(g, eds.Name).Status.Canary
		g.Expect(c).NotTo(gomega.BeNil())
		g.Expect(c.Nodes).To(gomega.HaveLen(1))
		canaryNode, second = c.Nodes[0], c.ReplicaSet
	}).Should(gomega.Succeed())
	s.replaceOnNode(stable[canaryNode], second)
	return first, second, canaryNode, stable
}

// The scenario: a canary whose only node dies after its pod
// started (kubelet stopped, Node kept, Ready Unknown) is failed with
// autoFail, never promoted on a pod no one runs.
func TestDeadCanaryNodeFailsTheCanary(t *testing.T) {
	s := newScenario(t)
	nodes := []*corev1.Node{s.createNode("a", nil), s.createNode("b", nil), s.createNode("c", nil)}
	eds := s.newEDS("agent", imageV1)
	eds.Spec.Strategy.Canary = &v1alpha1.CanaryStrategy{
		Replicas:  ptr.To(intstr.FromInt32(1)),
		Duration:  &metav1.Duration{Duration: 3 * time.Second},
		AutoPause: &v1alpha1.CanaryAutoPause{Enabled: ptr.To(false)},
		AutoFail:  &v1alpha1.CanaryAutoFail{Enabled: ptr.To(true)},
	}
	first, _, canaryNode, _ := s.startCanary(eds, nodes...)
	s.stopKubelet(canaryNode)

	s.g.Eventually(func(g gomega.Gomega) {
		e := s.getEDS(g, eds.Name)
		g.Expect(e.Status.ActiveReplicaSet).To(gomega.Equal(first), "promoted on a dead node")
		g.Expect(e.Status.Canary).NotTo(gomega.BeNil())
		g.Expect(e.Status.Canary.Failed).To(gomega.BeTrue())
		g.Expect(e.Status.Canary.Reason).To(gomega.Equal(v1alpha1.ReasonCanaryNodeNotReady))
		g.Expect(conditions.GetReason(e, v1alpha1.StalledCondition)).To(gomega.Equal(v1alpha1.ReasonCanaryFailed))
		g.Expect(conditions.GetMessage(e, v1alpha1.StalledCondition)).To(gomega.ContainSubstring(canaryNode))
	}).Should(gomega.Succeed())
}

// Without autoPause or autoFail, a dead canary node is replaced, and the
// replacement runs the canary's whole duration before it is promoted. The
// dead node's pod, deleted, stays terminating (no kubelet confirms it) and
// holds one unit of the budget until the unresponsive grace: a budget of
// two lets the replacement start meanwhile.
func TestDeadCanaryNodeIsReplacedAndJudgedAgain(t *testing.T) {
	s := newScenario(t)
	nodes := []*corev1.Node{s.createNode("a", nil), s.createNode("b", nil), s.createNode("c", nil)}
	eds := s.newEDS("agent", imageV1)
	eds.Spec.Strategy.RollingUpdate.MaxUnavailable = ptr.To(intstr.FromInt32(2))
	eds.Spec.Strategy.Canary = &v1alpha1.CanaryStrategy{
		Replicas:  ptr.To(intstr.FromInt32(1)),
		Duration:  &metav1.Duration{Duration: 6 * time.Second},
		AutoPause: &v1alpha1.CanaryAutoPause{Enabled: ptr.To(false)},
		AutoFail:  &v1alpha1.CanaryAutoFail{Enabled: ptr.To(false)},
	}
	first, second, dead, stable := s.startCanary(eds, nodes...)
	s.stopKubelet(dead)

	var replacement string
	s.g.Eventually(func(g gomega.Gomega) {
		e := s.getEDS(g, eds.Name)
		g.Expect(e.Status.ActiveReplicaSet).To(gomega.Equal(first), "promoted on a dead node")
		g.Expect(e.Status.Canary).NotTo(gomega.BeNil())
		g.Expect(e.Status.Canary.Nodes).To(gomega.HaveLen(1))
		replacement = e.Status.Canary.Nodes[0]
		g.Expect(replacement).NotTo(gomega.Equal(dead))
	}).Should(gomega.Succeed())
	replacedAt := time.Now()
	// Until the replacement runs an available canary pod, nothing is
	// promoted; then not before its whole duration.
	s.g.Consistently(func(g gomega.Gomega) {
		g.Expect(s.getEDS(g, eds.Name).Status.ActiveReplicaSet).To(gomega.Equal(first))
	}).Should(gomega.Succeed())
	s.replaceOnNode(stable[replacement], second)
	s.g.Eventually(func(g gomega.Gomega) {
		g.Expect(s.getEDS(g, eds.Name).Status.ActiveReplicaSet).To(gomega.Equal(second))
	}).Should(gomega.Succeed())
	// The API server keeps times to the second: a second of slack.
	s.g.Expect(time.Since(replacedAt)).To(gomega.BeNumerically(">=", 5*time.Second), "the replacement ran the canary's duration")
}

// A template change while no node runs the template (a node pool scaled
// to zero) has nothing to canary: it is promoted at once, and the
// ExtendedDaemonSet ends Ready, so later changes are not held.
func TestTemplateChangeWithNoNodeIsPromotedAtOnce(t *testing.T) {
	s := newScenario(t)
	eds := s.newEDS("agent", imageV1)
	eds.Spec.Strategy.Canary = &v1alpha1.CanaryStrategy{Duration: &metav1.Duration{Duration: time.Hour}}
	s.create(eds)
	first := s.activeReplicaSet(eds.Name)
	s.g.Eventually(func(g gomega.Gomega) { expectRolledOut(g, s.getEDS(g, eds.Name)) }).Should(gomega.Succeed())

	s.setImage(eds, imageV2)
	s.activeReplicaSet(eds.Name, first)
	s.g.Eventually(func(g gomega.Gomega) {
		e := s.getEDS(g, eds.Name)
		g.Expect(e.Status.Canary).To(gomega.BeNil())
		expectRolledOut(g, e)
	}).Should(gomega.Succeed())
}

// A canary whose nodeSelector matches no node says so, and past the
// progress deadline the ExtendedDaemonSet is Stalled.
func TestCanaryWithoutMatchingNodesStallsPastTheProgressDeadline(t *testing.T) {
	s := newScenario(t)
	nodes := []*corev1.Node{s.createNode("a", nil), s.createNode("b", nil)}
	eds := s.newEDS("agent", imageV1)
	eds.Spec.ProgressDeadlineSeconds = ptr.To[int32](2)
	eds.Spec.Strategy.Canary = &v1alpha1.CanaryStrategy{
		Duration:     &metav1.Duration{Duration: time.Second},
		NodeSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"pool": "canary"}},
	}
	first, _ := s.createRolledOut(eds, nodes...)
	s.setImage(eds, imageV2)

	s.g.Eventually(func(g gomega.Gomega) {
		e := s.getEDS(g, eds.Name)
		g.Expect(e.Status.ActiveReplicaSet).To(gomega.Equal(first))
		g.Expect(e.Status.Canary).NotTo(gomega.BeNil())
		g.Expect(e.Status.Canary.Reason).To(gomega.Equal("WaitingForNodes"))
		g.Expect(e.Status.Canary.Message).To(gomega.ContainSubstring("nodeSelector"))
		g.Expect(conditions.Get(e, v1alpha1.StalledCondition)).To(gomega.And(
			gomega.Not(gomega.BeNil()),
			gomega.HaveField("Reason", v1alpha1.ReasonProgressDeadlineExceeded),
			gomega.HaveField("Message", gomega.ContainSubstring("nodeSelector"))))
	}).WithTimeout(30 * time.Second).Should(gomega.Succeed())
}
