// Package envkubelet plays, on an API server without nodes (envtest), the
// parts of the scheduler and the kubelets that pods of ExtendedDaemonSets
// need to run: it creates Ready nodes, binds each pod to the node its
// affinity names, reports it Running with the images of its spec (Ready,
// or crash-looping when an image's tag says so), and removes terminating
// pods at once.
package envkubelet

import (
	"context"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/extendeddaemonset/extendeddaemonset/controllers/placement"
)

// CrashTag in an image's tag makes its container crash-loop: not ready,
// restarted CrashRestarts times.
const (
	CrashTag      = "crash"
	CrashRestarts = 5
)

// period is how often the kubelet looks at the pods.
const period = 50 * time.Millisecond

// CreateNode creates a Ready node without taints. The API server's
// TaintNodesByCondition admission taints a new node not-ready, and no node
// lifecycle controller runs on envtest to lift it.
func CreateNode(ctx context.Context, c client.Client, name string, labels map[string]string) (*corev1.Node, error) {
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}
	if err := c.Create(ctx, node); err != nil {
		return nil, fmt.Errorf("creating node %s: %w", name, err)
	}
	now := metav1.Now()
	node.Status.Conditions = []corev1.NodeCondition{{
		Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady",
		LastHeartbeatTime: now, LastTransitionTime: now,
	}}
	if err := c.Status().Update(ctx, node); err != nil {
		return nil, fmt.Errorf("reporting node %s ready: %w", name, err)
	}
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := c.Get(ctx, client.ObjectKeyFromObject(node), node); err != nil {
			return err
		}
		node.Spec.Taints = nil
		return c.Update(ctx, node)
	})
	if err != nil {
		return nil, fmt.Errorf("untainting node %s: %w", name, err)
	}
	return node, nil
}

// Run tends the pods that opts select until ctx ends.
func Run(ctx context.Context, c client.Client, opts ...client.ListOption) {
	ticker := time.NewTicker(period)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
		}
		var pods corev1.PodList
		if err := c.List(ctx, &pods, opts...); err != nil {
			continue
		}
		for i := range pods.Items {
			// A conflict with the controller, or a pod gone meanwhile, is
			// looked at again on the next tick.
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

// Crashes says whether the kubelet crash-loops a container of image.
func Crashes(image string) bool {
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
		if Crashes(c.Image) {
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
