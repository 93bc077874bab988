package e2e

import (
	"testing"

	"github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
)

// An ExtendedDaemonSet without a canary runs one pod per node through a
// single replica set, and reports it the way GitOps tools read it.
func TestCreateRunsOnePodPerNode(t *testing.T) {
	s := newScenario(t)
	eds := s.create(agentEDS(s.ns, "agent", "v1"))
	eds, active := s.expectRolledOut(eds, "v1", s.nodeNames())

	sets := s.replicaSets(s.g, eds)
	s.g.Expect(replicaSetNames(sets)).To(gomega.Equal([]string{active.Name}))
	owner := metav1.GetControllerOf(active)
	s.g.Expect(owner).NotTo(gomega.BeNil(), "controller of %s", active.Name)
	s.g.Expect(*owner).To(gomega.And(
		gomega.HaveField("APIVersion", v1alpha1.GroupVersion.String()),
		gomega.HaveField("Kind", "ExtendedDaemonSet"),
		gomega.HaveField("Name", eds.Name),
		gomega.HaveField("UID", eds.UID),
	))
	s.g.Expect(active.Annotations).To(gomega.HaveKeyWithValue(v1alpha1.TemplateHashAnnotation, gomega.Not(gomega.BeEmpty())))
	s.g.Expect(active.Status.Status).To(gomega.Equal(v1alpha1.ReplicaSetActive))
	s.g.Expect(active.Status).To(gomega.And(
		gomega.HaveField("Desired", eds.Status.Desired),
		gomega.HaveField("Current", eds.Status.Desired),
		gomega.HaveField("Ready", eds.Status.Desired),
		gomega.HaveField("Available", eds.Status.Desired),
		gomega.HaveField("UpToDate", eds.Status.Desired),
	))
	s.expectEvent(eds, "ReplicaSetCreated", active.Name)
}
