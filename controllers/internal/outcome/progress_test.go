package outcome

import (
	"testing"

	"github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
	"github.com/extendeddaemonset/extendeddaemonset/test/argocd"
)

// healthOf is what kstatus and the shipped Argo CD health check make of an
// ExtendedDaemonSet.
func healthOf(g gomega.Gomega, eds *v1alpha1.ExtendedDaemonSet) (status.Status, string) {
	kstatus, health, err := argocd.GitOpsHealth(eds)
	g.Expect(err).NotTo(gomega.HaveOccurred())
	return kstatus, health
}

// Every row of the condition contract, from the progress a status function
// decides to what Flux and Argo CD show.
func TestConditionContract(t *testing.T) {
	for _, tc := range []struct {
		name     string
		progress Progress
		kstatus  status.Status
		argocd   string
	}{
		{"rolled out", Progress{Phase: Done, Reason: v1alpha1.ReasonRolledOut}, status.CurrentStatus, "Healthy"},
		{"rolling update", Progress{Phase: Progressing, Reason: v1alpha1.ReasonRollingUpdate}, status.InProgressStatus, "Progressing"},
		{"canary running", Progress{Phase: Progressing, Reason: v1alpha1.ReasonCanaryRunning}, status.InProgressStatus, "Progressing"},
		{"canary paused", Progress{Phase: Progressing, Reason: v1alpha1.ReasonCanaryPaused}, status.InProgressStatus, "Suspended"},
		{"canary failed", Progress{Phase: Stalled, Reason: v1alpha1.ReasonCanaryFailed}, status.FailedStatus, "Degraded"},
		{"invalid spec", Progress{Phase: Stalled, Reason: v1alpha1.ReasonInvalidSpec}, status.FailedStatus, "Degraded"},
		{"past the deadline", Progress{Phase: Stalled, Reason: v1alpha1.ReasonProgressDeadlineExceeded}, status.FailedStatus, "Degraded"},
		{"domain baking", Progress{Phase: Progressing, Reason: v1alpha1.ReasonDomainBaking}, status.InProgressStatus, "Progressing"},
		{"domain bake failed", Progress{Phase: Stalled, Reason: v1alpha1.ReasonDomainBakeFailed}, status.FailedStatus, "Degraded"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := gomega.NewWithT(t)
			eds := &v1alpha1.ExtendedDaemonSet{ObjectMeta: metav1.ObjectMeta{Name: "agent", Generation: 2}}
			eds.Status.ObservedGeneration = 2
			tc.progress.Message = "because"
			tc.progress.Apply(eds)
			kstatus, health := healthOf(g, eds)
			g.Expect(kstatus).To(gomega.Equal(tc.kstatus))
			g.Expect(health).To(gomega.Equal(tc.argocd))
		})
	}
	t.Run("not yet observed", func(t *testing.T) {
		g := gomega.NewWithT(t)
		eds := &v1alpha1.ExtendedDaemonSet{ObjectMeta: metav1.ObjectMeta{Name: "agent", Generation: 3}}
		eds.Status.ObservedGeneration = 2
		Progress{Phase: Done, Reason: v1alpha1.ReasonRolledOut}.Apply(eds)
		kstatus, health := healthOf(g, eds)
		g.Expect(kstatus).To(gomega.Equal(status.InProgressStatus))
		g.Expect(health).To(gomega.Equal("Progressing"))
	})
}
