package chaos

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
	"github.com/extendeddaemonset/extendeddaemonset/test/harness/simcluster"
	actions "github.com/extendeddaemonset/extendeddaemonset/test/scenario"
)

// The walk's actions on nodes and pods, played as their kubelet, the node
// lifecycle controller, an eviction or a person would.

// crashLoopInterval is how often a crash-looping container restarts.
const crashLoopInterval = 5 * time.Second

// addNodes adds n nodes of the walk, spread over the zones.
func (w *walker) addNodes(n int) {
	for i := range n {
		w.addNode(i % walkZones)
	}
}

// addNode adds a Ready node of the walk in zone, and says its name.
func (w *walker) addNode(zone int) string {
	w.s.t.Helper()
	w.added++
	name := fmt.Sprintf("%s-%d", w.s.ns, w.added)
	// Labelled before kwok makes it Ready, so the walk's agent never sees
	// it half made.
	node := simcluster.NewNode(name)
	node.Labels[groupLabel] = w.s.ns
	node.Labels[walkZoneLabel] = fmt.Sprintf("zone-%d", zone)
	w.s.g.Expect(w.s.env.client.Create(w.s.ctx, node)).To(gomega.Succeed())
	w.nodes = append(w.nodes, name)
	return name
}

// onNode plays f on the index-th node of the walk, modulo those there are.
func (w *walker) onNode(index int, f func(string) string) string {
	if len(w.nodes) == 0 {
		return "skipped: no node left"
	}
	node := w.nodes[index%len(w.nodes)]
	return node + ": " + f(node)
}

// updateNode applies mutate to node, its status too when status is set.
func (w *walker) updateNode(name string, status bool, mutate func(*corev1.Node)) {
	w.s.t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		node := &corev1.Node{}
		if err := w.s.env.client.Get(w.s.ctx, client.ObjectKey{Name: name}, node); err != nil {
			return err
		}
		mutate(node)
		if status {
			return w.s.env.client.Status().Update(w.s.ctx, node)
		}
		return w.s.env.client.Update(w.s.ctx, node)
	})
	w.s.g.Expect(err).NotTo(gomega.HaveOccurred(), "updating node %s", name)
}

// removeNode deletes node, then its pods: nothing else in the simulated
// cluster collects the pods of a node that is gone.
func (w *walker) removeNode(node string) string {
	w.s.t.Helper()
	err := w.s.env.client.Delete(w.s.ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: node}})
	w.s.g.Expect(client.IgnoreNotFound(err)).To(gomega.Succeed())
	w.nodes = slices.DeleteFunc(w.nodes, func(n string) bool { return n == node })
	delete(w.stopped, node)
	for _, pod := range w.podsOn(node) {
		w.forceDelete(&pod)
	}
	return "removed"
}

func (w *walker) forceDelete(pod *corev1.Pod) {
	err := w.s.env.client.Delete(context.WithoutCancel(w.s.ctx), pod, client.GracePeriodSeconds(0))
	w.s.g.Expect(client.IgnoreNotFound(err)).To(gomega.Succeed())
}

func (w *walker) cordon(node string, on bool) string {
	w.updateNode(node, false, func(n *corev1.Node) { n.Spec.Unschedulable = on })
	if on {
		return "cordoned"
	}
	return "uncordoned"
}

// nodeNotReady stops the node's kubelet: kwok lets go of it, its Ready
// condition turns Unknown, and its pods turn unready, as the node
// lifecycle controller marks them.
func (w *walker) nodeNotReady(node string) string {
	w.updateNode(node, false, func(n *corev1.Node) { delete(n.Annotations, simcluster.FakeNodeAnnotation) })
	w.updateNode(node, true, func(n *corev1.Node) {
		for i := range n.Status.Conditions {
			if c := &n.Status.Conditions[i]; c.Type == corev1.NodeReady {
				c.Status, c.Reason, c.Message = corev1.ConditionUnknown, "NodeStatusUnknown", "Kubelet stopped posting node status."
				c.LastTransitionTime = metav1.Now()
			}
		}
	})
	for _, pod := range w.podsOn(node) {
		w.setPodReady(pod, false)
	}
	w.stopped[node] = true
	return "kubelet stopped"
}

// nodeReady starts the node's kubelet again: kwok manages it (and makes
// it Ready) again, and its pods report ready again.
func (w *walker) nodeReady(node string) string {
	back := false
	w.updateNode(node, false, func(n *corev1.Node) {
		back = n.Annotations[simcluster.FakeNodeAnnotation] != "fake"
		if n.Annotations == nil {
			n.Annotations = map[string]string{}
		}
		n.Annotations[simcluster.FakeNodeAnnotation] = "fake"
	})
	if !back {
		return "skipped: its kubelet runs"
	}
	delete(w.stopped, node)
	for _, pod := range w.podsOn(node) {
		if pod.Status.Phase == corev1.PodRunning {
			w.setPodReady(pod, true)
		}
	}
	return "kubelet back"
}

// pods are the walk's pods not being deleted, by name.
func (w *walker) pods() []corev1.Pod {
	w.s.t.Helper()
	var list corev1.PodList
	w.s.g.Expect(w.s.env.client.List(w.s.ctx, &list, client.InNamespace(w.s.ns),
		client.MatchingLabels{v1alpha1.ExtendedDaemonSetNameLabel: w.name})).To(gomega.Succeed())
	live := slices.DeleteFunc(list.Items, func(p corev1.Pod) bool { return p.DeletionTimestamp != nil })
	slices.SortFunc(live, func(a, b corev1.Pod) int {
		switch {
		case a.Name < b.Name:
			return -1
		case a.Name > b.Name:
			return 1
		}
		return 0
	})
	return live
}

func (w *walker) podsOn(node string) []corev1.Pod {
	return slices.DeleteFunc(w.pods(), func(p corev1.Pod) bool { return p.Spec.NodeName != node })
}

// onPod plays a pod action on the index-th pod of the group the action
// names, among those the kubelet started on a node whose kubelet runs.
func (w *walker) onPod(a actions.Action) string {
	pods := slices.DeleteFunc(w.pods(), func(p corev1.Pod) bool { return p.Status.Phase != corev1.PodRunning || w.stopped[p.Spec.NodeName] })
	if a.Pod == actions.CanaryPod {
		cs := w.get().Status.Canary
		pods = slices.DeleteFunc(pods, func(p corev1.Pod) bool {
			return cs == nil || p.Labels[v1alpha1.ExtendedDaemonSetReplicaSetNameLabel] != cs.ReplicaSet
		})
	}
	if len(pods) == 0 {
		return "skipped: no running pod of that kind"
	}
	pod := pods[a.Index%len(pods)]
	what := fmt.Sprintf("pod %s on %s (%s)", pod.Name, pod.Spec.NodeName, pod.Labels[v1alpha1.ExtendedDaemonSetReplicaSetNameLabel])
	switch a.Kind {
	case actions.PodFails:
		w.restart(pod.Name, "")
	case actions.PodCrashLoops:
		w.crashLoop(pod.Name)
	case actions.PodEvicted:
		w.stopCrashLoop(pod.Name)
		return what + ": " + w.evict(pod)
	case actions.PodReady:
		w.stopCrashLoop(pod.Name)
		w.setPodReady(pod, true)
	}
	return what
}

// evict evicts pod through the Eviction API, which marks it
// DisruptionTarget before deleting it.
func (w *walker) evict(pod corev1.Pod) string {
	err := w.s.env.kube.PolicyV1().Evictions(pod.Namespace).Evict(w.s.ctx, &policyv1.Eviction{
		ObjectMeta: metav1.ObjectMeta{Name: pod.Name, Namespace: pod.Namespace},
	})
	switch {
	case apierrors.IsNotFound(err):
		return "already gone"
	case apierrors.IsTooManyRequests(err):
		return "refused: " + err.Error()
	}
	w.s.g.Expect(err).NotTo(gomega.HaveOccurred())
	return "evicted"
}

// updatePod applies mutate to the status of pod name, as its kubelet
// would; false when the pod is gone.
func (w *walker) updatePod(name string, mutate func(*corev1.Pod)) bool {
	w.s.t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		pod := &corev1.Pod{}
		if err := w.s.env.client.Get(context.WithoutCancel(w.s.ctx), types.NamespacedName{Namespace: w.s.ns, Name: name}, pod); err != nil {
			return err
		}
		if pod.DeletionTimestamp != nil {
			return nil
		}
		mutate(pod)
		return w.s.env.client.Status().Update(context.WithoutCancel(w.s.ctx), pod)
	})
	if apierrors.IsNotFound(err) {
		return false
	}
	w.s.g.Expect(err).NotTo(gomega.HaveOccurred(), "updating pod %s", name)
	return true
}

// setPodReady turns the pod's Ready condition, as the node lifecycle
// controller does for a node that stopped, and its kubelet once back.
func (w *walker) setPodReady(pod corev1.Pod, ready bool) {
	status := corev1.ConditionFalse
	if ready {
		status = corev1.ConditionTrue
	}
	w.updatePod(pod.Name, func(p *corev1.Pod) {
		for i := range p.Status.Conditions {
			if c := &p.Status.Conditions[i]; (c.Type == corev1.PodReady || (ready && c.Type == corev1.ContainersReady)) && c.Status != status {
				c.Status, c.LastTransitionTime = status, metav1.Now()
			}
		}
		if ready {
			for i := range p.Status.ContainerStatuses {
				c := &p.Status.ContainerStatuses[i]
				c.Ready, c.Started = true, ptr.To(true)
				c.State = corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.Now()}}
			}
		}
	})
}

// restart has the pod's first container exit and run again, or, given a
// waiting reason, wait for it not ready; false when the pod is gone.
func (w *walker) restart(name, waiting string) bool {
	return w.updatePod(name, func(p *corev1.Pod) {
		if len(p.Status.ContainerStatuses) == 0 {
			return
		}
		now := metav1.Now()
		c := &p.Status.ContainerStatuses[0]
		c.RestartCount++
		c.LastTerminationState = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1, Reason: "Error", StartedAt: now, FinishedAt: now}}
		c.State = corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: now}}
		if waiting != "" {
			c.State = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: waiting}}
		}
		ready := waiting == ""
		c.Ready, c.Started = ready, ptr.To(ready)
		status := corev1.ConditionFalse
		if ready {
			status = corev1.ConditionTrue
		}
		for i := range p.Status.Conditions {
			if cond := &p.Status.Conditions[i]; (cond.Type == corev1.PodReady || cond.Type == corev1.ContainersReady) && cond.Status != status {
				cond.Status, cond.LastTransitionTime = status, now
			}
		}
	})
}

// crashLoop has the pod's container restart every crashLoopInterval, in
// CrashLoopBackOff between, until the pod is gone, made ready, or the walk
// ends.
func (w *walker) crashLoop(name string) {
	if _, looping := w.crashLoops[name]; looping {
		return
	}
	ctx, cancel := context.WithCancel(w.s.ctx)
	w.crashLoops[name] = cancel
	w.restart(name, "CrashLoopBackOff")
	go func() {
		t := time.NewTicker(crashLoopInterval)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				if !w.restartQuietly(ctx, name) {
					return
				}
			}
		}
	}()
}

// restartQuietly is restart from the crash loop's goroutine, where a
// failure cannot fail the test: it ends the loop.
func (w *walker) restartQuietly(ctx context.Context, name string) bool {
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		pod := &corev1.Pod{}
		if err := w.s.env.client.Get(ctx, types.NamespacedName{Namespace: w.s.ns, Name: name}, pod); err != nil {
			return err
		}
		if pod.DeletionTimestamp != nil || len(pod.Status.ContainerStatuses) == 0 {
			return apierrors.NewNotFound(corev1.Resource("pods"), name)
		}
		now := metav1.Now()
		c := &pod.Status.ContainerStatuses[0]
		c.RestartCount++
		c.LastTerminationState = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1, Reason: "Error", StartedAt: now, FinishedAt: now}}
		c.State = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}}
		c.Ready = false
		return w.s.env.client.Status().Update(ctx, pod)
	})
	return err == nil
}

func (w *walker) stopCrashLoop(name string) {
	if cancel, ok := w.crashLoops[name]; ok {
		cancel()
		delete(w.crashLoops, name)
	}
}

// cleanUp ends the crash loops and removes the walk's nodes, its
// ExtendedDaemonSet and every pod left on them, so the scenario's tear
// down finds nothing it waits for: a pod on a node kwok no longer manages
// would never go.
func (w *walker) cleanUp() {
	for name := range w.crashLoops {
		w.stopCrashLoop(name)
	}
	ctx, cancel := context.WithTimeout(context.Background(), cleanupTimeout)
	defer cancel()
	err := w.s.env.client.Delete(ctx, &v1alpha1.ExtendedDaemonSet{ObjectMeta: metav1.ObjectMeta{Namespace: w.s.ns, Name: w.name}},
		client.PropagationPolicy(metav1.DeletePropagationBackground))
	if client.IgnoreNotFound(err) != nil {
		w.s.t.Errorf("deleting the walk's ExtendedDaemonSet: %v", err)
	}
	for _, node := range w.nodes {
		if err := w.s.env.client.Delete(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: node}}); client.IgnoreNotFound(err) != nil {
			w.s.t.Errorf("deleting node %s: %v", node, err)
		}
	}
	var pods corev1.PodList
	if err := w.s.env.client.List(ctx, &pods, client.InNamespace(w.s.ns)); err != nil {
		w.s.t.Errorf("listing the walk's pods: %v", err)
		return
	}
	for i := range pods.Items {
		if err := w.s.env.client.Delete(ctx, &pods.Items[i], client.GracePeriodSeconds(0)); client.IgnoreNotFound(err) != nil {
			w.s.t.Errorf("deleting pod %s: %v", pods.Items[i].Name, err)
		}
	}
}
