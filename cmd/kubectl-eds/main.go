// Command kubectl-eds is the kubectl plugin of ExtendedDaemonSet: `kubectl
// eds` shows rollouts, steers canaries and rolling updates, rolls back, and
// migrates DaemonSet manifests. Its exit code tells a CI pipeline how a
// rollout ended (see `kubectl eds status --help`).
package main

import (
	"os"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/extendeddaemonset/extendeddaemonset/cmd/kubectl-eds/internal/commands"
)

func main() {
	streams := genericiooptions.IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr}
	os.Exit(commands.Run(os.Args[1:], streams))
}
