package inspect

import (
	"bytes"
	"testing"
	"time"

	"github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
	"github.com/extendeddaemonset/extendeddaemonset/cmd/kubectl-eds/internal/clitest"
)

// A canary failed on node health shows, under its analysis, the nodes the
// newest measurement blames and what went wrong on each; the threshold
// column says what it was judged against.
func TestReportShowsTheNodesNodeHealthBlames(t *testing.T) {
	g := gomega.NewWithT(t)
	now := time.Date(2026, 1, 1, 1, 0, 0, 0, time.UTC)
	eds := &v1alpha1.ExtendedDaemonSet{ObjectMeta: metav1.ObjectMeta{Name: "cni", Namespace: "ns"}}
	eds.Spec.Strategy.Canary = &v1alpha1.CanaryStrategy{Analysis: &v1alpha1.CanaryAnalysis{Metrics: []v1alpha1.AnalysisMetric{
		{Name: "node-health", NodeHealth: &v1alpha1.NodeHealthMetric{MaxPodReadinessDrop: ptr.To[int32](20)}},
	}}}
	eds.Status.ActiveReplicaSet = "cni-a"
	failed := v1alpha1.Measurement{Phase: v1alpha1.AnalysisFailed, Value: "0", BaselineValue: "100", Time: metav1.NewTime(now),
		Message: "other pods' readiness 0% on 2 judged nodes, 100 points below the baseline's 100%",
		Nodes: []v1alpha1.NodeEvidence{
			{Node: "node-1", Message: "2 of 2 other pods not ready since the change: web/web-1 (not ready), web/web-2 (not ready)"},
			{Node: "node-2", Message: "Ready=False (KubeletNotReady)"},
		}}
	eds.Status.Canary = &v1alpha1.CanaryStatus{ReplicaSet: "cni-b", Nodes: []string{"node-1", "node-2"}, Failed: true,
		Reason: v1alpha1.ReasonAnalysisFailed, Message: "metric node-health failed",
		Analysis: &v1alpha1.AnalysisStatus{Phase: v1alpha1.AnalysisFailed, Message: "metric node-health failed",
			Metrics: []v1alpha1.MetricResult{{Name: "node-health", Phase: v1alpha1.AnalysisFailed, Count: 2, Successful: 1, Failed: 1,
				Message: failed.Message, Measurements: []v1alpha1.Measurement{
					{Phase: v1alpha1.AnalysisSuccessful, Value: "100", BaselineValue: "100", Time: metav1.NewTime(now.Add(-time.Minute))},
					failed,
				}}}}}
	s := &snapshot{eds: eds, now: now}

	var out bytes.Buffer
	g.Expect(writeReport(&out, s, false)).To(gomega.Succeed())
	clitest.Golden(t, "testdata/status-nodehealth.golden", out.String())

	// An older measurement's evidence is history: only the newest is shown.
	eds.Status.Canary.Analysis.Metrics[0].Measurements = append(eds.Status.Canary.Analysis.Metrics[0].Measurements,
		v1alpha1.Measurement{Phase: v1alpha1.AnalysisSuccessful, Value: "100", BaselineValue: "100", Time: metav1.NewTime(now)})
	out.Reset()
	g.Expect(writeReport(&out, s, false)).To(gomega.Succeed())
	g.Expect(out.String()).NotTo(gomega.ContainSubstring("blames"))
}
