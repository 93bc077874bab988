package e2e

// The pod watcher judges a rollout by the pods alone, as a user watching
// the cluster would, independently of what the controller reports.

import (
	"context"
	"fmt"
	"maps"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	toolscache "k8s.io/client-go/tools/cache"
	watchtools "k8s.io/client-go/tools/watch"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
	"github.com/extendeddaemonset/extendeddaemonset/controllers/placement"
	"github.com/extendeddaemonset/extendeddaemonset/test/invariants"
)

// podWatcher follows a set of pods (those of one ExtendedDaemonSet, or all
// the pods of a node agent, whoever owns them) through a watch, and after
// every event measures the state the event stream shows. Events come in
// resourceVersion order, so it sees every state the API server went
// through, not samples of them. Start it before the change it judges.
type podWatcher struct {
	desired map[string]bool
	watcher *watchtools.RetryWatcher
	done    chan struct{}

	mu     sync.Mutex
	pods   map[types.UID]podState
	counts podCounts
	err    error
	// unavailableSince is when each desired node without a Ready pod lost
	// its last one (or the watch started); a node with one is absent.
	unavailableSince map[string]time.Time
	// createdAt and deletedAt are when the watch saw a pod created (not yet
	// seen Ready) and deleted (not yet seen gone). Times are the watcher's
	// own clock, the same for every measure.
	createdAt, deletedAt map[types.UID]time.Time
}

// podState is what the watcher keeps of a pod.
type podState struct {
	node               string
	ready, terminating bool
	// owner is the kind of the pod's controller.
	owner string
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
	// LongestGap is the longest time a desired node went without a Ready,
	// non-terminating pod, and GapNode that node.
	LongestGap time.Duration
	GapNode    string
	// SlowestStart is the longest time from a pod's creation to its first
	// Ready state, and SlowestDeletion from a pod's deletion to its removal,
	// among the pods the watch saw created, and deleted.
	SlowestStart, SlowestDeletion time.Duration
	// Created counts the pods created during the watch by the kind of their
	// controller.
	Created map[string]int
}

// edsPods selects the pods of the ExtendedDaemonSet name.
func edsPods(name string) string { return v1alpha1.ExtendedDaemonSetNameLabel + "=" + name }

// watchPods starts watching the pods in namespace that the label selector
// selects; desired are the nodes that should each have a Ready pod.
func watchPods(ctx context.Context, namespace, selector string, desired []string) (*podWatcher, error) {
	list, rw, err := listAndWatchPods(ctx, namespace, selector)
	if err != nil {
		return nil, err
	}
	w := &podWatcher{
		desired: map[string]bool{}, watcher: rw, done: make(chan struct{}), pods: map[types.UID]podState{},
		counts:           podCounts{Created: map[string]int{}},
		unavailableSince: map[string]time.Time{}, createdAt: map[types.UID]time.Time{}, deletedAt: map[types.UID]time.Time{},
	}
	for _, n := range desired {
		w.desired[n] = true
	}
	for i := range list.Items {
		w.pods[list.Items[i].UID] = stateOf(&list.Items[i])
	}
	w.measure(time.Now())
	go w.follow()
	return w, nil
}

// listAndWatchPods lists the pods in namespace that the label selector
// selects, and watches them from that list on, resuming the watch as long
// as the API server still has the next events.
func listAndWatchPods(ctx context.Context, namespace, selector string) (*corev1.PodList, *watchtools.RetryWatcher, error) {
	pods := env.Kube.CoreV1().Pods(namespace)
	list, err := pods.List(ctx, metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		return nil, nil, fmt.Errorf("listing pods: %w", err)
	}
	rw, err := watchtools.NewRetryWatcherWithContext(ctx, list.ResourceVersion, &toolscache.ListWatch{
		WatchFuncWithContext: func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
			opts.LabelSelector = selector
			return pods.Watch(ctx, opts)
		},
	})
	if err != nil {
		return nil, nil, fmt.Errorf("watching pods: %w", err)
	}
	return list, rw, nil
}

// Counts returns what the watcher has seen so far.
func (w *podWatcher) Counts() podCounts {
	w.mu.Lock()
	defer w.mu.Unlock()
	counts := w.counts
	counts.Created = maps.Clone(w.counts.Created)
	return counts
}

// Stop ends the watch and returns what it saw, or why it could not see all.
// A node still without a Ready pod counts as a gap up to now.
func (w *podWatcher) Stop() (podCounts, error) {
	w.watcher.Stop()
	<-w.done
	w.mu.Lock()
	now := time.Now()
	for node, since := range w.unavailableSince {
		w.gap(node, now.Sub(since))
	}
	w.mu.Unlock()
	return w.Counts(), w.err
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
			w.record(ev.Type, pod, time.Now())
		case watch.Error:
			// The watch cannot resume: states were missed.
			w.err = fmt.Errorf("pod watch failed: %w", apierrors.FromObject(ev.Object))
		}
		w.mu.Unlock()
	}
}

// record applies one event seen at now; w.mu is held. Only the changes
// the watch saw whole are timed: a pod created, or deleted, before it
// started is not.
func (w *podWatcher) record(kind watch.EventType, pod *corev1.Pod, now time.Time) {
	state := stateOf(pod)
	prev, known := w.pods[pod.UID]
	switch kind {
	case watch.Deleted:
		if at, ok := w.deletedAt[pod.UID]; ok {
			w.counts.SlowestDeletion = max(w.counts.SlowestDeletion, now.Sub(at))
		}
		delete(w.pods, pod.UID)
		delete(w.createdAt, pod.UID)
		delete(w.deletedAt, pod.UID)
	case watch.Added:
		w.counts.Created[state.owner]++
		w.createdAt[pod.UID] = now
		w.pods[pod.UID] = state
	default:
		w.pods[pod.UID] = state
		if known && !prev.terminating && state.terminating {
			w.deletedAt[pod.UID] = now
		}
	}
	if at, ok := w.createdAt[pod.UID]; ok && state.ready {
		w.counts.SlowestStart = max(w.counts.SlowestStart, now.Sub(at))
		delete(w.createdAt, pod.UID)
	}
	w.counts.Events++
	w.measure(now)
}

// gap records that node went without a Ready pod for d; w.mu is held.
func (w *podWatcher) gap(node string, d time.Duration) {
	if d > w.counts.LongestGap {
		w.counts.LongestGap, w.counts.GapNode = d, node
	}
}

// measure updates the extremes with the state at now; w.mu is held.
func (w *podWatcher) measure(now time.Time) {
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
		since, wasUnavailable := w.unavailableSince[n]
		switch {
		case !readyOn[n]:
			unavailable++
			if !wasUnavailable {
				w.unavailableSince[n] = now
			}
		case wasUnavailable:
			w.gap(n, now.Sub(since))
			delete(w.unavailableSince, n)
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
	state := podState{node: placement.TargetNode(pod), ready: invariants.RunningAndReady(pod), terminating: pod.DeletionTimestamp != nil}
	if ref := metav1.GetControllerOf(pod); ref != nil {
		state.owner = ref.Kind
	}
	return state
}
