package steer

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
	"github.com/extendeddaemonset/extendeddaemonset/cmd/kubectl-eds/internal/cli"
)

// canaryAction is one `kubectl eds canary` subcommand: decide turns the
// target's state into the annotations to write and what to tell, or a
// refusal.
type canaryAction struct {
	name, short, long string
	decide            func(t *target) (change, error)
}

var canaryActions = []canaryAction{
	{
		name:  "validate",
		short: "Promote the running canary: its template rolls out to every node",
		long: `Promote the running canary: the controller makes its template the active
one, even when the canary is paused, and rolls it out to every node.`,
		decide: validateCanary,
	},
	{
		name:  "skip-step",
		short: "Move a canary with steps on from its current step",
		long: `Move a canary with steps on from its current step, before its duration
has passed or while it waits at a pause step: the next step starts, or,
after the last one, the canary is promoted.`,
		decide: skipStep,
	},
	{
		name:  "pause",
		short: "Hold the running canary where it is",
		long: `Hold the running canary where it is: it keeps its nodes and is neither
promoted nor failed by its pods (autoFail.canaryTimeout still applies)
until it is unpaused, validated or failed.`,
		decide: pauseCanary,
	},
	{
		name:  "unpause",
		short: "Let a paused canary go on",
		long: `Let a paused canary go on: lift a pause asked for with
` + "`kubectl eds canary pause`" + `, or let a canary that autoPause stopped go on
despite it (a person has looked and accepts it). Without a canary, pass
the gates before a domain of the rolling update that paused it when their
timeout ran out (onTimeout: Pause).`,
		decide: unpauseCanary,
	},
	{
		name:  "fail",
		short: "Fail the running canary: its nodes go back to the active template",
		long: `Fail the running canary: its nodes go back to the active template, and the
template stays failed until it changes or the canary is retried.

For an ExtendedDaemonSet whose spec.workloadRef names a DaemonSet, which
recreates pods at its own template only, the rollout stops instead: no
other pod is deleted, and the canary nodes keep the failed revision until
the DaemonSet's template is reverted (` + "`kubectl eds rollback`" + ` prints it).`,
		decide: failCanary,
	},
	{
		name:  "retry",
		short: "Start a failed canary again",
		long: `Start a failed canary again on canary nodes, as if its template were
new.`,
		decide: retryCanary,
	},
}

func canaryCommand(o *cli.Options) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "canary",
		Short: "Validate, skip a step of, pause, unpause, fail or retry the canary of an ExtendedDaemonSet",
		Long: `Steer the canary of an ExtendedDaemonSet through the annotations the
controller reads. Only metadata.annotations is written: a spec kept in git
is left as it is. Each has a declarative twin in spec.strategy.canary
(validate, skipStep, paused, unpause, fail, retry) for those who steer from
git. Validate, skip-step, unpause and fail name the running canary instance
(<replica set>@<instance>): they act on it alone, never on a later canary of
the same replica set (after a retry, or a rollback and the same template
again).`,
	}
	for _, action := range canaryActions {
		cmd.AddCommand(canaryActionCommand(o, action))
	}
	return cmd
}

func canaryActionCommand(o *cli.Options, action canaryAction) *cobra.Command {
	return &cobra.Command{
		Use:               action.name + " NAME",
		Short:             action.short,
		Long:              action.long,
		Args:              oneName,
		ValidArgsFunction: o.CompleteExtendedDaemonSets,
		RunE:              runDecision(o, action.decide),
	}
}

// liveCanary is the canary the actions other than retry act on: recorded
// for the spec the controller has seen, and not failed.
func liveCanary(t *target, verb string) (*v1alpha1.CanaryStatus, error) {
	if err := observed(t); err != nil {
		return nil, err
	}
	c := t.eds.Status.Canary
	switch {
	case c == nil:
		return nil, fmt.Errorf("no canary runs for %s: there is nothing to %s; a canary starts when the pod template changes "+
			"and spec.strategy.canary is set, and %s shows where the rollout is", t, verb, t.command("status"))
	case c.Failed:
		return nil, fmt.Errorf("canary %s of %s has already failed (%s): only %s acts on it now, or a new template",
			c.ReplicaSet, t, reasonOf(c), t.command("canary retry"))
	}
	return c, nil
}

// observed refuses to act on a status that does not describe the latest
// spec: its canary may be an older template's, which annotations naming it
// would no longer steer.
func observed(t *target) error {
	if st := t.eds.Status; st.ObservedGeneration != t.eds.Generation {
		return fmt.Errorf("the controller has not yet seen the latest spec of %s (generation %d, its status describes %d), "+
			"so the canary it records may be an older template's: run the command again in a moment; %s shows when it has caught up",
			t, t.eds.Generation, st.ObservedGeneration, t.command("status"))
	}
	return nil
}

// reasonOf is a canary's reason and message, for refusals.
func reasonOf(c *v1alpha1.CanaryStatus) string {
	switch {
	case c.Reason == "":
		return "no reason recorded"
	case c.Message == "":
		return c.Reason
	}
	return c.Reason + ": " + c.Message
}

func ptr(s string) *string { return &s }
