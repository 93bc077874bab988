package e2e

import (
	"sync"
	"testing"
	"time"

	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
	"github.com/extendeddaemonset/extendeddaemonset/test/argocd"
	"github.com/extendeddaemonset/extendeddaemonset/test/invariants"
)

// deadlineNodes is the size of the progress deadline test's node group:
// more nodes than maxUnavailable, so the rolling update has old pods left
// to wait on.
const deadlineNodes = 3

// A rolling update whose new pods never become available (their image
// cannot be pulled) makes no progress: once progressDeadlineSeconds has
// passed since the last change, and not before, the ExtendedDaemonSet is
// Stalled with reason ProgressDeadlineExceeded, naming a stuck node and
// why, which Flux reads as Failed and Argo CD as Degraded. With the old
// image back, the rollout goes on and the stall clears: Current, Healthy.
func TestProgressDeadlineStallsThenClears(t *testing.T) {
	s := newScenario(t)
	const group = "deadline"
	nodes := groupNodeNames(group, deadlineNodes)
	s.addNodeGroup(group, nodes...)
	deadline := 15 * time.Second
	eds := agentEDS(s.ns, "agent", "v1")
	eds.Spec.Template.Spec.NodeSelector = onGroup(group)
	eds.Spec.ProgressDeadlineSeconds = ptr.To(int32(deadline / time.Second))
	s.create(eds)
	s.expectRolledOut(eds, "v1", nodes)

	s.failImagePulls(eds, agentImage("v2"))
	changed := time.Now()
	s.update(eds, func(e *v1alpha1.ExtendedDaemonSet) { setVersion(e, "v2") })
	stalled, latest := s.expectStalled(eds, v1alpha1.ReasonProgressDeadlineExceeded, "ErrImagePull")
	s.g.Expect(stalled.Message).To(gomega.ContainSubstring("e2e-"+group+"-"), "the message names a stuck node")
	// The condition's time is in whole seconds, rounded down.
	s.g.Expect(stalled.LastTransitionTime.Time).To(gomega.BeTemporally(">=", changed.Add(deadline-time.Second)),
		"stalled before the deadline")
	s.t.Logf("Stalled %s after the template changed (seen after %s): %s",
		stalled.LastTransitionTime.Sub(changed).Round(time.Second), time.Since(changed).Round(100*time.Millisecond), stalled.Message)
	stuck := &v1alpha1.ExtendedDaemonSetReplicaSet{}
	key := client.ObjectKey{Namespace: eds.Namespace, Name: latest.Status.ActiveReplicaSet}
	s.g.Expect(env.Client.Get(s.ctx, key, stuck)).To(gomega.Succeed())
	s.expectWarning(stuck, v1alpha1.ReasonProgressDeadlineExceeded, "ErrImagePull")

	s.update(eds, func(e *v1alpha1.ExtendedDaemonSet) { setVersion(e, "v1") })
	s.expectRolledOut(eds, "v1", nodes)
}

// expectStalled waits until eds, at its current generation, is Stalled
// for reason with a message mentioning every string of mentions, and checks
// what GitOps tools make of it: Failed for kstatus, Degraded for Argo CD.
// It returns the Stalled condition and the ExtendedDaemonSet.
func (s *scenario) expectStalled(eds *v1alpha1.ExtendedDaemonSet, reason string, mentions ...string) (*metav1.Condition, *v1alpha1.ExtendedDaemonSet) {
	s.t.Helper()
	var stalled *metav1.Condition
	var latest *v1alpha1.ExtendedDaemonSet
	s.g.Eventually(func(g gomega.Gomega) {
		latest = s.get(eds)
		g.Expect(latest.Status.ObservedGeneration).To(gomega.Equal(latest.Generation), "observedGeneration")
		conds := latest.Status.Conditions
		stalled = apimeta.FindStatusCondition(conds, v1alpha1.StalledCondition)
		g.Expect(stalled).NotTo(gomega.BeNil(), "Stalled in %v", conds)
		g.Expect(stalled.Status).To(gomega.Equal(metav1.ConditionTrue))
		g.Expect(stalled.Reason).To(gomega.Equal(reason), stalled.Message)
		for _, m := range mentions {
			g.Expect(stalled.Message).To(gomega.ContainSubstring(m))
		}
		g.Expect(apimeta.IsStatusConditionFalse(conds, v1alpha1.ReadyCondition)).To(gomega.BeTrue(), "Ready in %v", conds)
		g.Expect(apimeta.FindStatusCondition(conds, v1alpha1.ReconcilingCondition)).To(gomega.BeNil())
		res := kstatusOf(g, latest)
		g.Expect(res.Status).To(gomega.Equal(status.FailedStatus), res.Message)
		health, message := argoHealthOf(g, latest)
		g.Expect(health).To(gomega.Equal(argocd.Degraded), "Argo CD health: %s", message)
	}).WithTimeout(rolloutTimeout).WithPolling(pollInterval).Should(gomega.Succeed())
	return stalled, latest
}

// failImagePulls acts, until the test ends, as the kubelet of every node
// for the pods of eds that run image: once kwok has started one, it
// reports that its container exited and the image can no longer be
// pulled, so the pod is never ready again. kwok leaves a started pod's
// status alone, so the report sticks. It reacts to the pod watch rather
// than polling, so that the controller sees such a pod ready as briefly as
// a watch allows.
func (s *scenario) failImagePulls(eds *v1alpha1.ExtendedDaemonSet, image string) {
	s.t.Helper()
	list, rw, err := listAndWatchPods(s.ctx, eds.Namespace, edsPods(eds.Name))
	s.g.Expect(err).NotTo(gomega.HaveOccurred())
	for i := range list.Items {
		s.failImagePull(&list.Items[i], image)
	}
	var wg sync.WaitGroup
	wg.Go(func() {
		for ev := range rw.ResultChan() {
			if pod, ok := ev.Object.(*corev1.Pod); ok {
				s.failImagePull(pod, image)
			}
		}
	})
	s.t.Cleanup(func() { rw.Stop(); wg.Wait() })
}

// failImagePull reports pod's image pull failure if it runs image and
// kwok has started it. A write that conflicts is dropped: the newer
// version it lost to comes as an event of its own.
func (s *scenario) failImagePull(pod *corev1.Pod, image string) {
	if pod.DeletionTimestamp != nil || pod.Spec.Containers[0].Image != image || !invariants.RunningAndReady(pod) {
		return
	}
	restarted(1, "ErrImagePull")(&pod.Status)
	if err := env.Client.Status().Update(s.ctx, pod); client.IgnoreNotFound(err) != nil && !apierrors.IsConflict(err) {
		s.t.Logf("reporting the image pull failure of pod %s: %v", pod.Name, err)
	}
}
