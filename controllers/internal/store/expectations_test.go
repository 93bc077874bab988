package store

import (
	"testing"
	"time"

	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

var (
	edsA = types.NamespacedName{Namespace: "ns", Name: "a"}
	edsB = types.NamespacedName{Namespace: "ns", Name: "b"}
	t0   = time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
)

func testPod(name string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", UID: types.UID("uid-" + name)}}
}

func podNames(pods []*corev1.Pod) []string {
	out := make([]string, len(pods))
	for i, p := range pods {
		out[i] = p.Name
	}
	return out
}

func TestExpectationsWithoutWritesReturnTheCache(t *testing.T) {
	g := gomega.NewWithT(t)
	e := NewExpectations()
	cached := []*corev1.Pod{testPod("p1")}
	g.Expect(e.Apply(edsA, cached, t0)).To(gomega.Equal(cached))
	g.Expect(e.Apply(edsA, nil, t0)).To(gomega.BeEmpty())
}

func TestExpectationsAddCreatedPodsUntilTheCacheShowsThem(t *testing.T) {
	g := gomega.NewWithT(t)
	e := NewExpectations()
	created := testPod("new")
	e.Created(edsA, created, t0)
	created.Labels = map[string]string{"changed": "after"} // the record is a copy

	cached := []*corev1.Pod{testPod("p1")}
	out := e.Apply(edsA, cached, t0.Add(time.Second))
	g.Expect(podNames(out)).To(gomega.ConsistOf("p1", "new"))
	g.Expect(out[1].Labels).To(gomega.BeEmpty())
	g.Expect(cached).To(gomega.HaveLen(1), "cached is not modified")
	g.Expect(podNames(e.Apply(edsA, cached, t0.Add(2*time.Second)))).To(gomega.ConsistOf("p1", "new"),
		"the pod is added as long as the cache lacks it")

	// Another ExtendedDaemonSet sees nothing of it.
	g.Expect(podNames(e.Apply(edsB, cached, t0.Add(time.Second)))).To(gomega.ConsistOf("p1"))

	// The cache caught up: the cached pod is used and the record forgotten.
	fromCache := testPod("new")
	fromCache.Labels = map[string]string{"from": "cache"}
	out = e.Apply(edsA, []*corev1.Pod{cached[0], fromCache}, t0.Add(3*time.Second))
	g.Expect(out).To(gomega.HaveExactElements(cached[0], fromCache))
	g.Expect(e.byOwner).To(gomega.BeEmpty(), "caught-up records are forgotten")
	g.Expect(podNames(e.Apply(edsA, cached, t0.Add(4*time.Second)))).To(gomega.ConsistOf("p1"),
		"once forgotten, a pod the cache lost (deleted since) is not brought back")
}

func TestExpectationsMarkDeletedPodsTerminating(t *testing.T) {
	g := gomega.NewWithT(t)
	e := NewExpectations()
	p1, p2 := testPod("p1"), testPod("p2")
	e.Deleted(edsA, p1, t0)

	cached := []*corev1.Pod{p1, p2}
	out := e.Apply(edsA, cached, t0.Add(time.Second))
	g.Expect(podNames(out)).To(gomega.HaveExactElements("p1", "p2"))
	g.Expect(out[0].DeletionTimestamp).NotTo(gomega.BeNil(), "a pod whose deletion was accepted is terminating")
	g.Expect(out[0].DeletionTimestamp.Time).To(gomega.Equal(t0))
	g.Expect(out[1]).To(gomega.BeIdenticalTo(p2))
	g.Expect(p1.DeletionTimestamp).To(gomega.BeNil(), "cached pods are not modified")

	// The cache shows it terminating: the record is forgotten.
	terminating := p1.DeepCopy()
	terminating.DeletionTimestamp = &metav1.Time{Time: t0.Add(time.Second)}
	out = e.Apply(edsA, []*corev1.Pod{terminating, p2}, t0.Add(2*time.Second))
	g.Expect(out).To(gomega.HaveExactElements(terminating, p2))
	g.Expect(e.byOwner).To(gomega.BeEmpty())
}

func TestExpectationsForgetDeletedPodsTheCacheNoLongerLists(t *testing.T) {
	g := gomega.NewWithT(t)
	e := NewExpectations()
	p1, p2 := testPod("p1"), testPod("p2")
	e.Deleted(edsA, p1, t0)
	g.Expect(e.Apply(edsA, []*corev1.Pod{p2}, t0.Add(time.Second))).To(gomega.HaveExactElements(p2))
	g.Expect(e.byOwner).To(gomega.BeEmpty())

	// A pod recreated under the same name has another UID: it is live.
	e.Deleted(edsA, p1, t0)
	again := testPod("p1")
	again.UID = "uid-p1-again"
	out := e.Apply(edsA, []*corev1.Pod{again}, t0.Add(time.Second))
	g.Expect(out).To(gomega.HaveExactElements(again))
	g.Expect(out[0].DeletionTimestamp).To(gomega.BeNil())
}

func TestExpectationsExpireAfterTheTTL(t *testing.T) {
	g := gomega.NewWithT(t)
	e := NewExpectations()
	p1 := testPod("p1")
	e.Created(edsA, testPod("never-seen"), t0)
	e.Deleted(edsA, p1, t0)

	out := e.Apply(edsA, []*corev1.Pod{p1}, t0.Add(expectationTTL-time.Second))
	g.Expect(podNames(out)).To(gomega.ConsistOf("p1", "never-seen"))
	g.Expect(out[0].DeletionTimestamp).NotTo(gomega.BeNil())

	// Past the TTL the cache is believed again.
	out = e.Apply(edsA, []*corev1.Pod{p1}, t0.Add(expectationTTL))
	g.Expect(out).To(gomega.HaveExactElements(p1))
	g.Expect(out[0].DeletionTimestamp).To(gomega.BeNil())
	g.Expect(e.byOwner).To(gomega.BeEmpty())
}

func TestExpectationsForgetAnOwner(t *testing.T) {
	g := gomega.NewWithT(t)
	e := NewExpectations()
	e.Created(edsA, testPod("a"), t0)
	e.Created(edsB, testPod("b"), t0)
	e.Forget(edsA)
	g.Expect(e.Apply(edsA, nil, t0)).To(gomega.BeEmpty())
	g.Expect(podNames(e.Apply(edsB, nil, t0))).To(gomega.ConsistOf("b"))
}

// A write whose answer was lost may have happened: it is believed for
// uncertainTTL, long enough for a lagging cache, short enough that a pod
// that was never created does not hold its node for long. Next says when
// a record runs out, since no watch event will.
func TestExpectationsBelieveUncertainWritesForAShorterTime(t *testing.T) {
	g := gomega.NewWithT(t)
	e := NewExpectations()
	g.Expect(e.Next(edsA)).To(gomega.BeZero(), "nothing recorded")
	p1 := testPod("p1")
	e.MayHaveCreated(edsA, testPod("maybe"), t0)
	e.MayHaveDeleted(edsA, p1, t0)
	e.Created(edsA, testPod("sure"), t0)
	g.Expect(e.Next(edsA)).To(gomega.Equal(t0.Add(uncertainTTL)))
	g.Expect(e.Next(edsB)).To(gomega.BeZero())

	out := e.Apply(edsA, []*corev1.Pod{p1}, t0.Add(uncertainTTL-time.Millisecond))
	g.Expect(podNames(out)).To(gomega.ConsistOf("p1", "maybe", "sure"))
	g.Expect(out[0].DeletionTimestamp).NotTo(gomega.BeNil(), "a deletion that may have happened holds the pod as terminating")

	out = e.Apply(edsA, []*corev1.Pod{p1}, t0.Add(uncertainTTL))
	g.Expect(podNames(out)).To(gomega.ConsistOf("p1", "sure"), "the uncertain creation ran out, the accepted one did not")
	g.Expect(out[0].DeletionTimestamp).To(gomega.BeNil())
	g.Expect(e.Next(edsA)).To(gomega.Equal(t0.Add(expectationTTL)))
}

func TestExpectationsShowAPatchedPodUntilTheCacheDoes(t *testing.T) {
	g := gomega.NewWithT(t)
	e := NewExpectations()
	before := testPod("p")
	before.ResourceVersion = "1"
	gateClosed := before.DeepCopy()
	gateClosed.ResourceVersion, gateClosed.Labels = "2", map[string]string{"step": "gate"}
	e.Patched(edsA, gateClosed, "1", t0)

	out := e.Apply(edsA, []*corev1.Pod{before}, t0.Add(time.Second))
	g.Expect(out[0].Labels).To(gomega.HaveKeyWithValue("step", "gate"), "the cache shows the pod before the patch")

	moved := gateClosed.DeepCopy()
	moved.ResourceVersion, moved.Labels = "3", map[string]string{"step": "moved"}
	e.Patched(edsA, moved, "2", t0.Add(time.Second))
	for _, cached := range []*corev1.Pod{before, gateClosed} {
		out = e.Apply(edsA, []*corev1.Pod{cached}, t0.Add(2*time.Second))
		g.Expect(out[0].Labels).To(gomega.HaveKeyWithValue("step", "moved"),
			"a patch on a patch: the cache may show either version before")
	}
	g.Expect(e.Next(edsA)).To(gomega.Equal(t0.Add(time.Second + expectationTTL)))

	later := moved.DeepCopy()
	later.ResourceVersion = "4"
	g.Expect(e.Apply(edsA, []*corev1.Pod{later}, t0.Add(3*time.Second))[0]).To(gomega.BeIdenticalTo(later), "the cache caught up")
	g.Expect(e.Apply(edsA, []*corev1.Pod{before}, t0.Add(4*time.Second))[0]).To(gomega.BeIdenticalTo(before), "and the record is forgotten")
	g.Expect(e.Next(edsA)).To(gomega.BeZero())
}

func TestExpectationsTrustAPatchUntilItsDeadline(t *testing.T) {
	g := gomega.NewWithT(t)
	e := NewExpectations()
	before := testPod("p")
	before.ResourceVersion = "1"
	patched := before.DeepCopy()
	patched.Labels = map[string]string{"patched": "maybe"}
	e.MayHavePatched(edsA, patched, "1", t0)
	g.Expect(e.Apply(edsA, []*corev1.Pod{before}, t0.Add(uncertainTTL-time.Second))[0].Labels).To(gomega.HaveKey("patched"))
	g.Expect(e.Apply(edsA, []*corev1.Pod{before}, t0.Add(uncertainTTL))[0]).To(gomega.BeIdenticalTo(before), "the cache is believed again")

	e.Patched(edsA, patched, "1", t0)
	g.Expect(e.Apply(edsA, nil, t0.Add(time.Second))).To(gomega.BeEmpty(), "a pod gone is not brought back")
	g.Expect(e.Next(edsA)).To(gomega.BeZero())
}
