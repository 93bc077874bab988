package inspect_test

import (
	"strings"
	"testing"

	"github.com/onsi/gomega"
)

// Every NAME argument completes with the ExtendedDaemonSets of the
// namespace; a command that has its NAME completes nothing more.
func TestNamesComplete(t *testing.T) {
	t.Parallel()
	s := env.NewScenario(t)
	s.Create(s.NewExtendedDaemonSet("agent", "agent:v1"))
	s.Create(s.NewExtendedDaemonSet("logger", "logger:v1"))
	for _, command := range []string{"get", "get-ers", "status", "pods"} {
		r := run(s, "__complete", command, "")
		s.G.Expect(r.Code).To(gomega.Equal(0), r.Err)
		s.G.Expect(strings.Split(r.Out, "\n")).To(gomega.HaveExactElements("agent", "logger", ":4", ""), command)

		r = run(s, "__complete", command, "lo")
		s.G.Expect(strings.Split(r.Out, "\n")).To(gomega.HaveExactElements("logger", ":4", ""), command)

		r = run(s, "__complete", command, "agent", "")
		s.G.Expect(strings.Split(r.Out, "\n")).To(gomega.HaveExactElements(":4", ""), command)
	}
	r := run(s, "__complete", "pods", "agent", "--select", "")
	s.G.Expect(strings.Split(r.Out, "\n")).To(gomega.HaveExactElements("canary", "active", "old", "not-ready", ":4", ""))
}
