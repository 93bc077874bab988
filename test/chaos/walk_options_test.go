package chaos

import (
	"math/rand/v2"
	"testing"

	"github.com/onsi/gomega"

	actions "github.com/extendeddaemonset/extendeddaemonset/test/scenario"
)

// The walk draws nothing the environment cannot play: no analysis
// verdict, no held kubelet, no analysis or handover setting.
func TestWalkDrawsOnlyWhatItCanPlay(t *testing.T) {
	g := gomega.NewWithT(t)
	seq := actions.Draw(rand.New(rand.NewPCG(1, 2)), 5000, walkOptions()) //nolint:gosec // repeatable draws, not secrets
	kinds := map[actions.Kind]int{}
	for _, a := range seq {
		kinds[a.Kind]++
		g.Expect(a.Delay).To(gomega.BeNumerically("<=", prof.walkMaxWait), "%s", a)
		if a.Kind == actions.Toggle {
			g.Expect(a.Setting).NotTo(gomega.BeElementOf(actions.Analysis, actions.Handover), "%s", a)
		}
	}
	g.Expect(kinds).NotTo(gomega.HaveKey(actions.AnalysisVerdict))
	g.Expect(kinds).NotTo(gomega.HaveKey(actions.HoldKubelet))
	g.Expect(kinds).To(gomega.HaveKey(actions.ApplyTemplate))
	g.Expect(kinds).To(gomega.HaveKey(actions.NodeNotReady))
}
