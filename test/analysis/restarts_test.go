package analysis

import (
	"context"
	"fmt"
	"strconv"
	"testing"

	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
	"github.com/extendeddaemonset/extendeddaemonset/test/exporters/kubestate"
	"github.com/extendeddaemonset/extendeddaemonset/test/harness"
)

// The restarts preset fails a canary whose container restarted during the
// window, with its default max of 0, and passes one that did not. The
// restart counts are real pod statuses, published as kube-state-metrics
// does.
func TestRestartsPreset(t *testing.T) {
	t.Parallel()
	g := gomega.NewWithT(t)
	ctx := t.Context()
	c := startKube(t)

	const namespace = "restarts"
	g.Expect(c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}})).To(gomega.Succeed())
	crashing := runningPod(ctx, g, c, namespace, "crashing")
	steady := runningPod(ctx, g, c, namespace, "steady")

	kube, err := kubestate.Start(c, kubestate.Options{Namespace: namespace})
	g.Expect(err).NotTo(gomega.HaveOccurred())
	t.Cleanup(func() { _ = kube.Close() })
	_, q := ownPrometheus(t, kube.Addr())

	restarts := v1alpha1.AnalysisMetric{Name: "restarts", Preset: v1alpha1.MetricPresetRestarts}
	for _, pod := range []*corev1.Pod{crashing, steady} {
		measured(t, q, restarts, canaryOf(namespace, pod.Name), v1alpha1.AnalysisSuccessful, valueNear(0))
	}

	crashing.Status.ContainerStatuses[0].RestartCount = 2
	g.Expect(c.Status().Update(ctx, crashing)).To(gomega.Succeed())
	measured(t, q, restarts, canaryOf(namespace, crashing.Name), v1alpha1.AnalysisFailed,
		func(g gomega.Gomega, m v1alpha1.Measurement) {
			// increase() only extrapolates: two restarts count at least 2.
			g.Expect(strconv.ParseFloat(m.Value, 64)).To(gomega.BeNumerically(">=", 2))
			g.Expect(m.Message).To(gomega.ContainSubstring(m.Value + " > max 0"))
		})
	measured(t, q, restarts, canaryOf(namespace, steady.Name), v1alpha1.AnalysisSuccessful, valueNear(0))
}

// Against a baseline, the restarts preset compares restarts per pod: one
// restart on the only canary pod is worse than three over a stable fleet of
// thirty, though three is the larger total.
func TestRestartsPresetAgainstABaseline(t *testing.T) {
	t.Parallel()
	g := gomega.NewWithT(t)
	ctx := t.Context()
	c := startKube(t)

	const namespace = "restarts-baseline"
	g.Expect(c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}})).To(gomega.Succeed())
	canary := runningPod(ctx, g, c, namespace, "canary")
	stable := make([]*corev1.Pod, 30)
	target := canaryOf(namespace, canary.Name)
	for i := range stable {
		stable[i] = runningPod(ctx, g, c, namespace, fmt.Sprintf("stable-%02d", i))
		target.StablePods = append(target.StablePods, stable[i].Name)
	}

	kube, err := kubestate.Start(c, kubestate.Options{Namespace: namespace})
	g.Expect(err).NotTo(gomega.HaveOccurred())
	t.Cleanup(func() { _ = kube.Close() })
	_, q := ownPrometheus(t, kube.Addr())

	// The threshold is loose so that the baseline alone decides.
	restarts := v1alpha1.AnalysisMetric{
		Name: "restarts", Preset: v1alpha1.MetricPresetRestarts,
		ThresholdRange: &v1alpha1.ThresholdRange{Max: ptr.To(10.0)},
		Baseline:       &v1alpha1.BaselineComparison{MaxRelativeIncrease: ptr.To(50.0)},
	}
	// Every pod is scraped before anything restarts, so that increase()
	// sees each restart.
	measured(t, q, restarts, target, v1alpha1.AnalysisSuccessful, func(g gomega.Gomega, m v1alpha1.Measurement) {
		near(g, "value", m.Value, 0)
		near(g, "baseline", m.BaselineValue, 0)
	})

	for _, pod := range []*corev1.Pod{canary, stable[0], stable[1], stable[2]} {
		pod.Status.ContainerStatuses[0].RestartCount = 1
		g.Expect(c.Status().Update(ctx, pod)).To(gomega.Succeed())
	}
	measured(t, q, restarts, target, v1alpha1.AnalysisFailed, func(g gomega.Gomega, m v1alpha1.Measurement) {
		// increase() only extrapolates: a restart counts at least 1.
		g.Expect(strconv.ParseFloat(m.Value, 64)).To(gomega.BeNumerically(">=", 1))
		g.Expect(strconv.ParseFloat(m.BaselineValue, 64)).To(gomega.And(
			gomega.BeNumerically(">=", 0.1), gomega.BeNumerically("<", 0.2)))
		g.Expect(m.Message).To(gomega.ContainSubstring(m.Value + " > baseline " + m.BaselineValue))
	})
}

// startKube starts an API server for the test alone and a client of it.
func startKube(t *testing.T) client.Client {
	t.Helper()
	g := gomega.NewWithT(t)
	env, cfg, err := harness.StartEnvtest()
	g.Expect(err).NotTo(gomega.HaveOccurred())
	t.Cleanup(func() { g.Expect(env.Stop()).To(gomega.Succeed()) })
	c, err := client.New(cfg, client.Options{})
	g.Expect(err).NotTo(gomega.HaveOccurred())
	return c
}

// runningPod creates a pod whose one container runs and has never
// restarted, reported through the status subresource as a kubelet does.
func runningPod(ctx context.Context, g gomega.Gomega, c client.Client, namespace, name string) *corev1.Pod {
	const container, image = "agent", "registry.k8s.io/pause:3.10"
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: container, Image: image}}},
	}
	g.Expect(c.Create(ctx, pod)).To(gomega.Succeed())
	pod.Status = corev1.PodStatus{
		Phase: corev1.PodRunning,
		ContainerStatuses: []corev1.ContainerStatus{{
			Name: container, Image: image, Ready: true,
			State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.Now()}},
		}},
	}
	g.Expect(c.Status().Update(ctx, pod)).To(gomega.Succeed())
	return pod
}
