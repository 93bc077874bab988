// Package commands assembles kubectl-eds from its command groups.
package commands

import (
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/extendeddaemonset/extendeddaemonset/cmd/kubectl-eds/internal/about"
	"github.com/extendeddaemonset/extendeddaemonset/cmd/kubectl-eds/internal/cli"
	"github.com/extendeddaemonset/extendeddaemonset/cmd/kubectl-eds/internal/inspect"
	"github.com/extendeddaemonset/extendeddaemonset/cmd/kubectl-eds/internal/migrate"
	"github.com/extendeddaemonset/extendeddaemonset/cmd/kubectl-eds/internal/steer"
)

// Groups are every command group of kubectl-eds, each a package of its
// own.
var Groups = []cli.Group{inspect.Commands, migrate.Commands, steer.Commands, about.Commands}

// Run runs kubectl-eds with args and returns its exit code.
func Run(args []string, streams genericiooptions.IOStreams) int {
	o := cli.NewOptions(streams)
	return cli.Execute(o, cli.NewRoot(o, Groups...), args)
}
