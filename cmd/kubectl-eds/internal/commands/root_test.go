package commands

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/onsi/gomega"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/extendeddaemonset/extendeddaemonset/cmd/kubectl-eds/internal/cli"
)

func run(args ...string) (string, string, int) {
	var out, errOut bytes.Buffer
	code := Run(args, genericiooptions.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut})
	return out.String(), errOut.String(), code
}

// Every command the README documents is there, under `kubectl eds`.
func TestEveryCommandIsInstalled(t *testing.T) {
	g := gomega.NewWithT(t)
	out, _, code := run("--help")
	g.Expect(code).To(gomega.Equal(cli.ExitOK))
	g.Expect(out).To(gomega.ContainSubstring("kubectl eds [command]"))
	for _, name := range []string{"get", "get-ers", "status", "pods", "canary", "pause", "resume", "freeze", "unfreeze",
		"history", "rollback", "diff", "migrate", "version", "completion"} {
		g.Expect(out).To(gomega.MatchRegexp(`(?m)^  `+name+` `), "command %s", name)
	}
	out, _, code = run("canary", "--help")
	g.Expect(code).To(gomega.Equal(cli.ExitOK))
	for _, name := range []string{"validate", "skip-step", "pause", "unpause", "fail", "retry"} {
		g.Expect(out).To(gomega.MatchRegexp(`(?m)^  `+name+` `), "canary %s", name)
	}
	out, _, code = run("completion", "bash")
	g.Expect(code).To(gomega.Equal(cli.ExitOK))
	g.Expect(out).To(gomega.ContainSubstring("__start_kubectl-eds"))
}

// Without a cluster, a command fails with exit code 1 and says why.
func TestNoClusterIsAClearError(t *testing.T) {
	g := gomega.NewWithT(t)
	_, errOut, code := run("get", "--kubeconfig", filepath.Join(t.TempDir(), "missing"))
	g.Expect(code).To(gomega.Equal(cli.ExitFailed))
	g.Expect(errOut).To(gomega.HavePrefix("error: "))
	g.Expect(errOut).To(gomega.ContainSubstring("missing"))
}
