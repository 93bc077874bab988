package controllers

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/onsi/gomega"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
)

// inPlaceEDS is an ExtendedDaemonSet updated in place, one node at a time.
func (s *scenario) inPlaceEDS(name string, gate bool) *v1alpha1.ExtendedDaemonSet {
	eds := s.newEDS(name, imageV1)
	ru := &eds.Spec.Strategy.RollingUpdate
	ru.Type, ru.MaxUnavailable, ru.InPlaceReadinessGate = v1alpha1.RollingUpdateInPlaceIfPossible, ptr.To(intstr.FromInt32(1)), gate
	return eds
}

// reportImages does the kubelet's part once a pod's containers run the
// images of its spec: the statuses say so and the pod is Ready, from now
// unless the readiness gates hold it.
func (s *scenario) reportImages(name string) {
	s.t.Helper()
	pod := &corev1.Pod{}
	s.g.Expect(k8s.Get(s.ctx, types.NamespacedName{Namespace: s.ns, Name: name}, pod)).To(gomega.Succeed())
	s.setPodStatus(name, func(st *corev1.PodStatus) {
		now := metav1.Now()
		st.ContainerStatuses = nil
		for _, c := range pod.Spec.Containers {
			st.ContainerStatuses = append(st.ContainerStatuses, corev1.ContainerStatus{
				Name: c.Name, Image: c.Image, Ready: true, Started: ptr.To(true),
				State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: now}},
			})
		}
		ready := corev1.ConditionTrue
		for _, g := range pod.Spec.ReadinessGates {
			if c := podConditionOf(st, g.ConditionType); c == nil || c.Status != corev1.ConditionTrue {
				ready = corev1.ConditionFalse
			}
		}
		setPodCondition(st, corev1.ContainersReady, corev1.ConditionTrue, now)
		setPodCondition(st, corev1.PodReady, ready, now)
	})
}

func podConditionOf(st *corev1.PodStatus, t corev1.PodConditionType) *corev1.PodCondition {
	if i := indexOfCondition(st.Conditions, t); i >= 0 {
		return &st.Conditions[i]
	}
	return nil
}

// setPodCondition sets a condition, its transition time only when its
// status changes.
func setPodCondition(st *corev1.PodStatus, t corev1.PodConditionType, status corev1.ConditionStatus, now metav1.Time) {
	c := podConditionOf(st, t)
	if c == nil {
		st.Conditions = append(st.Conditions, corev1.PodCondition{Type: t, Status: status, LastTransitionTime: now})
		return
	}
	if c.Status != status {
		c.Status, c.LastTransitionTime = status, now
	}
}

// podUIDs maps the scenario's pods, live or terminating, by name to UID.
func (s *scenario) podUIDs(g gomega.Gomega) map[string]types.UID {
	out := map[string]types.UID{}
	for _, p := range s.pods(g, nil) {
		out[p.Name] = p.UID
	}
	return out
}

// podsRunningImage returns the names of pods whose spec gives image.
func podsRunningImage(pods []corev1.Pod, image string) []string {
	var out []string
	for _, p := range pods {
		if p.Spec.Containers[0].Image == image {
			out = append(out, p.Name)
		}
	}
	return out
}

// An image-only change with InPlaceIfPossible patches the running pods,
// one node at a time under maxUnavailable 1: each keeps its name and UID,
// takes the new image, replica set labels and owner, and no pod is created
// or deleted. A change beyond images replaces the pods.
func TestImageChangeUpdatesPodsInPlace(t *testing.T) {
	s := newScenario(t)
	nodes := []*corev1.Node{s.createNode("a", nil), s.createNode("b", nil), s.createNode("c", nil)}
	eds := s.inPlaceEDS("agent", false)
	first, pods := s.createRolledOut(eds, nodes...)
	for _, pod := range pods {
		s.reportImages(pod.Name)
	}
	uids := s.podUIDs(s.g)

	s.setImage(eds, imageV2)
	second := s.activeReplicaSet(eds.Name, first)
	for range nodes {
		var patched string
		s.g.Eventually(func(g gomega.Gomega) {
			mid := podsRunningImage(s.pods(g, map[string]string{v1alpha1.ExtendedDaemonSetReplicaSetNameLabel: second}), imageV2)
			for _, name := range mid {
				pod := &corev1.Pod{}
				g.Expect(k8s.Get(s.ctx, types.NamespacedName{Namespace: s.ns, Name: name}, pod)).To(gomega.Succeed())
				if pod.Status.ContainerStatuses[0].Image != imageV2 {
					patched = name
				}
			}
			g.Expect(patched).NotTo(gomega.BeEmpty(), "no pod being updated")
		}).Should(gomega.Succeed())
		// The budget holds while the kubelet has not restarted it.
		s.g.Consistently(func(g gomega.Gomega) {
			updating := 0
			for _, p := range s.pods(g, nil) {
				if p.Spec.Containers[0].Image != p.Status.ContainerStatuses[0].Image {
					updating++
				}
			}
			g.Expect(updating).To(gomega.Equal(1), "pods mid-update, maxUnavailable 1")
		}).WithTimeout(time.Second).Should(gomega.Succeed())
		s.reportImages(patched)
	}

	s.g.Eventually(func(g gomega.Gomega) { expectRolledOut(g, s.getEDS(g, eds.Name)) }).Should(gomega.Succeed())
	s.g.Expect(s.podUIDs(s.g)).To(gomega.Equal(uids), "no pod created or deleted")
	secondRS := s.getERS(s.g, second)
	for _, pod := range s.pods(s.g, nil) {
		s.g.Expect(pod.Spec.Containers[0].Image).To(gomega.Equal(imageV2))
		s.g.Expect(pod.Labels).To(gomega.HaveKeyWithValue(v1alpha1.ExtendedDaemonSetReplicaSetNameLabel, second))
		s.g.Expect(pod.Labels).To(gomega.HaveKeyWithValue(v1alpha1.TemplateHashLabel, secondRS.Spec.TemplateGeneration))
		s.g.Expect(pod.Annotations).To(gomega.HaveKeyWithValue(v1alpha1.InPlaceUpdatedFromAnnotation, first))
		s.g.Expect(metav1.GetControllerOf(&pod).UID).To(gomega.Equal(secondRS.UID))
	}

	// Not only images: the pods are replaced.
	s.updateEDS(eds, func(e *v1alpha1.ExtendedDaemonSet) {
		e.Spec.Template.Spec.Containers[0].Env = []corev1.EnvVar{{Name: "MODE", Value: "new"}}
	})
	third := s.activeReplicaSet(eds.Name, first, second)
	s.g.Eventually(func(g gomega.Gomega) {
		deleted := 0
		for _, pod := range s.pods(g, nil) {
			g.Expect(pod.Labels).NotTo(gomega.HaveKeyWithValue(v1alpha1.ExtendedDaemonSetReplicaSetNameLabel, third),
				"pod %s moved to a template that differs beyond images", pod.Name)
			if s.gone(g, &pod) {
				deleted++
			}
		}
		g.Expect(deleted).To(gomega.Equal(1), "old pods deleted, maxUnavailable 1")
	}).Should(gomega.Succeed())
}

// With inPlaceReadinessGate, pods carry the gate, opened once they run; an
// update closes it first, patches the images only once the pod is out of
// service, and opens it again once the new containers are ready.
func TestInPlaceReadinessGate(t *testing.T) {
	s := newScenario(t)
	node := s.createNode("a", nil)
	eds := s.inPlaceEDS("agent", true)
	s.create(eds)
	first := s.activeReplicaSet(eds.Name)
	pod := s.waitForPods(first, node.Name)[node.Name]
	s.g.Expect(pod.Spec.ReadinessGates).To(gomega.ConsistOf(corev1.PodReadinessGate{ConditionType: v1alpha1.InPlaceUpdateReadyCondition}))
	s.runPod(&pod)
	s.reportImages(pod.Name)
	gate := func(g gomega.Gomega) corev1.ConditionStatus {
		live := &corev1.Pod{}
		g.Expect(k8s.Get(s.ctx, client.ObjectKeyFromObject(&pod), live)).To(gomega.Succeed())
		if c := podConditionOf(&live.Status, v1alpha1.InPlaceUpdateReadyCondition); c != nil {
			return c.Status
		}
		return ""
	}
	s.g.Eventually(gate).Should(gomega.Equal(corev1.ConditionTrue), "the gate opens once the pod runs")
	s.reportImages(pod.Name)
	s.g.Eventually(func(g gomega.Gomega) { expectRolledOut(g, s.getEDS(g, eds.Name)) }).Should(gomega.Succeed())

	s.setImage(eds, imageV2)
	s.g.Eventually(gate).Should(gomega.Equal(corev1.ConditionFalse), "the gate closes before the update")
	s.g.Consistently(func(g gomega.Gomega) {
		g.Expect(s.pods(g, nil)[0].Spec.Containers[0].Image).To(gomega.Equal(imageV1))
		g.Expect(gate(g)).To(gomega.Equal(corev1.ConditionFalse), "the old replica set opened the gate again")
	}).WithTimeout(2*time.Second).Should(gomega.Succeed(), "no image patched while the pod is still in service")

	// The kubelet takes it out of service.
	s.setPodStatus(pod.Name, func(st *corev1.PodStatus) { setPodCondition(st, corev1.PodReady, corev1.ConditionFalse, metav1.Now()) })
	s.g.Eventually(func(g gomega.Gomega) {
		g.Expect(s.pods(g, nil)[0].Spec.Containers[0].Image).To(gomega.Equal(imageV2))
	}).Should(gomega.Succeed())
	s.g.Consistently(gate).WithTimeout(time.Second).Should(gomega.Equal(corev1.ConditionFalse), "the old containers still run")

	s.reportImages(pod.Name)
	s.g.Eventually(gate).Should(gomega.Equal(corev1.ConditionTrue), "the new containers are ready")
	s.reportImages(pod.Name)
	s.g.Eventually(func(g gomega.Gomega) { expectRolledOut(g, s.getEDS(g, eds.Name)) }).Should(gomega.Succeed())
	s.g.Expect(s.pods(s.g, nil)).To(gomega.HaveLen(1))
	s.g.Expect(s.pods(s.g, nil)[0].UID).To(gomega.Equal(pod.UID))
}

// A pod whose gate was closed for its update serves again when the update
// does not go on: the rolling update is paused before the kubelet took the
// pod out of service. Resumed, the update starts over.
func TestInPlaceGateReopensWhenTheUpdateIsPaused(t *testing.T) {
	s := newScenario(t)
	node := s.createNode("a", nil)
	eds := s.inPlaceEDS("agent", true)
	s.create(eds)
	first := s.activeReplicaSet(eds.Name)
	pod := s.waitForPods(first, node.Name)[node.Name]
	s.runPod(&pod)
	s.reportImages(pod.Name)
	gate := func(g gomega.Gomega) corev1.ConditionStatus {
		live := &corev1.Pod{}
		g.Expect(k8s.Get(s.ctx, client.ObjectKeyFromObject(&pod), live)).To(gomega.Succeed())
		if c := podConditionOf(&live.Status, v1alpha1.InPlaceUpdateReadyCondition); c != nil {
			return c.Status
		}
		return ""
	}
	s.g.Eventually(gate).Should(gomega.Equal(corev1.ConditionTrue))
	s.reportImages(pod.Name)
	s.g.Eventually(func(g gomega.Gomega) { expectRolledOut(g, s.getEDS(g, eds.Name)) }).Should(gomega.Succeed())

	s.setImage(eds, imageV2)
	s.g.Eventually(gate).Should(gomega.Equal(corev1.ConditionFalse), "the gate closes before the update")
	s.annotate(eds, v1alpha1.RollingUpdatePausedAnnotation, "true")
	s.g.Eventually(gate).Should(gomega.Equal(corev1.ConditionTrue), "a paused update leaves the pod in service")
	s.g.Expect(s.pods(s.g, nil)[0].Spec.Containers[0].Image).To(gomega.Equal(imageV1))

	s.annotate(eds, v1alpha1.RollingUpdatePausedAnnotation, "false")
	s.g.Eventually(gate).Should(gomega.Equal(corev1.ConditionFalse), "resumed, the update closes the gate again")
	s.setPodStatus(pod.Name, func(st *corev1.PodStatus) { setPodCondition(st, corev1.PodReady, corev1.ConditionFalse, metav1.Now()) })
	s.g.Eventually(func(g gomega.Gomega) {
		g.Expect(s.pods(g, nil)[0].Spec.Containers[0].Image).To(gomega.Equal(imageV2))
	}).Should(gomega.Succeed())
}

// A patch planned on a stale read of the pod is refused with a conflict
// rather than written over the newer pod.
func TestInPlacePatchOfAStalePodConflicts(t *testing.T) {
	s := newScenario(t)
	node := s.createNode("a", nil)
	eds := s.inPlaceEDS("agent", false)
	eds.Spec.Strategy.RollingUpdate.Paused = true
	first, pods := s.createRolledOut(eds, node)
	stale := pods[node.Name]
	s.reportImages(stale.Name)

	ers := s.getERS(s.g, first).DeepCopy()
	ers.Name, ers.UID = "agent-next", "next-uid"
	ers.Spec.Template.Spec.Containers[0].Image = imageV2
	owner := metav1.OwnerReference{APIVersion: "extendeddaemonset.io/v1alpha1", Kind: "ExtendedDaemonSetReplicaSet", Name: ers.Name, UID: ers.UID, Controller: ptr.To(true)}
	p := inPlacePatch(&stale, ers, owner)
	data, err := json.Marshal(p.ops)
	s.g.Expect(err).NotTo(gomega.HaveOccurred())
	err = k8s.Patch(s.ctx, stale.DeepCopy(), client.RawPatch(types.JSONPatchType, data))
	s.g.Expect(apierrors.IsConflict(err)).To(gomega.BeTrue(), "patch of a pod read before its status changed: %v", err)

	live := &corev1.Pod{}
	s.g.Expect(k8s.Get(s.ctx, client.ObjectKeyFromObject(&stale), live)).To(gomega.Succeed())
	s.g.Expect(live.Spec.Containers[0].Image).To(gomega.Equal(imageV1))
	p = inPlacePatch(live, ers, owner)
	data, err = json.Marshal(p.ops)
	s.g.Expect(err).NotTo(gomega.HaveOccurred())
	s.g.Expect(k8s.Patch(s.ctx, live, client.RawPatch(types.JSONPatchType, data))).To(gomega.Succeed(), "the same patch on the pod as it is")
	s.g.Expect(live.Spec.Containers[0].Image).To(gomega.Equal(imageV2))
	s.g.Expect(live.Labels).To(gomega.HaveKeyWithValue(v1alpha1.ExtendedDaemonSetReplicaSetNameLabel, ers.Name))
	s.g.Expect(live.OwnerReferences).To(gomega.ConsistOf(gomega.HaveField("UID", ers.UID)))
}

// A patch the API server refuses (here an admission policy) is told as a
// FailedUpdate warning in the API server's words, and the pod stays as it
// was.
func TestRefusedInPlaceUpdateIsTold(t *testing.T) {
	s := newScenario(t)
	node := s.createNode("a", nil)
	eds := s.inPlaceEDS("agent", false)
	first, pods := s.createRolledOut(eds, node)
	pod := pods[node.Name]
	s.reportImages(pod.Name)
	const refusal = "agents are never patched in this namespace"
	s.deny(admissionregistrationv1.Update, "", "v1", "pods", refusal)
	// The policy takes effect once the API server has loaded it.
	s.g.Eventually(func(g gomega.Gomega) {
		probe := client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"annotations":{"probe":"x"}}}`))
		g.Expect(k8s.Patch(s.ctx, pod.DeepCopy(), probe)).To(gomega.MatchError(gomega.ContainSubstring(refusal)))
	}).Should(gomega.Succeed())

	s.setImage(eds, imageV2)
	second := s.activeReplicaSet(eds.Name, first)
	s.g.Eventually(func(g gomega.Gomega) {
		var events eventsv1.EventList
		g.Expect(k8s.List(s.ctx, &events, client.InNamespace(s.ns))).To(gomega.Succeed())
		var refused []string
		for _, e := range events.Items {
			if e.Reason == "FailedUpdate" && e.Type == corev1.EventTypeWarning && e.Regarding.Name == second {
				refused = append(refused, e.Note)
			}
		}
		g.Expect(refused).To(gomega.ConsistOf(gomega.ContainSubstring(refusal)))
	}).Should(gomega.Succeed())
	live := s.pods(s.g, nil)
	s.g.Expect(live).To(gomega.HaveLen(1))
	s.g.Expect(live[0].UID).To(gomega.Equal(pod.UID))
	s.g.Expect(live[0].Spec.Containers[0].Image).To(gomega.Equal(imageV1))
	s.g.Expect(live[0].Labels).To(gomega.HaveKeyWithValue(v1alpha1.ExtendedDaemonSetReplicaSetNameLabel, first))
}
