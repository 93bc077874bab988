package steer

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
	"github.com/extendeddaemonset/extendeddaemonset/cmd/kubectl-eds/internal/cli"
)

// rolloutSwitch is an annotation the controller reads as on while it is
// "true", with a spec field that does the same from git.
type rolloutSwitch struct {
	annotation string
	// what is switched, for messages: "rolling update", "rollout".
	what string
	// onVerb/offVerb name the commands, onState/offState the states.
	onVerb, offVerb, onState, offState string
	onShort, onLong, offShort, offLong string
	// onEffect says what the switch does while on.
	onEffect  string
	specField string
	specOn    func(*v1alpha1.ExtendedDaemonSet) bool
}

var rollingUpdatePause = rolloutSwitch{
	annotation: v1alpha1.RollingUpdatePausedAnnotation,
	what:       "rolling update",
	onVerb:     "pause", offVerb: "resume", onState: "paused", offState: "resumed",
	onShort: "Pause the rolling update of an ExtendedDaemonSet",
	onLong: `Pause the rolling update of an ExtendedDaemonSet: no pod is replaced;
pods on new nodes are still created. A canary still replaces the pods of
its nodes: ` + "`kubectl eds canary pause`" + ` holds it.

It sets the annotation extendeddaemonset.io/rolling-update-paused to
"true", and writes nothing else; spec.strategy.rollingUpdate.paused does
the same from a spec kept in git.`,
	offShort: "Resume a rolling update paused by `kubectl eds pause`",
	offLong: `Resume a rolling update paused by ` + "`kubectl eds pause`" + `: remove the
annotation extendeddaemonset.io/rolling-update-paused. A rolling update
paused by spec.strategy.rollingUpdate.paused is resumed in git.`,
	onEffect:  "no pod is replaced; pods on new nodes are still created",
	specField: "spec.strategy.rollingUpdate.paused",
	specOn:    func(eds *v1alpha1.ExtendedDaemonSet) bool { return eds.Spec.Strategy.RollingUpdate.Paused },
}

var rolloutFreeze = rolloutSwitch{
	annotation: v1alpha1.RolloutFrozenAnnotation,
	what:       "rollout",
	onVerb:     "freeze", offVerb: "unfreeze", onState: "frozen", offState: "unfrozen",
	onShort: "Freeze the rollout of an ExtendedDaemonSet",
	onLong: `Freeze the rollout of an ExtendedDaemonSet: no pod is created or deleted,
whatever the rollout or a canary would do.

It sets the annotation extendeddaemonset.io/rollout-frozen to "true", and
writes nothing else; spec.strategy.rollingUpdate.frozen does the same from
a spec kept in git.`,
	offShort: "Unfreeze a rollout frozen by `kubectl eds freeze`",
	offLong: `Unfreeze a rollout frozen by ` + "`kubectl eds freeze`" + `: remove the
annotation extendeddaemonset.io/rollout-frozen. A rollout frozen by
spec.strategy.rollingUpdate.frozen is unfrozen in git.`,
	onEffect:  "no pod is created or deleted",
	specField: "spec.strategy.rollingUpdate.frozen",
	specOn:    func(eds *v1alpha1.ExtendedDaemonSet) bool { return eds.Spec.Strategy.RollingUpdate.Frozen },
}

func switchCommand(o *cli.Options, s rolloutSwitch, on bool) *cobra.Command {
	verb, short, long := s.offVerb, s.offShort, s.offLong
	if on {
		verb, short, long = s.onVerb, s.onShort, s.onLong
	}
	return &cobra.Command{
		Use:               verb + " NAME",
		Short:             short,
		Long:              long,
		Args:              oneName,
		ValidArgsFunction: o.CompleteExtendedDaemonSets,
		RunE:              runDecision(o, func(t *target) (change, error) { return s.decide(t, on) }),
	}
}

// decide turns the switch on or off. The annotation only switches on what
// the spec leaves off, so switching off what the spec holds on is refused:
// only the spec's owner can.
func (s rolloutSwitch) decide(t *target, on bool) (change, error) {
	annotated := t.eds.Annotations[s.annotation] == "true"
	if on {
		if annotated {
			return change{message: fmt.Sprintf("%s of %s is already %s: %s undoes it", s.what, t, s.onState, t.command(s.offVerb))}, nil
		}
		return change{
			annotations: map[string]*string{s.annotation: ptr("true")},
			message:     fmt.Sprintf("%s of %s %s until %s: %s", s.what, t, s.onState, t.command(s.offVerb), s.onEffect),
		}, nil
	}
	switch {
	case s.specOn(t.eds):
		return change{}, fmt.Errorf("%s of %s is %s by %s, which the annotation cannot undo: set it to false where the spec is kept (git)",
			s.what, t, s.onState, s.specField)
	case !annotated:
		return change{message: fmt.Sprintf("%s of %s is not %s: nothing to do", s.what, t, s.onState)}, nil
	}
	return change{
		annotations: map[string]*string{s.annotation: nil},
		message:     fmt.Sprintf("%s of %s %s", s.what, t, s.offState),
	}, nil
}
