package inspect_test

import (
	"testing"

	"github.com/onsi/gomega"

	"github.com/extendeddaemonset/extendeddaemonset/cmd/kubectl-eds/internal/cli"
)

// Every command that takes a NAME says which ExtendedDaemonSet it did not
// find, where, and how to list those there are.
func TestUnknownExtendedDaemonSetSaysHowToFindOne(t *testing.T) {
	t.Parallel()
	s := env.NewScenario(t)
	for _, args := range [][]string{
		{"get", "nope"}, {"get-ers", "nope"}, {"status", "nope"}, {"status", "nope", "--watch"}, {"pods", "nope"},
	} {
		r := run(s, args...)
		s.G.Expect(r.Code).To(gomega.Equal(cli.ExitFailed), "%v", args)
		s.G.Expect(r.Out).To(gomega.BeEmpty(), "%v", args)
		s.G.Expect(r.Err).To(gomega.Equal(`error: ExtendedDaemonSet "nope" not found in namespace "`+s.Namespace+
			`": `+"`kubectl eds get -n "+s.Namespace+"` lists them, -A lists every namespace's\n"), "%v", args)
	}
}

// A user without the permission is told so, and how to see what it may
// do. The admin impersonates a user without any role.
func TestForbiddenSaysWhatToCheck(t *testing.T) {
	t.Parallel()
	s := env.NewScenario(t)
	for _, args := range [][]string{{"get"}, {"get", "agent"}, {"status", "agent"}, {"pods", "agent"}, {"get-ers"}} {
		r := run(s, append(args, "--as", "nobody")...)
		s.G.Expect(r.Code).To(gomega.Equal(cli.ExitFailed), "%v", args)
		s.G.Expect(r.Err).To(gomega.HavePrefix("error: not allowed: "), "%v", args)
		s.G.Expect(r.Err).To(gomega.ContainSubstring(`User "nobody" cannot `), "%v", args)
		s.G.Expect(r.Err).To(gomega.ContainSubstring("`kubectl auth can-i --list -n "+s.Namespace+"`"), "%v", args)
	}
	r := s.Run(t, groups, "get", "-A", "--as", "nobody")
	s.G.Expect(r.Code).To(gomega.Equal(cli.ExitFailed))
	s.G.Expect(r.Err).To(gomega.ContainSubstring("`kubectl auth can-i list extendeddaemonsets --all-namespaces`"))
}

// Wrong flags are refused before the cluster is read.
func TestFlagMistakesAreExplained(t *testing.T) {
	t.Parallel()
	s := env.NewScenario(t)
	for _, tc := range []struct {
		args []string
		err  string
	}{
		{[]string{"get", "-o", "xml"}, `unknown output format "xml": use wide, json or yaml`},
		{[]string{"get", "agent", "-A"}, "a NAME cannot be looked for across every namespace"},
		{[]string{"status", "agent", "--timeout", "1s"}, "--timeout bounds --watch"},
		{[]string{"pods", "agent", "--select", "broken"}, `unknown --select "broken": use one of canary, active, old, not-ready`},
		{[]string{"status"}, "accepts 1 arg(s), received 0"},
	} {
		r := run(s, tc.args...)
		s.G.Expect(r.Code).To(gomega.Equal(cli.ExitFailed), "%v", tc.args)
		s.G.Expect(r.Err).To(gomega.ContainSubstring(tc.err), "%v", tc.args)
	}
}
