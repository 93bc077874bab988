package steer_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/yaml"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
	"github.com/extendeddaemonset/extendeddaemonset/cmd/kubectl-eds/internal/clitest"
)

func TestRollbackToRevisionOne(t *testing.T) {
	t.Parallel()
	s := threeRevisions(t)
	names := replicaSetNames(s)

	expectRefused(s, run(s, "rollback", name, "--to-revision", "7"),
		fmt.Sprintf("%s has no revision 7: its revisions are 1, 2, 3 (%s)", ref(s), command(s, "history")))
	expectRefused(s, run(s, "rollback", name, "--to-revision", "3"),
		fmt.Sprintf("revision 3 (%s: agent=agent:v3) already is the active revision of %s: there is nothing to roll back", names[2], ref(s)))

	rev1 := &v1alpha1.ExtendedDaemonSetReplicaSet{}
	s.G.Expect(s.Client.Get(s.Ctx, types.NamespacedName{Namespace: s.Namespace, Name: names[0]}, rev1)).To(gomega.Succeed())
	expectRollbackTemplate(s, run(s, "rollback", name, "--to-revision", "1", "--dry-run"), 1, names[0], &rev1.Spec.Template)
	before := s.Get(s.G, name)
	s.G.Expect(before.Spec.Template.Spec.Containers[0].Image).To(gomega.Equal("agent:v3"), "--dry-run writes nothing")

	expectOK(s, run(s, "rollback", name, "--to-revision", "1"),
		fmt.Sprintf("%s rolled back to revision 1 (%s: agent=agent:v1): the controller rolls it out; "+
			"if git holds the spec, commit the same template (`kubectl eds rollback -n %s %s --to-revision 1 --dry-run` prints it) or the next sync undoes the rollback",
			ref(s), names[0], s.Namespace, name))
	eds := s.WaitRolledOut(name)
	s.G.Expect(eds.Status.ActiveReplicaSet).To(gomega.Equal(names[0]),
		"the template written back is exactly revision 1's, so the controller takes its replica set up again")
	s.G.Expect(replicaSetNames(s)).To(gomega.HaveLen(3))
	s.G.Eventually(func(g gomega.Gomega) {
		g.Expect(podImages(g, s)).To(gomega.Equal(map[string]int{"agent:v1": 2}))
	}).Should(gomega.Succeed())

	expectRefused(s, run(s, "rollback", name),
		fmt.Sprintf("%s has no revision before the active revision 1 (%s: agent=agent:v1): name one with --to-revision; its revisions are 1, 2, 3",
			ref(s), names[0]))
}

// Without --to-revision, rollback goes to the revision before the active
// one.
func TestRollbackDryRunDefaultsToThePreviousRevision(t *testing.T) {
	t.Parallel()
	s := rolledOut(t, 1, "agent:v1")
	setImage(s, "agent:v2")
	s.WaitRolledOut(name)
	names := replicaSetNames(s)
	rev1 := &v1alpha1.ExtendedDaemonSetReplicaSet{}
	s.G.Expect(s.Client.Get(s.Ctx, types.NamespacedName{Namespace: s.Namespace, Name: names[0]}, rev1)).To(gomega.Succeed())
	generation := s.Get(s.G, name).Generation

	expectRollbackTemplate(s, run(s, "rollback", name, "--dry-run"), 1, names[0], &rev1.Spec.Template)
	s.G.Expect(s.Get(s.G, name).Generation).To(gomega.Equal(generation), "--dry-run writes nothing")
}

// expectRollbackTemplate checks that r printed, under a comment naming
// it, the spec.template of revision n as YAML to commit.
func expectRollbackTemplate(s *clitest.Scenario, r clitest.Result, n int, replicaSet string, want *corev1.PodTemplateSpec) {
	s.T.Helper()
	s.G.Expect(r.Code).To(gomega.BeZero(), r.Err)
	header, body, _ := strings.Cut(r.Out, "\n")
	s.G.Expect(header).To(gomega.Equal(fmt.Sprintf("# spec.template of revision %d of %s (replica set %s, old): commit it to git; nothing was written",
		n, ref(s), replicaSet)))
	s.G.Expect(body).To(gomega.HavePrefix("spec:\n  template:\n"))
	var patch struct {
		Spec struct {
			Template corev1.PodTemplateSpec `json:"template"`
		} `json:"spec"`
	}
	s.G.Expect(yaml.UnmarshalStrict([]byte(body), &patch)).To(gomega.Succeed())
	s.G.Expect(equality.Semantic.DeepEqual(&patch.Spec.Template, want)).To(gomega.BeTrue(), "printed:\n%s", body)
}

// While a canary runs, the spec has moved on from the active revision:
// rolling back by default abandons the canary for it.
func TestRollbackDuringACanaryGoesBackToTheActiveRevision(t *testing.T) {
	t.Parallel()
	s, _ := runningCanary(t)
	active := s.Get(s.G, name).Status.ActiveReplicaSet

	expectOK(s, run(s, "rollback", name),
		fmt.Sprintf("%s rolled back to revision 1 (%s: agent=agent:v1): the controller abandons the newer template, and every node runs the active one; "+
			"if git holds the spec, commit the same template (`kubectl eds rollback -n %s %s --to-revision 1 --dry-run` prints it) or the next sync undoes the rollback",
			ref(s), active, s.Namespace, name))
	eds := s.WaitRolledOut(name)
	s.G.Expect(eds.Status.ActiveReplicaSet).To(gomega.Equal(active))
	s.G.Eventually(func(g gomega.Gomega) {
		g.Expect(podImages(g, s)).To(gomega.Equal(map[string]int{"agent:v1": 3}))
	}).Should(gomega.Succeed())
}
