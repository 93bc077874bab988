package steer

import (
	"context"
	"encoding/json"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
	"github.com/extendeddaemonset/extendeddaemonset/cmd/kubectl-eds/internal/cli"
)

// target is the ExtendedDaemonSet a command acts on, as read when the
// command started.
type target struct {
	c   client.Client
	key types.NamespacedName
	eds *v1alpha1.ExtendedDaemonSet
	// template is the template the ExtendedDaemonSet rolls out now (its
	// spec's, or the DaemonSet's its workloadRef names), for the commands
	// that compare revisions with it; nil for the others.
	template *corev1.PodTemplateSpec
}

// load reads the ExtendedDaemonSet name of the namespace the flags and the
// kubeconfig select.
func load(ctx context.Context, o *cli.Options, name string) (*target, error) {
	c, err := o.Client()
	if err != nil {
		return nil, err
	}
	ns, err := o.Namespace()
	if err != nil {
		return nil, err
	}
	key := types.NamespacedName{Namespace: ns, Name: name}
	eds, err := cli.GetExtendedDaemonSet(ctx, c, key)
	if err != nil {
		return nil, err
	}
	return &target{c: c, key: key, eds: eds}, nil
}

// loadWithTemplate is load, with the template the ExtendedDaemonSet rolls
// out now.
func loadWithTemplate(ctx context.Context, o *cli.Options, name string) (*target, error) {
	t, err := load(ctx, o, name)
	if err != nil {
		return nil, err
	}
	if t.template, err = cli.CurrentTemplate(ctx, t.c, t.eds); err != nil {
		return nil, err
	}
	return t, nil
}

// referencing says whether the target's workloadRef names a DaemonSet,
// whose template it rolls out instead of its own.
func (t *target) referencing() bool { return t.eds.Spec.WorkloadRef != nil }

// daemonSet names the DaemonSet the target's workloadRef names.
func (t *target) daemonSet() string {
	return "DaemonSet " + types.NamespacedName{Namespace: t.key.Namespace, Name: t.eds.Spec.WorkloadRef.Name}.String()
}

// templateOwner names what holds the template rolled out now: "its spec",
// or the DaemonSet.
func (t *target) templateOwner() string {
	if t.referencing() {
		return t.daemonSet()
	}
	return "its spec"
}

// templateSource names where the template rolled out now is written:
// "spec.template", or the DaemonSet's.
func (t *target) templateSource() string {
	if t.referencing() {
		return t.daemonSet() + " spec.template"
	}
	return "spec.template"
}

// String names the ExtendedDaemonSet as messages do.
func (t *target) String() string { return "ExtendedDaemonSet " + t.key.String() }

// command is a kubectl-eds command line about the target, for messages
// that say what to run next.
func (t *target) command(verb string, flags ...string) string {
	line := fmt.Sprintf("kubectl eds %s -n %s %s", verb, t.key.Namespace, t.key.Name)
	for _, f := range flags {
		line += " " + f
	}
	return "`" + line + "`"
}

// patchAnnotations sets the annotations of set, and removes those set to
// nil, with a merge patch of metadata.annotations alone: no other field is
// sent, so neither the spec nor another writer's annotations can be
// overwritten by a stale read.
func (t *target) patchAnnotations(ctx context.Context, set map[string]*string) error {
	data, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": set}})
	if err != nil {
		return fmt.Errorf("encoding the annotation patch: %w", err)
	}
	if err := t.c.Patch(ctx, t.eds, client.RawPatch(types.MergePatchType, data)); err != nil {
		return explainWrite(err, t.key, "annotating")
	}
	return nil
}

// explainWrite is cli.Explain for a write: errors a person can act on are
// explained, others say what was being written.
func explainWrite(err error, key types.NamespacedName, what string) error {
	if apierrors.IsForbidden(err) || apierrors.IsNotFound(err) || apimeta.IsNoMatchError(err) {
		return cli.Explain(err, "ExtendedDaemonSet", key)
	}
	return fmt.Errorf("%s ExtendedDaemonSet %s: %w", what, key, err)
}
