package inspect_test

import (
	"strings"
	"testing"
	"time"

	"github.com/onsi/gomega"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
	"github.com/extendeddaemonset/extendeddaemonset/cmd/kubectl-eds/internal/cli"
	"github.com/extendeddaemonset/extendeddaemonset/cmd/kubectl-eds/internal/clitest"
)

// A rollout followed with --watch ends with exit code 0, a summary line
// for each step, and the full status once it rolled out.
func TestStatusWatchExitsZeroWhenRolledOut(t *testing.T) {
	t.Parallel()
	s := env.NewScenario(t)
	s.Nodes(3)
	eds := s.NewExtendedDaemonSet("agent", "agent:v1")
	// A pod counts as available a second after it is ready: the rollout
	// of three nodes, one at a time, takes long enough to be seen moving.
	eds.Spec.MinReadySeconds = 1
	s.Create(eds)
	s.WaitRolledOut("agent")

	r := run(s, "status", "agent")
	s.G.Expect(r.Code).To(gomega.Equal(cli.ExitOK), r.Err)
	clitest.Golden(t, "testdata/status-rolled-out.golden", normalize(s, r.Out))

	s.Update("agent", setImage("agent:v2"))
	start := time.Now()
	r = run(s, "status", "agent", "--watch", "--timeout", "60s")
	s.G.Expect(r.Code).To(gomega.Equal(cli.ExitOK), "stdout:\n%s\nstderr:\n%s", r.Out, r.Err)
	t.Logf("watched the rollout for %s:\n%s", time.Since(start), r.Out)
	s.G.Expect(r.Out).To(gomega.MatchRegexp(`(?m)^RollingUpdate .*: [0-2]/3 up to date`))
	s.G.Expect(r.Out).To(gomega.MatchRegexp(`(?m)^Running \(RolledOut\): 3/3 up to date, 3/3 available$`))
	s.G.Expect(r.Out).To(gomega.ContainSubstring("Up to date:   3/3"))
	s.G.Expect(r.Err).To(gomega.BeEmpty())
}

// A canary that crash-loops past autoFail.maxRestarts fails; status
// --watch exits 1 and says why, and so does status without --watch.
func TestStatusWatchExitsOneWhenTheCanaryFails(t *testing.T) {
	t.Parallel()
	s := env.NewScenario(t)
	s.Nodes(2)
	eds := s.NewExtendedDaemonSet("agent", "agent:v1")
	eds.Spec.Strategy.Canary = canaryOnFirstNode(s)
	maxRestarts := int32(2)
	eds.Spec.Strategy.Canary.AutoFail = &v1alpha1.CanaryAutoFail{MaxRestarts: &maxRestarts}
	s.Create(eds)
	s.WaitRolledOut("agent")

	s.Update("agent", setImage("agent:v2-"+clitest.CrashTag))
	r := run(s, "status", "agent", "--watch", "--timeout", "60s")
	s.G.Expect(r.Code).To(gomega.Equal(cli.ExitFailed), "stdout:\n%s\nstderr:\n%s", r.Out, r.Err)
	s.G.Expect(r.Err).To(gomega.MatchRegexp(`rollout of ExtendedDaemonSet .*/agent failed: canary agent-\S+ failed: `))
	s.G.Expect(r.Out).To(gomega.ContainSubstring("State:        CanaryFailed (CanaryFailed)"))
	s.G.Expect(r.Out).To(gomega.MatchRegexp(`Stalled +True +CanaryFailed`))

	r = run(s, "status", "agent")
	s.G.Expect(r.Code).To(gomega.Equal(cli.ExitFailed))
	s.G.Expect(r.Err).To(gomega.ContainSubstring("failed: canary"))
	s.G.Expect(r.Out).To(gomega.MatchRegexp(`Canary: +failed: `))
}

// A canary that runs for an hour is still in progress at --timeout: exit
// code 2. Its status shows the canary node, and the analysis measurement
// against its threshold.
func TestStatusWatchExitsTwoOnTimeout(t *testing.T) {
	t.Parallel()
	s := env.NewScenario(t)
	s.Nodes(2)
	eds := s.NewExtendedDaemonSet("agent", "agent:v1")
	eds.Spec.Strategy.Canary = canaryOnFirstNode(s)
	eds.Spec.Strategy.Canary.Analysis = restartsAnalysis(fakePrometheus(s))
	s.Create(eds)
	s.WaitRolledOut("agent")

	s.Update("agent", setImage("agent:v2"))
	start := time.Now()
	r := run(s, "status", "agent", "--watch", "--timeout", "2s")
	s.G.Expect(r.Code).To(gomega.Equal(cli.ExitTimeout), "stdout:\n%s\nstderr:\n%s", r.Out, r.Err)
	s.G.Expect(time.Since(start)).To(gomega.BeNumerically("<", 5*time.Second))
	s.G.Expect(r.Err).To(gomega.MatchRegexp(`error: ExtendedDaemonSet .*/agent still in progress after 2s: `))

	// Once the canary is measured, its status stays the same for a minute.
	s.G.Eventually(func(g gomega.Gomega) {
		c := s.Get(g, "agent").Status.Canary
		g.Expect(c).NotTo(gomega.BeNil())
		g.Expect(c.Analysis).NotTo(gomega.BeNil())
		g.Expect(c.Analysis.Metrics).To(gomega.ContainElement(gomega.HaveField("Count", gomega.BeEquivalentTo(1))))
	}).Should(gomega.Succeed())
	r = run(s, "status", "agent")
	s.G.Expect(r.Code).To(gomega.Equal(cli.ExitOK), "in progress, without --watch: %s", r.Err)
	clitest.Golden(t, "testdata/status-canary.golden", normalize(s, r.Out))

	r = run(s, "pods", "agent")
	s.G.Expect(r.Code).To(gomega.Equal(cli.ExitOK), r.Err)
	clitest.Golden(t, "testdata/pods-canary.golden", normalize(s, r.Out))
	for selection, node := range map[string]string{"canary": "-0", "active": "-1"} {
		r = run(s, "pods", "agent", "--select", selection)
		s.G.Expect(r.Code).To(gomega.Equal(cli.ExitOK), r.Err)
		lines := strings.Split(strings.TrimSpace(r.Out), "\n")
		s.G.Expect(lines).To(gomega.HaveLen(2), "a header and one pod: %s", r.Out)
		s.G.Expect(lines[1]).To(gomega.MatchRegexp(`^\S+ +`+s.Namespace+node+` +\S+ +`+selection+` `), selection)
	}
	r = run(s, "pods", "agent", "--select", "old")
	s.G.Expect(r.Code).To(gomega.Equal(cli.ExitOK), r.Err)
	s.G.Expect(r.Out).To(gomega.BeEmpty())
	s.G.Expect(r.Err).To(gomega.ContainSubstring("No pods of ExtendedDaemonSet agent found"))
}
