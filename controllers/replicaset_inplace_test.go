package controllers

import (
	"testing"
	"time"

	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
)

func agentTemplate() *corev1.PodTemplateSpec {
	return &corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "agent"}},
		Spec: corev1.PodSpec{
			InitContainers: []corev1.Container{{Name: "init", Image: "init:1"}},
			Containers: []corev1.Container{
				{Name: "agent", Image: "agent:1", Args: []string{"--run"}, Env: []corev1.EnvVar{{Name: "A", Value: "1"}}},
				{Name: "sidecar", Image: "sidecar:1"},
			},
		},
	}
}

func TestOnlyImagesDiffer(t *testing.T) {
	cases := []struct {
		name   string
		change func(*corev1.PodTemplateSpec)
		want   bool
	}{
		{"nothing", func(*corev1.PodTemplateSpec) {}, true},
		{"a container image", func(t *corev1.PodTemplateSpec) { t.Spec.Containers[0].Image = "agent:2" }, true},
		{"every image, init containers too", func(t *corev1.PodTemplateSpec) {
			t.Spec.Containers[0].Image, t.Spec.Containers[1].Image, t.Spec.InitContainers[0].Image = "agent:2", "sidecar:2", "init:2"
		}, true},
		{"an environment variable", func(t *corev1.PodTemplateSpec) { t.Spec.Containers[0].Env[0].Value = "2" }, false},
		{"arguments", func(t *corev1.PodTemplateSpec) { t.Spec.Containers[0].Args = []string{"--run", "--fast"} }, false},
		{"a label, with an image", func(t *corev1.PodTemplateSpec) {
			t.Labels["version"] = "2"
			t.Spec.Containers[0].Image = "agent:2"
		}, false},
		{"resources", func(t *corev1.PodTemplateSpec) {
			t.Spec.Containers[1].Resources.Limits = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}
		}, false},
		{"a container added", func(t *corev1.PodTemplateSpec) {
			t.Spec.Containers = append(t.Spec.Containers, corev1.Container{Name: "more", Image: "more:1"})
		}, false},
		{"an init container removed", func(t *corev1.PodTemplateSpec) { t.Spec.InitContainers = nil }, false},
		{"a container renamed, same image", func(t *corev1.PodTemplateSpec) { t.Spec.Containers[1].Name = "helper" }, false},
		{"containers swapped", func(t *corev1.PodTemplateSpec) {
			t.Spec.Containers[0], t.Spec.Containers[1] = t.Spec.Containers[1], t.Spec.Containers[0]
		}, false},
		{"the pod spec beside containers", func(t *corev1.PodTemplateSpec) { t.Spec.HostNetwork = true }, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			from, to := agentTemplate(), agentTemplate()
			tc.change(to)
			gomega.NewWithT(t).Expect(onlyImagesDiffer(from, to)).To(gomega.Equal(tc.want))
		})
	}
}

func TestSameImage(t *testing.T) {
	g := gomega.NewWithT(t)
	for _, same := range [][2]string{
		{"nginx", "docker.io/library/nginx:latest"},
		{"nginx:1.25", "docker.io/library/nginx:1.25"},
		{"datadog/agent:7", "docker.io/datadog/agent:7"},
		{"gcr.io/x/agent:7", "gcr.io/x/agent:7"},
		{"localhost:5000/agent", "localhost:5000/agent:latest"},
		{"nginx@sha256:abc", "docker.io/library/nginx@sha256:abc"},
	} {
		g.Expect(sameImage(same[0], same[1])).To(gomega.BeTrue(), "%s and %s", same[0], same[1])
	}
	for _, other := range [][2]string{
		{"nginx:1.25", "nginx:1.26"},
		{"gcr.io/x/agent:7", "docker.io/x/agent:7"},
		{"localhost:5000/agent", "docker.io/localhost:5000/agent"},
		{"agent:7", "agent"},
	} {
		g.Expect(sameImage(other[0], other[1])).To(gomega.BeFalse(), "%s and %s", other[0], other[1])
	}
}

// runningPod is a pod of template reporting images as its statuses.
func runningPod(template *corev1.PodTemplateSpec, images ...string) *corev1.Pod {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Annotations: map[string]string{}}, Spec: template.Spec}
	pod.Status.Phase = corev1.PodRunning
	for i, c := range template.Spec.Containers {
		pod.Status.ContainerStatuses = append(pod.Status.ContainerStatuses, corev1.ContainerStatus{Name: c.Name, Image: images[i]})
	}
	for _, c := range template.Spec.InitContainers {
		pod.Status.InitContainerStatuses = append(pod.Status.InitContainerStatuses, corev1.ContainerStatus{Name: c.Name, Image: "init:0"})
	}
	return pod
}

func TestImagesPending(t *testing.T) {
	g := gomega.NewWithT(t)
	template := agentTemplate()
	pod := runningPod(template, "agent:0", "sidecar:1")
	g.Expect(imagesPending(pod)).To(gomega.BeFalse(), "a pod never updated in place is taken at its word")

	pod.Annotations[v1alpha1.InPlaceUpdatedFromAnnotation] = "rs-1"
	g.Expect(imagesPending(pod)).To(gomega.BeTrue(), "a container reports another image")
	g.Expect(updating(pod)).To(gomega.BeTrue())

	pod.Status.ContainerStatuses[0].Image = "docker.io/library/agent:1"
	g.Expect(imagesPending(pod)).To(gomega.BeFalse(), "the runtime qualified the image; an init container that ran is not run again")

	pod.Spec.Containers[0].Image = "agent@sha256:0123"
	pod.Status.ContainerStatuses[0].ImageID = "docker.io/library/agent@sha256:0123"
	g.Expect(imagesPending(pod)).To(gomega.BeFalse(), "the runtime names the pinned image by a tag; its digest says it")

	pod.Spec.InitContainers[0].RestartPolicy = ptr.To(corev1.ContainerRestartPolicyAlways)
	g.Expect(imagesPending(pod)).To(gomega.BeTrue(), "a sidecar init container is restarted with its new image")
}

func TestReadinessGateStates(t *testing.T) {
	g := gomega.NewWithT(t)
	pod := runningPod(agentTemplate(), "agent:1", "sidecar:1")
	set := func(t corev1.PodConditionType, s corev1.ConditionStatus) {
		if i := indexOfCondition(pod.Status.Conditions, t); i >= 0 {
			pod.Status.Conditions[i].Status = s
			return
		}
		pod.Status.Conditions = append(pod.Status.Conditions, corev1.PodCondition{Type: t, Status: s})
	}
	set(corev1.PodReady, corev1.ConditionTrue)
	set(corev1.ContainersReady, corev1.ConditionTrue)
	g.Expect(gateClosed(pod) || draining(pod) || updating(pod) || mayOpenGate(pod)).To(gomega.BeFalse(), "no gate, nothing to do")

	pod.Spec.ReadinessGates = []corev1.PodReadinessGate{{ConditionType: v1alpha1.InPlaceUpdateReadyCondition}}
	set(v1alpha1.InPlaceUpdateReadyCondition, corev1.ConditionTrue)
	g.Expect(gateClosed(pod)).To(gomega.BeFalse())

	set(v1alpha1.InPlaceUpdateReadyCondition, corev1.ConditionFalse)
	g.Expect(draining(pod)).To(gomega.BeTrue(), "closed, the kubelet has not taken it out of service yet")
	g.Expect(closedForUpdate(pod)).To(gomega.BeFalse(), "not closed by an update")
	pod.Status.Conditions[indexOfCondition(pod.Status.Conditions, v1alpha1.InPlaceUpdateReadyCondition)].Reason = gateReasonUpdating
	g.Expect(closedForUpdate(pod)).To(gomega.BeTrue(), "closed to update the pod")
	set(corev1.PodReady, corev1.ConditionFalse)
	g.Expect(draining(pod)).To(gomega.BeFalse(), "drained")
	g.Expect(closedForUpdate(pod)).To(gomega.BeTrue(), "drained, its update still to come")
	g.Expect(updating(pod)).To(gomega.BeFalse())
	g.Expect(mayOpenGate(pod)).To(gomega.BeTrue(), "its containers run its images and are ready")

	set(corev1.ContainersReady, corev1.ConditionFalse)
	g.Expect(updating(pod)).To(gomega.BeTrue(), "behind the closed gate, its containers are not ready yet")
	g.Expect(mayOpenGate(pod)).To(gomega.BeFalse())
}

func TestInPlaceReadySinceCountsFromTheNewestContainer(t *testing.T) {
	g := gomega.NewWithT(t)
	ready := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	started := ready.Add(time.Minute)
	pod := runningPod(agentTemplate(), "agent:1", "sidecar:1")
	pod.Status.ContainerStatuses[1].State.Running = &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(started)}
	g.Expect(inPlaceReadySince(pod, ready)).To(gomega.Equal(ready), "not updated in place")
	pod.Annotations[v1alpha1.InPlaceUpdatedFromAnnotation] = "rs-1"
	g.Expect(inPlaceReadySince(pod, ready)).To(gomega.Equal(started))
	g.Expect(inPlaceReadySince(pod, time.Time{})).To(gomega.BeZero(), "not ready stays not ready")
}

func TestInPlacePatchMovesThePodInOneWrite(t *testing.T) {
	g := gomega.NewWithT(t)
	pod := runningPod(agentTemplate(), "agent:1", "sidecar:1")
	pod.ResourceVersion = "42"
	pod.Annotations = nil
	pod.Labels = map[string]string{
		v1alpha1.ExtendedDaemonSetNameLabel: "eds", v1alpha1.ExtendedDaemonSetReplicaSetNameLabel: "eds-old",
		v1alpha1.TemplateHashLabel: "old",
	}
	other := metav1.OwnerReference{APIVersion: "v1", Kind: "ConfigMap", Name: "x", UID: "u"}
	pod.OwnerReferences = []metav1.OwnerReference{
		other, {APIVersion: "extendeddaemonset.io/v1alpha1", Kind: "ExtendedDaemonSetReplicaSet", Name: "eds-old", UID: "old", Controller: ptr.To(true)},
	}
	ers := &v1alpha1.ExtendedDaemonSetReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: "eds-new", UID: "new"}}
	ers.Spec.Template = *agentTemplate()
	ers.Spec.Template.Spec.Containers[0].Image = "agent:2"
	ers.Spec.TemplateGeneration = "new"
	owner := metav1.OwnerReference{APIVersion: "extendeddaemonset.io/v1alpha1", Kind: "ExtendedDaemonSetReplicaSet", Name: "eds-new", UID: "new", Controller: ptr.To(true)}

	p := inPlacePatch(pod, ers, owner)
	g.Expect(p.status).To(gomega.BeFalse())
	g.Expect(p.ops).To(gomega.Equal([]patchOp{
		{Op: "replace", Path: "/metadata/resourceVersion", Value: "42"},
		{Op: "replace", Path: "/spec/containers/0/image", Value: "agent:2"},
		{Op: "add", Path: "/metadata/annotations", Value: map[string]string{v1alpha1.InPlaceUpdatedFromAnnotation: "eds-old"}},
		{Op: "add", Path: "/metadata/labels/extendeddaemonset.io~1replicaset", Value: "eds-new"},
		{Op: "add", Path: "/metadata/labels/extendeddaemonset.io~1template-hash", Value: "new"},
		{Op: "add", Path: "/metadata/ownerReferences", Value: []metav1.OwnerReference{owner, other}},
	}))
	e := p.expected
	g.Expect(e.Spec.Containers[0].Image).To(gomega.Equal("agent:2"))
	g.Expect(e.Labels).To(gomega.HaveKeyWithValue(v1alpha1.ExtendedDaemonSetReplicaSetNameLabel, "eds-new"))
	g.Expect(metav1.GetControllerOf(e).UID).To(gomega.BeEquivalentTo("new"))
	g.Expect(pod.Spec.Containers[0].Image).To(gomega.Equal("agent:1"), "the pod read is left as it was")
	g.Expect(metav1.GetControllerOf(pod).UID).To(gomega.BeEquivalentTo("old"))
	g.Expect(imagesPending(e)).To(gomega.BeTrue(), "the patched pod is mid-update until its containers say otherwise")
}

func TestGatePatchSetsTheCondition(t *testing.T) {
	g := gomega.NewWithT(t)
	now := metav1.NewTime(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
	pod := runningPod(agentTemplate(), "agent:1", "sidecar:1")
	pod.ResourceVersion = "7"

	p := gatePatch(pod, corev1.ConditionTrue, gateReasonReady, now)
	g.Expect(p.status).To(gomega.BeTrue())
	cond := corev1.PodCondition{Type: v1alpha1.InPlaceUpdateReadyCondition, Status: corev1.ConditionTrue, Reason: gateReasonReady, LastTransitionTime: now}
	g.Expect(p.ops[1:]).To(gomega.Equal([]patchOp{{Op: "add", Path: "/status/conditions", Value: []corev1.PodCondition{cond}}}))

	pod = p.expected
	p = gatePatch(pod, corev1.ConditionFalse, gateReasonUpdating, now)
	cond.Status, cond.Reason = corev1.ConditionFalse, gateReasonUpdating
	g.Expect(p.ops[1:]).To(gomega.Equal([]patchOp{{Op: "replace", Path: "/status/conditions/0", Value: cond}}))
	g.Expect(pod.Status.Conditions[0].Status).To(gomega.Equal(corev1.ConditionTrue), "the pod read is left as it was")
}
