package steer

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/extendeddaemonset/extendeddaemonset/cmd/kubectl-eds/internal/cli"
)

// change is what a command writes and then prints; no annotations means
// there is nothing to write, as when the wanted state is already asked for.
type change struct {
	annotations map[string]*string
	message     string
}

// runDecision is the body of a command that decides a change of
// annotations from the ExtendedDaemonSet named by its argument, writes it
// and tells what was done.
func runDecision(o *cli.Options, decide func(*target) (change, error)) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		t, err := load(cmd.Context(), o, args[0])
		if err != nil {
			return err
		}
		ch, err := decide(t)
		if err != nil {
			return err
		}
		if len(ch.annotations) > 0 {
			if err := t.patchAnnotations(cmd.Context(), ch.annotations); err != nil {
				return err
			}
		}
		return printf(cmd.OutOrStdout(), "%s\n", ch.message)
	}
}

// printf writes a command's output.
func printf(out io.Writer, format string, args ...any) error {
	if _, err := fmt.Fprintf(out, format, args...); err != nil {
		return fmt.Errorf("writing the output: %w", err)
	}
	return nil
}
