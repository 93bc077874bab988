package controllers

import (
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/fluxcd/pkg/runtime/conditions"
	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
	"github.com/extendeddaemonset/extendeddaemonset/controllers/placement"
)

// A manual canary runs the new template on one node only, fails back to
// the active template when a person fails it, starts again on retry, and
// rolls out once validated; the spec is never touched.
func TestManualCanaryFailRetryValidate(t *testing.T) {
	s := newScenario(t)
	nodes := []*corev1.Node{s.createNode("a", nil), s.createNode("b", nil), s.createNode("c", nil)}
	eds := s.newEDS("agent", imageV1)
	eds.Spec.Strategy.Canary = &v1alpha1.CanaryStrategy{
		Replicas: ptr.To(intstr.FromInt32(1)), ValidationMode: v1alpha1.CanaryValidationManual,
	}
	first, stable := s.createRolledOut(eds, nodes...)

	s.setImage(eds, imageV2)
	specBefore, err := json.Marshal(eds.Spec)
	s.g.Expect(err).NotTo(gomega.HaveOccurred())
	generation := eds.Generation

	var second, canaryNode string
	s.g.Eventually(func(g gomega.Gomega) {
		e := s.getEDS(g, eds.Name)
		g.Expect(e.Status.Canary).NotTo(gomega.BeNil())
		g.Expect(e.Status.Canary.Nodes).To(gomega.HaveLen(1))
		second, canaryNode = e.Status.Canary.ReplicaSet, e.Status.Canary.Nodes[0]
		g.Expect(e.Status.ActiveReplicaSet).To(gomega.Equal(first))
		// A manual canary waits for a person: paused, as GitOps tools show it.
		g.Expect(conditions.GetReason(e, v1alpha1.ReconcilingCondition)).To(gomega.Equal(v1alpha1.ReasonCanaryPaused))
		g.Expect(conditions.GetMessage(e, v1alpha1.CanaryCondition)).To(gomega.ContainSubstring("WaitingForValidation"))
		g.Expect(conditions.IsTrue(e, v1alpha1.CanaryCondition)).To(gomega.BeTrue())
		g.Expect(e.Status.State).To(gomega.Equal(v1alpha1.StateCanaryPaused))
		g.Expect(kstatus(g, e)).To(gomega.Equal(status.InProgressStatus))
	}).Should(gomega.Succeed())
	canaryPod := s.replaceOnNode(stable[canaryNode], second)
	for node, pod := range stable {
		if node != canaryNode {
			s.g.Expect(s.gone(s.g, &pod)).To(gomega.BeFalse(), "a pod off the canary nodes was replaced")
		}
	}
	s.g.Consistently(func(g gomega.Gomega) {
		g.Expect(s.getEDS(g, eds.Name).Status.ActiveReplicaSet).To(gomega.Equal(first), "a manual canary promoted itself")
	}).Should(gomega.Succeed())

	// Failed by a person: Stalled, and the canary node back on the active template.
	s.annotate(eds, v1alpha1.CanaryFailedAnnotation, second)
	s.g.Eventually(func(g gomega.Gomega) {
		e := s.getEDS(g, eds.Name)
		g.Expect(e.Status.Canary).NotTo(gomega.BeNil())
		g.Expect(e.Status.Canary.Failed).To(gomega.BeTrue())
		g.Expect(conditions.IsStalled(e)).To(gomega.BeTrue())
		g.Expect(conditions.GetReason(e, v1alpha1.StalledCondition)).To(gomega.Equal(v1alpha1.ReasonCanaryFailed))
		g.Expect(conditions.GetMessage(e, v1alpha1.StalledCondition)).To(gomega.ContainSubstring(second))
		g.Expect(kstatus(g, e)).To(gomega.Equal(status.FailedStatus))
	}).Should(gomega.Succeed())
	stable[canaryNode] = s.replaceOnNode(canaryPod, first)
	after := s.getEDS(s.g, eds.Name)
	specAfter, err := json.Marshal(after.Spec)
	s.g.Expect(err).NotTo(gomega.HaveOccurred())
	s.g.Expect(string(specAfter)).To(gomega.Equal(string(specBefore)), "the controller modified the spec")
	s.g.Expect(after.Generation).To(gomega.Equal(generation))

	// A retry starts the canary again; a validation promotes it.
	s.updateEDS(eds, func(e *v1alpha1.ExtendedDaemonSet) {
		delete(e.Annotations, v1alpha1.CanaryFailedAnnotation)
		e.Annotations[v1alpha1.CanaryRetryAnnotation] = "1"
	})
	s.g.Eventually(func(g gomega.Gomega) {
		e := s.getEDS(g, eds.Name)
		g.Expect(e.Status.Canary).NotTo(gomega.BeNil())
		g.Expect(e.Status.Canary.Failed).To(gomega.BeFalse())
		g.Expect(conditions.GetReason(e, v1alpha1.ReconcilingCondition)).To(gomega.Equal(v1alpha1.ReasonCanaryPaused))
	}).Should(gomega.Succeed())
	canaryNode = s.getEDS(s.g, eds.Name).Status.Canary.Nodes[0]
	s.replaceOnNode(stable[canaryNode], second)

	s.annotate(eds, v1alpha1.CanaryValidatedAnnotation, second)
	s.g.Eventually(func(g gomega.Gomega) {
		e := s.getEDS(g, eds.Name)
		g.Expect(e.Status.ActiveReplicaSet).To(gomega.Equal(second))
		g.Expect(e.Status.Canary).To(gomega.BeNil())
		g.Expect(conditions.Has(e, v1alpha1.CanaryCondition)).To(gomega.BeFalse())
	}).Should(gomega.Succeed())
	var rest []corev1.Pod
	for node, pod := range stable {
		if node != canaryNode {
			rest = append(rest, pod)
		}
	}
	s.replaceInAnyOrder(rest, second)
	s.g.Eventually(func(g gomega.Gomega) { expectRolledOut(g, s.getEDS(g, eds.Name)) }).Should(gomega.Succeed())
}

// replaceInAnyOrder replaces pods by the pods of ers in whatever order the
// rolling update deletes them: with maxUnavailable 1 it deletes one at a
// time, of its own choosing.
func (s *scenario) replaceInAnyOrder(pods []corev1.Pod, ers string) {
	s.t.Helper()
	for len(pods) > 0 {
		var deleted int
		s.g.Eventually(func(g gomega.Gomega) {
			deleted = slices.IndexFunc(pods, func(p corev1.Pod) bool { return s.gone(g, &p) })
			g.Expect(deleted).NotTo(gomega.Equal(-1), "none of %d old pods deleted", len(pods))
		}).Should(gomega.Succeed())
		s.replaceOnNode(pods[deleted], ers)
		pods = slices.Delete(pods, deleted, deleted+1)
	}
}

// replaceOnNode waits for pod to be deleted, finishes its deletion as a
// kubelet would, then runs the pod of ers that takes its node and returns it.
func (s *scenario) replaceOnNode(pod corev1.Pod, ers string) corev1.Pod {
	s.t.Helper()
	s.g.Eventually(func(g gomega.Gomega) { g.Expect(s.gone(g, &pod)).To(gomega.BeTrue()) }).Should(gomega.Succeed())
	s.finishDeletion(&pod)
	next := s.podOn(ers, placement.TargetNode(&pod))
	s.runPod(&next)
	return next
}

// podOn waits for the live pod of ers on node and returns it.
func (s *scenario) podOn(ers, node string) corev1.Pod {
	s.t.Helper()
	var found corev1.Pod
	s.g.Eventually(func(g gomega.Gomega) {
		var live []corev1.Pod
		for _, p := range podsByNode(s.podsOf(g, ers))[node] {
			if p.DeletionTimestamp == nil {
				live = append(live, p)
			}
		}
		g.Expect(live).To(gomega.HaveLen(1), "live pods of %s on node %s", ers, node)
		found = live[0]
	}).Should(gomega.Succeed())
	return found
}

func (s *scenario) annotate(eds *v1alpha1.ExtendedDaemonSet, key, value string) {
	s.t.Helper()
	s.updateEDS(eds, func(e *v1alpha1.ExtendedDaemonSet) {
		if e.Annotations == nil {
			e.Annotations = map[string]string{}
		}
		e.Annotations[key] = value
	})
}

// A canary whose image cannot be pulled is paused at once (no
// maxSlowStartDuration), then failed when canaryTimeout runs out; pausing
// never promotes it.
func TestImagePullErrorPausesThenTimesOut(t *testing.T) {
	s := newScenario(t)
	nodes := []*corev1.Node{s.createNode("a", nil), s.createNode("b", nil)}
	eds := s.newEDS("agent", imageV1)
	eds.Spec.Strategy.Canary = &v1alpha1.CanaryStrategy{
		Replicas:  ptr.To(intstr.FromInt32(1)),
		Duration:  &metav1.Duration{Duration: 5 * time.Second},
		AutoPause: &v1alpha1.CanaryAutoPause{},
		AutoFail:  &v1alpha1.CanaryAutoFail{CanaryTimeout: &metav1.Duration{Duration: 20 * time.Second}},
	}
	first, stable := s.createRolledOut(eds, nodes...)

	s.setImage(eds, "registry.example/agent:does-not-exist")
	var canaryNode, second string
	s.g.Eventually(func(g gomega.Gomega) {
		c := s.getEDS(g, eds.Name).Status.Canary
		g.Expect(c).NotTo(gomega.BeNil())
		g.Expect(c.Nodes).To(gomega.HaveLen(1))
		canaryNode, second = c.Nodes[0], c.ReplicaSet
	}).Should(gomega.Succeed())
	s.g.Eventually(func(g gomega.Gomega) { g.Expect(s.gone(g, ptr.To(stable[canaryNode]))).To(gomega.BeTrue()) }).Should(gomega.Succeed())
	s.finishDeletion(ptr.To(stable[canaryNode]))
	pod := s.podOn(second, canaryNode)
	s.setPodStatus(pod.Name, func(st *corev1.PodStatus) {
		st.Phase = corev1.PodPending
		st.ContainerStatuses = []corev1.ContainerStatus{{Name: "agent", Image: pod.Spec.Containers[0].Image,
			State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ImagePullBackOff", Message: "not found"}}}}
	})

	s.g.Eventually(func(g gomega.Gomega) {
		e := s.getEDS(g, eds.Name)
		g.Expect(e.Status.Canary).NotTo(gomega.BeNil())
		g.Expect(e.Status.Canary.Paused).To(gomega.BeTrue())
		g.Expect(e.Status.Canary.Reason).To(gomega.Equal("ImagePullBackOff"))
		g.Expect(conditions.GetReason(e, v1alpha1.ReconcilingCondition)).To(gomega.Equal(v1alpha1.ReasonCanaryPaused))
		g.Expect(e.Status.State).To(gomega.Equal(v1alpha1.StateCanaryPaused))
		g.Expect(kstatus(g, e)).To(gomega.Equal(status.InProgressStatus))
	}).Should(gomega.Succeed())
	s.g.Eventually(func(g gomega.Gomega) {
		e := s.getEDS(g, eds.Name)
		g.Expect(e.Status.ActiveReplicaSet).To(gomega.Equal(first), "a paused canary was promoted")
		g.Expect(e.Status.Canary.Failed).To(gomega.BeTrue())
		g.Expect(e.Status.Canary.Reason).To(gomega.Equal("TimeoutExceeded"))
		g.Expect(conditions.GetReason(e, v1alpha1.StalledCondition)).To(gomega.Equal(v1alpha1.ReasonCanaryFailed))
		g.Expect(conditions.GetMessage(e, v1alpha1.StalledCondition)).To(gomega.ContainSubstring("canaryTimeout"))
		g.Expect(kstatus(g, e)).To(gomega.Equal(status.FailedStatus))
	}).WithTimeout(time.Minute).Should(gomega.Succeed())
	// The canary node goes back to the active template.
	s.replaceOnNode(pod, first)
}
