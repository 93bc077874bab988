package steer

import (
	"context"
	"encoding/json"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/extendeddaemonset/extendeddaemonset/cmd/kubectl-eds/internal/cli"
)

// writeDaemonSetTemplate makes to's template the spec.template of the
// DaemonSet the target's workloadRef names, as `kubectl rollout undo`
// does: a strategic merge patch that replaces the template whole. The
// replica set's template is the DaemonSet's revision as its controller
// recorded it, so the DaemonSet controller finds that revision again (same
// controller-revision-hash) and the ExtendedDaemonSet its replica set.
// The patch holds the resourceVersion of the DaemonSet rollback decided
// on: a DaemonSet changed meanwhile (a sync, a person) is not overwritten.
func (t *target) writeDaemonSetTemplate(ctx context.Context, to revision) error {
	ds, err := cli.DaemonSetOf(ctx, t.c, t.eds)
	if err != nil {
		return err
	}
	if !equality.Semantic.DeepEqual(&ds.Spec.Template, t.template) {
		return fmt.Errorf("the template of %s changed while rollback read it: run the command again", t.daemonSet())
	}
	template, err := runtimeMap(&to.rs.Spec.Template)
	if err != nil {
		return err
	}
	template["$patch"] = "replace"
	data, err := json.Marshal(map[string]any{
		"metadata": map[string]any{"resourceVersion": ds.ResourceVersion},
		"spec":     map[string]any{"template": template},
	})
	if err != nil {
		return fmt.Errorf("encoding the DaemonSet patch: %w", err)
	}
	target := &appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Namespace: ds.Namespace, Name: ds.Name}}
	switch err := t.c.Patch(ctx, target, client.RawPatch(types.StrategicMergePatchType, data)); {
	case apierrors.IsConflict(err):
		return fmt.Errorf("%s changed while rollback wrote it: run the command again: %w", t.daemonSet(), err)
	case err != nil:
		key := types.NamespacedName{Namespace: ds.Namespace, Name: ds.Name}
		if apierrors.IsForbidden(err) || apierrors.IsNotFound(err) {
			return cli.Explain(err, "DaemonSet", key)
		}
		return fmt.Errorf("rolling back DaemonSet %s: %w", key, err)
	}
	return nil
}

// runtimeMap is v as the generic map its JSON decodes to.
func runtimeMap(v any) (map[string]any, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("encoding the pod template: %w", err)
	}
	var out map[string]any
	if err := json.Unmarshal(data, &out); err != nil {
		return nil, fmt.Errorf("decoding the pod template: %w", err)
	}
	return out, nil
}
