package store

import (
	"testing"

	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
)

// The cache keeps of a pod what the controllers read, and passes other
// kinds through untouched.
func TestTrimPodDropsWhatNoControllerReads(t *testing.T) {
	g := gomega.NewWithT(t)
	always := corev1.ContainerRestartPolicyAlways
	pod := &corev1.Pod{Spec: corev1.PodSpec{
		NodeName:       "node-1",
		InitContainers: []corev1.Container{{Name: "sidecar", Image: "sidecar:v1", RestartPolicy: &always, Command: []string{"run"}}},
		Containers:     []corev1.Container{{Name: "agent", Image: "agent:v1", Env: []corev1.EnvVar{{Name: "API_KEY", Value: "x"}}}},
		Volumes:        []corev1.Volume{{Name: "logs"}},
	}}
	obj, err := trimPod(pod)
	g.Expect(err).NotTo(gomega.HaveOccurred())
	trimmed := obj.(*corev1.Pod)
	g.Expect(trimmed.Spec.Volumes).To(gomega.BeEmpty())
	g.Expect(trimmed.Spec.NodeName).To(gomega.Equal("node-1"))
	g.Expect(trimmed.Spec.Containers).To(gomega.Equal([]corev1.Container{{Name: "agent", Image: "agent:v1"}}))
	g.Expect(trimmed.Spec.InitContainers).To(gomega.Equal([]corev1.Container{{Name: "sidecar", Image: "sidecar:v1", RestartPolicy: &always}}),
		"a sidecar keeps the restart policy that says it keeps running")

	node := &corev1.Node{}
	g.Expect(trimPod(node)).To(gomega.BeIdenticalTo(node), "other kinds pass through")
}
