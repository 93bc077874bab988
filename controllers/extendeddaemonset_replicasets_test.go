package controllers

import (
	"testing"
	"time"

	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
	"github.com/extendeddaemonset/extendeddaemonset/controllers/internal/store"
)

func hashTemplate() *corev1.PodTemplateSpec {
	return &corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{
			Labels:      map[string]string{"app": "agent", "tier": "node", "team": "infra", "zone": "any"},
			Annotations: map[string]string{"a": "1", "b": "2"},
		},
		Spec: corev1.PodSpec{
			NodeSelector: map[string]string{"kubernetes.io/os": "linux"},
			Containers:   []corev1.Container{{Name: "agent", Image: "registry.k8s.io/pause:3.10"}},
		},
	}
}

func TestTemplateHashIsStable(t *testing.T) {
	g := gomega.NewWithT(t)
	h, err := templateHash(hashTemplate())
	g.Expect(err).NotTo(gomega.HaveOccurred())
	g.Expect(h).To(gomega.MatchRegexp(`^[bcdfghjklmnpqrstvwxz2456789]{10}$`), "a label value of safe characters")

	// The same template, built again (maps filled in another order), hashes
	// alike: going back to a template finds its replica set.
	for range 20 {
		other := hashTemplate()
		other.Labels = map[string]string{"zone": "any", "team": "infra", "tier": "node", "app": "agent"}
		again, err := templateHash(other)
		g.Expect(err).NotTo(gomega.HaveOccurred())
		g.Expect(again).To(gomega.Equal(h))
	}
	copied, err := templateHash(hashTemplate().DeepCopy())
	g.Expect(err).NotTo(gomega.HaveOccurred())
	g.Expect(copied).To(gomega.Equal(h))

	// The value is pinned: a new hash function, or a new encoding of the
	// template, would make every running ExtendedDaemonSet roll out again
	// after a controller upgrade.
	g.Expect(h).To(gomega.Equal(pinnedTemplateHash))
}

// pinnedTemplateHash is the hash of hashTemplate().
const pinnedTemplateHash = "784c5794cd"

func TestTemplateHashChangesWithTheTemplate(t *testing.T) {
	g := gomega.NewWithT(t)
	base, err := templateHash(hashTemplate())
	g.Expect(err).NotTo(gomega.HaveOccurred())
	for name, change := range map[string]func(*corev1.PodTemplateSpec){
		"image":      func(p *corev1.PodTemplateSpec) { p.Spec.Containers[0].Image = "registry.k8s.io/pause:3.9" },
		"label":      func(p *corev1.PodTemplateSpec) { p.Labels["tier"] = "other" },
		"annotation": func(p *corev1.PodTemplateSpec) { p.Annotations["c"] = "3" },
		"toleration": func(p *corev1.PodTemplateSpec) {
			p.Spec.Tolerations = []corev1.Toleration{{Operator: corev1.TolerationOpExists}}
		},
		"hostNetwork": func(p *corev1.PodTemplateSpec) { p.Spec.HostNetwork = true },
	} {
		tmpl := hashTemplate()
		change(tmpl)
		h, err := templateHash(tmpl)
		g.Expect(err).NotTo(gomega.HaveOccurred())
		g.Expect(h).NotTo(gomega.Equal(base), name)
	}
}

func TestNewReplicaSetCopiesTheTemplate(t *testing.T) {
	g := gomega.NewWithT(t)
	eds := &v1alpha1.ExtendedDaemonSet{
		ObjectMeta: metav1.ObjectMeta{Name: "agent", Namespace: "ns"},
		Spec:       v1alpha1.ExtendedDaemonSetSpec{Template: *hashTemplate()},
	}
	ers := newReplicaSet(eds, &store.Revision{Hash: "h", Template: eds.Spec.Template}, nil)
	g.Expect(ers.GenerateName).To(gomega.Equal("agent-"))
	g.Expect(ers.Namespace).To(gomega.Equal("ns"))
	g.Expect(ers.Labels).To(gomega.Equal(map[string]string{v1alpha1.ExtendedDaemonSetNameLabel: "agent", v1alpha1.TemplateHashLabel: "h"}))
	g.Expect(ers.Annotations).To(gomega.Equal(map[string]string{v1alpha1.TemplateHashAnnotation: "h", v1alpha1.RevisionAnnotation: "1"}))
	g.Expect(ers.Spec.TemplateGeneration).To(gomega.Equal("h"))
	g.Expect(ers.Spec.Template).To(gomega.Equal(eds.Spec.Template))
	g.Expect(ers.Spec.Selector).To(gomega.Equal(&v1alpha1.LabelSelector{MatchLabels: eds.Spec.Template.Labels}))

	// A copy: changing the replica set leaves the ExtendedDaemonSet alone.
	ers.Spec.Template.Labels["app"] = "changed"
	ers.Spec.Template.Spec.Containers[0].Image = "changed"
	g.Expect(eds.Spec.Template.Labels).To(gomega.HaveKeyWithValue("app", "agent"))
	g.Expect(eds.Spec.Template.Spec.Containers[0].Image).To(gomega.Equal("registry.k8s.io/pause:3.10"))

	eds.Spec.Selector = &v1alpha1.LabelSelector{MatchLabels: map[string]string{"app": "agent"}}
	ers = newReplicaSet(eds, &store.Revision{Hash: "h", Template: eds.Spec.Template}, nil)
	g.Expect(ers.Spec.Selector).To(gomega.Equal(eds.Spec.Selector))
	g.Expect(ers.Spec.Selector).NotTo(gomega.BeIdenticalTo(eds.Spec.Selector))
}

// t0 is when the first replica set of a history was created.
var t0 = time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)

// history builds replica sets created a second apart, in the given order.
func history(names ...string) []*v1alpha1.ExtendedDaemonSetReplicaSet {
	out := make([]*v1alpha1.ExtendedDaemonSetReplicaSet, len(names))
	for i, n := range names {
		out[i] = &v1alpha1.ExtendedDaemonSetReplicaSet{ObjectMeta: metav1.ObjectMeta{
			Name: n, CreationTimestamp: metav1.NewTime(t0.Add(time.Duration(i) * time.Second)),
			Annotations: map[string]string{v1alpha1.TemplateHashAnnotation: "hash-" + n},
		}}
	}
	return out
}

// sameSecondHistory builds replica sets created within one second, in the
// given order, numbered as the controller numbers them.
func sameSecondHistory(names ...string) []*v1alpha1.ExtendedDaemonSetReplicaSet {
	var out []*v1alpha1.ExtendedDaemonSetReplicaSet
	for _, n := range names {
		ers := newReplicaSet(&v1alpha1.ExtendedDaemonSet{}, &store.Revision{Hash: "hash-" + n}, out)
		ers.Name, ers.CreationTimestamp = n, metav1.NewTime(t0)
		out = append(out, ers)
	}
	return out
}

// Replica sets made within one second (a quick rollout, then a change) have
// equal creation timestamps: their revisions say which is older, whatever
// their generated names.
func TestHistoryOrderOfReplicaSetsCreatedWithinOneSecond(t *testing.T) {
	g := gomega.NewWithT(t)
	sets := sameSecondHistory("agent-z", "agent-m", "agent-a")
	g.Expect(revisionOf(sets[0])).To(gomega.BeEquivalentTo(1))
	g.Expect(revisionOf(sets[2])).To(gomega.BeEquivalentTo(3))
	inUse := map[string]bool{"agent-a": true}
	g.Expect(setNames(historyToDelete(sets, inUse, nil, 1))).To(gomega.Equal([]string{"agent-z"}))
	g.Expect(setNames(historyToDelete(sets, inUse, map[string]int{"agent-z": 1}, 1))).To(gomega.BeEmpty(),
		"the older one owns pods; the younger one is within the limit")
	g.Expect(byHash(append(sets, sameSecondHistory("agent-b")...), "hash-agent-z").Name).To(gomega.Equal("agent-z"))
}

func TestRevisions(t *testing.T) {
	g := gomega.NewWithT(t)
	numbered := func(revision string) *v1alpha1.ExtendedDaemonSetReplicaSet {
		return &v1alpha1.ExtendedDaemonSetReplicaSet{ObjectMeta: metav1.ObjectMeta{
			Annotations: map[string]string{v1alpha1.RevisionAnnotation: revision},
		}}
	}
	g.Expect(nextRevision(nil)).To(gomega.BeEquivalentTo(1))
	// Pruned replica sets leave gaps; the next one is still the youngest.
	g.Expect(nextRevision([]*v1alpha1.ExtendedDaemonSetReplicaSet{numbered("7"), numbered("3")})).To(gomega.BeEquivalentTo(8))
	// Replica sets made before revisions, or whose annotation a person
	// mangled, count as revision 0: older than any numbered one.
	for _, bad := range []string{"", "x", "-4", "99999999999999999999"} {
		g.Expect(revisionOf(numbered(bad))).To(gomega.BeZero(), bad)
	}
	unnumbered := history("old")[0]
	unnumbered.CreationTimestamp = metav1.NewTime(t0.Add(time.Hour))
	g.Expect(olderFirst(unnumbered, numbered("1"))).To(gomega.Equal(-1))
	g.Expect(nextRevision([]*v1alpha1.ExtendedDaemonSetReplicaSet{unnumbered})).To(gomega.BeEquivalentTo(1))
}

func setNames(sets []*v1alpha1.ExtendedDaemonSetReplicaSet) []string {
	out := make([]string, len(sets))
	for i, s := range sets {
		out[i] = s.Name
	}
	return out
}

func TestHistoryToDelete(t *testing.T) {
	sets := history("r1", "r2", "r3", "r4", "r5")
	// Shuffled input: the order of a list answer is not the age order.
	shuffled := []*v1alpha1.ExtendedDaemonSetReplicaSet{sets[3], sets[0], sets[4], sets[2], sets[1]}
	inUse := map[string]bool{"r5": true, "r4": true}
	for _, tc := range []struct {
		name   string
		inUse  map[string]bool
		podsOf map[string]int
		limit  int
		want   []string
	}{
		{name: "within the limit", inUse: inUse, limit: 3, want: []string{}},
		{name: "limit 10 by default", inUse: inUse, limit: 10, want: []string{}},
		{name: "oldest beyond the limit", inUse: inUse, limit: 1, want: []string{"r1", "r2"}},
		{name: "limit 0", inUse: inUse, limit: 0, want: []string{"r1", "r2", "r3"}},
		{name: "in use is never history", inUse: map[string]bool{"r1": true, "r5": true}, limit: 0, want: []string{"r2", "r3", "r4"}},
		{name: "a replica set that owns pods stays", inUse: inUse, podsOf: map[string]int{"r1": 1, "r3": 2}, limit: 0, want: []string{"r2"}},
		{
			name: "pods do not shift the limit to younger ones", inUse: inUse, podsOf: map[string]int{"r1": 1},
			limit: 1, want: []string{"r2"},
		},
		{name: "no history", inUse: map[string]bool{"r1": true, "r2": true, "r3": true, "r4": true, "r5": true}, limit: 0, want: []string{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := gomega.NewWithT(t)
			got := historyToDelete(shuffled, tc.inUse, tc.podsOf, tc.limit)
			g.Expect(setNames(got)).To(gomega.Equal(tc.want))
		})
	}
	g := gomega.NewWithT(t)
	g.Expect(historyToDelete(nil, inUse, nil, 0)).To(gomega.BeEmpty())
}

func TestReplicaSetLookups(t *testing.T) {
	g := gomega.NewWithT(t)
	sets := history("r1", "r2", "r3")
	sets[2].Annotations[v1alpha1.TemplateHashAnnotation] = "hash-r2" // a duplicate, younger
	g.Expect(byHash(sets, "hash-r2")).To(gomega.BeIdenticalTo(sets[1]), "the oldest replica set of a template wins")
	g.Expect(byHash([]*v1alpha1.ExtendedDaemonSetReplicaSet{sets[2], sets[1]}, "hash-r2")).To(gomega.BeIdenticalTo(sets[1]))
	g.Expect(byHash(sets, "missing")).To(gomega.BeNil())
	g.Expect(byName(sets, "r3")).To(gomega.BeIdenticalTo(sets[2]))
	g.Expect(byName(sets, "missing")).To(gomega.BeNil())

	eds := &v1alpha1.ExtendedDaemonSet{ObjectMeta: metav1.ObjectMeta{Name: "agent", UID: "eds-uid"}}
	owned := func(uid types.UID, controller bool) []metav1.OwnerReference {
		return []metav1.OwnerReference{{Kind: "ExtendedDaemonSet", Name: "agent", UID: uid, Controller: ptr.To(controller)}}
	}
	list := []v1alpha1.ExtendedDaemonSetReplicaSet{
		{ObjectMeta: metav1.ObjectMeta{Name: "mine", OwnerReferences: owned("eds-uid", true)}},
		{ObjectMeta: metav1.ObjectMeta{Name: "predecessor", OwnerReferences: owned("old-uid", true)}},
		{ObjectMeta: metav1.ObjectMeta{Name: "not-controller", OwnerReferences: owned("eds-uid", false)}},
		{ObjectMeta: metav1.ObjectMeta{Name: "orphan"}},
		{ObjectMeta: metav1.ObjectMeta{Name: "deleting", OwnerReferences: owned("eds-uid", true), DeletionTimestamp: ptr.To(metav1.NewTime(t0))}},
	}
	g.Expect(setNames(ownedReplicaSets(eds, list))).To(gomega.Equal([]string{"mine"}))
}
