package e2e

import (
	"testing"
	"time"

	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
	"github.com/extendeddaemonset/extendeddaemonset/test/invariants"
)

// A healthy auto canary runs the new template on its nodes only, then is
// promoted once its duration has elapsed, and the rolling update takes
// every other node.
func TestCanaryHappyPathPromotes(t *testing.T) {
	s := newScenario(t)
	nodes := s.nodeNames()
	eds := agentEDS(s.ns, "agent", "v1")
	eds.Spec.Strategy.Canary = &v1alpha1.CanaryStrategy{
		Replicas: ptr.To(intstr.FromInt32(2)), Duration: &metav1.Duration{Duration: 10 * time.Second},
	}
	s.create(eds)
	s.expectRolledOut(eds, "v1", nodes)

	s.update(eds, func(e *v1alpha1.ExtendedDaemonSet) { setVersion(e, "v2") })
	var canary string
	s.g.Eventually(func(g gomega.Gomega) {
		latest := s.get(eds)
		g.Expect(latest.Status.Canary).NotTo(gomega.BeNil())
		g.Expect(latest.Status.Canary.Nodes).To(gomega.HaveLen(2))
		g.Expect(apimeta.FindStatusCondition(latest.Status.Conditions, v1alpha1.ReconcilingCondition)).To(
			gomega.HaveField("Reason", v1alpha1.ReasonCanaryRunning))
		g.Expect(latest.Status.State).To(gomega.Equal(v1alpha1.StateCanary))
		g.Expect(kstatusOf(g, latest).Status).To(gomega.Equal(status.InProgressStatus))
		canary = latest.Status.Canary.ReplicaSet
		var onCanary, onStable []string
		for _, pod := range s.pods(g, eds) {
			if pod.DeletionTimestamp != nil {
				continue
			}
			if pod.Spec.Containers[0].Image == agentImage("v2") {
				onCanary = append(onCanary, pod.Spec.NodeName)
			} else {
				onStable = append(onStable, pod.Spec.NodeName)
			}
		}
		g.Expect(onCanary).To(gomega.ConsistOf(latest.Status.Canary.Nodes))
		g.Expect(onStable).To(gomega.ConsistOf(without(nodes, latest.Status.Canary.Nodes...)))
	}).WithTimeout(rolloutTimeout).WithPolling(pollInterval).Should(gomega.Succeed())

	latest, active := s.expectRolledOut(eds, "v2", nodes)
	s.g.Expect(active.Name).To(gomega.Equal(canary))
	s.g.Expect(latest.Status.Canary).To(gomega.BeNil())
	s.expectEvent(eds, "CanaryStarted", canary)
	s.expectEvent(eds, "CanaryPromoted", canary)
}

// A crash-looping canary fails on its own: the ExtendedDaemonSet is
// Stalled with the cause, its spec untouched, the canary node back on the
// stable template; a new template starts a fresh canary.
func TestCrashLoopingCanaryFails(t *testing.T) {
	s := newScenario(t)
	nodes := s.nodeNames()
	eds := agentEDS(s.ns, "agent", "v1")
	eds.Spec.Strategy.Canary = &v1alpha1.CanaryStrategy{
		Replicas: ptr.To(intstr.FromInt32(1)), Duration: &metav1.Duration{Duration: 5 * time.Minute},
		AutoFail: &v1alpha1.CanaryAutoFail{MaxRestarts: ptr.To[int32](2)},
	}
	s.create(eds)
	s.expectRolledOut(eds, "v1", nodes)
	s.update(eds, func(e *v1alpha1.ExtendedDaemonSet) { setVersion(e, "v2") })
	written := s.get(eds)

	var canary, node string
	s.g.Eventually(func(g gomega.Gomega) {
		latest := s.get(eds)
		g.Expect(latest.Status.Canary).NotTo(gomega.BeNil())
		g.Expect(latest.Status.Canary.Nodes).To(gomega.HaveLen(1))
		canary, node = latest.Status.Canary.ReplicaSet, latest.Status.Canary.Nodes[0]
		pod := s.livePodOn(g, eds, node)
		g.Expect(pod.Labels[v1alpha1.ExtendedDaemonSetReplicaSetNameLabel]).To(gomega.Equal(canary))
		g.Expect(invariants.RunningAndReady(&pod)).To(gomega.BeTrue())
	}).WithTimeout(rolloutTimeout).WithPolling(pollInterval).Should(gomega.Succeed())

	// Crash as a kubelet would report it, until the controller reacts.
	s.g.Eventually(func(g gomega.Gomega) {
		pod := s.livePodOn(g, eds, node)
		if pod.Labels[v1alpha1.ExtendedDaemonSetReplicaSetNameLabel] == canary && len(pod.Status.ContainerStatuses) > 0 {
			pod.Status.ContainerStatuses[0].RestartCount = 3
			pod.Status.ContainerStatuses[0].State = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}}
			_ = env.Client.Status().Update(s.ctx, &pod)
		}
		latest := s.get(eds)
		g.Expect(latest.Status.Canary).NotTo(gomega.BeNil())
		g.Expect(latest.Status.Canary.Failed).To(gomega.BeTrue())
		g.Expect(latest.Status.Canary.Reason).To(gomega.Equal("CrashLoopBackOff"))
		g.Expect(apimeta.FindStatusCondition(latest.Status.Conditions, v1alpha1.StalledCondition)).To(gomega.And(
			gomega.HaveField("Reason", v1alpha1.ReasonCanaryFailed), gomega.HaveField("Message", gomega.ContainSubstring(canary))))
		g.Expect(kstatusOf(g, latest).Status).To(gomega.Equal(status.FailedStatus))
	}).WithTimeout(rolloutTimeout).WithPolling(time.Second).Should(gomega.Succeed())
	s.expectEvent(eds, "CanaryFailed", canary)

	after := s.get(eds)
	s.g.Expect(specJSON(s.g, after)).To(gomega.Equal(specJSON(s.g, written)), "the controller modified the spec")
	s.g.Expect(after.Generation).To(gomega.Equal(written.Generation))
	s.g.Eventually(func(g gomega.Gomega) {
		for _, pod := range s.pods(g, eds) {
			if pod.DeletionTimestamp == nil {
				g.Expect(pod.Spec.Containers[0].Image).To(gomega.Equal(agentImage("v1")), "pod on %s", pod.Spec.NodeName)
				g.Expect(invariants.RunningAndReady(&pod)).To(gomega.BeTrue())
			}
		}
	}).WithTimeout(rolloutTimeout).WithPolling(pollInterval).Should(gomega.Succeed())

	s.update(eds, func(e *v1alpha1.ExtendedDaemonSet) { setVersion(e, "v3") })
	s.g.Eventually(func(g gomega.Gomega) {
		latest := s.get(eds)
		g.Expect(latest.Status.Canary).NotTo(gomega.BeNil())
		g.Expect(latest.Status.Canary.ReplicaSet).NotTo(gomega.Equal(canary))
		g.Expect(latest.Status.Canary.Failed).To(gomega.BeFalse())
		g.Expect(apimeta.FindStatusCondition(latest.Status.Conditions, v1alpha1.ReconcilingCondition)).To(
			gomega.HaveField("Reason", v1alpha1.ReasonCanaryRunning))
	}).WithTimeout(rolloutTimeout).WithPolling(pollInterval).Should(gomega.Succeed())
}

// A canary whose image can no longer be pulled pauses at once (no
// maxSlowStartDuration), is never promoted, and fails when canaryTimeout
// runs out: Stalled, the canary node back on the stable template.
func TestCanaryImagePullErrorPausesThenTimesOut(t *testing.T) {
	s := newScenario(t)
	eds, nodes := s.createAgent(&v1alpha1.CanaryStrategy{
		Replicas: ptr.To(intstr.FromInt32(1)), Duration: &metav1.Duration{Duration: canaryHeadStart},
		AutoPause: &v1alpha1.CanaryAutoPause{},
		AutoFail:  &v1alpha1.CanaryAutoFail{CanaryTimeout: &metav1.Duration{Duration: canaryHeadStart + 10*time.Second}},
	})
	stable := eds.Status.ActiveReplicaSet

	s.update(eds, func(e *v1alpha1.ExtendedDaemonSet) { setVersion(e, "v2") })
	running := s.expectCanary(eds, canaryRunning, "").Status.Canary
	// The container exited, and its image is gone from the registry.
	s.setPodStatus(eds, running.ReplicaSet, running.Nodes, restarted(1, "ImagePullBackOff"))
	paused := s.expectCanary(eds, canaryPaused, "ImagePullBackOff")
	s.g.Expect(paused.Status.Canary.ReplicaSet).To(gomega.Equal(running.ReplicaSet))
	s.expectWarning(eds, "CanaryPaused", running.ReplicaSet, "ImagePullBackOff")

	failed := s.expectCanary(eds, canaryFailed, "TimeoutExceeded")
	s.g.Expect(failed.Status.ActiveReplicaSet).To(gomega.Equal(stable), "a paused canary was promoted")
	s.g.Expect(apimeta.FindStatusCondition(failed.Status.Conditions, v1alpha1.StalledCondition)).To(
		gomega.HaveField("Message", gomega.ContainSubstring("canaryTimeout")))
	s.expectWarning(eds, "CanaryFailed", running.ReplicaSet, "TimeoutExceeded")
	s.expectVersions(eds, nodes, "v1", nil, "")
}

// livePodOn returns the one non-terminating pod of eds on node, failing g
// (and so retrying an Eventually) while there is not exactly one.
func (s *scenario) livePodOn(g gomega.Gomega, eds *v1alpha1.ExtendedDaemonSet, node string) corev1.Pod {
	var live []corev1.Pod
	for _, pod := range s.pods(g, eds) {
		if pod.Spec.NodeName == node && pod.DeletionTimestamp == nil {
			live = append(live, pod)
		}
	}
	g.Expect(live).To(gomega.HaveLen(1), "live pods of %s on %s", eds.Name, node)
	return live[0]
}
