package e2e

import (
	"testing"
	"time"

	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
)

// inPlaceAgent is the agent updated in place, two nodes at a time.
func inPlaceAgent(namespace string, gate bool) *v1alpha1.ExtendedDaemonSet {
	eds := agentEDS(namespace, "agent", "v1")
	ru := &eds.Spec.Strategy.RollingUpdate
	ru.Type, ru.MaxUnavailable, ru.InPlaceReadinessGate = v1alpha1.RollingUpdateInPlaceIfPossible, ptr.To(intstr.FromInt32(2)), gate
	return eds
}

// podUIDs maps the pods of eds by name to UID.
func (s *scenario) podUIDs(eds *v1alpha1.ExtendedDaemonSet) map[string]types.UID {
	out := map[string]types.UID{}
	for _, pod := range s.pods(s.g, eds) {
		out[pod.Name] = pod.UID
	}
	return out
}

// podsCreated is how many pods the invariant monitor has seen created.
func (s *scenario) podsCreated() int {
	n := 0
	for _, c := range s.monitor.Report().PodsCreated {
		n += c
	}
	return n
}

// expectUpdatedInPlace runs an update of eds to version v2 that changes
// only its image, and checks that every pod was updated in place: same
// names and UIDs, none created or deleted, the kubelet's restart counted,
// and never more than maxUnavailable nodes without a ready agent (the
// watcher, like the invariant monitor, takes a pod whose container still
// reports the old image for unavailable).
func (s *scenario) expectUpdatedInPlace(eds *v1alpha1.ExtendedDaemonSet, nodes []string) (*v1alpha1.ExtendedDaemonSet, *v1alpha1.ExtendedDaemonSetReplicaSet) {
	s.t.Helper()
	first := eds.Status.ActiveReplicaSet
	before, created := s.podUIDs(eds), s.podsCreated()
	pods, statuses := s.startWatching(eds, edsPods(eds.Name), nodes)
	s.update(eds, func(e *v1alpha1.ExtendedDaemonSet) { setVersion(e, "v2") })
	eds, second := s.expectRolledOut(eds, "v2", nodes)
	seen := s.stopWatching(pods, statuses)

	s.g.Expect(s.podUIDs(eds)).To(gomega.Equal(before), "pods kept their names and UIDs")
	s.g.Expect(seen.Created).To(gomega.BeEmpty(), "pods created during the update")
	s.g.Expect(seen.SlowestDeletion).To(gomega.BeZero(), "a pod was deleted during the update")
	s.g.Expect(s.podsCreated()).To(gomega.Equal(created), "pods the invariant monitor saw created")
	s.g.Expect(seen.MaxUnavailable).To(gomega.BeNumerically("<=", 2), "nodes without a ready pod at once")
	s.g.Expect(seen.MaxUnavailable).To(gomega.BeNumerically(">=", 1), "the watcher saw no pod updated")
	s.g.Expect(seen.MaxPerNode).To(gomega.Equal(1), "pods on one node")
	for _, pod := range s.pods(s.g, eds) {
		s.g.Expect(pod.Annotations).To(gomega.HaveKeyWithValue(v1alpha1.InPlaceUpdatedFromAnnotation, first), pod.Name)
		s.g.Expect(pod.Status.ContainerStatuses[0].Image).To(gomega.Equal(agentImage("v2")), pod.Name)
		s.g.Expect(pod.Status.ContainerStatuses[0].RestartCount).To(gomega.BeEquivalentTo(1), "restarts of %s", pod.Name)
	}
	s.g.Expect(s.monitor.Report().Violations).To(gomega.BeEmpty())
	s.t.Logf("in place: %d pods created, %d deleted, at most %d nodes unavailable", len(seen.Created), len(before)-len(s.podUIDs(eds)), seen.MaxUnavailable)
	return eds, second
}

// An image-only change with InPlaceIfPossible patches the running pods in
// place; a change beyond images, in the same mode, replaces them.
func TestInPlaceImageUpdate(t *testing.T) {
	s := newScenario(t)
	eds := s.create(inPlaceAgent(s.ns, false))
	nodes := s.nodeNames()
	eds, _ = s.expectRolledOut(eds, "v1", nodes)
	eds, _ = s.expectUpdatedInPlace(eds, nodes)

	before := s.podUIDs(eds)
	pods, statuses := s.startWatching(eds, edsPods(eds.Name), nodes)
	s.update(eds, func(e *v1alpha1.ExtendedDaemonSet) {
		setVersion(e, "v3")
		e.Spec.Template.Spec.Containers[0].Env = []corev1.EnvVar{{Name: "MODE", Value: "v3"}}
	})
	eds, _ = s.expectRolledOut(eds, "v3", nodes)
	seen := s.stopWatching(pods, statuses)
	s.g.Expect(seen.Created).To(gomega.HaveKeyWithValue("ExtendedDaemonSetReplicaSet", len(nodes)), "pods created")
	s.g.Expect(seen.MaxUnavailable).To(gomega.BeNumerically("<=", 2), "nodes without a ready pod at once")
	for name, uid := range s.podUIDs(eds) {
		s.g.Expect(before[name]).NotTo(gomega.Equal(uid), "pod %s kept across a change beyond images", name)
	}
}

// With inPlaceReadinessGate the pods carry the gate; an update closes it,
// the kubelet takes the pod out of service, and only then are its images
// patched; the gate opens once the new containers are ready.
func TestInPlaceImageUpdateWithReadinessGate(t *testing.T) {
	s := newScenario(t)
	eds := s.create(inPlaceAgent(s.ns, true))
	nodes := s.nodeNames()
	eds, _ = s.expectRolledOut(eds, "v1", nodes)
	for _, pod := range s.pods(s.g, eds) {
		s.g.Expect(pod.Spec.ReadinessGates).To(gomega.ConsistOf(corev1.PodReadinessGate{ConditionType: v1alpha1.InPlaceUpdateReadyCondition}))
	}
	eds, _ = s.expectUpdatedInPlace(eds, nodes)
	for _, pod := range s.pods(s.g, eds) {
		s.g.Expect(pod.Status.Conditions).To(gomega.ContainElement(gomega.And(
			gomega.HaveField("Type", corev1.PodConditionType(v1alpha1.InPlaceUpdateReadyCondition)),
			gomega.HaveField("Status", corev1.ConditionTrue),
			gomega.HaveField("Reason", "ContainersReady"),
		)), "the gate of %s was closed and opened again", pod.Name)
	}
}

// With a canary, the canary nodes get new pods, as a canary is judged by
// restarts that an in-place update would add to; once it is promoted, the
// rolling update updates every other node in place.
func TestInPlaceImageUpdateAfterCanary(t *testing.T) {
	s := newScenario(t)
	eds := inPlaceAgent(s.ns, false)
	eds.Spec.Strategy.Canary = &v1alpha1.CanaryStrategy{
		Replicas: ptr.To(intstr.FromInt32(2)), Duration: &metav1.Duration{Duration: 5 * time.Second},
	}
	eds = s.create(eds)
	nodes := s.nodeNames()
	eds, _ = s.expectRolledOut(eds, "v1", nodes)
	before := s.podUIDs(eds)

	pods, statuses := s.startWatching(eds, edsPods(eds.Name), nodes)
	s.update(eds, func(e *v1alpha1.ExtendedDaemonSet) { setVersion(e, "v2") })
	eds, _ = s.expectRolledOut(eds, "v2", nodes)
	seen, err := pods.Stop()
	s.g.Expect(err).NotTo(gomega.HaveOccurred())
	_, err = statuses.Stop()
	s.g.Expect(err).NotTo(gomega.HaveOccurred())

	s.g.Expect(seen.Created).To(gomega.Equal(map[string]int{"ExtendedDaemonSetReplicaSet": 2}), "pods created: the canary's")
	kept := 0
	for name, uid := range s.podUIDs(eds) {
		if before[name] == uid {
			kept++
		}
	}
	s.g.Expect(kept).To(gomega.Equal(len(nodes)-2), "pods updated in place")
	s.g.Expect(seen.MaxUnavailable).To(gomega.BeNumerically("<=", 2), "nodes without a ready pod at once")
}
