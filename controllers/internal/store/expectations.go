package store

import (
	"slices"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/extendeddaemonset/extendeddaemonset/controllers/placement"
)

// expectationTTL bounds how long a write the cache never showed is trusted:
// past it, the cache is believed again (a missed watch event cannot block
// a node forever).
const expectationTTL = 2 * time.Minute

// uncertainTTL bounds how long a write whose answer was lost is believed
// done: one the API server did reaches the cache well within it, one it
// did not must not hold a node up for long.
const uncertainTTL = 30 * time.Second

// Expectations remember the pods this controller created, deleted and
// patched that the informer cache may not show yet, so that a reconcile on
// a stale cache neither creates a second pod on a node, nor deletes a pod
// twice, nor takes a pod it moved to a new replica set for an old one. They are
// kept per ExtendedDaemonSet, the scope within which pods are replaced.
type Expectations struct {
	mu      sync.Mutex
	byOwner map[types.NamespacedName]*pendingWrites
}

type pendingWrites struct {
	created map[string]createdPod
	deleted map[types.UID]deletedPod
	patched map[types.UID]patchedPod
}

// createdPod and deletedPod are trusted until their deadline.
type createdPod struct {
	pod   *corev1.Pod
	until time.Time
}

type deletedPod struct {
	node      string
	at, until time.Time
}

// patchedPod is a pod as a patch left it, trusted while the cache shows a
// version the patch, or an earlier one on the way to it, was based on.
type patchedPod struct {
	pod   *corev1.Pod
	stale []string
	until time.Time
}

// NewExpectations returns empty expectations.
func NewExpectations() *Expectations {
	return &Expectations{byOwner: map[types.NamespacedName]*pendingWrites{}}
}

func (e *Expectations) writes(owner types.NamespacedName) *pendingWrites {
	w, ok := e.byOwner[owner]
	if !ok {
		w = &pendingWrites{created: map[string]createdPod{}, deleted: map[types.UID]deletedPod{}, patched: map[types.UID]patchedPod{}}
		e.byOwner[owner] = w
	}
	return w
}

// Created records a pod the API server accepted.
func (e *Expectations) Created(owner types.NamespacedName, pod *corev1.Pod, now time.Time) {
	e.created(owner, pod, now.Add(expectationTTL))
}

// MayHaveCreated records a pod whose creation got no clear answer (a
// timeout, a lost connection): the API server may have created it.
func (e *Expectations) MayHaveCreated(owner types.NamespacedName, pod *corev1.Pod, now time.Time) {
	e.created(owner, pod, now.Add(uncertainTTL))
}

func (e *Expectations) created(owner types.NamespacedName, pod *corev1.Pod, until time.Time) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.writes(owner).created[pod.Name] = createdPod{pod: pod.DeepCopy(), until: until}
}

// Deleted records a pod whose deletion the API server accepted.
func (e *Expectations) Deleted(owner types.NamespacedName, pod *corev1.Pod, now time.Time) {
	e.deleted(owner, pod, now, now.Add(expectationTTL))
}

// MayHaveDeleted records a pod whose deletion got no clear answer.
func (e *Expectations) MayHaveDeleted(owner types.NamespacedName, pod *corev1.Pod, now time.Time) {
	e.deleted(owner, pod, now, now.Add(uncertainTTL))
}

func (e *Expectations) deleted(owner types.NamespacedName, pod *corev1.Pod, at, until time.Time) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.writes(owner).deleted[pod.UID] = deletedPod{node: placement.TargetNode(pod), at: at, until: until}
}

// Patched records a pod as the API server returned it from a patch based
// on resourceVersion stale.
func (e *Expectations) Patched(owner types.NamespacedName, pod *corev1.Pod, stale string, now time.Time) {
	e.patched(owner, pod, stale, now.Add(expectationTTL))
}

// MayHavePatched records a pod as a patch whose answer was lost would have
// left it.
func (e *Expectations) MayHavePatched(owner types.NamespacedName, pod *corev1.Pod, stale string, now time.Time) {
	e.patched(owner, pod, stale, now.Add(uncertainTTL))
}

func (e *Expectations) patched(owner types.NamespacedName, pod *corev1.Pod, stale string, until time.Time) {
	e.mu.Lock()
	defer e.mu.Unlock()
	w := e.writes(owner)
	versions := []string{stale}
	if prev, ok := w.patched[pod.UID]; ok && prev.pod.ResourceVersion == stale {
		// A patch on a patch the cache has not shown yet: the cache may
		// still show the version before the first one.
		versions = append(versions, prev.stale...)
	}
	w.patched[pod.UID] = patchedPod{pod: pod.DeepCopy(), stale: versions, until: until}
}

// Next is the soonest deadline of owner's records, zero when none: past
// it the cache is believed again, and no watch event may come to say so.
func (e *Expectations) Next(owner types.NamespacedName) time.Time {
	e.mu.Lock()
	defer e.mu.Unlock()
	var next time.Time
	earlier := func(t time.Time) {
		if next.IsZero() || t.Before(next) {
			next = t
		}
	}
	if w, ok := e.byOwner[owner]; ok {
		for _, c := range w.created {
			earlier(c.until)
		}
		for _, d := range w.deleted {
			earlier(d.until)
		}
		for _, p := range w.patched {
			earlier(p.until)
		}
	}
	return next
}

// Nodes returns the nodes of owner's pods written and not yet forgotten.
// Apply changes only the pods on them, and forgets a write only from what
// it reads there: given every cached pod on those nodes, and maybe others,
// it does what it does given all of owner's pods.
func (e *Expectations) Nodes(owner types.NamespacedName) []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	w, ok := e.byOwner[owner]
	if !ok {
		return nil
	}
	nodes := make([]string, 0, len(w.created)+len(w.deleted)+len(w.patched))
	for _, c := range w.created {
		nodes = append(nodes, placement.TargetNode(c.pod))
	}
	for _, d := range w.deleted {
		nodes = append(nodes, d.node)
	}
	for _, p := range w.patched {
		nodes = append(nodes, placement.TargetNode(p.pod))
	}
	return nodes
}

// Forget drops everything recorded for owner, once it is gone.
func (e *Expectations) Forget(owner types.NamespacedName) {
	e.mu.Lock()
	defer e.mu.Unlock()
	delete(e.byOwner, owner)
}

// Apply returns the pods as they are after the recorded writes: created
// pods the cache lacks are added, deleted pods the cache still shows live
// are marked terminating, patched pods the cache shows as they were before
// the patch are replaced by their patched version. Writes the cache
// reflects, or past their deadline, are forgotten. cached is not modified.
func (e *Expectations) Apply(owner types.NamespacedName, cached []*corev1.Pod, now time.Time) []*corev1.Pod {
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
		// The patch was based on the version the cache shows: any other
		// one is the patch's or later, since the patch required it.
		if p, ok := w.patched[pod.UID]; ok && slices.Contains(p.stale, pod.ResourceVersion) && now.Before(p.until) {
			pod = p.pod
		} else if ok {
			delete(w.patched, pod.UID)
		}
		if d, deleting := w.deleted[pod.UID]; deleting && pod.DeletionTimestamp == nil && now.Before(d.until) {
			pod = pod.DeepCopy()
			pod.DeletionTimestamp = &metav1.Time{Time: d.at}
		} else if deleting {
			delete(w.deleted, pod.UID)
		}
		out = append(out, pod)
	}
	for name, c := range w.created {
		if seen[name] || !now.Before(c.until) {
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
	for uid := range w.patched {
		if !live[uid] {
			delete(w.patched, uid)
		}
	}
	if len(w.created) == 0 && len(w.deleted) == 0 && len(w.patched) == 0 {
		delete(e.byOwner, owner)
	}
	return out
}
