package monitoring

import (
	"context"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/extendeddaemonset/extendeddaemonset/controllers/placement"
)

// createNode creates a Ready node without taints. The API server's
// TaintNodesByCondition admission gives it a not-ready taint that no node
// lifecycle controller runs here to remove, so the test removes it.
func createNode(ctx context.Context, t *testing.T, c client.Client, name string) {
	t.Helper()
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if err := c.Create(ctx, node); err != nil {
		t.Fatalf("creating node %s: %v", name, err)
	}
	now := metav1.Now()
	node.Status.Conditions = []corev1.NodeCondition{{
		Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady",
		LastHeartbeatTime: now, LastTransitionTime: now,
	}}
	if err := c.Status().Update(ctx, node); err != nil {
		t.Fatalf("node %s status: %v", name, err)
	}
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := c.Get(ctx, client.ObjectKeyFromObject(node), node); err != nil {
			return err
		}
		node.Spec.Taints = nil
		return c.Update(ctx, node)
	})
	if err != nil {
		t.Fatalf("untainting node %s: %v", name, err)
	}
}

// runKubelet does, until the end of the test, what the scheduler and the
// kubelets would for the pods of namespace: binds new pods to the node their
// affinity names, reports them Running and Ready, and removes deleted pods.
func runKubelet(t *testing.T, c client.Client, namespace string) {
	ctx, cancel := context.WithCancel(context.WithoutCancel(t.Context()))
	var wg sync.WaitGroup
	t.Cleanup(func() { cancel(); wg.Wait() })
	wg.Go(func() {
		ticker := time.NewTicker(100 * time.Millisecond)
		defer ticker.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-ticker.C:
			}
			var pods corev1.PodList
			if err := c.List(ctx, &pods, client.InNamespace(namespace)); err != nil {
				continue
			}
			for i := range pods.Items {
				// Errors are conflicts with the controller or races with
				// deletion; the next tick tries again.
				_ = tend(ctx, c, &pods.Items[i])
			}
		}
	})
}

func tend(ctx context.Context, c client.Client, pod *corev1.Pod) error {
	if pod.DeletionTimestamp != nil {
		return client.IgnoreNotFound(c.Delete(ctx, pod, client.GracePeriodSeconds(0)))
	}
	if pod.Spec.NodeName == "" {
		node := placement.TargetNode(pod)
		if node == "" {
			return nil
		}
		binding := &corev1.Binding{
			ObjectMeta: metav1.ObjectMeta{Name: pod.Name, Namespace: pod.Namespace},
			Target:     corev1.ObjectReference{Kind: "Node", Name: node},
		}
		if err := c.SubResource("binding").Create(ctx, pod, binding); err != nil && !apierrors.IsConflict(err) {
			return err
		}
	}
	if pod.Status.Phase == corev1.PodRunning {
		return nil
	}
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		live := &corev1.Pod{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(pod), live); err != nil {
			return err
		}
		now := metav1.Now()
		live.Status.Phase = corev1.PodRunning
		live.Status.StartTime = &now
		live.Status.Conditions = []corev1.PodCondition{
			{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: now},
			{Type: corev1.PodInitialized, Status: corev1.ConditionTrue, LastTransitionTime: now},
			{Type: corev1.ContainersReady, Status: corev1.ConditionTrue, LastTransitionTime: now},
			{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: now},
		}
		live.Status.ContainerStatuses = nil
		for _, ctr := range live.Spec.Containers {
			live.Status.ContainerStatuses = append(live.Status.ContainerStatuses, corev1.ContainerStatus{
				Name: ctr.Name, Image: ctr.Image, Ready: true, Started: ptr.To(true),
				State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: now}},
			})
		}
		return c.Status().Update(ctx, live)
	})
}
