package steer

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/client-go/util/retry"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
	"github.com/extendeddaemonset/extendeddaemonset/cmd/kubectl-eds/internal/cli"
)

type rollbackOptions struct {
	toRevision     int64
	dryRun         bool
	writeDaemonSet bool
}

func rollbackCommand(o *cli.Options) *cobra.Command {
	var opts rollbackOptions
	cmd := &cobra.Command{
		Use:   "rollback NAME",
		Short: "Put an earlier revision's pod template back into an ExtendedDaemonSet",
		Long: `Put the pod template of an earlier revision back into the spec of an
ExtendedDaemonSet: the revision --to-revision names (` + "`kubectl eds history`" + `
lists them), else the revision before the active one, or, while the spec
holds a newer template than the active one (a canary runs or failed), the
active revision itself, which drops the canary.

The controller finds that revision's replica set again and rolls it out,
through a canary when spec.strategy.canary is set.

A spec kept in git is rolled back by git: the next sync would undo this.
--dry-run prints the spec.template to commit there, and writes nothing.

An ExtendedDaemonSet whose spec.workloadRef names a DaemonSet has no
template of its own: the DaemonSet's is rolled out, and it is the
DaemonSet's owner's (git, a Helm chart). rollback then prints the
revision's template as the DaemonSet's spec.template, to put where the
DaemonSet is kept, and writes nothing. With --write-daemonset it writes
that template into the DaemonSet, as ` + "`kubectl rollout undo`" + ` does; Flux or
Argo CD put the template of git back at their next sync unless git
changes too. Rolled back to the active (stable) revision, the nodes that
run a newer one get it back at once, without a canary.`,
		Example: `  kubectl eds rollback agent
  kubectl eds rollback agent --to-revision 3 --dry-run

  # An ExtendedDaemonSet whose workloadRef names the DaemonSet cilium
  kubectl eds rollback cilium -n kube-system                     # prints the template for git
  kubectl eds rollback cilium -n kube-system --write-daemonset   # writes it into the DaemonSet`,
		Args:              oneName,
		ValidArgsFunction: o.CompleteExtendedDaemonSets,
		RunE: func(cmd *cobra.Command, args []string) error {
			return opts.run(cmd.Context(), o, cmd.OutOrStdout(), args[0])
		},
	}
	cmd.Flags().Int64Var(&opts.toRevision, "to-revision", 0, "the revision to roll back to; 0 means the one before the active revision")
	cmd.Flags().BoolVar(&opts.dryRun, "dry-run", false, "print the spec.template patch to commit to git, and write nothing")
	cmd.Flags().BoolVar(&opts.writeDaemonSet, "write-daemonset", false,
		"with a workloadRef, write the template into the DaemonSet's spec.template (git or Helm undoes it at their next sync unless they change too)")
	return cmd
}

func (opts rollbackOptions) run(ctx context.Context, o *cli.Options, out io.Writer, name string) error {
	if opts.toRevision < 0 {
		return fmt.Errorf("--to-revision %d: revisions are numbered from 1", opts.toRevision)
	}
	t, err := loadWithTemplate(ctx, o, name)
	if err != nil {
		return err
	}
	if opts.writeDaemonSet && !t.referencing() {
		return fmt.Errorf("--write-daemonset writes into the DaemonSet an ExtendedDaemonSet's spec.workloadRef names; %s has a template of its own, "+
			"which rollback writes without it", t)
	}
	h, err := t.replicaSets(ctx)
	if err != nil {
		return err
	}
	to, err := opts.pick(t, h)
	if err != nil {
		return err
	}
	// A referenced DaemonSet is its owner's (git, Helm): rollback only
	// tells what to write there, unless asked to write the DaemonSet.
	if opts.dryRun || (t.referencing() && !opts.writeDaemonSet) {
		// Printed even when the spec has it already: after a rollback this
		// is what is left to commit to git.
		return printRollbackPatch(out, t, to)
	}
	if err := unchanged(t, to); err != nil {
		return err
	}
	next := rolloutNote(t, to)
	if t.referencing() {
		if err := t.writeDaemonSetTemplate(ctx, to); err != nil {
			return err
		}
		return printf(out, "%s rolled back to %s of %s: %s\n", t.daemonSet(), to.describe(), t, next)
	}
	if err := t.writeTemplate(ctx, to); err != nil {
		return err
	}
	return printf(out, "%s rolled back to %s: %s\n", t, to.describe(), next)
}

// pick is the revision to roll back to: --to-revision, else the active
// one when the spec has moved on from it, else the one before it.
func (opts rollbackOptions) pick(t *target, h history) (revision, error) {
	if opts.toRevision > 0 {
		r, ok := h.numbered(opts.toRevision)
		if !ok {
			return revision{}, fmt.Errorf("%s has no revision %d: its revisions are %s (%s)", t, opts.toRevision, h.numbers(), t.command("history"))
		}
		return r, nil
	}
	active, ok := h.named(t.eds.Status.ActiveReplicaSet)
	switch {
	case !ok:
		return revision{}, fmt.Errorf("%s has no active revision to roll back from yet: name one with --to-revision; its revisions are %s (%s)",
			t, h.numbers(), t.command("history"))
	case !t.specHas(active):
		return active, nil
	}
	r, ok := previous(h, active)
	if !ok {
		return revision{}, fmt.Errorf("%s has no revision before the active %s: name one with --to-revision; its revisions are %s",
			t, active.describe(), h.numbers())
	}
	return r, nil
}

// unchanged refuses a rollback that would write the template the spec
// already has.
func unchanged(t *target, to revision) error {
	switch {
	case !t.specHas(to):
		return nil
	case to.rs.Name == t.eds.Status.ActiveReplicaSet:
		return fmt.Errorf("%s already is the active revision of %s: there is nothing to roll back", to.describe(), t)
	}
	if t.referencing() {
		return fmt.Errorf("%s already has the template of %s of %s, %s now: there is nothing to roll back",
			t.daemonSet(), to.describe(), t, t.stateOf(to))
	}
	return fmt.Errorf("the spec of %s already has the template of %s, %s now: there is nothing to roll back",
		t, to.describe(), t.stateOf(to))
}

// specHas says whether the template rolled out now (the spec's, or the
// DaemonSet's) is r's.
func (t *target) specHas(r revision) bool {
	return equality.Semantic.DeepEqual(&r.rs.Spec.Template, t.template)
}

// previous is the revision numbered just below active's.
func previous(h history, active revision) (revision, bool) {
	var found revision
	ok := false
	for _, r := range h {
		if r.number > 0 && r.number < active.number {
			found, ok = r, true
		}
	}
	return found, ok
}

// writeTemplate makes to's template the spec's. The replica set's template
// is the spec's template as the controller copied it, with nothing added,
// so the controller hashes it alike and takes the replica set up again
// rather than making a new revision. Nothing else owns the spec: a plain
// update, read again on conflict, is enough.
func (t *target) writeTemplate(ctx context.Context, to revision) error {
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		eds := &v1alpha1.ExtendedDaemonSet{}
		if err := t.c.Get(ctx, t.key, eds); err != nil {
			return err
		}
		eds.Spec.Template = *to.rs.Spec.Template.DeepCopy()
		return t.c.Update(ctx, eds)
	})
	if err != nil {
		return explainWrite(err, t.key, "rolling back")
	}
	return nil
}

// rolloutNote says what happens next, and what would undo it.
func rolloutNote(t *target, to revision) string {
	next := "the controller rolls it out"
	switch {
	case to.rs.Name == t.eds.Status.ActiveReplicaSet && t.referencing():
		next = "the controller brings the nodes that run a newer revision back to it, within maxUnavailable and without a canary, as it is the stable revision"
	case to.rs.Name == t.eds.Status.ActiveReplicaSet:
		next = "the controller abandons the newer template, and every node runs the active one"
	case t.eds.Spec.Strategy.Canary != nil:
		next = fmt.Sprintf("the controller runs it as a canary first (%s promotes it at once)", t.command("canary validate"))
	}
	if t.referencing() {
		return fmt.Sprintf("%s; if git (Flux, Argo CD) or Helm holds the DaemonSet, put the same template there (%s prints it) "+
			"or the next sync undoes the rollback", next, t.command("rollback", "--to-revision", to.label()))
	}
	return fmt.Sprintf("%s; if git holds the spec, commit the same template (%s prints it) or the next sync undoes the rollback",
		next, t.command("rollback", "--to-revision", to.label(), "--dry-run"))
}

func printRollbackPatch(out io.Writer, t *target, to revision) error {
	patch, err := specTemplatePatch(&to.rs.Spec.Template)
	if err != nil {
		return err
	}
	if t.referencing() {
		return printf(out, "# spec.template of revision %s of %s (replica set %s, %s) for %s: put it in the DaemonSet's manifest in git "+
			"(or the chart values that render it); nothing was written (--write-daemonset writes it into the DaemonSet)\n%s",
			to.label(), t, to.rs.Name, t.stateOf(to), t.daemonSet(), patch)
	}
	return printf(out, "# spec.template of revision %s of %s (replica set %s, %s): commit it to git; nothing was written\n%s",
		to.label(), t, to.rs.Name, t.stateOf(to), patch)
}
