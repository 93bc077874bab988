package steer

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"

	"github.com/extendeddaemonset/extendeddaemonset/cmd/kubectl-eds/internal/cli"
)

func diffCommand(o *cli.Options) *cobra.Command {
	return &cobra.Command{
		Use:   "diff NAME",
		Short: "Show how the canary's pod template differs from the active one",
		Long: `Show, as a unified diff of their YAML, how the pod template of the canary
differs from the active one. Without a canary, it compares the active
template with the spec's (the DaemonSet's, for an ExtendedDaemonSet whose
spec.workloadRef names one), which differ while a new template is not yet
rolled out.`,
		Args:              oneName,
		ValidArgsFunction: o.CompleteExtendedDaemonSets,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runDiff(cmd.Context(), o, cmd.OutOrStdout(), args[0])
		},
	}
}

// side is one template of a diff, and how the diff names it.
type side struct {
	label    string
	template *corev1.PodTemplateSpec
}

func runDiff(ctx context.Context, o *cli.Options, out io.Writer, name string) error {
	t, err := loadWithTemplate(ctx, o, name)
	if err != nil {
		return err
	}
	h, err := t.replicaSets(ctx)
	if err != nil {
		return err
	}
	active, ok := h.named(t.eds.Status.ActiveReplicaSet)
	if !ok {
		return fmt.Errorf("%s has no active replica set yet, so there is nothing to compare with: %s shows where it is", t, t.command("status"))
	}
	from := side{fmt.Sprintf("active %s (revision %s)", active.rs.Name, active.label()), &active.rs.Spec.Template}
	to, same, err := comparedWithActive(t, h, active)
	if err != nil {
		return err
	}
	fromYAML, err := templateYAML(from.template)
	if err != nil {
		return err
	}
	toYAML, err := templateYAML(to.template)
	if err != nil {
		return err
	}
	if diff := unifiedDiff(from.label, to.label, fromYAML, toYAML); diff != "" {
		return printf(out, "%s", diff)
	}
	return printf(out, "%s\n", same)
}

// comparedWithActive is the template the active one is compared with: the
// canary's, else the spec's; same is what to say when they do not differ.
func comparedWithActive(t *target, h history, active revision) (to side, same string, _ error) {
	c := t.eds.Status.Canary
	if c == nil {
		return side{t.templateSource() + " (not rolled out yet)", t.template},
			fmt.Sprintf("no difference: %s runs the template of %s, revision %s (%s)", t, t.templateOwner(), active.label(), active.rs.Name), nil
	}
	canary, ok := h.named(c.ReplicaSet)
	if !ok {
		return side{}, "", fmt.Errorf("the canary replica set %s of %s is gone: %s shows where the rollout is", c.ReplicaSet, t, t.command("status"))
	}
	return side{fmt.Sprintf("%s %s (revision %s)", t.stateOf(canary), canary.rs.Name, canary.label()), &canary.rs.Spec.Template},
		fmt.Sprintf("no difference: the canary %s of %s has the active template", canary.rs.Name, t), nil
}
