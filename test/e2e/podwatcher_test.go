package e2e

// The pod watcher judges a rollout by the pods alone, as a user watching
// the cluster would, independently of what the controller reports.

import (
	"context"
	"fmt"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
	watchtools "k8s.io/client-go/tools/watch"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
	"github.com/extendeddaemonset/extendeddaemonset/controllers/placement"
)

// podWatcher follows the pods of one ExtendedDaemonSet through a watch, and
// after every event measures the state the event stream shows. Events come
// in resourceVersion order, so it sees every state the API server went
// through, not samples of them. Start it before the change it judges.
type podWatcher struct {
	desired map[string]bool
	watcher *watchtools.RetryWatcher
	done    chan struct{}

	mu     sync.Mutex
	pods   map[types.UID]podState
	counts podCounts
	err    error
}

// podState is what the watcher keeps of a pod.
type podState struct {
	node               string
	ready, terminating bool
}

// podCounts are the extremes the watcher saw.
type podCounts struct {
	// MaxUnavailable is the largest number of desired nodes at once without
	// a Ready, non-terminating pod.
	MaxUnavailable int
	// MaxSurging is the largest number of nodes at once holding more than
	// one non-terminating pod.
	MaxSurging int
	// MaxPerNode is the largest number of non-terminating pods on one node.
	MaxPerNode int
	// Events is the number of pod events seen.
	Events int
}

// watchPods starts watching the pods of the ExtendedDaemonSet name in
// namespace; desired are the nodes that should each have a Ready pod.
func watchPods(ctx context.Context, namespace, name string, desired []string) (*podWatcher, error) {
	pods := env.Kube.CoreV1().Pods(namespace)
	selector := v1alpha1.ExtendedDaemonSetNameLabel + "=" + name
	list, err := pods.List(ctx, metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		return nil, fmt.Errorf("listing pods: %w", err)
	}
	rw, err := watchtools.NewRetryWatcherWithContext(ctx, list.ResourceVersion, &cache.ListWatch{
		WatchFuncWithContext: func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
			opts.LabelSelector = selector
			return pods.Watch(ctx, opts)
		},
	})
	if err != nil {
		return nil, fmt.Errorf("watching pods: %w", err)
	}
	w := &podWatcher{desired: map[string]bool{}, watcher: rw, done: make(chan struct{}), pods: map[types.UID]podState{}}
	for _, n := range desired {
		w.desired[n] = true
	}
	for i := range list.Items {
		w.pods[list.Items[i].UID] = stateOf(&list.Items[i])
	}
	w.measure()
	go w.follow()
	return w, nil
}

// Stop ends the watch and returns what it saw, or why it could not see all.
func (w *podWatcher) Stop() (podCounts, error) {
	w.watcher.Stop()
	<-w.done
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.counts, w.err
}

func (w *podWatcher) follow() {
	defer close(w.done)
	for ev := range w.watcher.ResultChan() {
		w.mu.Lock()
		switch ev.Type {
		case watch.Added, watch.Modified, watch.Deleted:
			pod, ok := ev.Object.(*corev1.Pod)
			if !ok {
				w.err = fmt.Errorf("unexpected object %T in pod watch", ev.Object)
				break
			}
			if ev.Type == watch.Deleted {
				delete(w.pods, pod.UID)
			} else {
				w.pods[pod.UID] = stateOf(pod)
			}
			w.counts.Events++
			w.measure()
		case watch.Error:
			// The watch cannot resume: states were missed.
			w.err = fmt.Errorf("pod watch failed: %w", apierrors.FromObject(ev.Object))
		}
		w.mu.Unlock()
	}
}

// measure updates the extremes with the current state; w.mu is held.
func (w *podWatcher) measure() {
	live := map[string]int{}
	readyOn := map[string]bool{}
	for _, p := range w.pods {
		if p.terminating || p.node == "" {
			continue
		}
		live[p.node]++
		if p.ready {
			readyOn[p.node] = true
		}
	}
	unavailable, surging := 0, 0
	for n := range w.desired {
		if !readyOn[n] {
			unavailable++
		}
	}
	for _, count := range live {
		if count > 1 {
			surging++
		}
		w.counts.MaxPerNode = max(w.counts.MaxPerNode, count)
	}
	w.counts.MaxUnavailable = max(w.counts.MaxUnavailable, unavailable)
	w.counts.MaxSurging = max(w.counts.MaxSurging, surging)
}

func stateOf(pod *corev1.Pod) podState {
	return podState{node: placement.TargetNode(pod), ready: runningAndReady(pod), terminating: pod.DeletionTimestamp != nil}
}
