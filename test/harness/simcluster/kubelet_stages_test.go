package simcluster

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	kwokv1alpha1 "sigs.k8s.io/kwok/pkg/apis/v1alpha1"
	"sigs.k8s.io/yaml"

	"github.com/extendeddaemonset/extendeddaemonset/test/harness/testenv"
)

func TestKubeletStagesAreStages(t *testing.T) {
	g := gomega.NewWithT(t)
	text := kubeletStagesYAML(1500 * time.Millisecond)
	var names []string
	for _, doc := range strings.Split(text, "\n---\n") {
		var stage kwokv1alpha1.Stage
		g.Expect(yaml.UnmarshalStrict([]byte(doc), &stage)).NotTo(gomega.HaveOccurred())
		g.Expect(stage.Kind).To(gomega.Equal("Stage"))
		g.Expect(stage.Spec.Steps).To(gomega.HaveLen(1), stage.Name)
		g.Expect(stage.Spec.Steps[0].Patch.Template).NotTo(gomega.BeEmpty(), stage.Name)
		if stage.Spec.Delay != nil {
			g.Expect(*stage.Spec.Delay.DurationMilliseconds).To(gomega.BeEquivalentTo(1500), stage.Name)
		}
		names = append(names, stage.Name)
	}
	g.Expect(names).To(gomega.Equal([]string{"pod-image-changed", "pod-image-started", "pod-ready-again", "pod-gate-closed"}))
	g.Expect(text).NotTo(gomega.ContainSubstring("{{imagesChanged}}"))
}

const testGate = "example.com/gate"

// kwok plays the kubelet's part when a running pod's image changes: the
// container stops (the pod turns unready), starts on the new image with one
// restart more, and the pod is Ready again; and Ready follows a readiness
// gate turned False then True. With more kubelet workers than kwok's own
// (its configuration then read from the file), it does the same.
func TestKubeletStagesUpdateImagesAndFollowGates(t *testing.T) {
	testenv.RequireAssets(t)
	g := gomega.NewWithT(t)
	c, err := Start(t.Context(), Options{Nodes: 1, ImageUpdateDelay: 300 * time.Millisecond, KubeletWorkers: 8})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Stop() })
	defer func() {
		if t.Failed() {
			var logs strings.Builder
			c.DumpLogs(&logs, 40)
			t.Log(logs.String())
		}
	}()
	pods := kubernetes.NewForConfigOrDie(c.Config()).CoreV1().Pods(metav1.NamespaceDefault)
	pod := podOn("node-0")
	pod.Spec.ReadinessGates = []corev1.PodReadinessGate{{ConditionType: testGate}}
	_, err = pods.Create(t.Context(), pod, metav1.CreateOptions{})
	g.Expect(err).NotTo(gomega.HaveOccurred())
	get := func(g gomega.Gomega) *corev1.Pod {
		p, err := pods.Get(t.Context(), pod.Name, metav1.GetOptions{})
		g.Expect(err).NotTo(gomega.HaveOccurred())
		return p
	}
	ready := func(p *corev1.Pod) corev1.ConditionStatus {
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.PodReady {
				return c.Status
			}
		}
		return corev1.ConditionUnknown
	}
	eventually := func(f func(g gomega.Gomega)) {
		t.Helper()
		g.Eventually(f).WithTimeout(30 * time.Second).WithPolling(50 * time.Millisecond).Should(gomega.Succeed())
	}
	eventually(func(g gomega.Gomega) { g.Expect(ready(get(g))).To(gomega.Equal(corev1.ConditionTrue)) })

	patch := `[{"op":"replace","path":"/spec/containers/0/image","value":"registry.k8s.io/pause:3.11"}]`
	_, err = pods.Patch(t.Context(), pod.Name, types.JSONPatchType, []byte(patch), metav1.PatchOptions{})
	g.Expect(err).NotTo(gomega.HaveOccurred())
	eventually(func(g gomega.Gomega) {
		p := get(g)
		g.Expect(ready(p)).To(gomega.Equal(corev1.ConditionFalse), "the container stopped")
		g.Expect(p.Status.ContainerStatuses[0].Image).To(gomega.Equal("registry.k8s.io/pause:3.10"))
	})
	eventually(func(g gomega.Gomega) {
		p := get(g)
		g.Expect(p.Status.ContainerStatuses[0].Image).To(gomega.Equal("registry.k8s.io/pause:3.11"))
		g.Expect(p.Status.ContainerStatuses[0].RestartCount).To(gomega.BeEquivalentTo(1))
		g.Expect(ready(p)).To(gomega.Equal(corev1.ConditionTrue), "started on the new image")
	})

	setGate := func(status corev1.ConditionStatus) {
		t.Helper()
		cond, err := json.Marshal(map[string]any{"status": map[string]any{"conditions": []corev1.PodCondition{{
			Type: testGate, Status: status, LastTransitionTime: metav1.Now(),
		}}}})
		g.Expect(err).NotTo(gomega.HaveOccurred())
		_, err = pods.Patch(t.Context(), pod.Name, types.StrategicMergePatchType, cond, metav1.PatchOptions{}, "status")
		g.Expect(err).NotTo(gomega.HaveOccurred())
	}
	setGate(corev1.ConditionFalse)
	eventually(func(g gomega.Gomega) { g.Expect(ready(get(g))).To(gomega.Equal(corev1.ConditionFalse)) })
	setGate(corev1.ConditionTrue)
	eventually(func(g gomega.Gomega) { g.Expect(ready(get(g))).To(gomega.Equal(corev1.ConditionTrue)) })
	g.Expect(get(g).Status.ContainerStatuses[0].RestartCount).To(gomega.BeEquivalentTo(1), "a gate restarts nothing")
}
