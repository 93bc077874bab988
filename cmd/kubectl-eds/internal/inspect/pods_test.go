package inspect_test

import (
	"strings"
	"testing"

	"github.com/onsi/gomega"

	"github.com/extendeddaemonset/extendeddaemonset/cmd/kubectl-eds/internal/cli"
	"github.com/extendeddaemonset/extendeddaemonset/cmd/kubectl-eds/internal/clitest"
)

// A crash-looping canary that nothing fails: pods --select not-ready
// finds its pod, and status shows it on its canary node with its restarts.
func TestPodsSelectsTheCrashingCanary(t *testing.T) {
	t.Parallel()
	s := env.NewScenario(t)
	nodes := s.Nodes(2)
	eds := s.NewExtendedDaemonSet("agent", "agent:v1")
	eds.Spec.Strategy.Canary = canaryOnFirstNode(s)
	s.Create(eds)
	s.WaitRolledOut("agent")

	s.Update("agent", setImage("agent:v2-"+clitest.CrashTag))
	var r clitest.Result
	s.G.Eventually(func(g gomega.Gomega) {
		r = run(s, "pods", "agent", "--select", "not-ready")
		g.Expect(r.Code).To(gomega.Equal(cli.ExitOK), r.Err)
		lines := strings.Split(strings.TrimSpace(r.Out), "\n")
		g.Expect(lines).To(gomega.HaveLen(2), "a header and the canary pod: %s", r.Out)
		g.Expect(lines[1]).To(gomega.MatchRegexp(`^agent-\S+ +` + nodes[0] + ` +agent-\S+ +canary +0/1 +CrashLoopBackOff +5 +`))
	}).Should(gomega.Succeed())

	r = run(s, "status", "agent")
	s.G.Expect(r.Code).To(gomega.Equal(cli.ExitOK), "a canary still running is in progress: %s", r.Err)
	s.G.Expect(r.Out).To(gomega.MatchRegexp(`(?m)^  ` + nodes[0] + ` +agent-\S+ +agent-\S+ +canary +0/1 +CrashLoopBackOff +5$`))
}
