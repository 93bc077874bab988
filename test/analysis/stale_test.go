package analysis

import (
	"testing"

	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/extendeddaemonset/extendeddaemonset/analysis"
	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
	"github.com/extendeddaemonset/extendeddaemonset/test/exporters/kubestate"
)

// A canary whose restart counters are no longer exposed is not judged: the
// window still holds the samples scraped before the series went stale, and
// on those alone a canary would pass as "0 restarts" however it fares now.
// Every form of the restarts preset goes from Successful to "no data" when
// kube-state-metrics stops exposing the canary pods, and when it stops
// altogether.
func TestRestartsPresetIgnoresStaleSeries(t *testing.T) {
	t.Parallel()
	g := gomega.NewWithT(t)
	ctx := t.Context()
	c := startKube(t)

	const namespace = "restarts-stale"
	g.Expect(c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}})).To(gomega.Succeed())
	pods := func(prefix string) []*corev1.Pod {
		out := make([]*corev1.Pod, 0, 3)
		for _, suffix := range []string{"a", "b", "c"} {
			out = append(out, runningPod(ctx, g, c, namespace, prefix+"-"+suffix))
		}
		return out
	}
	target := func(canary, stable []*corev1.Pod) analysis.Target {
		out := analysis.Target{Namespace: namespace, Name: "agent"}
		for _, pod := range canary {
			out.CanaryPods = append(out.CanaryPods, pod.Name)
		}
		for _, pod := range stable {
			out.StablePods = append(out.StablePods, pod.Name)
		}
		return out
	}
	stable, deleted, kept := pods("stable"), pods("deleted"), pods("kept")
	deletedCanary, keptCanary := target(deleted, stable), target(kept, stable)

	kube, err := kubestate.Start(c, kubestate.Options{Namespace: namespace})
	g.Expect(err).NotTo(gomega.HaveOccurred())
	t.Cleanup(func() { _ = kube.Close() })
	_, q := ownPrometheus(t, kube.Addr())

	restarts := v1alpha1.AnalysisMetric{Name: "restarts", Preset: v1alpha1.MetricPresetRestarts}
	rankTest, meanPerPod := restarts, restarts
	rankTest.Baseline = &v1alpha1.BaselineComparison{MannWhitney: &v1alpha1.MannWhitneyTest{Direction: v1alpha1.DirectionIncrease}}
	meanPerPod.Baseline = &v1alpha1.BaselineComparison{MaxRelativeIncrease: ptr.To(50.0)}
	forms := map[string]v1alpha1.AnalysisMetric{"total": restarts, "per pod": rankTest, "mean per pod": meanPerPod}

	// judged measures every form at once, so that a phase that fails waits
	// out one timeout rather than one a form.
	judged := func(name string, target analysis.Target, want v1alpha1.AnalysisPhase, check func(gomega.Gomega, v1alpha1.Measurement)) bool {
		return t.Run(name, func(t *testing.T) {
			for form, metric := range forms {
				t.Run(form, func(t *testing.T) {
					t.Parallel()
					measured(t, q, metric, target, want, check)
				})
			}
		})
	}
	noData := func(g gomega.Gomega, m v1alpha1.Measurement) {
		g.Expect(m.Message).To(gomega.ContainSubstring("query returned no data"))
		g.Expect(m.Value).To(gomega.BeEmpty())
	}

	if !judged("deleted pods scraped", deletedCanary, v1alpha1.AnalysisSuccessful, valueNear(0)) ||
		!judged("kept pods scraped", keptCanary, v1alpha1.AnalysisSuccessful, valueNear(0)) {
		return
	}

	// A pod bound to no node is removed at once, with no kubelet to wait
	// for, and the exporter lists pods at every scrape.
	for _, pod := range deleted {
		g.Expect(c.Delete(ctx, pod)).To(gomega.Succeed())
	}
	if !judged("deleted pods no longer exposed", deletedCanary, v1alpha1.AnalysisInconclusive, noData) ||
		!judged("kept pods still exposed", keptCanary, v1alpha1.AnalysisSuccessful, valueNear(0)) {
		return
	}

	g.Expect(kube.Close()).To(gomega.Succeed())
	judged("exporter stopped", keptCanary, v1alpha1.AnalysisInconclusive, noData)
}
