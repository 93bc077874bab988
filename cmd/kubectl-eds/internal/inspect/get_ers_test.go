package inspect_test

import (
	"testing"

	"github.com/onsi/gomega"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
	"github.com/extendeddaemonset/extendeddaemonset/cmd/kubectl-eds/internal/cli"
	"github.com/extendeddaemonset/extendeddaemonset/cmd/kubectl-eds/internal/clitest"
)

// After an update, the replica sets of an ExtendedDaemonSet read as its
// history: the old one first, the active one last.
func TestGetReplicaSetsListsTheHistory(t *testing.T) {
	t.Parallel()
	s := env.NewScenario(t)
	s.Nodes(2)
	s.Create(s.NewExtendedDaemonSet("agent", "agent:v1"))
	s.Create(s.NewExtendedDaemonSet("logger", "logger:v1"))
	s.WaitRolledOut("agent")
	s.Update("agent", func(eds *v1alpha1.ExtendedDaemonSet) { eds.Spec.Template.Spec.Containers[0].Image = "agent:v2" })
	s.WaitRolledOut("agent")
	s.WaitRolledOut("logger")

	r := run(s, "get-ers", "agent")
	s.G.Expect(r.Code).To(gomega.Equal(cli.ExitOK), r.Err)
	clitest.Golden(t, "testdata/get-ers.golden", normalize(s, r.Out))

	r = run(s, "get-ers", "-o", "wide")
	s.G.Expect(r.Code).To(gomega.Equal(cli.ExitOK), r.Err)
	clitest.Golden(t, "testdata/get-ers-wide.golden", normalize(s, r.Out))

	r = s.Run(t, groups, "get-ers", "-A")
	s.G.Expect(r.Code).To(gomega.Equal(cli.ExitOK), r.Err)
	s.G.Expect(r.Out).To(gomega.HavePrefix("NAMESPACE"))
	s.G.Expect(r.Out).To(gomega.MatchRegexp(`(?m)^` + s.Namespace + ` +logger-\S+ +Active `))
}
