package steer

import (
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/util/duration"
	"k8s.io/cli-runtime/pkg/printers"

	"github.com/extendeddaemonset/extendeddaemonset/cmd/kubectl-eds/internal/cli"
)

// States of a revision in `kubectl eds history`.
const (
	stateActive       = "active"
	stateCanary       = "canary"
	statePausedCanary = "paused canary"
	stateFailedCanary = "failed canary"
	// statePending: the template rolled out now (the spec's, or the
	// DaemonSet's), whose role the controller has not recorded yet.
	statePending = "pending"
	stateOld     = "old"
)

func historyCommand(o *cli.Options) *cobra.Command {
	return &cobra.Command{
		Use:   "history NAME",
		Short: "List the revisions of an ExtendedDaemonSet: its replica sets, oldest first",
		Long: `List the revisions of an ExtendedDaemonSet: the replica set the controller
keeps for each pod template, by revision, with the images of its
template, its age, and its state: active (runs on every node), canary,
paused canary or failed canary, pending (the spec's template, not yet
given a role), or old (kept to roll back to, up to
spec.revisionHistoryLimit).

For an ExtendedDaemonSet whose spec.workloadRef names a DaemonSet, the
revisions are those of the DaemonSet's template (replica sets
<name>-<controller-revision-hash>), and pending is the DaemonSet's
current template.`,
		Args:              oneName,
		ValidArgsFunction: o.CompleteExtendedDaemonSets,
		RunE: func(cmd *cobra.Command, args []string) error {
			t, err := loadWithTemplate(cmd.Context(), o, args[0])
			if err != nil {
				return err
			}
			h, err := t.replicaSets(cmd.Context())
			if err != nil {
				return err
			}
			if len(h) == 0 {
				return printf(cmd.OutOrStdout(), "%s has no replica set yet: the controller makes one for its template once it has seen it; %s shows where it is\n",
					t, t.command("status"))
			}
			return printHistory(cmd.OutOrStdout(), t, h, time.Now())
		},
	}
}

func printHistory(out io.Writer, t *target, h history, now time.Time) error {
	w := printers.GetNewTabWriter(out)
	fmt.Fprintln(w, "REVISION\tNAME\tSTATE\tIMAGES\tAGE")
	for _, r := range h {
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\n", r.label(), r.rs.Name, t.stateOf(r), r.images(),
			duration.HumanDuration(now.Sub(r.rs.CreationTimestamp.Time)))
	}
	if err := w.Flush(); err != nil {
		return fmt.Errorf("writing the history: %w", err)
	}
	return nil
}

// stateOf is the part r plays, from the ExtendedDaemonSet's status, which
// names the active and the canary replica sets.
func (t *target) stateOf(r revision) string {
	st := t.eds.Status
	switch c := st.Canary; {
	case r.rs.Name == st.ActiveReplicaSet:
		return stateActive
	case c != nil && c.ReplicaSet == r.rs.Name && c.Failed:
		return stateFailedCanary
	case c != nil && c.ReplicaSet == r.rs.Name && c.Paused:
		return statePausedCanary
	case c != nil && c.ReplicaSet == r.rs.Name:
		return stateCanary
	case t.template != nil && equality.Semantic.DeepEqual(&r.rs.Spec.Template, t.template):
		return statePending
	}
	return stateOld
}
