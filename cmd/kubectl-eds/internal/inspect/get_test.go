package inspect_test

import (
	"testing"

	"github.com/onsi/gomega"
	"sigs.k8s.io/yaml"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
	"github.com/extendeddaemonset/extendeddaemonset/cmd/kubectl-eds/internal/cli"
	"github.com/extendeddaemonset/extendeddaemonset/cmd/kubectl-eds/internal/clitest"
)

func TestGetListsExtendedDaemonSets(t *testing.T) {
	t.Parallel()
	s := env.NewScenario(t)
	s.Nodes(2)
	s.Create(s.NewExtendedDaemonSet("agent", "agent:v1"))
	s.Create(s.NewExtendedDaemonSet("logger", "logger:v1"))
	s.WaitRolledOut("agent")
	s.WaitRolledOut("logger")

	r := run(s, "get")
	s.G.Expect(r.Code).To(gomega.Equal(cli.ExitOK), r.Err)
	clitest.Golden(t, "testdata/get.golden", normalize(s, r.Out))

	r = run(s, "get", "-o", "wide")
	s.G.Expect(r.Code).To(gomega.Equal(cli.ExitOK), r.Err)
	clitest.Golden(t, "testdata/get-wide.golden", normalize(s, r.Out))

	r = run(s, "get", "agent")
	s.G.Expect(r.Code).To(gomega.Equal(cli.ExitOK), r.Err)
	s.G.Expect(r.Out).To(gomega.ContainSubstring("agent"))
	s.G.Expect(r.Out).NotTo(gomega.ContainSubstring("logger"))

	// Every namespace: a NAMESPACE column, and the other scenarios' too.
	r = s.Run(t, groups, "get", "-A")
	s.G.Expect(r.Code).To(gomega.Equal(cli.ExitOK), r.Err)
	s.G.Expect(r.Out).To(gomega.HavePrefix("NAMESPACE"))
	s.G.Expect(r.Out).To(gomega.MatchRegexp(`(?m)^` + s.Namespace + ` +agent +2 +2 +2 +2 +2 +Running `))
}

func TestGetPrintsObjects(t *testing.T) {
	t.Parallel()
	s := env.NewScenario(t)
	s.Nodes(1)
	s.Create(s.NewExtendedDaemonSet("agent", "agent:v1"))
	s.WaitRolledOut("agent")

	r := run(s, "get", "agent", "-o", "json")
	s.G.Expect(r.Code).To(gomega.Equal(cli.ExitOK), r.Err)
	var eds v1alpha1.ExtendedDaemonSet
	s.G.Expect(yaml.Unmarshal([]byte(r.Out), &eds)).To(gomega.Succeed())
	s.G.Expect(eds.Kind).To(gomega.Equal("ExtendedDaemonSet"))
	s.G.Expect(eds.APIVersion).To(gomega.Equal(v1alpha1.GroupVersion.String()))
	s.G.Expect(eds.Status.State).To(gomega.Equal(v1alpha1.StateRunning))
	s.G.Expect(eds.ManagedFields).To(gomega.BeEmpty())

	r = run(s, "get", "-o", "yaml")
	s.G.Expect(r.Code).To(gomega.Equal(cli.ExitOK), r.Err)
	var list v1alpha1.ExtendedDaemonSetList
	s.G.Expect(yaml.Unmarshal([]byte(r.Out), &list)).To(gomega.Succeed())
	s.G.Expect(list.Kind).To(gomega.Equal("ExtendedDaemonSetList"))
	s.G.Expect(list.Items).To(gomega.HaveLen(1))
	s.G.Expect(list.Items[0].Kind).To(gomega.Equal("ExtendedDaemonSet"))
}

func TestGetInAnEmptyNamespaceSaysSoOnTheErrorStream(t *testing.T) {
	t.Parallel()
	s := env.NewScenario(t)
	r := run(s, "get")
	s.G.Expect(r.Code).To(gomega.Equal(cli.ExitOK))
	s.G.Expect(r.Out).To(gomega.BeEmpty())
	s.G.Expect(r.Err).To(gomega.Equal("No ExtendedDaemonSets found in namespace " + s.Namespace + ".\n"))

	r = run(s, "get", "-o", "json")
	s.G.Expect(r.Code).To(gomega.Equal(cli.ExitOK))
	s.G.Expect(r.Out).To(gomega.ContainSubstring(`"items": []`))
}
