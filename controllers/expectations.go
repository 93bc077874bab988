package controllers

import (
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// expectationTTL bounds how long a write the cache never showed is trusted:
// past it, the cache is believed again (a missed watch event cannot block
// a node forever).
const expectationTTL = 2 * time.Minute

// expectations remember the pods this controller created and deleted that
// the informer cache may not show yet, so that a reconcile on a stale cache
// neither creates a second pod on a node nor deletes a pod twice. They are
// kept per ExtendedDaemonSet, the scope within which pods are replaced.
type expectations struct {
	mu      sync.Mutex
	byOwner map[types.NamespacedName]*pendingWrites
}

type pendingWrites struct {
	created map[string]createdPod
	deleted map[types.UID]time.Time
}

type createdPod struct {
	pod *corev1.Pod
	at  time.Time
}

func newExpectations() *expectations {
	return &expectations{byOwner: map[types.NamespacedName]*pendingWrites{}}
}

func (e *expectations) writes(owner types.NamespacedName) *pendingWrites {
	w, ok := e.byOwner[owner]
	if !ok {
		w = &pendingWrites{created: map[string]createdPod{}, deleted: map[types.UID]time.Time{}}
		e.byOwner[owner] = w
	}
	return w
}

// Created records a pod the API server accepted.
func (e *expectations) Created(owner types.NamespacedName, pod *corev1.Pod, now time.Time) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.writes(owner).created[pod.Name] = createdPod{pod: pod.DeepCopy(), at: now}
}

// Deleted records a pod whose deletion the API server accepted.
func (e *expectations) Deleted(owner types.NamespacedName, uid types.UID, now time.Time) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.writes(owner).deleted[uid] = now
}

// Forget drops everything recorded for owner, once it is gone.
func (e *expectations) Forget(owner types.NamespacedName) {
	e.mu.Lock()
	defer e.mu.Unlock()
	delete(e.byOwner, owner)
}

// Apply returns the pods as they are after the recorded writes: created
// pods the cache lacks are added, deleted pods the cache still shows live
// are marked terminating. Writes the cache reflects, or older than the TTL,
// are forgotten. cached is not modified.
func (e *expectations) Apply(owner types.NamespacedName, cached []*corev1.Pod, now time.Time) []*corev1.Pod {
	e.mu.Lock()
	defer e.mu.Unlock()
	w, ok := e.byOwner[owner]
	if !ok {
		return cached
	}
	out := make([]*corev1.Pod, 0, len(cached)+len(w.created))
	seen := make(map[string]bool, len(cached))
	live := make(map[types.UID]bool, len(w.deleted))
	for _, pod := range cached {
		seen[pod.Name] = true
		live[pod.UID] = true
		if at, deleting := w.deleted[pod.UID]; deleting && pod.DeletionTimestamp == nil && now.Sub(at) < expectationTTL {
			pod = pod.DeepCopy()
			pod.DeletionTimestamp = &metav1.Time{Time: at}
		} else if deleting {
			delete(w.deleted, pod.UID)
		}
		out = append(out, pod)
	}
	for name, c := range w.created {
		if seen[name] || now.Sub(c.at) >= expectationTTL {
			delete(w.created, name)
			continue
		}
		out = append(out, c.pod)
	}
	// A deleted pod the cache no longer lists is gone for good.
	for uid := range w.deleted {
		if !live[uid] {
			delete(w.deleted, uid)
		}
	}
	if len(w.created) == 0 && len(w.deleted) == 0 {
		delete(e.byOwner, owner)
	}
	return out
}
