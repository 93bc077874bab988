package cli

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"
)

// Group makes the commands of one package of kubectl-eds.
type Group func(*Options) []*cobra.Command

// NewRoot is `kubectl eds` with the commands of groups; o holds the shared
// settings and streams.
func NewRoot(o *Options, groups ...Group) *cobra.Command {
	root := &cobra.Command{
		Use:   "kubectl-eds",
		Short: "Watch, steer, roll back and migrate ExtendedDaemonSets",
		Long: `kubectl eds shows how ExtendedDaemonSet rollouts progress and steers them:
validate, pause or fail a canary, pause a rolling update, freeze a rollout,
roll back to an earlier revision, and turn DaemonSet manifests into
ExtendedDaemonSets. It takes kubectl's connection flags.`,
		SilenceUsage:  true,
		SilenceErrors: true,
		// Installed as kubectl-eds, it runs as `kubectl eds`.
		Annotations: map[string]string{cobra.CommandDisplayNameAnnotation: "kubectl eds"},
	}
	root.SetIn(o.In)
	root.SetOut(o.Out)
	root.SetErr(o.ErrOut)
	o.AddFlags(root)
	for _, group := range groups {
		root.AddCommand(group(o)...)
	}
	return root
}

// Execute runs root with args and returns the exit code; the error, when
// it has a message, goes to the error stream.
func Execute(o *Options, root *cobra.Command, args []string) int {
	root.SetArgs(args)
	err := root.ExecuteContext(contextOrBackground(root))
	var exit *ExitError
	if err != nil && (!errors.As(err, &exit) || exit.Err != nil) {
		fmt.Fprintln(o.ErrOut, "error:", err)
	}
	return ExitCode(err)
}

func contextOrBackground(cmd *cobra.Command) context.Context {
	if ctx := cmd.Context(); ctx != nil {
		return ctx
	}
	return context.Background()
}
