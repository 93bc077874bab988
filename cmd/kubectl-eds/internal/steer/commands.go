package steer

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/extendeddaemonset/extendeddaemonset/cmd/kubectl-eds/internal/cli"
)

// Commands are the commands that steer a rollout.
func Commands(o *cli.Options) []*cobra.Command {
	return []*cobra.Command{
		canaryCommand(o),
		switchCommand(o, rollingUpdatePause, true),
		switchCommand(o, rollingUpdatePause, false),
		switchCommand(o, rolloutFreeze, true),
		switchCommand(o, rolloutFreeze, false),
		historyCommand(o),
		rollbackCommand(o),
		diffCommand(o),
	}
}

// oneName accepts exactly one argument, the ExtendedDaemonSet's name, and
// says where to find one otherwise.
func oneName(_ *cobra.Command, args []string) error {
	if len(args) != 1 {
		return fmt.Errorf("expects the name of one ExtendedDaemonSet, got %d arguments: `kubectl eds get` lists them", len(args))
	}
	return nil
}
