package inspect

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/cli-runtime/pkg/printers"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/extendeddaemonset/extendeddaemonset/cmd/kubectl-eds/internal/cli"
)

func newStatusCommand(o *cli.Options) *cobra.Command {
	var watch bool
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "status NAME",
		Short: "Show how the rollout of an ExtendedDaemonSet stands, or wait for it to end",
		Long: `Show the rollout of the ExtendedDaemonSet NAME: its state, the active and
canary replica sets, the progress of the rolling update (pods up to date and
available out of those desired), the canary nodes with the status and
restarts of their pods, the latest measurement of each analysis metric
against its threshold, the conditions, and the last 5 events.

Without --watch, status prints once and exits 1 if the rollout failed, 0
otherwise, also while the rollout is still in progress.

With --watch, status follows the rollout until it ends. On a terminal it
redraws the screen, with progress bars; otherwise it writes a line each time
the rollout moves on, and the full status once it ends. A paused canary is
in progress: --watch waits for someone to validate, fail or unpause it.

Exit codes:
  0  rolled out: Ready at the current generation, no canary, every pod up
     to date and available (without --watch: also in progress)
  1  failed: the canary failed, or the ExtendedDaemonSet is Stalled (a spec
     error, or no progress within spec.progressDeadlineSeconds); or the
     command itself failed
  2  --timeout elapsed with the rollout still in progress`,
		Example: `  kubectl eds status agent
  kubectl eds status agent --watch --timeout 15m`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: o.CompleteExtendedDaemonSets,
		RunE: func(cmd *cobra.Command, args []string) error {
			if timeout != 0 && !watch {
				return errors.New("--timeout bounds --watch: add --watch, or drop --timeout to print the status once")
			}
			if timeout < 0 {
				return fmt.Errorf("--timeout must not be negative, got %s", timeout)
			}
			c, err := o.Client()
			if err != nil {
				return err
			}
			namespace, err := o.Namespace()
			if err != nil {
				return err
			}
			s := &statusRun{
				c:        c,
				key:      types.NamespacedName{Namespace: namespace, Name: args[0]},
				out:      o.Out,
				errOut:   o.ErrOut,
				terminal: printers.IsTerminal(o.Out),
			}
			if watch {
				return s.watch(cmd.Context(), timeout)
			}
			return s.once(cmd.Context())
		},
	}
	cmd.Flags().BoolVarP(&watch, "watch", "w", false, "Follow the rollout until it rolls out (exit 0), fails (1) or --timeout elapses (2)")
	cmd.Flags().DurationVar(&timeout, "timeout", 0, "With --watch, how long to wait for the rollout to end, for example 15m (0: no limit)")
	return cmd
}

// statusRun is one status command.
type statusRun struct {
	c        client.Client
	key      types.NamespacedName
	out      io.Writer
	errOut   io.Writer
	terminal bool
}

// once prints the status and fails only a failed rollout.
func (s *statusRun) once(ctx context.Context) error {
	snap, err := takeSnapshot(ctx, s.c, s.key)
	if err != nil {
		return err
	}
	if err := writeReport(s.out, snap, s.terminal); err != nil {
		return err
	}
	if v := judge(snap.eds); v.outcome == failed {
		return s.failure(v)
	}
	return nil
}

func (s *statusRun) failure(v verdict) error {
	return &cli.ExitError{Code: cli.ExitFailed, Err: fmt.Errorf("rollout of ExtendedDaemonSet %s failed: %s", s.key, v.why)}
}
