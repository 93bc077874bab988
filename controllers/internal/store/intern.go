package store

import (
	"slices"
	"strconv"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// Every object decoded from a watch brings its own copy of every string:
// the label keys and values, condition types and reasons, images and owner
// references that repeat on each of 100,000 nodes and pods. The trimming
// transforms give the cached objects one copy of each (intern), and the
// pods of one replica set one copy of their labels, annotations, owner
// references and containers, which are the same on all of them.

// interned is how many values a generation of a table holds, and
// maxInterned the longest string interned, or key of a shared value:
// longer ones are rare and would make the table's own memory the larger.
const (
	interned    = 4096
	maxInterned = 1024
)

// table maps a key to the first value stored under it, within a bound:
// two generations, the newer taking what is asked for; when it is full it
// becomes the older and the older is dropped, and a value found in the
// older moves to the newer. What keeps being asked for stays, and what
// one object alone has (a node's instance ID) cannot fill the table for
// good. Objects keep the values they were given when these leave it.
type table[V any] struct {
	mu           sync.Mutex
	newer, older map[string]V
}

// get returns the value stored under key, storing build's when none is.
func (t *table[V]) get(key string, build func() V) V {
	t.mu.Lock()
	defer t.mu.Unlock()
	if v, ok := t.newer[key]; ok {
		return v
	}
	v, ok := t.older[key]
	if !ok {
		v = build()
	}
	if t.newer == nil || len(t.newer) >= interned {
		t.older, t.newer = t.newer, make(map[string]V, interned)
	}
	t.newer[key] = v
	return v
}

var (
	internedStrings table[string]
	sharedMaps      table[map[string]string]
	sharedOwners    table[[]metav1.OwnerReference]
	sharedGates     table[[]corev1.PodReadinessGate]
	sharedContainer table[[]corev1.Container]
)

// intern returns the table's copy of s.
func intern(s string) string {
	if s == "" || len(s) > maxInterned {
		return s
	}
	return internedStrings.get(s, func() string { return s })
}

// internLabels is labels with interned keys and values; a value that is
// the object's name (a node's hostname label) shares the name's string
// rather than the table's room.
func internLabels(labels map[string]string, name string) map[string]string {
	if labels == nil {
		return nil
	}
	out := make(map[string]string, len(labels))
	for k, v := range labels {
		if v == name {
			out[intern(k)] = name
		} else {
			out[intern(k)] = intern(v)
		}
	}
	return out
}

// shareMap returns the map equal to m that an object cached before has,
// or m with interned strings; nil stays nil and empty stays empty.
func shareMap(m map[string]string) map[string]string {
	if m == nil {
		return nil
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var key strings.Builder
	for _, k := range keys {
		writeField(&key, k)
		writeField(&key, m[k])
	}
	if key.Len() > maxInterned {
		return internLabels(m, "")
	}
	return sharedMaps.get(key.String(), func() map[string]string { return internLabels(m, "") })
}

// shareOwners returns the owner references equal to refs that an object
// cached before has, or a copy of refs with interned strings: a value
// shared is never written, whatever object it came from.
func shareOwners(refs []metav1.OwnerReference) []metav1.OwnerReference {
	if refs == nil {
		return nil
	}
	var key strings.Builder
	for _, r := range refs {
		for _, f := range []string{r.APIVersion, r.Kind, r.Name, string(r.UID), flag(r.Controller), flag(r.BlockOwnerDeletion)} {
			writeField(&key, f)
		}
	}
	return sharedOwners.get(key.String(), func() []metav1.OwnerReference {
		out := slices.Clone(refs)
		for i := range out {
			r := &out[i]
			r.APIVersion, r.Kind, r.Name, r.UID = intern(r.APIVersion), intern(r.Kind), intern(r.Name), types.UID(intern(string(r.UID)))
		}
		return out
	})
}

// shareGates returns the readiness gates equal to gates that an object
// cached before has, or a copy of gates.
func shareGates(gates []corev1.PodReadinessGate) []corev1.PodReadinessGate {
	if gates == nil {
		return nil
	}
	var key strings.Builder
	for _, g := range gates {
		writeField(&key, string(g.ConditionType))
	}
	return sharedGates.get(key.String(), func() []corev1.PodReadinessGate {
		out := slices.Clone(gates)
		for i := range out {
			out[i].ConditionType = corev1.PodConditionType(intern(string(out[i].ConditionType)))
		}
		return out
	})
}

// shareContainers returns the containers, each only its name, image and
// restart policy (trimPod), equal to those of containers that an object
// cached before has, or those.
func shareContainers(containers []corev1.Container) []corev1.Container {
	if containers == nil {
		return nil
	}
	var key strings.Builder
	for _, c := range containers {
		policy := ""
		if c.RestartPolicy != nil {
			policy = string(*c.RestartPolicy)
		}
		writeField(&key, c.Name)
		writeField(&key, c.Image)
		writeField(&key, policy)
	}
	return sharedContainer.get(key.String(), func() []corev1.Container {
		out := make([]corev1.Container, len(containers))
		for i, c := range containers {
			// A restartable init container (a sidecar) keeps running: its
			// restart policy says so.
			out[i] = corev1.Container{Name: intern(c.Name), Image: intern(c.Image), RestartPolicy: c.RestartPolicy}
		}
		return out
	})
}

// writeField writes s to a key so that no two lists of strings write the
// same: its length, then itself.
func writeField(key *strings.Builder, s string) {
	key.WriteString(strconv.Itoa(len(s)))
	key.WriteByte(':')
	key.WriteString(s)
}

func flag(b *bool) string {
	switch {
	case b == nil:
		return ""
	case *b:
		return "t"
	default:
		return "f"
	}
}
