package prometheus

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

const appContainer = "app"

// createRunningPod creates a pod and reports it Running and Ready with
// restarts restarts of its one container, as a kubelet would.
func createRunningPod(ctx context.Context, c client.Client, name string, podLabels map[string]string, restarts int32) (*corev1.Pod, error) {
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: metav1.NamespaceDefault, Name: name, Labels: podLabels},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: appContainer, Image: "registry.k8s.io/pause:3.10"}}},
	}
	if err := c.Create(ctx, pod); err != nil {
		return nil, fmt.Errorf("creating pod %s: %w", name, err)
	}
	now := metav1.NewTime(time.Now())
	pod.Status = corev1.PodStatus{
		Phase:      corev1.PodRunning,
		Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: now}},
		ContainerStatuses: []corev1.ContainerStatus{{
			Name:  appContainer,
			Image: "registry.k8s.io/pause:3.10",
			Ready: true,
			State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: now}},
		}},
	}
	return pod, setRestarts(ctx, c, pod, restarts)
}

// setRestarts writes the container's restart count through the status
// subresource, the way a kubelet reports a crashed and restarted container.
func setRestarts(ctx context.Context, c client.Client, pod *corev1.Pod, restarts int32) error {
	pod.Status.ContainerStatuses[0].RestartCount = restarts
	if err := c.Status().Update(ctx, pod); err != nil {
		return fmt.Errorf("updating status of pod %s: %w", pod.Name, err)
	}
	return nil
}
