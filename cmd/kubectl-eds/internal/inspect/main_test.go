package inspect_test

import (
	"os"
	"testing"

	"github.com/extendeddaemonset/extendeddaemonset/cmd/kubectl-eds/internal/cli"
	"github.com/extendeddaemonset/extendeddaemonset/cmd/kubectl-eds/internal/clitest"
	"github.com/extendeddaemonset/extendeddaemonset/cmd/kubectl-eds/internal/inspect"
)

var env *clitest.Env

func TestMain(m *testing.M) { os.Exit(clitest.Main(m, &env)) }

// groups is the command group under test.
var groups = []cli.Group{inspect.Commands}

// run runs kubectl eds with args in the scenario's namespace.
func run(s *clitest.Scenario, args ...string) clitest.Result {
	s.T.Helper()
	return s.Run(s.T, groups, append([]string{"-n", s.Namespace}, args...)...)
}
