package e2e

import (
	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
	"github.com/extendeddaemonset/extendeddaemonset/test/invariants"
)

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

func podNames(pods []corev1.Pod) []string {
	names := make([]string, len(pods))
	for i := range pods {
		names[i] = pods[i].Name
	}
	return names
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
				g.Expect(invariants.RunningAndReady(&pod)).To(gomega.BeTrue(), "pod %s on %s is not Running and Ready", pod.Name, pod.Spec.NodeName)
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
