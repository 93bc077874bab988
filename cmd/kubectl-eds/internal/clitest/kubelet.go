package clitest

import (
	"context"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
	"github.com/extendeddaemonset/extendeddaemonset/controllers/placement"
)

// CrashTag in an image's tag makes the kubelet report its container
// crash-looping: not ready, restarted CrashRestarts times.
const (
	CrashTag      = "crash"
	CrashRestarts = 5
)

// kubeletPeriod is how often the kubelet looks at the pods.
const kubeletPeriod = 50 * time.Millisecond

// runKubelet plays the scheduler and the kubelets of every node for the
// pods of ExtendedDaemonSets until ctx ends: binds a pod to the node its
// affinity names, reports it running with the images of its spec (ready,
// or crash-looping for an image tagged CrashTag), and removes terminating
// pods at once.
func runKubelet(ctx context.Context, c client.Client) {
	ticker := time.NewTicker(kubeletPeriod)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
		}
		var pods corev1.PodList
		if err := c.List(ctx, &pods, client.HasLabels{v1alpha1.ExtendedDaemonSetNameLabel}); err != nil {
			continue
		}
		for i := range pods.Items {
			// A conflict or a pod gone meanwhile is looked at again on the
			// next tick.
			_ = tend(ctx, c, &pods.Items[i])
		}
	}
}

func tend(ctx context.Context, c client.Client, pod *corev1.Pod) error {
	switch {
	case pod.DeletionTimestamp != nil:
		return client.IgnoreNotFound(c.Delete(ctx, pod, client.GracePeriodSeconds(0)))
	case pod.Spec.NodeName == "":
		node := placement.TargetNode(pod)
		if node == "" {
			return nil
		}
		binding := &corev1.Binding{
			ObjectMeta: metav1.ObjectMeta{Name: pod.Name, Namespace: pod.Namespace},
			Target:     corev1.ObjectReference{Kind: "Node", Name: node},
		}
		return c.SubResource("binding").Create(ctx, pod, binding)
	case !running(pod):
		pod.Status = runningStatus(pod)
		err := c.Status().Update(ctx, pod)
		if apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
			return nil
		}
		return err
	}
	return nil
}

// running says the pod's status already reports what runningStatus would.
func running(pod *corev1.Pod) bool {
	if pod.Status.Phase != corev1.PodRunning || len(pod.Status.ContainerStatuses) != len(pod.Spec.Containers) {
		return false
	}
	for i, c := range pod.Spec.Containers {
		if pod.Status.ContainerStatuses[i].Image != c.Image {
			return false
		}
	}
	return true
}

func crashes(image string) bool {
	_, tag, _ := strings.Cut(image[strings.LastIndex(image, "/")+1:], ":")
	return strings.Contains(tag, CrashTag)
}

func runningStatus(pod *corev1.Pod) corev1.PodStatus {
	now := metav1.Now()
	ready := corev1.ConditionTrue
	var statuses []corev1.ContainerStatus
	for _, c := range pod.Spec.Containers {
		st := corev1.ContainerStatus{Name: c.Name, Image: c.Image, ImageID: c.Image, Ready: true, Started: new(true),
			State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: now}}}
		if crashes(c.Image) {
			ready = corev1.ConditionFalse
			st.Ready, st.Started, st.RestartCount = false, new(false), CrashRestarts
			st.State = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff", Message: "back-off restarting failed container"}}
		}
		statuses = append(statuses, st)
	}
	start := pod.Status.StartTime
	if start == nil {
		start = &now
	}
	return corev1.PodStatus{
		Phase:     corev1.PodRunning,
		StartTime: start,
		HostIP:    "10.0.0.1",
		PodIP:     "10.1.0.1",
		Conditions: []corev1.PodCondition{
			{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: now},
			{Type: corev1.PodInitialized, Status: corev1.ConditionTrue, LastTransitionTime: now},
			{Type: corev1.ContainersReady, Status: ready, LastTransitionTime: now},
			{Type: corev1.PodReady, Status: ready, LastTransitionTime: now},
		},
		ContainerStatuses: statuses,
	}
}
