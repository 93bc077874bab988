package steer

import (
	"testing"

	"github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
)

// Without a canary, a retry asks the controller to judge again a domain
// bake whose analysis halted the rollout; with nothing failed it is refused.
func TestRetryJudgesAFailedBakeAgain(t *testing.T) {
	g := gomega.NewWithT(t)
	eds := &v1alpha1.ExtendedDaemonSet{ObjectMeta: metav1.ObjectMeta{Name: "agent", Namespace: "ns", Generation: 2}}
	eds.Status.ObservedGeneration = 2
	eds.Status.ActiveReplicaSet = "agent-b"
	eds.Status.Bake = &v1alpha1.DomainBakeStatus{ReplicaSet: "agent-b", Domain: "zone-b",
		Analysis: &v1alpha1.AnalysisStatus{Phase: v1alpha1.AnalysisFailed}}
	tgt := &target{key: types.NamespacedName{Namespace: "ns", Name: "agent"}, eds: eds}

	c, err := retryCanary(tgt)
	g.Expect(err).NotTo(gomega.HaveOccurred())
	g.Expect(c.annotations).To(gomega.HaveKey(v1alpha1.CanaryRetryAnnotation))
	g.Expect(c.message).To(gomega.Equal("bake of domain zone-b of ExtendedDaemonSet ns/agent retried: its analysis judges it again"))

	eds.Status.Bake.Analysis.Phase = v1alpha1.AnalysisRunning
	_, err = retryCanary(tgt)
	g.Expect(err).To(gomega.MatchError(gomega.ContainSubstring("nothing to retry")))

	eds.Status.Bake.Analysis.Phase = v1alpha1.AnalysisError
	eds.Status.Bake.ReplicaSet = "agent-a"
	_, err = retryCanary(tgt)
	g.Expect(err).To(gomega.MatchError(gomega.ContainSubstring("nothing to retry")), "another replica set's bake")
}
