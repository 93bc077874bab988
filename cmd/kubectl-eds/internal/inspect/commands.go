package inspect

import (
	"github.com/spf13/cobra"

	"github.com/extendeddaemonset/extendeddaemonset/cmd/kubectl-eds/internal/cli"
)

// Commands are the read-only commands: get, get-ers, status and pods.
func Commands(o *cli.Options) []*cobra.Command {
	return []*cobra.Command{
		newGetCommand(o),
		newGetReplicaSetsCommand(o),
		newStatusCommand(o),
		newPodsCommand(o),
	}
}
